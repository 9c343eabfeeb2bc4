"""Treelite export, checked with Treelite's GTIL; Treelite's own importers on the XGBoost and
LightGBM exports agree too."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import nan_tree_model, threshold_rows

from ranklearn import LambdaMART
from ranklearn.datasets import load_letor_fold
from ranklearn.io._trees import float32_sum_tolerance
from ranklearn.io.treelite import export_treelite, score_treelite

treelite = pytest.importorskip("treelite")


@pytest.fixture(scope="module")
def nan_model():
    return nan_tree_model()


def test_mq2008_test_rows(shared_data, tmp_path):
    train, _, test = load_letor_fold(shared_data / "MQ2008", 1, sparse=False)
    model = LambdaMART(n_estimators=60, random_state=0).fit(train.X, train.y, train.qid)
    path = tmp_path / "m.tl"
    export_treelite(model, path)
    X = np.asarray(test.X)
    for rows in (X, threshold_rows(model.trees_, X.astype(np.float32), dtype=np.float64)):
        assert np.max(np.abs(score_treelite(path, rows) - model.predict(rows))) <= 1e-12


def test_nan_and_every_threshold_float32_and_float64(nan_model, tmp_path):
    """float64 thresholds compared with <=: float32 rows, and doubles either side of the point
    where they round to the next float32, go where predict sends them; sums are float64."""
    model, X = nan_model
    path = tmp_path / "m.tl"
    export_treelite(model, path)
    loaded = treelite.Model.deserialize(str(path))
    assert loaded.num_tree == len(model.trees_) and loaded.num_feature == model.n_features_in_
    for rows in (X, threshold_rows(model.trees_, X), threshold_rows(model.trees_, X, dtype=np.float64)):
        got = treelite.gtil.predict(loaded, rows).reshape(-1)
        assert np.max(np.abs(got - model.predict(rows))) <= 1e-12


def test_treelite_importers_of_the_other_exports(nan_model, tmp_path):
    """Treelite's own XGBoost and LightGBM importers read ranklearn's exports as the engines do."""
    from ranklearn.io.lightgbm import export_lightgbm
    from ranklearn.io.xgboost import export_xgboost

    model, X = nan_model
    rows = np.vstack([X, threshold_rows(model.trees_, X)])
    export_xgboost(model, tmp_path / "m.json")
    export_lightgbm(model, tmp_path / "m.txt")
    from_xgb = treelite.frontend.load_xgboost_model(str(tmp_path / "m.json"))
    from_lgb = treelite.frontend.load_lightgbm_model(str(tmp_path / "m.txt"))
    tol = float32_sum_tolerance(model.trees_)
    for loaded in (from_xgb, from_lgb):
        got = treelite.gtil.predict(loaded, rows, pred_margin=True).reshape(-1)
        assert np.max(np.abs(got - model.predict(rows))) <= tol


def test_random_forest(tmp_path):
    from ranklearn.datasets import make_ranking
    from ranklearn.models.random_forest import RandomForest

    _, X = nan_tree_model(n_estimators=2)
    _, y, qid = make_ranking(80, 12, random_state=0, return_X_y=True)
    forest = RandomForest(n_estimators=3, random_state=0).fit(X, y, qid)
    export_treelite(forest, tmp_path / "rf.tl")
    assert np.max(np.abs(score_treelite(tmp_path / "rf.tl", X) - forest.predict(X))) <= 1e-12
