"""Every ranker's ``normalize=`` (RankLib's -norm): the model equals a plain model trained on the
normalized features, predict applies the normalizer (a per-query one needs the queries), the
model file keeps it, and what is refused says why in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import NEURAL, needs_torch
from sklearn.base import clone

from ranklearn import LambdaMART
from ranklearn.data import Normalizer
from ranklearn.data.normalize import SPECS
from ranklearn.exceptions import ModelFormatError
from ranklearn.io import load_model
from ranklearn.models.linear import LinearRegression
from ranklearn.models.random_forest import RandomForest

TREES = dict(n_estimators=8, num_leaves=4, min_samples_leaf=3, random_state=0)


def data(seed=0, n_queries=12, docs=10):
    """Features of very different scales and offsets, as LETOR's raw ones."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    X = rng.normal(size=(n, 4)) * [1.0, 30.0, 1e3, 0.01] + [0.0, 100.0, -5e3, 2.0]
    y = (X[:, 0] + X[:, 1] / 30 + rng.normal(size=n) > 0.5).astype(np.float64) + (X[:, 3] > 2.0)
    return X, y, np.repeat(np.arange(n_queries), docs)


def hand_normalized(X, qid, spec):
    """The normalization by the formulas (numpy, float64, on float32 features as the models hold them)."""
    X = X.astype(np.float32).astype(np.float64)
    per_query = spec.startswith("query-")
    method = spec.removeprefix("query-")
    blocks = [qid == q for q in np.unique(qid)] if per_query else [np.ones(X.shape[0], bool)]
    out = np.empty_like(X)
    for rows in blocks:
        x = X[rows]
        if method == "sum":
            s = np.abs(x).sum(axis=0)
            out[rows] = np.where(s > 0, x / np.where(s > 0, s, 1), x)
        elif method == "zscore":
            sd = x.std(axis=0, ddof=1) if x.shape[0] > 1 else np.zeros(x.shape[1])
            out[rows] = np.where(sd > 0, (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1), x)
        else:
            span = x.max(axis=0) - x.min(axis=0)
            out[rows] = np.where(span > 0, (x - x.min(axis=0)) / np.where(span > 0, span, 1), 0.0)
    return out


