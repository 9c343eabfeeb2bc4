"""LightGBM text-model export, checked with LightGBM's own reader."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn import LambdaMART
from ranklearn.datasets import load_letor_fold, make_ranking
from ranklearn.io.lightgbm import double_thresholds, export_lightgbm, lightgbm_model_string
from ranklearn.tree.tree import Tree

lgb = pytest.importorskip("lightgbm")

TOL = 1e-6  # the bound; the sums are in fact bit-identical


def _synthetic(nan_fraction: float = 0.0, seed: int = 0):
    X, y, qid = make_ranking(80, 12, random_state=seed, return_X_y=True)
    X = X.astype(np.float32)
    if nan_fraction:
        rng = np.random.default_rng(seed)
        X[rng.random(X.shape) < nan_fraction] = np.nan
    return X, y, qid


@pytest.fixture(scope="module")
def nan_model():
    X, y, qid = _synthetic(nan_fraction=0.15)
    model = LambdaMART(n_estimators=30, num_leaves=15, min_samples_leaf=5, random_state=0).fit(X, y, qid)
    assert any(np.any(t.missing_left[t.feature >= 0]) for t in model.trees_), "no split sends NaN left"
    assert any(np.any(~t.missing_left[t.feature >= 0]) for t in model.trees_), "no split sends NaN right"
    return model, X


def _booster(model, tmp_path):
    path = tmp_path / "model.txt"
    export_lightgbm(model, path)
    return lgb.Booster(model_file=str(path))


def test_mq2008_fold1_test_scores_equal(shared_data, tmp_path):
    train, _, test = load_letor_fold(shared_data / "MQ2008", 1, sparse=False)
    model = LambdaMART(n_estimators=60, random_state=0).fit(train.X, train.y, train.qid)
    X = np.asarray(test.X, dtype=np.float32)
    got = _booster(model, tmp_path).predict(X)
    assert np.max(np.abs(got - model.predict(X))) <= TOL


def test_float64_input_goes_the_way_of_predict(shared_data, tmp_path):
    # LightGBM compares doubles: with thresholds written as the float32 values, a document whose
    # file says 0.7 went right in LightGBM and left in ranklearn (which rounds it to float32)
    from ranklearn.data import load_svmlight

    train, _, _ = load_letor_fold(shared_data / "MQ2008", 1, sparse=False)
    model = LambdaMART(n_estimators=20, random_state=0).fit(train.X, train.y, train.qid)
    test = load_svmlight(shared_data / "MQ2008" / "Fold1" / "test.txt", dtype=np.float64, n_features=model.n_features_in_)
    X64 = np.asarray(test.X, dtype=np.float64)
    assert not np.array_equal(X64, X64.astype(np.float32).astype(np.float64))  # the file's decimals are doubles
    booster = _booster(model, tmp_path)
    assert np.max(np.abs(booster.predict(X64) - model.predict(X64))) <= TOL
    # and a double on either side of every float32 boundary between thresholds
    rows, rng = [], np.random.default_rng(3)
    for tree in model.trees_:
        for node in np.flatnonzero(tree.feature >= 0):
            t = np.float32(tree.threshold[node])
            middle = (float(t) + float(np.nextafter(t, np.float32(np.inf)))) / 2
            for v in (np.nextafter(middle, -np.inf), middle, np.nextafter(middle, np.inf), float(t) + 1e-12):
                row = X64[rng.integers(X64.shape[0])].copy()
                row[tree.feature[node]] = v
                rows.append(row)
    rows = np.array(rows)
    assert np.max(np.abs(booster.predict(rows) - model.predict(rows))) <= TOL


def test_double_thresholds_at_the_edges_of_float32():
    # every double near each threshold goes the way float32(x) <= float32 below t sends it
    f32max = float(np.finfo(np.float32).max)
    ts = np.array([0.0, -0.0, 0.1, -1 / 3, 1e-40, -1.4e-45, 16777217.0, f32max, -f32max, 1e39, -1e39, 3.5e38, 0.7])
    for t, T in zip(ts, double_thresholds(ts)):
        with np.errstate(over="ignore"):
            t_down = np.float32(t)  # the largest float32 (inf included) <= t: the predictor's split
        if float(t_down) > t:
            t_down = np.nextafter(t_down, np.float32(-np.inf))
        for x in (T, np.nextafter(T, np.inf), np.nextafter(T, -np.inf), t, 3.5e38, -3.5e38, f32max):
            with np.errstate(over="ignore"):
                assert (x <= T) == (np.float32(x) <= t_down), (t, T, x)


def test_nan_rows_scores_equal(nan_model, tmp_path):
    model, X = nan_model
    X_new, *_ = _synthetic(nan_fraction=0.3, seed=1)
    for rows in (X, X_new):
        assert np.isnan(rows).any()
        got = _booster(model, tmp_path).predict(rows)
        assert np.max(np.abs(got - model.predict(rows))) <= TOL


def test_model_str_equals_model_file(nan_model):
    model, X = nan_model
    booster = lgb.Booster(model_str=lightgbm_model_string(model))
    assert booster.num_trees() == len(model.trees_)
    assert booster.num_feature() == model.n_features_in_
    assert np.max(np.abs(booster.predict(X) - model.predict(X))) <= TOL


def test_values_at_and_next_to_every_threshold(nan_model, tmp_path):
    """Rows holding each threshold, the float32 just below and just above: the branch taken
    flips exactly there, so any rounding of the written thresholds would show."""
    model, X = nan_model
    rng = np.random.default_rng(2)
    rows = []
    for tree in model.trees_:
        for node in np.flatnonzero(tree.feature >= 0):
            t = np.float32(tree.threshold[node])
            assert float(t) == tree.threshold[node]  # thresholds are float32 data values
            with np.errstate(over="ignore"):
                up = np.nextafter(t, np.float32(np.inf))
            # a split that sends every value left has the largest float32 as threshold
            for v in (np.nextafter(t, np.float32(-np.inf)), t, *([up] if np.isfinite(up) else [])):
                row = X[rng.integers(X.shape[0])].copy()
                row[tree.feature[node]] = v
                rows.append(row)
    rows = np.array(rows, dtype=np.float32)
    got = _booster(model, tmp_path).predict(rows)
    assert np.max(np.abs(got - model.predict(rows))) <= TOL


def test_single_leaf_trees(nan_model, tmp_path):
    model, X = nan_model
    leaf = Tree(
        feature=np.array([-1], np.int32),
        bin_threshold=np.zeros(1, np.int32),
        threshold=np.zeros(1),
        missing_left=np.zeros(1, np.bool_),
        left=np.array([-1], np.int32),
        right=np.array([-1], np.int32),
        value=np.array([0.375]),
        gain=np.zeros(1),
        count=np.array([10], np.int64),
    )
    with_leaf = LambdaMART.from_trees([*model.trees_[:3], leaf, *model.trees_[3:]], model.n_features_in_)
    with_leaf.set_params(learning_rate=model.learning_rate)
    got = _booster(with_leaf, tmp_path).predict(X)
    assert np.max(np.abs(got - with_leaf.predict(X))) <= TOL
    # a model made only of a single leaf scores every row with its value
    only = LambdaMART.from_trees([leaf], model.n_features_in_)
    assert np.all(lgb.Booster(model_str=lightgbm_model_string(only)).predict(X) == 0.375)


def test_structure_read_back_by_lightgbm(nan_model):
    """LightGBM's own dump of the exported model has ranklearn's splits, directions and leaves."""
    model, _ = nan_model
    dump = lgb.Booster(model_str=lightgbm_model_string(model)).dump_model()

    def same(tree: Tree, node: int, lnode: dict) -> None:
        if tree.feature[node] < 0:
            assert lnode["leaf_value"] == tree.value[node]
            assert lnode["leaf_count"] == tree.count[node]
            return
        assert lnode["split_feature"] == tree.feature[node]
        assert lnode["threshold"] == double_thresholds(tree.threshold[node : node + 1])[0]
        assert np.float32(lnode["threshold"]) == np.float32(tree.threshold[node])  # the same float32 split
        assert lnode["decision_type"] == "<="
        assert lnode["missing_type"] == "NaN"
        assert lnode["default_left"] == bool(tree.missing_left[node])
        assert lnode["internal_count"] == tree.count[node]
        same(tree, int(tree.left[node]), lnode["left_child"])
        same(tree, int(tree.right[node]), lnode["right_child"])

    assert len(dump["tree_info"]) == len(model.trees_)
    for tree, info in zip(model.trees_, dump["tree_info"]):
        assert info["num_leaves"] == tree.n_leaves
        same(tree, 0, info["tree_structure"])


def test_hand_written_tree_text():
    """Node numbering and decision bits on a tree small enough to check by hand."""
    # root: x2 <= 0.5 (NaN left) -> leaf A | node 2: x0 <= -1 (NaN right) -> leaf B | leaf C
    tree = Tree(
        feature=np.array([2, -1, 0, -1, -1], np.int32),
        bin_threshold=np.zeros(5, np.int32),
        threshold=np.array([0.5, 0, -1.0, 0, 0]),
        missing_left=np.array([True, False, False, False, False]),
        left=np.array([1, -1, 3, -1, -1], np.int32),
        right=np.array([2, -1, 4, -1, -1], np.int32),
        value=np.array([0, 0.1, 0, -0.2, 0.3]),
        gain=np.array([4.0, 0, 2.0, 0, 0]),
        count=np.array([100, 60, 40, 15, 25], np.int64),
    )
    model = LambdaMART.from_trees([tree], 3).set_params(learning_rate=0.25)
    text = lightgbm_model_string(model)
    block = text[text.index("Tree=0\n") : text.index("end of trees")]
    assert block.splitlines()[:13] == [
        "Tree=0",
        "num_leaves=3",
        "num_cat=0",
        "split_feature=2 0",
        "split_gain=4 2",
        "threshold=0.50000002980232239 -0.99999997019767761",  # 0.5 and -1 plus half a float32 step
        "decision_type=10 8",
        "left_child=-1 -2",
        "right_child=1 -3",
        "leaf_value=0.10000000000000001 -0.20000000000000001 0.29999999999999999",
        "leaf_count=60 15 25",
        "internal_count=100 40",
        "is_linear=0",
    ]
    assert "feature_infos=none none none" in text
    assert "feature_importances:\nColumn_0=1\nColumn_2=1\n" in text
    rows = np.array([[0, 0, 0.5], [0, 0, np.nan], [-1, 0, 1], [np.nan, 0, 1], [0, 0, 1]], np.float32)
    np.testing.assert_array_equal(lgb.Booster(model_str=text).predict(rows), [0.1, 0.1, -0.2, 0.3, 0.3])


def test_feature_importances_match_lightgbm(nan_model):
    model, _ = nan_model
    booster = lgb.Booster(model_str=lightgbm_model_string(model))
    np.testing.assert_array_equal(booster.feature_importance("split"), model.feature_importance("split"))
    # LightGBM reads split gains as float32
    np.testing.assert_allclose(booster.feature_importance("gain"), model.feature_importance("gain"), rtol=1e-6)


def test_unfitted_model_rejected(tmp_path):
    with pytest.raises(ValueError, match="export to LightGBM needs a fitted lambdamart or mart model"):
        export_lightgbm(LambdaMART(), tmp_path / "m.txt")
    assert not (tmp_path / "m.txt").exists()


def test_documented_difference_tiny_values_count_as_zero_in_lightgbm():
    """LightGBM reads |x| <= 1e-35 as 0 (the module docstring's one caveat): with a split at 0,
    1e-36 goes right in ranklearn and left in LightGBM; 1e-30 goes right in both."""
    tree = Tree(
        feature=np.array([0, -1, -1], np.int32),
        bin_threshold=np.zeros(3, np.int32),
        threshold=np.zeros(3),
        missing_left=np.zeros(3, np.bool_),
        left=np.array([1, -1, -1], np.int32),
        right=np.array([2, -1, -1], np.int32),
        value=np.array([0.0, -1.0, 1.0]),
        gain=np.zeros(3),
        count=np.zeros(3, np.int64),
    )
    model = LambdaMART.from_trees([tree], 1)
    X = np.array([[1e-36], [0.0], [1e-30]], np.float32)
    np.testing.assert_array_equal(model.predict(X), [1.0, -1.0, 1.0])
    np.testing.assert_array_equal(lgb.Booster(model_str=lightgbm_model_string(model)).predict(X), [-1.0, -1.0, 1.0])


def test_feature_names_and_objective_are_the_models(tmp_path):
    pd = pytest.importorskip("pandas")
    from ranklearn.models import MART

    X, y, qid = _synthetic()
    names = [f"feat_{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    model = LambdaMART(n_estimators=5, random_state=0).fit(frame, y, qid)
    booster = lgb.Booster(model_str=lightgbm_model_string(model))
    assert booster.feature_name() == names  # it wrote Column_0...: LightGBM refused the training frame
    np.testing.assert_allclose(booster.predict(frame, validate_features=True), model.predict(frame), atol=TOL)
    with pytest.raises(lgb.basic.LightGBMError):
        booster.predict(frame[names[::-1]], validate_features=True)  # reordered columns: refused, as ranklearn does
    blank = LambdaMART(n_estimators=2, random_state=0).fit(pd.DataFrame(X, columns=[f"f {i}" for i in range(X.shape[1])]), y, qid)
    assert "feature_names=Column_0 Column_1" in lightgbm_model_string(blank)  # names with blanks cannot be written
    quoted = LambdaMART(n_estimators=2, random_state=0).fit(pd.DataFrame(X, columns=[f'f"{i}:' for i in range(X.shape[1])]), y, qid)
    assert "feature_names=Column_0 Column_1" in lightgbm_model_string(quoted)  # LightGBM refuses JSON's specials
    lgb.Booster(model_str=lightgbm_model_string(quoted)).dump_model()  # a '"' in a name broke its JSON
    mart = MART(n_estimators=3, early_stopping_rounds=None, random_state=0).fit(X, y, qid)
    assert "\nobjective=regression\n" in lightgbm_model_string(mart) and "[objective: regression]" in lightgbm_model_string(mart)
