"""Raw-value prediction: the branch-free, 8-rows-at-a-time walk against a one-row-at-a-time
reference, bit for bit."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from ranklearn._threads import numba_threads
from ranklearn.tree.tree import Tree
from ranklearn.tree.predictor import _SERIAL_ROWS, TreePredictor
from ranklearn.tree.binning import BinMapper
from ranklearn.tree.grower import TreeGrower
from _helpers import tree_data


def _random_tree(rng: np.random.Generator, n_features: int, n_leaves: int, values: np.ndarray) -> Tree:
    """A random tree grown leaf by leaf; thresholds drawn from ``values`` (some not float32)."""
    feature, threshold, mleft, left, right = [-1], [0.0], [False], [-1], [-1]
    for _ in range(n_leaves - 1):
        leaves = [i for i, f in enumerate(feature) if f < 0]
        node = leaves[rng.integers(len(leaves))]
        feature[node] = int(rng.integers(n_features))
        threshold[node] = float(rng.choice(values))
        mleft[node] = bool(rng.integers(2))
        left[node], right[node] = len(feature), len(feature) + 1
        for _ in range(2):
            feature.append(-1)
            threshold.append(0.0)
            mleft.append(False)
            left.append(-1)
            right.append(-1)
    n = len(feature)
    return Tree(
        feature=np.array(feature, np.int32),
        bin_threshold=np.zeros(n, np.int32),
        threshold=np.array(threshold),
        missing_left=np.array(mleft),
        left=np.array(left, np.int32),
        right=np.array(right, np.int32),
        value=np.where(np.array(feature) < 0, rng.normal(size=n), 0.0),
        gain=np.zeros(n),
        count=np.zeros(n, np.int64),
    )


def _reference(trees: list[Tree], X: np.ndarray) -> np.ndarray:
    """One row at a time, comparing in double: ``x <= threshold`` left, NaN by missing_left."""
    out = np.zeros(X.shape[0])
    for i, row in enumerate(X.astype(np.float64)):
        s = 0.0
        for tree in trees:
            node = 0
            while tree.feature[node] >= 0:
                x = row[tree.feature[node]]
                go_left = tree.missing_left[node] if np.isnan(x) else x <= tree.threshold[node]
                node = tree.left[node] if go_left else tree.right[node]
            s += tree.value[node]
        out[i] = s
    return out


@pytest.fixture(scope="module")
def ensemble():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(200, 6)).astype(np.float32)
    grid = np.unique(data)
    # float32 data values, doubles between two float32 values (as an imported RankLib model may
    # hold), and the largest float32 (a split sending every value left)
    between = grid[:-1].astype(np.float64) + np.diff(grid.astype(np.float64)) / 3
    values = np.concatenate((grid[::7], between[::7], [float(np.finfo(np.float32).max)]))
    trees = [_random_tree(rng, 6, int(rng.integers(2, 32)), values) for _ in range(40)]
    trees.insert(5, _random_tree(rng, 6, 1, values))  # a single leaf: depth 0
    return trees, grid, between


def _rows(rng, n: int, grid: np.ndarray, between: np.ndarray) -> np.ndarray:
    """Rows mixing thresholds themselves, their float32 neighbours, NaN and ordinary values."""
    pool = np.concatenate((
        grid,
        np.nextafter(grid, np.float32(np.inf)),
        np.nextafter(grid, np.float32(-np.inf)),
        between.astype(np.float32),
        [np.nan, 0.0, -0.0],
    )).astype(np.float32)
    return rng.choice(pool, size=(n, 6))


@pytest.fixture(params=["compiled", "numpy"])
def walk(request, monkeypatch):
    """The walk that predicts: numba's kernels, or numpy's (few rows in a process without numba)."""
    from ranklearn import _compilation

    monkeypatch.setattr(_compilation, "SMALL_INPUTS", "interpreted" if request.param == "numpy" else "compiled")
    return request.param


@pytest.mark.parametrize("n_rows", [0, 1, 7, 8, 13, 100, _SERIAL_ROWS - 1, _SERIAL_ROWS, 1003])
@pytest.mark.parametrize("threads", [1, 2])
def test_equals_row_by_row_reference_bit_for_bit(ensemble, n_rows, threads, walk):
    trees, grid, between = ensemble
    X = _rows(np.random.default_rng(n_rows), n_rows, grid, between)
    predictor = TreePredictor(trees)
    assert predictor.walks_in_numpy(n_rows) == (walk == "numpy")
    with numba_threads(threads):
        got = predictor.predict(X)
    assert got.tobytes() == _reference(trees, X).tobytes()


@pytest.mark.parametrize("n_rows", [5, 100, 300])
def test_reads_the_features_the_splits_use_wherever_they_are(ensemble, n_rows, walk):
    """The walk gathers only the used features: splits on columns 3, 5, 8, 9, 11, 12 of 14."""
    trees, grid, between = ensemble
    columns = np.array([3, 5, 8, 9, 11, 12], np.int32)
    moved = [copy.deepcopy(t) for t in trees]
    for t in moved:
        t.feature[t.feature >= 0] = columns[t.feature[t.feature >= 0]]
    rng = np.random.default_rng(n_rows)
    X = rng.normal(size=(n_rows, 14)).astype(np.float32)
    X[:, columns] = _rows(rng, n_rows, grid, between)
    X[::3, 13] = np.nan
    np.testing.assert_array_equal(TreePredictor(moved).predict(X), _reference(moved, X))
    np.testing.assert_array_equal(TreePredictor(moved).predict(X), _reference(trees, X[:, columns]))


@pytest.mark.parametrize("n_rows", [3, 20, 300])
def test_trees_without_splits_predict_their_values(ensemble, n_rows, walk):
    trees, _, _ = ensemble
    leaves = [t for t in trees if t.feature.shape[0] == 1]
    assert leaves
    X = np.full((n_rows, 2), np.nan, np.float32)
    np.testing.assert_array_equal(TreePredictor(leaves * 3).predict(X), _reference(leaves * 3, X))


def test_adds_to_out_and_reads_any_layout(ensemble, walk):
    trees, grid, between = ensemble
    X = _rows(np.random.default_rng(1), 300, grid, between)
    pred = TreePredictor(trees)
    out = np.full(300, 2.5)
    pred.predict(np.asfortranarray(X.astype(np.float64)), out)
    np.testing.assert_array_equal(out, _reference(trees, X) + 2.5)


def test_float64_thresholds_round_down_to_float32(ensemble, walk):
    """A double threshold between two float32 values: the float32 just below it goes left,
    the one just above goes right, as with double comparison."""
    t = 0.1  # not a float32
    lo = np.float32(t) if np.float32(t) < t else np.nextafter(np.float32(t), np.float32(-np.inf))
    hi = np.nextafter(lo, np.float32(np.inf))
    tree = Tree(
        feature=np.array([0, -1, -1], np.int32),
        bin_threshold=np.zeros(3, np.int32),
        threshold=np.array([t, 0, 0]),
        missing_left=np.array([False, False, False]),
        left=np.array([1, -1, -1], np.int32),
        right=np.array([2, -1, -1], np.int32),
        value=np.array([0.0, -1.0, 1.0]),
        gain=np.zeros(3),
        count=np.zeros(3, np.int64),
    )
    X = np.array([[lo], [hi], [np.nan]], np.float32)
    np.testing.assert_array_equal(TreePredictor([tree]).predict(X), [-1.0, 1.0, 1.0])


def test_empty_ensemble_predicts_zero(walk):
    np.testing.assert_array_equal(TreePredictor([]).predict(np.ones((20, 3), np.float32)), 0.0)


def test_ensemble_predictor_sums_trees():
    X, g, h = tree_data()
    m = BinMapper().fit(X)
    b = m.transform(X)
    trees = []
    for s in range(3):
        t, _, _ = TreeGrower(b, m.n_bins_, g * (s + 1), h, num_leaves=5).grow()
        internal = t.feature >= 0
        t.threshold[internal] = [m.threshold(f, k) for f, k in zip(t.feature[internal], t.bin_threshold[internal])]
        trees.append(t)
    total = sum(TreePredictor([t]).predict(X) for t in trees)
    np.testing.assert_allclose(TreePredictor(trees).predict(X), total)
    np.testing.assert_array_equal(TreePredictor([]).predict(X), 0.0)


def test_layout_records_shallowest_leaf_depth_and_first_leaf_of_each_tree(ensemble):
    """The walk's early stop relies on these: up to the shallowest leaf no row can be on a leaf,
    and within a tree the node ids from its first leaf's on are its leaves (their own children)."""
    trees, _, _ = ensemble
    pred = TreePredictor(trees)
    _, nodes, _, value, layout = pred._raw_layout()
    ends = np.append(pred.roots[1:], nodes.shape[0])
    for tree, root, end, (shallowest, deepest, first_leaf) in zip(trees, pred.roots, ends, layout):
        level = {0: 0}
        for node in range(tree.feature.shape[0]):  # children are numbered after their parent
            if tree.feature[node] >= 0:
                level[tree.left[node]] = level[tree.right[node]] = level[node] + 1
        leaf_levels = [level[n] for n in range(tree.feature.shape[0]) if tree.feature[n] < 0]
        assert (shallowest, deepest) == (min(leaf_levels), max(leaf_levels))
        ids = np.arange(root, end)
        is_leaf = (nodes[root:end, 2] == ids) & (nodes[root:end, 3] == ids)
        np.testing.assert_array_equal(is_leaf, ids >= first_leaf)
        assert end - first_leaf == len(leaf_levels)
        # children stay in their tree; the leaves keep their values, in the tree's order
        assert np.all((nodes[root:end, 2:] >= root) & (nodes[root:end, 2:] < end))
        np.testing.assert_array_equal(value[first_leaf:end], tree.value[tree.feature < 0])
