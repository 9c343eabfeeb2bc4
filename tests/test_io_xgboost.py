"""XGBoost JSON model export and import, and the JSON dump, checked with XGBoost itself."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import nan_tree_model, threshold_rows

from ranklearn import LambdaMART
from ranklearn.datasets import load_letor_fold
from ranklearn.exceptions import ModelFormatError
from ranklearn.io._trees import breadth_first, float32_sum_tolerance, model_trees
from ranklearn.io.xgboost import export_xgboost, import_xgboost, score_xgboost, xgboost_dump, xgboost_model_json

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def nan_model():
    return nan_tree_model()


def _xgb_scores(model, tmp_path, X):
    path = tmp_path / "model.json"
    export_xgboost(model, path)
    booster = xgb.Booster(model_file=str(path))
    return booster.predict(xgb.DMatrix(X, missing=np.nan), output_margin=True).astype(np.float64)


def test_mq2008_test_rows(shared_data, tmp_path):
    train, _, test = load_letor_fold(shared_data / "MQ2008", 1, sparse=False)
    model = LambdaMART(n_estimators=60, random_state=0).fit(train.X, train.y, train.qid)
    X = np.asarray(test.X)
    diff = np.max(np.abs(_xgb_scores(model, tmp_path, X) - model.predict(X)))
    assert diff <= float32_sum_tolerance(model.trees_)
    # and the threshold rows of this model, as float32 and as the doubles XGBoost casts
    rows = threshold_rows(model.trees_, X.astype(np.float32))
    assert np.max(np.abs(_xgb_scores(model, tmp_path, rows) - model.predict(rows))) <= float32_sum_tolerance(model.trees_)


def test_nan_rows_and_every_threshold(nan_model, tmp_path):
    """At, and one float32 step either side of, every threshold, and NaN at every split: a
    threshold written as ranklearn's own value would send the rows at it the other way."""
    model, X = nan_model
    tol = float32_sum_tolerance(model.trees_)
    for rows in (X, threshold_rows(model.trees_, X), threshold_rows(model.trees_, X, dtype=np.float64)):
        assert np.max(np.abs(_xgb_scores(model, tmp_path, rows) - model.predict(rows))) <= tol
    # the rounding is what makes it pass: XGBoost's '<' on ranklearn's thresholds goes wrong
    doc = xgboost_model_json(model)
    for tree_doc, tree in zip(doc["learner"]["gradient_booster"]["model"]["trees"], map(breadth_first, model.trees_)):
        internal = tree.feature >= 0
        tree_doc["split_conditions"] = np.where(internal, tree.threshold, tree.value).tolist()
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(doc))
    rows = threshold_rows(model.trees_, X)
    wrong_scores = xgb.Booster(model_file=str(wrong)).predict(xgb.DMatrix(rows, missing=np.nan), output_margin=True)
    assert np.max(np.abs(wrong_scores - model.predict(rows))) > 100 * tol


def test_schema_of_the_json_model(nan_model):
    model, _ = nan_model
    doc = xgboost_model_json(model, [f"q{j}" for j in range(model.n_features_in_)])
    learner = doc["learner"]
    assert learner["objective"]["name"] == "rank:ndcg"
    assert learner["learner_model_param"]["base_score"] == "0"
    assert learner["feature_names"][0] == "q0"
    trees = learner["gradient_booster"]["model"]["trees"]
    assert len(trees) == len(model.trees_)
    for t, tree in zip(trees, map(breadth_first, model.trees_)):
        n = tree.feature.shape[0]
        for key in ("split_indices", "split_conditions", "left_children", "right_children", "default_left", "base_weights", "parents"):
            assert len(t[key]) == n, key
        assert t["parents"][0] == 2147483647 and t["tree_param"]["num_nodes"] == str(n)
        leaves = np.asarray(t["left_children"]) == -1
        assert np.array_equal(np.asarray(t["split_conditions"])[leaves], tree.value[tree.feature < 0])


