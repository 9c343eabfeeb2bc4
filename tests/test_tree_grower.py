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


@pytest.mark.parametrize("unit_hessians", [False, True])
def test_compiled_growth_grows_the_builder_loops_tree(unit_hessians):
    # TreeGrower on local rows grows in one compiled call; from_builder runs the Python loop over
    # the builder: the same tree, bit for bit, and the same rows in every leaf (hessians of 1:
    # squared error, as MART fits)
    X, g, h = tree_data(nan_frac=0.03, seed=4)
    if unit_hessians:
        h = np.ones_like(h)
    m = BinMapper().fit(X)
    b = m.transform(X)
    limits = dict(num_leaves=20, min_samples_leaf=10, l2_regularization=1.0)
    tree, samples, ranges = TreeGrower(b, m.n_bins_, g, h, binned_rows=np.ascontiguousarray(b.T), **limits).grow()
    builder = HistogramBuilder(b, m.n_bins_, g, h)
    loop_tree, loop_samples, loop_ranges = TreeGrower.from_builder(builder, m.n_bins_, **limits).grow()
    for name in ("feature", "bin_threshold", "missing_left", "left", "right", "count", "value", "gain"):
        np.testing.assert_array_equal(getattr(tree, name), getattr(loop_tree, name), err_msg=name)
    np.testing.assert_array_equal(ranges, loop_ranges)
    np.testing.assert_array_equal(samples, loop_samples)
