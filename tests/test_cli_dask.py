"""``ranklearn train --workers/--scheduler``: LambdaMART on a Dask cluster from the command line (and the
neural rankers on one of its workers)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("distributed")

from ranklearn.data import load_svmlight  # noqa: E402
from ranklearn.io import load_model  # noqa: E402
from test_cli import assert_one_line_error, run  # noqa: E402


def _split(src, tmp_path, cut_queries):
    """``src`` written as files ``part-0.txt``... cut at the given query numbers."""
    ds = load_svmlight(src)
    lines = src.read_bytes().splitlines(keepends=True)
    cuts = [0, *(int(ds.ptr[q]) for q in cut_queries), len(lines)]
    for i in range(len(cuts) - 1):
        (tmp_path / f"part-{i}.txt").write_bytes(b"".join(lines[cuts[i] : cuts[i + 1]]))
    return str(tmp_path / "part-*.txt")


def _split_with_positions(src, tmp_path):
    """``src`` cut in two files at query 60, each with a random ``.position`` sidecar, and the
    whole file with the sidecars' positions in one (a local train's input)."""
    pattern = _split(src, tmp_path, [60])
    rng = np.random.default_rng(0)
    for part in sorted(tmp_path.glob("part-*.txt")):
        n = len(part.read_bytes().splitlines())
        (tmp_path / f"{part.name}.position").write_text("".join(f"{p}\n" for p in rng.integers(1, 11, n)))
    whole = tmp_path / "whole.txt"
    whole.write_bytes(src.read_bytes())
    (tmp_path / "whole.txt.position").write_text("".join(
        (tmp_path / f"part-{i}.txt.position").read_text() for i in range(2)))  # fmt: skip
    return pattern, whole


def test_train_on_a_local_cluster_saves_the_single_machine_model(capsys, tmp_path, shared_data):
    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"  # small: the cluster start dominates
    pattern = _split(src, tmp_path, [60, 110])
    narrow = tmp_path / "narrow.txt"  # a validation file 45 features wide (46 dropped): padded to 46
    narrow.write_text("".join(" ".join(t for t in line.split() if not t.startswith("46:")) + "\n"
                              for line in src.read_text().splitlines()))  # fmt: skip
    opts = ["--model", "lambdamart", "--n-estimators", "5", "--leaves", "15", "--seed", "0", "--validate", narrow]
    code, out, err = run(capsys, "train", "--train", pattern, "--workers", "2", *opts, "--save", tmp_path / "dask.json")
    assert code == 0, err
    assert "lambdamart on dask: saved to" in out and "ndcg@10" in out and "validate" in out
    wide = tmp_path / "wide.txt"
    wide.write_text("1 qid:1 1:0.5\n0 qid:1 2:0.5 47:1\n")
    code, _, err = run(capsys, "train", "--train", pattern, "--model", "lambdamart", "--workers", "1", "--validate", wide)
    assert_one_line_error(code, err, f"{wide}: feature 47 is beyond the training file's features (46)")
    mixed = tmp_path / "mixed.txt"  # qid 1 reappears: merged by a local train, refused in the Dask train's words
    mixed.write_text("2 qid:1 1:0.9\n0 qid:2 1:0.1\n1 qid:1 1:0.2\n")
    code, _, err = run(capsys, "train", "--train", mixed, "--model", "lambdamart", "--workers", "1")
    assert_one_line_error(code, err, f"{mixed}:3:", "reappears", "ranklearn convert FILE OUT --to qid")
    assert "regroup=True" not in err
    code, _, err = run(capsys, "train", "--train", src, *opts, "--save", tmp_path / "local.json")
    assert code == 0, err
    X = np.asarray(load_svmlight(src).X)
    ours, ref = load_model(tmp_path / "dask.json"), load_model(tmp_path / "local.json")
    assert len(ours.trees_) == len(ref.trees_) == 5
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), atol=1e-9)


def test_dask_options_take_their_models_only_and_one_cluster(capsys, tmp_path, shared_data):
    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"
    code, _, err = run(capsys, "train", "--train", src, "--model", "mart", "--workers", "2")
    assert_one_line_error(code, err, "--model lambdamart, listnet, ranknet, lambdarank only, not mart")
    code, _, err = run(capsys, "train", "--train", src, "--model", "lambdamart", "--workers", "2", "--scheduler", "tcp://x:1")
    assert_one_line_error(code, err, "not both")


def test_worker_timeout_reaches_the_fit_and_a_timeout_is_one_line(capsys, tmp_path, shared_data):
    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"
    pattern = _split(src, tmp_path, [60, 110])
    # a millisecond: making the shards (files parsed, actors started) takes far longer
    code, _, err = run(capsys, "train", "--train", pattern, "--model", "lambdamart", "--n-estimators", "2", "--workers", "2",
                       "--worker-timeout", "0.001")  # fmt: skip
    assert code == 1, err
    assert err.startswith("ranklearn: error: worker ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert "within worker_timeout=0.001 s" in err


def test_worker_timeout_needs_a_cluster_and_positive_seconds(capsys, shared_data):
    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"
    code, _, err = run(capsys, "train", "--train", src, "--model", "lambdamart", "--worker-timeout", "5")
    assert_one_line_error(code, err, "--worker-timeout applies to a Dask or Spark fit only")
    code, _, err = run(capsys, "train", "--train", src, "--model", "lambdamart", "--workers", "2", "--worker-timeout", "0")
    assert_one_line_error(code, err, "--worker-timeout must be a positive number of seconds, got 0")


def test_a_bad_file_on_the_workers_is_one_line_on_stderr(tmp_path):
    # the workers' "Compute Failed" log and traceback came before the error line (another process:
    # only a subprocess sees everything written to stderr)
    import subprocess

    from _helpers import RANKLEARN

    (tmp_path / "p-0.txt").write_text("1 qid:2 1:0.5\n0 qid:2 1:0.1\n")
    (tmp_path / "p-1.txt").write_text("1 qid:1 1:0.5\n0 qid:1 1:zz\n")
    out = subprocess.run(
        [str(RANKLEARN), "train", "--train", str(tmp_path / "p-*.txt"), "--model",
         "lambdamart", "--workers", "2", "--save", str(tmp_path / "m.json")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith(f"ranklearn: error: {tmp_path / 'p-1.txt'}:2: ") and out.stderr.count("\n") == 1, out.stderr


def test_a_query_split_over_two_files_names_the_files(capsys, tmp_path):
    # it said "query 5 of X straddles partitions 0 and 1": neither X nor partitions are the user's words
    rows = [f"{i % 3} qid:{1 + i // 4} 1:{i / 10:.1f} 2:{(i * 7 % 5) / 5:.1f}\n" for i in range(16)]
    (tmp_path / "t-0.txt").write_text("".join(rows[:6]))  # qid 2 holds rows 4-7: two of them here
    (tmp_path / "t-1.txt").write_text("".join(rows[6:]))
    (tmp_path / "whole.txt").write_text("".join(rows))
    opts = ["--model", "lambdamart", "--n-estimators", "2", "--workers", "1"]
    code, _, err = run(capsys, "train", "--train", tmp_path / "t-*.txt", *opts)
    assert_one_line_error(code, err, f"query 2 is in two --train files, {tmp_path / 't-0.txt'} and {tmp_path / 't-1.txt'}")
    code, _, err = run(capsys, "train", "--train", tmp_path / "whole.txt", "--validate", tmp_path / "t-*.txt", *opts)
    assert_one_line_error(code, err, f"query 2 is in two --validate files, {tmp_path / 't-0.txt'} and")


def test_ctrl_c_at_the_terminal_ends_a_local_cluster_train_with_one_line(tmp_path):
    # a terminal's Ctrl-C reaches the whole process group: the local workers must not print
    # their own tracebacks (or a distributed AllExit) before the command's line
    from ranklearn.data import save_svmlight
    from ranklearn.datasets import make_ranking
    from test_cli_train import _interrupt_training

    data = tmp_path / "train.txt"
    save_svmlight(make_ranking(n_queries=300, n_features=10, docs_per_query=(40, 40), random_state=0), data)
    code, err, save = _interrupt_training(
        tmp_path, data, "lambdamart", ["--workers", "2", "--n-estimators", "5000"], delay=2.0, process_group=True
    )  # well into training: the defect showed 4-5 s in
    assert code == 130, err[-2000:]
    assert "Traceback" not in err and "AllExit" not in err, err[-3000:]
    assert f"ranklearn: interrupted; saved the best model so far to {save}" in err
    assert load_model(save).interrupted_


def test_ctrl_c_while_the_final_table_is_scored_says_the_model_was_saved(capsys, tmp_path, monkeypatch):
    """After the last tree the model is saved, then the sets are scored on the workers for the
    table: a Ctrl-C there is one line saying what was kept (it was a distributed AllExit traceback)."""
    from ranklearn.dask import DaskLambdaMART
    from ranklearn.data import save_svmlight
    from ranklearn.datasets import make_ranking

    data, save = tmp_path / "train.txt", tmp_path / "m.json"
    save_svmlight(make_ranking(n_queries=20, n_features=4, n_informative=2, docs_per_query=(5, 5), random_state=0), data)

    def interrupted(self, X):
        raise KeyboardInterrupt

    monkeypatch.setattr(DaskLambdaMART, "predict", interrupted)
    code, _, err = run(capsys, "train", "--train", data, "--model", "lambdamart", "--n-estimators", "2",
                       "--workers", "1", "--save", save)  # fmt: skip
    assert code == 130
    assert err.splitlines()[-1] == f"ranklearn: interrupted while scoring the sets for the final table; the model was saved to {save}"
    assert "Traceback" not in err  # the progress bar above it, ended
    assert load_model(save).n_iter_ == 2


def test_asyncio_s_never_retrieved_cluster_leftovers_are_dropped_and_other_errors_kept(caplog):
    import logging

    import distributed.actor
    from distributed.client import AllExit

    from ranklearn.cli._dask import DropClusterLeftovers

    def raised_in_distributed():  # as an actor call whose worker had gone raises it
        exec(compile("raise OSError(\"Unable to contact Actor's worker\")", distributed.actor.__file__, "exec"))

    def raised(exc):
        raise exc

    log = logging.getLogger("asyncio")
    drop = DropClusterLeftovers()
    log.addFilter(drop)
    try:
        for make in (lambda: raised(AllExit()), raised_in_distributed, lambda: raised(ValueError("kept"))):
            try:
                make()
            except Exception:
                log.error("Task exception was never retrieved", exc_info=True)
    finally:
        log.removeFilter(drop)
    assert [r.exc_info[0].__name__ for r in caplog.records] == ["ValueError"]


def test_ctrl_c_while_the_cluster_shuts_down_says_the_model_was_saved(capsys, tmp_path, monkeypatch):
    """The table is printed after the cluster closed: a Ctrl-C during the close was a bare
    'ranklearn: interrupted' although the model had been saved."""
    import contextlib

    from ranklearn.cli import _dask
    from ranklearn.data import save_svmlight
    from ranklearn.datasets import make_ranking

    data, save = tmp_path / "train.txt", tmp_path / "m.json"
    save_svmlight(make_ranking(n_queries=20, n_features=4, n_informative=2, docs_per_query=(5, 5), random_state=0), data)
    opened = _dask._client

    @contextlib.contextmanager
    def closing_interrupted(scheduler, workers):
        with opened(scheduler, workers) as client:
            yield client
        raise KeyboardInterrupt

    monkeypatch.setattr(_dask, "_client", closing_interrupted)
    code, _, err = run(capsys, "train", "--train", data, "--model", "lambdamart", "--n-estimators", "2",
                       "--workers", "1", "--save", save)  # fmt: skip
    assert code == 130
    assert err.splitlines()[-1] == (f"ranklearn: interrupted while the cluster shut down, before the final table; "
                                    f"the model was saved to {save}")  # fmt: skip
    assert load_model(save).n_iter_ == 2


def _tiny(tmp_path):
    from ranklearn.data import save_svmlight
    from ranklearn.datasets import make_ranking

    data, save = tmp_path / "train.txt", tmp_path / "m.json"
    save_svmlight(make_ranking(n_queries=20, n_features=4, n_informative=2, docs_per_query=(5, 5), random_state=0), data)
    return data, save


def test_ctrl_c_inside_the_cluster_s_close_is_deferred_until_it_closed(capsys, tmp_path, monkeypatch):
    """A Ctrl-C inside LocalCluster.close interrupted the close: the half-closed cluster was closed
    again by distributed's exit handler with a 10 s timeout before the command's line. It is
    now taken when the close has ended, and said in one line."""
    import signal

    from distributed import LocalCluster
    from distributed.core import Status

    data, save = _tiny(tmp_path)
    closed, close = [], LocalCluster.close

    def close_with_ctrl_c(self, *args, **kwargs):
        signal.raise_signal(signal.SIGINT)  # as a terminal's, in the main thread's wait for the close
        result = close(self, *args, **kwargs)
        closed.append(self.status)
        return result

    monkeypatch.setattr(LocalCluster, "close", close_with_ctrl_c)
    code, _, err = run(capsys, "train", "--train", data, "--model", "lambdamart", "--n-estimators", "2",
                       "--workers", "1", "--save", save)  # fmt: skip
    assert code == 130, err
    assert closed == [Status.closed]
    assert err.splitlines()[-1] == (f"ranklearn: interrupted while the cluster shut down, before the final table; "
                                    f"the model was saved to {save}")  # fmt: skip
    assert "Traceback" not in err
    assert load_model(save).n_iter_ == 2


def test_ctrl_c_in_a_finalizer_is_raised_after_it_not_lost():
    """Python runs the SIGINT handler wherever the main thread is, also in a ``__del__`` (a
    distributed Future's hands its release to the event loop): a KeyboardInterrupt there is
    printed as "Exception ignored" and lost. It is raised once the finalizer has returned."""
    import gc
    import signal
    import sys
    import time

    from ranklearn.cli._dask import _ctrl_c_at_safe_points

    done, unraisable = [], []

    class Releases:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)
            done.append(sum(range(1000)))  # more of the finalizer, after the signal

    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN in a job a shell started in the background
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt), _ctrl_c_at_safe_points():
            Releases()
            gc.collect()
            while time.monotonic() - start < 5:
                time.sleep(0.01)
    finally:
        sys.unraisablehook = hook
    assert done == [499500] and unraisable == []
    assert time.monotonic() - start < 2
    assert signal.getsignal(signal.SIGINT) is before  # the handler it found is put back


def test_ctrl_c_while_the_cluster_starts_or_reads_says_nothing_was_trained(capsys, tmp_path, monkeypatch):
    from ranklearn.cli import _dask

    data, save = _tiny(tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_dask, "_read", interrupted)
    code, _, err = run(capsys, "train", "--train", data, "--model", "lambdamart", "--workers", "1", "--save", save)
    assert code == 130
    assert err.splitlines()[-1] == "ranklearn: interrupted while the cluster started or read the files; nothing trained, nothing saved"
    assert "Traceback" not in err
    assert not save.exists()


def test_ctrl_c_while_train_s_options_are_built_is_one_line(capsys, monkeypatch):
    from ranklearn.cli import main as cli_main

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "_register_train_command", interrupted)
    code, _, err = run(capsys, "train", "--help")
    assert (code, err) == (130, "ranklearn: interrupted\n")


def test_processes_spawned_while_the_cluster_starts_write_no_stderr(capfd):
    """A worker interrupted by a Ctrl-C before it leaves the terminal's process group would print
    its import's traceback: the processes started while the cluster starts inherit a null stderr,
    and this process's stderr is back afterwards."""
    import subprocess
    import sys

    from ranklearn.cli import _dask

    with _dask._children_stderr_silenced():
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('spawned while starting')"], check=True)
    subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('spawned after')"], check=True)
    err = capfd.readouterr().err
    assert "spawned while starting" not in err and "spawned after" in err


def test_dask_train_passes_the_files_position_sidecars_to_the_fit(capsys, tmp_path, shared_data):
    """--unbiased on --workers: each file's .position sidecar reaches fit(position=); the bias and
    trees are one machine's, and files without sidecars are one error before training."""
    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"
    pattern, whole = _split_with_positions(src, tmp_path)
    opts = ["--model", "lambdamart", "--n-estimators", "4", "--leaves", "7", "--seed", "0", "--unbiased", "pairwise"]
    code, _, err = run(capsys, "train", "--train", pattern, "--workers", "2", *opts, "--save", tmp_path / "dask.json")
    assert code == 0, err
    assert "ranklearn: positions from" in err and "part-0.txt.position" in err
    code, _, err = run(capsys, "train", "--train", whole, *opts, "--save", tmp_path / "local.json")
    assert code == 0, err
    ours, ref = load_model(tmp_path / "dask.json"), load_model(tmp_path / "local.json")
    np.testing.assert_allclose(ours.position_bias_["t_plus"], ref.position_bias_["t_plus"], rtol=1e-9)
    X = np.asarray(load_svmlight(src).X)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), atol=1e-9)
    bare = tmp_path / "bare.txt"
    bare.write_bytes(src.read_bytes())
    code, _, err = run(capsys, "train", "--train", bare, "--workers", "1", *opts)
    assert_one_line_error(code, err, "--unbiased pairwise needs the training rows' positions",
                          f"{bare} has none")  # fmt: skip


