"""LambdaMART: training behaviour, persistence, input checks, scikit-learn integration, hostile model files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ranklearn import LambdaMART
from ranklearn.data.groups import group_ptr
from ranklearn.exceptions import ModelFormatError
from ranklearn.io import load_model
from ranklearn.metrics import get_metric
from _helpers import TINY_TREES, small_data

NDCG10 = get_metric("ndcg@10")


def _ndcg(model, data):
    X, y, q = data
    return NDCG10.mean(y, model.predict(X), group_ptr(q))


def test_learns_well_beyond_random(fitted, splits):
    _, _, te = splits
    rng = np.random.default_rng(0)
    random_ndcg = NDCG10.mean(te[1], rng.normal(size=len(te[1])), group_ptr(te[2]))
    assert _ndcg(fitted, te) > random_ndcg + 0.2
    assert fitted.score(te[0], te[1], qid=te[2]) == pytest.approx(_ndcg(fitted, te))
    hist = fitted.evals_result_["valid_0"]["ndcg@10"]
    assert len(hist) == 40 and hist[-1] > hist[0]


def test_save_load_gives_identical_scores(fitted, splits, tmp_path):
    path = tmp_path / "m.json"
    fitted.save(path)
    again = LambdaMART.load(path)
    X = splits[2][0]
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))
    assert again.get_params() == fitted.get_params()
    assert again.evals_result_ == fitted.evals_result_
    np.testing.assert_array_equal(again.bin_mapper_.transform(X), fitted.bin_mapper_.transform(X))
    assert isinstance(load_model(path), LambdaMART)


def test_corrupted_or_foreign_model_files_are_named(fitted, tmp_path):
    path = tmp_path / "m.json"
    fitted.save(path)
    text = path.read_text()
    (tmp_path / "trunc.json").write_text(text[: len(text) // 2])
    (tmp_path / "edit.json").write_text(text.replace('"value":[', '"value":[1.5,', 1))
    (tmp_path / "foreign.json").write_text(json.dumps({"hello": 1}))
    newer = json.loads(text)
    newer["format_version"] = 99
    (tmp_path / "newer.json").write_text(json.dumps(newer))
    for name, pattern in [
        ("trunc.json", "not valid JSON"),
        ("edit.json", "checksum"),
        ("foreign.json", "not a ranklearn model"),
        ("newer.json", "newer"),
        ("missing.json", "cannot read"),
    ]:
        with pytest.raises(ModelFormatError, match=pattern) as info:
            load_model(tmp_path / name)
        assert name in str(info.value)


def test_deterministic_for_a_seed_and_any_thread_count(splits):
    tr = splits[0]
    kw = dict(n_estimators=8, num_leaves=7, feature_fraction=0.7, bagging_fraction=0.8, random_state=3)
    a = LambdaMART(n_jobs=1, **kw).fit(*tr).predict(tr[0])
    b = LambdaMART(n_jobs=2, **kw).fit(*tr).predict(tr[0])
    np.testing.assert_array_equal(a, b)
    c = LambdaMART(n_jobs=1, **{**kw, "random_state": 4}).fit(*tr).predict(tr[0])
    assert not np.array_equal(a, c)


def test_early_stopping_rolls_back_to_best_iteration(splits):
    tr, va, _ = splits
    m = LambdaMART(n_estimators=300, learning_rate=0.5, num_leaves=31, min_samples_leaf=5,
                   early_stopping_rounds=10, random_state=0).fit(*tr, eval_set=[va])
    hist = m.evals_result_["valid_0"]["ndcg@10"]
    assert len(hist) < 300  # it stopped
    assert m.best_iteration_ == int(np.argmax(hist)) + 1
    assert len(hist) == m.best_iteration_ + 10
    assert len(m.trees_) == m.best_iteration_
    # the kept model scores the validation set exactly as recorded at its best iteration
    assert _ndcg(m, va) == pytest.approx(max(hist), abs=1e-12)


def test_rows_of_a_query_can_come_in_any_order(splits):
    X, y, q = splits[0]
    perm = np.random.default_rng(1).permutation(len(y))
    m1 = LambdaMART(n_estimators=5, random_state=0, bin_subsample=None).fit(X, y, q)
    m2 = LambdaMART(n_estimators=5, random_state=0, bin_subsample=None).fit(X[perm], y[perm], q[perm])
    assert NDCG10.mean(y, m1.predict(X), group_ptr(q)) == pytest.approx(NDCG10.mean(y, m2.predict(X), group_ptr(q)), abs=0.05)


def test_sample_weights(splits):
    X, y, q = splits[0]
    kw = dict(n_estimators=6, num_leaves=7, min_sum_hessian=0.0, random_state=0)
    base = LambdaMART(**kw).fit(X, y, q).predict(X)
    # Newton steps are invariant to a uniform weight: the same trees, the same scores
    twice = LambdaMART(**kw).fit(X, y, q, sample_weight=np.full(len(y), 2.0)).predict(X)
    np.testing.assert_allclose(twice, base, rtol=1e-9, atol=1e-12)
    # per-query weights are the query's weight on each of its rows; they change the model
    qw = np.where(q % 2 == 0, 3.0, 0.2)
    assert not np.allclose(LambdaMART(**kw).fit(X, y, q, sample_weight=qw).predict(X), base)
    with pytest.raises(ValueError, match="sample_weight"):
        LambdaMART(**kw).fit(X, y, q, sample_weight=-np.ones(len(y)))


def test_missing_values_are_learned(splits):
    X, y, q = (a.copy() for a in splits[0])
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.2] = np.nan
    m = LambdaMART(n_estimators=10, random_state=0).fit(X, y, q)
    s = m.predict(X)
    assert np.all(np.isfinite(s)) and m.trained_with_missing_
    assert any(t.missing_left[t.feature >= 0].any() for t in m.trees_)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"num_leaves": 1}, "num_leaves"),
        ({"learning_rate": -0.1}, "learning_rate"),
        ({"max_bins": 300}, "max_bins"),
        ({"metric": "ndcg@0"}, "ndcg@0"),
        ({"metric": "foo@3"}, "foo"),
        ({"lambda_metric": "auc"}, "lambda_metric"),
        ({"feature_fraction": 0}, "feature_fraction"),
        ({"n_jobs": 0}, "n_jobs"),
    ],
)
def test_bad_parameters_raise_naming_them(splits, params, match):
    with pytest.raises(ValueError, match=match):
        LambdaMART(n_estimators=params.pop("n_estimators", 2), **params).fit(*splits[0])


def test_bad_inputs(fitted, splits):
    X, y, q = splits[0]
    with pytest.raises(ValueError, match="qid"):
        LambdaMART().fit(X, y)
    with pytest.raises(ValueError, match="lengths differ"):
        LambdaMART().fit(X, y[:-1], q)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(X[:, :5])
    bad = X.copy()
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="inf"):
        fitted.predict(bad)
    with pytest.raises(ValueError, match="finite"):
        LambdaMART().fit(X, np.where(np.arange(len(y)) == 5, np.nan, y), q)


def test_feature_importances(fitted):
    imp = fitted.feature_importances_
    assert imp.shape == (12,) and imp.sum() == pytest.approx(1.0)
    splits = fitted.feature_importance("split")
    assert splits.sum() == sum(int((t.feature >= 0).sum()) for t in fitted.trees_)
    # make_ranking's informative features come first; noise features should matter less
    assert imp[:8].sum() > imp[8:].sum()


# --------------------------------------------------------- scikit-learn and peers
def test_clone_and_grid_search_with_query_groups(splits):
    import sklearn
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, GroupKFold

    X, y, q = splits[0]
    est = LambdaMART(n_estimators=5, random_state=0)
    assert clone(est).get_params() == est.get_params()
    with sklearn.config_context(enable_metadata_routing=True):
        est = est.set_fit_request(qid=True).set_score_request(qid=True)
        gs = GridSearchCV(est, {"num_leaves": [3, 15]}, cv=GroupKFold(n_splits=3))
        gs.fit(X, y, qid=q, groups=q)
    assert gs.best_params_["num_leaves"] in (3, 15)
    assert np.all(np.isfinite(gs.cv_results_["mean_test_score"]))
    assert 0 < gs.best_score_ <= 1


def test_quality_close_to_lightgbm(splits):
    """With LightGBM's lambda conventions (whole-list ΔNDCG, top-30 truncation, its
    normalization) the two engines must reach the same quality."""
    lgb = pytest.importorskip("lightgbm")
    tr, va, te = splits
    ours = LambdaMART(
        n_estimators=60, num_leaves=15, random_state=0, lambda_metric="ndcg", truncation_level=30,
        lambda_normalization="lightgbm", lambda_distance_weight=True,
    ).fit(*tr)
    theirs = lgb.LGBMRanker(n_estimators=60, num_leaves=15, min_child_samples=20, verbose=-1, random_state=0)
    theirs.fit(tr[0], tr[1], group=np.diff(group_ptr(tr[2])))
    a = _ndcg(ours, te)
    b = NDCG10.mean(te[1], theirs.predict(te[0]), group_ptr(te[2]))
    assert abs(a - b) < 0.02, (a, b)


# ------------------------------------------------------- hostile model files, bad labels
def _forge(path, tmp_path, edit):
    """A model file with a valid checksum but an edited payload (a buggy writer, or an attacker)."""
    import hashlib

    from ranklearn.io.model_file import _canonical

    env = json.loads(path.read_text())
    edit(env["payload"]["trees"][0])
    env["sha256"] = hashlib.sha256(_canonical(env["model_type"], env["payload"])).hexdigest()
    out = tmp_path / "forged.json"
    out.write_text(json.dumps(env))
    return out


def _set(key, index, value):
    def edit(t):
        t[key][index] = value
    return edit


@pytest.mark.parametrize(
    "edit",
    [
        _set("left", 0, 0),  # a cycle: predict would loop forever
        _set("feature", 0, 10**9),  # feature beyond the data: out-of-bounds read
        _set("left", 0, 10**9),  # child outside the tree
        _set("feature", 0, -5),  # neither a split nor a leaf
        lambda t: t.__setitem__("value", t["value"][:1]),  # arrays of different lengths
        lambda t: t.__setitem__("right", [t["left"][0]] + t["right"][1:]),  # a node with two parents
    ],
)
def test_structurally_invalid_trees_are_model_format_errors(fitted, tmp_path, edit):
    import subprocess
    import sys

    path = tmp_path / "m.json"
    fitted.save(path)
    bad = _forge(path, tmp_path, edit)
    with pytest.raises(ModelFormatError, match="forged.json"):
        load_model(bad)
    # and in a fresh process nothing walks the broken tree (a hang or crash would show here)
    code = (
        "import numpy as np\nfrom ranklearn.io import load_model\nfrom ranklearn.exceptions import ModelFormatError\n"
        f"try:\n    load_model({str(bad)!r}).predict(np.zeros((3, 12)))\nexcept ModelFormatError:\n    print('refused')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "refused" in proc.stdout, proc.stderr[-500:]


def test_labels_gain_lambdas_cannot_use_are_refused(splits):
    X, y, q = splits[0]
    big = y.copy()
    big[5] = 2000.0
    with pytest.raises(ValueError, match="gain='linear'"):
        LambdaMART(n_estimators=2).fit(X, big, q)
    assert np.any(LambdaMART(n_estimators=2, gain="linear").fit(X, big, q).predict(X) != 0)
    with pytest.raises(ValueError, match="labels must be >= 0"):
        LambdaMART(n_estimators=2).fit(X, y - 1, q)
    # RankNet lambdas only compare labels: any real labels work
    assert np.any(LambdaMART(n_estimators=2, lambda_metric="none").fit(X, y - 1, q).predict(X) != 0)


def test_interrupt_keeps_the_best_iteration(splits):
    tr, va, _ = splits

    def stop(it, total, results):
        if it == 40:
            raise KeyboardInterrupt

    m = LambdaMART(n_estimators=200, min_samples_leaf=5, learning_rate=0.5, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        m.fit(*tr, eval_set=[va], callbacks=[stop])
    assert m.interrupted_ and m.best_iteration_ <= 40
    assert len(m.trees_) == m.best_iteration_
    assert _ndcg(m, va) == pytest.approx(max(m.evals_result_["valid_0"]["ndcg@10"]), abs=1e-12)


def test_predict_refuses_giant_sparse_input(fitted):
    import scipy.sparse as sp

    giant = sp.csr_matrix((np.ones(3), ([0, 1, 2], [0, 1, 2])), shape=(40, 10**9))
    with pytest.raises(ValueError, match="columns"):
        fitted.predict(giant)


# ------------------------------------------------------------ NaN, parameters, a huge query
def test_lambdamart_nan_means_missing():
    X, y, qid = small_data()
    X[::3, 0] = np.nan
    model = LambdaMART(**TINY_TREES).fit(X, y, qid=qid)
    scores = model.predict(X)
    assert np.isfinite(scores).all()
    assert model.trained_with_missing_


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"n_estimators": -3}, "n_estimators"),
        ({"num_leaves": 1}, "num_leaves"),
        ({"learning_rate": float("nan")}, "learning_rate"),
        ({"learning_rate": 0}, "learning_rate"),
        ({"max_bins": 1}, "max_bins"),
        ({"min_samples_leaf": 0}, "min_samples_leaf"),
        ({"n_jobs": 0}, "n_jobs"),
        ({"sigma": -1.0}, "sigma"),
        ({"lambda_metric": "precision"}, "lambda_metric"),
        ({"lambda_metric": "ndcg@0"}, "positive"),
    ],
)
def test_lambdamart_bad_parameters(params, fragment):
    X, y, qid = small_data()
    with pytest.raises(ValueError, match=fragment):
        LambdaMART(**{**TINY_TREES, **params}).fit(X, y, qid=qid)


def test_ten_thousand_document_query():
    rng = np.random.default_rng(0)
    n = 10_000
    X = rng.normal(size=(n, 5)).astype(np.float32)
    y = rng.integers(0, 5, n).astype(float)
    ptr = np.array([0, n])
    for spec in ("ndcg@10", "ndcg", "err", "map", "p@10", "rr"):
        for ties in ("stable", "average"):
            assert np.isfinite(get_metric(spec, ties=ties).mean(y, np.round(X[:, 0], 1), ptr))
    model = LambdaMART(n_estimators=5, num_leaves=8, random_state=0).fit(X, y, qid=np.zeros(n))
    assert np.isfinite(model.predict(X)).all()


def test_the_gain_serves_the_lambdas_and_the_metric():
    # labels above 1000 need gain="linear"; the metric named by a string follows it (its
    # exp2 gain refused the evaluation set, and its message asked for gain='linear' again)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 3, 60) * 1000.0
    qid = np.repeat(np.arange(6), 10)
    model = LambdaMART(n_estimators=3, num_leaves=3, min_samples_leaf=2, gain="linear")
    model.fit(X, y, qid=qid, eval_set=[(X, y, qid)])
    linear = get_metric("ndcg@10", gain="linear")
    assert model.score(X, y, qid=qid) == pytest.approx(linear.mean(y, model.predict(X), np.arange(0, 61, 10)))
    assert model.evals_result_["valid_0"]["ndcg@10"][-1] == pytest.approx(model.score(X, y, qid=qid))


class _RecordSide:
    """Squared error recording each call's labels and side data (class list: fit copies objectives)."""

    calls: list = []

    def gradients(self, scores, y, ptr, *, side=None):
        _RecordSide.calls.append((y.copy(), side))
        return scores - y, np.ones_like(scores)


