"""BinMapper: quantile bins of data values, NaN's own bin, subsampled edges, round trips."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.tree.binning import MISSING_BIN, BinMapper
from _helpers import tree_data


def test_bins_are_quantiles_of_data_values_and_nan_has_its_own():
    X, _, _ = tree_data(nan_frac=0.05)
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

    X, _, _ = tree_data()
    m = BinMapper().fit(X)
    assert not has_missing(m.transform(X))
    X[1234, 5] = np.nan
    assert has_missing(m.transform(X))


def test_subsampled_edges_come_from_the_subsample_rows():
    X, _, _ = tree_data(n=5000)
    m = BinMapper(max_bins=255, subsample=1000, random_state=0).fit(X)
    rows = np.sort(np.random.default_rng(0).choice(5000, size=1000, replace=False))
    full = BinMapper(max_bins=255, subsample=None).fit(X[rows])
    np.testing.assert_array_equal(m.edges_, full.edges_)


def test_bin_mapper_round_trips_through_dict_and_checks_width():
    X, _, _ = tree_data()
    m = BinMapper(max_bins=16).fit(X)
    m2 = BinMapper.from_dict(m.to_dict())
    np.testing.assert_array_equal(m.transform(X), m2.transform(X))
    with pytest.raises(ValueError, match="features"):
        m.transform(X[:, :3])
    with pytest.raises(ValueError, match="max_bins"):
        BinMapper(max_bins=256)


@pytest.mark.parametrize("max_bins", [4, 255])
def test_sample_binner_equals_a_mapper_fitted_on_the_sample(max_bins):
    from ranklearn.tree.binning import SampleBinner

    rng = np.random.default_rng(5)
    n = 600
    X = np.column_stack([
        rng.normal(size=n),  # more distinct values than bins: quantile edges
        rng.integers(0, 3, n).astype(float),  # fewer: every value is a bin
        np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n)),  # NaN among values
        np.full(n, np.nan),  # only NaN
        np.where(rng.random(n) < 0.9, 0.0, rng.random(n)),  # one value with most of the mass
    ])  # fmt: skip
    X[:5, 1] = -0.0  # equal to 0.0
    binner = SampleBinner(X, max_bins)
    for rows in (rng.integers(0, n, n), np.repeat(np.arange(0, n, 7), 3), np.arange(n), np.array([3])):
        expected = BinMapper(max_bins, subsample=None)
        want = expected.fit_transform(X[rows])
        mapper = BinMapper(max_bins, subsample=None)
        got = binner.fit_transform(rows, mapper)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(mapper.n_edges_, expected.n_edges_)
        np.testing.assert_array_equal(mapper.edges_, expected.edges_)
    with pytest.raises(ValueError, match="max_bins"):
        binner.fit_transform(np.arange(n), BinMapper(max_bins + 1 if max_bins < 255 else 8))


def test_edges_and_bins_do_not_depend_on_the_thread_count():
    from ranklearn._threads import numba_threads

    X, _, _ = tree_data(nan_frac=0.05)  # columns are sorted in blocks, one block a thread
    fitted = []
    for n_jobs in (1, 2, 3):
        with numba_threads(n_jobs):
            m = BinMapper(max_bins=64).fit(X)
            fitted.append((m.edges_, m.n_edges_, m.transform(X)))
    for edges, n_edges, binned in fitted[1:]:
        np.testing.assert_array_equal(edges, fitted[0][0])
        np.testing.assert_array_equal(n_edges, fitted[0][1])
        np.testing.assert_array_equal(binned, fitted[0][2])
