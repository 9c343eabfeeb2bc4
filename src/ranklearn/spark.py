"""LambdaMART on a Spark cluster: the same trees as one machine, the rows kept in Spark's tasks.

Queries are the unit of distribution, as in :mod:`ranklearn.dask`: the rows are repartitioned
by range of query id (every row of a query lands in one partition; sorted by query, then by
input order, within it) and one barrier-mode task per partition holds them for the whole fit.
The tasks join a star of TCP connections (:class:`ranklearn.collective.StarComm`; rank 0's
address reaches the others through ``BarrierTaskContext.allGather``) and each runs the same
boosting step (:class:`ranklearn.tree.boosting.BoostingState` summing over them), so that
every task grows the same tree. The driver keeps the model: it draws each tree's bagged
queries and features, sends each task one command per tree over a :class:`~ranklearn.collective.Link`
(the Spark job runs in a thread beside it), receives the tree from rank 0, and runs the
evaluation metric, early stopping and callbacks (:meth:`ranklearn.models.base.BaseRanker._train`).

Needs the ``spark`` extra: ``pip install 'ranklearn[spark]'`` (and Java for Spark).
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import select
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark import BarrierTaskContext
from pyspark.ml import Estimator, Model
from pyspark.ml.functions import vector_to_array
from pyspark.ml.linalg import VectorUDT
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import (
    HasFeaturesCol,
    HasLabelCol,
    HasPredictionCol,
    HasValidationIndicatorCol,
    HasWeightCol,
)
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsReader, DefaultParamsWritable, DefaultParamsWriter
from pyspark.ml.util import MLReadable, MLReader, MLWritable, MLWriter
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from ranklearn._threads import numba_threads
from ranklearn.collective import Link, PeerError, PeerTimeoutError, StarComm, accept_link, open_listener
from ranklearn.exceptions import ModelFormatError
from ranklearn.io.model_file import model_file_bytes
from ranklearn.data.positions import check_position
from ranklearn.models.checks import as_dense_features, check_ranking_data, check_weight, in_context
from ranklearn.models.driver import Callback, EvalData
from ranklearn.models.lambdamart import LambdaMART
from ranklearn.tree.binning import BinMapper, has_missing, sample_rows
from ranklearn.tree.boosting import BoostingState, draw_subsets

__all__ = ["QueryStraddleError", "SparkLambdaMART", "SparkLambdaMARTModel", "TaskLostError", "TaskTimeoutError"]

#: objectives whose gradients depend only on each query's own rows (as :mod:`ranklearn.dask`)
_LOCAL_OBJECTIVES = ("lambdarank", "ranknet", "squared_error")

#: LambdaMART's parameters and their defaults: the estimator's own, under the same names
_RANKER_DEFAULTS = LambdaMART().get_params()


class TaskLostError(RuntimeError):
    """A task holding a partition's rows failed, died or closed its connection: the fit
    cannot go on without its rows (it does not resume)."""


class TaskTimeoutError(TaskLostError):
    """A task did not answer within ``task_timeout`` seconds (alive but hung, or far slower
    than the others): the fit stops instead of waiting."""


class QueryStraddleError(ValueError):
    """A query's rows reached two tasks (the repartitioning keeps every query in one)."""


# ---------------------------------------------------------------------- parameters
class _SparkRankerParams(HasFeaturesCol, HasLabelCol, HasWeightCol, HasPredictionCol, HasValidationIndicatorCol):
    """Columns, tasks, and LambdaMART's parameters under their Python names."""

    qidCol: Param = Param(
        Params._dummy(), "qidCol", "query id of each row (numbers or strings; a query's rows may be anywhere)",
        typeConverter=TypeConverters.toString,
    )  # fmt: skip
    positionCol: Param = Param(
        Params._dummy(), "positionCol", "1-based display rank of each row in its logged list (side data)",
        typeConverter=TypeConverters.toString,
    )  # fmt: skip
    num_workers: Param = Param(
        Params._dummy(), "num_workers",
        "barrier tasks, one partition of whole queries each (None: the session's default parallelism)",
    )  # fmt: skip
    task_timeout: Param = Param(
        Params._dummy(), "task_timeout", "seconds any wait on a task may last (None: forever)"
    )


for _name in _RANKER_DEFAULTS:
    setattr(_SparkRankerParams, _name, Param(Params._dummy(), _name, f"LambdaMART's {_name} (see its docstring)"))


