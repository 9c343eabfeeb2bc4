"""``ranklearn train --scheduler/--workers``: LambdaMART on a Dask cluster (:mod:`ranklearn.dask`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from ranklearn._files import writes_stdout
from ranklearn.cli import _common as C
from ranklearn.data.groups import group_ptr
from ranklearn.exceptions import DataFormatError


class DropClusterLeftovers(logging.Filter):
    """Drop asyncio's "Task exception was never retrieved" for an exception that distributed's own
    code raised: the ``AllExit`` a Ctrl-C leaves in a cancelled gather of the client's event loop,
    an actor call whose worker had already gone (``OSError: Unable to contact Actor's worker``).
    They are logged with a traceback when the task is collected, after the command's own line
    said it was interrupted; an exception raised elsewhere is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None:
            return True
        if type(exc).__name__ == "AllExit" and type(exc).__module__.startswith("distributed"):
            return False
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        return tb is None or f"{os.sep}distributed{os.sep}" not in tb.tb_frame.f_code.co_filename


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    from distributed import Client, LocalCluster

    asyncio_log = logging.getLogger("asyncio")
    if not any(isinstance(f, DropClusterLeftovers) for f in asyncio_log.filters):  # kept: the task may be collected at exit
        asyncio_log.addFilter(DropClusterLeftovers())
    if scheduler is None and workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    with _ctrl_c_at_safe_points():
        if scheduler is not None:
            client, cluster = Client(scheduler, timeout="30s"), None
        else:
            with _ctrl_c_for_this_process_only(), _children_stderr_silenced():
                # the workers' own log lines (a failed task's traceback, a restarted nanny) are not the
                # command line's: its error says what went wrong in one line. The scheduler's HTTP server
                # takes a free port (dashboard_address=None still tries 8787, and warns when another
                # cluster holds it)
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       silence_logs=logging.CRITICAL, preload=["ranklearn.cli._dask_worker"])  # fmt: skip
                try:
                    client = Client(cluster)
                except BaseException:
                    cluster.close()
                    raise
        try:
            yield client
        except BaseException:  # the body's own error or Ctrl-C says what was kept
            _close(client, cluster)
            raise
        if _close(client, cluster):
            raise KeyboardInterrupt  # pressed while the cluster shut down: after it did


def _close(client: Any, cluster: Any) -> bool:
    """Close the client, then the local cluster (if any), with a Ctrl-C deferred to the end; whether
    one came. A Ctrl-C inside distributed's close left a half-closed cluster that its exit
    handler closed again with a 10 s timeout, before the command's line."""
    pressed = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum)) if _in_main_thread() else None
    try:
        client.close()
        if cluster is not None:
            cluster.close()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return bool(pressed)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _ctrl_c_at_safe_points() -> Iterator[None]:
    """Raise a Ctrl-C's KeyboardInterrupt only where the command can handle it. Python runs the
    SIGINT handler at any point of the main thread, also inside a finalizer: a distributed
    ``Future.__del__`` hands its release to the event loop (asyncio's ``call_soon_threadsafe``),
    and a KeyboardInterrupt there is printed as "Exception ignored" with a traceback and lost.
    Inside a ``__del__``, a weak-reference callback or asyncio's and tornado's code (the main
    thread's hand-overs to distributed's event loop), the interrupt is sent again to the main
    thread 50 ms later, by a thread started here (a thread started in the handler, itself inside
    a weak-reference callback, could not be relied on)."""
    if not _in_main_thread() or not hasattr(signal, "pthread_kill"):
        yield
        return
    import tornado

    unsafe = tuple(str(Path(m.__file__).parent) + os.sep for m in (asyncio, tornado))
    unsafe += tuple(str(Path(weakref.__file__).with_name(name)) for name in ("weakref.py", "_weakrefset.py"))
    main, again, done = threading.main_thread().ident, threading.Event(), False

    def resend() -> None:
        while again.wait() and not done:
            again.clear()
            time.sleep(0.05)
            if not done:
                signal.pthread_kill(main, signal.SIGINT)

    def handler(signum: int, frame: FrameType | None) -> None:
        while frame is not None:
            if frame.f_code.co_name == "__del__" or frame.f_code.co_filename.startswith(unsafe):
                again.set()
                return
            frame = frame.f_back
        raise KeyboardInterrupt

    threading.Thread(target=resend, name="ranklearn Ctrl-C", daemon=True).start()
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        done = True
        again.set()


