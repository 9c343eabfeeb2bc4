"""``ranklearn trec-eval``: trec_eval's output line for line.

tests/data/trec_eval/*.out are the outputs of the trec_eval 9.0.8 binary (built from
usnistgov/trec_eval's sources) for qrels.txt and run.txt, which hold score ties, retrieved
documents the qrels lack, negative grades, judged documents never retrieved, a query without
relevant documents, a qrels query missing from the run and a run query missing from the qrels.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

from _helpers import assert_one_line_error, run
from ranklearn.data import load_svmlight
from ranklearn.io.trec import docids_from_comments, run_lines

DATA = Path(__file__).parent / "data" / "trec_eval"

CASES = {
    "default": [],
    "all_trec_q": ["-q", "-m", "all_trec"],
    "official_c_q": ["-q", "-c", "-m", "official"],
    "set_J_l2_q": ["-q", "-J", "-l", "2", "-m", "set", "-m", "P.1,3", "-m", "bpref"],
    "params_M3_q": ["-q", "-M", "3", "-m", "ndcg.1=3,2=9", "-m", "G.0=1,3=2", "-m", "ndcg_rel.2=0", "-m", "Rndcg.1=0.5",
                    "-m", "relstring.4", "-m", "utility.2,-1,1,0", "-N", "50"],
    "zscores_q": ["-q", "-Z", DATA / "zscores.txt", "-m", "map", "-m", "P.5"],
    "nosummary": ["-n", "-q", "-m", "gm_map", "-m", "gm_bpref", "-m", "recall.2"],
    "gm_c": ["-c", "-m", "gm_map", "-m", "num_rel", "-m", "num_q"],
    "yaap_q": ["-q", "-m", "yaap", "-m", "map"],
}  # fmt: skip
#: -R prefs / qrels_prefs / qrels_jg: (options, judgements file) on prefs_run.txt, whose scores tie,
#: with a query the judgements lack (104) and one the run lacks (103, 106). prefs.txt holds
#: judgment groups of one sub-group (equivalence classes) and of several (transitive
#: preferences), groups that contradict each other, more non-relevant than relevant documents
#: (the Rnonrel recount) and a group with nothing possible (Rnonrel_ret's 0); qrels_jg.txt
#: groups with negative grades and documents the run lacks.
FORMAT_CASES = {
    "prefs_all_q": (["-q", "-R", "prefs", "-m", "all_prefs"], "prefs.txt"),
    "prefs_c_M3_q": (["-q", "-c", "-M", "3", "-R", "prefs", "-m", "prefs"], "prefs.txt"),
    # -J and -l change nothing for preferences
    "prefs_Z_J_l3_q": (["-q", "-Z", DATA / "zscores_prefs.txt", "-J", "-l", "3", "-R", "prefs", "-m", "prefs_simp", "-m",
                        "prefs_num_prefs_poss"], "prefs.txt"),
    "qrels_prefs_q": (["-q", "-R", "qrels_prefs", "-m", "all_prefs"], "qrels_prefs.txt"),
    "qrels_jg_q": (["-q", "-R", "qrels_jg", "-m", "qrels_jg"], "qrels_jg.txt"),
    "qrels_jg_c_J_l2_M4_q": (["-q", "-c", "-J", "-l", "2", "-M", "4", "-R", "qrels_jg", "-m", "map_avgjg", "-m",
                              "P_avgjg.2,5", "-m", "Rprec_mult_avgjg.0.5,1.5"], "qrels_jg.txt"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_equals_trec_eval_binary(capsys, case):
    code, out, err = run(capsys, "trec-eval", *CASES[case], DATA / "qrels.txt", DATA / "run.txt")
    assert code == 0, err
    assert out == (DATA / f"{case}.out").read_text()


@pytest.mark.parametrize("case", sorted(FORMAT_CASES))
def test_other_judgement_formats_equal_trec_eval_binary(capsys, case):
    options, judgements = FORMAT_CASES[case]
    code, out, err = run(capsys, "trec-eval", *options, DATA / judgements, DATA / "prefs_run.txt")
    assert code == 0, err
    assert out == (DATA / f"{case}.out").read_text()


def test_prefs_by_hand(capsys, tmp_path):
    # one user: a > b > c; the run ranks b, a and leaves c out: a > b fails, a > c and b > c are
    # fulfilled by implication
    (tmp_path / "prefs").write_text("1 u s a 3\n1 u s b 2\n1 u s c 1\n")
    (tmp_path / "run").write_text("1 Q0 b 1 2 t\n1 Q0 a 2 1 t\n")
    code, out, err = run(capsys, "trec-eval", "-R", "prefs", "-m", "all_prefs", tmp_path / "prefs", tmp_path / "run")
    assert code == 0, err
    got = {line.split("\t")[0].strip(): line.split("\t")[2] for line in out.splitlines()}
    assert got["prefs_num_prefs_poss"] == "3" and got["prefs_num_prefs_ful"] == "2"
    assert got["prefs_num_prefs_ful_ret"] == "0" and got["prefs_simp"] == f"{2 / 3:6.4f}"
    assert got["prefs_simp_ret"] == "0.0000" and got["prefs_simp_imp"] == f"{2 / 3:6.4f}"


def test_scores_equal_as_c_floats_tie_as_in_pytrec_eval(capsys, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")
    # a > b > c as doubles, equal as C floats: trec_eval ranks them by docid descending, c b a
    scores = {"a": 0.1000000003, "b": 0.1000000002, "c": 0.1000000001}
    grades = {"a": 1, "b": 1, "c": 0}
    (tmp_path / "qrels").write_text("".join(f"1 0 {d} {g}\n" for d, g in grades.items()))
    (tmp_path / "run").write_text("".join(f"1 Q0 {d} 1 {s!r} t\n" for d, s in scores.items()))
    code, out, err = run(capsys, "trec-eval", "-q", "-m", "recip_rank", "-m", "relstring", tmp_path / "qrels",
                         tmp_path / "run")  # fmt: skip
    assert code == 0, err
    want = pytrec_eval.RelevanceEvaluator({"1": grades}, {"recip_rank"}).evaluate({"1": scores})["1"]["recip_rank"]
    assert want == 0.5 and out.splitlines()[:2] == ["recip_rank            \t1\t0.5000", "relstring             \t1\t'011'"]


def test_comment_lines_extra_columns_and_stdin_change_nothing(capsys, tmp_path, monkeypatch):
    qrels = tmp_path / "qrels"
    qrels.write_text("# judged by hand\n" + (DATA / "qrels.txt").read_text())
    lines = (DATA / "run.txt").read_text().splitlines()
    runfile = tmp_path / "run"
    runfile.write_text("# a comment\n" + "\n".join(f"{line} extra columns here" for line in lines) + "\n")
    code, out, _ = run(capsys, "trec-eval", "-q", "-m", "all_trec", qrels, runfile)
    assert code == 0 and out == (DATA / "all_trec_q.out").read_text()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(runfile.read_bytes())))
    code, out, _ = run(capsys, "trec-eval", qrels, "-")
    assert code == 0 and out == (DATA / "default.out").read_text()


def test_all_trec_on_mq2008_equals_pytrec_eval(capsys, tmp_path, shared_data):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")
    path = shared_data / "MQ2008" / "Fold1" / "test.txt"
    if not path.exists():
        pytest.skip(f"{path} not available")
    ds = load_svmlight(path)
    docids = docids_from_comments(ds.comments, path=path)
    scores = np.round(ds.X[:, 0] * 3 + ds.X[:, 10], 1)  # many ties
    qrels = tmp_path / "q"
    qrels.write_text("".join(f"{q} 0 {d} {int(y)}\n" for q, d, y in zip(ds.qid, docids, ds.y)))
    runfile = tmp_path / "r"
    runfile.write_text("".join(f"{line}\n" for line in run_lines(ds.qid, docids, scores, "mq")))
    code, out, err = run(capsys, "trec-eval", "-q", "-m", "all_trec", qrels, runfile)
    assert code == 0, err
    qd = {str(q): {} for q in ds.query_ids}
    rd = {str(q): {} for q in ds.query_ids}
    for q, d, y, s in zip(ds.qid, docids, ds.y, scores):
        qd[str(q)][d] = int(y)
        rd[str(q)][d] = float(s)
    want = pytrec_eval.RelevanceEvaluator(qd, {"all_trec"}).evaluate(rd)
    lines = [line.split("\t") for line in out.splitlines()]
    per_query = [(name.strip(), qid, value) for name, qid, value in lines if qid != "all"]
    assert {qid for _, qid, _ in per_query} == set(want)
    for name, qid, value in per_query:
        if name == "relstring":
            continue
        expected = want[qid][name]
        assert value == (f"{int(expected)}" if name.startswith("num_") else f"{expected:6.4f}"), (qid, name)
    summary = {name.strip(): value for name, qid, value in lines if qid == "all"}
    assert summary["num_q"] == str(len(want)) and summary["runid"] == "mq"
    assert summary["map"] == f"{np.mean([v['map'] for v in want.values()]):6.4f}"
    assert summary["num_rel_ret"] == str(int(sum(v["num_rel_ret"] for v in want.values())))


@pytest.mark.parametrize(
    "qrels_text, run_text, options, fragments",
    [
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n1 Q0 a 2 0.5 t\n", [], ["run:", "listed twice", "'a'", "query '1'"]),
        ("1 0 a 1\n", "1 Q0 a 1\n", [], ["run:1:", "6 columns"]),
        ("1 0 a 1\n1 0 a 0\n", "1 Q0 a 1 1 t\n", [], ["qrels:", "judged twice", "'a'"]),
        ("1 0 a 1 extra\n", "1 Q0 a 1 1 t\n", [], ["qrels:1:", "4 columns"]),
        ("1 0 a 1\n", "1 Q0 a 1 high t\n", [], ["run:1:", "score", "'high'"]),
        ("1 0 a 1\n", "2 Q0 a 1 1 t\n", [], ["no queries with both results and relevance info"]),
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-m", "nope"], ["illegal measure 'nope'"]),
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-m", "P.5,5"], ["duplicate cutoffs"]),
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-R", "nope"], ["-R 'nope' is not a judgement format"]),
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-R", "prefs"], ["measure 'num_ret' needs -R qrels", "not -R prefs"]),
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-m", "prefs_simp"], ["'prefs_simp' needs -R prefs or qrels_prefs"]),
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-R", "prefs", "-m", "prefs"], ["qrels:1:", "5 columns"]),
        ("1 u s a 1\n1 u s b x\n", "1 Q0 a 1 1 t\n", ["-R", "prefs", "-m", "prefs"], ["qrels:2:", "rel_level"]),
        ("1 u a 1\n1 u a 0\n", "1 Q0 a 1 1 t\n", ["-R", "qrels_jg", "-m", "qrels_jg"], ["qrels:2:", "judged twice"]),
        ("1 u s a 1\n1 u s a 2\n", "1 Q0 a 1 1 t\n", ["-R", "prefs", "-m", "prefs"], ["'a'", "two rel_levels"]),
        ("1 u s a 1\n1 u t a 0\n1 u t b 1\n", "1 Q0 a 1 1 t\n", ["-R", "prefs", "-m", "prefs"],
         ["'a'", "rel_level 0 and another"]),
        ("1 u s a 2\n1 u s b 1\n1 u t b 2\n1 u t a 1\n", "1 Q0 a 1 1 t\n", ["-R", "prefs", "-m", "prefs"],
         ["judgment group 'u'", "contradict"]),
        ("2 u s a 1\n", "1 Q0 a 1 1 t\n", ["-R", "prefs", "-m", "prefs"], ["no queries with both results"]),
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-M", "-1"], ["-M must be >= 0"]),
    ],
)
def test_errors_are_one_line(capsys, tmp_path, qrels_text, run_text, options, fragments):
    (tmp_path / "qrels").write_text(qrels_text)
    (tmp_path / "run").write_text(run_text)
    code, _, err = run(capsys, "trec-eval", *options, tmp_path / "qrels", tmp_path / "run")
    assert_one_line_error(code, err, *fragments)


def test_evaluate_and_compare_take_the_trec_eval_measures(capsys, tmp_path):
    import json

    summary = {line.split("\t")[0].strip(): line.split("\t")[2] for line in (DATA / "all_trec_q.out").read_text().splitlines()
               if line.split("\t")[1] == "all"}  # fmt: skip
    names = {"bpref": "bpref", "infap": "infAP", "gm_map": "gm_map", "gm_bpref": "gm_bpref", "success@5": "success_5",
             "iprec@0.3": "iprec_at_recall_0.30", "rprec_mult@0.6": "Rprec_mult_0.60", "11pt": "11pt_avg",
             "set_f": "set_F", "utility": "utility", "rndcg": "Rndcg", "g": "G", "ndcg_rel": "ndcg_rel"}  # fmt: skip
    metrics = [a for spec in names for a in ("--metric", spec)]
    code, out, err = run(capsys, "evaluate", "--qrels", DATA / "qrels.txt", "--run", DATA / "run.txt", *metrics,
                         "--metric", "yaap", "--conventions", "trec_eval", "--json")  # fmt: skip
    assert code == 0, err
    means = json.loads(out)
    for spec, name in names.items():
        assert f"{means[spec]:6.4f}" == summary[name], spec
    yaap = (DATA / "yaap_q.out").read_text().splitlines()[-1].split("\t")
    assert yaap[0].strip() == "yaap" and f"{means['yaap']:6.4f}" == yaap[2]
    other = tmp_path / "other.run"
    other.write_text((DATA / "run.txt").read_text().replace(" 1.5 ", " 0.1 "))
    code, out, err = run(capsys, "compare", "--qrels", DATA / "qrels.txt", "--run", DATA / "run.txt", "--run", other,
                         "--metric", "bpref", "--metric", "infap", "--conventions", "trec_eval", "--json")  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert "bpref" in json.dumps(result) and "infap" in json.dumps(result)
