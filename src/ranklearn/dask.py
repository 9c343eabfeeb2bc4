"""Ranking on a Dask cluster: LambdaMART with the same trees as one machine, the rows kept on the
workers; the neural rankers fit on one worker (:class:`DaskListNet`, :class:`DaskRankNet`,
:class:`DaskLambdaRank`); LETOR files read on the workers (:func:`read_svmlight`).

Queries are the unit of distribution: each partition of the training data holds whole
queries, so lambdas stay local and only node sums and histograms travel. Every partition
becomes a :class:`_Shard`, a Dask actor on the worker that holds its rows. For training,
every worker holding shards gets one :class:`_Peer` actor, which takes over its worker's
training rows (binned, with their scores and gradients) for the whole fit. The peers join
a star of TCP connections (:class:`ranklearn.collective.StarComm`) and grow each tree
together, as LightGBM's distributed learner does: each runs the same
:class:`~ranklearn.tree.grower.TreeGrower` on an
:class:`~ranklearn.tree.allreduce_builder.AllreduceHistogramBuilder`, which sums node sums
and histograms over the peers (added in rank order: every peer gets the same bits and takes
the same splits). The client only draws each tree's bagged queries and features, asks every
peer for a tree (one round trip per tree), and keeps the model, the evaluation metric and
early stopping.

Needs the ``dask`` extra: ``pip install 'ranklearn[dask]'``.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import glob
import operator
import secrets
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Real
from os import PathLike
from pathlib import Path
from typing import Any

import dask
import dask.array as da
import numpy as np
from distributed import Client, Event, KilledWorker, Queue, default_client, get_worker, wait
from distributed.comm import CommClosedError
from distributed.comm.addressing import get_address_host
from distributed.utils import sync
from numpy.typing import ArrayLike
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data

from ranklearn._threads import numba_threads
from ranklearn.collective import PeerError, PeerTimeoutError, StarComm, open_listener
from ranklearn.data.positions import check_position, sidecar_path
from ranklearn.data.weights import read_weight_file, weight_path
from ranklearn.exceptions import DataFormatError
from ranklearn.models.base import named_eval_sets, resolve_qid
from ranklearn.models.checks import check_feature_values, check_ranking_data, check_weight, in_context
from ranklearn.models.driver import Callback
from ranklearn.models.lambdamart import LambdaMART
from ranklearn.models.lambdarank import LambdaRank
from ranklearn.models.listnet import ListNet
from ranklearn.models.ranknet import RankNet
from ranklearn.objectives import Objective
from ranklearn.tree.binning import BinMapper, has_missing, sample_rows
from ranklearn.tree.boosting import BoostingState, draw_subsets
from ranklearn.tree.tree import Tree

__all__ = [
    "DaskLambdaMART",
    "DaskLambdaRank",
    "DaskListNet",
    "DaskRankNet",
    "QueryStraddleError",
    "SvmlightParts",
    "WorkerLostError",
    "WorkerTimeoutError",
    "read_svmlight",
    "svmlight_paths",
]

#: objectives whose gradients depend only on each query's own rows (xendcg draws one random
#: stream over all rows in order, which partitions cannot reproduce)
_LOCAL_OBJECTIVES = ("lambdarank", "ranknet", "squared_error")


def _worker_threads(method: Callable) -> Callable:
    """Run an actor's method on its worker's threads (``nthreads`` of the worker), not on
    numba's default of every core: two 1-thread workers on 2 cores use 2 cores, not 4."""

    @functools.wraps(method)
    def run(self: Any, *args: Any) -> Any:
        with numba_threads(self.n_threads):
            return method(self, *args)

    return run


