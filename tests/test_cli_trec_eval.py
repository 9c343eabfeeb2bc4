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
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_equals_trec_eval_binary(capsys, case):
    code, out, err = run(capsys, "trec-eval", *CASES[case], DATA / "qrels.txt", DATA / "run.txt")
    assert code == 0, err
    assert out == (DATA / f"{case}.out").read_text()


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
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-R", "prefs"], ["-R 'prefs' is not supported"]),
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
                         "--conventions", "trec_eval", "--json")  # fmt: skip
    assert code == 0, err
    means = json.loads(out)
    for spec, name in names.items():
        assert f"{means[spec]:6.4f}" == summary[name], spec
    other = tmp_path / "other.run"
    other.write_text((DATA / "run.txt").read_text().replace(" 1.5 ", " 0.1 "))
    code, out, err = run(capsys, "compare", "--qrels", DATA / "qrels.txt", "--run", DATA / "run.txt", "--run", other,
                         "--metric", "bpref", "--metric", "infap", "--conventions", "trec_eval", "--json")  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert "bpref" in json.dumps(result) and "infap" in json.dumps(result)
