"""The rows side of tree growth: who owns the data, and the histograms of nodes.

:class:`HistogramBuilder` sits between :class:`~ranklearn.tree.grower.TreeGrower` and the
numba kernels. It owns the binned data, the gradients and hessians and the partition of the
rows among the tree's nodes; the grower only asks for the sums of the root, the histograms
of some nodes, and the application of a split to a node, and never sees a row. A
distributed trainer extends it: each worker partitions and histograms its own rows, and
:class:`~ranklearn.tree.allreduce_builder.AllreduceHistogramBuilder` answers with the sums over
all workers (histograms and node sums are sums over rows, so they add). Histogram subtraction
runs where the summed histograms are, in :meth:`HistogramBuilder.children_histograms`.

Node ids are the grower's: the root is 0 and a split names the ids of its two children.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from ranklearn.tree.binning import MISSING_BIN, gather_columns
from ranklearn.tree.histogram import build_histogram, new_histogram, subtract_histogram

NodeSums = tuple[float, float, int, float]
"""(sum of gradients, sum of hessians, number of rows, sum of squared gradients) of a node (the
last for RankLib's leaf order, :class:`~ranklearn.tree.grower.TreeGrower`'s ``leaf_order``)."""

#: a node with fewer rows than this fraction of the data is histogrammed from its rows gathered
#: out of the row-major copy: its rows lie far apart, and a row's features share a few cache
#: lines there, one line per feature in the feature-major matrix (measured crossover: 4-5%,
#: 200,000 x 136)
ROW_MAJOR_FRACTION = 0.04


@njit(cache=True)
def _partition(
    binned: np.ndarray,
    samples: np.ndarray,
    start: int,
    end: int,
    feature: int,
    bin_threshold: int,
    missing_left: bool,
    buf: np.ndarray,
    grad: np.ndarray,
    hess: np.ndarray,
) -> tuple[int, float, float, float, float, float, float]:
    """Stable in-place partition of ``samples[start:end]``. Returns where the right part starts,
    the gradient and hessian sums of the left and right rows, and the sums of their squared
    gradients (left, right), each summed in row order (as :func:`_sums` does), in the same
    pass."""
    col = binned[feature]
    nl = 0
    nr = 0
    gl = hl = gr = hr = ql = qr = 0.0
    for r in range(start, end):
        i = samples[r]
        b = col[i]
        if b == MISSING_BIN:
            go_left = missing_left
        else:
            go_left = b <= bin_threshold
        # no branch on the split, which is as good as random: the row is written to both
        # places (samples[start + nl] was read already) and each side adds 0.0 when it is
        # not the row's, which leaves its sum as it is (a sum from +0.0 is never -0.0)
        samples[start + nl] = i
        buf[nr] = i
        g = grad[i]
        h = hess[i]
        gl += g if go_left else 0.0
        hl += h if go_left else 0.0
        gr += 0.0 if go_left else g
        hr += 0.0 if go_left else h
        ql += g * g if go_left else 0.0
        qr += 0.0 if go_left else g * g
        nl += go_left
        nr += not go_left
    for r in range(nr):
        samples[start + nl + r] = buf[r]
    return start + nl, gl, hl, gr, hr, ql, qr


@njit(cache=True)
def row_major_rows(
    binned_rows: np.ndarray, rows: np.ndarray, grad: np.ndarray, hess: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(binned, samples, grad, hess)`` of a small node's ``rows`` made contiguous out of the
    row-major copy (see ``ROW_MAJOR_FRACTION``): the same rows in the same order, so the same
    histogram sums."""
    m = rows.shape[0]
    g = np.empty(m)
    h = np.empty(m)
    for r in range(m):
        g[r] = grad[rows[r]]
        h[r] = hess[rows[r]]
    return gather_columns(binned_rows, rows), np.arange(m, dtype=np.int32), g, h


@njit(cache=True)
def _sums(samples: np.ndarray, grad: np.ndarray, hess: np.ndarray) -> tuple[float, float, float]:
    """Sums of the gradients, hessians and squared gradients of ``samples``, in row order."""
    g = 0.0
    h = 0.0
    q = 0.0
    for i in samples:
        g += grad[i]
        h += hess[i]
        q += grad[i] * grad[i]
    return g, h, q