def _features_array(df: DataFrame, column: str) -> Column:
    """The features column as an array of float32 (the precision the models hold, rounded as
    NumPy rounds; half the bytes of doubles to move): a vector column (VectorAssembler's) or
    an array of numbers. A finite value beyond float32's range becomes inf, which the tasks refuse.

    Raises
    ------
    ValueError, TypeError
        Naming the column when it is missing or of another type.
    """
    if column not in df.columns:
        raise ValueError(f"featuresCol={column!r}: no such column (the DataFrame has {', '.join(df.columns)})")
    kind = df.schema[column].dataType
    if isinstance(kind, VectorUDT):
        return vector_to_array(F.col(column), "float32")
    if isinstance(kind, T.ArrayType) and isinstance(kind.elementType, T.NumericType):
        return F.col(column).cast("array<float>")
    raise TypeError(
        f"featuresCol={column!r} must be a vector column (VectorAssembler's) or an array of numbers, "
        f"not {kind.simpleString()}"
    )


# ---------------------------------------------------------------------- the tasks
@dataclass(frozen=True)
class _Plan:
    """What every task of a fit is told (pickled with the task's function)."""

    driver: tuple[str, int]
    token: bytes
    timeout: float | None
    n_jobs: int | None
    weight: bool
    position: bool
    validation: bool


def _rows_of(batches: Iterator[pa.RecordBatch]) -> pa.Table | None:
    batches = list(batches)
    return pa.Table.from_batches(batches) if batches else None


def _matrix(column: pa.ChunkedArray, where: str) -> np.ndarray:
    """A list column of equal-length rows as a float32 matrix (features as LambdaMART holds them)."""
    column = column.combine_chunks()
    if column.null_count:
        raise ValueError(f"{where}: a row has no features (null)")
    sizes = np.diff(column.offsets.to_numpy())
    width = int(sizes[0]) if sizes.size else 0
    if (sizes != width).any():
        raise ValueError(f"{where}: rows have {width} and {int(sizes[sizes != width][0])} features; all need as many")
    X = as_dense_features(column.flatten().to_numpy(zero_copy_only=False).reshape(len(column), width))
    if np.isinf(X).any():  # Spark's cast to float32 made inf of a value beyond its range, if not of inf
        row, feature = np.argwhere(np.isinf(X))[0]
        raise ValueError(
            f"{where}: feature {feature + 1} (from 1) of row {row} (from 0) is infinite or beyond float32's range "
            "(±3.4e38): the models hold features as float32; rescale that feature"
        )
    return X