class _Shard:
    """One partition's rows on its worker (a Dask actor), for the whole fit.

    Parameters
    ----------
    X, y, qid, weight, position
        The partition's blocks (weight and position may be None); queries are made
        contiguous as one machine does.
    where : str
        The partition as errors name it: its row numbers count from its first row.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        qid: np.ndarray,
        weight: np.ndarray | None,
        position: np.ndarray | None,
        where: str,
    ) -> None:
        self.n_threads = get_worker().state.nthreads
        try:
            self.X, self.y, self.ptr, order = check_ranking_data(X, y, qid, allow_nan=True)
            self.position = check_position(position, self.X.shape[0], order)
        except ValueError as exc:  # the same error, saying which partition
            raise in_context(exc, where) from None
        q = np.asarray(qid).ravel() if order is None else np.asarray(qid).ravel()[order]
        self.heads = q[self.ptr[:-1]]
        self.weight = check_weight(weight, self.X.shape[0], order)

    def describe(self) -> dict[str, Any]:
        """Sizes, the query ids in order, and the label range."""
        return {
            "n_rows": self.X.shape[0],
            "n_features": self.X.shape[1],
            "qids": self.heads,
            "y_min": float(self.y.min()),
            "y_max": float(self.y.max()),
        }

    def labels(self) -> tuple[np.ndarray, np.ndarray]:
        """Labels and query boundaries (evaluation sets: the client computes the metric)."""
        return self.y, self.ptr

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """Feature rows of the bin-edge sample."""
        return self.X[rows]

    @_worker_threads
    def bin(self, mapper: BinMapper) -> bool:
        """Bin the rows once (the raw features are freed); returns whether a value is missing."""
        self.binned = mapper.transform(self.X)
        del self.X
        return bool(has_missing(self.binned))


class _Peer:
    """A worker's part of the fit (a Dask actor, one per worker holding shards).

    Takes its worker's training shards' binned rows (concatenated in partition order, each
    shard's copy freed as it goes), their labels, weights, scores and gradients, and grows
    every tree with the other peers (:meth:`tree`). It also predicts its worker's evaluation
    shards.

    Parameters
    ----------
    train_keys : list
        Keys of the training shards on this worker, in partition order.
    eval_keys : list of lists
        For each evaluation set, the keys of its shards on this worker, in partition order.
    """

    def __init__(self, train_keys: list, eval_keys: list[list]) -> None:
        worker = get_worker()
        self.n_threads = worker.state.nthreads
        actors = worker.state.actors  # the shards are actors of this same worker process
        self.train = [actors[k] for k in train_keys]
        self.evals = [[actors[k] for k in keys] for keys in eval_keys]
        self.listener = open_listener(get_address_host(worker.address))
        self.comm: StarComm | None = None

    def address(self) -> tuple[str, int]:
        """Where this peer listens (rank 0's is the one the others connect to)."""
        return self.listener.getsockname()[:2]

    def connect(
        self, rank: int, addresses: list[tuple[str, int]], names: list[str], token: bytes, timeout: float | None
    ) -> None:
        """Join the star of the fit's peers (:meth:`StarComm.connect`)."""
        listener, self.listener = self.listener, None
        self.comm = StarComm.connect(rank, addresses, listener, token, timeout, names)

    @_worker_threads
    def prepare(
        self, objective: Objective, n_bins: np.ndarray, n_features: int, learning_rate: float, limits: dict[str, Any]
    ) -> None:
        """Take the training shards' rows (binned by :meth:`_Shard.bin`) for the fit: their
        :class:`~ranklearn.tree.boosting.BoostingState`, summing over the peers."""
        n = sum(s.binned.shape[1] for s in self.train)
        binned = np.empty((n_features, n), dtype=np.uint8)
        start, ptrs = 0, [np.zeros(1, dtype=np.int64)]
        for s in self.train:
            end = start + s.binned.shape[1]
            binned[:, start:end] = s.binned
            del s.binned  # one shard's copy at a time beside the whole
            ptrs.append(s.ptr[1:] + start)
            start = end
        y = np.concatenate([s.y for s in self.train]) if self.train else np.zeros(0)
        weight = _concat_rows([s.weight for s in self.train])
        position = _concat_rows([s.position for s in self.train])
        # the row-major copy of small nodes is made once the raw features of every shard are freed
        self.state = BoostingState(
            binned, n_bins, y, np.concatenate(ptrs), objective, weight=weight,
            side=None if position is None else {"position": position},
            evals=[s.binned for shards in self.evals for s in shards], learning_rate=learning_rate, limits=limits,
            comm=self.comm,
        )  # fmt: skip

    @_worker_threads
    def tree(
        self, chosen: np.ndarray | None, features: np.ndarray | None
    ) -> tuple[Tree | None, list[list[np.ndarray]], dict | None]:
        """Grow one tree with the other peers, on the ``chosen`` local queries (all when None)
        and ``features``; add it to the training and evaluation scores. Returns the tree, its
        leaf values shrunk (rank 0 only; None elsewhere), and the scores of this worker's
        evaluation shards, per set, and (rank 0 only) the objective's position bias after the tree
        (None without one)."""
        tree = self.state.step(chosen, features)
        scores = iter(self.state.eval_scores)
        per_set = [[next(scores) for _ in shards] for shards in self.evals]
        objective = self.state.objective  # its position bias is the same on every peer (sums over all)
        bias = objective.position_bias() if self.comm.rank == 0 and hasattr(objective, "position_bias") else None
        return (tree if self.comm.rank == 0 else None), per_set, bias


def _concat_rows(parts: list[np.ndarray | None]) -> np.ndarray | None:
    """Per-row vectors of the shards concatenated (None when the fit has none)."""
    return np.concatenate(parts) if parts and parts[0] is not None else None


class WorkerLostError(RuntimeError):
    """A worker holding a partition's state died: the fit cannot go on without its rows."""


class QueryStraddleError(ValueError):
    """A query's rows are in two partitions (every partition must hold whole queries).

    ``query`` is its id, ``partitions`` the two partitions' numbers (from 0, in the order of
    the collection's partitions; with :func:`read_svmlight`, of its files), ``what`` the set
    (``"X"`` or ``"evaluation set 'name'"``)."""

    def __init__(self, query: Any, what: str, partitions: tuple[int, int]) -> None:
        super().__init__(
            f"query {query!r} of {what} straddles partitions {partitions[0]} and {partitions[1]}: every partition "
            "must hold whole queries (repartition at query boundaries, e.g. set_index on the query id)"
        )
        self.query, self.what, self.partitions = query, what, partitions


class WorkerTimeoutError(WorkerLostError):
    """A worker holding a partition's state did not answer within ``worker_timeout`` seconds
    (alive but hung, or far slower than the others): the fit stops instead of waiting."""


async def _settle(calls: list, timeout: float | None) -> tuple[list, set]:
    """Wait on the client's event loop for every call at once: (tasks, those still pending)."""
    tasks = [asyncio.ensure_future(c) for c in calls]
    _, pending = await asyncio.wait(tasks, timeout=timeout)
    for t in pending:
        t.cancel()
    return tasks, pending


def _gather(actors: list, calls: list, timeout: float | None = None, holding: Sequence[str] | None = None) -> list:
    """Results of actor calls made on every actor at once, in order.

    ``timeout`` bounds the wait for all of them together (seconds; None: no bound). One
    hand-over to the client's event loop for all the calls, not one per call. ``holding[i]``
    says what actor ``i`` holds in errors (default ``"partition <i>"``).

    A worker that cannot be reached is named first, then one that did not answer, then one
    that a peer reports silent or gone (peers wait on each other during a tree).

    Raises
    ------
    WorkerLostError
        Naming the worker and what it holds, when a worker cannot be reached or a peer
        reports it gone.
    WorkerTimeoutError
        Naming the worker and what it holds, when it has not answered in ``timeout`` or a
        peer waited on it longer than that.
    """
    if not calls:
        return []
    holding = [f"partition {i}" for i in range(len(actors))] if holding is None else list(holding)
    tasks, pending = sync(actors[0]._io_loop, _settle, calls, timeout)
    errors = [None if t in pending else t.exception() for t in tasks]
    for actor, what, exc in zip(actors, holding, errors):
        if isinstance(exc, (OSError, CommClosedError)):
            raise WorkerLostError(
                f"worker {actor._address} holding {what} was lost ({exc}); its rows, scores and gradients went with it"
            ) from exc
    for actor, what, task in zip(actors, holding, tasks):
        if task in pending:
            raise WorkerTimeoutError(
                f"worker {actor._address} holding {what} did not answer within worker_timeout={timeout:g} s "
                "(hung or overloaded); its rows, scores and gradients are out of reach"
            )
    for exc in errors:
        if isinstance(exc, PeerError):
            kind = WorkerTimeoutError if isinstance(exc, PeerTimeoutError) else WorkerLostError
            raise kind(str(exc)) from exc
    return [t.result() for t in tasks]


@dataclass
class _ShardedSet:
    """A data set held by shards: their offsets, and what the client keeps (labels and query
    boundaries of evaluation sets only)."""

    name: str
    shards: list
    futures: list
    starts: np.ndarray  # first row of each shard, and the total
    query_starts: np.ndarray  # first query of each shard, and the total
    n_features: int
    y_min: float
    y_max: float
    y: np.ndarray | None = None
    ptr: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return int(self.starts[-1])


def _is_frame(X: Any) -> bool:
    return hasattr(X, "to_dask_array") and hasattr(X, "columns")


def _columns_view(X: Any) -> Any:
    """What scikit-learn's feature-name checks read: a Dask DataFrame's empty pandas
    ``_meta`` (same columns), else ``X``."""
    return X._meta if _is_frame(X) else X


def _as_dask_array(a: Any, rows: tuple[int, ...], name: str, what: str) -> da.Array | None:
    """A per-row vector (``name``: y, qid, sample_weight) as a dask array chunked like the rows
    of ``what`` (X, or an evaluation set)."""
    if a is None:
        return None
    if hasattr(a, "to_dask_array"):  # a dask Series
        a = a.to_dask_array(lengths=True)
    if isinstance(a, da.Array):
        if any(np.isnan(n) for n in a.shape):  # unknown chunk sizes (a boolean-masked array): count them
            a = a.compute_chunk_sizes()
        a = a.ravel()
    else:
        a = np.ravel(a)
    if a.shape[0] != sum(rows):  # before from_array, whose own error names no argument
        raise ValueError(f"{name} has {a.shape[0]} values for the {sum(rows)} rows of {what}")
    if not isinstance(a, da.Array):
        a = da.from_array(a, chunks=(rows,))
    return a.rechunk((rows,))


def _shard(
    client: Client,
    name: str,
    X: Any,
    y: Any,
    qid: Any,
    group: Any,
    weight: Any,
    what: str,
    timeout: float | None,
    position: Any = None,
) -> _ShardedSet:
    """Send every partition of ``X`` to an actor on a worker; check that queries do not
    straddle partitions."""
    if _is_frame(X):
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        raise TypeError(f"{what} must be a dask array or dask DataFrame, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"{what} must be 2-D, got shape {X.shape}")
    if np.isnan(X.shape[0]):  # unknown partition sizes (a boolean-masked array): count them
        X = X.compute_chunk_sizes()
    # float32 block by block on the workers: a float64 block is released once converted,
    # instead of every float64 block waiting beside its float32 copy for the shards
    X = X.rechunk({1: -1}).astype(np.float32)
    rows = X.chunks[0]
    if qid is None and group is not None:
        qid = resolve_qid(None, group, sum(rows), what=what)  # query sizes are small: built here
    if qid is None:
        raise ValueError(f"qid is required for {what} (a query id per row), or group= (query sizes)")
    cols = [X, _as_dask_array(y, rows, "y", what), _as_dask_array(qid, rows, "qid", what)]
    optional = [_as_dask_array(weight, rows, "sample_weight", what), _as_dask_array(position, rows, "position", what)]
    cols += [c for c in optional if c is not None]
    # Unoptimized: fusing the graph drops its annotations, and with them where the user asked
    # each partition to be made (dask.annotate(workers=...)); a worker given more than its share
    # can run out of memory. Fusing also repeats work the columns share (a file read per column).
    blocks = [c.to_delayed(optimize_graph=False).ravel() for c in cols]
    # an empty partition (a frame filtered after its split) holds no query: no shard
    kept = [i for i in range(len(rows)) if rows[i] > 0]
    if not kept:
        raise ValueError(f"{what} is empty: need at least one query with documents")
    first_rows = np.concatenate(([0], np.cumsum(rows)))
    per_part = len(cols)
    # One submission for every partition. One per partition sent the graph once each (time
    # grew with the square of the partitions), and right after dask.compute(X, y, qid) the
    # scheduler lost partitions in most fits ("lost dependencies"; Dask warned of keys
    # resubmitted with other dependencies, dask/dask#9888); none in 55 fits since.
    flat = client.compute([c[i] for i in kept for c in blocks])
    parts = [flat[j * per_part : (j + 1) * per_part] for j in range(len(kept))]
    _wait_shards(client, [p[0] for p in parts], timeout, what)
    # each actor on the worker holding its X block: a copy sent to another worker would double it
    holder = client.who_has([p[0] for p in parts])

    def shard_args(p: list) -> list:  # X, y, qid, then weight and position or None for each
        given = iter(p[3:])
        return [*p[:3], *(None if c is None else next(given) for c in optional)]

    futures = [
        client.submit(_Shard, *shard_args(p),
                      f"{what}, partition {i} (rows {first_rows[i]}-{first_rows[i + 1] - 1}; its rows count from 0)",
                      workers=sorted(holder[p[0].key])[:1], allow_other_workers=True, actor=True, pure=False)
        for i, p in zip(kept, parts)
    ]  # fmt: skip
    del parts, flat  # the blocks' data is released once their shard holds it
    _wait_shards(client, futures, timeout, what)
    shards = [f.result() for f in futures]
    info = _gather(shards, [s.describe() for s in shards], timeout)
    owner: dict[Any, int] = {}
    for i, d in zip(kept, info):
        for q in d["qids"].tolist():
            j = owner.setdefault(q, i)
            if j != i:
                raise QueryStraddleError(q, what, (j, i))
    return _ShardedSet(
        name=name,
        shards=shards,
        futures=futures,
        starts=np.concatenate(([0], np.cumsum([d["n_rows"] for d in info]))).astype(np.int64),
        query_starts=np.concatenate(([0], np.cumsum([len(d["qids"]) for d in info]))).astype(np.int64),
        n_features=int(X.shape[1]),
        y_min=min(d["y_min"] for d in info),
        y_max=max(d["y_max"] for d in info),
    )


def _running_on(keys: list, dask_scheduler: Any) -> list[str | None]:
    """On the scheduler: for each key, a worker running it or a task it waits for (None: none)."""
    out = []
    for key in keys:
        todo, seen, worker = [dask_scheduler.tasks.get(key)], set(), None
        while todo and worker is None:
            ts = todo.pop()
            if ts is None or ts.key in seen:
                continue
            seen.add(ts.key)
            worker = ts.processing_on.address if ts.processing_on is not None else None
            todo.extend(ts.dependencies)
        out.append(worker)
    return out


def _wait_shards(client: Client, futures: list, timeout: float | None, what: str) -> None:
    """Wait for the shards of ``what`` to be made (their blocks computed, then the actors),
    at most ``timeout`` seconds together.

    Raises
    ------
    WorkerTimeoutError
        Naming the partition and the worker busy with it, when a shard is not made in time.
    """
    try:
        wait(futures, timeout=timeout)
    except TimeoutError:
        late = [i for i, f in enumerate(futures) if not f.done()]
        running = client.run_on_scheduler(_running_on, [futures[i].key for i in late])
        # the first late partition a worker is busy with (others may only be queued behind it)
        busy = [(i, w) for i, w in zip(late, running) if w is not None]
        i, worker = busy[0] if busy else (late[0], "(none: no worker has started it)")
        client.cancel(futures)  # the fit holds no set yet to cancel them with
        raise WorkerTimeoutError(
            f"worker {worker} making partition {i} of {what} did not finish within worker_timeout={timeout:g} s "
            "(hung or overloaded); the fit stops instead of waiting"
        ) from None


def _per_shard(global_sorted: np.ndarray, starts: np.ndarray) -> list[np.ndarray]:
    """Split sorted global indices into each shard's local ones."""
    cuts = np.searchsorted(global_sorted, starts)
    return [global_sorted[cuts[i] : cuts[i + 1]] - starts[i] for i in range(len(starts) - 1)]

@dataclass
class _PeerSet:
    """The fit's peers (one per worker holding shards, rank order), and where each set's
    shards are among them."""

    actors: list
    futures: list
    holding: list[str]  # what each peer holds, for errors: "partitions 0, 2"
    train_index: list[list[int]]  # each peer's training shards (partition numbers, in order)
    eval_order: list[list[tuple[int, int]]]  # each eval set's shards in order: (peer, index there)

    def local_queries(self, chosen: np.ndarray, query_starts: np.ndarray) -> list[np.ndarray]:
        """Sorted global query numbers as each peer's local ones (its shards' queries
        concatenated in partition order)."""
        per_shard = _per_shard(chosen, query_starts)
        out = []
        for shards in self.train_index:
            offsets = np.cumsum([0] + [query_starts[i + 1] - query_starts[i] for i in shards])
            out.append(np.concatenate([per_shard[i] + o for i, o in zip(shards, offsets)] or [np.empty(0, np.int64)]))
        return out


def _start_peers(client: Client, sets: list[_ShardedSet], timeout: float | None) -> _PeerSet:
    """One :class:`_Peer` on every worker holding a shard of ``sets`` (the training set
    first), joined in a star; rank 0 is the worker of the first training partition."""
    workers: dict[str, int] = {}
    for s in sets:
        for shard in s.shards:
            workers.setdefault(shard._address, len(workers))
    train_index: list[list[int]] = [[] for _ in workers]
    for i, shard in enumerate(sets[0].shards):
        train_index[workers[shard._address]].append(i)
    eval_keys: list[list[list]] = [[[] for _ in sets[1:]] for _ in workers]
    eval_order: list[list[tuple[int, int]]] = []
    for e, s in enumerate(sets[1:]):
        order = []
        for shard, future in zip(s.shards, s.futures):
            p = workers[shard._address]
            order.append((p, len(eval_keys[p][e])))
            eval_keys[p][e].append(future.key)
        eval_order.append(order)
    futures = [
        client.submit(_Peer, [sets[0].futures[i].key for i in train_index[p]], eval_keys[p], workers=[address],
                      allow_other_workers=False, actor=True, pure=False)  # fmt: skip
        for address, p in workers.items()
    ]
    holding = [
        f"partition {idx[0]}" if len(idx) == 1 else f"partitions {', '.join(map(str, idx))}" if idx else "evaluation rows"
        for idx in train_index
    ]
    try:
        _wait_shards(client, futures, timeout, "the peers")
        actors = [f.result() for f in futures]
        addresses = _gather(actors, [a.address() for a in actors], timeout, holding)
        names = [f"worker {address} holding {what}" for address, what in zip(workers, holding)]
        token = secrets.token_bytes(16)
        # a peer gives up on a silent peer a little before the client gives up on the tree, so
        # that the error names the silent worker, not one that was waiting for it
        patience = None if timeout is None else 0.9 * timeout
        _gather(actors, [a.connect(r, addresses, names, token, patience) for r, a in enumerate(actors)], timeout,
                holding)  # fmt: skip
    except BaseException:
        client.cancel(futures)
        raise
    return _PeerSet(actors, futures, holding, train_index, eval_order)


class _OnClient:
    """A Dask estimator's ``client`` parameter, or the current client."""

    client: Client | None

    def _client(self) -> Client:
        return self.client if self.client is not None else default_client()

    def __sklearn_clone__(self) -> Any:
        """``sklearn.base.clone``: the other parameters cloned, the same client (a connection
        cannot be deep-copied)."""
        params = {k: clone(v, safe=False) for k, v in self.get_params(deep=False).items() if k != "client"}
        return type(self)(client=self.client, **params)


class DaskLambdaMART(_OnClient, LambdaMART):
    """:class:`~ranklearn.models.lambdamart.LambdaMART` trained on a Dask cluster.

    Takes every ``LambdaMART`` parameter, plus ``client`` (a ``distributed.Client``; None:
    the current one). ``fit`` takes Dask arrays or Dask DataFrames whose partitions hold
    whole queries (a query split between two partitions is a ``ValueError`` naming it);
    the rows stay on the workers for the whole fit. The workers grow every tree together,
    exchanging node sums and histograms directly over TCP (each worker opens one port, on its
    own address, that the others connect to: rank 0's), and the client receives each finished
    tree. For the same rows in the same order the trees are those of ``LambdaMART`` (up to
    the order of floating-point sums across workers); the same partitions on the same
    workers give the same model bit for bit, whatever the number of threads.

    ``predict`` of a Dask collection is a lazy Dask array (of a NumPy array: a NumPy
    array); :meth:`to_local` gives the plain ``LambdaMART``. ``save`` writes the
    single-machine file (it loads as a ``LambdaMART``).

    Objectives: "lambdarank", "ranknet" and "squared_error" (their gradients depend on each
    query alone), or a user's object (as ``LambdaMART`` takes it), sent to every worker and
    called there on that worker's queries with their side data (``side={"position": ...}``
    when ``fit`` has ``position=``): its gradients must depend on each query's own rows.
    Evaluation sets are sharded too; their scores (one float per row) come to the client
    every tree for the metric.

    ``worker_timeout`` (seconds, default 600; None waits forever) bounds every wait for the
    workers' answers (making and binning a partition, one tree) and every wait of a worker
    for another during a tree: a worker that is alive but does not answer stops the fit
    with :class:`WorkerTimeoutError` naming it and its partitions, instead of a hang; a
    worker that dies stops it with :class:`WorkerLostError` (the fit does not resume). Leave
    room for a fresh worker's first call, which compiles the kernels (up to a minute on a
    busy 2-core machine).
    """

    _parameter_constraints = {
        **LambdaMART._parameter_constraints,
        "client": [Client, None],
        "worker_timeout": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, *, client: Client | None = None, worker_timeout: float | None = 600.0, **params: Any) -> None:
        super().__init__(**params)
        self.client = client
        self.worker_timeout = worker_timeout

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return sorted([*LambdaMART._get_param_names(), "client", "worker_timeout"])

    _remote_rows = "DaskLambdaMART"

    def _check_params(self) -> None:
        objective = self.effective_objective()
        # a user's object runs on every worker on that worker's queries (it must compute query by query)
        if isinstance(objective, str) and objective not in _LOCAL_OBJECTIVES:
            raise ValueError(
                f"objective={objective!r} is not supported by DaskLambdaMART; use one of "
                f"{', '.join(_LOCAL_OBJECTIVES)} (gradients computed query by query)"
            )
        super()._check_params()

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        X: Any,
        y: Any,
        qid: Any = None,
        *,
        group: ArrayLike | None = None,
        sample_weight: Any = None,
        position: Any = None,
        eval_set: Sequence[tuple] | None = None,
        eval_group: Sequence[ArrayLike] | None = None,
        eval_names: Sequence[str] | None = None,
        early_stopping_set: str | None = None,
        callbacks: Sequence[Callback] | None = None,
    ) -> DaskLambdaMART:
        """Fit on Dask collections partitioned by whole queries (see :meth:`LambdaMART.fit`
        for the arguments; ``X`` a Dask array or DataFrame, the per-row vectors (``y``, ``qid``,
        ``sample_weight``, ``position``) Dask arrays or Series chunked like its rows, or NumPy
        arrays). Positions reach the objective on the workers with their rows."""
        self.check_params()
        self._check_required_side(() if position is None else ("position",))
        self._warn_unread_side(None if position is None else {"position": position})
        client = self._client()
        sets: list[_ShardedSet] = []
        try:
            train = _shard(client, "train", X, y, qid, group, sample_weight, "X", self.worker_timeout, position)
            sets.append(train)
            was_fitted = self.__sklearn_is_fitted__()
            validate_data(self, _columns_view(X), reset=True, skip_check_array=True)  # n_features_in_, feature_names_in_
            self.n_features_in_ = train.n_features
            for e in self._shard_eval_sets(client, eval_set, eval_group, eval_names):
                sets.append(e)
            max_label = max(s.y_max for s in sets)  # ERR's top grade: the largest label the fit sees, as fit's
            return self._train(sets, sets[1:], train.n_rows, max_label, early_stopping_set, callbacks, was_fitted)
        finally:
            peers = self.__dict__.pop("_peers", None)
            client.cancel([f for s in sets for f in s.futures] + (peers.futures if peers is not None else []))

    def _shard_eval_sets(self, client, eval_set, eval_group, eval_names) -> list[_ShardedSet]:
        out = []
        for name, Xe, ye, qe, grp in named_eval_sets(eval_set, eval_group, eval_names):
            what = f"evaluation set {name!r}"
            e = _shard(client, name, Xe, ye, qe, grp, None, what, self.worker_timeout)
            out.append(e)  # before any check: fit cancels the actors of every set made
            if e.n_features != self.n_features_in_:
                raise ValueError(f"{what} has {e.n_features} features, the training data has {self.n_features_in_}")
            validate_data(self, _columns_view(Xe), reset=False, skip_check_array=True)
            labels = _gather(e.shards, [s.labels() for s in e.shards], self.worker_timeout)
            e.y = np.concatenate([lab[0] for lab in labels])
            e.ptr = np.concatenate([[0]] + [lab[1][1:] + e.starts[i] for i, lab in enumerate(labels)])
        return out

    def _fit_threads(self, n_rows: int) -> int | None:
        return self.n_jobs  # the client only adds histograms and finds splits

    def _shares_cpus(self) -> bool:
        return False  # the workers do the work: the client counts in no other fit's share of the CPUs

    def _begin_fit(self, data: list[_ShardedSet], evals: list[_ShardedSet]) -> None:
        train = data[0]
        self._objective = self._make_objective()
        # the objectives' prepare reads only the labels' range (checks, ERR's top grade)
        self._objective.prepare(np.array([train.y_min, train.y_max]), np.array([0, 2]))
        self.objective_ = self._objective.get_params()
        self._rng = check_random_state(self.random_state)
        # the rows one machine would sample, gathered from the shards that hold them
        rows = sample_rows(train.n_rows, self.bin_subsample, self._rng.randint(2**31 - 1))
        local = _per_shard(rows, train.starts)
        wait_s = self.worker_timeout
        sample = np.concatenate(_gather(train.shards, [s.rows(r) for s, r in zip(train.shards, local)], wait_s))
        self.bin_mapper_ = BinMapper(self.max_bins, None).fit(sample)
        shards = [s for d in data for s in d.shards]
        missing = _gather(shards, [s.bin(self.bin_mapper_) for s in shards], wait_s)
        self.trained_with_missing_ = any(missing[: len(train.shards)])
        self._peers = _start_peers(self._client(), data, wait_s)
        limits, n_bins = self._growth_limits(), self.bin_mapper_.n_bins_
        _gather(self._peers.actors,
                [p.prepare(self._objective, n_bins, train.n_features, self.learning_rate, limits)
                 for p in self._peers.actors], wait_s, self._peers.holding)  # fmt: skip
        self._train_set, self._eval_sets = train, evals
        self._eval_score_list = [np.zeros(e.n_rows) for e in evals]
        self.position_bias_ = None
        self._bias_history: list[dict[str, np.ndarray] | None] = []  # rank 0's bias after each tree
        self.trees_: list[Tree] = []
        self._predictor = None

    def _fit_step(self, iteration: int) -> None:
        train, peers = self._train_set, self._peers
        chosen, features = draw_subsets(self._rng, int(train.query_starts[-1]), train.n_features,
                                        self.bagging_fraction, self.feature_fraction)  # fmt: skip
        per_peer = [None] * len(peers.actors) if chosen is None else peers.local_queries(chosen, train.query_starts)
        calls = [p.tree(c, features) for p, c in zip(peers.actors, per_peer)]
        try:
            results = _gather(peers.actors, calls, self.worker_timeout, peers.holding)
        except WorkerLostError as exc:
            raise type(exc)(f"tree {iteration}: {exc}; the fit stops (it does not resume)") from exc
        self._finish_tree(results[0][0])
        self._bias_history.append(results[0][2])
        for i, e in enumerate(self._eval_sets):
            parts = [results[p][1][i][k] for p, k in peers.eval_order[i]]
            self._eval_score_list[i] = np.concatenate(parts)

    def _eval_scores(self, index: int) -> np.ndarray:
        return self._eval_score_list[index]

    def _end_fit(self) -> None:
        for name in ("_train_set", "_eval_sets", "_eval_score_list"):
            self.__dict__.pop(name, None)
        super()._end_fit()

    # ------------------------------------------------------------------ predict / persistence
    def predict(self, X: Any, *, qid: Any = None, group: Any = None) -> Any:
        """Scores of the rows of ``X``: a lazy Dask array for a Dask array or DataFrame (one
        block per partition), else as :meth:`LambdaMART.predict`. ``qid``/``group`` are taken
        as every ranker's ``predict`` takes them, and unused: a Dask fit has no ``normalize``."""
        self._check_fitted()
        if not (_is_frame(X) or isinstance(X, da.Array)):
            return super().predict(X, qid=qid, group=group)
        validate_data(self, _columns_view(X), reset=False, skip_check_array=True)
        if _is_frame(X):
            X = X.to_dask_array(lengths=True)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[-1]} features, the model was trained on {self.n_features_in_}")
        local = self.to_local()
        return X.rechunk({1: -1}).map_blocks(_predict_block, local, drop_axis=1, dtype=np.float64)

    def _json_params(self) -> dict[str, Any]:
        params = super()._json_params()
        params.pop("client")  # a connection and a wait, not parameters of the model
        params.pop("worker_timeout")
        return params

    def to_local(self) -> LambdaMART:
        """The plain ``LambdaMART`` with the same trees and fitted attributes (through the
        model file's payload: what ``save`` would write)."""
        return LambdaMART.from_payload(self._to_payload())


def _predict_block(block: np.ndarray, model: LambdaMART) -> np.ndarray:
    X = np.ascontiguousarray(block, dtype=np.float32)
    check_feature_values(X, allow_nan=True)
    return model._predict_raw(X)


# ---------------------------------------------------------------------- neural rankers
def _on_cluster(client: Client, value: Any) -> Any:
    """A Dask collection as the future of its computed value (computed on the workers, never
    on the client); anything else as it is."""
    return client.compute(value) if dask.is_dask_collection(value) else value


class _WorkerRelay:
    """A training callback on the worker that fits: every iteration's results and the end
    message go to the client through the ``distributed.Queue`` ``queue``; once the client sets
    the ``distributed.Event`` ``stop`` (a Ctrl-C), the next iteration's end stops the fit as a
    Ctrl-C stops a local one (the best iteration so far is kept)."""

    def __init__(self, queue: Queue, stop: Event) -> None:
        self.queue, self.stop = queue, stop

    def __call__(self, iteration: int, total: int, results: dict) -> None:
        self.queue.put(["step", iteration, total, results])
        if self.stop.is_set():
            raise KeyboardInterrupt

    def end(self, message: str) -> None:
        self.queue.put(["end", message])


def _fit_on_worker(model: Any, name: str, args: tuple, kwargs: dict) -> tuple[Any, list[tuple[str, type]]]:
    """``model.fit(*args, **kwargs)`` on the worker that runs this task (the futures among the
    arguments arrive as their values), telling the client through the queue ``name`` where it
    runs and how it goes; returns the model, fitted or stopped by the client, and the warnings
    its fit raised (for the client to raise again)."""
    queue, stop = Queue(name), Event(name)
    try:
        queue.put(["start", get_worker().address])
        if stop.is_set():  # stopped before it started: the model stays as it was
            return model, []
        with warnings.catch_warnings(record=True) as caught:
            try:
                model.fit(*args, **kwargs, callbacks=[_WorkerRelay(queue, stop)])
            except KeyboardInterrupt:  # the client's stop: the model holds what a local Ctrl-C keeps
                pass
        return model, [(str(w.message), w.category) for w in caught]
    finally:
        stop.clear()  # the scheduler forgets a cleared event
        queue.close()


def _follow_fit(future: Any, queue: Queue, stop: Event, callbacks: list, timeout: float | None) -> tuple[Any, bool]:
    """Follow the fit of :func:`_fit_on_worker` from the client: call ``callbacks`` with every
    epoch (in this thread), until the fit has ended and told all; returns its result and whether
    the client stopped it (a Ctrl-C, or a callback raising ``KeyboardInterrupt``).

    Raises
    ------
    WorkerLostError
        When the scheduler restarted the fit on another worker (the first one was lost) or gave
        it up (``KilledWorker``): the epochs so far are gone.
    WorkerTimeoutError
        When the worker has said nothing for ``timeout`` seconds.
    Exception
        The fit's own error, raised on the worker; a callback's error (the fit is stopped).
    """
    worker, epoch, stopped, told = None, 0, False, time.monotonic()
    while True:
        try:
            # what the queue holds now, without waiting: a get that times out is an error in the
            # scheduler's log, and a Ctrl-C in a waiting get loses the message it then takes
            messages = queue.get(batch=True)
            if not messages:
                if future.done() and queue.qsize() == 0:  # every message was put before the task returned
                    break
                if timeout is not None and time.monotonic() - told > timeout:
                    where = (f"the worker {worker} has not answered in {timeout:g} s (worker_timeout) after epoch {epoch}"
                             if worker else f"the fit has not started in {timeout:g} s (worker_timeout): its rows are "
                             "still being computed or sent to a worker, or a worker is silent")  # fmt: skip
                    raise WorkerTimeoutError(f"{where}; it stopped")
                time.sleep(0.2)
                continue
            told = time.monotonic()
            for message in messages:
                if message[0] == "start":
                    if worker is not None:
                        raise WorkerLostError(
                            f"the worker {worker} fitting the network was lost after epoch {epoch}; the scheduler "
                            f"started the fit again on {message[1]}, and it stopped (the epochs so far are gone)"
                        )
                    worker = message[1]
                elif message[0] == "step":
                    epoch = message[1]
                    if not stopped:
                        for cb in callbacks:
                            cb(*message[1:])
                else:
                    for cb in callbacks:
                        end = getattr(cb, "end", None)
                        if callable(end):
                            end(message[1])
        except KeyboardInterrupt:
            if stopped:  # a second Ctrl-C: stop waiting (the worker stops at its epoch's end)
                future.cancel()
                raise
            stopped = True  # stop at the end of the worker's epoch, keeping its best so far
            stop.set()
        except BaseException:
            stop.set()
            future.cancel()
            raise
    try:
        try:
            return future.result(), stopped
        except KeyboardInterrupt:  # the fit has ended and told all: keep it, and say the Ctrl-C
            return future.result(), True
    except KilledWorker as exc:
        raise WorkerLostError(f"the fit's worker was lost more often than the scheduler allows ({exc})") from None


class _DaskNeural(_OnClient):
    """A neural ranker's fit on one worker of a Dask cluster (the mixin of :class:`DaskListNet`,
    :class:`DaskRankNet` and :class:`DaskLambdaRank`).

    Stochastic gradient descent steps one batch after another, so the fit runs where it can be
    one process: the rows of every partition (Dask arrays or DataFrames) are computed on the
    workers and gathered on the worker that fits (never on the client), which runs the
    single-machine fit on them. The model is the single-machine one for the same rows in the
    same order (the same batches, seeds and steps). The rows must fit in that worker's memory;
    the other workers hold their partitions until they are sent. Every epoch's evaluation
    results reach the client's callbacks (and ``verbose``'s progress bar), called in the thread
    that called ``fit``. ``worker_timeout`` (seconds, default 600; None waits forever) bounds each
    wait for the worker's next word (the fit's start, each epoch's end): a silent worker stops the
    fit with :class:`WorkerTimeoutError`; a worker lost mid-fit (the scheduler would start the fit
    again elsewhere) stops it with :class:`WorkerLostError`.
    ``predict`` of a Dask collection is a lazy Dask array; ``save`` writes the single-machine
    file; :meth:`to_local` gives the plain ranker.
    """

    _local_class: type

    def fit(
        self,
        X: Any,
        y: Any,
        qid: Any = None,
        *,
        group: Any = None,
        sample_weight: Any = None,
        position: Any = None,
        eval_set: Sequence[tuple] | None = None,
        eval_group: Sequence[Any] | None = None,
        eval_names: Sequence[str] | None = None,
        early_stopping_set: str | None = None,
        callbacks: Sequence[Callback] | None = None,
    ) -> Any:
        """Fit on one worker (see the class); the arguments are those of the single-machine
        ``fit``, any of them a Dask collection. A Ctrl-C on the client (or a callback raising
        ``KeyboardInterrupt``) stops the fit at the end of the worker's epoch and keeps what a
        local fit keeps (its best epoch so far), then raises ``KeyboardInterrupt``; a second
        Ctrl-C stops waiting and keeps nothing (the previous model, if any, stays)."""
        self.check_params()
        client = self._client()
        # the plain ranker in this one's state (its network too: warm_start continues from it)
        model = self._local_class.__new__(self._local_class)
        state = {k: v for k, v in self.__dict__.items() if k not in ("client", "worker_timeout")}
        model.__dict__.update(copy.deepcopy(state))
        model.verbose = False  # its bar would draw on the worker's stderr
        callbacks = list(callbacks or [])
        progress = None
        if self.verbose:
            from ranklearn._progress import TrainingProgress

            progress = TrainingProgress(self._total(), description=self._display_name)
            callbacks.append(progress)
        name = f"ranklearn-fit-{secrets.token_hex(8)}"
        queue, stop = Queue(name, client=client), Event(name, client=client)
        values = [_on_cluster(client, a) for a in (X, y, qid)]
        kwargs = dict(
            group=_on_cluster(client, group),
            sample_weight=_on_cluster(client, sample_weight),
            position=_on_cluster(client, position),
            eval_set=None if eval_set is None else [tuple(_on_cluster(client, a) for a in e) for e in eval_set],
            eval_group=None if eval_group is None else [_on_cluster(client, g) for g in eval_group],
            eval_names=eval_names,
            early_stopping_set=early_stopping_set,
        )
        future = client.submit(_fit_on_worker, model, name, values, kwargs, pure=False)
        try:
            (fitted, caught), stopped = _follow_fit(future, queue, stop, callbacks, self.worker_timeout)
        finally:
            queue.close()
            if future.status in ("finished", "error"):  # else the worker may still be told to stop
                stop.clear()  # the scheduler forgets a cleared event
            if progress is not None:
                progress.close()
        for message, category in caught:  # the fit's warnings, raised here as a local fit raises them
            warnings.warn(message, category, stacklevel=2)
        if fitted.__sklearn_is_fitted__():  # else stopped before its first epoch: the previous model stays
            self.__dict__.update({k: v for k, v in fitted.__dict__.items() if k != "verbose"})  # the fitted state
        if stopped:
            raise KeyboardInterrupt
        return self

    def predict(self, X: Any, *, qid: Any = None, group: Any = None) -> Any:
        """Scores of the rows of ``X``: a lazy Dask array for a Dask array or DataFrame (one
        block per partition, each scored by the single-machine ``predict``; ``qid``, a Dask
        array chunked like the rows, for a model with a per-query ``normalize``: every
        query's rows in one partition), else the single-machine ``predict``."""
        self._check_fitted()
        if not (_is_frame(X) or isinstance(X, da.Array)):
            return super().predict(X, qid=_on_client(qid), group=_on_client(group))
        validate_data(self, _columns_view(X), reset=False, skip_check_array=True)
        if _is_frame(X):
            X = X.to_dask_array(lengths=True)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[-1]} features, the model was trained on {self.n_features_in_}")
        if group is not None:
            raise ValueError("predict of a Dask collection takes its queries as qid= (a Dask array chunked like X's rows)")
        X = X.rechunk({1: -1})
        local = self.to_local()
        if qid is None:
            return X.map_blocks(_predict_block_by, local, drop_axis=1, dtype=np.float64)
        q = qid.to_dask_array(lengths=True) if _is_frame(qid) else da.asarray(qid)
        if q.shape != (X.shape[0],):
            raise ValueError(f"qid has {q.shape[0]} values for {X.shape[0]} rows")
        return da.blockwise(_predict_block_by, "i", X, "ij", local, None, q.rechunk((X.chunks[0],)), "i",
                            dtype=np.float64, concatenate=True)  # fmt: skip

    def _json_params(self) -> dict[str, Any]:
        params = super()._json_params()
        params.pop("client")  # a connection and a wait, not parameters of the model
        params.pop("worker_timeout")
        return params

    def to_local(self) -> Any:
        """The plain ranker with the same network and fitted attributes (through the model
        file's payload: what ``save`` would write)."""
        return self._local_class.from_payload(self._to_payload())


