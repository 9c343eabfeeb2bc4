"""The fitted regression tree: flat node arrays, their file form and their structural check."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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

    def on_columns(self, columns: np.ndarray) -> Tree:
        """This tree, grown on ``X[:, columns]``, as a tree of whole rows: feature ``j`` renamed
        ``columns[j]`` (a copy; thresholds and bins unchanged)."""
        out = Tree.from_dict(self.to_dict())
        internal = out.feature >= 0
        out.feature[internal] = np.asarray(columns)[out.feature[internal]]
        return out

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
        # (bincount, not np.unique: numpy's unique imports numpy.ma, a tenth of a short `predict`)
        if kids.shape[0] != n - 1 or (kids.shape[0] and np.bincount(kids).max() > 1):
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


def bags_mean(bags: list[list[Tree]]) -> list[Tree]:
    """A forest's bags as one ensemble whose leaf values summed are the mean over the bags: every
    tree copied with its leaf values divided by the number of bags (the forest's own predictor,
    ``predict``'s served path and the exports all read it so)."""
    trees = []
    for bag in bags:
        for tree in bag:
            mean = Tree.from_dict(tree.to_dict())
            mean.value = mean.value / len(bags)
            trees.append(mean)
    return trees