class _TaskRows:
    """One task's rows for the whole fit: the training rows of its partition (queries
    contiguous as one machine makes them) and its validation rows, and then their
    :class:`BoostingState`."""

    def __init__(self, table: pa.Table | None, plan: _Plan, rank: int, where: str) -> None:
        self.rank, self.where = rank, where
        self.X = self.Xe = np.empty((0, 0), np.float32)
        self.y = self.ye = np.zeros(0)
        self.ptr = self.ptr_e = np.zeros(1, np.int64)
        self.heads = np.empty(0)
        self.weight = self.position = None
        self.comm: StarComm | None = None
        if table is None or table.num_rows == 0:
            return
        X = _matrix(table["f"], where)
        self.X = self.Xe = X[:0]  # as wide as the rows, when a partition holds no training or no validation rows
        y = table["y"].to_numpy()
        if table["q"].null_count:
            raise ValueError(f"{where}: a row has no query id (null)")
        qid = table["q"].to_numpy()
        if plan.validation and table["v"].null_count:
            raise ValueError(f"{where}: a row has a null validation indicator (it must be true or false)")
        valid = table["v"].to_numpy(zero_copy_only=False) if plan.validation else np.zeros(len(y), bool)
        try:
            if (~valid).any():
                t = ~valid
                self.X, self.y, self.ptr, order = check_ranking_data(X[t], y[t], qid[t], allow_nan=True)
                q = qid[t] if order is None else qid[t][order]
                self.heads = q[self.ptr[:-1]]
                if plan.weight:
                    self.weight = check_weight(table["w"].to_numpy(zero_copy_only=False)[t], self.X.shape[0], order)
                if plan.position:
                    self.position = check_position(table["p"].to_numpy(zero_copy_only=False)[t], self.X.shape[0], order)
            if valid.any():
                self.Xe, self.ye, self.ptr_e, _ = check_ranking_data(X[valid], y[valid], qid[valid], allow_nan=True)
        except ValueError as exc:  # the same error, saying which partition
            raise in_context(exc, where) from None

    def describe(self, name: str) -> dict[str, Any]:
        """Sizes, the training query ids in order, the label range and the validation labels."""
        return {
            "name": name,
            "n_rows": self.X.shape[0],
            "n_features": max(self.X.shape[1], self.Xe.shape[1]) if self.X.size or self.Xe.size else None,
            "qids": self.heads,
            "y_range": (float(self.y.min()), float(self.y.max())) if self.y.size else None,
            "validation": (self.ye, self.ptr_e),
        }

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """Feature rows of the bin-edge sample."""
        return self.X[rows]

    def bin(self, mapper: BinMapper) -> bool:
        """Bin the rows once (the raw features are freed); whether a training value is missing."""
        width = mapper.n_bins_.shape[0]
        self.binned = mapper.transform(self.X) if self.X.shape[0] else np.empty((width, 0), np.uint8)
        self.binned_e = mapper.transform(self.Xe) if self.Xe.shape[0] else None
        del self.X, self.Xe
        return bool(has_missing(self.binned))

    def join(self, ctx: BarrierTaskContext, host: str, name: str, plan: _Plan) -> None:
        """Join the star of the fit's tasks: every task's address and name through ``allGather``."""
        listener = open_listener(host)
        me = "\t".join([host, str(listener.getsockname()[1]), name])
        others = [m.split("\t", 2) for m in ctx.allGather(me)]
        # a task gives up on a silent one a little before the driver gives up on the tree, so
        # that the error names the silent task, not one that was waiting for it
        patience = None if plan.timeout is None else 0.9 * plan.timeout
        self.comm = StarComm.connect(self.rank, [(h, int(p)) for h, p, _ in others], listener, plan.token, patience,
                                     [n for _, _, n in others])  # fmt: skip

    def prepare(self, objective: Any, n_bins: np.ndarray, learning_rate: float, limits: dict[str, Any]) -> None:
        """The rows' :class:`BoostingState`, summing over the tasks."""
        self.state = BoostingState(
            self.binned, n_bins, self.y, self.ptr, objective, weight=self.weight,
            side=None if self.position is None else {"position": self.position},
            evals=[] if self.binned_e is None else [self.binned_e], learning_rate=learning_rate, limits=limits,
            comm=self.comm,
        )  # fmt: skip
        del self.binned, self.binned_e

    def tree(self, chosen: np.ndarray | None, features: np.ndarray | None) -> tuple[Any, np.ndarray | None]:
        """Grow one tree with the other tasks: the tree (rank 0 only; None elsewhere) and
        the scores of this task's validation rows (None without)."""
        tree = self.state.step(chosen, features)
        return (tree if self.rank == 0 else None), (self.state.eval_scores[0] if self.state.eval_scores else None)

    def close(self) -> None:
        if self.comm is not None:
            self.comm.close()


def _portable(exc: BaseException) -> tuple[str, str]:
    """An error of a task as the driver re-raises it: its kind and its message."""
    if isinstance(exc, PeerTimeoutError):
        return "timeout", str(exc)
    if isinstance(exc, PeerError):
        return "lost", str(exc)
    if isinstance(exc, ValueError):
        return "value", str(exc)
    return "other", f"{type(exc).__name__}: {exc}"


def _run_task(batches: Iterator[pa.RecordBatch], plan: _Plan) -> Iterator[pa.RecordBatch]:
    """A barrier task of the fit: read its partition, then answer the driver's commands."""
    ctx = BarrierTaskContext.get()
    rank = ctx.partitionId()
    host = ctx.getTaskInfos()[rank].address.rsplit(":", 1)[0]
    name = f"task {rank} ({host}, pid {os.getpid()})"
    link = Link.connect(plan.driver, plan.token, rank, plan.timeout, "the driver")
    rows = None
    try:
        with numba_threads(plan.n_jobs if plan.n_jobs is not None else ctx.cpus()):
            rows = _TaskRows(_rows_of(batches), plan, rank, f"partition {rank}")
            link.send(("ok", rows.describe(name)))
            while True:
                op, args = link.recv()
                if op == "stop":
                    break
                if op == "join":
                    result = rows.join(ctx, host, name, plan)
                else:
                    result = getattr(rows, op)(*args)
                link.send(("ok", result))
    except BaseException as exc:
        try:
            link.send(("error", _portable(exc)))
        except PeerError:
            raise exc from None  # the driver is gone: Spark reports it
    finally:
        if rows is not None:
            rows.close()
        link.close()
    yield pa.RecordBatch.from_arrays([pa.array([rank], pa.int32())], names=["rank"])