def _on_client(value: Any) -> Any:
    """A Dask collection computed (the queries of rows scored on the client), else ``value``."""
    return value.compute() if dask.is_dask_collection(value) else value


def _predict_block_by(block: np.ndarray, model: Any, qid: np.ndarray | None = None) -> np.ndarray:
    """One partition's scores by the single-machine ``predict`` (its normalizer, its checks)."""
    return model.predict(block, qid=qid)


def _dask_neural(local: type) -> type:
    """``local`` (a neural ranker class) with :class:`_DaskNeural`'s fit and a ``client`` parameter."""

    def __init__(self: Any, *, client: Client | None = None, worker_timeout: float | None = 600.0, **params: Any) -> None:
        local.__init__(self, **params)
        self.client = client
        self.worker_timeout = worker_timeout

    def _get_param_names(cls: type) -> list[str]:
        return sorted([*local._get_param_names(), "client", "worker_timeout"])

    name = f"Dask{local.__name__}"
    return type(name, (_DaskNeural, local), {
        "__init__": __init__,
        "_get_param_names": classmethod(_get_param_names),
        "_local_class": local,
        "_parameter_constraints": {**local._parameter_constraints, "client": [Client, None],
                                   "worker_timeout": [Interval(Real, 0, None, closed="neither"), None]},
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": f":class:`~ranklearn.models.{local.__module__.rsplit('.', 1)[1]}.{local.__name__}` fit on one worker "
        f"of a Dask cluster: takes every ``{local.__name__}`` parameter, plus ``client`` (a ``distributed.Client``; "
        "None: the current one) and ``worker_timeout``. " + " ".join(_DaskNeural.__doc__.split("\n\n", 1)[1].split()),
    })  # fmt: skip


