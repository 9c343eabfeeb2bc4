"""Vespa export: reference scorers of Vespa's lightgbm() and xgboost() rank features (its Java does
not run here), and the LightGBM JSON against LightGBM's own dump_model of the same model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import nan_tree_model, threshold_rows

from ranklearn import LambdaMART
from ranklearn.datasets import load_letor_fold
from ranklearn.io._trees import float32_sum_tolerance
from ranklearn.io.vespa import export_vespa, lightgbm_dump


def vespa_lightgbm_score(doc: dict, X: np.ndarray) -> np.ndarray:
    """After vespa-engine/vespa model-integration/src/main/java/ai/vespa/rankingexpression/
    importer/lightgbm/LightGBMParser.java (nodeToRankingExpression): a numerical split is
    ``if (!(x >= threshold), left, right)`` when default_left, else ``if (x < threshold, left,
    right)``, threshold the JSON's double; a leaf is its double leaf_value; the trees are summed
    (objective lambdarank: no transform). Ranking expressions are evaluated in doubles; NaN
    compares false."""
    X = np.asarray(X, dtype=np.float64)

    def tree_value(node, row):
        while "leaf_value" not in node:
            x = row[node["split_feature"]]
            t = float(node["threshold"])
            go_left = (not (x >= t)) if node["default_left"] else (x < t)
            node = node["left_child"] if go_left else node["right_child"]
        return float(node["leaf_value"])

    return np.array([sum(tree_value(t["tree_structure"], row) for t in doc["tree_info"]) for row in X])


def vespa_xgboost_score(dump: list, names: list[str], X: np.ndarray) -> np.ndarray:
    """After .../importer/xgboost/AbstractXGBoostParser.java (treeToRankExp): the split point is
    ``(float) split_condition`` widened to double; ``if (!(x >= c), yes, no)`` when missing == yes,
    else ``if (x < c, yes, no)``; leaves are doubles."""
    X = np.asarray(X, dtype=np.float64)

    def tree_value(node, row):
        while "leaf" not in node:
            x = row[names.index(node["split"])]
            with np.errstate(over="ignore"):
                c = float(np.float32(node["split_condition"]))
            yes = (not (x >= c)) if node["missing"] == node["yes"] else (x < c)
            first, second = node["children"]
            yes_child, no_child = (first, second) if first["nodeid"] == node["yes"] else (second, first)
            node = yes_child if yes else no_child
        return float(node["leaf"])

    return np.array([sum(tree_value(t, row) for t in dump) for row in X])


@pytest.fixture(scope="module")
def nan_model():
    return nan_tree_model()


def test_lightgbm_json_is_exact_for_float32_and_float64_values(nan_model, tmp_path):
    model, X = nan_model
    path = tmp_path / "vespa.json"
    export_vespa(model, path)
    doc = json.loads(path.read_text())
    for rows in (X, threshold_rows(model.trees_, X), threshold_rows(model.trees_, X, dtype=np.float64)):
        assert np.max(np.abs(vespa_lightgbm_score(doc, rows) - model.predict(rows))) <= 1e-12


def test_lightgbm_json_matches_lightgbms_own_dump(nan_model):
    """The same trees as LightGBM's dump_model() of the LightGBM text export, each threshold the
    next double (Vespa compares with <, LightGBM with <=)."""
    lgb = pytest.importorskip("lightgbm")
    from ranklearn.io.lightgbm import lightgbm_model_string

    model, _ = nan_model
    theirs = lgb.Booster(model_str=lightgbm_model_string(model)).dump_model()
    ours = lightgbm_dump(model, theirs["feature_names"])
    assert ours["feature_names"] == theirs["feature_names"] and ours["objective"] == "lambdarank"
    assert len(ours["tree_info"]) == len(theirs["tree_info"])

    def same(a, b):
        if "leaf_value" in b:
            assert a["leaf_value"] == b["leaf_value"] and a["leaf_index"] == b["leaf_index"]
            return
        assert a["threshold"] == np.nextafter(b["threshold"], np.inf)
        for key in ("split_feature", "split_index", "default_left", "missing_type", "decision_type"):
            assert a[key] == b[key], key
        same(a["left_child"], b["left_child"])
        same(a["right_child"], b["right_child"])

    for a, b in zip(ours["tree_info"], theirs["tree_info"]):
        same(a["tree_structure"], b["tree_structure"])


def test_mq2008_test_rows(shared_data, tmp_path):
    train, _, test = load_letor_fold(shared_data / "MQ2008", 1, sparse=False)
    model = LambdaMART(n_estimators=30, random_state=0).fit(train.X, train.y, train.qid)
    X = np.asarray(test.X, dtype=np.float64)[:500]
    doc = lightgbm_dump(model)
    assert np.max(np.abs(vespa_lightgbm_score(doc, X) - model.predict(X))) <= 1e-12


def test_xgboost_flavor_is_exact_for_float32_values(nan_model, tmp_path):
    model, X = nan_model
    names = [f"attribute(f{j})" for j in range(model.n_features_in_)]
    path = tmp_path / "xgb.json"
    export_vespa(model, path, flavor="xgboost", feature_names=names)
    dump = json.loads(path.read_text())
    rows = np.vstack([X, threshold_rows(model.trees_, X)])
    assert np.max(np.abs(vespa_xgboost_score(dump, names, rows) - model.predict(rows))) <= 1e-12
    # a double between a threshold and the next float32's midpoint goes the other way (documented)
    doubles = threshold_rows(model.trees_, X, dtype=np.float64)
    assert np.max(np.abs(vespa_xgboost_score(dump, names, doubles) - model.predict(doubles))) > 1e-6
    with pytest.raises(ValueError, match="flavor"):
        export_vespa(model, path, flavor="onnx")


def test_random_forest(tmp_path):
    from ranklearn.datasets import make_ranking
    from ranklearn.io._trees import model_trees
    from ranklearn.models.random_forest import RandomForest

    X, y, qid = make_ranking(40, 10, random_state=0, return_X_y=True)
    forest = RandomForest(n_estimators=3, random_state=0).fit(X, y, qid)
    rows = threshold_rows(model_trees(forest, "t"), np.asarray(X, dtype=np.float32))
    tol = float32_sum_tolerance(model_trees(forest, "t"))
    assert np.max(np.abs(vespa_lightgbm_score(lightgbm_dump(forest), rows) - forest.predict(rows))) <= tol