# ---------------------------------------------------------------------- the driver
class _Job:
    """The fit's Spark job, run in a thread beside the driver's training loop."""

    def __init__(self, frame: DataFrame) -> None:
        self.frame = frame
        self.context = frame.sparkSession.sparkContext
        self.group = f"ranklearn-{secrets.token_hex(8)}"
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="ranklearn-spark-fit", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.context.setJobGroup(self.group, "ranklearn SparkLambdaMART fit", interruptOnCancel=True)
        try:
            self.frame.collect()
        except BaseException as exc:  # noqa: BLE001 - read by the driver's thread
            self.error = exc

    def reason(self) -> str:
        """Spark's error, on one line."""
        text = str(self.error).strip()
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[0][:400] if lines else type(self.error).__name__

    def end(self, ok: bool, timeout: float | None) -> None:
        """Wait for the job to end (cancel it first unless ``ok``)."""
        if not ok:
            with contextlib.suppress(Exception):
                self.context.cancelJobGroup(self.group)
        self.thread.join(timeout if ok else 5.0)  # a cancelled job ends on its own; the error is told now


class _Tasks:
    """The fit's tasks as the driver sees them: one link each, in rank order."""

    def __init__(self, job: _Job, links: list[Link], timeout: float | None) -> None:
        self.job, self.links, self.timeout = job, links, timeout

    def ask(self, op: str, args: Sequence[tuple]) -> list:
        """Send each task its command and return the answers, in rank order.

        Raises
        ------
        TaskLostError
            Naming the task, when it closed its connection, failed, or reports another
            task gone (or the Spark job failed).
        TaskTimeoutError
            Naming the task, when it did not answer within ``timeout`` or reports another
            task silent that long.
        ValueError
            A task's data error, naming its partition.
        """
        for link, a in zip(self.links, args):
            try:
                link.send((op, a))
            except PeerError:
                raise self._lost(link) from None
        return self.answers()

    def answers(self) -> list:
        """Every task's next answer (see :meth:`ask`)."""
        out: list = [None] * len(self.links)
        pending = dict(enumerate(self.links))
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while pending:
            wait = 1.0 if deadline is None else min(1.0, deadline - time.monotonic())
            if wait <= 0:
                late = pending[min(pending)]
                raise TaskTimeoutError(
                    f"{late.name} did not answer within task_timeout={self.timeout:g} s (hung or overloaded); "
                    "its rows, scores and gradients are out of reach"
                )
            ready, _, _ = select.select(list(pending.values()), [], [], wait)
            for link in ready:
                i = self.links.index(link)
                try:
                    kind, value = link.recv(self.timeout)
                except PeerError:
                    raise self._lost(link) from None
                if kind == "error":
                    raise _task_error(link.name, *value)
                out[i] = value
                del pending[i]
            if not ready and self.job.error is not None:
                raise TaskLostError(f"the fit's Spark job failed: {self.job.reason()}")
        return out

    def _lost(self, link: Link) -> TaskLostError:
        time.sleep(0.5)  # Spark's reason, when it has one, comes right after the connection closed
        why = f" (Spark: {self.job.reason()})" if self.job.error is not None else ""
        return TaskLostError(f"{link.name} was lost{why}; its rows, scores and gradients went with it")

    def stop(self) -> None:
        for link in self.links:
            with contextlib.suppress(PeerError, OSError):
                link.send(("stop", ()))
            link.close()


def _task_error(name: str, kind: str, message: str) -> Exception:
    if kind == "timeout":
        return TaskTimeoutError(f"{message} (reported by {name})")
    if kind == "lost":
        return TaskLostError(f"{message} (reported by {name})")
    if kind == "value":
        return ValueError(message)
    return TaskLostError(f"{name} failed: {message}")


