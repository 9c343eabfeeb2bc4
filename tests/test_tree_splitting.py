"""Best split from a histogram against an exhaustive search of thresholds and missing directions."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.tree.binning import MISSING_BIN, BinMapper
from ranklearn.tree.histogram import build_histogram, new_histogram
from ranklearn.tree.splitting import find_best_split
from _helpers import tree_data


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
    X, g, h = tree_data(n=600, seed=4)
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
