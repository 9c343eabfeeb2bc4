"""Solr LTR export, checked with a reference scorer of Solr's documented rule (its Java does not
run here) and against the shape Solr's model parser accepts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import nan_tree_model, threshold_rows

from ranklearn import LambdaMART
from ranklearn.datasets import load_letor_fold
from ranklearn.io._trees import float32_down, float32_sum_tolerance, model_trees
from ranklearn.io.solr import NODE_SPLIT_SLACK, export_solr, solr_model, solr_threshold

TREES = "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
LINEAR = "org.apache.solr.ltr.model.LinearModel"


def solr_score(doc: dict, X: np.ndarray) -> np.ndarray:
    """Solr's scoring, after solr/modules/ltr/src/java/org/apache/solr/ltr/model/
    MultipleAdditiveTreesModel.java (RegressionTreeNode.setThreshold adds NODE_SPLIT_SLACK = 1e-6f
    to Float.parseFloat(threshold); scoreNode goes left when featureVector[i] <= threshold; a tree
    scores weight * value, the model sums the trees, all in float) and LinearModel.java (sum of
    weight * value in float). The feature vector is float[]: Solr has no NaN."""
    index = {f["name"]: i for i, f in enumerate(doc["features"])}
    X = np.asarray(X, dtype=np.float32)
    out = np.zeros(X.shape[0], dtype=np.float32)
    if doc["class"] == LINEAR:
        for name, w in doc["params"]["weights"].items():
            out = out + np.float32(w) * X[:, index[name]]
        return out.astype(np.float64)

    def node_score(node, row):
        while "value" not in node:
            threshold = np.float32(np.float32(node["threshold"]) + NODE_SPLIT_SLACK)
            node = node["left"] if row[index[node["feature"]]] <= threshold else node["right"]
        return np.float32(node["value"])

    for r, row in enumerate(X):
        total = np.float32(0)
        for tree in doc["params"]["trees"]:
            total = np.float32(total + np.float32(tree["weight"]) * node_score(tree["root"], row))
        out[r] = total
    return out.astype(np.float64)


def check_shape(doc: dict) -> None:
    """What Solr's model parser accepts (LTRScoringModel.fromMap and the setters of
    MultipleAdditiveTreesModel / LinearModel): class, name, features[{name}], params; every tree
    a weight and a root; a split node feature, threshold (a string Float.parseFloat reads), left
    and right; a leaf only a value."""
    assert set(doc) <= {"class", "name", "store", "features", "params"}
    assert isinstance(doc["name"], str) and all(set(f) == {"name"} for f in doc["features"])
    names = {f["name"] for f in doc["features"]}
    if doc["class"] == LINEAR:
        assert set(doc["params"]) == {"weights"} and set(doc["params"]["weights"]) <= names
        return
    assert doc["class"] == TREES and set(doc["params"]) == {"trees"}

    def node(n):
        if "value" in n:
            assert set(n) == {"value"} and isinstance(n["value"], str)
            float(n["value"])
            return
        assert set(n) == {"feature", "threshold", "left", "right"} and n["feature"] in names
        assert isinstance(n["threshold"], str) and np.isfinite(float(n["threshold"]))
        node(n["left"])
        node(n["right"])

    for tree in doc["params"]["trees"]:
        assert set(tree) == {"weight", "root"} and float(tree["weight"]) == 1.0
        node(tree["root"])


@pytest.fixture(scope="module")
def nan_model():
    return nan_tree_model()


def test_mq2008_test_rows_and_thresholds(shared_data):
    train, _, test = load_letor_fold(shared_data / "MQ2008", 1, sparse=False)
    model = LambdaMART(n_estimators=40, random_state=0).fit(train.X, train.y, train.qid)
    doc = solr_model(model, name="mq", store="letor")
    check_shape(doc)
    assert doc["store"] == "letor" and doc["name"] == "mq"
    X = np.asarray(test.X, dtype=np.float32)
    rows = np.vstack([X, threshold_rows(model.trees_, X)])
    rows = rows[~np.isnan(rows).any(axis=1)]  # Solr's documents never hold NaN
    assert np.max(np.abs(solr_score(doc, rows) - model.predict(rows))) <= float32_sum_tolerance(model.trees_)


def test_every_threshold_needs_the_slack_taken_off(nan_model):
    """Writing ranklearn's thresholds as they are moves Solr's split by 1e-6: the rows at and
    just above the thresholds then go the other way."""
    model, X = nan_model
    doc = solr_model(model, missing_as=0.0)
    check_shape(doc)
    rows = np.nan_to_num(threshold_rows(model.trees_, X), nan=0.0)
    tol = float32_sum_tolerance(model.trees_)
    assert np.max(np.abs(solr_score(doc, rows) - model.predict(rows))) <= tol

    naive = json.loads(json.dumps(doc))
    for tree_doc, tree in zip(naive["params"]["trees"], model.trees_):
        stack = [(tree_doc["root"], 0)]
        while stack:
            node, i = stack.pop()
            if "value" in node:
                continue
            node["threshold"] = repr(float(tree.threshold[i]))
            stack += [(node["left"], int(tree.left[i])), (node["right"], int(tree.right[i]))]
    assert np.max(np.abs(solr_score(naive, rows) - model.predict(rows))) > 100 * tol


def test_solr_threshold_is_exact_where_solr_can_reach_it():
    for t in (0.0, 1e-6, 0.5, -0.25, 0.0123, 7.0, 1e6, -3.4e38, float(np.finfo(np.float32).max)):
        s, exact = solr_threshold(t)
        assert exact and np.float32(s + NODE_SPLIT_SLACK) == float32_down(t)  # ranklearn's split, as a float32
        assert np.float32(float(repr(float(s)))) == s  # the text parses back to it
    # here every sum s + 1e-6 lies halfway between two float32 and rounds to the even one:
    # the odd 3.1707266e-06 is out of reach, Solr splits at the next float32 up
    t = np.float32(3.1707266e-06)
    s, exact = solr_threshold(float(t))
    assert not exact and np.float32(s + NODE_SPLIT_SLACK) == np.nextafter(t, np.float32(1))
    grid = [np.float32(c + NODE_SPLIT_SLACK) for c in _float32_range(np.float32(t - NODE_SPLIT_SLACK), 64)]
    assert t not in grid  # truly out of reach


def _float32_range(center, k):
    low = high = center
    values = [center]
    for _ in range(k):
        low, high = np.nextafter(low, np.float32(-1)), np.nextafter(high, np.float32(1))
        values += [low, high]
    return values


def test_an_unreachable_threshold_warns_and_keeps_the_left_side(nan_model):
    """Every value ranklearn sends left still goes left; only the float32 steps above move."""
    from ranklearn.tree.tree import Tree

    model, X = nan_model
    tree = Tree.from_dict(model.trees_[0].to_dict())  # a copy: the fixture's tree stays as it is
    node = int(np.flatnonzero(tree.feature >= 0)[0])
    tree.threshold[node] = 3.1707266e-06
    small = LambdaMART.from_trees([tree], model.n_features_in_)
    with pytest.warns(UserWarning, match="1 split"):
        doc = solr_model(small)
    check_shape(doc)
    rows = np.nan_to_num(threshold_rows(small.trees_, X), nan=0.0)
    t = np.float32(3.1707266e-06)
    moved = rows[:, tree.feature[node]] == np.nextafter(t, np.float32(1))
    assert moved.any()
    diff = np.abs(solr_score(doc, rows) - small.predict(rows))
    assert np.max(diff[~moved]) <= float32_sum_tolerance(small.trees_)


def test_missing_branch_needs_missing_as(nan_model):
    model, X = nan_model
    with pytest.raises(ValueError, match="--missing-as"):
        solr_model(model)
    # with missing_as, Solr's documents carry the value: the scores are predict's on that value
    doc = solr_model(model, missing_as=-1.0)
    filled = np.nan_to_num(X, nan=-1.0)
    assert np.max(np.abs(solr_score(doc, filled) - model.predict(filled))) <= float32_sum_tolerance(model.trees_)


def test_linear_models(tmp_path):
    from ranklearn.models.coordinate_ascent import CoordinateAscent
    from ranklearn.models.linear import LinearRegression

    rng = np.random.default_rng(0)
    X = rng.random((60, 4)).astype(np.float32)
    y = (X[:, 0] > 0.5).astype(int)
    qid = np.repeat(np.arange(6), 10)
    ca = CoordinateAscent(n_estimators=1, line_search_steps=5, random_state=0).fit(X, y, qid)
    doc = solr_model(ca, feature_names=["a", "b", "c", "d"])
    check_shape(doc)
    assert doc["class"] == LINEAR and list(doc["params"]["weights"]) == ["a", "b", "c", "d"]
    assert np.max(np.abs(solr_score(doc, X) - ca.predict(X))) <= 1e-6 * max(1.0, np.max(np.abs(ca.predict(X))))
    lr = LinearRegression().fit(X, y, qid)
    with pytest.raises(ValueError, match="no constant term"):
        solr_model(lr)


def test_random_forest_and_file(tmp_path):
    from ranklearn.datasets import make_ranking
    from ranklearn.models.random_forest import RandomForest

    X, y, qid = make_ranking(40, 10, random_state=0, return_X_y=True)
    forest = RandomForest(n_estimators=3, random_state=0).fit(X, y, qid)
    path = tmp_path / "solr.json"
    export_solr(forest, path, name="rf")  # trained without NaN: no missing-value branch to lose
    _, X_nan = nan_tree_model(n_estimators=1)
    with_nan = RandomForest(n_estimators=2, random_state=0).fit(X_nan, *make_ranking(80, 12, random_state=0, return_X_y=True)[1:])
    assert with_nan.trained_with_missing_
    with_nan.save(tmp_path / "rf.json")
    from ranklearn.io import load_model

    for forest_with_nan in (with_nan, load_model(tmp_path / "rf.json")):  # the flag is saved
        with pytest.raises(ValueError, match="--missing-as"):
            solr_model(forest_with_nan)
    doc = json.loads(path.read_text())
    check_shape(doc)
    rows = threshold_rows(model_trees(forest, "test"), np.asarray(X, dtype=np.float32))
    rows = rows[~np.isnan(rows).any(axis=1)]
    assert np.max(np.abs(solr_score(doc, rows) - forest.predict(rows))) <= float32_sum_tolerance(model_trees(forest, "t"))
