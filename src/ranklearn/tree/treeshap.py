"""Exact path-dependent TreeSHAP of a tree ensemble: feature contributions and interactions.

Lundberg, Erion, Lee, "Consistent Individualized Feature Attribution for Tree Ensembles",
arXiv:1802.03888 (2018), Algorithm 2; the interaction values of Lundberg et al., "From local
explanations to global understanding with explainable AI for trees", Nature Machine
Intelligence 2 (2020), section "SHAP interaction values".

For a row ``x`` and a tree ``f``, the contribution of feature ``i`` is its Shapley value

    phi_i = sum_{S subset F \\ {i}} |S|! (M - |S| - 1)! / M! * (f_x(S u {i}) - f_x(S))

where ``f_x(S)`` is the tree's expected output when the features of ``S`` take ``x``'s values
and the others follow the training data down the tree: at a split on a feature outside
``S`` both children are taken, weighted by the share of the node's training rows (its
*cover*) each received. Algorithm 2 computes all ``phi_i`` in one walk of the tree, keeping
along the path from the root the weights of every subset size (``_extend``/``_unwind``).
``phi`` sums to ``f(x) - E[f]``, with ``E[f] = sum_leaf value * cover(leaf) / cover(root)``.

A split's branch is the one ``predict`` takes (:mod:`ranklearn.tree.predictor`): ``x <= t``
goes left, NaN follows the split's learned direction; rows are float32 as ``predict`` reads
them, compared in float64 (the same branches as predict's float32 comparison).

The kernels run in parallel over blocks of rows; each row's sums run over the trees in order,
so results do not depend on the thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ranklearn.tree.tree import Tree

_BLOCK = 32  # rows a parallel task takes (one path buffer each)


@njit(cache=True, inline="always")
def _extend(pf, pz, po, pw, inv, at, d, zero, one, feat):
    """Add the split on ``feat`` to the path ``at[0:d+1]`` (``zero``/``one``: the fractions of
    the paths where the feature is absent/present that flow on), updating the weights of
    every subset size (Algorithm 2's EXTEND). ``inv[k]`` is ``1 / k`` (no division in the loops)."""
    pf[at + d] = feat
    pz[at + d] = zero
    po[at + d] = one
    pw[at + d] = 1.0 if d == 0 else 0.0
    r = inv[d + 1]
    for i in range(d - 1, -1, -1):
        pw[at + i + 1] += one * pw[at + i] * (i + 1) * r
        pw[at + i] = zero * pw[at + i] * (d - i) * r


@njit(cache=True, inline="always")
def _unwind(pf, pz, po, pw, inv, at, d, k):
    """Remove element ``k`` of the path ``at[0:d+1]`` (Algorithm 2's UNWIND)."""
    one = po[at + k]
    zero = pz[at + k]
    nxt = pw[at + d]
    if one != 0.0:
        r = (d + 1) / one
        for i in range(d - 1, -1, -1):
            tmp = pw[at + i]
            pw[at + i] = nxt * r * inv[i + 1]
            nxt = tmp - pw[at + i] * zero * (d - i) * inv[d + 1]
    else:
        r = (d + 1) / zero
        for i in range(d - 1, -1, -1):
            pw[at + i] = pw[at + i] * r * inv[d - i]
    for i in range(k, d):
        pf[at + i] = pf[at + i + 1]
        pz[at + i] = pz[at + i + 1]
        po[at + i] = po[at + i + 1]


@njit(cache=True, inline="always")
def _unwound_sum(pz, po, pw, inv, at, d, k):
    """The total weight of the path with element ``k`` (one fraction not 0) unwound, without
    changing the path."""
    zero = pz[at + k]
    total = 0.0
    nxt = pw[at + d]
    r = (d + 1) / po[at + k]
    z = zero * inv[d + 1]
    for i in range(d - 1, -1, -1):
        tmp = nxt * r * inv[i + 1]
        total += tmp
        nxt = pw[at + i] - tmp * z * (d - i)
    return total


@njit(cache=True, inline="always")
def _goes_left(x, node, feature, threshold, missing_left):
    v = x[feature[node]]
    if np.isnan(v):
        return missing_left[node]
    return np.float64(v) <= threshold[node]


@njit(cache=True)
def _tree_shap(x, feature, threshold, missing_left, left, right, value, cover, root, phi, path, stack, cond, cond_feat):
    """Add one tree's contributions for row ``x`` to ``phi`` (``root``: its first node).

    Algorithm 2's RECURSE, depth first with an explicit stack (numba cannot load a recursive
    function from its cache). A node's frame is (node, d, the parent's path start, the split
    on the way here: feature, zero and one fractions, and the conditioning fraction); its path
    is the parent's ``d + 1`` elements copied after them, extended by that split. A subtree
    writes only after its parent's path, so a sibling popped later still finds that path.

    ``cond`` (interactions): 0 none; 1 the feature ``cond_feat`` always present, -1 always
    absent; it then stays off the path and the conditioning fraction carries its share.
    """
    if feature[root] < 0:
        return  # a single leaf: all of it is the expected value
    pf, pz, po, pw, inv = path
    s_int, s_float = stack
    top = 0
    s_int[0, 0], s_int[0, 1], s_int[0, 2], s_int[0, 3] = root, 0, 0, -1
    s_float[0, 0], s_float[0, 1], s_float[0, 2] = 1.0, 1.0, 1.0
    while top >= 0:
        node, d, parent, feat = s_int[top, 0], s_int[top, 1], s_int[top, 2], s_int[top, 3]
        zero, one, cond_frac = s_float[top, 0], s_float[top, 1], s_float[top, 2]
        top -= 1
        if cond_frac == 0.0:
            continue
        at = parent + d + 1
        for i in range(d + 1):
            pf[at + i] = pf[parent + i]
            pz[at + i] = pz[parent + i]
            po[at + i] = po[parent + i]
            pw[at + i] = pw[parent + i]
        if cond == 0 or cond_feat != feat:
            _extend(pf, pz, po, pw, inv, at, d, zero, one, feat)
        split = feature[node]
        if split < 0:
            # an element with one fraction 0 unwinds to (sum_j pw[j] (d+1) / (d-j)) / its zero
            # fraction: that sum is the same for all of them, so it is computed once a leaf
            cold = -1.0
            for i in range(1, d + 1):
                one = po[at + i]
                if one != 0.0:
                    w = _unwound_sum(pz, po, pw, inv, at, d, i)
                elif pz[at + i] != 0.0:
                    if cold < 0.0:
                        cold = 0.0
                        for j in range(d):
                            cold += pw[at + j] * (d + 1) * inv[d - j]
                    w = cold / pz[at + i]
                else:
                    continue  # one = zero = 0: no share
                phi[pf[at + i]] += w * (one - pz[at + i]) * value[node] * cond_frac
            continue
        if _goes_left(x, node, feature, threshold, missing_left):
            hot, cold = left[node], right[node]
        else:
            hot, cold = right[node], left[node]
        w = cover[node]
        hot_zero = cover[hot] / w
        cold_zero = cover[cold] / w
        in_zero = 1.0
        in_one = 1.0
        # a feature already on the path: undo its earlier split and redo it with this one
        k = 0
        while k <= d and pf[at + k] != split:
            k += 1
        if k <= d:
            in_zero = pz[at + k]
            in_one = po[at + k]
            _unwind(pf, pz, po, pw, inv, at, d, k)
            d -= 1
        hot_frac = cond_frac
        cold_frac = cond_frac
        if cond != 0 and split == cond_feat:
            if cond > 0:
                cold_frac = 0.0
            else:
                hot_frac *= hot_zero
                cold_frac *= cold_zero
            d -= 1  # the children do not extend the path with it
        for child, czero, cone, cfrac in ((cold, cold_zero * in_zero, 0.0, cold_frac),
                                          (hot, hot_zero * in_zero, in_one, hot_frac)):  # fmt: skip
            top += 1
            s_int[top, 0], s_int[top, 1], s_int[top, 2], s_int[top, 3] = child, d + 1, at, split
            s_float[top, 0], s_float[top, 1], s_float[top, 2] = czero, cone, cfrac


@njit(cache=True)
def _buffers(depth):
    """The path buffers (the paths of the nodes from the root to a leaf, and ``1 / k``) and a stack of frames."""
    size = (depth + 3) * (depth + 4) // 2
    inv = np.zeros(depth + 3)
    inv[1:] = 1.0 / np.arange(1, depth + 3)
    path = (np.empty(size, np.int64), np.empty(size), np.empty(size), np.empty(size), inv)
    stack = (np.empty((depth + 3, 4), np.int64), np.empty((depth + 3, 3)))
    return path, stack


@njit(parallel=True, cache=True)
def _contributions(X, feature, threshold, missing_left, left, right, value, cover, roots, depth, out):
    """``out[r, :F]`` += every tree's contributions for row ``r`` (``out[:, F]`` is left alone)."""
    n = X.shape[0]
    for b in prange((n + _BLOCK - 1) // _BLOCK):
        path, stack = _buffers(depth)
        for t in range(roots.shape[0]):  # a tree for all the block's rows: its nodes stay in cache
            for r in range(b * _BLOCK, min(n, (b + 1) * _BLOCK)):
                _tree_shap(X[r], feature, threshold, missing_left, left, right, value, cover, roots[t], out[r],
                           path, stack, 0, -1)  # fmt: skip


@njit(parallel=True, cache=True)
def _interactions(X, feature, threshold, missing_left, left, right, value, cover, roots, depth, used_ptr, used, out):
    """``out[r, i, j]`` += the interaction values of features ``i != j`` for row ``r``, and the
    diagonal += each feature's contribution minus its row's interactions (so each row of
    ``out[r]`` sums to the contribution). ``used[used_ptr[t]:used_ptr[t+1]]``: the features of
    tree ``t`` (conditioning on any other leaves that tree's contributions unchanged)."""
    n = X.shape[0]
    m = out.shape[1]
    for b in prange((n + _BLOCK - 1) // _BLOCK):
        path, stack = _buffers(depth)
        on = np.zeros(m)
        off = np.zeros(m)
        phi = np.zeros(m)
        for r in range(b * _BLOCK, min(n, (b + 1) * _BLOCK)):
            phi[:] = 0.0
            for t in range(roots.shape[0]):
                _tree_shap(X[r], feature, threshold, missing_left, left, right, value, cover, roots[t], phi,
                           path, stack, 0, -1)  # fmt: skip
                for u in range(used_ptr[t], used_ptr[t + 1]):
                    j = used[u]
                    on[:] = 0.0
                    off[:] = 0.0
                    _tree_shap(X[r], feature, threshold, missing_left, left, right, value, cover, roots[t], on,
                               path, stack, 1, j)  # fmt: skip
                    _tree_shap(X[r], feature, threshold, missing_left, left, right, value, cover, roots[t], off,
                               path, stack, -1, j)  # fmt: skip
                    for k in range(m):
                        if k != j:
                            v = (on[k] - off[k]) / 2.0
                            out[r, k, j] += v
                            phi[k] -= v
            for k in range(m):
                out[r, k, k] += phi[k]


@njit(parallel=True, cache=True)
def _node_counts(X, feature, threshold, missing_left, left, right, roots, count):
    """``count[node]`` = the rows of ``X`` that pass through ``node`` (every tree)."""
    n_trees = roots.shape[0]
    for t in prange(n_trees):
        for r in range(X.shape[0]):
            node = roots[t]
            count[node] += 1
            while feature[node] >= 0:
                node = left[node] if _goes_left(X[r], node, feature, threshold, missing_left) else right[node]
                count[node] += 1


def _depth(tree: Tree) -> int:
    depth = np.zeros(tree.feature.shape[0], dtype=np.int64)
    for node in np.flatnonzero(tree.feature >= 0):  # children come after their parent
        depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1
    return int(depth.max())


class TreeExplainer:
    """The trees of an ensemble packed for TreeSHAP, leaf values times ``scale`` (a forest's
    ``1 / n_estimators``), with each node's cover (:attr:`Tree.count`).

    Raises
    ------
    ValueError
        If a tree's cover is missing (its root's count is 0: a tree read from RankLib, whose
        files keep no counts) or inconsistent (a parent's count is not its children's sum).
    """

    def __init__(self, trees: list[Tree], n_features: int, scale: float = 1.0) -> None:
        for i, t in enumerate(trees):
            if t.feature[0] >= 0 and t.count[0] <= 0:
                raise ValueError(
                    f"tree {i} has no cover (training row counts per node; a model read from RankLib keeps none): "
                    "call set_cover(X) with rows like the training data first"
                )
            internal = np.flatnonzero(t.feature >= 0)
            if np.any(t.count[t.left[internal]] + t.count[t.right[internal]] != t.count[internal]):
                raise ValueError(f"tree {i}'s cover is inconsistent: a node's count is not the sum of its children's")
        self.n_features = int(n_features)
        sizes = [t.feature.shape[0] for t in trees]
        self.roots = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64) if trees else np.zeros(0, np.int64)
        shift = np.repeat(self.roots, sizes)

        def cat(name: str, dtype) -> np.ndarray:
            return np.concatenate([getattr(t, name) for t in trees]).astype(dtype) if trees else np.zeros(0, dtype)

        self.feature = cat("feature", np.int64)
        self.threshold = cat("threshold", np.float64)
        self.missing_left = cat("missing_left", np.bool_)
        self.left = np.where(self.feature >= 0, cat("left", np.int64) + shift, -1)
        self.right = np.where(self.feature >= 0, cat("right", np.int64) + shift, -1)
        self.value = cat("value", np.float64) * scale
        self.cover = cat("count", np.float64)
        self.depth = max((_depth(t) for t in trees), default=0)
        used = [np.unique(t.feature[t.feature >= 0]) for t in trees]
        self.used_ptr = np.concatenate(([0], np.cumsum([u.shape[0] for u in used]))).astype(np.int64)
        self.used = np.concatenate(used).astype(np.int64) if trees else np.zeros(0, np.int64)
        leaf = self.feature < 0
        tree_of = np.repeat(np.arange(len(trees)), sizes)
        root_cover = self.cover[self.roots][tree_of]
        # a single-leaf tree's value is all expectation, whatever its count
        share = np.where(root_cover > 0, self.cover / np.where(root_cover > 0, root_cover, 1.0), 1.0)
        self.expected_value = float(np.sum(np.where(leaf, self.value * share, 0.0)))

    def _arrays(self) -> tuple:
        return (self.feature, self.threshold, self.missing_left, self.left, self.right, self.value, self.cover,
                self.roots, self.depth)  # fmt: skip

    def contributions(self, X: np.ndarray) -> np.ndarray:
        """``(n, F + 1)`` float64: each feature's contribution, the expected value last.

        ``X`` is read as float32 (as ``predict`` reads it).
        """
        X = np.ascontiguousarray(X, dtype=np.float32)
        out = np.zeros((X.shape[0], self.n_features + 1))
        _contributions(X, *self._arrays(), out)
        out[:, -1] = self.expected_value
        return out

    def interactions(self, X: np.ndarray) -> np.ndarray:
        """``(n, F + 1, F + 1)`` float64 SHAP interaction values (symmetric); ``[:, i, i]`` is
        feature ``i``'s main effect, ``[:, F, F]`` the expected value; ``out[r, i].sum()`` is
        row ``r``'s contribution of feature ``i``."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        out = np.zeros((X.shape[0], self.n_features + 1, self.n_features + 1))
        _interactions(X, *self._arrays(), self.used_ptr, self.used, out)
        out[:, -1, -1] = self.expected_value
        return out


def node_counts(trees: list[Tree], X: np.ndarray) -> list[np.ndarray]:
    """For each tree, how many rows of ``X`` pass through each node (int64): a cover for
    :class:`TreeExplainer` when the training counts are unknown."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    sizes = [t.feature.shape[0] for t in trees]
    roots = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    shift = np.repeat(roots, sizes)
    feature = np.concatenate([t.feature for t in trees]).astype(np.int64)
    left = np.where(feature >= 0, np.concatenate([t.left for t in trees]).astype(np.int64) + shift, -1)
    right = np.where(feature >= 0, np.concatenate([t.right for t in trees]).astype(np.int64) + shift, -1)
    count = np.zeros(feature.shape[0], dtype=np.int64)
    _node_counts(X, feature, np.concatenate([t.threshold for t in trees]),
                 np.concatenate([t.missing_left for t in trees]), left, right, roots, count)  # fmt: skip
    return np.split(count, np.cumsum(sizes)[:-1])
