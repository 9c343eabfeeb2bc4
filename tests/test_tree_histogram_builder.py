"""HistogramBuilder: node sums, histograms and splits on rows, and the seam a distributed trainer replaces."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.tree.binning import MISSING_BIN, N_HIST_BINS, BinMapper
from ranklearn.tree.grower import TreeGrower
from ranklearn.tree.histogram_builder import HistogramBuilder
from _helpers import written


def _data(n=4000, f=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f)).astype(np.float32)
    X[rng.random((n, f)) < 0.03] = np.nan
    g = -(np.nan_to_num(X[:, 0]) > 0.2).astype(float) + 0.4 * np.nan_to_num(X[:, 1]) ** 2 + 0.1 * rng.normal(size=n)
    h = rng.uniform(0.5, 1.5, n)
    m = BinMapper(max_bins=32).fit(X)
    return m.transform(X), m.n_bins_, g.astype(np.float64), h


def _direct(binned, rows, g, h, features):
    """Brute-force histogram of ``rows`` with numpy."""
    out = np.zeros((binned.shape[0], N_HIST_BINS, 3))
    for f in features:
        b = binned[f, rows]
        out[f, :, 0] = np.bincount(b, weights=g[rows], minlength=N_HIST_BINS)
        out[f, :, 1] = np.bincount(b, weights=h[rows], minlength=N_HIST_BINS)
        out[f, :, 2] = np.bincount(b, minlength=N_HIST_BINS)
    return out


def test_split_sums_histograms_and_leaf_rows_follow_the_rows():
    b, n_bins, g, h = _data()
    rows = np.arange(0, b.shape[1], 3, dtype=np.int32)
    feats = np.array([0, 2, 4])
    hb = HistogramBuilder(b, n_bins, g, h, samples=rows, features=feats)
    rg, rh, rc, rq = hb.root()
    assert rc == len(rows) and rg == pytest.approx(g[rows].sum()) and rh == pytest.approx(h[rows].sum())
    assert rq == pytest.approx((g[rows] ** 2).sum())
    (parent,) = hb.histograms([0])
    np.testing.assert_allclose(written(parent, feats, n_bins), _direct(b, rows, g, h, feats)[feats], atol=1e-9)

    # node 0 -> 1, 2 on feature 2 (missing left); then node 2 -> 3, 4 on feature 0 (missing right)
    left_sums, right_sums = hb.split(0, 2, 10, True, 1, 2)
    col = b[2, rows]
    go_left = (col <= 10) | (col == MISSING_BIN)
    for sums, part in ((left_sums, rows[go_left]), (right_sums, rows[~go_left])):
        assert sums[2] == len(part)
        assert sums[0] == pytest.approx(g[part].sum()) and sums[1] == pytest.approx(h[part].sum())
        assert sums[3] == pytest.approx((g[part] ** 2).sum())
    small = 1 if left_sums[2] <= right_sums[2] else 2
    ((hs, hl),) = hb.children_histograms([parent], [small])
    parts = {1: rows[go_left], 2: rows[~go_left]}
    np.testing.assert_allclose(written(hs, feats, n_bins), _direct(b, parts[small], g, h, feats)[feats], atol=1e-9)
    np.testing.assert_allclose(written(hl, feats, n_bins), _direct(b, parts[3 - small], g, h, feats)[feats], atol=1e-9)

    hb.split(2, 0, 15, False, 3, 4)
    r2 = parts[2]
    c0 = b[0, r2]
    expect = {1: parts[1], 3: r2[(c0 <= 15) & (c0 != MISSING_BIN)], 4: r2[(c0 > 15) | (c0 == MISSING_BIN)]}
    samples, ranges = hb.leaf_rows([1, 3, 4])
    assert ranges[:, 0].tolist() == [1, 3, 4]
    for node, s, e in ranges:
        # stable partition: each leaf's rows stay in ascending order
        np.testing.assert_array_equal(samples[s:e], expect[node])

    # several nodes in one call (a batch) equal one call each
    batch = hb.histograms([1, 3, 4])
    for node, hist in zip((1, 3, 4), batch):
        np.testing.assert_array_equal(written(hist, feats, n_bins), written(hb.histograms([node])[0], feats, n_bins))


def _row_order_sum(values, rows):
    total = 0.0
    for i in rows:
        total += values[i]
    return total


def test_split_sums_are_each_sides_row_order_sums_bit_for_bit():
    """The children's sums are each side's values added in row order from +0.0, as one pass
    per side would add them: signed zeros (a side of -0.0 sums to +0.0) and infinities included."""
    b, n_bins, g, h = _data()
    col = b[1]
    go_left = (col <= 12) | (col == MISSING_BIN)
    g[go_left] = -0.0
    g[np.flatnonzero(~go_left)[3]] = np.inf
    h[::11] = -0.0
    hb = HistogramBuilder(b, n_bins, g, h)
    hb.root()
    sides = hb.split(0, 1, 12, True, 1, 2)
    samples, ranges = hb.leaf_rows([1, 2])
    for (_, s, e), (sg, sh, count, sq) in zip(ranges, sides):
        rows = samples[s:e]
        assert count == len(rows)
        squares = (sq, _row_order_sum(g * g, rows))
        for got, want in ((sg, _row_order_sum(g, rows)), (sh, _row_order_sum(h, rows)), squares):
            assert got == want and np.signbit(got) == np.signbit(want)
    assert sides[0][0] == 0.0 and not np.signbit(sides[0][0]) and sides[1][0] == np.inf


class _TwoWorkers(HistogramBuilder):
    """A stand-in for a distributed builder: two local builders on disjoint rows; the client
    sums their node sums and histograms and never holds rows."""

    def __init__(self, binned, n_bins, grad, hess, parts):
        self.workers = [HistogramBuilder(binned, n_bins, grad, hess, samples=p) for p in parts]
        self.features = self.workers[0].features
        self.n_bins = self.workers[0].n_bins

    def root(self):
        sums = [w.root() for w in self.workers]
        return tuple(sum(s[i] for s in sums) for i in range(4))

    def split(self, node, feature, bin_threshold, missing_left, left, right):
        local = [w.split(node, feature, bin_threshold, missing_left, left, right) for w in self.workers]
        return tuple(tuple(sum(s[c][i] for s in local) for i in range(4)) for c in range(2))

    def histograms(self, nodes):
        local = [w.histograms(nodes) for w in self.workers]
        return [sum(hs) for hs in zip(*local)]

    def leaf_rows(self, leaves):
        # rows stay on the workers (each updates its own scores): the client has none
        return np.empty(0, dtype=np.int32), np.zeros((len(leaves), 3), dtype=np.int64)


def test_a_builder_summing_workers_grows_the_same_tree():
    b, n_bins, g, h = _data(seed=1)
    limits = dict(num_leaves=12, min_samples_leaf=30, l2_regularization=0.5)
    tree, _, _ = TreeGrower(b, n_bins, g, h, **limits).grow()
    rows = np.arange(b.shape[1], dtype=np.int32)
    client = _TwoWorkers(b, n_bins, g, h, [rows[rows % 2 == 0], rows[rows % 2 == 1]])
    dtree, _, _ = TreeGrower.from_builder(client, n_bins, **limits).grow()
    assert tree.n_leaves == 12
    for name in ("feature", "bin_threshold", "missing_left", "left", "right", "count"):
        np.testing.assert_array_equal(getattr(dtree, name), getattr(tree, name))
    np.testing.assert_allclose(dtree.value, tree.value, rtol=1e-12)
    np.testing.assert_allclose(dtree.gain, tree.gain, rtol=1e-9)


def test_small_nodes_read_from_the_row_major_copy_give_the_same_sums_bit_for_bit():
    from ranklearn.tree.histogram_builder import ROW_MAJOR_FRACTION

    b, n_bins, g, h = _data(n=6000, seed=2)
    rows_major = np.ascontiguousarray(b.T)
    feats = np.array([0, 1, 3, 4])  # a feature subsample: only these are written
    builders = [HistogramBuilder(b, n_bins, g, h, features=feats, binned_rows=r) for r in (None, rows_major)]
    for hb in builders:
        hb.root()
        hb.split(0, 0, 0, False, 1, 2)  # node 1: the few rows in the lowest bin of feature 0
    start, end = builders[1]._ranges[1]
    assert 0 < end - start < ROW_MAJOR_FRACTION * b.shape[1]  # node 1 takes the row-major path
    plain, via_rows = (hb.histograms([1, 2]) for hb in builders)
    for p, r in zip(plain, via_rows):
        np.testing.assert_array_equal(written(r, feats, n_bins), written(p, feats, n_bins))  # same rows, same order
    node_rows = builders[1].samples[start:end]
    np.testing.assert_allclose(written(via_rows[0], feats, n_bins), _direct(b, node_rows, g, h, feats)[feats], atol=1e-9)
    # a whole tree: the same with the copy as without
    limits = dict(num_leaves=40, min_samples_leaf=5)
    trees = [TreeGrower(b, n_bins, g, h, binned_rows=r, **limits).grow()[0] for r in (None, rows_major)]
    for name in ("feature", "bin_threshold", "missing_left", "count", "value", "gain"):
        np.testing.assert_array_equal(getattr(trees[1], name), getattr(trees[0], name))