@contextlib.contextmanager
def _ctrl_c_for_this_process_only() -> Iterator[None]:
    """Block SIGINT here while the local cluster starts, so that a Ctrl-C then does not leave a
    half-started cluster whose exit handler fails with a traceback: it is delivered when the
    start ends (deferred, not lost). The worker processes leave the terminal's process group
    (:mod:`ranklearn.cli._dask_worker`), so later Ctrl-Cs reach this process only."""
    if not hasattr(signal, "pthread_sigmask") or not _in_main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def _children_stderr_silenced() -> Iterator[None]:
    """Point file descriptor 2 at the null device while the local cluster starts: the worker
    processes spawned then inherit it. Until a worker has left the terminal's process group
    (:mod:`ranklearn.cli._dask_worker`, after its imports) a Ctrl-C reaches it too and Python
    would print the interrupted import's traceback; this process says what happened in one line."""
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _read(read_svmlight: Any, path: Path, client: Any, width: int | None = None) -> tuple:
    """``read_svmlight`` of a --train/--validate/--test file or glob on the workers (padded to
    ``width``), its errors in the command line's words."""
    try:
        return read_svmlight(str(path), n_features=width, client=client)
    except DataFormatError as exc:
        if "(regroup=True gathers them)" in exc.reason:
            hint = "(a Dask train reads each file as it is: gather them first, e.g. ranklearn convert FILE OUT --to qid)"
            raise C.reworded(exc, exc.reason.replace("(regroup=True gathers them)", hint)) from None
        raise C.beyond_width(exc, f"the training file's features ({width}): the model could not use it") from None


#: the models ``train --scheduler/--workers`` trains, and their Dask estimators in :mod:`ranklearn.dask`
DASK_MODELS = {"lambdamart": "DaskLambdaMART", "listnet": "DaskListNet", "ranknet": "DaskRankNet",
               "lambdarank": "DaskLambdaRank"}  # fmt: skip


def dask_estimator(
    model: str, params: dict[str, Any], scheduler: str | None, workers: int | None, worker_timeout: float | None
) -> Any:
    """The Dask estimator of ``train --scheduler/--workers`` (:data:`DASK_MODELS`; its
    parameters not yet checked), after the checks of those options.

    Raises
    ------
    ValueError
        For another model, both or bad cluster options, or the dask extra missing.
    """
    if model not in DASK_MODELS:
        raise ValueError(f"--scheduler/--workers train --model {', '.join(DASK_MODELS)} only, not {model}")
    if scheduler is not None and workers is not None:
        raise ValueError("give --scheduler (an existing cluster) or --workers (a local one), not both")
    if worker_timeout is not None and not worker_timeout > 0:
        raise ValueError(f"--worker-timeout must be a positive number of seconds, got {worker_timeout:g}")
    try:
        import ranklearn.dask as rd
    except ImportError as exc:
        raise ValueError(f"--scheduler/--workers need the dask extra: pip install 'ranklearn[dask]' ({exc})") from None
    return getattr(rd, DASK_MODELS[model])(**params, **({} if worker_timeout is None else {"worker_timeout": worker_timeout}))


