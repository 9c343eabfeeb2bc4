"""Best-first growth: invariants, Newton leaf values, depth limit, feature and sample subsets."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.tree.binning import BinMapper
from ranklearn.tree.grower import TreeGrower
from ranklearn.tree.histogram_builder import HistogramBuilder
from ranklearn.tree.predictor import TreePredictor
from _helpers import tree_data


@pytest.mark.parametrize("num_leaves,min_leaf,max_depth", [(31, 20, None), (8, 50, None), (31, 5, 3), (2, 1, None)])
def test_grower_invariants_and_prediction_agree_with_partition(num_leaves, min_leaf, max_depth):
    X, g, h = tree_data(nan_frac=0.03, seed=2)
    m = BinMapper().fit(X)
    b = m.transform(X)
    tree, samples, ranges = TreeGrower(
        b, m.n_bins_, g, h, num_leaves=num_leaves, min_samples_leaf=min_leaf, max_depth=max_depth
    ).grow()
    leaves = tree.feature < 0
    assert 1 < leaves.sum() <= num_leaves
    assert np.all(tree.count[leaves] >= min_leaf)
    assert np.all(tree.gain[~leaves] > 0)
    assert sorted(samples.tolist()) == list(range(len(g)))  # a partition of all rows
    # Newton leaf values
    for node, s, e in ranges:
        rows = samples[s:e]
        assert tree.value[node] == pytest.approx(-g[rows].sum() / h[rows].sum())
    if max_depth is not None:
        depth = np.zeros(len(tree.feature), dtype=int)
        for i in range(len(tree.feature)):
            if tree.feature[i] >= 0:
                depth[tree.left[i]] = depth[tree.right[i]] = depth[i] + 1
        assert depth.max() <= max_depth
    # raw-value and binned prediction both send every row to the leaf the grower put it in
    internal = ~leaves
    tree.threshold[internal] = [m.threshold(f, t) for f, t in zip(tree.feature[internal], tree.bin_threshold[internal])]
    expected = np.empty(len(g))
    for node, s, e in ranges:
        expected[samples[s:e]] = tree.value[node]
    pred = TreePredictor([tree])
    np.testing.assert_array_equal(pred.predict(X), expected)
    np.testing.assert_array_equal(pred.predict_binned(b), expected)


def test_grower_respects_feature_subset_and_sample_subset():
    X, g, h = tree_data(seed=3)
    m = BinMapper().fit(X)
    b = m.transform(X)
    rows = np.arange(0, len(g), 2, dtype=np.int32)
    tree, samples, _ = TreeGrower(b, m.n_bins_, g, h, samples=rows, features=np.array([3, 4])).grow()
    assert set(tree.feature[tree.feature >= 0]) <= {3, 4}
    assert sorted(samples.tolist()) == rows.tolist()


def test_no_split_when_gradients_are_zero():
    X, g, h = tree_data()
    m = BinMapper().fit(X)
    tree, _, ranges = TreeGrower(m.transform(X), m.n_bins_, np.zeros_like(g), np.zeros_like(h)).grow()
    assert len(tree.feature) == 1 and tree.value[0] == 0.0 and len(ranges) == 1


@pytest.mark.parametrize("leaf_order", ["gain", "deviance"])
@pytest.mark.parametrize("unit_hessians", [False, True])
def test_compiled_growth_grows_the_builder_loops_tree(unit_hessians, leaf_order):
    # TreeGrower on local rows grows in one compiled call; from_builder runs the Python loop over
    # the builder: the same tree, bit for bit, and the same rows in every leaf (hessians of 1:
    # squared error, as MART fits)
    X, g, h = tree_data(nan_frac=0.03, seed=4)
    if unit_hessians:
        h = np.ones_like(h)
    m = BinMapper().fit(X)
    b = m.transform(X)
    limits = dict(num_leaves=20, min_samples_leaf=10, l2_regularization=1.0, leaf_order=leaf_order)
    tree, samples, ranges = TreeGrower(b, m.n_bins_, g, h, binned_rows=np.ascontiguousarray(b.T), **limits).grow()
    builder = HistogramBuilder(b, m.n_bins_, g, h)
    loop_tree, loop_samples, loop_ranges = TreeGrower.from_builder(builder, m.n_bins_, **limits).grow()
    for name in ("feature", "bin_threshold", "missing_left", "left", "right", "count", "value", "gain"):
        np.testing.assert_array_equal(getattr(tree, name), getattr(loop_tree, name), err_msg=name)
    np.testing.assert_array_equal(ranges, loop_ranges)
    np.testing.assert_array_equal(samples, loop_samples)


def _ranklib_leaves(b, g, num_leaves, min_leaf):
    """RankLib's ``RegressionTree.fit`` on unit hessians, written out with NumPy: a queue of
    leaves in descending order of deviance (sum of squares of the responses about their mean),
    a new leaf inserted ahead of those of equal deviance (RankLib's ``insert``); the head is split
    at its least-squares best threshold (the first that maximizes ``sum_L^2 / n_L + sum_R^2 /
    n_R``, both sides >= ``min_leaf``, whatever it gains), or kept as a final leaf when it has
    no such threshold or a deviance of 0. Returns the leaves' row sets."""

    def deviance(rows):
        return float((g[rows] ** 2).sum() - g[rows].sum() ** 2 / len(rows))

    def best_split(rows):
        if deviance(rows) <= 1e-12 * (g[rows] ** 2).sum():
            return None
        best = None
        for f in range(b.shape[0]):
            for t in np.unique(b[f, rows])[:-1]:
                left = rows[b[f, rows] <= t]
                right = rows[b[f, rows] > t]
                if len(left) < min_leaf or len(right) < min_leaf:
                    continue
                s = g[left].sum() ** 2 / len(left) + g[right].sum() ** 2 / len(right)
                if best is None or s > best[0]:
                    best = (s, left, right)
        return best

    def insert(queue, rows):
        i = 0
        while i < len(queue) and deviance(queue[i]) > deviance(rows):
            i += 1
        queue.insert(i, rows)

    queue, final = [], []
    insert(queue, np.arange(b.shape[1]))
    while queue and len(queue) + len(final) < num_leaves:
        leaf = queue.pop(0)
        found = best_split(leaf) if len(leaf) >= 2 * min_leaf else None
        if found is None:
            final.append(leaf)
        else:
            insert(queue, found[1])
            insert(queue, found[2])
    return sorted(tuple(sorted(r.tolist())) for r in queue + final)


def _leaves(b, n_bins, g, **limits):
    """The leaves' row sets of a tree, grown compiled and through a builder (asserted equal)."""
    out = []
    for tree, samples, ranges in (
        TreeGrower(b, n_bins, g, np.ones_like(g), **limits).grow(),
        TreeGrower.from_builder(HistogramBuilder(b, n_bins, g, np.ones_like(g)), n_bins, **limits).grow(),
    ):
        out.append(sorted(tuple(sorted(samples[s:e].tolist())) for _, s, e in ranges))
    assert out[0] == out[1]
    return out[0]


def test_deviance_order_grows_ranklibs_tree_and_gain_order_another():
    """leaf_order="deviance" is RankLib's growth (a brute-force reference of its queue); on this
    data the gain order (LightGBM's) stops with other leaves, so the option is not a no-op."""
    rng = np.random.default_rng(7)
    n = 400
    X = rng.normal(size=(n, 3))
    # one feature separates a large low-variance group from a small noisy one: the two orders
    # disagree about which leaf to refine next
    g = np.where(X[:, 0] > 1.0, rng.normal(0, 3.0, n), 0.4 * X[:, 1] + 0.05 * rng.normal(size=n))
    h = np.ones(n)
    m = BinMapper(max_bins=16).fit(X)
    b = m.transform(X)

    reference = _ranklib_leaves(b, g, 6, 5)
    assert len(reference) == 6
    assert _leaves(b, m.n_bins_, g, num_leaves=6, min_samples_leaf=5, leaf_order="deviance") == reference
    assert _leaves(b, m.n_bins_, g, num_leaves=6, min_samples_leaf=5, leaf_order="gain") != reference


def test_deviance_order_splits_the_newest_of_two_leaves_of_equal_deviance():
    # the root splits {0, 2} | {10, 12}: both children have deviance 2; RankLib queues the right
    # child ahead of the left (a new leaf goes before leaves of equal deviance) and splits it
    # first; the gain order takes the lower node id on a tie, the left child
    b = np.arange(4, dtype=np.uint8)[None, :]
    n_bins = np.array([4])
    g = np.array([0.0, 2.0, 10.0, 12.0])
    limits = dict(num_leaves=3, min_samples_leaf=1, min_sum_hessian=0.0)
    assert _ranklib_leaves(b, g, 3, 1) == [(0, 1), (2,), (3,)]
    assert _leaves(b, n_bins, g, leaf_order="deviance", **limits) == [(0, 1), (2,), (3,)]
    assert _leaves(b, n_bins, g, leaf_order="gain", **limits) == [(0,), (1,), (2, 3)]


def test_deviance_order_splits_a_leaf_whose_best_split_gains_nothing_as_ranklib():
    # x = 0 0 1 1 5 5, g = 0 1 0 1 9 9: the root splits {0..3} | {4, 5}; the left leaf's only
    # split ({0, 1} | {2, 3}) leaves both means at 0.5, a gain of 0: RankLib splits it anyway
    # (its deviance is 1), the gain order does not; {4, 5} has deviance 0: never split
    b = np.array([[0, 0, 1, 1, 2, 2]], dtype=np.uint8)
    n_bins = np.array([3])
    g = np.array([0.0, 1.0, 0.0, 1.0, 9.0, 9.0])
    limits = dict(num_leaves=4, min_samples_leaf=1, min_sum_hessian=0.0)
    assert _ranklib_leaves(b, g, 4, 1) == [(0, 1), (2, 3), (4, 5)]
    assert _leaves(b, n_bins, g, leaf_order="deviance", **limits) == [(0, 1), (2, 3), (4, 5)]
    assert _leaves(b, n_bins, g, leaf_order="gain", **limits) == [(0, 1, 2, 3), (4, 5)]
    # asked for a gain, the deviance order makes none that gains nothing
    assert _leaves(b, n_bins, g, leaf_order="deviance", min_gain_to_split=1e-6, **limits) == [(0, 1, 2, 3), (4, 5)]


def test_deviance_order_equals_ranklib_on_random_small_trees():
    # responses with many ties (the case where the rules above matter), unit hessians
    rng = np.random.default_rng(11)
    for _ in range(60):
        n = int(rng.integers(8, 60))
        X = rng.integers(0, 6, size=(n, 2)).astype(float)
        m = BinMapper().fit(X)
        b = m.transform(X)
        g = rng.integers(0, 3, n).astype(float)
        num_leaves, min_leaf = int(rng.integers(3, 9)), int(rng.integers(1, 3))
        got = _leaves(b, m.n_bins_, g, num_leaves=num_leaves, min_samples_leaf=min_leaf, min_sum_hessian=0.0,
                      leaf_order="deviance")  # fmt: skip
        assert got == _ranklib_leaves(b, g, num_leaves, min_leaf)


def test_unknown_leaf_order_is_refused():
    X, g, h = tree_data()
    m = BinMapper().fit(X)
    with pytest.raises(ValueError, match="leaf_order"):
        TreeGrower(m.transform(X), m.n_bins_, g, h, leaf_order="variance")
