"""What every ranker inherits from BaseRanker: input checks, parameter and metric checks,
degenerate data, unfitted models, and the label policy.

Label policy, per component (tested here and in test_data_svmlight.py, test_metrics.py,
test_cli_evaluate.py):

* loader and ``RankingDataset``: any finite real label (a file format question);
* estimators train on any finite real labels that their lambdas or loss can use: gain-based
  ones (LambdaMART's NDCG lambdas, LambdaRank, ApproxNDCG, NeuralNDCG) need labels >= 0;
* metrics need labels >= 0 (a negative gain breaks NDCG's [0, 1] range and ERR's stop
  probabilities), so evaluation sets, ``score`` and ``ranklearn evaluate`` reject
  negative labels with a ValueError naming the row (and the file, on the command line);
* labels above 1000 overflow the gain 2^rel-1: DCG/NDCG with ``gain="exp2"`` refuse them.
"""

from __future__ import annotations

import copy
import re
from functools import partial

import numpy as np
import pytest

from ranklearn.datasets import make_ranking_splits
from ranklearn.metrics import get_metric
from ranklearn.models import LambdaMART
from ranklearn.exceptions import FeatureValueError
from ranklearn.registry import REGISTRY, get_model_class
from _helpers import MODEL_IDS, MODELS, TINY_TREES, small_data


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
@pytest.mark.parametrize(
    "case,fragment",
    [
        ("inf_feature", "inf"),
        ("huge_feature", "X holds -1e+40 at row 3 (from 0), feature 2 (from 1, as in SVMlight files), beyond float32"),
        ("inf_label", "finite"),
        ("nan_label", "finite"),
        ("text_label", "labels"),
        ("y_short", "lengths differ"),
        ("qid_short", "lengths differ"),
        ("empty", "empty"),
        ("no_features", "no features"),
        ("nan_qid", "qid"),
        ("none_qid", "qid"),
        ("mixed_qid", "comparable"),
        ("no_qid", "qid is required"),
        ("three_d", "2-D"),
    ],
)
def test_estimators_reject_bad_training_data(name, make, case, fragment):
    X, y, qid = small_data()
    kwargs = {}
    if case == "inf_feature":
        X[3, 1] = np.inf
    elif case == "huge_feature":  # finite, but inf as float32: it said "X contains inf"
        X[3, 1] = -1e40
    elif case == "inf_label":
        y[2] = np.inf
    elif case == "nan_label":
        y[2] = np.nan
    elif case == "text_label":
        y = np.array(["1"] * (len(y) - 1) + ["high"], dtype=object)
    elif case == "y_short":
        y = y[:-1]
    elif case == "qid_short":
        qid = qid[:-1]
    elif case == "empty":
        X, y, qid = np.empty((0, 4)), np.empty(0), np.empty(0)
    elif case == "no_features":
        X = np.empty((len(y), 0))
    elif case == "nan_qid":
        qid = qid.astype(float)
        qid[5] = np.nan
    elif case == "none_qid":
        qid = qid.astype(object)
        qid[0] = None
    elif case == "mixed_qid":
        qid = qid.astype(object)
        qid[: len(qid) // 2] = "a"
    elif case == "no_qid":
        qid = None
    elif case == "three_d":
        X = X.reshape(len(y), 2, 2)
    with pytest.raises(ValueError, match=re.escape(fragment)):
        make().fit(X, y, qid=qid, **kwargs)


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
def test_feature_count_at_predict_time(name, make):
    X, y, qid = small_data()
    model = make().fit(X, y, qid=qid)
    for wrong in (X[:, :3], np.hstack([X, X[:, :1]]), X[0]):
        with pytest.raises(ValueError, match="features"):
            model.predict(wrong)


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
def test_degenerate_queries_train_and_predict(name, make):
    """Queries of one document, and data where no query has a relevant document."""
    X, y, qid = small_data()
    for labels, groups in ((y, np.arange(len(y))), (np.zeros_like(y), qid)):
        model = make().fit(X, labels, qid=groups)
        assert np.isfinite(model.predict(X)).all()


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
@pytest.mark.parametrize(
    "param,value,fragment",
    [("metric", "bogus@3", "unknown metric"), ("metric", "ndcg@0", "k must be >= 1"), ("metric", "ndcg@-2", ">= 1")],
)
def test_bad_metric_parameter(name, make, param, value, fragment):
    X, y, qid = small_data()
    model = make().set_params(**{param: value})
    with pytest.raises(ValueError, match=re.escape(fragment)):
        model.fit(X, y, qid=qid)


def test_unfitted_models_say_so():
    from sklearn.exceptions import NotFittedError

    for _, make in MODELS:
        with pytest.raises(NotFittedError):
            make().predict(np.zeros((2, 4)))


# ------------------------------------------------------------------------ negative labels
@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
def test_negative_labels_train_but_do_not_evaluate(name, make):
    """Estimators train on any real labels their lambdas can use; metrics (eval sets, score)
    need labels >= 0. Gain-based lambdas and losses (LambdaMART's default, LambdaRank,
    ApproxNDCG, NeuralNDCG) refuse negative labels, RankNet's only compare them: LambdaRank
    trained on them gave every query whose ideal DCG is not above 0 no gradient, and kept its
    initial network without a word."""
    X, y, qid = small_data()
    if name == "lambdamart":
        with pytest.raises(ValueError, match="labels must be >= 0 for ndcg lambdas"):
            make().fit(X, y - 1.0, qid=qid)
        make = partial(LambdaMART, **TINY_TREES, lambda_metric="none")
    if name == "lambdarank":
        with pytest.raises(ValueError, match="labels must be >= 0 for the NDCG gains of the lambdarank loss"):
            make().fit(X, y - 1.0, qid=qid)
        for loss in ("approxndcg", "neuralndcg"):
            with pytest.raises(ValueError, match=f"labels must be >= 0 for the NDCG gains of the {loss} loss"):
                make().set_params(loss=loss).fit(X, y - 1.0, qid=qid)
        make = partial(make().set_params, loss="ranknet")
    model = make().fit(X, y - 1.0, qid=qid)
    assert np.isfinite(model.predict(X)).all()
    with pytest.raises(ValueError, match=r"labels must be finite and >= 0; row \d+ has -1"):
        model.score(X, y - 1.0, qid=qid)
    with pytest.raises(ValueError, match=r">= 0"):
        make().fit(X, y, qid=qid, eval_set=[(X, y - 1.0, qid)])


# --- queries, eval sets, feature names, score, file: the core's contracts -------------------------
TREES = dict(n_estimators=12, num_leaves=4, min_samples_leaf=3, random_state=0)
NETS = dict(n_estimators=3, hidden=(4,), n_networks=1, random_state=0)


@pytest.fixture(scope="module")
def core_splits():
    return make_ranking_splits(n_queries=(40, 15, 15), n_features=5, n_informative=3, random_state=7)


def rankers():
    """Every registered ranker that can be imported here, with its test settings (``ModelSpec.test``)."""
    out = []
    for name, spec in REGISTRY.items():
        try:
            cls = spec.load_class()
        except ImportError:
            continue
        out.append(pytest.param(cls, spec.test, id=name))
    return out


@pytest.mark.parametrize("cls,params", rankers())
def test_group_sizes_equal_query_ids(cls, params, core_splits):
    tr, va, te = core_splits
    a = cls(**params).fit(tr.X, tr.y, qid=tr.qid, eval_set=[(va.X, va.y, va.qid)])
    b = cls(**params).fit(tr.X, tr.y, group=tr.query_sizes, eval_set=[(va.X, va.y)], eval_group=[va.query_sizes])
    np.testing.assert_array_equal(a.predict(te.X), b.predict(te.X))
    assert a.evals_result_ == b.evals_result_
    assert a.score(te.X, te.y, group=te.query_sizes) == a.score(te.X, te.y, qid=te.qid)
    with pytest.raises(ValueError, match="group sizes add up to"):
        cls(**params).fit(tr.X, tr.y, group=tr.query_sizes[:-1])
    with pytest.raises(ValueError, match="not both"):
        cls(**params).fit(tr.X, tr.y, qid=tr.qid, group=tr.query_sizes)


@pytest.mark.parametrize("cls,params", rankers())
def test_repeated_eval_names_refused_before_any_work(cls, params, core_splits, monkeypatch):
    tr, va, _ = core_splits
    monkeypatch.setattr(cls, "_begin_fit", lambda *a: pytest.fail("training started"))
    with pytest.raises(ValueError, match="repeated: 'v'"):
        cls(**params).fit(tr.X, tr.y, qid=tr.qid, eval_set=[(va.X, va.y, va.qid)] * 2, eval_names=["v", "v"])
    # a bad evaluation set is refused before the training data is binned or moved
    with pytest.raises(ValueError, match="evaluation set 'valid_0' has 4 features"):
        cls(**params).fit(tr.X, tr.y, qid=tr.qid, eval_set=[(va.X[:, :4], va.y, va.qid)])


@pytest.mark.parametrize("cls,params", rankers())
def test_early_stopping_needs_an_eval_set(cls, params, core_splits):
    if "early_stopping_rounds" not in cls().get_params():
        pytest.skip(f"{cls.__name__} has no iterations to stop early")
    tr, *_ = core_splits
    with pytest.raises(ValueError, match="early_stopping_rounds=3 needs an evaluation set"):
        cls(**params, early_stopping_rounds=3).fit(tr.X, tr.y, qid=tr.qid)
    with pytest.raises(ValueError, match="early_stopping_set='valid_0' but no eval_set"):
        cls(**params).fit(tr.X, tr.y, qid=tr.qid, early_stopping_set="valid_0")


def test_early_stopping_watches_the_last_set_by_default(core_splits):
    tr, va, te = core_splits
    sets = [(tr.X, tr.y, tr.qid), (va.X, va.y, va.qid)]
    m = LambdaMART(**{**TREES, "n_estimators": 40}, early_stopping_rounds=5).fit(
        tr.X, tr.y, qid=tr.qid, eval_set=sets, eval_names=["train", "vali"]
    )
    vali = m.evals_result_["vali"]["ndcg@10"]
    assert m.best_iteration_ == int(np.argmax(vali)) + 1 and m.best_score_ == max(vali)
    assert len(m.trees_) == m.best_iteration_ and m.n_iter_ == min(40, m.best_iteration_ + 5)
    on_train = LambdaMART(**{**TREES, "n_estimators": 40}, early_stopping_rounds=5).fit(
        tr.X, tr.y, qid=tr.qid, eval_set=sets, eval_names=["train", "vali"], early_stopping_set="train"
    )
    train = on_train.evals_result_["train"]["ndcg@10"]
    assert on_train.best_iteration_ == int(np.argmax(train)) + 1
    with pytest.raises(ValueError, match="'test' is not one of the evaluation sets"):
        LambdaMART(**TREES).fit(tr.X, tr.y, qid=tr.qid, eval_set=sets, early_stopping_set="test")


def test_feature_names_from_data_frames(core_splits, tmp_path):
    pd = pytest.importorskip("pandas")
    tr, va, te = core_splits
    names = [f"bm25_{i}" for i in range(tr.n_features)]
    frame = pd.DataFrame(tr.X, columns=names)
    m = LambdaMART(**TREES).fit(frame, tr.y, qid=tr.qid)
    assert list(m.feature_names_in_) == names
    test = pd.DataFrame(te.X, columns=names)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(m.predict(test), m.predict(te.X))
    with pytest.raises(ValueError, match="feature names should match"):
        m.predict(test[names[::-1]])  # reordered columns: scikit-learn's error, not wrong scores
    with pytest.raises(ValueError, match="feature names|features"):
        m.predict(test[names[:-1]])
    assert set(m.feature_importance("gain", by_name=True)) == set(names)
    m.save(tmp_path / "m.json")
    assert list(LambdaMART.load(tmp_path / "m.json").feature_names_in_) == names


def test_nullable_pandas_columns_mark_missing_values_with_pd_na(core_splits):
    pd = pytest.importorskip("pandas")
    tr = core_splits[0]
    names = [f"f{i}" for i in range(tr.n_features)]
    with_nan = tr.X.astype(np.float64)
    with_nan[::7, 1] = np.nan
    nullable = pd.DataFrame(with_nan, columns=names).astype("Float64")  # NaN becomes pd.NA
    nullable[names[2]] = pd.array(np.round(tr.X[:, 2] * 10), dtype="Int64")
    plain = pd.DataFrame(with_nan, columns=names)
    plain[names[2]] = np.round(tr.X[:, 2] * 10)
    assert nullable[names[1]].isna().sum() == np.isnan(with_nan[:, 1]).sum() > 0
    model = LambdaMART(**TREES).fit(nullable, tr.y, qid=tr.qid)  # "X must hold numbers: ... NAType" before
    reference = LambdaMART(**TREES).fit(plain, tr.y, qid=tr.qid)
    np.testing.assert_array_equal(model.predict(nullable), reference.predict(plain))
    with pytest.raises(ValueError, match=r"X contains NaN at row 0 \(from 0\), feature 2"):
        get_model_class("linear")().fit(nullable, tr.y, qid=tr.qid)
    # what is not a frame of numbers keeps its own message
    with pytest.raises(ValueError, match="X must be 2-D"):
        LambdaMART(**TREES).fit(pd.Series(tr.X[:, 0]), tr.y, qid=tr.qid)
    for column in (["x"] * tr.n_samples, pd.Categorical(["a", "b"] * (tr.n_samples // 2) + ["a"] * (tr.n_samples % 2))):
        with pytest.raises(ValueError, match=r"X has columns that are not numbers: 'f' \(.*encode them first"):
            LambdaMART(**TREES).fit(pd.DataFrame({"f": column}), tr.y, qid=tr.qid)


def test_predict_leaves_out_scikit_learns_checks_only_where_they_have_nothing_to_say(core_splits, monkeypatch):
    """The batch-1 fast path: a plain array of the right width for a model fitted without names."""
    import ranklearn.models.base as base

    tr, _, te = core_splits
    m = LambdaMART(**TREES).fit(tr.X, tr.y, qid=tr.qid)
    expected = m.predict(te.X)
    calls = []
    real = base.validate_data
    monkeypatch.setattr(base, "validate_data", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    np.testing.assert_array_equal(m.predict(np.asarray(te.X, dtype=np.float64)), expected)
    assert calls == []
    with pytest.raises(ValueError, match=f"X has {tr.n_features - 1} features, but LambdaMART is expecting "
                                         f"{tr.n_features} features"):  # fmt: skip
        m.predict(te.X[:, :-1])
    np.testing.assert_array_equal(m.predict(te.X.tolist()), expected)  # not an ndarray: scikit-learn's checks
    assert len(calls) == 2


def test_predict_sets_the_thread_count_only_for_a_batch_that_runs_in_parallel(core_splits, monkeypatch):
    """A batch the tree walk serves on the calling thread skips ``thread_limit`` (its cost is
    1% of a 100-row query); a larger one runs inside it; the scores are the same either way."""
    import ranklearn.models.base as base
    from ranklearn.tree.predictor import TreePredictor

    tr, _, te = core_splits
    m = LambdaMART(**TREES).fit(tr.X, tr.y, qid=tr.qid)
    X = np.concatenate([te.X] * -(-400 // te.X.shape[0]))[:400]
    small = next(n for n in range(1, 400) if not TreePredictor.runs_serially(n + 1))  # the largest serial batch
    expected = m.predict(X)
    calls = []
    real = base.thread_limit
    monkeypatch.setattr(base, "thread_limit", lambda n: calls.append(n) or real(n))
    np.testing.assert_array_equal(m.predict(X[:small]), expected[:small])
    assert calls == []
    np.testing.assert_array_equal(m.predict(X[: small + 1]), expected[: small + 1])
    assert calls == [1]  # LambdaMART predicts a few hundred rows on one thread


def test_score_uses_the_models_metric_and_conventions(core_splits):
    tr, va, te = core_splits
    m = LambdaMART(**TREES, metric="err@5").fit(tr.X, tr.y, qid=tr.qid)
    s = m.predict(te.X)
    assert m.score(te.X, te.y, qid=te.qid) == get_metric("err@5", max_grade=m.max_grade_).mean(te.y, s, te.ptr)
    one = get_metric("ndcg@10", empty="one")
    m1 = LambdaMART(**TREES, metric=one).fit(tr.X, tr.y, qid=tr.qid)
    assert m1.score(te.X, te.y, qid=te.qid) == one.mean(te.y, m1.predict(te.X), te.ptr)
    # sample weights weight each query by its documents' mean weight
    w = np.where(te.qid % 2 == 0, 1.0, 3.0)
    per_query = one.per_query(te.y, m1.predict(te.X), te.ptr)
    qw = np.where(te.query_ids % 2 == 0, 1.0, 3.0)
    assert m1.score(te.X, te.y, w, qid=te.qid) == pytest.approx(np.average(per_query, weights=qw))
    with pytest.raises(ValueError, match="third positional argument is sample_weight"):
        m1.score(te.X, te.y, te.qid)


@pytest.mark.parametrize("cls,params", rankers())
def test_predict_never_changes_the_estimator(cls, params, core_splits):
    tr, _, te = core_splits
    m = cls(**params).fit(tr.X, tr.y, qid=tr.qid)
    before = {k: (id(v), copy.copy(v) if isinstance(v, (list, dict)) else v) for k, v in vars(m).items()}
    m.predict(te.X)
    m.score(te.X, te.y, qid=te.qid)
    after = {k: (id(v), copy.copy(v) if isinstance(v, (list, dict)) else v) for k, v in vars(m).items()}
    assert before.keys() == after.keys()
    assert all(before[k][0] == after[k][0] for k in before)


@pytest.mark.parametrize(
    "params,fragment",
    [({"sigma": float("inf")}, "'sigma' parameter"), ({"learning_rate": float("inf")}, "'learning_rate' parameter")],
)
def test_infinite_parameters_are_refused(params, fragment, core_splits):
    tr, *_ = core_splits
    with pytest.raises(ValueError, match=re.escape(fragment)):
        LambdaMART(**{**TREES, **params}).fit(tr.X, tr.y, qid=tr.qid)
    torch_models = pytest.importorskip("ranklearn.models.ranknet")
    with pytest.raises(ValueError, match=re.escape(fragment)):
        torch_models.RankNet(**{**NETS, **params}).fit(tr.X, tr.y, qid=tr.qid)


def test_pairwise_ranknet_trains_with_its_defaults(core_splits):
    pytest.importorskip("torch")
    from ranklearn.models import RankNet

    tr, *_ = core_splits
    m = RankNet(mode="pairwise", n_estimators=1, hidden=(4,), random_state=0).fit(tr.X[:200], tr.y[:200], qid=tr.qid[:200])
    assert m.model_.n_networks == 1
    with pytest.raises(ValueError, match="trains a single network"):
        RankNet(mode="pairwise", n_networks=3).fit(tr.X, tr.y, qid=tr.qid)


def test_one_name_per_idea_across_families(core_splits):
    tr, *_ = core_splits
    m = LambdaMART(**TREES, lambda_normalization="none").fit(tr.X, tr.y, qid=tr.qid)
    assert m.max_grade_ == float(tr.y.max())
    pytest.importorskip("torch")
    from ranklearn.models import RankNet

    n = RankNet(**NETS, lambda_normalization="pairs").fit(tr.X, tr.y, qid=tr.qid)
    assert n.max_grade_ == m.max_grade_
    assert "lambda_normalization" in LambdaMART().get_params() and "lambda_normalize" not in LambdaMART().get_params()


def test_a_ranklib_import_saves_and_loads(core_splits, tmp_path):
    from ranklearn.io import load_model
    from ranklearn.io.ranklib import export_ranklib, import_ranklib

    tr, _, te = core_splits
    m = LambdaMART(**TREES).fit(tr.X, tr.y, qid=tr.qid)
    export_ranklib(m, tmp_path / "m.ranklib")
    imported = import_ranklib(tmp_path / "m.ranklib", n_features=tr.n_features)
    imported.save(tmp_path / "imported.json")  # used to fail with AttributeError
    np.testing.assert_allclose(load_model(tmp_path / "imported.json").predict(te.X), m.predict(te.X), rtol=0, atol=1e-9)


def test_old_lambdamart_files_load_with_the_new_names(core_splits, tmp_path):
    """A payload of version 1 (lambda_normalize, objective_max_grade, no n_iter) still loads."""
    from ranklearn.io import load_model
    from ranklearn.io.model_file import read_model_file, write_model_file

    tr, _, te = core_splits
    m = LambdaMART(**TREES).fit(tr.X, tr.y, qid=tr.qid)
    m.save(tmp_path / "m.json")
    _, payload = read_model_file(tmp_path / "m.json")
    params = {k: v for k, v in payload["params"].items() if k not in ("lambda_normalization", "objective")}
    old = {k: v for k, v in payload.items() if k not in ("n_iter", "max_grade", "payload_version", "objective")}
    old.update(params={**params, "lambda_normalize": True}, objective_max_grade=payload["max_grade"])
    write_model_file(tmp_path / "old.json", "lambdamart", old)
    back = load_model(tmp_path / "old.json")
    assert back.lambda_normalization == "lightgbm" and back.max_grade_ == m.max_grade_
    assert back.n_iter_ == len(m.trees_)
    np.testing.assert_array_equal(back.predict(te.X), m.predict(te.X))


def test_a_feature_value_error_crosses_processes_whole():
    """joblib and Dask pickle exceptions: the row, feature and kind come back."""
    import copy
    import pickle

    from ranklearn.exceptions import FeatureValueError
    from ranklearn.models.checks import check_feature_values

    X = np.zeros((3, 2))
    X[2, 1] = np.inf
    with pytest.raises(FeatureValueError) as info:
        check_feature_values(X, allow_nan=True)
    for back in (pickle.loads(pickle.dumps(info.value)), copy.copy(info.value)):
        assert (type(back), str(back), back.row, back.feature, back.kind) == (
            FeatureValueError, str(info.value), 2, 1, "inf")


@pytest.mark.parametrize("name", ["adarank", "rankboost", "coordinate-ascent"])
def test_a_query_weight_of_five_is_that_query_five_times(name):
    # the rankers that weigh queries or pairs (not gradients): the boosting distribution or the
    # metric's mean counts queries of weight 5 as five copies of them
    from ranklearn.datasets import make_ranking

    ds = make_ranking(30, 5, n_informative=3, docs_per_query=(4, 9), random_state=3)
    cls = get_model_class(name)
    params = {"n_estimators": 8} if name != "coordinate-ascent" else {"n_estimators": 1, "random_state": 0}
    rows = np.arange(ds.ptr[0], ds.ptr[8])  # queries 0-7, and four more copies of them at the end
    copies = 4
    X5 = np.vstack([ds.X, *[ds.X[rows]] * copies])
    y5 = np.concatenate([ds.y, *[ds.y[rows]] * copies])
    qid5 = np.concatenate([ds.qid, *[ds.qid[rows] + (c + 1) * (ds.qid.max() + 1) for c in range(copies)]])
    weight = np.ones(ds.n_samples)
    weight[rows] = 1.0 + copies
    weighted = cls(**params).fit(ds.X, ds.y, qid=ds.qid, sample_weight=weight)
    copied = cls(**params).fit(X5, y5, qid=qid5)
    plain = cls(**params).fit(ds.X, ds.y, qid=ds.qid)
    np.testing.assert_allclose(weighted.predict(ds.X), copied.predict(ds.X), rtol=1e-9, atol=1e-12)
    assert not np.allclose(weighted.predict(ds.X), plain.predict(ds.X))  # the weight changed the model
    uniform = cls(**params).fit(ds.X, ds.y, qid=ds.qid, sample_weight=np.full(ds.n_samples, 4.0))
    np.testing.assert_allclose(uniform.predict(ds.X), plain.predict(ds.X), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="sample_weight is 0|no training query with a weight above 0"):
        cls(**params).fit(ds.X, ds.y, qid=ds.qid, sample_weight=np.zeros(ds.n_samples))


@pytest.mark.parametrize("cls, params", rankers())
def test_a_metric_ordering_ties_by_docid_is_refused_before_fitting(cls, params):
    # no set an estimator sees has document ids: it failed only when the first eval set was scored
    model = cls(**params, metric=get_metric("ndcg@10", conventions="trec_eval"))
    with pytest.raises(ValueError, match=r"^metric: .* cannot use ties='docid'"):
        model.check_params()


def test_evaluation_set_errors_name_the_set_and_its_parameters(core_splits):
    tr, va, _ = core_splits
    fit = partial(LambdaMART(**TREES).fit, tr.X, tr.y, qid=tr.qid, eval_names=["vali"])
    with pytest.raises(ValueError, match=r"evaluation set 'vali' needs its queries: .* eval_group="):
        fit(eval_set=[(va.X, va.y)])  # it said "or group=", the training data's parameter
    with pytest.raises(ValueError, match=r"^evaluation set 'vali': labels must be finite and >= 0; row 3 has -1"):
        fit(eval_set=[(va.X, np.where(np.arange(va.n_samples) == 3, -1.0, va.y), va.qid)])
    with pytest.raises(ValueError, match=r"^evaluation set 'vali': y must be finite"):
        fit(eval_set=[(va.X, np.where(np.arange(va.n_samples) == 3, np.nan, va.y), va.qid)])
    X_nan = va.X.copy()
    X_nan[2, 0] = np.nan
    with pytest.raises(FeatureValueError, match=r"^evaluation set 'vali': X contains NaN at row 2") as info:
        get_model_class("linear")().fit(tr.X, tr.y, qid=tr.qid, eval_set=[(X_nan, va.y, va.qid)], eval_names=["vali"])
    assert (info.value.row, info.value.feature, info.value.kind) == (2, 0, "NaN")
    # "custom" marks a loaded model's objective: not offered as a choice
    with pytest.raises(ValueError) as info:
        LambdaMART(objective="bogus").check_params()
    assert "custom" not in str(info.value) and "'lambdarank'" in str(info.value)


def test_errs_top_grade_is_the_largest_label_the_fit_sees(core_splits):
    # an evaluation set with a grade above every training label was refused ("exceeds max_grade=2")
    tr, va, _ = core_splits
    y_train = np.minimum(tr.y, 1.0)
    y_vali = np.minimum(va.y, 1.0)
    y_vali[0] = 3.0
    model = LambdaMART(**TREES, metric="err@10").fit(tr.X, y_train, qid=tr.qid, eval_set=[(va.X, y_vali, va.qid)])
    assert model.max_grade_ == 3.0
    expected = get_metric("err@10", max_grade=3.0).mean(y_vali, model.predict(va.X), va.ptr)
    assert model.evals_result_["valid_0"]["err@10"][-1] == pytest.approx(expected)
    assert LambdaMART(**TREES, metric="err@10").fit(tr.X, y_train, qid=tr.qid).max_grade_ == 1.0


def test_score_above_the_models_top_grade_names_the_estimators_way(core_splits):
    # the metric's advice "pass max_grade=" names no parameter of the estimator
    tr, va, _ = core_splits
    model = LambdaMART(**TREES, metric="err@10").fit(tr.X, np.minimum(tr.y, 1.0), qid=tr.qid)
    with pytest.raises(ValueError, match=r"max_grade_=1; .*metric=get_metric\(\"err@10\", max_grade=<top grade>\)"):
        model.score(va.X, va.y, qid=va.qid)
    model.set_params(metric=get_metric("err@10", max_grade=4))  # as the message says: no refit
    assert model.score(va.X, va.y, qid=va.qid) == pytest.approx(
        get_metric("err@10", max_grade=4).mean(va.y, model.predict(va.X), va.ptr)
    )


@pytest.mark.parametrize("cls,params", rankers())
def test_the_vocabulary_holds_for_every_ranker(cls, params, core_splits):
    """docs/DESIGN.md's vocabulary: every ranker takes random_state; n_estimators bounds the
    iterations of every ranker that iterates, and early_stopping_rounds="auto" means
    max(20, n_estimators // 10) with an evaluation set, nothing without."""
    names = cls._get_param_names()
    assert "random_state" in names
    assert not {"epochs", "n_restarts", "n_bags", "max_iterations"} & set(names)
    if "early_stopping_rounds" not in names:  # one solve: LinearRegression
        return
    for n, rounds in ((5, 20), (250, 25), (1000, 100)):
        model = cls(**{**params, "n_estimators": n, "early_stopping_rounds": "auto"})
        model.check_params()
        assert (model.early_stopping_patience(1), model.early_stopping_patience(0)) == (rounds, None)
    tr, va, _ = core_splits
    model = cls(**params, early_stopping_rounds="auto").fit(tr.X, tr.y, qid=tr.qid, eval_set=[(va.X, va.y, va.qid)])
    assert model.n_iter_ == model.n_estimators <= 20  # "auto" = 20 here: no early stop


def test_a_ctrl_c_after_the_last_iteration_keeps_the_finished_model(monkeypatch):
    """A Ctrl-C while the training's context closes (a cluster fit's shards: after the loop ended)
    keeps the iterations that ran; it said "nothing trained" and kept nothing."""
    import contextlib

    tr, _, _ = make_ranking_splits(n_queries=(20, 5, 5), n_features=4, n_informative=2, random_state=0)

    @contextlib.contextmanager
    def closing_interrupted(self):
        yield
        raise KeyboardInterrupt

    monkeypatch.setattr(LambdaMART, "_fit_context", closing_interrupted)
    model = LambdaMART(n_estimators=3, num_leaves=4, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        model.fit(tr.X, tr.y, qid=tr.qid)
    monkeypatch.undo()
    reference = LambdaMART(n_estimators=3, num_leaves=4, random_state=0).fit(tr.X, tr.y, qid=tr.qid)
    assert model.__sklearn_is_fitted__() and model.n_iter_ == 3
    np.testing.assert_array_equal(model.predict(tr.X), reference.predict(tr.X))