def run_train_dask(
    estimator: Any,
    model: str,
    train: Path,
    validate: Path | None,
    test: Path | None,
    save: Path | None,
    scheduler: str | None,
    workers: int | None,
    reader: str | None = None,
) -> None:
    """``run_train`` on a Dask cluster: the files (or globs) are read on the workers, the
    model is ``estimator``, a checked :func:`dask_estimator`; the same progress bar, model file and
    final table as on one machine (scores and labels of each set come to the client for it).
    The training files' ``.position`` sidecars go to ``fit(position=)`` and their ``.weight``
    sidecars to ``fit(sample_weight=)``; ``reader`` (the option that needs positions, as
    ``--unbiased pairwise``) makes their absence an error before training. The other sets'
    sidecars are not used (a note says so).
    Its ``worker_timeout`` bounds every wait for the workers; a worker lost or silent that long
    ends the command with one line and status 1."""
    import typer

    from ranklearn._progress import TrainingProgress
    from ranklearn.dask import QueryStraddleError, WorkerLostError, read_svmlight, svmlight_paths

    saved = None  # set once the model is saved: a Ctrl-C while the cluster closes then says so
    trained = False  # set once the model came from the workers: a Ctrl-C before says nothing was trained
    try:
        with _client(scheduler, workers) as client:
            estimator.client = client
            sets = {"train": _read(read_svmlight, train, client)}
            position = sets["train"].position  # the files' .position sidecars, read on the workers
            if position is not None:
                C.note(f"positions from {', '.join(sets['train'].position_files)}")
            elif reader is not None:  # before training
                raise ValueError(f"{reader} needs the training rows' positions: a Dask fit reads each --train file's "
                                 f".position sidecar, and {C.shown(train)} has none")  # fmt: skip
            if sets["train"].weight is not None:
                if not sets["train"].weight.any().compute():  # as a local train refuses it, before training
                    raise ValueError(f"every weight in {', '.join(sets['train'].weight_files)} is 0: nothing to train on")
                C.note(f"weights from {', '.join(sets['train'].weight_files)} (sample_weight)")
            width = sets["train"][0].shape[1]  # the other sets padded to it, as a local fit does
            for name, path in (("validate", validate), ("test", test)):
                if path is not None:
                    sets[name] = _read(read_svmlight, path, client, width)
                    for sidecar in (*sets[name].position_files, *sets[name].weight_files):
                        C.note(f"{sidecar} not used: --{name} is scored on its labels")
            eval_set = [sets["validate"]] if validate is not None else None
            try:
                with TrainingProgress(C.planned_iterations(estimator), description=model) as progress:
                    estimator.fit(
                        *sets["train"], position=position, sample_weight=sets["train"].weight, eval_set=eval_set,
                        eval_names=["validate"] if eval_set else None, callbacks=[progress],
                    )  # fmt: skip
            except KeyboardInterrupt:
                raise C.Interrupted(C.save_interrupted(estimator, save)) from None
            except QueryStraddleError as exc:  # partitions are files here: name them
                option, path = ("--train", train) if exc.what == "X" else ("--validate", validate)
                files = svmlight_paths(str(path))
                raise ValueError(
                    f"query {exc.query} is in two {option} files, {files[exc.partitions[0]]} and "
                    f"{files[exc.partitions[1]]}: a Dask train reads each file as one partition, so all "
                    "the lines of a query must be in one file"
                ) from None
            except WorkerLostError as exc:  # the cluster failed, not the input: status 1
                typer.echo(f"ranklearn: error: {C.one_line(exc)}", err=True)
                raise typer.Exit(1) from None
            try:
                local = estimator.to_local()
            except KeyboardInterrupt:  # after the last tree, while the model came from the workers
                raise C.Interrupted("interrupted after training, while the model came from the workers; nothing saved") from None
            trained = True
            if save is not None:
                local.save(save)
            saved = f"saved to {save}" if save is not None else "not saved (no --save)"
            metrics = C.table_metrics(estimator)
            rows, notes = {}, []
            try:
                for name, (X, y, q) in sets.items():
                    scores, labels, qid = client.compute([estimator.predict(X), y, q], sync=True)
                    ptr = group_ptr(np.asarray(qid))
                    rows[name] = C.score_set(metrics, np.asarray(labels), scores, ptr, name, notes)
            except KeyboardInterrupt:
                raise C.Interrupted(f"interrupted while scoring the sets for the final table; the model was {saved}") from None
    except KeyboardInterrupt:  # those during the fit, the model's transfer and the table are said inside
        if not trained:
            raise C.Interrupted("interrupted while the cluster started or read the files; nothing trained, nothing saved") from None
        if saved is None:
            raise C.Interrupted("interrupted while saving the model; nothing saved") from None
        raise C.Interrupted(f"interrupted while the cluster shut down, before the final table; the model was {saved}") from None
    console = C.err_console if save is not None and writes_stdout(save) else C.console
    C.print_results(f"{model} on dask: {saved}; metrics on each set", rows, metrics, console)
    for note in notes:
        console.print(note, highlight=False, markup=False)