def test_named_features_are_checked_by_xgboost(nan_model, tmp_path):
    model, X = nan_model
    names = [f"q{j}" for j in range(model.n_features_in_)]
    path = tmp_path / "named.json"
    export_xgboost(model, path, feature_names=names)
    booster = xgb.Booster(model_file=str(path))
    assert booster.feature_names == names
    got = booster.predict(xgb.DMatrix(X, missing=np.nan, feature_names=names), output_margin=True)
    assert np.max(np.abs(got - model.predict(X))) <= float32_sum_tolerance(model.trees_)


def test_random_forest_export(tmp_path):
    from ranklearn.models.random_forest import RandomForest

    model0, X = nan_tree_model(n_estimators=5)
    from ranklearn.datasets import make_ranking

    _, y, qid = make_ranking(80, 12, random_state=0, return_X_y=True)
    forest = RandomForest(n_estimators=4, random_state=0).fit(X, y, qid)
    trees = model_trees(forest, "test")
    assert len(trees) == sum(len(b) for b in forest.bags_)
    rows = threshold_rows(trees, X)
    assert np.max(np.abs(_xgb_scores(forest, tmp_path, rows) - forest.predict(rows))) <= float32_sum_tolerance(trees)


def test_round_trip_export_import(nan_model, tmp_path):
    model, X = nan_model
    path = tmp_path / "m.json"
    export_xgboost(model, path)
    back = import_xgboost(path)
    rows = np.vstack([X, threshold_rows(model.trees_, X)])
    assert np.array_equal(back.predict(rows), model.predict(rows))  # same splits, same float64 leaves


def test_import_a_model_trained_by_xgboost(nan_model, tmp_path):
    """XGBoost's own rank:ndcg model (with NaN, and a base_score) scores the same in ranklearn."""
    _, X = nan_model
    from ranklearn.datasets import make_ranking

    _, y, qid = make_ranking(80, 12, random_state=0, return_X_y=True)
    sizes = np.unique(qid, return_counts=True)[1]
    dtrain = xgb.DMatrix(X, y, missing=np.nan)
    dtrain.set_group(sizes)
    booster = xgb.train({"objective": "rank:ndcg", "max_depth": 4, "base_score": 0.25}, dtrain, 20)
    path = tmp_path / "xgb.json"
    booster.save_model(str(path))
    model = import_xgboost(path)
    rows = np.vstack([X, threshold_rows(model.trees_, X)])
    expected = booster.predict(xgb.DMatrix(rows, missing=np.nan), output_margin=True)
    assert np.max(np.abs(model.predict(rows) - expected)) <= float32_sum_tolerance(model.trees_)
    assert score_xgboost(path, rows).shape == (rows.shape[0],)


def test_import_refuses_what_it_cannot_read(nan_model, tmp_path):
    model, _ = nan_model
    doc = xgboost_model_json(model)
    doc["learner"]["objective"]["name"] = "binary:logistic"
    bad = tmp_path / "logistic.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="binary:logistic"):
        import_xgboost(bad)
    (tmp_path / "text.json").write_text("not json")
    with pytest.raises(ModelFormatError, match="not an XGBoost JSON model"):
        import_xgboost(tmp_path / "text.json")
    with pytest.raises(ModelFormatError, match="cannot read"):
        import_xgboost(tmp_path / "absent.json")