DaskListNet = _dask_neural(ListNet)
DaskRankNet = _dask_neural(RankNet)
DaskLambdaRank = _dask_neural(LambdaRank)


# ---------------------------------------------------------------------- data on the workers
def _read_part(path: str, given: str, dtype: Any) -> tuple[Any, np.ndarray, np.ndarray, bool, np.ndarray | None, np.ndarray | None]:
    """One file's rows (sparse), labels, per-row query ids, whether they came from a LightGBM
    ``.query`` file (then they number the file's own queries from 0), the positions of its
    ``.position`` sidecar and the weights of its ``.weight`` sidecar (None without one);
    ``given``: the file's name as the user gave it, for messages."""
    from ranklearn.data import load_svmlight

    ds = load_svmlight(path, dtype=dtype, sparse=True, warn_weight_file=False)
    qid = np.repeat(np.asarray(ds.query_ids), np.diff(ds.ptr))
    numbered = Path(path + ".query").is_file() and np.array_equal(ds.query_ids, np.arange(len(ds.ptr) - 1))
    weights = weight_path(path)
    weight = read_weight_file(weights, ds.n_samples, given) if weights.is_file() else None
    return ds.X, ds.y, qid, numbered, ds.position, weight


def _part_info(part: tuple) -> tuple[int, int, int, np.dtype, bool, bool]:
    X, _, qid, numbered, position, weight = part
    n_queries = len(np.unique(qid)) if numbered else 0
    return X.shape[0], X.shape[1], n_queries, qid.dtype, position is not None, weight is not None


