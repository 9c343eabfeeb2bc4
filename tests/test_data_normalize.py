"""RankLib-style normalization: hand-computed values, constant features, NaN, persistence."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from ranklearn.data import Normalizer

# query 0: rows 0-2 (feature 1 constant), query 1: rows 3-4
X = np.array([[1, 2], [3, 2], [5, 2], [-2, 0], [-4, 4]], dtype=np.float64)
PTR = np.array([0, 3, 5])
R2 = 1 / np.sqrt(2)

PER_QUERY = {
    "sum": [[1 / 9, 1 / 3], [3 / 9, 1 / 3], [5 / 9, 1 / 3], [-2 / 6, 0], [-4 / 6, 1]],
    # sample std (n - 1) as RankLib; the constant feature is left unchanged
    "zscore": [[-1, 2], [0, 2], [1, 2], [R2, -R2], [-R2, R2]],
    # constant feature -> 0, as RankLib
    "linear": [[0, 0], [0.5, 0], [1, 0], [1, 0], [0, 1]],
}


@pytest.mark.parametrize("method", sorted(PER_QUERY))
def test_per_query_values(method):
    out = Normalizer(method).fit_transform(X, PTR)
    np.testing.assert_allclose(out, PER_QUERY[method], rtol=1e-12, atol=1e-15)


def test_global_values():
    np.testing.assert_allclose(Normalizer("sum", per_query=False).fit_transform(X), X / [15, 10])
    mean, std = X.mean(axis=0), X.std(axis=0, ddof=1)
    np.testing.assert_allclose(Normalizer("zscore", per_query=False).fit_transform(X), (X - mean) / std)
    np.testing.assert_allclose(Normalizer("linear", per_query=False).fit_transform(X), (X - [-4, 0]) / [9, 4])


def test_global_parameters_apply_to_new_data_and_survive_json():
    norm = Normalizer("linear", per_query=False).fit(X)
    np.testing.assert_array_equal(norm.params_["min"], [-4, 0])
    np.testing.assert_array_equal(norm.params_["max"], [5, 4])
    restored = Normalizer.from_dict(json.loads(json.dumps(norm.to_dict())))
    new = np.array([[9.5, -4.0]])
    np.testing.assert_allclose(restored.transform(new), [[13.5 / 9, -1.0]])  # outside [0, 1] is fine
    assert restored.to_dict() == norm.to_dict()


def test_constant_and_single_row_queries_do_not_divide_by_zero():
    Xc = np.array([[7.0, 0.0], [7.0, 0.0], [3.0, 1.0]])
    ptr = [0, 2, 3]
    for method in PER_QUERY:
        out = Normalizer(method).transform(Xc, ptr)
        assert np.isfinite(out).all(), method
    np.testing.assert_array_equal(Normalizer("zscore").transform(Xc, ptr), Xc)  # std 0 or undefined
    np.testing.assert_array_equal(Normalizer("linear").transform(Xc, ptr), np.zeros_like(Xc))
    np.testing.assert_array_equal(Normalizer("sum").transform(Xc, ptr)[:, 1], [0, 0, 1])


def test_nan_is_ignored_and_kept():
    Xn = np.array([[1.0], [np.nan], [3.0]])
    out = Normalizer("linear").transform(Xn, [0, 3])
    np.testing.assert_array_equal(out[[0, 2], 0], [0, 1])
    assert np.isnan(out[1, 0])
    assert Normalizer("sum", per_query=False).fit(Xn).params_["scale"].tolist() == [4.0]


def test_dtype_and_sparse_input():
    X32 = X.astype(np.float32)
    assert Normalizer("zscore").transform(X32, PTR).dtype == np.float32
    out = Normalizer("sum").transform(sp.csr_matrix(X), PTR)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, PER_QUERY["sum"])


def test_errors():
    with pytest.raises(ValueError, match="method"):
        Normalizer("max")
    with pytest.raises(ValueError, match="ptr"):
        Normalizer("sum").transform(X)
    with pytest.raises(ValueError, match="ptr"):
        Normalizer("sum").transform(X, [0, 3])
    with pytest.raises(NotFittedError):
        Normalizer("sum", per_query=False).transform(X)
    with pytest.raises(ValueError, match="features"):
        Normalizer("sum", per_query=False).fit(X).transform(X[:, :1])
    with pytest.raises(ValueError, match="parameters"):
        Normalizer.from_dict({"method": "zscore", "per_query": False, "params": {"min": [0.0]}})
