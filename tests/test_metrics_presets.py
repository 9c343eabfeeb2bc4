"""Convention presets: each reproduces its tool's own numbers on MQ2008 test runs.

trec_eval (pytrec_eval) and LightGBM / XGBoost are checked on scores with many ties; ranx,
whose order among equal scores is an unstable quicksort, on tie-free scores. RankLib is not on
PyPI: its preset is checked against its scorers' definitions, by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ranklearn.data import load_svmlight
from ranklearn.io.trec import docids_from_comments
from ranklearn.metrics import PRESETS, get_metric




@pytest.fixture(scope="module")
def mq(shared_data):
    path = shared_data / "MQ2008" / "Fold1" / "test.txt"
    if not path.exists():
        pytest.skip(f"{path} not available")
    ds = load_svmlight(path)
    return ds, docids_from_comments(ds.comments, path=path)


def tied_scores(ds) -> np.ndarray:
    # two features rounded to one decimal: about half the documents share a score with another
    s = np.round(ds.X[:, 0] * 3 + ds.X[:, 10], 1)
    assert sum(np.unique(s[a:b]).size < b - a for a, b in zip(ds.ptr[:-1], ds.ptr[1:])) > 100
    return s


def as_dicts(ds, docids, scores):
    qids = [str(q) for q in ds.query_ids]
    qrels = {q: {docids[j]: int(ds.y[j]) for j in range(a, b)} for q, a, b in zip(qids, ds.ptr[:-1], ds.ptr[1:])}
    run = {q: {docids[j]: float(scores[j]) for j in range(a, b)} for q, a, b in zip(qids, ds.ptr[:-1], ds.ptr[1:])}
    return qids, qrels, run


TREC_NAMES = {"ndcg@10": "ndcg_cut_10", "ndcg@5": "ndcg_cut_5", "ndcg": "ndcg", "map": "map", "map@10": "map_cut_10",
              "map@5": "map_cut_5", "p@10": "P_10", "p@30": "P_30", "rr": "recip_rank", "recall@5": "recall_5",
              "recall@30": "recall_30", "mrr": "recip_rank"}  # fmt: skip


def test_trec_eval_preset_equals_pytrec_eval_with_ties(mq):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")
    ds, docids = mq
    s = tied_scores(ds)
    qids, qrels, run = as_dicts(ds, docids, s)
    res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut", "map_cut", "P", "recip_rank", "map", "ndcg", "recall"}).evaluate(run)
    for spec, name in TREC_NAMES.items():
        ours = get_metric(spec, conventions="trec_eval").per_query(ds.y, s, ds.ptr, docids=docids)
        np.testing.assert_allclose(ours, [res[q][name] for q in qids], rtol=0, atol=1e-12, err_msg=spec)
    # the tie order matters on these scores: input order is off by up to a third of NDCG@10
    stable = get_metric("ndcg@10", conventions="trec_eval", ties="stable").per_query(ds.y, s, ds.ptr)
    assert np.abs(stable - [res[q]["ndcg_cut_10"] for q in qids]).max() > 0.1


def test_trec_eval_orders_equal_scores_by_docno_descending():
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")
    # one relevant document among three tied: trec_eval ranks "c" first, then "b", then "a"
    for relevant, rank in (("c", 1), ("b", 2), ("a", 3)):
        qrels = {"q": {d: int(d == relevant) for d in "abc"}}
        got = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate({"q": dict.fromkeys("abc", 1.0)})
        assert got["q"]["recip_rank"] == pytest.approx(1 / rank)
        ours = get_metric("rr", conventions="trec_eval").per_query(
            [float(d == relevant) for d in "bac"], [1.0, 1.0, 1.0], [0, 3], docids=["b", "a", "c"]
        )
        assert ours[0] == pytest.approx(1 / rank)


def test_ranx_preset_equals_ranx(mq):
    ranx = pytest.importorskip("ranx", reason="ranx is not installed")
    ds, docids = mq
    s = tied_scores(ds) + np.random.default_rng(0).permutation(ds.n_samples) * 1e-7  # tie-free
    qids, qrels, run = as_dicts(ds, docids, s)
    names = {"ndcg@10": "ndcg@10", "ndcg": "ndcg", "map": "map", "map@10": "map@10", "p@10": "precision@10",
             "p@30": "precision@30", "rr": "mrr", "recall@10": "recall@10", "recall": "recall"}  # fmt: skip
    rx_run = ranx.Run.from_dict(run)
    ranx.evaluate(ranx.Qrels.from_dict(qrels), rx_run, list(names.values()) + ["ndcg_burges@10"], make_comparable=False)
    for spec, name in names.items():
        ours = get_metric(spec, conventions="ranx").per_query(ds.y, s, ds.ptr)
        np.testing.assert_allclose(ours, [rx_run.scores[name][q] for q in qids], rtol=0, atol=1e-12, err_msg=spec)
    burges = get_metric("ndcg@10", conventions="ranx", gain="exp2").per_query(ds.y, s, ds.ptr)
    np.testing.assert_allclose(burges, [rx_run.scores["ndcg_burges@10"][q] for q in qids], rtol=0, atol=1e-12)


def test_ranx_names_of_trec_eval_measures_equal_ranx(mq):
    ranx = pytest.importorskip("ranx", reason="ranx is not installed")
    ds, docids = mq
    s = tied_scores(ds) + np.random.default_rng(1).permutation(ds.n_samples) * 1e-7  # tie-free
    qids, qrels, run = as_dicts(ds, docids, s)
    names = {"hit_rate@5": "hit_rate@5", "hit_rate@1": "hit_rate@1", "r_precision": "r-precision",
             "dcg_burges@10": "dcg_burges@10", "ndcg_burges@5": "ndcg_burges@5", "f1@5": "f1@5", "f1@50": "f1@50",
             "f1": "f1"}  # fmt: skip
    rx_run = ranx.Run.from_dict(run)
    ranx.evaluate(ranx.Qrels.from_dict(qrels), rx_run, list(names.values()), make_comparable=False)
    for spec, name in names.items():
        ours = get_metric(spec, conventions="ranx").per_query(ds.y, s, ds.ptr)
        np.testing.assert_allclose(ours, [rx_run.scores[name][q] for q in qids], rtol=0, atol=1e-12, err_msg=spec)


def test_lightgbm_preset_equals_lightgbm_eval(mq, shared_data):
    lgb = pytest.importorskip("lightgbm")
    ds, _ = mq
    tr = load_svmlight(shared_data / "MQ2008" / "Fold1" / "train.txt")
    ks = [1, 3, 5, 10]
    params = dict(objective="lambdarank", metric=["ndcg", "map"], eval_at=ks, num_leaves=7, verbose=-1, num_threads=1)
    dtr = lgb.Dataset(tr.X, tr.y, group=np.diff(tr.ptr))
    dte = lgb.Dataset(ds.X, ds.y, group=np.diff(ds.ptr), reference=dtr)
    res: dict = {}
    booster = lgb.train(params, dtr, 5, valid_sets=[dte], valid_names=["t"], callbacks=[lgb.record_evaluation(res)])
    s = booster.predict(ds.X)
    assert s.size - sum(np.unique(s[a:b]).size for a, b in zip(ds.ptr[:-1], ds.ptr[1:])) > 100  # many ties
    for k in ks:
        for name in ("ndcg", "map"):
            ours = get_metric(f"{name}@{k}", conventions="lightgbm").mean(ds.y, s, ds.ptr)
            assert ours == pytest.approx(res["t"][f"{name}@{k}"][-1], abs=1e-12), (name, k)


def test_xgboost_preset_equals_xgboost_eval(mq, shared_data):
    xgb = pytest.importorskip("xgboost")
    ds, _ = mq
    tr = load_svmlight(shared_data / "MQ2008" / "Fold1" / "train.txt")
    qid = np.repeat(np.arange(ds.n_queries), np.diff(ds.ptr))
    booster = xgb.train(
        dict(objective="rank:ndcg", max_depth=3, nthread=1),
        xgb.DMatrix(tr.X, tr.y, qid=np.repeat(np.arange(tr.n_queries), np.diff(tr.ptr))),
        5,
    )
    graded = xgb.DMatrix(ds.X, ds.y, qid=qid)
    binary_y = (ds.y > 0).astype(float)  # XGBoost's map and pre take binary labels only
    binary = xgb.DMatrix(ds.X, binary_y, qid=qid)
    s = booster.predict(graded, output_margin=True).astype(np.float64)
    assert s.size - sum(np.unique(s[a:b]).size for a, b in zip(ds.ptr[:-1], ds.ptr[1:])) > 100  # many ties

    def xgb_eval(dmatrix, metric):
        fresh = booster.copy()  # eval metrics accumulate on a booster
        fresh.set_param({"eval_metric": metric})
        text = fresh.eval(dmatrix, "t")  # "[0]\tt-ndcg@32:0.86\tt-ndcg@10:0.84"
        return dict((kv.split(":")[0][2:], float(kv.split(":")[1])) for kv in text.split("\t")[1:])[metric]

    names = ["ndcg@10", "ndcg@10-", "ndcg@3", "map@10", "map@10-", "map@3", "pre@10", "pre@3", "pre@30"]
    got = {name: xgb_eval(graded if name.startswith("ndcg") else binary, name) for name in names}
    for name, value in got.items():
        spec = name.rstrip("-").replace("pre", "p")
        labels = ds.y if spec.startswith("ndcg") else binary_y
        extra = {"empty": "zero"} if name.endswith("-") else {}
        ours = get_metric(spec, conventions="xgboost", **extra).mean(labels, s, ds.ptr)
        assert ours == pytest.approx(value, abs=1e-6), name  # XGBoost prints 6+ significant digits


def test_ranklib_preset_follows_its_scorers():
    # y = [0, 2, 1] ranked by scores [3, 2, 1]: a 3-document list
    y, s, ptr = [0.0, 2.0, 1.0], [3.0, 2.0, 1.0], [0, 3]
    value = {spec: get_metric(spec, conventions="ranklib").per_query(y, s, ptr)[0] for spec in ("p@10", "map", "err@10")}
    assert value["p@10"] == pytest.approx(2 / 3)  # PrecisionScorer: k capped at the list length
    assert value["map"] == pytest.approx((1 / 2 + 2 / 3) / 2)  # APScorer: over relevant documents
    # ERRScorer: R = (2^rel - 1) / 16 whatever the labels in the file
    assert value["err@10"] == pytest.approx((3 / 16) / 2 + (1 - 3 / 16) * (1 / 16) / 3)
    assert get_metric("ndcg@10", conventions="ranklib").per_query([0.0, 0.0], [1.0, 0.0], [0, 2])[0] == 0.0


def test_presets_set_every_convention_and_explicit_values_win():
    for name, conv in PRESETS.items():
        m = get_metric("map@5", conventions=name)
        assert (m.gain, m.empty, m.ties, m.max_grade, m.p_divisor, m.map_divisor) == tuple(
            conv[key] for key in ("gain", "empty", "ties", "max_grade", "p_divisor", "map_divisor")
        )
    assert get_metric("ndcg@10", conventions="trec_eval", gain="exp2").gain == "exp2"
    # a preset's empty="one" concerns NDCG and MAP; P@k and RR count such queries 0
    assert get_metric("p@5", conventions="lightgbm").empty == "zero"
    with pytest.raises(ValueError, match="conventions must be one of"):
        get_metric("ndcg@10", conventions="trec")
    with pytest.raises(ValueError, match="p_divisor"):
        get_metric("p@10", p_divisor="n")


def test_divisors_by_hand():
    # labels [1, 0, 1, 1] in rank order: 3 relevant documents
    y, s, ptr = [1.0, 0.0, 1.0, 1.0], [4.0, 3.0, 2.0, 1.0], [0, 4]
    assert get_metric("p@10").per_query(y, s, ptr)[0] == pytest.approx(3 / 4)
    assert get_metric("p@10", p_divisor="k").per_query(y, s, ptr)[0] == pytest.approx(3 / 10)
    # AP@2: rank 1 only (precision 1); / min(R=3, 2) or / R
    assert get_metric("map@2").per_query(y, s, ptr)[0] == pytest.approx(1 / 2)
    assert get_metric("map@2", map_divisor="R").per_query(y, s, ptr)[0] == pytest.approx(1 / 3)


def test_docid_ties_need_docids_and_sort_descending():
    with pytest.raises(ValueError, match="docids"):
        get_metric("rr", ties="docid").per_query([1.0, 0.0], [1.0, 1.0], [0, 2])
    # "b" > "a": the relevant "b" is first under docid ties, second under input order
    y, s = [0.0, 1.0], [1.0, 1.0]
    assert get_metric("rr", ties="docid").per_query(y, s, [0, 2], docids=["a", "b"])[0] == 1.0
    assert get_metric("rr").per_query(y, s, [0, 2])[0] == 0.5
    assert not math.isnan(get_metric("rr", ties="docid").mean(y, s, [0, 2], docids=np.array(["a", "b"])))


def test_f1_is_the_harmonic_mean_of_precision_and_recall_by_hand():
    # grades 2, 0, 1, 0 ranked in this order, one more relevant document not retrieved: R = 3
    y, s, ptr, retrieved = [2.0, 0.0, 1.0, 0.0, 1.0], [4.0, 3.0, 2.0, 1.0, 0.0], [0, 5], [4]
    f1 = {spec: get_metric(spec, conventions="ranx").per_query(y, s, ptr, retrieved=retrieved)[0]
          for spec in ("f1@1", "f1@3", "f1@10", "f1")}  # fmt: skip
    # P@1 = 1, R@1 = 1/3; P@3 = 2/3, R@3 = 2/3; P@10 = 2/10 (ranx divides by k), R = 2/3; whole list P = 2/4
    assert f1["f1@1"] == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))
    assert f1["f1@3"] == pytest.approx(2 / 3)
    assert f1["f1@10"] == pytest.approx(2 * 0.2 * (2 / 3) / (0.2 + 2 / 3))
    assert f1["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    # relevance level 2: only the first document is relevant, R = 1
    assert get_metric("f1@3", conventions="ranx", relevance_level=2).per_query(y, s, ptr, retrieved=retrieved)[0] == (
        pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    )
    assert get_metric("f1@3").per_query([0.0, 0.0], [1.0, 0.0], [0, 2])[0] == 0.0  # no relevant document