def _accept_tasks(listener: Any, token: bytes, n: int, job: _Job, timeout: float | None) -> list[Link]:
    """The links of the ``n`` tasks, in rank order, once each has connected.

    Raises
    ------
    TaskLostError
        When the Spark job fails first (a barrier stage with more tasks than free slots,
        a task that cannot start).
    TaskTimeoutError
        When a task has not connected within ``timeout``.
    """
    listener.settimeout(1.0)
    links: dict[int, Link] = {}
    deadline = None if timeout is None else time.monotonic() + timeout
    while len(links) < n:
        if job.error is not None:
            raise TaskLostError(f"the fit's Spark job failed before its tasks started: {job.reason()}")
        if deadline is not None and time.monotonic() > deadline:
            late = ", ".join(str(r) for r in range(n) if r not in links)
            raise TaskTimeoutError(
                f"task(s) {late} did not start within task_timeout={timeout:g} s (a barrier stage needs "
                f"num_workers={n} free task slots at once)"
            )
        try:
            got = accept_link(listener, token, n, "task {rank}")
        except TimeoutError:
            continue
        if got is not None:
            links[got[0]] = got[1]
    return [links[r] for r in range(n)]


class _SparkFit(LambdaMART):
    """The driver's side of a Spark fit: a LambdaMART whose rows live in the tasks (the
    training loop of :meth:`BaseRanker._train`, each step one command per task)."""

    _parameter_constraints = {
        **LambdaMART._parameter_constraints,
        "task_timeout": [Interval(Real, 0, None, closed="neither"), None],
    }
    _remote_rows = "SparkLambdaMART"

    def __init__(self, *, task_timeout: float | None = 600.0, **params: Any) -> None:
        super().__init__(**params)
        self.task_timeout = task_timeout

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return sorted([*LambdaMART._get_param_names(), "task_timeout"])

    def _check_params(self) -> None:
        objective = self.effective_objective()
        if not (isinstance(objective, str) and objective in _LOCAL_OBJECTIVES):
            raise ValueError(
                f"objective={objective!r} is not supported by SparkLambdaMART; use one of "
                f"{', '.join(_LOCAL_OBJECTIVES)} (gradients computed query by query)"
            )
        super()._check_params()

    def _json_params(self) -> dict[str, Any]:
        params = super()._json_params()
        params.pop("task_timeout")  # a wait, not a parameter of the model
        return params

    def fit_frame(
        self, frame: DataFrame, n_tasks: int, plan: dict[str, bool], callbacks: Sequence[Callback] | None
    ) -> _SparkFit:
        """Fit on ``frame`` (columns f, y, q and the optional w, p, v, partitioned by whole
        queries into ``n_tasks`` partitions); ``plan`` says which optional columns it has."""
        self.check_params()
        self._warn_unread_side({"position": True} if plan["position"] else None)  # as fit(position=) warns
        context = frame.sparkSession.sparkContext
        host = context.getConf().get("spark.driver.host", "127.0.0.1")
        listener = open_listener(host)
        token = secrets.token_bytes(16)
        task_plan = _Plan(listener.getsockname()[:2], token, self.task_timeout, self.n_jobs, **plan)
        job = _Job(frame.mapInArrow(functools.partial(_run_task, plan=task_plan), "rank int", barrier=True))
        tasks, ok = None, False
        try:
            tasks = _Tasks(job, _accept_tasks(listener, token, n_tasks, job, self.task_timeout), self.task_timeout)
            info = tasks.answers()
            for link, d in zip(tasks.links, info):
                link.name = d["name"]
            evals = self._describe(info)
            tasks.ask("join", [()] * n_tasks)
            max_label = max(d["y_range"][1] for d in info if d["y_range"] is not None)
            if evals:
                max_label = max(max_label, float(evals[0].y.max()))
            self._train(tasks, evals, int(self._starts[-1]), max_label, None, callbacks, self.__sklearn_is_fitted__())
            ok = True
        finally:
            listener.close()
            if tasks is not None:
                tasks.stop()
            job.end(ok, self.task_timeout)
        return self

    def _describe(self, info: list[dict[str, Any]]) -> list[EvalData]:
        """Check what the tasks hold; keep their offsets; the validation set (if any)."""
        widths = {d["n_features"] for d in info} - {None}
        if len(widths) > 1:
            raise ValueError(f"the rows have {' and '.join(map(str, sorted(widths)))} features; all need as many")
        if not any(d["n_rows"] for d in info):
            raise ValueError("no training rows: need at least one query with documents")
        owner: dict[Any, int] = {}
        for i, d in enumerate(info):
            for q in d["qids"].tolist():
                j = owner.setdefault(q, i)
                if j != i:
                    raise QueryStraddleError(f"query {q!r} reached partitions {j} and {i}")
        self.n_features_in_ = widths.pop()
        self._starts = np.concatenate(([0], np.cumsum([d["n_rows"] for d in info]))).astype(np.int64)
        self._query_starts = np.concatenate(([0], np.cumsum([len(d["qids"]) for d in info]))).astype(np.int64)
        ranges = [d["y_range"] for d in info if d["y_range"] is not None]
        self._y_range = (min(lo for lo, _ in ranges), max(hi for _, hi in ranges))
        ys = [d["validation"][0] for d in info]
        if not sum(y.size for y in ys):
            return []
        ptrs, offset = [np.zeros(1, np.int64)], 0
        for y, ptr in (d["validation"] for d in info):
            ptrs.append(ptr[1:] + offset)
            offset += y.size
        return [EvalData("validation", np.concatenate(ys), np.concatenate(ptrs))]

    def _fit_threads(self, n_rows: int) -> int | None:
        return self.n_jobs  # the driver only draws subsets and scores the validation rows

    def _shares_cpus(self) -> bool:
        return False

    def _begin_fit(self, tasks: _Tasks, evals: list[EvalData]) -> None:
        self._objective = self._make_objective()
        # the objectives' prepare reads only the labels' range (checks, ERR's top grade)
        self._objective.prepare(np.array(self._y_range), np.array([0, 2]))
        self.objective_ = self._objective.get_params()
        self._rng = check_random_state(self.random_state)
        # the rows one machine would sample, gathered from the tasks that hold them
        rows = sample_rows(int(self._starts[-1]), self.bin_subsample, self._rng.randint(2**31 - 1))
        sample = np.concatenate(tasks.ask("rows", [(r,) for r in _split_sorted(rows, self._starts)]))
        self.bin_mapper_ = BinMapper(self.max_bins, None).fit(sample)
        n = len(tasks.links)
        self.trained_with_missing_ = any(tasks.ask("bin", [(self.bin_mapper_,)] * n))
        prepare = (self._objective, self.bin_mapper_.n_bins_, self.learning_rate, self._growth_limits())
        tasks.ask("prepare", [prepare] * n)
        self._tasks, self._validation = tasks, np.zeros(evals[0].y.shape[0]) if evals else None
        self.trees_ = []
        self._predictor = None

    def _fit_step(self, iteration: int) -> None:
        tasks = self._tasks
        chosen, features = draw_subsets(self._rng, int(self._query_starts[-1]), self.n_features_in_,
                                        self.bagging_fraction, self.feature_fraction)  # fmt: skip
        per_task = [None] * len(tasks.links) if chosen is None else _split_sorted(chosen, self._query_starts)
        try:
            results = tasks.ask("tree", [(c, features) for c in per_task])
        except TaskLostError as exc:
            raise type(exc)(f"tree {iteration}: {exc}; the fit stops (it does not resume)") from exc
        self._finish_tree(results[0][0])
        if self._validation is not None:
            self._validation = np.concatenate([r[1] for r in results if r[1] is not None])

    def _eval_scores(self, index: int) -> np.ndarray:
        return self._validation

    def _end_fit(self) -> None:
        for name in ("_tasks", "_validation", "_starts", "_query_starts", "_y_range"):
            self.__dict__.pop(name, None)
        super()._end_fit()

    def to_local(self) -> LambdaMART:
        """The plain ``LambdaMART`` with the same trees and fitted attributes."""
        return LambdaMART.from_payload(self._to_payload())


