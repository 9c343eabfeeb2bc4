"""Every ranker's ``features=`` (RankLib's -feature): trained on those columns, the model takes
whole rows, the other columns never change a score, and it saves and exports as any model."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import NEURAL

from ranklearn import LambdaMART
from ranklearn.io import check_export, export_model, load_model
from ranklearn.registry import REGISTRY, get_model_class

COLUMNS = [4, 1, 2]
OTHERS = [0, 3, 5]
SMALL = {
    "lambdamart": dict(n_estimators=5, num_leaves=4, min_samples_leaf=3),
    "mart": dict(n_estimators=5, num_leaves=4, min_samples_leaf=3),
    "random-forest": dict(n_estimators=3, trees_per_bag=2, num_leaves=4, min_samples_leaf=3),
    "coordinate-ascent": dict(n_estimators=1, line_search_steps=3),
    "adarank": dict(n_estimators=5),
    "rankboost": dict(n_estimators=5),
    "ranknet": dict(n_estimators=2, hidden=(4,)),
    "lambdarank": dict(n_estimators=2, hidden=(4,)),
    "listnet": dict(n_estimators=2, hidden=(4,)),
}
NAMES = [n for n in REGISTRY if REGISTRY[n].extra != "neural" or NEURAL]


def data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 6))
    y = (X[:, 4] + X[:, 0] + rng.normal(size=120) > 0).astype(np.float64) + (X[:, 1] > 1)
    return X, y, np.repeat(np.arange(12), 10)


def make(name, **params):
    cls = get_model_class(name)
    params = {**SMALL.get(name, {}), **params}
    if "random_state" in cls._get_param_names():
        params["random_state"] = 0
    return cls(**params)


@pytest.mark.parametrize("name", NAMES)
def test_the_model_is_the_one_trained_on_the_columns_and_ignores_the_others(name, tmp_path):
    X, y, qid = data()
    vali = data(seed=1)
    model = make(name, features=COLUMNS).fit(X, y, qid, eval_set=[vali])
    plain = make(name).fit(X[:, COLUMNS], y, qid, eval_set=[(vali[0][:, COLUMNS], vali[1], vali[2])])
    assert model.n_features_in_ == 6 and model.evals_result_ == plain.evals_result_
    tol = 1e-6 if REGISTRY[name].extra == "neural" else 1e-12  # float32 sums over more (zero) weights
    np.testing.assert_allclose(model.predict(X), plain.predict(X[:, COLUMNS]), rtol=tol, atol=tol)
    other = X.copy()
    other[:, OTHERS] = np.random.default_rng(2).normal(size=(120, 3)) * 1e3  # any values there
    np.testing.assert_array_equal(model.predict(other), model.predict(X))
    model.save(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert loaded.features == COLUMNS
    np.testing.assert_array_equal(loaded.predict(other), model.predict(X))


def test_tree_importance_and_exports_name_the_whole_rows_columns(tmp_path):
    pytest.importorskip("xgboost")
    X, y, qid = data()
    model = LambdaMART(features=np.array(COLUMNS), n_estimators=5, num_leaves=4, random_state=0).fit(X, y, qid)
    assert np.all(model.feature_importance("split")[OTHERS] == 0) and model.feature_importance("split")[4] > 0
    export_model(model, tmp_path / "m.json", "xgboost")
    other = X.copy()
    other[:, OTHERS] = 1e3
    assert check_export(model, tmp_path / "m.json", "xgboost", np.vstack([X, other])).passed


def test_features_with_normalize():
    X, y, qid = data()
    model = LambdaMART(features=COLUMNS, normalize="zscore", n_estimators=5, random_state=0).fit(X, y, qid)
    Z = model.normalizer_.transform(X.astype(np.float32))
    plain = LambdaMART(n_estimators=5, random_state=0).fit(Z[:, COLUMNS], y, qid)
    np.testing.assert_array_equal(model.predict(X), plain.predict(Z[:, COLUMNS]))


@pytest.mark.parametrize(
    ("features", "match"),
    [
        ([], "distinct 0-based column numbers"),
        ([1, 1], "distinct 0-based column numbers"),
        ([-1], "distinct 0-based column numbers"),
        (["f1"], "distinct 0-based column numbers"),
        ([0.5], "distinct 0-based column numbers"),
        ([6], "column 6 is beyond X's 6 columns"),
    ],
)
def test_bad_features_are_refused_by_name(features, match):
    with pytest.raises(ValueError, match=match):
        LambdaMART(features=features, n_estimators=2).fit(*data())
