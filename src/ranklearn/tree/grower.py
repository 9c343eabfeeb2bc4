"""Best-first (leaf-wise) growth of one regression tree on gradients and hessians.

One leaf is split at a time until ``num_leaves`` leaves exist or no split gains anything. Which
leaf is split next is ``leaf_order``'s choice: the leaf whose best split gains most
(``"gain"``, as LightGBM), or the leaf whose gradients have the largest deviance, their sum of
squares about their mean, sum g^2 - (sum g)^2 / n (``"deviance"``, as RankLib's
``RegressionTree``: a queue kept in descending order of its leaves' squared error, seed 001's
walk-through). On a tie the gain order takes the oldest leaf (lowest node id), the deviance
order the newest (highest id: RankLib queues a new leaf ahead of leaves of equal deviance). Each
split, once its leaf is chosen, is the same in both orders. The deviance order also takes
RankLib's rule of when a leaf is split: whenever a split keeps ``min_samples_leaf`` rows (and
``min_sum_hessian``) on each side, even one that gains nothing (``min_gain_to_split > 0`` still
asks for that gain), and never when its gradients are all equal (deviance 0, within rounding);
the gain order splits only for a gain.

The grower decides; the rows are a
:class:`~ranklearn.tree.histogram_builder.HistogramBuilder`'s business (the seam a
distributed trainer replaces): after a split the smaller child's histogram is built from the
rows and the larger one is the parent's minus it. On rows held in this process the whole tree
grows in one compiled call (:func:`_grow_local`, the same decisions as the loop over a
builder), as a Python call per split is most of a small tree's time.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from ranklearn.tree.binning import N_HIST_BINS
from ranklearn.tree.histogram import build_histogram
from ranklearn.tree.histogram_builder import (
    ROW_MAJOR_FRACTION,
    HistogramBuilder,
    _partition,
    _sums,
    row_major_rows,
)
from ranklearn.tree.splitting import children_histograms_splits, find_best_split
from ranklearn.tree.tree import Tree


class Split(NamedTuple):
    """The best split of a node: gain, feature, bin threshold (bin <= it goes left), and
    where missing values go."""

    gain: float
    feature: int
    bin_threshold: int
    missing_left: bool


@dataclass(slots=True)
class GrowerNode:
    """A node while the tree grows. ``hist`` is held only while the node may still be split."""

    depth: int
    sum_g: float
    sum_h: float
    count: int
    sum_g2: float
    hist: np.ndarray | None = None
    split: Split | None = None
    children: tuple[int, int] | None = None


#: ``leaf_order`` values, in the order of :func:`_grow_local`'s ``by_deviance`` flag
LEAF_ORDERS = ("gain", "deviance")
#: a deviance at most this times the sum of squared gradients is 0 (rounding of equal gradients)
DEVIANCE_ZERO = 1e-12


@njit(cache=True, inline="always")
def _deviance(sum_g: float, sum_g2: float, count: int) -> float:
    """Sum of squares of a node's gradients about their mean (RankLib's ``Split`` deviance)."""
    return sum_g2 - sum_g * sum_g / count if count > 0 else 0.0


@njit(cache=True, inline="always")
def _varied(deviance: float, sum_g2: float, by_deviance: bool) -> bool:
    """Whether the deviance order may split a node (the gain order: always)."""
    return not by_deviance or deviance > DEVIANCE_ZERO * sum_g2


@njit(cache=True, inline="always")
def _splittable(count: int, depth: int, min_samples_leaf: int, max_depth: int) -> bool:
    """:meth:`TreeGrower._splittable` of a node (``max_depth < 0``: unlimited)."""
    return count >= 2 * min_samples_leaf and (max_depth < 0 or depth < max_depth)


@njit(cache=True)
def _root_histogram(
    binned: np.ndarray, binned_rows: np.ndarray, samples: np.ndarray, grad: np.ndarray, hess: np.ndarray,
    features: np.ndarray, n_bins: np.ndarray, hist: np.ndarray,
) -> None:  # fmt: skip
    """The root's histogram, its rows read as :meth:`HistogramBuilder.histograms` reads them
    (``binned_rows`` with no rows: no row-major copy)."""
    if binned_rows.shape[0] > 0 and samples.shape[0] < ROW_MAJOR_FRACTION * binned.shape[1]:
        b, s, g, h = row_major_rows(binned_rows, samples, grad, hess)
        build_histogram(b, s, g, h, features, n_bins, hist)
    else:
        build_histogram(binned, samples, grad, hess, features, n_bins, hist)


@njit(cache=True)
def _children(
    binned: np.ndarray, binned_rows: np.ndarray, rows: np.ndarray, grad: np.ndarray, hess: np.ndarray,
    features: np.ndarray, n_bins: np.ndarray, parent: np.ndarray, small: np.ndarray, sums: np.ndarray,
    find: np.ndarray, l2: float, min_samples_leaf: int, min_sum_hessian: float, min_gain: float,
) -> tuple[float, int, int, bool, float, int, int, bool]:  # fmt: skip
    """:func:`~ranklearn.tree.splitting.children_histograms_splits` with the smaller child's
    ``rows`` read as :meth:`HistogramBuilder.histograms` reads them."""
    if binned_rows.shape[0] > 0 and rows.shape[0] < ROW_MAJOR_FRACTION * binned.shape[1]:
        b, s, g, h = row_major_rows(binned_rows, rows, grad, hess)
        return children_histograms_splits(
            b, s, g, h, features, n_bins, parent, small, sums, find, l2, min_samples_leaf, min_sum_hessian, min_gain
        )
    return children_histograms_splits(
        binned, rows, grad, hess, features, n_bins, parent, small, sums, find,
        l2, min_samples_leaf, min_sum_hessian, min_gain,
    )  # fmt: skip


@njit(cache=True)
def _grow_local(
    binned: np.ndarray, binned_rows: np.ndarray, samples: np.ndarray, grad: np.ndarray, hess: np.ndarray,
    features: np.ndarray, n_bins: np.ndarray, hists: np.ndarray, num_leaves: int, max_depth: int,
    min_samples_leaf: int, min_sum_hessian: float, l2: float, min_gain: float, by_deviance: bool,
) -> tuple[np.ndarray, ...]:  # fmt: skip
    """:meth:`TreeGrower.grow` on rows held in this process, compiled: the same decisions in
    the same order (the leaf of highest gain first, the lower node id on a tie; or with
    ``by_deviance`` the leaf of highest deviance first, the higher node id on a tie; the smaller
    child's histogram from its rows, the left one on a tie; the rows partitioned by
    :func:`~ranklearn.tree.histogram_builder._partition`), so the same tree, node for node,
    without a Python call per split, which on small data is most of a tree's time.

    ``samples`` (sorted rows of the tree) is partitioned in place, grouped by leaf;
    ``binned_rows`` is the row-major copy or an array with no rows; ``hists`` holds at least
    ``num_leaves`` histograms (the most alive at once), reused as nodes come and go;
    ``max_depth < 0`` means unlimited. Returns the tree's node arrays (feature, bin_threshold,
    missing_left, left, right, value, gain, count) and the leaf ranges ``(node, start, end)``.
    """
    n_max = 2 * num_leaves - 1
    depth = np.zeros(n_max, dtype=np.int64)
    sum_g = np.zeros(n_max)
    sum_h = np.zeros(n_max)
    priority = np.zeros(n_max)  # what picks the next leaf: its split's gain, or its deviance
    count = np.zeros(n_max, dtype=np.int64)
    start = np.zeros(n_max, dtype=np.int64)
    end = np.zeros(n_max, dtype=np.int64)
    left = np.full(n_max, -1, dtype=np.int32)
    right = np.full(n_max, -1, dtype=np.int32)
    slot = np.full(n_max, -1, dtype=np.int64)  # a node's histogram in ``hists``
    queued = np.zeros(n_max, dtype=np.bool_)  # a leaf with a split, waiting to be split
    # each node's best split: (gain, feature, bin threshold, missing left), feature -1 for none
    s_gain = np.zeros(n_max)
    s_feature = np.full(n_max, -1, dtype=np.int64)
    s_bin = np.zeros(n_max, dtype=np.int64)
    s_mleft = np.zeros(n_max, dtype=np.bool_)
    free = np.arange(hists.shape[0] - 1, -1, -1)  # a stack of unused histograms
    n_free = free.shape[0]
    buf = np.empty(samples.shape[0], dtype=np.int32)
    sums = np.empty((2, 3))
    find = np.empty(2, dtype=np.bool_)

    end[0] = count[0] = samples.shape[0]
    sum_g[0], sum_h[0], sum_g2 = _sums(samples, grad, hess)
    n_nodes = 1
    n_leaves = 1
    dev0 = _deviance(sum_g[0], sum_g2, count[0])
    if _splittable(count[0], 0, min_samples_leaf, max_depth) and num_leaves > 1 and _varied(dev0, sum_g2, by_deviance):
        n_free -= 1
        slot[0] = free[n_free]
        hist = hists[slot[0]]
        _root_histogram(binned, binned_rows, samples, grad, hess, features, n_bins, hist)
        s_gain[0], s_feature[0], s_bin[0], s_mleft[0] = find_best_split(
            hist, features, n_bins, sum_g[0], sum_h[0], float(count[0]),
            l2, min_samples_leaf, min_sum_hessian, min_gain,
        )  # fmt: skip
        queued[0] = s_feature[0] >= 0
        priority[0] = dev0 if by_deviance else s_gain[0]
    while n_leaves < num_leaves:
        # the queued leaf of highest priority; on a tie the lowest id, or by deviance the highest
        # (TreeGrower's heap order)
        nid = -1
        for i in range(n_nodes):
            if queued[i] and (nid < 0 or priority[i] > priority[nid] or (by_deviance and priority[i] == priority[nid])):
                nid = i
        if nid < 0:
            break
        queued[nid] = False
        lc, rc = n_nodes, n_nodes + 1
        n_nodes += 2
        n_leaves += 1
        mid, gl, hl, gr, hr, ql, qr = _partition(
            binned, samples, start[nid], end[nid], s_feature[nid], s_bin[nid], s_mleft[nid], buf, grad, hess
        )
        left[nid], right[nid] = lc, rc
        start[lc], end[lc], start[rc], end[rc] = start[nid], mid, mid, end[nid]
        sum_g[lc], sum_h[lc], count[lc] = gl, hl, mid - start[nid]
        sum_g[rc], sum_h[rc], count[rc] = gr, hr, end[nid] - mid
        depth[lc] = depth[rc] = depth[nid] + 1
        parent = slot[nid]
        slot[nid] = -1
        dev_l, dev_r = _deviance(gl, ql, count[lc]), _deviance(gr, qr, count[rc])
        find_l = _splittable(count[lc], depth[lc], min_samples_leaf, max_depth) and _varied(dev_l, ql, by_deviance)
        find_r = _splittable(count[rc], depth[rc], min_samples_leaf, max_depth) and _varied(dev_r, qr, by_deviance)
        if (find_l or find_r) and n_leaves < num_leaves:
            small, large = (rc, lc) if count[rc] < count[lc] else (lc, rc)
            for k, c in enumerate((small, large)):
                sums[k, 0], sums[k, 1], sums[k, 2] = sum_g[c], sum_h[c], float(count[c])
            find[0] = find_l if small == lc else find_r
            find[1] = find_r if small == lc else find_l
            n_free -= 1
            slot[small], slot[large] = free[n_free], parent  # the larger child in the parent's memory
            found = _children(
                binned, binned_rows, samples[start[small] : end[small]], grad, hess, features, n_bins,
                hists[parent], hists[slot[small]], sums, find, l2, min_samples_leaf, min_sum_hessian, min_gain,
            )  # fmt: skip
            s_gain[small], s_feature[small], s_bin[small], s_mleft[small] = found[0], found[1], found[2], found[3]
            s_gain[large], s_feature[large], s_bin[large], s_mleft[large] = found[4], found[5], found[6], found[7]
        else:
            free[n_free] = parent
            n_free += 1
        for c, may_split, dev in ((lc, find_l, dev_l), (rc, find_r, dev_r)):
            if may_split and s_feature[c] >= 0:
                queued[c] = True
                priority[c] = dev if by_deviance else s_gain[c]
            elif slot[c] >= 0:  # a final leaf: its histogram is free now
                free[n_free] = slot[c]
                n_free += 1
                slot[c] = -1

    feature = np.full(n_nodes, -1, dtype=np.int32)
    bin_thr = np.zeros(n_nodes, dtype=np.int32)
    mleft = np.zeros(n_nodes, dtype=np.bool_)
    value = np.zeros(n_nodes)
    gain = np.zeros(n_nodes)
    leaf_ranges = np.empty((n_leaves, 3), dtype=np.int64)
    k = 0
    for i in range(n_nodes):
        if left[i] >= 0:
            gain[i], feature[i], bin_thr[i], mleft[i] = s_gain[i], s_feature[i], s_bin[i], s_mleft[i]
        else:
            d = sum_h[i] + l2
            value[i] = -sum_g[i] / d if d > 0.0 else 0.0
            leaf_ranges[k, 0], leaf_ranges[k, 1], leaf_ranges[k, 2] = i, start[i], end[i]
            k += 1
    left, right, count = left[:n_nodes].copy(), right[:n_nodes].copy(), count[:n_nodes].copy()
    return feature, bin_thr, mleft, left, right, value, gain, count, leaf_ranges


class TreeGrower:
    """Grow one tree.

    Parameters
    ----------
    binned : uint8 (n_features, n_samples)
        Feature-major binned data.
    n_bins : int64 (n_features,)
        Value bins of each feature.
    grad, hess : float64 (n_samples,)
    samples : int32, optional
        Rows the tree is fitted on (query bagging); all rows by default. Sorted.
    features : int64, optional
        Features the tree may split on (feature subsampling); all by default.
    binned_rows : uint8 (n_samples, n_features), optional
        ``binned`` row-major, for the histograms of small nodes (see
        :class:`~ranklearn.tree.histogram_builder.HistogramBuilder`).
    histograms : float64 (>= num_leaves, n_features, 256, 3), optional
        Memory for the node histograms, overwritten; a booster passes the same to every tree,
        which then writes to memory in use instead of pages the system must map. New memory
        for each tree by default.
    num_leaves, max_depth, min_samples_leaf, min_sum_hessian, l2_regularization, min_gain_to_split
        Growth limits; ``max_depth=None`` means unlimited.
    leaf_order : {"gain", "deviance"}
        Which leaf is split next: the one whose best split gains most (LightGBM), or the one
        whose gradients have the largest deviance (RankLib). See the module docstring.

    See Also
    --------
    TreeGrower.from_builder : grow on rows held by another histogram builder.
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
        histograms: np.ndarray | None = None,
        num_leaves: int = 31,
        max_depth: int | None = None,
        min_samples_leaf: int = 20,
        min_sum_hessian: float = 1e-3,
        l2_regularization: float = 0.0,
        min_gain_to_split: float = 0.0,
        leaf_order: str = "gain",
    ) -> None:
        self._configure(
            HistogramBuilder(binned, n_bins, grad, hess, samples=samples, features=features, binned_rows=binned_rows),
            n_bins,
            num_leaves=num_leaves,
            max_depth=max_depth,
            min_samples_leaf=min_samples_leaf,
            min_sum_hessian=min_sum_hessian,
            l2_regularization=l2_regularization,
            min_gain_to_split=min_gain_to_split,
            leaf_order=leaf_order,
        )
        # rows in this process: the whole tree grows in one compiled call (_grow_local)
        self._fused = True
        shape = (num_leaves, binned.shape[0], N_HIST_BINS, 3)
        if histograms is not None and (histograms.shape[0] < num_leaves or histograms.shape[1:] != shape[1:]):
            raise ValueError(f"histograms has shape {histograms.shape}, needs at least {shape}")
        self._histograms = histograms
        self._binned_rows = binned_rows

    @classmethod
    def from_builder(
        cls, builder: HistogramBuilder, n_bins: np.ndarray, **limits: float | int | str | None
    ) -> TreeGrower:
        """A grower that asks ``builder`` (for instance a distributed one) for node sums,
        histograms and splits; ``limits`` are the constructor's growth limits (defaults alike)."""
        grower = cls.__new__(cls)
        grower._configure(builder, n_bins, **limits)
        grower._fused = False
        return grower

    def _configure(
        self,
        builder: HistogramBuilder,
        n_bins: np.ndarray,
        *,
        num_leaves: int = 31,
        max_depth: int | None = None,
        min_samples_leaf: int = 20,
        min_sum_hessian: float = 1e-3,
        l2_regularization: float = 0.0,
        min_gain_to_split: float = 0.0,
        leaf_order: str = "gain",
    ) -> None:
        if leaf_order not in LEAF_ORDERS:
            raise ValueError(f"leaf_order must be one of {LEAF_ORDERS}, got {leaf_order!r}")
        self.builder = builder
        self.n_bins = n_bins
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_sum_hessian = min_sum_hessian
        self.l2 = l2_regularization
        self.min_gain = min_gain_to_split
        self.by_deviance = leaf_order == "deviance"
        # what a split must gain: RankLib's order splits its leaf for any gain unless asked for one
        self._split_min_gain = -np.inf if self.by_deviance and min_gain_to_split == 0 else min_gain_to_split

    def _find_split(self, node: GrowerNode) -> None:
        gain, feature, bin_thr, mleft = find_best_split(
            node.hist,
            self.builder.features,
            self.n_bins,
            node.sum_g,
            node.sum_h,
            float(node.count),
            self.l2,
            self.min_samples_leaf,
            self.min_sum_hessian,
            self._split_min_gain,
        )
        node.split = Split(gain, feature, bin_thr, mleft) if feature >= 0 else None

    def _heap_key(self, node: GrowerNode, nid: int) -> tuple[float, int, int]:
        """The heap entry of leaf ``nid`` waiting to be split (the smallest is split first): the
        highest gain, the lowest id on a tie; or the highest deviance, the highest id on a tie
        (RankLib)."""
        if self.by_deviance:
            return -self._deviance(node), -nid, nid
        return -node.split.gain, nid, nid

    @staticmethod
    def _deviance(node: GrowerNode) -> float:
        """:func:`_deviance`'s arithmetic in Python: no compile on a Dask worker's first tree."""
        return node.sum_g2 - node.sum_g * node.sum_g / node.count if node.count > 0 else 0.0

    def _splittable(self, node: GrowerNode) -> bool:
        """:func:`_splittable` and :func:`_varied` of ``node``."""
        if node.count < 2 * self.min_samples_leaf:
            return False
        if self.by_deviance and not self._deviance(node) > DEVIANCE_ZERO * node.sum_g2:
            return False
        return self.max_depth is None or node.depth < self.max_depth

    def grow(self) -> tuple[Tree, np.ndarray, np.ndarray]:
        """Grow the tree.

        Returns
        -------
        tree : Tree
            With unshrunk leaf values -G / (H + l2).
        samples : int32
            The row indices, grouped by leaf.
        leaf_ranges : int64 (n_leaves, 3)
            ``(node, start, end)`` of each leaf in ``samples``.
        """
        if self._fused:
            return self._grow_fused()
        builder = self.builder
        root = GrowerNode(0, *builder.root())
        nodes = [root]
        heap: list[tuple[float, int, int]] = []
        if self._splittable(root) and self.num_leaves > 1:
            (root.hist,) = builder.histograms([0])
            self._find_split(root)
            if root.split is not None:
                heap.append(self._heap_key(root, 0))
        n_leaves = 1
        while heap and n_leaves < self.num_leaves:
            *_, nid = heapq.heappop(heap)
            node = nodes[nid]
            split = node.split
            ids = (len(nodes), len(nodes) + 1)
            sums = builder.split(nid, split.feature, split.bin_threshold, split.missing_left, *ids)
            children = [GrowerNode(node.depth + 1, *s) for s in sums]
            node.children = ids
            nodes.extend(children)
            n_leaves += 1
            parent_hist, node.hist = node.hist, None
            find = [self._splittable(c) for c in children]
            if any(find) and n_leaves < self.num_leaves:
                # the smaller child is built from rows (the left one on a tie)
                small = 1 if children[1].count < children[0].count else 0
                ((small_hist, large_hist),) = builder.children_histograms([parent_hist], [ids[small]])
                children[small].hist, children[1 - small].hist = small_hist, large_hist
                for cid, c, may_split in zip(ids, children, find):
                    if may_split:
                        self._find_split(c)
                        if c.split is not None:
                            heapq.heappush(heap, self._heap_key(c, cid))
                            continue
                    c.hist = None  # a final leaf: free its histogram now
        return self._finish(nodes)

    def _grow_fused(self) -> tuple[Tree, np.ndarray, np.ndarray]:
        """:meth:`grow` in one compiled call (:func:`_grow_local`), on the builder's rows."""
        builder = self.builder
        hists = self._histograms
        if hists is None:
            hists = np.empty((self.num_leaves, builder.n_features, N_HIST_BINS, 3))
        rows = self._binned_rows
        feature, bin_thr, mleft, left, right, value, gain, count, leaf_ranges = _grow_local(
            builder.binned,
            np.empty((0, builder.n_features), dtype=np.uint8) if rows is None else rows,
            builder.samples,
            builder.grad,
            builder.hess,
            builder.features,
            builder.n_bins,
            hists,
            self.num_leaves,
            -1 if self.max_depth is None else self.max_depth,
            self.min_samples_leaf,
            float(self.min_sum_hessian),
            float(self.l2),
            float(self._split_min_gain),
            self.by_deviance,
        )
        return _grown_tree(feature, bin_thr, mleft, left, right, value, gain, count), builder.samples, leaf_ranges

    def _finish(self, nodes: list[GrowerNode]) -> tuple[Tree, np.ndarray, np.ndarray]:
        n = len(nodes)
        feature = np.full(n, -1, dtype=np.int32)
        bin_thr = np.zeros(n, dtype=np.int32)
        mleft = np.zeros(n, dtype=np.bool_)
        left = np.full(n, -1, dtype=np.int32)
        right = np.full(n, -1, dtype=np.int32)
        value = np.zeros(n)
        gain = np.zeros(n)
        count = np.zeros(n, dtype=np.int64)
        leaves = []
        for i, node in enumerate(nodes):
            count[i] = node.count
            if node.children is not None:
                gain[i], feature[i], bin_thr[i], mleft[i] = node.split
                left[i], right[i] = node.children
            else:
                d = node.sum_h + self.l2
                value[i] = -node.sum_g / d if d > 0.0 else 0.0
                leaves.append(i)
        samples, leaf_ranges = self._leaf_rows(leaves)
        return _grown_tree(feature, bin_thr, mleft, left, right, value, gain, count), samples, leaf_ranges

    def _leaf_rows(self, leaves: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The builder's :meth:`~HistogramBuilder.leaf_rows` of the tree's ``leaves``."""
        return self.builder.leaf_rows(leaves)


def _grown_tree(
    feature: np.ndarray, bin_threshold: np.ndarray, missing_left: np.ndarray, left: np.ndarray, right: np.ndarray,
    value: np.ndarray, gain: np.ndarray, count: np.ndarray,
) -> Tree:  # fmt: skip
    """A grown tree's :class:`Tree`: raw thresholds are the model's to fill (its bin mapper)."""
    return Tree(
        feature=feature, bin_threshold=bin_threshold, threshold=np.zeros(feature.shape[0]), missing_left=missing_left,
        left=left, right=right, value=value, gain=gain, count=count,
    )  # fmt: skip