class HistogramBuilder:
    """Histograms and row partition of one tree, on the rows held in this process.

    Parameters
    ----------
    binned : uint8 (n_features, n_samples)
        Feature-major binned data.
    n_bins : int64 (n_features,)
        Value bins of each feature: histograms are written for those and the missing bin.
    grad, hess : float64 (n_samples,)
        Gradients and hessians of the iteration.
    samples : int, optional
        Rows the tree is fitted on (query bagging), sorted; all rows by default.
    features : int64, optional
        Features histograms are built for (feature subsampling), sorted; all by default.
    binned_rows : uint8 (n_samples, n_features), optional
        The same bins row-major (``binned.T``, C-contiguous), for the histograms of small
        nodes (``ROW_MAJOR_FRACTION``); the same sums, read faster. None: ``binned`` only.

    Notes
    -----
    Each node owns a contiguous range of a sample-index array; a split partitions the range
    in place, stably, so every node's rows stay in ascending order and histogram sums are
    accumulated in row order: the results are the same whatever the thread count.
    """

    def __init__(
        self,
        binned: np.ndarray,
        n_bins: np.ndarray,
        grad: np.ndarray,
        hess: np.ndarray,
        *,
        samples: np.ndarray | None = None,
        features: np.ndarray | None = None,
        binned_rows: np.ndarray | None = None,
    ) -> None:
        self.binned = binned
        self.n_bins = np.asarray(n_bins, dtype=np.int64)
        self.binned_rows = binned_rows
        self.grad = grad
        self.hess = hess
        n = binned.shape[1]
        self.samples = np.arange(n, dtype=np.int32) if samples is None else np.array(samples, dtype=np.int32)
        self.features = (
            np.arange(binned.shape[0], dtype=np.int64)
            if features is None
            else np.asarray(features, dtype=np.int64)
        )
        self._buf = np.empty(self.samples.shape[0], dtype=np.int32)
        self._ranges: dict[int, tuple[int, int]] = {}

    @property
    def n_features(self) -> int:
        """Width of a histogram (all features, built or not)."""
        return self.binned.shape[0]

    def root(self) -> NodeSums:
        """Start a tree: every row in node 0. Returns the root's sums."""
        self._ranges = {0: (0, self.samples.shape[0])}
        g, h, q = _sums(self.samples, self.grad, self.hess)
        return g, h, self.samples.shape[0], q

    def split(
        self, node: int, feature: int, bin_threshold: int, missing_left: bool, left: int, right: int
    ) -> tuple[NodeSums, NodeSums]:
        """Send the rows of ``node`` to ``left`` (bin <= ``bin_threshold``; missing values as
        ``missing_left`` says) and ``right``. Returns the sums of the two children."""
        start, end = self._ranges.pop(node)
        mid, gl, hl, gr, hr, ql, qr = _partition(
            self.binned, self.samples, start, end, feature, bin_threshold, missing_left, self._buf, self.grad, self.hess
        )
        self._ranges[left] = (start, mid)
        self._ranges[right] = (mid, end)
        return (gl, hl, mid - start, ql), (gr, hr, end - mid, qr)

    def histograms(self, nodes: Sequence[int]) -> list[np.ndarray]:
        """Histograms of ``nodes`` from their rows, float64 (n_features, 256, 3) each.

        Only the builder's ``features`` are written, and of those the value bins and the missing
        bin (the cells split finding reads); the other cells are garbage.
        This is the one place rows are summed into histograms: the call a distributed
        builder sends to its workers, summing what they return.
        """
        out = []
        for node in nodes:
            hist = new_histogram(self.n_features)
            build_histogram(*self._node_rows(node), self.features, self.n_bins, hist)
            out.append(hist)
        return out

    def _node_rows(self, node: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(binned, samples, grad, hess)`` for a histogram of ``node``'s rows."""
        start, end = self._ranges[node]
        rows = self.samples[start:end]
        if self.binned_rows is not None and rows.shape[0] < ROW_MAJOR_FRACTION * self.binned.shape[1]:
            return row_major_rows(self.binned_rows, rows, self.grad, self.hess)
        return self.binned, rows, self.grad, self.hess

    def children_histograms(
        self, parents: Sequence[np.ndarray], smaller: Sequence[int]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Histograms of the two children of each just-split parent.

        ``smaller[i]`` is the child of ``parents[i]`` with fewer rows: it is built from the
        rows (all of them in one :meth:`histograms` call, so a distributed builder makes one
        round trip per batch), and its sibling is the parent minus it, written into the
        parent's memory. Returns ``(smaller, larger)`` histograms per parent; the parent
        histograms must not be used afterwards.
        """
        built = self.histograms(smaller)
        pairs = []
        for parent, small in zip(parents, built):
            subtract_histogram(parent, small, self.features, self.n_bins, parent)
            pairs.append((small, parent))
        return pairs

    def leaf_rows(self, leaves: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Rows grouped by leaf: ``(samples, ranges)``, ``ranges[i] = (leaves[i], start, end)``
        in ``samples`` (the rows of ``leaves[i]``), to update training scores without walking
        the tree."""
        ranges = np.array([(n, *self._ranges[n]) for n in leaves], dtype=np.int64).reshape(-1, 3)
        return self.samples, ranges
