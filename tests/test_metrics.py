"""Metrics: hand-computed values, every convention, brute force, and LightGBM / XGBoost agreement."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest

from ranklearn.exceptions import DataFormatError
from ranklearn.metrics import (
    dcg_score,
    err_score,
    evaluate,
    get_metric,
    map_score,
    ndcg_score,
    precision_score,
    recall_score,
    rr_score,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MQ_TEST = DATA / "MQ2008" / "Fold1" / "test.txt"
L3 = math.log2(3)
L5 = math.log2(5)


def one_query(spec: str, y, s, **conv) -> float:
    if spec.startswith("err"):  # hand values below take the largest label (at least 1) as ERR's top grade
        conv.setdefault("max_grade", max(1.0, max(y, default=0.0)))
    return float(get_metric(spec, **conv).per_query(np.asarray(y, float), np.asarray(s, float), [0, len(y)])[0])


# --- hand-computed values -------------------------------------------------------------------
# y = [3, 2, 0, 1], scores = [.1, .4, .3, .2]: ranked labels are [2, 0, 1, 3].
Y = [3, 2, 0, 1]
S = [0.1, 0.4, 0.3, 0.2]
HAND = {
    # gains 3, 0, 1, 7 at discounts 1, 1/log2 3, 1/2, 1/log2 5
    "dcg": 3 + 1 / 2 + 7 / L5,
    "dcg@2": 3.0,
    # ideal order [3, 2, 1, 0]: 7 + 3/log2 3 + 1/2
    "ndcg": (3 + 1 / 2 + 7 / L5) / (7 + 3 / L3 + 1 / 2),
    "ndcg@2": 3 / (7 + 3 / L3),
    # max_grade 3: R = 3/8, 0, 1/8, 7/8
    "err": 3 / 8 + 0 + (5 / 8) * (1 / 8) / 3 + (5 / 8) * (7 / 8) * (7 / 8) / 4,
    "err@1": 3 / 8,
    # relevant at ranks 1, 3, 4 of 3 relevant: (1 + 2/3 + 3/4) / 3
    "map": (1 + 2 / 3 + 3 / 4) / 3,
    # ranks < 2: only rank 1; divided by min(R=3, k=2)
    "map@2": 1 / 2,
    "p@2": 1 / 2,
    "p@1": 1.0,
    # k past the list end: k = list length 4, 3 relevant
    "p@10": 3 / 4,
    "rr": 1.0,
}


@pytest.mark.parametrize("spec", sorted(HAND))
def test_hand_computed(spec):
    assert one_query(spec, Y, S) == pytest.approx(HAND[spec], abs=1e-12)


def test_err_default_max_grade_is_fixed_not_taken_from_the_batch():
    # default max_grade 4: R = 3/16 for label 2 at rank 1, whatever else is in the call
    alone = get_metric("err").per_query([2.0, 0.0], [1.0, 0.0], [0, 2])
    batch = get_metric("err").per_query([2.0, 0.0, 4.0], [1.0, 0.0, 1.0], [0, 2, 3])
    assert alone[0] == batch[0] == pytest.approx(3 / 16)
    with pytest.raises(ValueError, match="max_grade=4"):
        get_metric("err").per_query([5.0], [1.0], [0, 1])
    # the natural max_grade=y.max() of integer labels is a numpy number: a number all the same
    y = np.array([2, 0, 4])
    assert get_metric("err", max_grade=y.max()).per_query(y, [1.0, 0.0, 1.0], [0, 2, 3]) == pytest.approx(
        get_metric("err", max_grade=4).per_query(y, [1.0, 0.0, 1.0], [0, 2, 3]), abs=0)
    for bad in (True, np.inf, 0, "4"):
        with pytest.raises(ValueError, match="max_grade must be a finite number > 0"):
            get_metric("err", max_grade=bad)


def test_linear_gain():
    # gains 2, 0, 1, 3
    assert one_query("dcg", Y, S, gain="linear") == pytest.approx(2 + 1 / 2 + 3 / L5, abs=1e-12)
    assert one_query("ndcg", Y, S, gain="linear") == pytest.approx(
        (2 + 1 / 2 + 3 / L5) / (3 + 2 / L3 + 1 / 2), abs=1e-12
    )


def test_rr_and_err_explicit_grade():
    # first relevant document at rank 3
    assert one_query("rr", [0, 0, 1, 1], [4, 3, 2, 1]) == pytest.approx(1 / 3)
    assert one_query("rr@2", [0, 0, 1, 1], [4, 3, 2, 1]) == 0.0
    # max_grade 4: R(2) = 3/16 at rank 1, R(1) = 1/16 at rank 2
    assert one_query("err", [2, 1], [1, 0], max_grade=4) == pytest.approx(3 / 16 + (13 / 16) / 16 / 2)
    with pytest.raises(ValueError, match="max_grade"):
        one_query("err", [5, 1], [1, 0], max_grade=4)


def test_recall_hand_computed():
    # relevant documents at ranks 1 and 4 of 5, R = 3 with one judged relevant document unretrieved
    y, s = [1, 0, 0, 2, 0, 1], [5, 4, 3, 2, 1, 0]
    assert one_query("recall@1", y, s) == pytest.approx(1 / 3)
    assert one_query("recall@3", y, s) == pytest.approx(1 / 3)
    assert one_query("recall@4", y, s) == pytest.approx(2 / 3)
    assert one_query("recall", y, s) == pytest.approx(1.0)
    m = get_metric("recall")
    assert m.per_query(y, s, [0, 6], retrieved=[5])[0] == pytest.approx(2 / 3)  # the last row judged, not retrieved
    assert m.conventions == "relevant=label>0, divides by R, empty queries=0, ties=stable"
    assert get_metric("mrr@10").per_query(y, s, [0, 6]) == get_metric("rr@10").per_query(y, s, [0, 6])


def test_seed_query_1830():
    # RankLib walk-through, query 1830, all scores equal, input order kept
    y = [0, 0, 0, 1, 1, 0, 1, 1, 0, 0]
    s = np.zeros(10)
    assert round(one_query("dcg", y, s), 4) == 1.4663
    assert round(one_query("dcg", y, y), 4) == 2.5616
    assert round(one_query("ndcg", y, s), 4) == 0.5724
    assert round(one_query("ndcg@10", y, s), 4) == 0.5724


def test_large_and_continuous_labels():
    # 40 > 31 levels: exp2 gain in float64
    assert one_query("dcg", [40, 0], [0, 1]) == pytest.approx((2.0**40 - 1) / L3, rel=1e-15)
    assert one_query("ndcg", [40, 0], [0, 1]) == pytest.approx(1 / L3, rel=1e-15)
    assert one_query("dcg", [0.5, 1.5], [1, 0]) == pytest.approx((2**0.5 - 1) + (2**1.5 - 1) / L3)
    # max grade 1000: R underflows gracefully instead of overflowing
    assert one_query("err", [1000, 0], [1, 0]) == pytest.approx(1.0)


# --- ties -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, y, s, expected",
    [
        # docs 0 and 1 tied at the top. stable: [1, 0, 2]; pessimistic: [0, 1, 2];
        # average: each of the two gets the mean discount (1 + 1/log2 3)/2
        ("dcg", [1, 0, 2], [0.5, 0.5, 0.1], {"stable": 1 + 3 / 2, "pessimistic": 1 / L3 + 3 / 2,
                                             "average": (1 + 1 / L3) / 2 + 3 / 2}),
        # one relevant among four tied: first relevant at 1..4 uniformly
        ("rr", [0, 1, 0, 0], [0, 0, 0, 0], {"stable": 1 / 2, "pessimistic": 1 / 4,
                                           "average": (1 + 1 / 2 + 1 / 3 + 1 / 4) / 4}),
        ("p@1", [1, 0, 0], [7, 7, 7], {"stable": 1.0, "pessimistic": 0.0, "average": 1 / 3}),
        # orderings RRN: 1, RNR: (1 + 2/3)/2, NRR: (1/2 + 2/3)/2
        ("map", [1, 1, 0], [2, 2, 2], {"stable": 1.0, "pessimistic": (1 / 2 + 2 / 3) / 2,
                                       "average": (1 + 5 / 6 + 7 / 12) / 3}),
        # R = 1/4, 3/4. order (1,2): 1/4 + (3/4)(3/4)/2; order (2,1): 3/4 + (1/4)(1/4)/2
        ("err", [1, 2], [0, 0], {"stable": 1 / 4 + 9 / 32, "pessimistic": 1 / 4 + 9 / 32,
                                 "average": (1 / 4 + 9 / 32 + 3 / 4 + 1 / 32) / 2}),
    ],
)
def test_tie_modes(spec, y, s, expected):
    for ties, value in expected.items():
        assert one_query(spec, y, s, ties=ties) == pytest.approx(value, abs=1e-12), ties


def _orderings_mean(spec: str, y: np.ndarray, s: np.ndarray) -> float:
    """Brute force: mean of the metric over every ordering of each tie group (ties broken in all ways)."""
    groups = [np.flatnonzero(s == v) for v in sorted(set(s), reverse=True)]
    values = []
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        order = np.concatenate(perms)
        ranked = np.arange(len(y), 0, -1, dtype=float)  # strictly decreasing, no ties
        values.append(one_query(spec, y[order], ranked, max_grade=max(1.0, y.max())))
    return float(np.mean(values))


@pytest.mark.parametrize("spec", ["dcg@3", "ndcg", "err", "err@2", "map", "map@3", "p@3", "recall@3", "rr", "rr@2"])
def test_average_ties_is_mean_over_orderings(spec):
    rng = np.random.default_rng(7)
    for _ in range(4):
        y = rng.integers(0, 3, 6).astype(float)
        y[0] = 1  # at least one relevant document so every ordering is scored
        s = rng.integers(0, 3, 6).astype(float)
        assert one_query(spec, y, s, ties="average") == pytest.approx(_orderings_mean(spec, y, s), abs=1e-12)


def test_pessimistic_is_worst_ordering():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 7).astype(float)
    y[0] = 2
    s = rng.integers(0, 2, 7).astype(float)
    order = np.lexsort((y, -s))  # score descending, then label ascending
    assert one_query("ndcg", y, s, ties="pessimistic") == pytest.approx(
        one_query("ndcg", y[order], -np.arange(7.0))
    )


# --- queries without relevant documents ----------------------------------------------------
def test_empty_modes():
    y = np.array([1, 0, 0, 0], float)
    s = np.array([0, 1, 5, 6], float)
    ptr = [0, 2, 4]  # query 0: relevant doc at rank 2 -> 1/log2 3; query 1: nothing relevant
    m = {e: get_metric("ndcg@10", empty=e) for e in ("zero", "one", "skip")}
    assert m["zero"].mean(y, s, ptr) == pytest.approx(1 / L3 / 2)
    assert m["one"].mean(y, s, ptr) == pytest.approx((1 / L3 + 1) / 2)
    assert m["skip"].mean(y, s, ptr) == pytest.approx(1 / L3)
    skipped = m["skip"].per_query(y, s, ptr)
    assert skipped[0] == pytest.approx(1 / L3) and np.isnan(skipped[1])
    for spec in ("dcg", "err", "map", "p@1", "rr"):
        assert np.array_equal(get_metric(spec, empty="zero").per_query(y, s, ptr)[1:], [0.0])
    assert np.array_equal(get_metric("map", empty="one").per_query(y, s, ptr)[1:], [1.0])
    # "counts as ideal" has no meaning without an ideal value: refused, naming the metric
    for spec in ("dcg@3", "err", "p@1", "recall@2", "rr"):
        with pytest.raises(ValueError, match=f"'{spec}'.*ndcg and map only"):
            get_metric(spec, empty="one")
    # a query with no rows at all has no relevant document either
    assert np.isnan(get_metric("ndcg", empty="skip").per_query([], [], [0, 0])[0])
    assert np.isnan(get_metric("ndcg", empty="skip").mean(y[2:], s[2:], [0, 2]))


# --- independent brute force ------------------------------------------------------------------
def brute_ndcg(y: list[float], s: list[float], ptr: list[int], k: int, empty: str) -> list[float]:
    """Pure-Python NDCG@k: stable order by descending score, gain 2^rel - 1."""
    out = []
    for q in range(len(ptr) - 1):
        labels = y[ptr[q] : ptr[q + 1]]
        scores = s[ptr[q] : ptr[q + 1]]
        ranked = [labels[i] for i in sorted(range(len(labels)), key=lambda i: -scores[i])]
        dcg = sum((2**r - 1) / math.log2(i + 2) for i, r in enumerate(ranked[:k]))
        ideal = sum((2**r - 1) / math.log2(i + 2) for i, r in enumerate(sorted(labels, reverse=True)[:k]))
        if ideal == 0:
            out.append({"zero": 0.0, "one": 1.0, "skip": math.nan}[empty])
        else:
            out.append(dcg / ideal)
    return out


@pytest.mark.parametrize("empty", ["zero", "one", "skip"])
def test_ndcg_against_brute_force(empty):
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 30, 200)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    y = rng.integers(0, 5, ptr[-1]) * (rng.random(ptr[-1]) < 0.4)  # many empty queries
    s = rng.integers(0, 4, ptr[-1]).astype(float)  # heavy ties
    expected = brute_ndcg(y.tolist(), s.tolist(), ptr.tolist(), 10, empty)
    got = get_metric("ndcg@10", empty=empty).per_query(y, s, ptr)
    np.testing.assert_allclose(got, expected, atol=1e-9, rtol=0)
    assert get_metric("ndcg@10", empty=empty).mean(y, s, ptr) == pytest.approx(np.nanmean(expected), abs=1e-9)


# --- specs, conventions, errors --------------------------------------------------------------
def test_metric_attributes():
    m = get_metric("ndcg@10")
    assert (m.name, m.k) == ("ndcg@10", 10)
    assert m.conventions == "gain=2^rel-1, empty queries=0, ties=stable"
    assert get_metric("map").k is None
    assert "empty queries skipped" in get_metric("map", empty="skip").conventions
    assert "min(R,k)" in get_metric("map@5").conventions
    assert "gain=rel" in get_metric("dcg", gain="linear", ties="average").conventions
    assert "max_grade=4" in get_metric("err@10", max_grade=4).conventions


@pytest.mark.parametrize("spec", ["ndcg@0", "p@-1", "foo@3", "ndcg@", "ndcg@x", "", "mapp"])
def test_bad_specs_name_the_spec(spec):
    with pytest.raises(ValueError, match=repr(spec).replace("[", r"\[")):
        get_metric(spec)


@pytest.mark.parametrize("spec", ["ndcg@99999999999999999999", "err@9223372036854775808", "map@18446744073709551616"])
def test_cutoffs_that_do_not_fit_are_value_errors(spec):
    # issue 16: ndcg@99999999999999999999 ended in a numba overflow traceback
    with pytest.raises(ValueError, match=repr(spec)):
        get_metric(spec)


@pytest.mark.parametrize("name", ["ndcg", "dcg", "err", "map", "p", "recall", "rr"])
def test_largest_cutoff_is_the_whole_list(name):
    y, s, ptr = np.array([1.0, 0, 2, 0]), np.array([0.1, 0.2, 0.3, 0.3]), np.array([0, 1, 4])
    for ties in ("stable", "average"):
        whole = get_metric(name, ties=ties).per_query(y, s, ptr)
        np.testing.assert_array_equal(get_metric(f"{name}@{2**63 - 1}", ties=ties).per_query(y, s, ptr), whole)


@pytest.mark.parametrize("kw", [{"gain": "exp"}, {"empty": "none"}, {"ties": "random"}, {"max_grade": 0}])
def test_bad_conventions(kw):
    with pytest.raises(ValueError):
        get_metric("ndcg", **kw)


def test_bad_inputs():
    m = get_metric("ndcg")
    with pytest.raises(ValueError, match="scores"):
        m.per_query([1, 0], [1.0], [0, 2])
    with pytest.raises(ValueError, match="ptr"):
        m.per_query([1, 0], [1.0, 0.0], [0, 3])
    with pytest.raises(ValueError, match="NaN"):
        m.per_query([1, 0], [1.0, np.nan], [0, 2])
    with pytest.raises(ValueError, match="labels"):
        m.per_query([1, -1], [1.0, 0.0], [0, 2])


@pytest.mark.parametrize("spec", ["ndcg@10", "ndcg", "err@5", "map", "p@3", "recall@5", "rr"])
def test_scorer_is_mean_on_the_same_queries(spec):
    rng = np.random.default_rng(7)
    y = rng.integers(0, 5, 300).astype(float)
    y[:12] = 0  # a query without relevant documents (empty convention)
    ptr = np.array([0, 12, 40, 41, 120, 200, 300])
    m = get_metric(spec, max_grade=4)
    score = m.scorer(y, ptr)
    for _ in range(3):
        s = np.round(rng.normal(size=300), 1)  # ties too
        assert score(s) == m.mean(y, s, ptr)


def test_scorer_checks_labels_once_and_scores_every_call():
    m = get_metric("ndcg")
    with pytest.raises(ValueError, match="labels"):
        m.scorer([1, -1], [0, 2])
    with pytest.raises(ValueError, match="ptr"):
        m.scorer([1, 0], [0, 3])
    with pytest.raises(ValueError, match="docids"):
        get_metric("ndcg", ties="docid").scorer([1, 0], [0, 2])
    score = m.scorer([1, 0], [0, 2])
    with pytest.raises(ValueError, match="NaN"):
        score(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="scores has 1"):
        score(np.array([1.0]))


def test_convenience_functions_and_evaluate():
    # two queries, rows interleaved: regrouping is stable so input order among ties survives
    qid = np.array([5, 9, 5, 9])
    y = np.array([0, 1, 1, 0])
    s = np.array([0.0, 0.0, 0.0, 0.0])
    # query 5: [0, 1] -> 1/log2 3; query 9: [1, 0] -> 1
    assert ndcg_score(y, s, qid) == pytest.approx((1 / L3 + 1) / 2)
    assert ndcg_score(y, s, qid, ties="pessimistic") == pytest.approx(1 / L3)
    assert dcg_score(y, s, qid, k=1) == pytest.approx(0.5)
    assert rr_score(y, s, qid) == pytest.approx(0.75)
    assert map_score(y, s, qid) == pytest.approx(0.75)
    assert precision_score(y, s, qid, k=1) == pytest.approx(0.5)
    assert recall_score(y, s, qid, k=1) == pytest.approx(0.5) and recall_score(y, s, qid) == pytest.approx(1.0)
    assert [f.__name__ for f in (map_score, precision_score, recall_score, rr_score)] == [
        "map_score", "precision_score", "recall_score", "rr_score"]
    assert err_score(y, s, qid, max_grade=1) == pytest.approx((1 / 2 / 2 + 1 / 2) / 2)  # R(1) = 1/2 at max grade 1
    assert err_score(y, s, qid) == pytest.approx((1 / 16 / 2 + 1 / 16) / 2)  # default max grade 4: R(1) = 1/16
    ptr = [0, 2, 4]
    assert ndcg_score(y[[0, 2, 1, 3]], s, ptr=ptr) == pytest.approx((1 / L3 + 1) / 2)
    with pytest.raises(ValueError, match="exactly one"):
        ndcg_score(y, s)
    with pytest.raises(ValueError, match="lengths differ"):
        ndcg_score(y, s[:3], qid)
    res = evaluate(y[[0, 2, 1, 3]], s, ptr, ["ndcg@10", "rr"], ties="pessimistic")
    assert res == pytest.approx({"ndcg@10": 1 / L3, "rr": 0.5})
    assert evaluate(y[[0, 2, 1, 3]], s, ptr, "rr") == pytest.approx({"rr": 0.75})  # one spec (it read 'r', 'r')
    # trec_eval's ties by docid descending put "z" (label 0) first in both queries: 0.5, not stable's 0.75
    docids = np.array(["z", "a", "a", "z"], dtype=object)
    assert evaluate(y[[0, 2, 1, 3]], s, ptr, ["rr"], conventions="trec_eval", docids=docids) == pytest.approx({"rr": 0.5})


# --- agreement with LightGBM and XGBoost on real data ------------------------------------------
def _mq2008_labels_and_groups() -> tuple[np.ndarray, np.ndarray]:
    if not MQ_TEST.exists():
        pytest.skip(f"shared data not found at {MQ_TEST}")
    labels, qids = [], []
    with open(MQ_TEST) as fh:
        for line in fh:
            tok = line.split()
            labels.append(float(tok[0]))
            qids.append(tok[1])
    q = np.array(qids)
    ptr = np.concatenate(([0], np.flatnonzero(q[1:] != q[:-1]) + 1, [len(q)]))
    return np.array(labels), ptr


@pytest.fixture(scope="module")
def mq2008_random_scores():
    y, ptr = _mq2008_labels_and_groups()
    # float32-exact, tie-free scores: both libraries store margins in float32 somewhere
    s = np.random.default_rng(0).random(len(y)).astype(np.float32).astype(np.float64)
    return y, ptr, s


def test_lightgbm_ndcg_and_map_agree(mq2008_random_scores):
    lgb = pytest.importorskip("lightgbm")
    y, ptr, s = mq2008_random_scores
    X = np.random.default_rng(1).random((len(y), 2))
    data = lgb.Dataset(X, y, group=np.diff(ptr), init_score=s)
    res: dict = {}
    # one round at a negligible learning rate: the evaluated scores are the init_score
    params = dict(objective="lambdarank", metric=["ndcg", "map"], eval_at=[1, 5, 10], learning_rate=1e-300,
                  num_leaves=2, verbose=-1)
    lgb.train(params, data, num_boost_round=1, valid_sets=[data], valid_names=["t"],
              callbacks=[lgb.record_evaluation(res)])
    for k in (1, 5, 10):
        assert get_metric(f"ndcg@{k}", empty="one").mean(y, s, ptr) == pytest.approx(res["t"][f"ndcg@{k}"][0], abs=1e-6)
        assert get_metric(f"map@{k}", empty="one").mean(y, s, ptr) == pytest.approx(res["t"][f"map@{k}"][0], abs=1e-6)
    # and the convention matters: the same scores under empty=zero are far lower
    assert get_metric("ndcg@10").mean(y, s, ptr) < res["t"]["ndcg@10"][0] - 0.2


def test_xgboost_ndcg_agrees(mq2008_random_scores):
    xgb = pytest.importorskip("xgboost")
    y, ptr, s = mq2008_random_scores
    d = xgb.DMatrix(np.random.default_rng(1).random((len(y), 2)), label=y, base_margin=s)
    d.set_group(np.diff(ptr))
    booster = xgb.train({"objective": "rank:ndcg", "eval_metric": ["ndcg@10", "ndcg@5", "ndcg@10-"]}, d, 0)
    got = dict(item.split(":") for item in booster.eval(d, "e").split("\t")[1:])
    assert get_metric("ndcg@10", empty="one").mean(y, s, ptr) == pytest.approx(float(got["e-ndcg@10"]), abs=1e-6)
    assert get_metric("ndcg@5", empty="one").mean(y, s, ptr) == pytest.approx(float(got["e-ndcg@5"]), abs=1e-6)
    # XGBoost's trailing "-" counts empty queries as 0
    assert get_metric("ndcg@10", empty="zero").mean(y, s, ptr) == pytest.approx(float(got["e-ndcg@10-"]), abs=1e-6)


def test_large_inputs_use_threads_and_agree_with_small_calls():
    """Above PARALLEL_MIN_DOCS the kernel runs on all threads; values equal those of small calls."""
    import numba

    from ranklearn.metrics import kernels

    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 60, size=2500)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    assert ptr[-1] >= kernels.PARALLEL_MIN_DOCS
    y = rng.integers(0, 4, size=ptr[-1]).astype(float)
    s = rng.normal(size=ptr[-1])
    before = numba.get_num_threads()
    for spec in ("ndcg@10", "err", "map", "p@5"):
        metric = get_metric(spec, ties="average")
        whole = metric.per_query(y, s, ptr)
        cut = int(ptr[1000])
        parts = np.concatenate([metric.per_query(y[:cut], s[:cut], ptr[:1001]),
                                metric.per_query(y[cut:], s[cut:], ptr[1000:] - cut)])
        np.testing.assert_array_equal(whole, parts)
    assert numba.get_num_threads() == before  # the thread setting is restored


# --- bad input and edge values -------------------------------------------------------------
@pytest.mark.parametrize(
    "y,scores,ptr,fragment",
    [
        ([-1, 0, 1], [1, 2, 3], [0, 3], "labels must be finite and >= 0; row 0 has -1"),
        ([np.nan, 0, 1], [1, 2, 3], [0, 3], "labels must be finite"),
        ([np.inf, 0, 1], [1, 2, 3], [0, 3], "labels must be finite"),
        (["a", "b"], [1, 2], [0, 2], "numeric"),
        ([0, 1, 1], [1, 2], [0, 2], "y has 3 values but scores has 2"),
        ([0, 1], [np.nan, 2], [0, 2], "scores contain NaN"),
        ([0, 1], [1, 2], [0, 3], "ptr must rise"),
        ([0, 1], [1, 2], [1, 2], "ptr must rise"),
        ([0, 1], [1, 2], [0.0, 1.5, 2.0], "integer"),
        ([0, 1], [1, 2], [], "ptr must rise"),
        ([2000, 0, 1], [1, 2, 3], [0, 3], "gain='linear'"),
    ],
)
def test_metrics_reject_bad_input(y, scores, ptr, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        get_metric("ndcg@10").per_query(y, scores, ptr)


@pytest.mark.parametrize("spec", ["foo", "ndcg@0", "ndcg@-1", "map@x", "", "ndcg@", None, 10])
def test_unknown_metrics_and_bad_k(spec):
    with pytest.raises(ValueError, match=re.escape(repr(spec))):
        get_metric(spec)


def test_metric_edge_values():
    m = get_metric("ndcg@10")
    assert m.per_query([], [], [0]).shape == (0,)
    assert np.isnan(m.mean([], [], [0]))  # no query: NaN mean, not an error
    assert m.per_query([0, 0], [1, 2], [0, 2])[0] == 0.0  # no relevant document: 0 by default
    assert m.per_query([3], [0.5], [0, 1])[0] == 1.0  # one document
    assert get_metric("ndcg@10", gain="linear").mean([2000, 0, 1], [1, 2, 3], [0, 3]) > 0
    assert 0 < get_metric("err@10", max_grade=2000).mean([2000, 0, 1], [1, 2, 3], [0, 3]) <= 1  # ERR works in 2^(g - max)


@pytest.mark.parametrize("empty,expected", [("zero", 0.0), ("one", 1.0), ("skip", None)])
def test_ndcg_with_gains_that_underflow_is_an_empty_query(empty, expected):
    """Found by hypothesis: label 1.6e-243 > 0 has gain 2^rel - 1 == 0, so the ideal DCG is 0
    (it used to raise ZeroDivisionError from the kernel)."""
    value = get_metric("ndcg", empty=empty).per_query([1.5753194e-243, 0.0], [-1.0, 0.0], [0, 2])[0]
    assert np.isnan(value) if expected is None else value == expected


def test_metric_shortcuts_check_qid():
    with pytest.raises(ValueError, match="lengths differ"):
        ndcg_score([0, 1], [1, 2, 3], qid=[1, 1])
    with pytest.raises(ValueError, match="exactly one of qid"):
        ndcg_score([0, 1], [1, 2])
    with pytest.raises(DataFormatError, match="missing"):
        ndcg_score([0, 1], [1, 2], qid=[1.0, np.nan])


def test_relevance_level_at_or_below_zero_makes_grade_zero_relevant_and_trec_measures_round_up():
    y, s, ptr = [0.0, 2.0, 1.0], [3.0, 2.0, 1.0], [0, 3]
    assert get_metric("p@2", relevance_level=0).per_query(y, s, ptr)[0] == 1.0
    assert get_metric("p@2", relevance_level=2).per_query(y, s, ptr)[0] == 0.5
    assert get_metric("rr", relevance_level=1.5).per_query(y, s, ptr)[0] == 0.5  # grade 1 is below 1.5
    # trec_eval's measures take integer grades: level 1.5 is level 2, not 1
    n_rel = {lv: get_metric("num_rel", relevance_level=lv).per_query(y, s, ptr)[0] for lv in (1, 1.5, 2)}
    assert n_rel == {1: 2, 1.5: 1, 2: 1}


@pytest.mark.parametrize("ties", ["stable", "pessimistic", "average"])
def test_the_interpreted_kernel_gives_the_compiled_values_bit_for_bit(ties, monkeypatch):
    """Small inputs in a process without numba run ``per_query_values`` interpreted (ranklearn._compilation):
    the same operations on the same doubles, so the same values, ties, cutoffs and empty queries included."""
    from ranklearn import _compilation
    from ranklearn.metrics import kernels as K

    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 40, size=60)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    y = rng.integers(0, 5, size=ptr[-1]).astype(float) * (rng.random(ptr[-1]) < 0.6)  # empty queries too
    s = np.round(rng.normal(size=ptr[-1]), 1)  # many ties
    specs = ["ndcg@10", "ndcg", "dcg@5", "err@10", "map", "map@5", "p@10", "recall@10", "rr@10", "f1@5"]
    compiled_kernel = K.per_query_values.dispatcher

    def compiled_only(*args):
        assert _compilation.SMALL_INPUTS == "compiled", "the interpreted run called the compiled kernel"
        return compiled_kernel(*args)

    monkeypatch.setattr(K.per_query_values, "_dispatcher", compiled_only)
    ones = [(spec, "one") for spec in specs if spec.startswith(("ndcg", "map"))]  # defined for these only
    cases = [(spec, empty) for spec in specs for empty in ("zero", "skip")] + ones
    for spec, empty in cases:
        metric = get_metric(spec, ties=ties, empty=empty)
        monkeypatch.setattr(_compilation, "SMALL_INPUTS", "compiled")
        compiled = metric.per_query(y, s, ptr)
        monkeypatch.setattr(_compilation, "SMALL_INPUTS", "interpreted")
        interpreted = metric.per_query(y, s, ptr)
        assert compiled.tobytes() == interpreted.tobytes(), (spec, empty)