@pytest.mark.parametrize("spec", SPECS)
def test_linear_model_equals_one_trained_on_hand_normalized_features(spec):
    X, y, qid = data()
    model = LinearRegression(normalize=spec).fit(X, y, qid)
    plain = LinearRegression().fit(hand_normalized(X, qid, spec), y, qid)
    np.testing.assert_allclose(model.coef_, plain.coef_, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(model.predict(X, qid=qid), plain.predict(hand_normalized(X, qid, spec)), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("spec", SPECS)
def test_tree_model_is_the_plain_model_on_normalized_features(spec):
    """Bit for bit: the same rows reach the same trees."""
    X, y, qid = data()
    ptr = np.arange(0, X.shape[0] + 1, 10)
    X32 = X.astype(np.float32)
    norm = Normalizer.from_spec(spec).fit(X32, ptr)
    Z = norm.transform(X32, ptr)
    np.testing.assert_allclose(Z, hand_normalized(X, qid, spec), rtol=1e-6, atol=1e-6)
    vali = data(seed=1)
    model = LambdaMART(normalize=spec, **TREES).fit(X, y, qid, eval_set=[vali])
    Zv = norm.transform(vali[0].astype(np.float32), ptr)  # the training rows' map (global) or its own queries
    plain = LambdaMART(**TREES).fit(Z, y, qid, eval_set=[(Zv, vali[1], vali[2])])
    assert model.evals_result_ == plain.evals_result_  # the evaluation set normalized the same way
    np.testing.assert_array_equal(model.predict(X, qid=qid), plain.predict(Z))
    assert model.normalizer_.spec == spec


def test_global_normalizer_is_learned_on_the_training_rows_only():
    X, y, qid = data()
    model = RandomForest(n_estimators=3, normalize="zscore", random_state=0, trees_per_bag=2).fit(X, y, qid)
    X32 = X.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(model.normalizer_.params_["mean"], X32.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(model.normalizer_.params_["std"], X32.std(axis=0, ddof=1), rtol=1e-12)
    # a row is scored alone: the same score in any batch
    one = np.array([model.predict(X[i : i + 1])[0] for i in range(0, X.shape[0], 7)])
    np.testing.assert_array_equal(one, model.predict(X)[::7])


def test_per_query_predict_needs_the_queries_and_takes_them_in_any_order():
    X, y, qid = data()
    model = LambdaMART(normalize="query-linear", **TREES).fit(X, y, qid)
    with pytest.raises(ValueError, match=r"normalize='query-linear'.*scoring needs the rows' queries, predict\(X, qid=...\) or group="):
        model.predict(X)
    expected = model.predict(X, qid=qid)
    perm = np.random.default_rng(0).permutation(X.shape[0])
    np.testing.assert_array_equal(model.predict(X[perm], qid=qid[perm]), expected[perm])
    np.testing.assert_array_equal(model.predict(X, group=np.full(12, 10)), expected)
    # a document's score depends on its query's other documents: the reason it needs them
    assert model.predict(X[:5], qid=qid[:5])[0] != expected[0] or model.predict(X[:3], qid=qid[:3])[0] != expected[0]
    assert model.score(X, y, qid=qid) == pytest.approx(LambdaMART(**TREES).fit(
        hand_normalized(X, qid, "query-linear").astype(np.float32), y, qid).score(
        hand_normalized(X, qid, "query-linear").astype(np.float32), y, qid=qid), abs=1e-6)  # fmt: skip
    with pytest.raises(ValueError, match="qid has 5 values for 120 rows"):
        model.predict(X, qid=qid[:5])


def test_iteration_range_and_refit_keep_the_rule():
    X, y, qid = data()
    model = LambdaMART(normalize="zscore", **TREES).fit(X, y, qid)
    Z = model.normalizer_.transform(X.astype(np.float32))
    plain = LambdaMART(**TREES).fit(Z, y, qid)
    np.testing.assert_array_equal(model.predict(X, iteration_range=(2, 5)), plain.predict(Z, iteration_range=(2, 5)))
    model.set_params(normalize=None).fit(X, y, qid)
    assert model.normalizer_ is None
    np.testing.assert_array_equal(model.predict(X), LambdaMART(**TREES).fit(X, y, qid).predict(X))


@pytest.mark.parametrize("spec", ["sum", "query-zscore"])
def test_model_file_round_trip(tmp_path, spec):
    X, y, qid = data()
    model = LambdaMART(normalize=spec, **TREES).fit(X, y, qid)
    model.save(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert loaded.normalize == spec and loaded.normalizer_.to_dict() == model.normalizer_.to_dict()
    np.testing.assert_array_equal(loaded.predict(X, qid=qid), model.predict(X, qid=qid))
    assert "normalize='sum'" in repr(loaded) or "normalize='query-zscore'" in repr(loaded)
    assert clone(loaded).normalize == spec


def _rewrite(path, change):
    from ranklearn.io.model_file import write_model_file

    envelope = json.loads(path.read_text())
    change(envelope["payload"])
    write_model_file(path, envelope["model_type"], envelope["payload"])  # a valid checksum over it


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda p: p.update(normalizer=None), "normalize='zscore' but no normalizer"),
        (lambda p: p.update(normalizer="zscore"), "'normalizer' must be dict or null"),
        (lambda p: p["normalizer"].update(per_query=True), "normalizer is 'query-zscore', its normalize parameter 'zscore'"),
        (lambda p: p["normalizer"]["params"].update(mean=[0.0]), "not fitted on its 4 features"),
        (lambda p: p["normalizer"].pop("params"), "not fitted on its 4 features"),
        (lambda p: p["normalizer"].update(method="cube"), "malformed normalizer"),
    ],
)
def test_a_model_file_with_a_wrong_normalizer_is_refused(tmp_path, change, match):
    X, y, qid = data()
    LambdaMART(normalize="zscore", **TREES).fit(X, y, qid).save(tmp_path / "m.json")
    _rewrite(tmp_path / "m.json", change)
    with pytest.raises(ModelFormatError, match=match):
        load_model(tmp_path / "m.json")


def test_an_unknown_normalize_names_the_parameter():
    with pytest.raises(ValueError, match="'normalize' parameter of LambdaMART must be a str among"):
        LambdaMART(normalize="minmax").fit(*data())


def test_a_ranker_whose_rows_are_elsewhere_refuses_normalize():
    pytest.importorskip("distributed")
    from ranklearn.dask import DaskLambdaMART

    with pytest.raises(ValueError, match="normalize='zscore': DaskLambdaMART trains on rows that are not on this machine"):
        DaskLambdaMART(normalize="zscore").check_params()
    with pytest.raises(ValueError, match=r"features=\[1\]: DaskLambdaMART trains on rows that are not on this machine"):
        DaskLambdaMART(features=[1]).check_params()


def test_spark_fit_refuses_normalize():
    pytest.importorskip("pyspark")
    from ranklearn.spark import _SparkFit

    with pytest.raises(ValueError, match="normalize='sum': SparkLambdaMART trains on rows that are not on this machine"):
        _SparkFit(normalize="sum").check_params()


@needs_torch
def test_neural_ranker_normalizes_too():
    X, y, qid = data()
    cls = NEURAL[0]
    model = cls(hidden=(4,), n_estimators=2, random_state=0, normalize="linear").fit(X, y, qid)
    Z = model.normalizer_.transform(X.astype(np.float32))
    plain = cls(hidden=(4,), n_estimators=2, random_state=0).fit(Z, y, qid)
    np.testing.assert_allclose(model.predict(X), plain.predict(Z), rtol=1e-6, atol=1e-6)
