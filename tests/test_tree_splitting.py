"""Best split from a histogram against an exhaustive search of thresholds and missing directions."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.tree.binning import MISSING_BIN, BinMapper
from ranklearn.tree.histogram import build_histogram, new_histogram, subtract_histogram
from ranklearn.tree.splitting import children_histograms_splits, find_best_split
from _helpers import tree_data, written


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
    X, g, h = tree_data(n=600, nan_frac=nan_frac, seed=4)
    m = BinMapper(max_bins=12).fit(X)
    b = m.transform(X)
    hist = new_histogram(6)
    feats = np.arange(6, dtype=np.int64)
    build_histogram(b, np.arange(600, dtype=np.int32), g, h, feats, m.n_bins_, hist)
    gain, f, t, mleft = find_best_split(hist, feats, m.n_bins_, g.sum(), h.sum(), 600.0, 0.0, 20, 1e-3, 0.0)
    eg, ef, et, emleft = _exhaustive_best(X, b, g, h, m, 20)
    assert (f, t) == (ef, et)
    assert gain == pytest.approx(eg, rel=1e-9)
    if emleft is not None:
        assert mleft == emleft


def _scalar_best_of_feature(hf, nb, sum_g, sum_h, count, l2, min_leaf, min_hess):
    """Each threshold in turn (missing values right, then left), the first strictly best kept; a
    threshold at a bin without rows is not tried (it cuts the rows as the one below it)."""
    def score(g, h):
        return g * g / (h + l2) if h + l2 > 0.0 else 0.0

    parent = score(sum_g, sum_h)
    mg, mh, mc = hf[MISSING_BIN]
    best = (-np.inf, 0, False)
    gl = hl = cl = 0.0
    for t in range(nb if mc > 0.0 else nb - 1):
        gl, hl, cl = gl + hf[t, 0], hl + hf[t, 1], cl + hf[t, 2]
        if hf[t, 2] == 0.0:
            continue
        for side in (0, 1) if mc > 0.0 else (0,):
            if side == 1 and t == nb - 1:
                continue
            gL, hL, cL = (gl, hl, cl) if side == 0 else (gl + mg, hl + mh, cl + mc)
            gR, hR, cR = sum_g - gL, sum_h - hL, count - cL
            if cL < min_leaf or cR < min_leaf or hL < min_hess or hR < min_hess:
                continue
            gain = score(gL, hL) + score(gR, hR) - parent
            if gain > best[0]:
                best = (gain, t, side == 1 if mc > 0.0 else cL >= cR)
    return best


@pytest.mark.parametrize("seed", range(6))
def test_each_features_best_threshold_is_the_scalar_searchs_bit_for_bit(seed):
    """The search computes all thresholds' gains at once; it keeps the one a threshold-by-threshold
    search keeps (the first strictly best, missing values right before left), with the same gain."""
    rng = np.random.default_rng(seed)
    nb = np.array([1, 2, 7, 40, 255, 255, 255], dtype=np.int64)
    hist = new_histogram(len(nb))
    for f, k in enumerate(nb):
        cnt = rng.integers(0, 4, k) * (rng.random(k) < 0.7)  # empty bins: equal gains, ties
        hist[f, :k, 2] = cnt
        hist[f, :k, 0] = rng.normal(size=k) * cnt
        hist[f, :k, 1] = np.round(rng.random(k), 1) * cnt
        mc = float(rng.integers(0, 8)) * (f % 2)
        hist[f, MISSING_BIN] = (rng.normal() * mc, rng.random() * mc, mc)
    feats = np.arange(len(nb), dtype=np.int64)
    sum_g, sum_h, count = hist[4, :255].sum(0) + hist[4, MISSING_BIN]
    for l2, min_leaf, min_hess in ((0.0, 1, 0.0), (1.0, 20, 1e-3), (0.0, 5, 2.0)):
        gain, f, t, mleft = find_best_split(hist, feats, nb, sum_g, sum_h, count, l2, min_leaf, min_hess, -np.inf)
        limits = (sum_g, sum_h, count, l2, min_leaf, min_hess)
        per_feature = [_scalar_best_of_feature(hist[i], nb[i], *limits) for i in feats]
        assert f >= 0 and per_feature[f] == (gain, t, mleft)
        for i in feats:  # each feature's own search: the one feature of the histogram
            one = find_best_split(hist, feats[i : i + 1], nb, sum_g, sum_h, count, l2, min_leaf, min_hess, -np.inf)
            if per_feature[i][0] > -np.inf:
                assert one == (per_feature[i][0], i, *per_feature[i][1:])


@pytest.mark.parametrize("later_scale,winner", [(1 + 1e-13, 0), (1 - 1e-13, 0), (1 + 1e-6, 1)])
def test_features_cutting_rows_alike_tie_within_rounding_to_the_first(later_scale, winner):
    # feature 1 is feature 0 with its gradient sums off by rounding (another summation
    # order, as in a distributed fit): the first feature keeps the split; a real gain wins
    X, g, h = tree_data(n=600, seed=4)
    m = BinMapper(max_bins=12).fit(X)
    b = m.transform(X)
    b[1] = b[0]
    n_bins = m.n_bins_[:2].copy()
    n_bins[1] = n_bins[0]
    hist = new_histogram(2)
    feats = np.arange(2, dtype=np.int64)
    build_histogram(b[:2], np.arange(600, dtype=np.int32), g, h, feats, n_bins, hist)
    hist[1, :, 0] *= later_scale
    gain, f, _, _ = find_best_split(hist, feats, n_bins, g.sum(), h.sum(), 600.0, 0.0, 20, 1e-3, 0.0)
    assert f == winner


@pytest.mark.parametrize("find", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("threads", [1, 2])
def test_children_kernel_equals_histograms_subtraction_and_split_search_bit_for_bit(find, threads):
    import numba

    X, g, h = tree_data(n=3000, nan_frac=0.05, seed=7)
    m = BinMapper(max_bins=40).fit(X)
    b, nb = m.transform(X), m.n_bins_
    feats = np.array([0, 2, 3, 5], dtype=np.int64)  # a feature subsample
    rows = np.arange(3000, dtype=np.int32)
    small_rows = np.sort(np.random.default_rng(3).choice(3000, 700, replace=False)).astype(np.int32)
    large_rows = np.setdiff1d(rows, small_rows).astype(np.int32)
    limits = (2.0, 20, 1e-3, 0.0)  # l2, min_samples_leaf, min_sum_hessian, min_gain
    parent = new_histogram(6)
    build_histogram(b, rows, g, h, feats, nb, parent)
    # the separate steps
    small, large = new_histogram(6), parent.copy()
    build_histogram(b, small_rows, g, h, feats, nb, small)
    subtract_histogram(large, small, feats, nb, large)
    sums = np.array([(g[r].sum(), h[r].sum(), len(r)) for r in (small_rows, large_rows)])
    expected = [
        find_best_split(hist, feats, nb, *sums[k], *limits) if find[k] else (0.0, -1, 0, False)
        for k, hist in enumerate((small, large))
    ]
    # one kernel
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        fused_small = new_histogram(6)
        fused_large = parent.copy()
        found = children_histograms_splits(b, small_rows, g, h, feats, nb, fused_large, fused_small, sums,
                                           np.array(find), *limits)  # fmt: skip
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(written(fused_small, feats, nb), written(small, feats, nb))
    np.testing.assert_array_equal(written(fused_large, feats, nb), written(large, feats, nb))
    assert [tuple(found[:4]), tuple(found[4:])] == [tuple(e) for e in expected]
    assert any(e[1] >= 0 for e in expected)  # a split was found: the comparison says something


@pytest.mark.parametrize("seed", range(4))
def test_rounding_residues_in_empty_bins_do_not_move_the_threshold(seed):
    """An empty bin of a child's histogram is parent - sibling: 0 counts exactly, but gradient
    sums off zero by rounding, of either sign with the summation order (a distributed fit's).
    The search keeps the same feature and threshold, whatever the residues."""
    rng = np.random.default_rng(seed)
    nb = np.array([40, 255, 255], dtype=np.int64)
    hist = new_histogram(len(nb))
    for f, k in enumerate(nb):
        cnt = rng.integers(1, 6, k) * (rng.random(k) < 0.5)
        hist[f, :k, 2] = cnt
        hist[f, :k, 0] = rng.normal(size=k) * cnt
        hist[f, :k, 1] = rng.random(k) * cnt
    feats = np.arange(len(nb), dtype=np.int64)
    sum_g, sum_h, count = hist[0, :40].sum(0)
    clean = find_best_split(hist, feats, nb, sum_g, sum_h, count, 0.0, 1, 0.0, -np.inf)
    assert clean[1] >= 0 and hist[clean[1], clean[2], 2] > 0  # a threshold at a bin with rows
    for sign in (1.0, -1.0):
        noisy = hist.copy()
        empty = noisy[:, :, 2] == 0.0
        noisy[:, :, 0][empty] = sign * 1e-13 * (1 + rng.random(empty.sum()))
        got = find_best_split(noisy, feats, nb, sum_g, sum_h, count, 0.0, 1, 0.0, -np.inf)
        assert got[1:] == clean[1:] and got[0] == pytest.approx(clean[0], rel=1e-9)
