"""Gradient histograms and histogram subtraction against direct sums."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.tree.binning import MISSING_BIN, BinMapper
from ranklearn.tree.histogram import build_histogram, new_histogram, subtract_histogram
from _helpers import tree_data, written


def test_histogram_and_subtraction_match_direct_sums():
    X, g, h = tree_data(nan_frac=0.02)
    m = BinMapper(max_bins=20).fit(X)
    b = m.transform(X)
    feats = np.arange(X.shape[1], dtype=np.int64)
    allrows = np.arange(X.shape[0], dtype=np.int32)
    sub = np.sort(np.random.default_rng(1).choice(X.shape[0], 1000, replace=False)).astype(np.int32)
    rest = np.setdiff1d(allrows, sub).astype(np.int32)
    parent, child, other = new_histogram(6), new_histogram(6), new_histogram(6)
    nb = m.n_bins_
    build_histogram(b, allrows, g, h, feats, nb, parent)
    build_histogram(b, sub, g, h, feats, nb, child)
    build_histogram(b, rest, g, h, feats, nb, other)
    cells = written(child, feats, nb)
    for f in range(6):
        for k in (0, 5, nb[f] - 1, MISSING_BIN):
            rows = sub[b[f, sub] == k]
            assert cells[f, k, 2] == len(rows)
            assert cells[f, k, 0] == pytest.approx(g[rows].sum())
            assert cells[f, k, 1] == pytest.approx(h[rows].sum())
    for f in range(6):  # only value bins and the missing bin are written: every one of them
        unused = np.ones(256, bool)
        unused[: nb[f]] = unused[MISSING_BIN] = False
        assert not (b[f][:, None] == np.flatnonzero(unused)).any()
    subtract_histogram(parent, child, feats, nb, parent)
    np.testing.assert_allclose(written(parent, feats, nb), written(other, feats, nb), atol=1e-9)


@pytest.mark.parametrize("step", [1, 3, 10])
def test_each_bin_is_its_rows_summed_in_row_order_bit_for_bit(step):
    """The histogram's sums are those of adding each bin's rows one by one in row order
    (np.add.at), exactly: the vector adds are the scalar ones, lane by lane. Every row (read
    without a gather), every third, and every tenth (sparse: its bins are prefetched)."""
    X, g, h = tree_data(nan_frac=0.02)
    g[::13] = -0.0
    m = BinMapper(max_bins=40).fit(X)
    b, nb = m.transform(X), m.n_bins_
    feats = np.array([0, 2, 3, 4, 5], dtype=np.int64)  # two groups, the last one short
    rows = np.arange(0, X.shape[0], step, dtype=np.int32)
    hist = new_histogram(X.shape[1])
    build_histogram(b, rows, g, h, feats, nb, hist)
    for f in feats:
        want = np.zeros((256, 3))
        for c, values in enumerate((g[rows], h[rows], np.ones(rows.shape[0]))):
            np.add.at(want[:, c], b[f, rows], values)
        for k in [*range(nb[f]), MISSING_BIN]:
            assert np.array_equal(hist[f, k], want[k]) and np.array_equal(np.signbit(hist[f, k]), np.signbit(want[k]))
