"""Prediction with an ensemble of trees: raw feature values or binned data, in parallel over rows.

Raw values go 8 rows at a time through each tree, in lockstep and without data-dependent
branches (see ``_predict_8``), on one packed 16-byte record per node, each tree's leaves
numbered after its internal nodes, the 8 rows' used features gathered first with their
negations (see ``_gather``); the scores are the same, bit for bit, as walking one row at a
time through the trees in order. Few rows in a process that has not imported numba are walked
in numpy on the same layout (``_predict_numpy``), with the same scores.
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import interprets_small_inputs, kernel, prange
from ranklearn.tree.binning import MISSING_BIN
from ranklearn.tree.tree import Tree


_SERIAL_ROWS = 256  # below this, no parallel region (its start costs more than the work)
#: Steps (rows x trees x the deepest tree's depth) that numpy walks in about 0.1 s, a fifth of
#: what importing numba costs: up to these, a process that has not imported numba walks in numpy
NUMPY_STEPS = 5_000_000


@kernel(cache=True)
def _gather(X, lo, rows, used, buf):
    """Rows ``X[lo:lo+rows]`` as the walk reads them: ``buf[j, 2u]`` is the value of feature
    ``used[u]`` in row ``lo + j`` and ``buf[j, 2u + 1]`` its negation (for mirrored nodes)."""
    for j in range(rows):
        for u in range(used.shape[0]):
            x = X[lo + j, used[u]]
            buf[j, 2 * u] = x
            buf[j, 2 * u + 1] = -x


@kernel(cache=True)
def _step(buf, j, node, nodes, thresholds):
    """One branch-free step of a walk: the child of ``node`` that row ``j`` of ``buf`` goes to.

    ``nodes[node]`` is (the column of ``buf`` to compare: 2 * used feature + mirrored, threshold
    bits, child 0, child 1); the walk goes to child 1 unless ``x <= threshold`` (NaN: child 1),
    ``x`` being negated at a mirrored node (see ``TreePredictor._raw_layout``). A leaf is its
    own two children, so a walk that reached one stays there.
    """
    x = buf[j, nodes[node, 0]]
    return nodes[node, 2 + np.int64(not (x <= thresholds[node, 1]))]


@kernel(cache=True)
def _buffer(n_used):
    """The gathered rows of one group of 8 (zeros: a leaf reads column 0 of a model without splits)."""
    return np.zeros((8, 2 * max(1, n_used)), dtype=np.float32)


@kernel(cache=True)
def _predict_8(X, lo, first, used, nodes, thresholds, value, roots, trees, out, buf):
    """Add the sum of all trees to ``out[first:lo+8]`` for the rows ``X[first:lo+8]``.

    Always walks the 8 rows ``X[lo:lo+8]``; rows before ``first`` are left alone (the last
    group overlaps the one before it when the row count is not a multiple of 8). The rows are
    first gathered into ``buf`` (see ``_gather``): the walk then reads a mirrored node's
    negated value as it reads any other, with no test, and from a few kilobytes that stay in L1.

    The 8 walks through a tree go in lockstep: independent chains of loads the CPU overlaps,
    no branch that depends on one row. ``trees[t]`` is (the depth of tree ``t``'s shallowest
    leaf, its depth, its first leaf's id): up to the first, every walk is on an internal node;
    after it, the group stops as soon as all 8 are on leaves, which is the smallest of the 8
    node ids reaching the first leaf's (a leaf is numbered after every internal node of its
    tree). That saves about a third of the steps of best-first trees, whose deepest leaf is far
    below the typical one. Each row's sum runs over the trees in order, so the result is the
    same as one row at a time.
    """
    _gather(X, lo, 8, used, buf)
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
    for t in range(roots.shape[0]):
        n0 = n1 = n2 = n3 = n4 = n5 = n6 = n7 = roots[t]
        for step in range(1, trees[t, 1] + 1):
            n0 = _step(buf, 0, n0, nodes, thresholds)
            n1 = _step(buf, 1, n1, nodes, thresholds)
            n2 = _step(buf, 2, n2, nodes, thresholds)
            n3 = _step(buf, 3, n3, nodes, thresholds)
            n4 = _step(buf, 4, n4, nodes, thresholds)
            n5 = _step(buf, 5, n5, nodes, thresholds)
            n6 = _step(buf, 6, n6, nodes, thresholds)
            n7 = _step(buf, 7, n7, nodes, thresholds)
            if step >= trees[t, 0] and min(min(min(n0, n1), min(n2, n3)), min(min(n4, n5), min(n6, n7))) >= trees[t, 2]:
                break
        a0 += value[n0]
        a1 += value[n1]
        a2 += value[n2]
        a3 += value[n3]
        a4 += value[n4]
        a5 += value[n5]
        a6 += value[n6]
        a7 += value[n7]
    for j, a in enumerate((a0, a1, a2, a3, a4, a5, a6, a7)):
        if lo + j >= first:
            out[lo + j] += a


@kernel(cache=True)
def _predict_rows(X, used, nodes, thresholds, value, roots, trees, out, buf):
    """Fewer than 8 rows, one at a time."""
    _gather(X, 0, X.shape[0], used, buf)
    for r in range(X.shape[0]):
        s = 0.0
        for t in range(roots.shape[0]):
            node = roots[t]
            while node < trees[t, 2]:
                node = _step(buf, r, node, nodes, thresholds)
            s += value[node]
        out[r] += s


@kernel(cache=True)
def _predict_tail(X, used, nodes, thresholds, value, roots, trees, out, buf):
    """The rows after the last full group of 8: the last 8 rows, adding only the new ones."""
    n = X.shape[0]
    if n < 8:
        _predict_rows(X, used, nodes, thresholds, value, roots, trees, out, buf)
    elif n % 8:
        _predict_8(X, n - 8, n - n % 8, used, nodes, thresholds, value, roots, trees, out, buf)


@kernel(cache=True)
def _predict_raw_serial(X, used, nodes, thresholds, value, roots, trees, out):
    buf = _buffer(used.shape[0])
    for g in range(X.shape[0] // 8):
        _predict_8(X, 8 * g, 8 * g, used, nodes, thresholds, value, roots, trees, out, buf)
    _predict_tail(X, used, nodes, thresholds, value, roots, trees, out, buf)


@kernel(parallel=True, cache=True)
def _predict_raw(X, used, nodes, thresholds, value, roots, trees, out):
    for g in prange(X.shape[0] // 8):
        _predict_8(X, 8 * g, 8 * g, used, nodes, thresholds, value, roots, trees, out, _buffer(used.shape[0]))
    _predict_tail(X, used, nodes, thresholds, value, roots, trees, out, _buffer(used.shape[0]))


@kernel(parallel=True, cache=True)
def _predict_binned(binned, feature, bin_threshold, missing_left, left, right, value, roots, out):
    for i in prange(binned.shape[1]):
        s = 0.0
        for t in range(roots.shape[0]):
            node = roots[t]
            while feature[node] >= 0:
                b = binned[feature[node], i]
                if b == MISSING_BIN:
                    go_left = missing_left[node]
                else:
                    go_left = b <= bin_threshold[node]
                node = left[node] if go_left else right[node]
            s += value[node]
        out[i] += s


def _predict_numpy(X, used, nodes, thresholds, value, roots, trees, out):
    """What ``_predict_raw`` adds to ``out``, for few rows while numba is not imported: the same
    walk (``_gather``'s columns, ``_step``'s comparison in float32) for all rows and trees at
    once, one level a step; each row's sum runs over the trees in order from 0.0, then is added
    to ``out``, as the kernel does, so the scores are the same bit for bit."""
    n = X.shape[0]
    buf = np.zeros((n, 2 * max(1, used.shape[0])), dtype=np.float32)
    buf[:, 0 : 2 * used.shape[0] : 2] = X[:, used]
    buf[:, 1 : 2 * used.shape[0] : 2] = -X[:, used]
    rows = np.arange(n)[:, None]
    node = np.tile(roots, (n, 1))  # (row, tree)
    for _ in range(int(trees[:, 1].max(initial=0))):
        x = buf[rows, nodes[node, 0]]
        node = nodes[node, 2 + np.logical_not(x <= thresholds[node, 1])]
    acc = np.zeros(n)
    for t in range(trees.shape[0]):
        acc += value[node[:, t]]
    out += acc


_ONE_ROOT = np.zeros(1, dtype=np.int64)


def add_tree_binned(tree: Tree, binned: np.ndarray, out: np.ndarray) -> None:
    """Add one tree's outputs on feature-major binned data (n_features, n) to ``out``: what
    ``TreePredictor([tree]).predict_binned(binned, out)`` adds, without packing an ensemble
    (a booster adds each new tree to its scores)."""
    _predict_binned(
        binned,
        tree.feature,
        tree.bin_threshold,
        tree.missing_left,
        tree.left.astype(np.int64),  # the ensemble's child index type: the same compiled kernel
        tree.right.astype(np.int64),
        tree.value,
        _ONE_ROOT,
        out,
    )


class TreePredictor:
    """The trees of an ensemble packed into flat arrays, child indices made global."""

    def __init__(self, trees: list[Tree]) -> None:
        sizes = [t.feature.shape[0] for t in trees]
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64) if trees else np.zeros(0, np.int64)
        self.roots = offsets

        def cat(name: str, dtype) -> np.ndarray:
            if not trees:
                return np.zeros(0, dtype=dtype)
            return np.concatenate([getattr(t, name) for t in trees]).astype(dtype)

        self.feature = cat("feature", np.int32)
        self.threshold = cat("threshold", np.float64)
        self.bin_threshold = cat("bin_threshold", np.int32)
        self.missing_left = cat("missing_left", np.bool_)
        self.value = cat("value", np.float64)
        shift = np.repeat(offsets, sizes) if trees else np.zeros(0, np.int64)
        self.left = np.where(cat("left", np.int64) >= 0, cat("left", np.int64) + shift, -1)
        self.right = np.where(cat("right", np.int64) >= 0, cat("right", np.int64) + shift, -1)
        self._raw: tuple | None = None  # the layout of raw prediction, built on first use

    def _raw_layout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Arrays of the branch-free walk: (the features the splits use, nodes, the same viewed
        as float32, the leaf values, each tree's (shallowest leaf depth, depth, first leaf id)).

        ``nodes`` is int32 (n_nodes, 4): 2 * u + mirrored (``u`` the split feature's place among
        the used ones: the column of the gathered rows, see ``_gather``), the float32 threshold's
        bits, child 0, child 1; a leaf has column 0 and itself as both children. The float64
        thresholds are rounded down to float32: for a float32 ``x``, ``x <= t`` exactly when
        ``x <= float32_down(t)``, so comparing in float32 takes the same branches as comparing
        in double. A split sending NaN right is stored as is (children left, right: NaN fails
        ``x <= t`` and goes right); one sending NaN left is mirrored: threshold ``-t_up`` with
        ``t_up`` the next float32 above ``t``, children right, left. ``-x <= -t_up`` holds for
        ``x > t`` and fails for ``x <= t`` and for NaN, which then go left.

        The nodes are renumbered: each tree keeps its place and its root, its internal nodes
        come first and its leaves after them, so "on a leaf" is one comparison of the node id
        (the values are renumbered with them).
        """
        if self._raw is None:
            leaf = self.feature < 0
            ids = np.arange(self.feature.shape[0], dtype=np.int32)
            thr = self.threshold.astype(np.float32)
            above = thr.astype(np.float64) > self.threshold
            thr[above] = np.nextafter(thr[above], np.float32(-np.inf))
            flip = self.missing_left & ~leaf
            with np.errstate(over="ignore"):  # t = the largest float32: t_up = inf is right
                thr[flip] = -np.nextafter(thr[flip], np.float32(np.inf))
            tree_of = np.repeat(np.arange(self.roots.shape[0]), np.diff(np.append(self.roots, ids.shape[0])))
            order = np.lexsort((leaf, tree_of))  # stable: a root stays its tree's first node
            renumber = np.empty_like(ids)
            renumber[order] = ids
            nodes = np.empty((ids.shape[0], 4), dtype=np.int32)
            used = np.flatnonzero(np.bincount(self.feature[~leaf]))  # sorted, distinct (np.unique imports numpy.ma)
            nodes[:, 0] = np.where(leaf, 0, 2 * np.searchsorted(used, self.feature) + flip)
            nodes[:, 1] = np.where(leaf, np.float32(0), thr).view(np.int32)
            nodes[:, 2] = renumber[np.where(leaf, ids, np.where(flip, self.right, self.left))]
            nodes[:, 3] = renumber[np.where(leaf, ids, np.where(flip, self.left, self.right))]
            # node depths, level by level (children are numbered after their parent)
            depth = np.zeros(ids.shape[0], dtype=np.int64)
            internal = np.flatnonzero(~leaf)
            while internal.shape[0]:
                new = depth.copy()
                new[self.left[internal]] = depth[internal] + 1
                new[self.right[internal]] = depth[internal] + 1
                if np.array_equal(new, depth):
                    break
                depth = new
            if ids.shape[0]:
                trees = np.stack(
                    [np.minimum.reduceat(np.where(leaf, depth, depth.max()), self.roots),
                     np.maximum.reduceat(depth, self.roots),
                     self.roots + np.add.reduceat(~leaf, self.roots)],
                    axis=1,
                )
            else:
                trees = np.zeros((0, 3), np.int64)
            nodes = nodes[order]
            self._raw = (used.astype(np.int64), nodes, nodes.view(np.float32), self.value[order], trees)
        return self._raw

    @staticmethod
    def runs_serially(n_rows: int) -> bool:
        """True when :meth:`predict` walks ``n_rows`` rows on the calling thread, in no parallel region."""
        return n_rows < _SERIAL_ROWS

    def walks_in_numpy(self, n_rows: int) -> bool:
        """True when :meth:`predict` walks ``n_rows`` rows in numpy, not numba: few rows (all
        the trees' walks for them take less than :data:`NUMPY_STEPS` steps) while numba is not
        imported (:func:`ranklearn._compilation.interprets_small_inputs`)."""
        depth = int(self._raw_layout()[4][:, 1].max(initial=0))
        return n_rows * self.roots.shape[0] * depth <= NUMPY_STEPS and interprets_small_inputs()

    def predict(self, X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Sum of the trees' outputs for raw float32 rows ``X`` (n, n_features), added to ``out``."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        out = np.zeros(X.shape[0]) if out is None else out
        used, nodes, thresholds, value, trees = self._raw_layout()
        if self.walks_in_numpy(X.shape[0]):
            _predict_numpy(X, used, nodes, thresholds, value, self.roots, trees, out)
            return out
        kernel = _predict_raw_serial if self.runs_serially(X.shape[0]) else _predict_raw
        kernel(X, used, nodes, thresholds, value, self.roots, trees, out)
        return out

    def predict_binned(self, binned: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Same on feature-major binned data (n_features, n), added to ``out``."""
        out = np.zeros(binned.shape[1]) if out is None else out
        _predict_binned(
            binned,
            self.feature,
            self.bin_threshold,
            self.missing_left,
            self.left,
            self.right,
            self.value,
            self.roots,
            out,
        )
        return out