def _part_X(part: tuple, width: int, dtype: Any) -> np.ndarray:
    X = part[0]
    out = np.zeros((X.shape[0], width), dtype=dtype)
    out[:, : X.shape[1]] = X.toarray()
    return out


def _part_qid(part: tuple, offset: int) -> np.ndarray:
    return part[2] + offset if part[3] else part[2]


class SvmlightParts(tuple):
    """What :func:`read_svmlight` returns: the tuple ``(X, y, qid)`` (unpacked as three dask
    arrays), plus ``position``: the files' ``.position`` sidecars as one int64 dask array
    chunked like the rows (None when the files have none), ``position_files``: the sidecars
    read, in file order (empty without), and ``weight`` and ``weight_files`` likewise for the
    files' ``.weight`` sidecars (float64)."""

    position: da.Array | None
    position_files: list[str]
    weight: da.Array | None
    weight_files: list[str]

    def __new__(
        cls, X: da.Array, y: da.Array, qid: da.Array, position: da.Array | None, position_files: list[str],
        weight: da.Array | None = None, weight_files: list[str] | None = None,
    ) -> SvmlightParts:  # fmt: skip
        parts = super().__new__(cls, (X, y, qid))
        parts.position, parts.position_files = position, position_files
        parts.weight, parts.weight_files = weight, list(weight_files or [])
        return parts

    def __getnewargs__(self) -> tuple:  # pickled with its sidecars
        return (*self, self.position, self.position_files, self.weight, self.weight_files)

    @property
    def X(self) -> da.Array:
        return self[0]

    @property
    def y(self) -> da.Array:
        return self[1]

    @property
    def qid(self) -> da.Array:
        return self[2]