def _split_sorted(global_sorted: np.ndarray, starts: np.ndarray) -> list[np.ndarray]:
    """Sorted global indices (rows, queries) as each task's local ones (``starts``: each
    task's first index, and the total)."""
    cuts = np.searchsorted(global_sorted, starts)
    return [global_sorted[cuts[i] : cuts[i + 1]] - starts[i] for i in range(len(starts) - 1)]


# ---------------------------------------------------------------------- the estimator
class SparkLambdaMART(_SparkRankerParams, Estimator, DefaultParamsReadable, DefaultParamsWritable):
    """:class:`~ranklearn.models.lambdamart.LambdaMART` trained on a Spark cluster (a
    ``pyspark.ml`` Estimator).

    Parameters
    ----------
    featuresCol : str, default "features"
        A vector column (``VectorAssembler``'s; sparse vectors are made dense) or an array
        of numbers. Held as float32, as ``LambdaMART`` holds features.
    labelCol : str, default "label"
        Relevance labels.
    qidCol : str, default "qid"
        Query id of each row (numbers or strings). The rows of a query may be anywhere:
        the fit repartitions them by range of query id.
    weightCol : str, optional
        Sample weights (multiply each document's gradient and hessian).
    positionCol : str, optional
        1-based display rank of each row: checked (whole numbers >= 1) and given to the
        objective as side data, as ``fit(position=)``; the objectives Spark takes do not read it.
    validationIndicatorCol : str, optional
        A boolean column: rows where it is true form the evaluation set "validation" (scored
        with ``metric`` after every tree; ``early_stopping_rounds`` watches it), the others
        are trained on.
    predictionCol : str, default "prediction"
        The model's output column.
    num_workers : int, optional
        Barrier tasks, each holding one partition of whole queries for the whole fit
        (default: the session's default parallelism). A barrier stage needs that many free
        task slots at once.
    task_timeout : float or None, default 600
        Seconds any wait on a task may last: for every task to start and connect, for the
        answer to one command (reading and binning the rows, one tree), and for one task
        waiting on another during a tree. A task that fails, dies or goes silent stops the
        fit with :class:`TaskLostError` / :class:`TaskTimeoutError` naming it, never a hang.
    **params
        Every :class:`~ranklearn.models.lambdamart.LambdaMART` parameter under its name
        (``n_estimators``, ``num_leaves``...; ``metric`` and ``objective`` as names). The
        objective is "lambdarank", "ranknet" or "squared_error" (their gradients depend on
        each query alone).

    Notes
    -----
    For the same rows in the same order, the trees are those of ``LambdaMART`` (up to the
    order of floating-point sums across tasks): within a query the rows keep their input
    order (``monotonically_increasing_id`` before the repartitioning), and queries are
    ordered by id, as a LETOR file sorted by query is read.
    """

    def __init__(self, **params: Any) -> None:
        super().__init__()
        self._setDefault(featuresCol="features", labelCol="label", predictionCol="prediction", qidCol="qid",
                         num_workers=None, task_timeout=600.0, **_RANKER_DEFAULTS)  # fmt: skip
        self.setParams(**params)

    def setParams(self, **params: Any) -> SparkLambdaMART:
        """Set parameters (checked at once, as ``fit`` checks them).

        Raises
        ------
        TypeError
            For a name that is not a parameter.
        ValueError
            Naming the parameter, for a value LambdaMART refuses.
        """
        for name in params:
            if not self.hasParam(name):
                raise TypeError(f"SparkLambdaMART has no parameter {name!r}")
        for name, value in params.items():
            if value is None and name.endswith("Col"):
                self.clear(self.getParam(name))  # no such column (weights, positions, validation rows)
            else:
                self._set(**{name: value})
        self._trainer().check_params()
        return self

    def _trainer(self) -> _SparkFit:
        workers = self.getOrDefault("num_workers")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, Integral) or workers < 1):
            raise ValueError(f"num_workers must be a positive integer or None, got {workers!r}")
        params = {name: self.getOrDefault(name) for name in _RANKER_DEFAULTS}
        return _SparkFit(task_timeout=self.getOrDefault("task_timeout"), **params)

    def fit(self, dataset: DataFrame, params: Any = None, *, callbacks: Sequence[Callback] | None = None) -> Any:
        """Fit on ``dataset`` (see the class's columns); ``callbacks`` are called as
        ``cb(iteration, total, {set: {metric: value}})`` after every tree, on the driver."""
        self._callbacks = callbacks
        try:
            return super().fit(dataset, params)
        finally:
            del self._callbacks

    def _fit(self, dataset: DataFrame) -> SparkLambdaMARTModel:
        trainer = self._trainer()
        trainer.check_params()
        columns = {"y": "labelCol", "q": "qidCol", "w": "weightCol", "p": "positionCol", "v": "validationIndicatorCol"}
        features = _features_array(dataset, self.getFeaturesCol())
        chosen = [F.monotonically_increasing_id().alias("r"), features.alias("f")]
        plan = {}
        for alias, param in columns.items():
            name = self.getOrDefault(param) if self.isDefined(param) else None
            if alias in ("w", "p", "v"):
                plan[{"w": "weight", "p": "position", "v": "validation"}[alias]] = name is not None
            if name is None:
                continue
            if name not in dataset.columns:
                raise ValueError(f"{param}={name!r}: no such column (the DataFrame has {', '.join(dataset.columns)})")
            if alias == "v" and not isinstance(dataset.schema[name].dataType, T.BooleanType):
                kind = dataset.schema[name].dataType.simpleString()
                raise TypeError(f"{param}={name!r} must be a boolean column, not {kind}")
            # numbers as doubles: the tasks' checks see a fractional position or a null (NaN), not a cast's
            cast = {"y": "double", "w": "double", "p": "double"}.get(alias)
            chosen.append((F.col(name).cast(cast) if cast else F.col(name)).alias(alias))
        n_tasks = self.getOrDefault("num_workers") or dataset.sparkSession.sparkContext.defaultParallelism
        # every row of a query in one partition (range of qid), in input order within it
        frame = dataset.select(*chosen).repartitionByRange(n_tasks, "q").sortWithinPartitions("q", "r")
        trainer.fit_frame(frame, n_tasks, plan, getattr(self, "_callbacks", None))
        model = SparkLambdaMARTModel(trainer.to_local())
        model._resetUid(self.uid)
        return self._copyValues(model)


