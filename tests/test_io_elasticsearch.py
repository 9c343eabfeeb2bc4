"""Elasticsearch / OpenSearch LTR plugin export, checked with a reference scorer of the plugin's
rules (its Java does not run here) and against the shape its parsers accept."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import nan_tree_model, threshold_rows

from ranklearn import LambdaMART
from ranklearn.data import Normalizer
from ranklearn.datasets import load_letor_fold
from ranklearn.io._trees import float32_sum_tolerance, fold_normalizer
from ranklearn.io.elasticsearch import export_elasticsearch, ltr_plugin_model
from ranklearn.io.ranklib import import_ranklib


def plugin_score(body: dict, names: list[str], X: np.ndarray) -> np.ndarray:
    """The plugin's scoring of a model/xgboost+json or model/linear definition, after
    o19s/elasticsearch-learning-to-rank src/main/java/com/o19s/es/ltr/ranker/dectree/
    NaiveAdditiveDecisionTree.java (Split.eval: NaN goes to the child whose id is `missing`,
    else left when threshold > x, all float; score sums weight 1 * leaf output in float),
    ranker/parser/XGBoostJsonParser.java (split_condition and leaf parsed as float; objective
    rank:ndcg: no transform), ranker/linear/LinearRanker.java (sum of weight * x in float) and
    ranker/normalizer/{Standard,MinMax}FeatureNormalizer.java (float arithmetic, per feature)."""
    spec = body["model"]["model"]
    ordinal = {n: i for i, n in enumerate(names)}
    X = np.array(X, dtype=np.float32)
    for name, norm in spec.get("feature_normalizers", {}).items():
        j = ordinal[name]
        if "standard" in norm:
            p = norm["standard"]
            X[:, j] = (X[:, j] - np.float32(p["mean"])) / np.float32(p["standard_deviation"])
        else:
            p = norm["min_max"]
            lo, hi = np.float32(p["minimum"]), np.float32(p["maximum"])
            X[:, j] = (X[:, j] - lo) / np.float32(hi - lo)
    definition = spec["definition"]
    out = np.zeros(X.shape[0], dtype=np.float32)
    if spec["type"] == "model/linear":
        for name, w in definition.items():
            out = out + np.float32(w) * X[:, ordinal[name]]
        return out.astype(np.float64)
    assert spec["type"] == "model/xgboost+json" and definition["objective"] == "rank:ndcg"

    def eval_tree(node, row):
        while "leaf" not in node:
            x = row[ordinal[node["split"]]]
            left, right = node["children"]
            if np.isnan(x):
                node = left if node["missing"] == node["yes"] else right
            elif _java_float(node["split_condition"]) > x:
                node = left
            else:
                node = right
        return np.float32(node["leaf"])

    for r, row in enumerate(X):
        total = np.float32(0)
        for tree in definition["splits"]:
            total = np.float32(total + np.float32(1) * eval_tree(tree, row))
        out[r] = total
    return out.astype(np.float64)


def _java_float(value: float) -> np.float32:
    """Java's (float) of a double: beyond float32's range, infinity."""
    with np.errstate(over="ignore"):
        return np.float32(value)


def check_shape(body: dict, names: list[str]) -> None:
    """What the plugin parses (StoredLtrModel.java: model.name, model.model.{type, definition,
    feature_normalizers}; XGBoostJsonParser.SplitParserState: a split has nodeid, depth, split (a
    feature of the set), split_condition, yes, no, missing and two children, the first `yes`, the
    second `no`; a leaf nodeid and leaf; LinearRankerParser: feature name -> number)."""
    assert set(body) == {"model"} and set(body["model"]) == {"name", "model"}
    spec = body["model"]["model"]
    assert set(spec) <= {"type", "definition", "feature_normalizers"}
    for name, norm in spec.get("feature_normalizers", {}).items():
        assert name in names and len(norm) == 1 and set(norm) <= {"standard", "min_max"}
    definition = spec["definition"]
    if spec["type"] == "model/linear":
        assert set(definition) <= set(names) and all(isinstance(v, float) for v in definition.values())
        return
    if spec["type"] == "model/ranklib":
        assert isinstance(definition, str)
        return

    def node(n):
        if "leaf" in n:
            assert set(n) == {"nodeid", "leaf"}
            return
        assert set(n) == {"nodeid", "depth", "split", "split_condition", "yes", "no", "missing", "children"}
        assert n["split"] in names and n["missing"] in (n["yes"], n["no"])
        assert [c["nodeid"] for c in n["children"]] == [n["yes"], n["no"]]
        for child in n["children"]:
            node(child)

    json.dumps(definition, allow_nan=False)  # valid JSON for Jackson: no Infinity
    for tree in definition["splits"]:
        node(tree)


@pytest.fixture(scope="module")
def nan_model():
    return nan_tree_model()


def test_xgboost_json_on_nan_and_every_threshold(nan_model):
    """NaN takes the learned branch (the plugin's unmatched features are NaN); values at and one
    float32 step either side of every threshold go where predict sends them."""
    model, X = nan_model
    names = [f"feat_{j}" for j in range(model.n_features_in_)]
    body = ltr_plugin_model(model, name="m", feature_names=names)
    check_shape(body, names)
    assert body["model"]["model"]["type"] == "model/xgboost+json"
    rows = np.vstack([X, threshold_rows(model.trees_, X)])
    assert np.max(np.abs(plugin_score(body, names, rows) - model.predict(rows))) <= float32_sum_tolerance(model.trees_)


def test_mq2008_with_a_standard_normalizer(shared_data, tmp_path):
    """A tree model trained on z-scores: its splits move onto the raw values, and the plugin
    scores raw features as predict scores normalized ones, on the test rows and on rows at and
    next to every split (in raw values)."""
    train, _, test = load_letor_fold(shared_data / "MQ2008", 1, sparse=False)
    norm = Normalizer("zscore", per_query=False).fit(train.X)
    model = LambdaMART(n_estimators=30, random_state=0).fit(norm.transform(train.X), train.y, train.qid)
    names = [f"f{j + 1}" for j in range(model.n_features_in_)]
    path = tmp_path / "body.json"
    export_elasticsearch(model, path, normalizer=norm)
    body = json.loads(path.read_text())
    check_shape(body, names)
    assert "feature_normalizers" not in body["model"]["model"]
    X = np.asarray(test.X, dtype=np.float32)
    raw_trees = fold_normalizer(model, norm, "test").trees_
    for rows in (X, threshold_rows(raw_trees, X)):
        got = plugin_score(body, names, rows)
        assert np.max(np.abs(got - model.predict(norm.transform(rows)))) <= float32_sum_tolerance(model.trees_)
    # the plugin's own float32 normalization would send some documents across a split
    spec = ltr_plugin_model(LambdaMART.from_trees(raw_trees, model.n_features_in_), feature_names=names)
    spec["model"]["model"]["feature_normalizers"] = {
        n: {"standard": {"mean": float(m), "standard_deviation": float(s)}}
        for n, m, s in zip(names, norm.params_["mean"], norm.params_["std"]) if s > 0
    }
    spec["model"]["model"]["definition"] = ltr_plugin_model(model, feature_names=names)["model"]["model"]["definition"]
    naive = plugin_score(spec, names, X)
    assert np.max(np.abs(naive - model.predict(norm.transform(X)))) > 100 * float32_sum_tolerance(model.trees_)


def test_fold_normalizer_min_max_and_refusals(nan_model):
    model, X = nan_model
    norm = Normalizer("linear", per_query=False).fit(X)
    trained = LambdaMART(n_estimators=10, num_leaves=7, random_state=0).fit(norm.transform(X), *_labels())
    raw = fold_normalizer(trained, norm, "test")
    rows = np.vstack([X, threshold_rows(raw.trees_, X)])
    assert np.array_equal(raw.predict(rows), trained.predict(norm.transform(rows)))
    with pytest.raises(ValueError, match="per-query"):
        fold_normalizer(trained, Normalizer("zscore").fit(X), "test")


def _labels():
    from ranklearn.datasets import make_ranking

    _, y, qid = make_ranking(80, 12, random_state=0, return_X_y=True)
    return y, qid


def test_linear_models_and_types(tmp_path):
    from ranklearn.models.coordinate_ascent import CoordinateAscent
    from ranklearn.models.linear import LinearRegression

    rng = np.random.default_rng(0)
    X = rng.random((60, 4)).astype(np.float32)
    y = (X[:, 0] > 0.5).astype(int)
    qid = np.repeat(np.arange(6), 10)
    names = ["a", "b", "c", "d"]
    ca = CoordinateAscent(n_estimators=1, line_search_steps=5, random_state=0).fit(X, y, qid)
    body = ltr_plugin_model(ca, feature_names=names)
    check_shape(body, names)
    assert body["model"]["model"]["type"] == "model/linear"
    assert np.max(np.abs(plugin_score(body, names, X) - ca.predict(X))) <= 1e-6
    norm = Normalizer("linear", per_query=False).fit(X)
    body = ltr_plugin_model(ca, feature_names=names, normalizer=norm)
    assert body["model"]["model"]["feature_normalizers"]["a"] == {
        "min_max": {"minimum": float(norm.params_["min"][0]), "maximum": float(norm.params_["max"][0])}
    }
    on_normalized = CoordinateAscent(n_estimators=1, line_search_steps=5, random_state=0).fit(norm.transform(X), y, qid)
    body = ltr_plugin_model(on_normalized, feature_names=names, normalizer=norm)
    assert np.max(np.abs(plugin_score(body, names, X) - on_normalized.predict(norm.transform(X)))) <= 1e-5
    # linear regression has a constant term: RankLib's linear model holds it, model/linear does not
    lr = LinearRegression().fit(X, y, qid)
    body = ltr_plugin_model(lr)
    assert body["model"]["model"]["type"] == "model/ranklib"
    (tmp_path / "lr.txt").write_text(body["model"]["model"]["definition"])
    assert np.array_equal(import_ranklib(tmp_path / "lr.txt").predict(X), lr.predict(X))
    with pytest.raises(ValueError, match="no constant term"):
        ltr_plugin_model(lr, model_type="linear")


def test_ranklib_type_and_refusals(nan_model, tmp_path):
    model, X = nan_model
    with pytest.warns(UserWarning, match="NaN right"):
        body = ltr_plugin_model(model, model_type="ranklib")
    (tmp_path / "m.txt").write_text(body["model"]["model"]["definition"])
    clean = np.nan_to_num(X)
    assert np.max(np.abs(import_ranklib(tmp_path / "m.txt").predict(clean) - model.predict(clean))) <= 1e-5
    with pytest.raises(ValueError, match="per-query"):
        ltr_plugin_model(model, normalizer=Normalizer("zscore").fit(X))
    with pytest.raises(ValueError, match="model_type"):
        ltr_plugin_model(model, model_type="onnx")
    with pytest.raises(ValueError, match="holds linear models"):
        ltr_plugin_model(model, model_type="linear")
