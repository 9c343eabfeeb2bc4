"""Feature binning: map each feature to at most ``max_bins`` quantile bins, NaN to a bin of its own.

Bin ``b`` of a feature holds the values ``x`` with ``edges[b-1] < x <= edges[b]``; every edge is
a value seen in the data (a float32), so a split "bin <= t" is exactly "x <= edges[t]" on raw
float32 values, in ranklearn's predictor and in RankLib's (which compares floats the same way).
The binned matrix is feature-major (n_features, n_samples) uint8, the layout histogram
building reads fastest.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import ArrayLike

from ranklearn._compilation import kernel, prange

MISSING_BIN = 255  #: bin index of NaN, for every feature
N_HIST_BINS = 256  #: histogram slots per feature: up to 255 value bins plus the missing bin
_ROW_BLOCK = 2048  # rows binned per parallel task: keeps the block of X in cache


@kernel(cache=True)
def _sorted_edges(v: np.ndarray, max_bins: int) -> np.ndarray:
    """Upper edges (all but the last bin) of one feature's quantile bins, from its sorted
    non-NaN values."""
    if v.shape[0] == 0:
        return np.empty(0, dtype=np.float64)
    # distinct values and how many values are at most each
    n_distinct = 1
    for i in range(1, v.shape[0]):
        if v[i] != v[i - 1]:
            n_distinct += 1
    distinct = np.empty(n_distinct, dtype=np.float64)
    cum = np.empty(n_distinct, dtype=np.int64)
    d = 0
    distinct[0] = v[0]
    for i in range(1, v.shape[0]):
        if v[i] != v[i - 1]:
            cum[d] = i
            d += 1
            distinct[d] = v[i]
    cum[d] = v.shape[0]
    return _edges_from_counts(distinct, cum, max_bins)


@kernel(cache=True)
def _edges_from_counts(distinct: np.ndarray, cum: np.ndarray, max_bins: int) -> np.ndarray:
    """Upper edges of one feature's quantile bins from its sorted distinct values and, for each,
    how many values are at most it (``cum``, the last is the number of values)."""
    n_distinct = distinct.shape[0]
    if n_distinct <= max_bins:
        return distinct[:-1].copy()
    # Weighted quantiles over distinct values: a value carrying much mass gets a bin of its own.
    edges = np.empty(max_bins - 1, dtype=np.float64)
    n_edges = 0
    total = cum[n_distinct - 1]
    j = 0
    for b in range(1, max_bins):
        target = b * total / max_bins
        while j < n_distinct - 1 and cum[j] < target:
            j += 1
        if j >= n_distinct - 1:
            break
        if n_edges == 0 or distinct[j] > edges[n_edges - 1]:
            edges[n_edges] = distinct[j]
            n_edges += 1
    return edges[:n_edges].copy()


@kernel(parallel=True, cache=True)
def _fit_edges(columns: np.ndarray, max_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Edges of every feature; ``columns`` is (n_features, n_rows), each row sorted with NaN
    last (as ``np.sort`` leaves it). Returns (edges, n_edges)."""
    n_features = columns.shape[0]
    out = np.full((n_features, max_bins - 1), np.inf)
    n_edges = np.zeros(n_features, dtype=np.int64)
    for f in prange(n_features):
        col = columns[f]
        n = col.shape[0]
        while n > 0 and np.isnan(col[n - 1]):
            n -= 1
        e = _sorted_edges(col[:n], max_bins)
        n_edges[f] = e.shape[0]
        out[f, : e.shape[0]] = e
    return out, n_edges


def _sort_rows(a: np.ndarray) -> None:
    """Sort every row of ``a`` in place, NaN last, on numba's thread count: numpy's SIMD sort
    is several times faster than numba's, and releases the GIL, so threads sort blocks of rows."""
    from numba import get_num_threads  # (binning imports no numba: the predictor's constant is here)

    n_threads = min(get_num_threads(), a.shape[0])
    if n_threads <= 1:
        a.sort(axis=1)
        return
    bounds = np.linspace(0, a.shape[0], n_threads + 1).astype(np.int64)
    with ThreadPoolExecutor(n_threads) as pool:
        list(pool.map(lambda k: a[bounds[k] : bounds[k + 1]].sort(axis=1), range(n_threads)))