class SparkLambdaMARTModel(Model, HasFeaturesCol, HasPredictionCol, MLReadable, MLWritable):
    """A fitted :class:`SparkLambdaMART`: ``transform`` adds ``predictionCol`` (the scores;
    higher ranks first), ``write().save(path)`` / ``SparkLambdaMARTModel.load(path)`` keep
    it (the ranklearn model file inside Spark's folder), :meth:`to_local` gives the plain
    ``LambdaMART``.

    Parameters
    ----------
    model : LambdaMART
        The fitted model.
    """

    def __init__(self, model: LambdaMART | None = None) -> None:
        super().__init__()
        self._setDefault(featuresCol="features", predictionCol="prediction")
        self._local = model

    def to_local(self) -> LambdaMART:
        """The plain ``LambdaMART`` (the model itself: its trees, bins and fitted attributes)."""
        return self._local

    def setFeaturesCol(self, value: str) -> SparkLambdaMARTModel:
        """Read the features from column ``value``."""
        return self._set(featuresCol=value)

    def setPredictionCol(self, value: str) -> SparkLambdaMARTModel:
        """Write the scores to column ``value``."""
        return self._set(predictionCol=value)

    def _transform(self, dataset: DataFrame) -> DataFrame:
        model = self._local

        @F.pandas_udf("double")
        def predict(rows: pd.Series) -> pd.Series:
            X = np.stack(rows.to_numpy()) if len(rows) else np.empty((0, model.n_features_in_))
            return pd.Series(model.predict(X))

        return dataset.withColumn(self.getPredictionCol(), predict(_features_array(dataset, self.getFeaturesCol())))

    def write(self) -> MLWriter:
        return _ModelWriter(self)

    @classmethod
    def read(cls) -> MLReader:
        return _ModelReader(cls)


