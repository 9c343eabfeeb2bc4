"""Best-first (leaf-wise) growth of one regression tree on gradients and hessians.

The leaf whose best split gains most is split next, until ``num_leaves`` leaves exist or no
split gains anything, as in RankLib's LambdaMART and LightGBM. Each leaf owns a contiguous
range of a sample-index array; a split partitions the range in place (stably), builds the
smaller child's histogram from the data and gets the larger one by subtraction.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
from numba import njit

from ranklearn.tree.binning import MISSING_BIN
from ranklearn.tree.histogram import build_histogram, new_histogram, subtract_histogram
from ranklearn.tree.splitting import find_best_split


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
) -> int:
    """Stable in-place partition of ``samples[start:end]``; returns where the right part starts."""
    col = binned[feature]
    nl = 0
    nr = 0
    for r in range(start, end):
        i = samples[r]
        b = col[i]
        if b == MISSING_BIN:
            go_left = missing_left
        else:
            go_left = b <= bin_threshold
        if go_left:
            samples[start + nl] = i
            nl += 1
        else:
            buf[nr] = i
            nr += 1
    for r in range(nr):
        samples[start + nl + r] = buf[r]
    return start + nl


@njit(cache=True)
def _leaf_sums(samples: np.ndarray, grad: np.ndarray, hess: np.ndarray) -> tuple[float, float]:
    g = 0.0
    h = 0.0
    for i in samples:
        g += grad[i]
        h += hess[i]
    return g, h


@dataclass
class Tree:
    """A fitted tree as flat node arrays; a node with ``feature == -1`` is a leaf.

    ``left``/``right`` index this tree's own arrays. ``value`` is the leaf output (already
    multiplied by the learning rate); ``threshold`` is raw (x <= threshold goes left) and
    ``bin_threshold`` the same split on binned data.
    """

    feature: np.ndarray
    bin_threshold: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    gain: np.ndarray
    count: np.ndarray

    @property
    def n_leaves(self) -> int:
        return int(np.sum(self.feature < 0))

    def to_dict(self) -> dict:
        return {name: getattr(self, name).tolist() for name in self.__dataclass_fields__}

    def validate(self, n_features: int) -> None:
        """Check the structure of a tree read from a file before any kernel walks it.

        Raises
        ------
        ValueError
            On arrays of different lengths, a feature out of range, a child that does not
            point forward (a cycle), a node with two parents, or a non-finite value.
        """
        n = self.feature.shape[0]
        if n == 0:
            raise ValueError("a tree has no nodes")
        for name in self.__dataclass_fields__:
            if getattr(self, name).shape != (n,):
                raise ValueError(f"tree arrays differ in length ('{name}' vs 'feature')")
        internal = self.feature >= 0
        if np.any(self.feature[~internal] != -1):
            raise ValueError("a leaf must have feature -1")
        if np.any(self.feature[internal] >= n_features):
            raise ValueError(f"a split uses feature {int(self.feature.max())}, the model has {n_features}")
        idx = np.flatnonzero(internal)
        kids = np.concatenate((self.left[idx], self.right[idx]))
        parents = np.concatenate((idx, idx))
        # children after their parent (so no cycles) and inside the tree
        if np.any(kids <= parents) or np.any(kids >= n):
            raise ValueError("a child index points backwards or outside the tree")
        if np.unique(kids).shape[0] != kids.shape[0] or kids.shape[0] != n - 1:
            raise ValueError("the nodes do not form a tree (a node has two parents, or is unreachable)")
        if not (np.all(np.isfinite(self.value)) and np.all(np.isfinite(self.threshold[internal]))):
            raise ValueError("a tree holds a non-finite value or threshold")

    @classmethod
    def from_dict(cls, d: dict) -> Tree:
        dtypes = {
            "feature": np.int32,
            "bin_threshold": np.int32,
            "threshold": np.float64,
            "missing_left": np.bool_,
            "left": np.int32,
            "right": np.int32,
            "value": np.float64,
            "gain": np.float64,
            "count": np.int64,
        }
        return cls(**{k: np.asarray(d[k], dtype=t) for k, t in dtypes.items()})


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
    num_leaves, max_depth, min_samples_leaf, min_sum_hessian, l2_regularization, min_gain_to_split
        Growth limits; ``max_depth=None`` means unlimited.
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
        num_leaves: int = 31,
        max_depth: int | None = None,
        min_samples_leaf: int = 20,
        min_sum_hessian: float = 1e-3,
        l2_regularization: float = 0.0,
        min_gain_to_split: float = 0.0,
    ) -> None:
        self.binned = binned
        self.n_bins = n_bins
        self.grad = grad
        self.hess = hess
        n = binned.shape[1]
        self.samples = (
            np.arange(n, dtype=np.int32) if samples is None else np.array(samples, dtype=np.int32)
        )
        self.features = (
            np.arange(binned.shape[0], dtype=np.int64)
            if features is None
            else np.asarray(features, dtype=np.int64)
        )
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_sum_hessian = min_sum_hessian
        self.l2 = l2_regularization
        self.min_gain = min_gain_to_split

    def _best_split(self, node: dict) -> None:
        gain, feature, bin_thr, mleft = find_best_split(
            node["hist"],
            self.features,
            self.n_bins,
            node["g"],
            node["h"],
            float(node["end"] - node["start"]),
            self.l2,
            self.min_samples_leaf,
            self.min_sum_hessian,
            self.min_gain,
        )
        node["split"] = (gain, feature, bin_thr, mleft) if feature >= 0 else None

    def _splittable(self, node: dict) -> bool:
        if node["end"] - node["start"] < 2 * self.min_samples_leaf:
            return False
        return self.max_depth is None or node["depth"] < self.max_depth

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
        n_feat = self.binned.shape[0]
        buf = np.empty(self.samples.shape[0], dtype=np.int32)
        g, h = _leaf_sums(self.samples, self.grad, self.hess)
        root = {"start": 0, "end": self.samples.shape[0], "depth": 0, "g": g, "h": h}
        nodes = [root]
        heap: list[tuple[float, int]] = []
        if self._splittable(root) and self.num_leaves > 1:
            root["hist"] = new_histogram(n_feat)
            build_histogram(self.binned, self.samples, self.grad, self.hess, self.features, root["hist"])
            self._best_split(root)
            if root["split"] is not None:
                heap.append((-root["split"][0], 0))
        n_leaves = 1
        while heap and n_leaves < self.num_leaves:
            _, nid = heapq.heappop(heap)
            node = nodes[nid]
            gain, feature, bin_thr, mleft = node["split"]
            mid = _partition(
                self.binned, self.samples, node["start"], node["end"], feature, bin_thr, mleft, buf
            )
            children = []
            for s, e in ((node["start"], mid), (mid, node["end"])):
                cg, ch = _leaf_sums(self.samples[s:e], self.grad, self.hess)
                children.append({"start": s, "end": e, "depth": node["depth"] + 1, "g": cg, "h": ch})
            node["children"] = (len(nodes), len(nodes) + 1)
            nodes.extend(children)
            n_leaves += 1
            parent_hist = node.pop("hist")
            want = [c for c in children if self._splittable(c)]
            if want and n_leaves < self.num_leaves:
                small, large = sorted(children, key=lambda c: c["end"] - c["start"])
                small["hist"] = new_histogram(n_feat)
                build_histogram(
                    self.binned,
                    self.samples[small["start"] : small["end"]],
                    self.grad,
                    self.hess,
                    self.features,
                    small["hist"],
                )
                # the parent's histogram is not needed any more: reuse its memory
                subtract_histogram(parent_hist, small["hist"], self.features, parent_hist)
                large["hist"] = parent_hist
                for cid, c in zip(node["children"], children):
                    if self._splittable(c):
                        self._best_split(c)
                        if c["split"] is not None:
                            # the heap orders by gain, then node id: deterministic ties
                            heapq.heappush(heap, (-c["split"][0], cid))
                            continue
                    c.pop("hist", None)  # a final leaf: free its histogram now
        return self._finish(nodes)

    def _finish(self, nodes: list[dict]) -> tuple[Tree, np.ndarray, np.ndarray]:
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
            count[i] = node["end"] - node["start"]
            if "children" in node:
                gain[i], feature[i], bin_thr[i], mleft[i] = node["split"]
                left[i], right[i] = node["children"]
            else:
                d = node["h"] + self.l2
                value[i] = -node["g"] / d if d > 0.0 else 0.0
                leaves.append((i, node["start"], node["end"]))
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
        return tree, self.samples, np.array(leaves, dtype=np.int64).reshape(-1, 3)
