"""A histogram builder whose sums run over the rows of several processes.

Data-parallel tree growth, as LightGBM's distributed learner does it: every process holds
some of the rows (whole queries, so its lambdas are its own), and every process runs the same
:class:`~ranklearn.tree.grower.TreeGrower`. The grower asks its builder for node sums and
histograms; :class:`AllreduceHistogramBuilder` computes them on the local rows and returns
their sum over all processes (``comm.allreduce``). Because every process receives the same
sums, every process finds the same splits in the same order and ends with the same tree, with
no coordinator in the loop: two small messages per split (the children's sums, then the
smaller child's histogram), each one exchange with the other processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numba import njit

from ranklearn.tree.binning import MISSING_BIN
from ranklearn.tree.histogram import build_histogram, new_histogram
from ranklearn.tree.histogram_builder import HistogramBuilder, NodeSums

__all__ = ["AllreduceHistogramBuilder", "pack_histogram", "packed_size", "unpack_histogram"]


class Comm(Protocol):
    """What the builder needs of a communicator (:class:`ranklearn.collective.StarComm`)."""

    def allreduce(self, values: np.ndarray) -> np.ndarray: ...


def packed_size(features: np.ndarray, n_bins: np.ndarray) -> int:
    """Values of a packed histogram (:func:`pack_histogram`) of ``features``."""
    return int((np.asarray(n_bins)[features] + 1).sum()) * 3


@njit(cache=True)
def pack_histogram(hist: np.ndarray, features: np.ndarray, n_bins: np.ndarray, out: np.ndarray, start: int) -> None:
    """Write the cells split finding reads (:func:`ranklearn.tree.splitting.find_best_split`)
    into ``out[start:]``: for each feature in order, its value bins, then the missing bin, three
    values each. Only these travel between processes."""
    k = start
    for f in features:
        for b in range(n_bins[f]):
            for c in range(3):
                out[k] = hist[f, b, c]
                k += 1
        for c in range(3):
            out[k] = hist[f, MISSING_BIN, c]
            k += 1


@njit(cache=True)
def unpack_histogram(packed: np.ndarray, start: int, features: np.ndarray, n_bins: np.ndarray, hist: np.ndarray) -> None:
    """The inverse of :func:`pack_histogram`: ``packed[start:]`` into ``hist``'s cells."""
    k = start
    for f in features:
        for b in range(n_bins[f]):
            for c in range(3):
                hist[f, b, c] = packed[k]
                k += 1
        for c in range(3):
            hist[f, MISSING_BIN, c] = packed[k]
            k += 1