class _ModelWriter(MLWriter):
    """A model's folder: Spark's metadata (the columns) and the ranklearn model file (``model/``,
    one line of text)."""

    def __init__(self, instance: SparkLambdaMARTModel) -> None:
        super().__init__()
        self.instance = instance

    def saveImpl(self, path: str) -> None:
        DefaultParamsWriter.saveMetadata(self.instance, path, self.sparkSession)
        local = self.instance.to_local()
        text = model_file_bytes(local._model_name, local._to_payload()).decode()
        self.sparkSession.createDataFrame([(text,)], ["value"]).coalesce(1).write.text(os.path.join(path, "model"))


class _ModelReader(MLReader):
    def __init__(self, cls: type) -> None:
        super().__init__()
        self.cls = cls

    def load(self, path: str) -> SparkLambdaMARTModel:
        from ranklearn.io import model_from_bytes

        metadata = DefaultParamsReader.loadMetadata(path, self.sparkSession)
        lines = [r[0] for r in self.sparkSession.read.text(os.path.join(path, "model")).collect()]
        local = model_from_bytes("\n".join(lines).encode(), os.path.join(path, "model"))
        if not isinstance(local, LambdaMART):
            raise ModelFormatError(f"holds a {local._model_name!r} model, not a LambdaMART", path=path)
        model = self.cls(local)
        model._resetUid(metadata["uid"])
        DefaultParamsReader.getAndSetParams(model, metadata)
        return model