@kernel(parallel=True, cache=True)
def gather_columns(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``X[rows].T`` as a contiguous (n_features, len(rows)) array, in one copy."""
    out = np.empty((X.shape[1], rows.shape[0]), dtype=X.dtype)
    for r in prange(rows.shape[0]):
        i = rows[r]
        for f in range(X.shape[1]):
            out[f, r] = X[i, f]
    return out


@kernel(parallel=True, cache=True)
def has_missing(binned: np.ndarray) -> bool:
    """Whether any value of a binned matrix is missing (no temporary the size of the data)."""
    found = 0
    for f in prange(binned.shape[0]):
        col = binned[f]
        for i in range(col.shape[0]):
            if col[i] == MISSING_BIN:
                found += 1
                break
    return found > 0


@kernel(parallel=True, cache=True)
def _bin_rows(X: np.ndarray, edges: np.ndarray, n_edges: np.ndarray, out: np.ndarray) -> None:
    """Bin row-major ``X`` (n, F) into feature-major ``out`` (F, n), block by block of rows."""
    n, n_features = X.shape
    n_blocks = (n + _ROW_BLOCK - 1) // _ROW_BLOCK
    for blk in prange(n_blocks):
        lo = blk * _ROW_BLOCK
        hi = min(n, lo + _ROW_BLOCK)
        # a feature's edges padded with +inf to 256: eight fixed halving steps, no branch to mispredict
        ef = np.empty(N_HIST_BINS)
        for f in range(n_features):
            ne = n_edges[f]
            for k in range(N_HIST_BINS):
                ef[k] = edges[f, k] if k < ne else np.inf
            for i in range(lo, hi):
                x = X[i, f]
                # number of edges strictly below x (NaN is below none: fixed below)
                a = 0
                step = N_HIST_BINS // 2
                while step > 0:
                    if ef[a + step - 1] < x:
                        a += step
                    step >>= 1
                out[f, i] = MISSING_BIN if np.isnan(x) else a


@kernel(parallel=True, cache=True)
def _value_ids(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each value's rank among its feature's distinct non-NaN values (-1 for NaN), feature-major
    (n_features, n_rows) int32, and the distinct values, (n_features, most distinct) float32 (as
    ``X``: twice the memory of ``X`` in all)."""
    n, n_features = X.shape
    ids = np.empty((n_features, n), dtype=np.int32)
    n_distinct = np.zeros(n_features, dtype=np.int64)
    for f in prange(n_features):
        col = X[:, f]
        finite = np.flatnonzero(~np.isnan(col))
        ids[f, :] = -1
        order = finite[np.argsort(col[finite])]
        d = -1
        for r in range(order.shape[0]):
            if r == 0 or col[order[r]] != col[order[r - 1]]:
                d += 1
            ids[f, order[r]] = d
        n_distinct[f] = d + 1
    distinct = np.empty((n_features, max(1, n_distinct.max())), dtype=X.dtype)
    for f in prange(n_features):
        for i in range(n):
            if ids[f, i] >= 0:
                distinct[f, ids[f, i]] = X[i, f]
    return ids, distinct, n_distinct


@kernel(parallel=True, cache=True)
def _sample_bins(ids, distinct, n_distinct, rows, max_bins):  # fmt: skip
    """Edges, edge counts and binned matrix of ``X[rows]`` from :func:`_value_ids` of ``X``."""
    n_features, m = ids.shape[0], rows.shape[0]
    times = np.zeros(ids.shape[1], dtype=np.int64)  # how often the sample holds each row
    for r in range(m):
        times[rows[r]] += 1
    edges = np.full((n_features, max_bins - 1), np.inf)
    n_edges = np.zeros(n_features, dtype=np.int64)
    binned = np.empty((n_features, m), dtype=np.uint8)
    for f in prange(n_features):
        nd, col = n_distinct[f], ids[f]
        count = np.zeros(nd, dtype=np.int64)
        for i in range(col.shape[0]):
            if col[i] >= 0:
                count[col[i]] += times[i]
        present = 0
        for d in range(nd):
            present += count[d] > 0
        # the sample's distinct values and cumulative counts, as _sorted_edges finds them in sorted values
        values, cum = np.empty(present), np.empty(present, dtype=np.int64)
        j, total = 0, 0
        for d in range(nd):
            if count[d] > 0:
                total += count[d]
                values[j], cum[j] = distinct[f, d], total
                j += 1
        e = _edges_from_counts(values, cum, max_bins) if present > 0 else np.empty(0)
        n_edges[f] = e.shape[0]
        edges[f, : e.shape[0]] = e
        bin_of = np.empty(max(1, nd), dtype=np.uint8)  # edges strictly below each distinct value
        a = 0
        for d in range(nd):
            while a < e.shape[0] and e[a] < distinct[f, d]:
                a += 1
            bin_of[d] = a
        for r in range(m):
            v = col[rows[r]]
            binned[f, r] = MISSING_BIN if v < 0 else bin_of[v]
    return edges, n_edges, binned


class SampleBinner:
    """Bin mappers of row samples of one matrix (with repeated rows, as bagging draws them), the
    same as :meth:`BinMapper.fit_transform` on ``X[rows]`` with all rows, in O(n) a feature:
    ``X``'s values are sorted once, a sample's only counted.

    Parameters
    ----------
    X : array (n_samples, n_features)
    max_bins : int
    """

    def __init__(self, X: ArrayLike, max_bins: int) -> None:
        self.max_bins = int(max_bins)
        self._ids, self._distinct, self._n_distinct = _value_ids(np.ascontiguousarray(X, dtype=np.float32))

    def fit_transform(self, rows: np.ndarray, mapper: BinMapper) -> np.ndarray:
        """Fit ``mapper`` (whose ``max_bins`` is this binner's) on ``X[rows]`` and return it binned."""
        if mapper.max_bins != self.max_bins:
            raise ValueError(f"mapper has max_bins={mapper.max_bins}, the binner {self.max_bins}")
        rows = np.asarray(rows, dtype=np.int64)
        mapper.edges_, mapper.n_edges_, binned = _sample_bins(
            self._ids, self._distinct, self._n_distinct, rows, self.max_bins
        )
        return binned


def sample_rows(n: int, subsample: int | None, random_state=None) -> np.ndarray:
    """Sorted rows of ``n`` that :meth:`BinMapper.fit` finds the edges on: ``subsample`` of
    them drawn with ``random_state``, or all when ``subsample`` is None or at least ``n``.

    A distributed fit gathers these rows from its workers and fits a mapper on them with
    ``subsample=None``: the same edges as one machine.
    """
    if subsample is not None and n > subsample:
        rng = np.random.default_rng(random_state)
        return np.sort(rng.choice(n, size=subsample, replace=False))
    return np.arange(n)


class BinMapper:
    """Quantile binning fitted on training data and applied to any later data.

    Parameters
    ----------
    max_bins : int
        Bins per feature for non-missing values, 2..255.
    subsample : int or None
        Rows used to find the edges (None: all rows).
    random_state : int, Generator or None
        Seed of the subsample.

    Attributes
    ----------
    edges_ : ndarray of float64, (n_features, max_bins - 1)
        Upper edge of each bin, padded with +inf.
    n_edges_ : ndarray of int64, (n_features,)
        Number of real edges; feature ``f`` has ``n_edges_[f] + 1`` value bins.
    """

    def __init__(self, max_bins: int = 255, subsample: int | None = 200_000, random_state=None):
        if not 2 <= int(max_bins) <= 255:
            raise ValueError(f"max_bins must be between 2 and 255, got {max_bins}")
        self.max_bins = int(max_bins)
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X: ArrayLike) -> BinMapper:
        """Find the bin edges of every feature of ``X`` (n_samples, n_features)."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        rows = sample_rows(X.shape[0], self.subsample, self.random_state)
        columns = gather_columns(X, rows)
        _sort_rows(columns)
        self.edges_, self.n_edges_ = _fit_edges(columns, self.max_bins)
        return self

    def on_columns(self, columns: np.ndarray, n_features: int) -> BinMapper:
        """This mapper, fitted on ``X[:, columns]``, for whole rows of ``n_features`` columns: the
        other columns get no edge (one bin), as a constant feature (a copy)."""
        out = BinMapper(self.max_bins, self.subsample, self.random_state)
        out.edges_ = np.full((n_features, self.edges_.shape[1]), np.inf)
        out.n_edges_ = np.zeros(n_features, dtype=self.n_edges_.dtype)
        out.edges_[columns] = self.edges_
        out.n_edges_[columns] = self.n_edges_
        return out

    @property
    def n_bins_(self) -> np.ndarray:
        """Number of value bins of each feature (the missing bin not counted)."""
        return self.n_edges_ + 1

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Bin ``X`` into a feature-major uint8 array (n_features, n_samples)."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != self.edges_.shape[0]:
            raise ValueError(
                f"X has {X.shape[-1] if X.ndim else 0} features, the bin mapper was fitted "
                f"on {self.edges_.shape[0]}"
            )
        out = np.empty((X.shape[1], X.shape[0]), dtype=np.uint8)
        _bin_rows(X, self.edges_, self.n_edges_, out)
        return out

    def fit_transform(self, X: ArrayLike) -> np.ndarray:
        """Fit the edges on ``X`` and bin it."""
        return self.fit(X).transform(X)

    def threshold(self, feature: int, bin_threshold: int) -> float:
        """Raw threshold of the split "bin <= bin_threshold": the bin's upper edge."""
        return float(self.thresholds(np.array([feature]), np.array([bin_threshold]))[0])

    def thresholds(self, features: np.ndarray, bin_thresholds: np.ndarray) -> np.ndarray:
        """:meth:`threshold` of many splits at once, float64 (a tree's splits in one call)."""
        features = np.asarray(features, dtype=np.int64)
        bin_thresholds = np.asarray(bin_thresholds, dtype=np.int64)
        # past the last edge every non-missing value goes left: the largest float32 keeps the file finite
        beyond = bin_thresholds >= self.n_edges_[features]
        edges = self.edges_[features, np.minimum(bin_thresholds, self.edges_.shape[1] - 1)]
        return np.where(beyond, float(np.finfo(np.float32).max), edges)

    def to_dict(self) -> dict:
        """JSON-friendly edges (only the real ones) and settings."""
        return {
            "max_bins": self.max_bins,
            "edges": [self.edges_[f, : self.n_edges_[f]].tolist() for f in range(len(self.n_edges_))],
        }

    @classmethod
    def from_dict(cls, d: dict) -> BinMapper:
        """Rebuild a fitted mapper from :meth:`to_dict` output."""
        m = cls(max_bins=int(d["max_bins"]))
        edges = d["edges"]
        m.edges_ = np.full((len(edges), m.max_bins - 1), np.inf)
        m.n_edges_ = np.array([len(e) for e in edges], dtype=np.int64)
        for f, e in enumerate(edges):
            m.edges_[f, : len(e)] = e
        return m
