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