def _shuffled_queries_with_positions(seed=0):
    """Rows of 12 queries in shuffled order; y numbers the rows, so a recorded call names them."""
    rng = np.random.default_rng(seed)
    qid = rng.permutation(np.repeat(np.arange(12), 6))
    X = rng.normal(size=(qid.size, 3))
    position = rng.integers(1, 20, qid.size)
    return X, np.arange(qid.size, dtype=float), qid, position


@pytest.mark.parametrize("name", ["LambdaMART", "MART"])
def test_positions_reach_the_objective_in_the_rows_order(name):
    from ranklearn.models import MART

    cls = {"LambdaMART": LambdaMART, "MART": MART}[name]
    X, row, qid, position = _shuffled_queries_with_positions()
    _RecordSide.calls.clear()
    cls(objective=_RecordSide(), n_estimators=2, num_leaves=3, min_samples_leaf=2, bagging_fraction=0.5).fit(
        X, row, qid, position=position
    )
    assert len(_RecordSide.calls) == 2
    for y, side in _RecordSide.calls:
        assert set(side) == {"position"} and side["position"].dtype == np.int64
        order = y.astype(int)  # the rows as fit grouped them by query
        assert not np.array_equal(order, np.sort(order))  # they were reordered
        np.testing.assert_array_equal(side["position"], position[order])
    _RecordSide.calls.clear()
    cls(objective=_RecordSide(), n_estimators=1, num_leaves=3).fit(X, row, qid)
    assert _RecordSide.calls[0][1] is None  # no positions, no side data