def svmlight_paths(paths_or_glob: str | PathLike[str] | Sequence[str | PathLike[str]]) -> list[str]:
    """The files :func:`read_svmlight` reads, in the order of its partitions (a glob's matches
    sorted), as given.

    Raises
    ------
    FileNotFoundError
        If a path or the pattern matches no file.
    """
    if isinstance(paths_or_glob, (str, PathLike)):
        text = str(paths_or_glob)
        paths = sorted(glob.glob(text)) if glob.has_magic(text) else [text]
    else:
        paths = [str(p) for p in paths_or_glob]
    if not paths:
        raise FileNotFoundError(f"no file matches {str(paths_or_glob)!r}")
    for p in paths:
        if not Path(p).is_file():
            raise FileNotFoundError(f"no such file: {p!r}")
    return paths


def read_svmlight(
    paths_or_glob: str | PathLike[str] | Sequence[str | PathLike[str]],
    *,
    n_features: int | None = None,
    dtype: Any = np.float32,
    client: Client | None = None,
) -> SvmlightParts:
    """Read LETOR / SVMlight files on the workers: one partition per file.

    Each file is parsed by :func:`ranklearn.data.load_svmlight` on a worker (its LightGBM
    ``<file>.query`` is used when its lines have no qid, its ``<file>.position`` and
    ``<file>.weight`` sidecars when they exist); the rows never pass through the client. The paths must be readable by the
    workers (a shared file system).

    Parameters
    ----------
    paths_or_glob : str, path or list of them
        Files, or one glob pattern (``"parts/train-*.txt"``, files in sorted order).
    n_features : int, optional
        Columns of ``X``; default the largest feature id of all files.
    dtype : numpy.float32 or numpy.float64
    client : distributed.Client, optional
        Default: the current client.

    Returns
    -------
    SvmlightParts
        ``X, y, qid = read_svmlight(...)``: dask arrays chunked by file. Query ids from
        ``.query`` files (0, 1, ... in each file) are offset by the queries of the files
        before, so that files never share a query. ``.position`` holds the files' positions
        (int64, chunked alike; None when no file has a sidecar) for
        ``DaskLambdaMART.fit(..., position=)``, ``.position_files`` the sidecars read;
        ``.weight`` and ``.weight_files`` the same of the ``.weight`` sidecars, for
        ``fit(..., sample_weight=)``.

    Raises
    ------
    FileNotFoundError
        If a path or the pattern matches no file.
    DataFormatError
        As the local loader: naming the file, line and token (raised on the client); also a
        file with feature ids beyond ``n_features``, a bad ``.weight`` sidecar, and a file
        without a ``.position`` (``.weight``) sidecar when another file has one.
    """
    client = client if client is not None else default_client()
    paths = svmlight_paths(paths_or_glob)
    # the workers read absolute paths: a scheduler's workers need not share the client's folder
    resolved = [str(Path(p).resolve()) for p in paths]
    absolute = dict(zip(resolved, paths))
    absolute.update({str(sidecar_path(r)): str(sidecar_path(p)) for r, p in zip(resolved, paths)})
    absolute.update({str(weight_path(r)): str(weight_path(p)) for r, p in zip(resolved, paths)})
    parts = client.map(_read_part, resolved, paths, dtype=dtype, pure=False)
    try:
        info = client.gather(client.map(_part_info, parts))  # a bad file raises its DataFormatError here
    except DataFormatError as exc:  # named as the user wrote it
        if exc.path in absolute:
            raise DataFormatError(exc.reason, path=absolute[exc.path], line=exc.line, token=exc.token) from None
        raise
    widths = [i[1] for i in info]
    width = max(widths) if n_features is None else int(n_features)
    if width < max(widths):  # in the local loader's words, the largest id as the token
        worst = int(np.argmax(widths))
        raise DataFormatError(f"feature id exceeds n_features={width}", path=paths[worst], token=str(widths[worst]))
    sidecars: dict[str, list[str]] = {}
    for index, (what, path_of) in ((4, ("position", sidecar_path)), (5, ("weight", weight_path))):
        present = [i[index] for i in info]
        if any(present) and not all(present):  # for some rows only: refused, not dropped
            missing, there = present.index(False), present.index(True)
            raise DataFormatError(
                f"no {what} file {str(path_of(paths[missing]))!r} while {str(path_of(paths[there]))!r} "
                f"exists: give every file its {what}s or none",
                path=paths[missing],
            )
        sidecars[what] = [str(path_of(p)) for p in paths] if all(present) else []
    offsets = np.concatenate(([0], np.cumsum([i[2] for i in info])))
    qdtype = np.result_type(*[i[3] for i in info])
    Xs, ys, qs, ps, ws = [], [], [], [], []
    for part, (n, *_), offset in zip(parts, info, offsets):
        Xs.append(da.from_delayed(dask.delayed(_part_X)(part, width, dtype), shape=(n, width), dtype=dtype))
        ys.append(da.from_delayed(dask.delayed(operator.itemgetter(1))(part), shape=(n,), dtype=np.float64))
        qs.append(da.from_delayed(dask.delayed(_part_qid)(part, int(offset)), shape=(n,), dtype=qdtype))
        if sidecars["position"]:
            ps.append(da.from_delayed(dask.delayed(operator.itemgetter(4))(part), shape=(n,), dtype=np.int64))
        if sidecars["weight"]:
            ws.append(da.from_delayed(dask.delayed(operator.itemgetter(5))(part), shape=(n,), dtype=np.float64))
    return SvmlightParts(da.concatenate(Xs), da.concatenate(ys), da.concatenate(qs), da.concatenate(ps) if ps else None,
                         sidecars["position"], da.concatenate(ws) if ws else None, sidecars["weight"])  # fmt: skip