class AllreduceHistogramBuilder(HistogramBuilder):
    """:class:`HistogramBuilder` over this process's rows, answering with sums over every
    process's rows.

    Parameters
    ----------
    comm
        Has ``allreduce(float64 vector)``, replacing the vector by its sum over the processes,
        the same bits on every process (:class:`ranklearn.collective.StarComm`).
    binned, n_bins, grad, hess, samples, features, binned_rows
        As :class:`HistogramBuilder`, for the local rows; ``features`` must be the same on
        every process. ``binned`` may have no rows.
    pool : float64 (k, n_features, 256, 3), optional
        Memory for the summed histograms, handed out in turn (a tree needs at most
        ``num_leaves``: the root's and one per split; the larger children are written into
        their parents'). A trainer passes the same pool to every tree's builder: fresh pages
        for every histogram cost more than the sums where the allocator returns freed memory
        to the system at once (Dask workers set ``MALLOC_TRIM_THRESHOLD_``). New histograms
        once it is used up, or without one.

    Notes
    -----
    Grow with :meth:`TreeGrower.from_builder <ranklearn.tree.grower.TreeGrower.from_builder>`
    (the fused kernel of a local grower finds splits before histograms could be summed).
    Every process must make the same calls in the same order, which the same grower on the
    same sums does. Leaf rows (:meth:`leaf_rows`) are the local ones.

    One exchange per split: the parent's summed histogram already counts the rows on each
    side (its count channel holds whole numbers, exact in float64), so :meth:`split` knows
    which child is smaller before any exchange, and sends the children's local sums together
    with the smaller child's local histogram; the grower's next :meth:`children_histograms`
    gets that sum without another exchange. The root's sums and histogram travel together
    too. (After the last split of a tree that histogram is made for nothing: one small node.)
    """

    def __init__(
        self,
        comm: Comm,
        binned: np.ndarray,
        n_bins: np.ndarray,
        grad: np.ndarray,
        hess: np.ndarray,
        *,
        samples: np.ndarray | None = None,
        features: np.ndarray | None = None,
        binned_rows: np.ndarray | None = None,
        pool: np.ndarray | None = None,
    ) -> None:
        super().__init__(binned, n_bins, grad, hess, samples=samples, features=features, binned_rows=binned_rows)
        self.comm = comm
        self._size = packed_size(self.features, self.n_bins)
        self._pool, self._used = pool, 0
        self._local = new_histogram(self.n_features)  # each local histogram, until it is packed
        self._message = np.empty(8 + self._size)  # the children's sums and a packed histogram
        self._hists: dict[int, np.ndarray] = {}  # summed histograms handed to the grower, by node
        self._counts: dict[int, int] = {}  # rows of each node over all processes
        self._ahead: dict[int, np.ndarray] = {}  # summed histograms made before the grower asks
        self._sibling: dict[int, int] = {}

    def _exchange(self, sums: tuple, node: int) -> np.ndarray:
        """Sum ``sums`` and ``node``'s local histogram over the processes: returns the summed
        ``sums``; the summed histogram waits in ``_ahead`` for the grower."""
        sums = np.asarray(sums, dtype=np.float64).ravel()
        k = sums.shape[0]
        message = self._message[: k + self._size]
        message[:k] = sums
        build_histogram(*self._node_rows(node), self.features, self.n_bins, self._local)
        pack_histogram(self._local, self.features, self.n_bins, message, k)
        total = self.comm.allreduce(message)
        hist = self._summed_histogram()
        unpack_histogram(total, k, self.features, self.n_bins, hist)
        self._ahead[node] = hist
        return total[:k].copy()

    def _summed_histogram(self) -> np.ndarray:
        """Memory for a summed histogram: the pool's next, or a new one."""
        if self._pool is not None and self._used < self._pool.shape[0]:
            self._used += 1
            return self._pool[self._used - 1]
        return new_histogram(self.n_features)

    def root(self) -> NodeSums:
        g, h, n, q = self._exchange(super().root(), 0)
        self._counts = {0: int(n)}
        return float(g), float(h), int(n), float(q)

    def split(
        self, node: int, feature: int, bin_threshold: int, missing_left: bool, left: int, right: int
    ) -> tuple[NodeSums, NodeSums]:
        counts = self._hists.pop(node)[feature, :, 2]
        n_left = int(counts[: bin_threshold + 1].sum() + (counts[MISSING_BIN] if missing_left else 0.0))
        n_right = self._counts.pop(node) - n_left
        small, large = (right, left) if n_right < n_left else (left, right)  # the grower's choice
        self._sibling[small] = large
        local = super().split(node, feature, bin_threshold, missing_left, left, right)
        gl, hl, nl, ql, gr, hr, nr, qr = self._exchange(local, small)
        self._counts[left], self._counts[right] = int(nl), int(nr)
        return (float(gl), float(hl), int(nl), float(ql)), (float(gr), float(hr), int(nr), float(qr))

    def histograms(self, nodes: Sequence[int]) -> list[np.ndarray]:
        """Histograms of ``nodes`` summed over the processes (those of the root and of a
        split's smaller child were summed with their node sums)."""
        todo = [n for n in nodes if n not in self._ahead]
        if todo:  # any other node: one exchange for all of them
            message = np.empty(len(todo) * self._size)
            for i, h in enumerate(super().histograms(todo)):
                pack_histogram(h, self.features, self.n_bins, message, i * self._size)
            total = self.comm.allreduce(message)
            for i, n in enumerate(todo):
                self._ahead[n] = hist = self._summed_histogram()
                unpack_histogram(total, i * self._size, self.features, self.n_bins, hist)
        out = [self._ahead.pop(n) for n in nodes]
        self._hists.update(zip(nodes, out))
        return out

    def children_histograms(
        self, parents: Sequence[np.ndarray], smaller: Sequence[int]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        pairs = super().children_histograms(parents, smaller)
        for (_, large), s in zip(pairs, smaller):
            self._hists[self._sibling.pop(s)] = large
        return pairs
