"""Best-first (leaf-wise) growth of one regression tree on gradients and hessians.

The leaf whose best split gains most is split next, until ``num_leaves`` leaves exist or no
split gains anything, as in RankLib's LambdaMART and LightGBM. The grower decides; the rows
are a :class:`~ranklearn.tree.histogram_builder.HistogramBuilder`'s business (the seam a
distributed trainer replaces): after a split the smaller child's histogram is built from the
rows and the larger one is the parent's minus it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ranklearn.tree.histogram_builder import HistogramBuilder
from ranklearn.tree.splitting import find_best_split
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
    hist: np.ndarray | None = None
    split: Split | None = None
    children: tuple[int, int] | None = None


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
    num_leaves, max_depth, min_samples_leaf, min_sum_hessian, l2_regularization, min_gain_to_split
        Growth limits; ``max_depth=None`` means unlimited.

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
        num_leaves: int = 31,
        max_depth: int | None = None,
        min_samples_leaf: int = 20,
        min_sum_hessian: float = 1e-3,
        l2_regularization: float = 0.0,
        min_gain_to_split: float = 0.0,
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
        )
        # rows in this process: each split's histograms and children's splits in one kernel
        self._fused = True

    @classmethod
    def from_builder(cls, builder: HistogramBuilder, n_bins: np.ndarray, **limits: float | int | None) -> TreeGrower:
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
    ) -> None:
        self.builder = builder
        self.n_bins = n_bins
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_sum_hessian = min_sum_hessian
        self.l2 = l2_regularization
        self.min_gain = min_gain_to_split

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
            self.min_gain,
        )
        node.split = Split(gain, feature, bin_thr, mleft) if feature >= 0 else None

    def _splittable(self, node: GrowerNode) -> bool:
        if node.count < 2 * self.min_samples_leaf:
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
        builder = self.builder
        root = GrowerNode(0, *builder.root())
        nodes = [root]
        heap: list[tuple[float, int]] = []
        if self._splittable(root) and self.num_leaves > 1:
            (root.hist,) = builder.histograms([0])
            self._find_split(root)
            if root.split is not None:
                heap.append((-root.split.gain, 0))
        n_leaves = 1
        while heap and n_leaves < self.num_leaves:
            _, nid = heapq.heappop(heap)
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
                order = (small, 1 - small)
                if self._fused:
                    sums = np.array([(children[k].sum_g, children[k].sum_h, children[k].count) for k in order])
                    small_hist, large_hist, *found = builder.children_splits(
                        parent_hist, ids[small], sums, np.array([find[k] for k in order]),
                        self.l2, self.min_samples_leaf, self.min_sum_hessian, self.min_gain,
                    )  # fmt: skip
                    for k, (gain, feature, bin_thr, mleft) in zip(order, found):
                        children[k].split = Split(gain, feature, bin_thr, mleft) if feature >= 0 else None
                else:
                    ((small_hist, large_hist),) = builder.children_histograms([parent_hist], [ids[small]])
                children[small].hist, children[1 - small].hist = small_hist, large_hist
                for cid, c, may_split in zip(ids, children, find):
                    if may_split:
                        if not self._fused:
                            self._find_split(c)
                        if c.split is not None:
                            # the heap orders by gain, then node id: deterministic ties
                            heapq.heappush(heap, (-c.split.gain, cid))
                            continue
                    c.hist = None  # a final leaf: free its histogram now
        return self._finish(nodes)

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
        tree = Tree(
            feature=feature,
            bin_threshold=bin_thr,
            threshold=np.zeros(n),
            missing_left=mleft,
            left=left,
            right=right,
            value=value,
            gain=gain,
            count=count,
        )
        samples, leaf_ranges = self._leaf_rows(leaves)
        return tree, samples, leaf_ranges

    def _leaf_rows(self, leaves: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The builder's :meth:`~HistogramBuilder.leaf_rows` of the tree's ``leaves``."""
        return self.builder.leaf_rows(leaves)
