"""BatchedTreeGrower: several splits per call to the rows, TreeGrower's tree node for node."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.tree.batched_grower import BatchedTreeGrower
from ranklearn.tree.binning import BinMapper
from ranklearn.tree.grower import TreeGrower
from ranklearn.tree.histogram_builder import HistogramBuilder


def _data(n=3000, f=6, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f))
    X[rng.random((n, f)) < 0.04] = np.nan
    if ties:  # two identical features: equal gains, broken by feature order and node id
        X[:, 3] = X[:, 1]
    g = np.sin(3 * np.nan_to_num(X[:, 0])) + 0.5 * np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2]) + 0.2 * rng.normal(size=n)
    h = rng.uniform(0.5, 1.5, n)
    m = BinMapper(max_bins=24).fit(X)
    return m.transform(X), m.n_bins_, g, h


def _batched(b, n_bins, g, h, batch, **limits):
    grower = BatchedTreeGrower.from_builder(HistogramBuilder(b, n_bins, g, h), n_bins, **limits)
    grower.batch = batch
    return grower, grower.grow()


@pytest.mark.parametrize("batch", [1, 2, 4, 8, 64])
@pytest.mark.parametrize(
    "seed,limits",
    [
        (0, dict(num_leaves=31, min_samples_leaf=20)),
        (1, dict(num_leaves=12, min_samples_leaf=5, l2_regularization=1.0)),
        (2, dict(num_leaves=40, min_samples_leaf=30, max_depth=4)),
        (3, dict(num_leaves=200, min_samples_leaf=40)),  # stops when no leaf gains, not on the budget
    ],
)
def test_batched_growth_grows_treegrowers_tree_node_for_node(batch, seed, limits):
    b, n_bins, g, h = _data(seed=seed, ties=seed == 1)
    tree, samples, ranges = TreeGrower(b, n_bins, g, h, **limits).grow()
    grower, (btree, bsamples, branges) = _batched(b, n_bins, g, h, batch, **limits)
    for name in ("feature", "bin_threshold", "missing_left", "left", "right", "count", "value", "gain"):
        np.testing.assert_array_equal(getattr(btree, name), getattr(tree, name), err_msg=name)
    # the same rows in every leaf (their order inside a merged leaf may differ)
    assert branges[:, 0].tolist() == ranges[:, 0].tolist()
    for (_, s, e), (_, bs, be) in zip(ranges, branges):
        np.testing.assert_array_equal(np.sort(bsamples[bs:be]), np.sort(samples[s:e]))
    n_splits = tree.n_leaves - 1
    assert grower.calls <= n_splits
    if batch == 1:
        assert grower.calls == n_splits and grower.undone == 0
    if batch >= 4 and n_splits >= 10:
        assert grower.calls < n_splits / 2  # the point of it: fewer calls than splits


def test_merge_gives_a_split_nodes_rows_back():
    b, n_bins, g, h = _data()
    hb = HistogramBuilder(b, n_bins, g, h)
    hb.root()
    hb.split(0, 0, 10, True, 1, 2)
    hb.split(2, 1, 5, False, 3, 4)
    before = {n: np.sort(hb.samples[slice(*hb._ranges[n])]) for n in (1, 3, 4)}
    hb.merge(2, 3, 4)
    samples, ranges = hb.leaf_rows([1, 2])
    assert ranges[:, 0].tolist() == [1, 2]
    np.testing.assert_array_equal(np.sort(samples[ranges[1, 1] : ranges[1, 2]]), np.union1d(before[3], before[4]))
    np.testing.assert_array_equal(np.sort(samples[ranges[0, 1] : ranges[0, 2]]), before[1])
