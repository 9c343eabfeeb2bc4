"""trec_eval's measures (ranklearn.metrics.trec) against pytrec_eval, which runs trec_eval's own C
code: every measure it supports, per query, on MQ2008 runs with ties, unjudged documents and
negative grades, and on generated runs (hypothesis)."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklearn.data import load_svmlight
from ranklearn.io.trec import docids_from_comments
from ranklearn.io.trec_stream import read_judged_rankings
from ranklearn.metrics.trec import MEASURES, evaluate_rels, expand, parse_request

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")

# relstring is text, runid and num_q are not per-query values; rbp, rbp_resid and unj are
# trec_eval 10's (pytrec_eval embeds 9.0.8)
SKIPPED = {"relstring", "runid", "num_q", "rbp", "rbp_resid", "unj"}
ALL = sorted(set(pytrec_eval.supported_measures) - SKIPPED)


def ours(qrels, run, measures, *, relevance_level=1, judged_only=False, max_docs=None):
    """Our values per query, through the files trec-eval reads."""
    with tempfile.TemporaryDirectory() as folder:
        qrels_path, run_path = Path(folder) / "qrels", Path(folder) / "run"
        qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items()))
        run_path.write_text("".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, ranked in run.items() for d, s in ranked.items()))
        ranked, _, _ = read_judged_rankings(qrels_path, run_path, judged_only=judged_only, max_docs=max_docs)
    requests = expand(measures)
    values = evaluate_rels(ranked.rels, ranked.ptr, ranked.levels, requests, relevance_level=relevance_level)
    columns = [c for r in requests if r.spec.name not in ("runid", "num_q", "relstring") for c in r.columns]
    return {q: dict(zip(columns, values[i])) for i, q in enumerate(ranked.query_ids)}


def assert_same(got, want):
    assert got.keys() == want.keys()
    for q in want:
        for name, value in want[q].items():
            mine = got[q][name]
            assert (math.isnan(value) and math.isnan(mine)) or mine == pytest.approx(value, abs=1e-12), (q, name)


@pytest.fixture(scope="module")
def mq_files(shared_data):
    """MQ2008 Fold1 test as qrels and a run with many ties; a third of the judgements dropped
    (unjudged documents), some grades -1/-2 (pooled, unjudged), 5 queries missing from the run."""
    path = shared_data / "MQ2008" / "Fold1" / "test.txt"
    if not path.exists():
        pytest.skip(f"{path} not available")
    ds = load_svmlight(path)
    docids = docids_from_comments(ds.comments, path=path)
    rng = np.random.default_rng(0)
    scores = np.round(ds.X[:, 0] * 3 + ds.X[:, 10], 1)
    qrels, run = {}, {}
    for q, a, b in zip(ds.query_ids, ds.ptr[:-1], ds.ptr[1:]):
        rows = range(a, b)
        judged = {docids[j]: int(ds.y[j]) for j in rows if rng.random() < 0.7}
        for d in list(judged)[:2]:
            judged[d] = int(rng.choice([-1, -2, judged[d]]))
        judged[f"extra-{q}"] = int(rng.integers(0, 3))  # judged, never retrieved
        qrels[str(q)] = judged
        if rng.random() > 0.05:
            run[str(q)] = {docids[j]: float(scores[j]) for j in rows}
    return qrels, run


@pytest.mark.parametrize("relevance_level, judged_only", [(1, False), (2, False), (1, True)])
def test_every_measure_equals_pytrec_eval_on_mq2008(mq_files, relevance_level, judged_only):
    qrels, run = mq_files
    want = pytrec_eval.RelevanceEvaluator(qrels, ALL, relevance_level=relevance_level,
                                          judged_docs_only_flag=judged_only).evaluate(run)  # fmt: skip
    assert_same(ours(qrels, run, ALL, relevance_level=relevance_level, judged_only=judged_only), want)


@pytest.mark.parametrize(
    "measure", ["P.3,7", "iprec_at_recall.0.25,0.33", "set_F.0.5", "Rprec_mult.0.5,3", "success.2,50",
                "11pt_avg.0.2,0.5", "relative_P.2,3", "ndcg_cut.3,1000", "map_cut.2,4", "recall.2"],
)  # fmt: skip
def test_parameters_equal_pytrec_eval(mq_files, measure):
    qrels, run = mq_files
    want = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    got = ours(qrels, run, [measure])
    # pytrec_eval names a parametrized single value without its parameters (set_F, 11pt_avg)
    renamed = {q: {k.split("_0.")[0].split("_0,")[0] if k.startswith(("set_F", "11pt")) else k: v for k, v in row.items()}
               for q, row in got.items()}  # fmt: skip
    assert_same(renamed, want)


@st.composite
def collections(draw):
    """Qrels and a run: grades -2..3, unjudged retrieved documents, heavy score ties, queries
    missing on either side. Every query has a grade >= 0 (pytrec_eval crashes on a query whose
    grades are all negative: its trec_eval code reads counts left from the previous query)."""
    n_queries = draw(st.integers(1, 4))
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 25)))]
        grades = draw(st.lists(st.sampled_from([None, -2, -1, 0, 0, 1, 2, 3]), min_size=len(docs), max_size=len(docs)))
        judged = {d: g for d, g in zip(docs, grades) if g is not None}
        judged[f"j{q}"] = draw(st.integers(0, 3))
        qrels[str(q)] = judged
        if draw(st.booleans()) or q == 0:
            kept = draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
            run[str(q)] = {d: float(draw(st.integers(0, 4))) for d in kept}
    if draw(st.booleans()):
        run["not-judged"] = {"x": 1.0}
    return qrels, run


@settings(max_examples=40, deadline=None)
@given(collections(), st.integers(1, 3), st.booleans())
def test_generated_runs_equal_pytrec_eval(collection, relevance_level, judged_only):
    qrels, run = collection
    want = pytrec_eval.RelevanceEvaluator(qrels, ALL, relevance_level=relevance_level,
                                          judged_docs_only_flag=judged_only).evaluate(run)  # fmt: skip
    assert_same(ours(qrels, run, ALL, relevance_level=relevance_level, judged_only=judged_only), want)


def test_by_hand():
    # ranking: b(0) a(2) d(-1 in qrels: pooled, unjudged) e(absent); c(1) judged, not retrieved
    qrels = {"1": {"a": 2, "b": 0, "c": 1, "d": -1}}
    run = {"1": {"a": 1.0, "b": 2.0, "e": 0.5, "d": 0.7}}
    got = ours(qrels, run, ["bpref", "infAP", "map", "num_nonrel_judged_ret", "Rprec", "ndcg", "unj.1,2,4", "rbp_resid"])["1"]
    assert got["bpref"] == 0.0  # a follows b, the one judged non-relevant: 1 - min(1, 2) / min(1, 2)
    assert got["map"] == 0.25  # (1/2) / R=2
    assert got["num_nonrel_judged_ret"] == 1
    assert got["Rprec"] == 0.5
    assert got["ndcg"] == pytest.approx((2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert [got["unj_1"], got["unj_2"], got["unj_4"]] == [0.0, 0.0, 0.5]
    assert got["rbp_resid"] == pytest.approx(0.9**4 + 0.1 * (0.9**2 + 0.9**3))
    # infAP at rank 2: 1/2 + (1/2) (1/1) (0 + eps) / (0 + 1 + 2 eps)
    eps = 1e-5
    assert got["infAP"] == pytest.approx((0.5 + 0.5 * eps / (1 + 2 * eps)) / 2)


def test_ties_are_broken_by_docid_descending_and_max_docs_cuts_after():
    qrels = {"1": {"a": 1, "b": 0, "c": 0}}
    run = {"1": dict.fromkeys("abc", 1.0)}
    assert ours(qrels, run, ["recip_rank"])["1"]["recip_rank"] == pytest.approx(1 / 3)
    assert ours(qrels, run, ["recip_rank"], max_docs=2)["1"]["recip_rank"] == 0.0


def test_requests_parse_as_trec_eval():
    assert parse_request("P", "10,5").columns == ("P_5", "P_10")
    assert parse_request("iprec_at_recall", "0.5").columns == ("iprec_at_recall_0.50",)
    assert parse_request("ndcg", "1=3,2=9").columns == ("ndcg_1=3,2=9",)
    assert parse_request("ndcg", "1=3,2=9").values == (1.0, 3.0, 2.0, 9.0)
    assert [r.spec.name for r in expand(["P.5", "official"])][:3] == ["runid", "num_q", "num_ret"]
    assert expand(["P.5", "P.10"])[0].columns == ("P_5",)  # the first parameters given win
    assert len(expand(["all_trec"])) == 34 and {m.name for m in MEASURES} >= {"rbp", "unj"}
    for name, params, fragment in [("nope", None, "illegal measure"), ("P", "5,5", "duplicate"), ("P", "0", "positive"),
                                   ("ndcg", "1", "malformed pair"), ("map", "3", "no parameters"),
                                   ("utility", "1,2", "4 coefficients"), ("P", "x", "not a number")]:  # fmt: skip
        with pytest.raises(ValueError, match=fragment):
            parse_request(name, params)


# get_metric's names of trec_eval measures -> pytrec_eval's output names
METRIC_NAMES = {
    "bpref": "bpref", "gm_bpref": "gm_bpref", "infap": "infAP", "gm_map": "gm_map", "rprec": "Rprec",
    "rprec_mult@0.6": "Rprec_mult_0.60", "iprec@0.3": "iprec_at_recall_0.30", "11pt": "11pt_avg",
    "success@5": "success_5", "hit_rate@10": "success_10", "relative_p@10": "relative_P_10", "set_p": "set_P",
    "set_recall": "set_recall", "set_relative_p": "set_relative_P", "set_map": "set_map", "set_f": "set_F",
    "utility": "utility", "bing": "binG", "g": "G", "ndcg_rel": "ndcg_rel", "rndcg": "Rndcg", "num_ret": "num_ret",
    "num_rel": "num_rel", "num_rel_ret": "num_rel_ret", "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "map": "map", "p@5": "P_5", "ndcg@10": "ndcg_cut_10",
}  # fmt: skip


@pytest.mark.parametrize("relevance_level", [1, 2])
def test_get_metric_on_aligned_runs_equals_pytrec_eval(mq_files, relevance_level):
    from ranklearn.io.trec import Run, align
    from ranklearn.metrics import get_metric

    qrels, run = mq_files
    qrels = {q: {d: max(g, 0) for d, g in judged.items()} for q, judged in qrels.items()}  # read_qrels's default
    query_ids, (arrays,) = align(qrels, [Run(run, "t")])
    want = pytrec_eval.RelevanceEvaluator(qrels, set(METRIC_NAMES.values()), relevance_level=relevance_level).evaluate(run)
    for spec, name in METRIC_NAMES.items():
        metric = get_metric(spec, conventions="trec_eval", relevance_level=relevance_level)
        got = metric.per_query(arrays.y, arrays.scores, arrays.ptr, docids=arrays.docids, retrieved=arrays.retrieved,
                               judged=arrays.judged)  # fmt: skip
        expected = np.array([want[q][name] for q in query_ids])  # (ndcg_cut keeps the grades whatever -l)
        assert got == pytest.approx(expected, abs=1e-12), spec
    gm = get_metric("gm_map", conventions="trec_eval", relevance_level=relevance_level)
    values = gm.per_query(arrays.y, arrays.scores, arrays.ptr, docids=arrays.docids, retrieved=arrays.retrieved)
    assert gm.summarize(values) == pytest.approx(math.exp(np.mean([want[q]["gm_map"] for q in query_ids])))


def test_per_grade_gains_and_relevance_level_by_hand():
    from ranklearn.metrics import get_metric

    y = np.array([2.0, 0.0, 1.0, 1.0])
    scores = np.array([0.1, 0.9, 0.5, 0.3])  # ranking: 0, 1, 1, 2
    ptr = np.array([0, 4])
    dcg = (3 / math.log2(3) + 3 / math.log2(4) + 9 / math.log2(5))
    ideal = 9 + 3 / math.log2(3) + 3 / math.log2(4)
    assert get_metric("ndcg", gain={1: 3, 2: 9}).per_query(y, scores, ptr)[0] == pytest.approx(dcg / ideal)
    assert get_metric("map", relevance_level=2).per_query(y, scores, ptr)[0] == pytest.approx(1 / 4)
    assert get_metric("p@2", relevance_level=1).per_query(y, scores, ptr)[0] == 0.5
    with pytest.raises(ValueError, match=">= 0"):
        get_metric("ndcg", gain={1: -1})
    with pytest.raises(ValueError, match="give success@<k>"):
        get_metric("success")
    with pytest.raises(ValueError, match="give rprec_mult@<level>"):
        get_metric("rprec_mult")
    with pytest.raises(ValueError, match="takes no @"):
        get_metric("bpref@3")
    with pytest.raises(ValueError, match="not defined for trec_eval"):
        get_metric("bpref", ties="average")


@pytest.mark.parametrize("name, measure", [("rr", "recip_rank"), ("ndcg@10", "ndcg_cut_10"), ("bpref", "bpref")])
def test_trec_eval_conventions_compare_scores_as_c_floats_as_pytrec_eval(name, measure):
    """a > b > c as doubles, equal as C floats: trec_eval ranks them by docid descending (c b a),
    and so do the metrics under its conventions, on the generic and the trec measures' paths."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")
    from ranklearn.metrics import get_metric

    scores = {"a": 0.1000000003, "b": 0.1000000002, "c": 0.1000000001}
    grades = {"a": 0, "b": 1, "c": 1}
    want = pytrec_eval.RelevanceEvaluator({"1": grades}, {measure}).evaluate({"1": scores})["1"][measure]
    metric = get_metric(name, conventions="trec_eval")
    got = metric.per_query(list(grades.values()), list(scores.values()), [0, 3], docids=list(scores))[0]
    doubles = get_metric(name, conventions="trec_eval", ties="stable") if name != "bpref" else None
    assert got == pytest.approx(want, abs=1e-12)
    if doubles is not None:  # ranked as doubles (a, b, c), the value differs: the test can tell
        assert doubles.per_query(list(grades.values()), list(scores.values()), [0, 3])[0] != pytest.approx(want)
