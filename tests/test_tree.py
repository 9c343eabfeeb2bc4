"""The tree engine: binning, histograms, split finding, best-first growth, prediction."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.tree.binning import MISSING_BIN, BinMapper
from ranklearn.tree.grower import TreeGrower
from ranklearn.tree.histogram import build_histogram, new_histogram, subtract_histogram
from ranklearn.tree.predictor import TreePredictor
from ranklearn.tree.splitting import find_best_split


def _data(n=3000, f=6, seed=0, nan_frac=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f)).astype(np.float32)
    X[:, 1] = rng.integers(0, 4, n)  # few distinct values
    X[:, 2] = np.where(rng.random(n) < 0.7, 0.0, rng.exponential(size=n))  # heavy mass at 0
    if nan_frac:
        X[rng.random((n, f)) < nan_frac] = np.nan
    g = -(X[:, 0] > 0.3).astype(float) + 0.5 * np.nan_to_num(X[:, 2]) + 0.1 * rng.normal(size=n)
    h = rng.uniform(0.5, 1.5, n)
    return X, g.astype(np.float64), h


def test_bins_are_quantiles_of_data_values_and_nan_has_its_own():
    X, _, _ = _data(nan_frac=0.05)
    m = BinMapper(max_bins=32).fit(X)
    b = m.transform(X)
    assert b.shape == (X.shape[1], X.shape[0]) and b.dtype == np.uint8
    for f in range(X.shape[1]):
        col = X[:, f]
        finite = col[~np.isnan(col)]
        edges = m.edges_[f, : m.n_edges_[f]]
        assert m.n_bins_[f] <= 32
        assert np.all(np.isin(edges, finite))  # every edge is a value seen in the data
        assert np.all(np.diff(edges) > 0)
        np.testing.assert_array_equal(b[f, np.isnan(col)], MISSING_BIN)
        # bin b holds edges[b-1] < x <= edges[b]
        np.testing.assert_array_equal(b[f, ~np.isnan(col)], np.searchsorted(edges, finite, side="left"))
    assert m.n_bins_[1] == 4  # four distinct values, four bins
    counts = np.bincount(m.transform(X)[0][~np.isnan(X[:, 0])], minlength=32)
    assert counts.max() < 3 * counts.mean()  # quantile bins are roughly balanced


def test_has_missing_finds_a_single_nan():
    from ranklearn.tree.binning import has_missing

    X, _, _ = _data()
    m = BinMapper().fit(X)
    assert not has_missing(m.transform(X))
    X[1234, 5] = np.nan
    assert has_missing(m.transform(X))


def test_subsampled_edges_come_from_the_subsample_rows():
    X, _, _ = _data(n=5000)
    m = BinMapper(max_bins=255, subsample=1000, random_state=0).fit(X)
    rows = np.sort(np.random.default_rng(0).choice(5000, size=1000, replace=False))
    full = BinMapper(max_bins=255, subsample=None).fit(X[rows])
    np.testing.assert_array_equal(m.edges_, full.edges_)


def test_bin_mapper_round_trips_through_dict_and_checks_width():
    X, _, _ = _data()
    m = BinMapper(max_bins=16).fit(X)
    m2 = BinMapper.from_dict(m.to_dict())
    np.testing.assert_array_equal(m.transform(X), m2.transform(X))
    with pytest.raises(ValueError, match="features"):
        m.transform(X[:, :3])
    with pytest.raises(ValueError, match="max_bins"):
        BinMapper(max_bins=256)


def test_histogram_and_subtraction_match_direct_sums():
    X, g, h = _data(nan_frac=0.02)
    m = BinMapper(max_bins=20).fit(X)
    b = m.transform(X)
    feats = np.arange(X.shape[1], dtype=np.int64)
    allrows = np.arange(X.shape[0], dtype=np.int32)
    sub = np.sort(np.random.default_rng(1).choice(X.shape[0], 1000, replace=False)).astype(np.int32)
    rest = np.setdiff1d(allrows, sub).astype(np.int32)
    parent, child, other = new_histogram(6), new_histogram(6), new_histogram(6)
    build_histogram(b, allrows, g, h, feats, parent)
    build_histogram(b, sub, g, h, feats, child)
    build_histogram(b, rest, g, h, feats, other)
    for f in range(6):
        for k in (0, 5, MISSING_BIN):
            rows = sub[b[f, sub] == k]
            assert child[f, k, 2] == len(rows)
            assert child[f, k, 0] == pytest.approx(g[rows].sum())
            assert child[f, k, 1] == pytest.approx(h[rows].sum())
    subtract_histogram(parent, child, feats, parent)
    np.testing.assert_allclose(parent, other, atol=1e-9)


def _exhaustive_best(X, b, g, h, mapper, min_leaf, l2=0.0):
    """Try every threshold and missing direction directly on the rows."""
    def score(rows):
        return g[rows].sum() ** 2 / (h[rows].sum() + l2)

    n = len(g)
    allr = np.arange(n)
    best = (0.0, -1, 0, False)
    for f in range(X.shape[1]):
        miss = b[f] == MISSING_BIN
        for t in range(mapper.n_bins_[f]):
            for mleft in ((False, True) if miss.any() else (None,)):
                left = (b[f] <= t) & ~miss
                if mleft:
                    left |= miss
                nl = left.sum()
                if nl < min_leaf or n - nl < min_leaf:
                    continue
                gain = score(allr[left]) + score(allr[~left]) - score(allr)
                if gain > best[0] + 1e-12:
                    best = (gain, f, t, mleft)
    return best


@pytest.mark.parametrize("nan_frac", [0.0, 0.1])
def test_best_split_equals_exhaustive_search(nan_frac):
    X, g, h = _data(n=600, nan_frac=nan_frac, seed=4)
    m = BinMapper(max_bins=12).fit(X)
    b = m.transform(X)
    hist = new_histogram(6)
    feats = np.arange(6, dtype=np.int64)
    build_histogram(b, np.arange(600, dtype=np.int32), g, h, feats, hist)
    gain, f, t, mleft = find_best_split(hist, feats, m.n_bins_, g.sum(), h.sum(), 600.0, 0.0, 20, 1e-3, 0.0)
    eg, ef, et, emleft = _exhaustive_best(X, b, g, h, m, 20)
    assert (f, t) == (ef, et)
    assert gain == pytest.approx(eg, rel=1e-9)
    if emleft is not None:
        assert mleft == emleft


@pytest.mark.parametrize("later_scale,winner", [(1 + 1e-13, 0), (1 - 1e-13, 0), (1 + 1e-6, 1)])
def test_features_cutting_rows_alike_tie_within_rounding_to_the_first(later_scale, winner):
    # feature 1 is feature 0 with its gradient sums off by rounding (another summation
    # order, as in a distributed fit): the first feature keeps the split; a real gain wins
    X, g, h = _data(n=600, seed=4)
    m = BinMapper(max_bins=12).fit(X)
    b = m.transform(X)
    b[1] = b[0]
    hist = new_histogram(2)
    feats = np.arange(2, dtype=np.int64)
    build_histogram(b[:2], np.arange(600, dtype=np.int32), g, h, feats, hist)
    hist[1, :, 0] *= later_scale
    n_bins = m.n_bins_[:2].copy()
    n_bins[1] = n_bins[0]
    gain, f, _, _ = find_best_split(hist, feats, n_bins, g.sum(), h.sum(), 600.0, 0.0, 20, 1e-3, 0.0)
    assert f == winner


@pytest.mark.parametrize("num_leaves,min_leaf,max_depth", [(31, 20, None), (8, 50, None), (31, 5, 3), (2, 1, None)])
def test_grower_invariants_and_prediction_agree_with_partition(num_leaves, min_leaf, max_depth):
    X, g, h = _data(nan_frac=0.03, seed=2)
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
    X, g, h = _data(seed=3)
    m = BinMapper().fit(X)
    b = m.transform(X)
    rows = np.arange(0, len(g), 2, dtype=np.int32)
    tree, samples, _ = TreeGrower(b, m.n_bins_, g, h, samples=rows, features=np.array([3, 4])).grow()
    assert set(tree.feature[tree.feature >= 0]) <= {3, 4}
    assert sorted(samples.tolist()) == rows.tolist()


def test_no_split_when_gradients_are_zero():
    X, g, h = _data()
    m = BinMapper().fit(X)
    tree, _, ranges = TreeGrower(m.transform(X), m.n_bins_, np.zeros_like(g), np.zeros_like(h)).grow()
    assert len(tree.feature) == 1 and tree.value[0] == 0.0 and len(ranges) == 1


def test_ensemble_predictor_sums_trees():
    X, g, h = _data()
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
