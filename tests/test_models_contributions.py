"""predict_contributions / predict_interactions of every family of rankers, against the real peers:
LightGBM's pred_contrib and shap's TreeExplainer on the LightGBM export, shap's TreeExplainer on a
forest's trees, shap's LinearExplainer; RankLib imports after set_cover; save/load."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import needs_torch, small_data

from ranklearn import LambdaMART
from ranklearn.datasets import load_letor_fold, make_ranking
from ranklearn.io import load_model
from ranklearn.io.lightgbm import export_lightgbm
from ranklearn.io.ranklib import export_ranklib, import_ranklib
from ranklearn.models.contributions import additivity_error

lgb = pytest.importorskip("lightgbm")
shap = pytest.importorskip("shap")


def _relative_additivity(model, X, phi):
    scores = model.predict(X)
    return np.max(np.abs(additivity_error(model, X, phi)) / np.maximum(1.0, np.abs(scores)))


@pytest.fixture(scope="module")
def mq2008(shared_data):
    """A LambdaMART on MQ2008 fold 1 with 5% of the values made missing (so splits learn NaN
    directions), and test rows: missing values, and values exactly at the trees' thresholds."""
    train, _, test = load_letor_fold(shared_data / "MQ2008", 1, sparse=False)
    rng = np.random.default_rng(0)
    X = np.asarray(train.X, np.float32).copy()
    X[rng.random(X.shape) < 0.05] = np.nan
    model = LambdaMART(n_estimators=40, random_state=0).fit(X, train.y, train.qid)
    Xt = np.asarray(test.X, np.float32)[:600].copy()
    Xt[rng.random(Xt.shape) < 0.05] = np.nan
    at = Xt[:200].copy()  # rows whose values sit on thresholds
    for tree in model.trees_[:20]:
        for node in np.flatnonzero(tree.feature >= 0):
            at[rng.integers(200), tree.feature[node]] = np.float32(tree.threshold[node])
    return model, np.vstack([Xt, at])


def test_contributions_sum_to_the_raw_scores(mq2008):
    model, X = mq2008
    phi = model.predict_contributions(X)
    assert phi.shape == (X.shape[0], model.n_features_in_ + 1)
    assert _relative_additivity(model, X, phi) <= 1e-9


def test_lightgbm_pred_contrib_and_shap_agree_on_the_lightgbm_export(mq2008, tmp_path):
    model, X = mq2008
    export_lightgbm(model, tmp_path / "m.txt")
    booster = lgb.Booster(model_file=str(tmp_path / "m.txt"))
    X64 = X.astype(np.float64)
    phi = model.predict_contributions(X)
    assert np.abs(booster.predict(X64, pred_contrib=True) - phi).max() <= 1e-6
    explainer = shap.TreeExplainer(booster)
    assert abs(explainer.expected_value - phi[0, -1]) <= 1e-6
    assert np.abs(explainer.shap_values(X64[:300]) - phi[:300, :-1]).max() <= 1e-6
    inter = model.predict_interactions(X[:15])
    assert np.abs(explainer.shap_interaction_values(X64[:15]) - inter[:, :-1, :-1]).max() <= 1e-6
    np.testing.assert_allclose(inter.sum(axis=2), phi[:15], atol=1e-9)


def test_threshold_rows_take_predicts_branch_in_lightgbm_too(mq2008, tmp_path):
    # float64 rows whose value is a float32 threshold's double: the export's thresholds route them as predict
    model, X = mq2008
    export_lightgbm(model, tmp_path / "m.txt")
    booster = lgb.Booster(model_file=str(tmp_path / "m.txt"))
    at = X[-200:]
    theirs = booster.predict(at.astype(np.float64), pred_contrib=True)
    assert np.abs(theirs - model.predict_contributions(at)).max() <= 1e-6


def _shap_dict(trees, scale):
    """Trees in shap's own dict format (x <= threshold goes left, NaN to children_default)."""
    out = []
    for t in trees:
        leaf = t.feature < 0
        out.append({
            "children_left": np.where(leaf, -1, t.left).astype(np.int64),
            "children_right": np.where(leaf, -1, t.right).astype(np.int64),
            "children_default": np.where(leaf, -1, np.where(t.missing_left, t.left, t.right)).astype(np.int64),
            "features": np.where(leaf, -2, t.feature).astype(np.int64),
            "thresholds": t.threshold.astype(np.float64),
            "values": (t.value * scale)[:, None],
            "node_sample_weight": t.count.astype(np.float64),
        })  # fmt: skip
    return {"trees": out, "base_offset": 0.0}