def test_an_objective_without_side_still_trains_with_positions():
    class Old:
        def gradients(self, scores, y, ptr):
            return scores - y, np.ones_like(scores)

    X, row, qid, position = _shuffled_queries_with_positions()
    with pytest.warns(UserWarning, match="LambdaMART ignores position=: objective 'Old' does not read it"):
        with_pos = LambdaMART(objective=Old(), n_estimators=2, num_leaves=3).fit(X, row, qid, position=position)
    without = LambdaMART(objective=Old(), n_estimators=2, num_leaves=3).fit(X, row, qid)
    np.testing.assert_array_equal(with_pos.predict(X), without.predict(X))


@pytest.mark.parametrize("normalization", ["docs", "pairs"])
def test_a_query_normalization_is_the_per_query_weight_it_names(normalization):
    """lambda_normalization="docs"/"pairs" (the networks' values, docs/DESIGN.md "Vocabulary")
    trains the model of lambda_normalization="none" with every row weighted by 1 / (documents or
    pairs with different labels of its query), counted by brute force here."""
    from ranklearn.datasets import make_ranking

    X, y, qid = make_ranking(30, 5, n_informative=3, random_state=4, return_X_y=True)
    counts = {}
    for q in np.unique(qid):
        labels = y[qid == q]
        pairs = sum(labels[i] != labels[j] for i in range(len(labels)) for j in range(i + 1, len(labels)))
        counts[q] = len(labels) if normalization == "docs" else max(pairs, 1)
    weight = np.array([1.0 / counts[q] for q in qid])
    kw = dict(n_estimators=5, num_leaves=4, min_samples_leaf=2, random_state=0)
    normalized = LambdaMART(**kw, lambda_normalization=normalization).fit(X, y, qid=qid)
    weighted = LambdaMART(**kw, lambda_normalization="none").fit(X, y, qid=qid, sample_weight=weight)
    np.testing.assert_array_equal(normalized.predict(X), weighted.predict(X))
    plain = LambdaMART(**kw, lambda_normalization="none").fit(X, y, qid=qid)
    assert not np.array_equal(normalized.predict(X), plain.predict(X))
    assert normalized.objective_["query_normalization"] == normalization
    assert "query_normalization" not in plain.objective_  # the other normalizations save what they did