def test_dump_is_xgboosts_dump_shape(nan_model):
    """The dump has the fields and nesting of XGBoost's own ``get_dump(dump_format="json")``."""
    model, _ = nan_model
    dump = xgboost_dump(model)
    assert len(dump) == len(model.trees_)
    X = np.random.default_rng(0).random((200, 3)).astype(np.float32)
    X[::5, 1] = np.nan
    d = xgb.DMatrix(X, np.arange(200) % 3, missing=np.nan, feature_names=["a", "b", "c"])
    d.set_group([20] * 10)
    theirs = json.loads(xgb.train({"objective": "rank:ndcg", "max_depth": 2}, d, 1).get_dump(dump_format="json")[0])
    ours = dump[0]
    assert set(ours) == set(theirs) and set(ours["children"][0]) <= set(theirs["children"][0]) | {"leaf", "nodeid"}
    tree = breadth_first(model.trees_[0])  # the JSON model's node ids
    assert ours["yes"] == tree.left[0] and ours["no"] == tree.right[0]
    assert ours["missing"] == (tree.left[0] if tree.missing_left[0] else tree.right[0])
    assert [c["nodeid"] for c in ours["children"]] == [ours["yes"], ours["no"]]


def test_refuses_a_linear_model():
    from ranklearn.models.linear import LinearRegression

    X = np.random.default_rng(0).random((20, 3))
    model = LinearRegression().fit(X, np.arange(20) % 2, np.repeat([0, 1], 10))
    with pytest.raises(ValueError, match="holds tree models"):
        xgboost_model_json(model)


def test_single_leaf_trees_and_a_ranklib_import(nan_model, tmp_path):
    """A tree of one leaf (XGBoost's one-node tree), and a model read from RankLib's format, whose
    nodes are numbered depth first (XGBoost's predictor takes a right child as left + 1)."""
    from ranklearn.io.ranklib import export_ranklib, import_ranklib
    from ranklearn.tree.tree import Tree

    model, X = nan_model
    one = np.ones(1)
    leaf = Tree(feature=-one.astype(np.int32), bin_threshold=np.zeros(1, np.int32), threshold=np.zeros(1),
                missing_left=np.zeros(1, bool), left=-one.astype(np.int32), right=-one.astype(np.int32),
                value=one * 0.375, gain=np.zeros(1), count=np.ones(1, np.int64))  # fmt: skip
    with_leaf = LambdaMART.from_trees([*model.trees_[:2], leaf], model.n_features_in_)
    assert np.max(np.abs(_xgb_scores(with_leaf, tmp_path, X) - with_leaf.predict(X))) <= float32_sum_tolerance(with_leaf.trees_)
    with pytest.warns(UserWarning):
        export_ranklib(model, tmp_path / "m.txt")
    imported = import_ranklib(tmp_path / "m.txt", model.n_features_in_)
    clean = np.nan_to_num(X)
    got = _xgb_scores(imported, tmp_path, clean)
    assert np.max(np.abs(got - imported.predict(clean))) <= float32_sum_tolerance(imported.trees_)


def test_breadth_first_keeps_the_tree():
    from ranklearn.tree.tree import Tree

    # depth-first: 0 -> (1, 4), 1 -> (2, 3)
    tree = Tree(feature=np.array([0, 1, -1, -1, -1], np.int32), bin_threshold=np.zeros(5, np.int32),
                threshold=np.array([0.5, 0.25, 0, 0, 0]), missing_left=np.array([True, False, False, False, False]),
                left=np.array([1, 2, -1, -1, -1], np.int32), right=np.array([4, 3, -1, -1, -1], np.int32),
                value=np.array([0, 0, 1.0, 2.0, 3.0]), gain=np.zeros(5), count=np.zeros(5, np.int64))  # fmt: skip
    bfs = breadth_first(tree)
    assert bfs.left.tolist() == [1, 3, -1, -1, -1] and bfs.right.tolist() == [2, 4, -1, -1, -1]
    assert bfs.value.tolist() == [0, 0, 3.0, 1.0, 2.0] and bfs.missing_left.tolist() == [True, False, False, False, False]
    bfs.validate(2)
    X = np.array([[0.1, 0.1], [0.1, 0.3], [0.7, 0.0], [np.nan, 0.3]], np.float32)
    assert np.array_equal(LambdaMART.from_trees([bfs], 2).predict(X), LambdaMART.from_trees([tree], 2).predict(X))