def test_a_dask_train_s_table_says_which_metric_a_set_s_labels_refuse(capsys, tmp_path, shared_data):
    """A test file with a negative label: the model is trained and saved, its table says n/a
    there with the metric's reason, as a local train's does (it used to end with an error)."""
    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"
    test = tmp_path / "test.txt"
    test.write_text("-1 qid:1 1:0.5\n1 qid:1 1:0.2\n")
    code, out, err = run(capsys, "train", "--train", src, "--test", test, "--model", "lambdamart", "--workers", "1",
                         "--n-estimators", "2", "--save", tmp_path / "m.json")  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "m.json").exists() and "n/a" in out and "ndcg@10 not computed on test" in out


def test_a_neural_click_fit_on_dask_is_the_local_one(capsys, tmp_path, shared_data):
    """--model listnet --loss dla --workers: the files' .position sidecars reach the fit on one
    worker; the saved network and its learned propensities are a local train's."""
    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"
    pattern, whole = _split_with_positions(src, tmp_path)
    opts = ["--model", "listnet", "--loss", "dla", "--n-estimators", "3", "--seed", "0"]
    code, out, err = run(capsys, "train", "--train", pattern, "--workers", "1", *opts, "--save", tmp_path / "dask.json")
    assert code == 0, err
    assert "listnet on dask: saved to" in out and "part-1.txt.position" in err
    code, _, err = run(capsys, "train", "--train", whole, *opts, "--save", tmp_path / "local.json")
    assert code == 0, err
    ours, ref = load_model(tmp_path / "dask.json"), load_model(tmp_path / "local.json")
    assert type(ours) is type(ref)
    np.testing.assert_allclose(ours.position_bias_["propensity"], ref.position_bias_["propensity"], rtol=1e-6)
    X = np.asarray(load_svmlight(src).X)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-6, atol=1e-7)


def test_a_local_cluster_leaves_port_8787_to_another_cluster(capsys, tmp_path, shared_data):
    """--workers with the dashboard's usual port taken (another cluster's): no warning about it
    (its scheduler's HTTP server takes a free port)."""
    import socket

    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"
    with socket.socket() as held:
        try:
            held.bind(("", 8787))
            held.listen()
        except OSError:  # already another process's: taken either way
            pass
        code, _, err = run(capsys, "train", "--train", src, "--model", "lambdamart", "--workers", "1", "--n-estimators", "1")
    assert code == 0 and "8787" not in err, err