def test_random_forest_and_mart_agree_with_shap_on_their_trees():
    from ranklearn.models import MART, RandomForest

    X, y, qid = make_ranking(60, 8, n_informative=4, random_state=3, return_X_y=True)
    X = X.astype(np.float32)
    X[np.random.default_rng(1).random(X.shape) < 0.1] = np.nan
    forest = RandomForest(n_estimators=5, num_leaves=8, random_state=0, n_jobs=1).fit(X, y, qid)
    mart = MART(n_estimators=10, num_leaves=6, random_state=0, n_jobs=1).fit(X, y, qid)
    for model, trees, scale in ((forest, [t for bag in forest.bags_ for t in bag], 1 / 5), (mart, mart.trees_, 1.0)):
        phi = model.predict_contributions(X)
        assert _relative_additivity(model, X, phi) <= 1e-9
        ref = shap.TreeExplainer(_shap_dict(trees, scale)).shap_values(X.astype(np.float64))
        assert np.abs(ref - phi[:, :-1]).max() <= 1e-9


def test_ranklib_import_needs_set_cover_then_matches_the_original(tmp_path):
    X, y, qid = make_ranking(50, 6, n_informative=4, random_state=4, return_X_y=True)
    X = X.astype(np.float32)
    model = LambdaMART(n_estimators=8, num_leaves=6, random_state=0, n_jobs=1).fit(X, y, qid)
    export_ranklib(model, tmp_path / "m.txt")
    imported = import_ranklib(tmp_path / "m.txt", n_features=X.shape[1])
    with pytest.raises(ValueError, match=r"no cover.*set_cover\(X\)"):
        imported.predict_contributions(X)
    imported.set_cover(X)  # the training rows (no bagging): the training counts again
    for a, b in zip(imported.trees_, model.trees_):  # RankLib's files number the nodes depth first
        np.testing.assert_array_equal(np.sort(a.count), np.sort(b.count))
    np.testing.assert_allclose(imported.predict_contributions(X), model.predict_contributions(X), atol=1e-6)
    imported.save(tmp_path / "m.json")
    np.testing.assert_array_equal(load_model(tmp_path / "m.json").predict_contributions(X),
                                  imported.predict_contributions(X))  # fmt: skip


def test_set_cover_checks_its_rows():
    X, y, qid = small_data()
    model = LambdaMART(n_estimators=2, num_leaves=3, min_samples_leaf=2, random_state=0, n_jobs=1).fit(X, y, qid)
    with pytest.raises(ValueError, match="at least one row"):
        model.set_cover(X[:0])
    with pytest.raises(ValueError, match="features"):
        model.predict_contributions(X[:, :2])


def test_linear_contributions_are_shaps_linear_explainer():
    from ranklearn.models.linear import LinearRegression

    X, y, qid = make_ranking(40, 5, n_informative=3, random_state=5, return_X_y=True)
    model = LinearRegression().fit(X, y, qid)
    background = X[:100]
    phi = model.predict_contributions(X, background=background)
    assert _relative_additivity(model, X, phi) <= 1e-9
    ref = shap.LinearExplainer((model.coef_, model.intercept_), background.astype(np.float64))
    np.testing.assert_allclose(phi[:, :-1], ref.shap_values(X.astype(np.float32).astype(np.float64)), atol=1e-9)
    np.testing.assert_allclose(phi[:, -1], ref.expected_value, atol=1e-9)


@needs_torch
def test_neural_expected_gradients_are_nearly_additive():
    from ranklearn.models import RankNet

    X, y, qid = make_ranking(30, 5, n_informative=3, random_state=6, return_X_y=True)
    model = RankNet(hidden=(8,), n_estimators=3, random_state=0, n_jobs=1).fit(X, y, qid)
    errors = {}
    for steps in (2, 64):
        phi = model.predict_contributions(X[:20], background=X, n_background=32, n_steps=steps)
        errors[steps] = np.abs(additivity_error(model, X[:20], phi)).max()
    spread = np.ptp(model.predict(X))
    # exact in the integral (rows sum to f(x) minus the background's mean f); the quadrature's error
    # at the ReLU kinks shrinks with more points
    assert errors[64] <= 1e-3 * spread
    assert errors[64] < errors[2]
    assert np.ptp(phi[:, :-1]) > 1e-2 * spread  # not trivial: it differs between rows and features


def test_contributions_do_not_depend_on_the_thread_count():
    from ranklearn._threads import thread_limit

    X, y, qid = make_ranking(40, 6, n_informative=4, random_state=7, return_X_y=True)
    model = LambdaMART(n_estimators=10, num_leaves=8, random_state=0, n_jobs=1).fit(X, y, qid)
    X = np.repeat(X, 3, axis=0)  # more rows than one parallel block
    with thread_limit(1):
        one = model.predict_contributions(X), model.predict_interactions(X[:70])
    with thread_limit(2):
        two = model.predict_contributions(X), model.predict_interactions(X[:70])
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
