"""evaluate --qrels/--run, compare and predict --format trec, run in-process through main()."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ranklearn.data import load_svmlight
from ranklearn.io.trec import docids_from_comments, read_run, run_lines
from ranklearn.metrics import get_metric
from ranklearn.stats import compare as stats_compare
from _helpers import assert_one_line_error, run


@pytest.fixture(scope="module")
def mq(shared_data):
    path = shared_data / "MQ2008" / "Fold1" / "test.txt"
    if not path.exists():
        pytest.skip(f"{path} not available")
    ds = load_svmlight(path)
    return path, ds, docids_from_comments(ds.comments, path=path)


def score_file(path, scores):
    path.write_text("".join(f"{float(v)!r}\n" for v in scores))
    return path


def trec_files(tmp_path, ds, docids, scores_by_run):
    """Qrels of the data file, and one run per score array (docs with a negative score left out)."""
    qrels = tmp_path / "test.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {int(y)}\n" for q, d, y in zip(ds.qid, docids, ds.y)))
    runs = []
    for name, s in scores_by_run.items():
        keep = s >= 0
        path = tmp_path / name
        path.write_text("".join(f"{line}\n" for line in run_lines(ds.qid[keep], docids[keep], s[keep], name)))
        runs.append(path)
    return qrels, runs


def test_evaluate_qrels_run_equals_trec_eval(capsys, tmp_path, mq):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")
    _, ds, docids = mq
    rng = np.random.default_rng(0)
    s = rng.integers(0, 4, ds.n_samples).astype(float)  # ties everywhere
    s[rng.random(ds.n_samples) < 0.2] = -1  # a fifth of the judged documents not retrieved
    qrels, (run_path,) = trec_files(tmp_path, ds, docids, {"sys": s})
    measures = {"ndcg@10": "ndcg_cut_10", "ndcg": "ndcg", "map": "map", "map@10": "map_cut_10", "p@10": "P_10",
                "rr": "recip_rank"}  # fmt: skip
    args = ["evaluate", "--qrels", qrels, "--run", run_path, "--conventions", "trec_eval", "--json", "--per-query"]
    code, out, err = run(capsys, *args, *[x for m in measures for x in ("--metric", m)])
    assert code == 0, err
    result = json.loads(out)
    with open(qrels) as fq, open(run_path) as fr:
        ref = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(fq), {"ndcg_cut", "ndcg", "map", "map_cut", "P",
                                             "recip_rank"}).evaluate(pytrec_eval.parse_run(fr))  # fmt: skip
    assert len(result["per_query"]) == len(ref)
    for row in result["per_query"]:
        for spec, name in measures.items():
            assert row[spec] == pytest.approx(ref[str(row["qid"])][name], abs=1e-12), (spec, row["qid"])
    for spec, name in measures.items():
        assert result[spec] == pytest.approx(np.mean([v[name] for v in ref.values()]), abs=1e-12)


def test_predict_trec_run_round_trip(capsys, tmp_path, mq):
    from ranklearn.models import LambdaMART

    path, ds, docids = mq
    model = LambdaMART(n_estimators=3, num_leaves=4, random_state=0).fit(ds.X, ds.y, qid=ds.qid)
    model.save(tmp_path / "m.json")
    out = tmp_path / "test.run"
    code, _, err = run(capsys, "predict", "--model", tmp_path / "m.json", "--data", path, "--out", out,
                       "--format", "trec", "--run-tag", "lm3")  # fmt: skip
    assert code == 0, err
    back = read_run(out)
    assert back.tag == "lm3"
    expected = model.predict(ds.X)
    got = np.array([back.scores[str(q)][d] for q, d in zip(ds.qid, docids)])
    assert np.array_equal(got, expected)  # every row, scores exactly
    lines = out.read_text().splitlines()
    first = [line.split() for line in lines if line.split()[0] == str(ds.query_ids[0])]
    assert [int(f[3]) for f in first] == list(range(1, len(first) + 1))
    keys = [(-float(f[4]), f[2]) for f in first]  # score descending, then docid descending
    assert all(a[0] < b[0] or (a[0] == b[0] and a[1] > b[1]) for a, b in zip(keys, keys[1:]))
    # the same run through evaluate --qrels equals evaluate --data with docid ties
    qrels = tmp_path / "q"
    qrels.write_text("".join(f"{q} 0 {d} {int(y)}\n" for q, d, y in zip(ds.qid, docids, ds.y)))
    scores = score_file(tmp_path / "s", expected)
    code, a, err = run(capsys, "evaluate", "--qrels", qrels, "--run", out, "--metric", "map", "--ties", "docid", "--json")
    assert code == 0, err
    code, b, err = run(capsys, "evaluate", "--data", path, "--scores", scores, "--metric", "map", "--ties", "docid", "--json")
    assert code == 0, err
    assert json.loads(a) == json.loads(b)
    code, _, err = run(capsys, "predict", "--model", tmp_path / "m.json", "--data", path, "--out", out,
                       "--format", "trec", "--docid-field", "nosuch")  # fmt: skip
    assert_one_line_error(code, err, f"{path}:1:", "nosuch")
    code, _, err = run(capsys, "predict", "--model", tmp_path / "m.json", "--data", path, "--out", out,
                       "--format", "trec", "--docid-field", "inc")  # a field that repeats: not an id
    assert_one_line_error(code, err, str(path), "listed twice", "'inc' field, --docid-field")


def test_compare_json_equals_stats_compare(capsys, tmp_path, mq):
    path, ds, _ = mq
    rng = np.random.default_rng(1)
    base = rng.random(ds.n_samples)
    systems = {"a.txt": base, "b.txt": base + 0.3 * ds.y * rng.random(ds.n_samples), "c.txt": rng.random(ds.n_samples)}
    files = [score_file(tmp_path / name, s) for name, s in systems.items()]
    metrics = ["ndcg@10", "map"]
    args = ["compare", "--data", path, *[x for f in files for x in ("--scores", f)], "--permutations", 2000, "--seed", 4]
    code, out, err = run(capsys, *args, "--metric", "ndcg@10", "--metric", "map", "--json")
    assert code == 0, err
    result = json.loads(out)
    per_query = {m: {n: get_metric(m).per_query(ds.y, s, ds.ptr) for n, s in systems.items()} for m in metrics}
    expected = stats_compare(per_query, n_permutations=2000, n_resamples=2000, seed=4).to_dict()
    assert result["tests"] == expected["tests"] and result["means"] == expected["means"]
    assert result["baseline"] == "a.txt" and len(result["tests"]) == 4
    b = next(t for t in result["tests"] if t["system"] == "b.txt" and t["metric"] == "map")
    assert b["difference"] > 0 and b["randomization_p"] < 0.01 and b["t_p_holm"] >= b["t_p"]
    code, out, _ = run(capsys, *args, "--metric", "map")
    assert code == 0
    assert "p(rand)" in out and "a.txt (base)" in out and "Holm-Bonferroni" in out
    lines = out.splitlines()
    # off a terminal a note is one line, whatever its length (grep finds it); the table fits 80 columns
    notes = [line for line in lines if "W/T/L = queries won/tied/lost" in line]
    assert len(notes) == 1 and "Holm-Bonferroni adjusted" in notes[0]
    assert all(len(line) <= 80 for line in lines if line not in notes)


def test_compare_trec_runs_and_errors(capsys, tmp_path, mq):
    path, ds, docids = mq
    rng = np.random.default_rng(2)
    qrels, runs = trec_files(tmp_path, ds, docids, {"r1": rng.random(ds.n_samples), "r2": rng.random(ds.n_samples)})
    code, out, err = run(capsys, "compare", "--qrels", qrels, "--run", runs[0], "--run", runs[1], "--metric", "p@10",
                         "--conventions", "trec_eval", "--json", "--per-query", "--permutations", 100)  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert len(result["per_query"]) == ds.n_queries and set(result["per_query"][0]["p@10"]) == {"r1", "r2"}
    assert result["conventions"]["p@10"].endswith("ties=docid")
    assert_one_line_error(*run(capsys, "compare", "--data", path, "--scores", score_file(tmp_path / "x", ds.y))[::2],
                          "at least two systems")  # fmt: skip
    assert_one_line_error(*run(capsys, "compare", "--data", path, "--run", runs[0])[::2], "--data takes --scores")
    one = score_file(tmp_path / "one.scores", ds.y)
    assert_one_line_error(*run(capsys, "compare", "--data", path, "--scores", one, "--scores", f"{tmp_path}/./one.scores")[::2],
                          "one.scores is given twice")  # fmt: skip
    assert_one_line_error(*run(capsys, "compare", "--qrels", qrels, "--run", runs[0], "--run", runs[1],
                               "--per-query")[::2], "--per-query", "--json")  # fmt: skip
    assert_one_line_error(*run(capsys, "evaluate", "--metric", "map")[::2], "--qrels with --run")
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d 1 0.5 t\n1 Q0 d 2\n")
    assert_one_line_error(*run(capsys, "evaluate", "--qrels", qrels, "--run", bad)[::2], f"{bad}:2:", "6 columns")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for args in (("--qrels", qrels, "--run", empty), ("--qrels", empty, "--run", runs[0])):  # which file is empty
        assert_one_line_error(*run(capsys, "evaluate", *args)[::2], f"{empty}: has no lines to evaluate")
    assert_one_line_error(*run(capsys, "evaluate", "--qrels", qrels, "--run", runs[0], "--metric", "p@5",
                               "--empty", "one")[::2], "ndcg and map only")  # fmt: skip


def test_evaluate_several_score_files_and_presets(capsys, tmp_path, mq):
    path, ds, docids = mq
    s = np.round(ds.X[:, 0], 1)  # ties
    one, two = score_file(tmp_path / "one", s), score_file(tmp_path / "two", -s)
    code, out, _ = run(capsys, "evaluate", "--data", path, "--scores", one, "--scores", two, "--metric", "ndcg@10",
                       "--conventions", "trec_eval", "--json")  # fmt: skip
    assert code == 0
    result = json.loads(out)
    metric = get_metric("ndcg@10", conventions="trec_eval")
    assert result == {"one": {"ndcg@10": metric.mean(ds.y, s, ds.ptr, docids=docids)},
                      "two": {"ndcg@10": metric.mean(ds.y, -s, ds.ptr, docids=docids)}}  # fmt: skip
    code, out, _ = run(capsys, "evaluate", "--data", path, "--scores", one, "--conventions", "lightgbm",
                       "--empty", "zero", "--metric", "ndcg@5")  # fmt: skip
    assert "empty queries=0" in out and "ties=stable" in out


@pytest.mark.parametrize("command", ["evaluate", "compare", "predict"])
def test_help(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and "Usage" in out


@pytest.mark.parametrize(
    "data,scores,options,fragments",
    [
        ("negative_label", "scores2", [], ["negative_label.txt:1:", ">= 0", "this one is -1"]),
        ("ok", "scores6", ["--metric", "foo"], ["unknown metric 'foo'"]),
        ("ok", "scores6", ["--metric", "ndcg@0"], ["ndcg@0", ">= 1"]),
        ("ok", "scores6", ["--metric", "ndcg@-3"], ["ndcg@-3"]),
        ("ok", "scores2", [], ["scores2.txt", "2 scores for 6 rows"]),
        ("ok", "scores_bad", [], ["scores_bad.txt:2:", "finite number"]),
        ("ok", "dir", [], ["a_directory", "directory"]),
        ("ok", "missing", [], ["missing.txt", "No such file"]),
        ("dir", "scores6", [], ["a_directory", "directory"]),
        ("reappearing", "scores6", ["--no-regroup"], ["reappearing.txt:3:", "reappears", "leave out --no-regroup"]),
        ("empty", "scores6", [], ["empty.txt", "no data lines"]),
    ],
)
def test_cli_evaluate_errors(capsys, files, data, scores, options, fragments):
    code, _, err = run(capsys, "evaluate", "--data", files[data], "--scores", files[scores], *options)
    assert_one_line_error(code, err, *fragments)


def test_each_run_is_scored_on_the_judged_queries_it_has(capsys, tmp_path):
    qrels = tmp_path / "q.qrels"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n2 0 d 0\n3 0 e 1\n")
    full, part, stray = tmp_path / "full.run", tmp_path / "part.run", tmp_path / "stray.run"
    full.write_text("1 Q0 b 1 2 t\n1 Q0 a 2 1 t\n2 Q0 c 1 2 t\n3 Q0 x 1 2 t\n3 Q0 e 2 1 t\n")
    part.write_text("1 Q0 a 1 2 t\n2 Q0 d 1 2 t\n2 Q0 c 2 1 t\n9 Q0 z 1 1 t\n")  # lacks 3; 9 is not judged
    stray.write_text("9 Q0 z 1 1 t\n")
    rr = {"full": [0.5, 1.0, 0.5], "part": [1.0, 0.5]}  # reciprocal rank of the first relevant document

    def evaluate(*args):
        code, out, err = run(capsys, "evaluate", "--qrels", qrels, *args, "--metric", "rr")
        assert code == 0, err
        return out

    alone = json.loads(evaluate("--run", full, "--json"))
    both = json.loads(evaluate("--run", full, "--run", part, "--json", "--per-query"))
    assert alone["rr"] == both["full.run"]["rr"] == pytest.approx(np.mean(rr["full"]))  # as trec_eval: each run alone
    assert both["part.run"]["rr"] == pytest.approx(np.mean(rr["part"]))
    assert [r["rr"] for r in both["part.run"]["per_query"]] == [1.0, 0.5, None]  # 3: not scored
    out = " ".join(evaluate("--run", full, "--run", part).split())  # the console wraps long lines
    assert "(1 query of the runs not judged there: not scored)" in out
    assert "means over each system's scored queries (full.run 3, part.run 2) of 3 queries" in out
    # trec_eval -c, and ranx (which counts a missing query as 0 once made comparable)
    for args in (("--queries", "qrels"), ("--conventions", "ranx")):
        assert json.loads(evaluate("--run", part, "--json", *args))["rr"] == pytest.approx(sum(rr["part"]) / 3)
    # compare tests the queries every run has
    code, out, err = run(capsys, "compare", "--qrels", qrels, "--run", full, "--run", part, "--metric", "rr", "--json")
    assert code == 0, err
    (test,) = json.loads(out)["tests"]
    assert test["n_queries"] == 2 and test["difference"] == pytest.approx(np.mean(rr["part"]) - np.mean(rr["full"][:2]))
    assert_one_line_error(*run(capsys, "evaluate", "--qrels", qrels, "--run", full, "--run", stray)[::2],
                          f"{stray}: no query of this run is judged in {qrels}")  # fmt: skip


def test_a_negative_seed_names_the_option(capsys, tmp_path):
    # numpy's "expected non-negative integer" named no option
    data = tmp_path / "d.txt"
    data.write_text("1 qid:1 1:1\n0 qid:1 1:0\n2 qid:2 1:1\n0 qid:2 1:0\n")
    scores = score_file(tmp_path / "s.txt", [0.5, 0.1, 0.2, 0.9])
    code, _, err = run(capsys, "compare", "--data", data, "--scores", scores, "--scores", scores, "--seed", "-1")
    assert_one_line_error(code, err, "'--seed'", "greater than or equal to 0")


def test_relevance_level_is_trec_eval_l(capsys, tmp_path):
    """--relevance-level 2 equals trec_eval -l 2 (tests/data/trec_eval/l2.out, from the trec_eval
    9.0.8 binary): map, P, recall, rr and bpref call grade 1 non-relevant, ndcg keeps the grades."""
    from pathlib import Path

    data = Path(__file__).parent / "data" / "trec_eval"
    want = {line.split("\t")[0].strip(): line.split("\t")[2] for line in (data / "l2.out").read_text().splitlines()}
    names = {"map": "map", "bpref": "bpref", "rr": "recip_rank", "p@5": "P_5", "recall@10": "recall_10",
             "ndcg": "ndcg", "ndcg@5": "ndcg_cut_5"}  # fmt: skip
    metrics = [a for spec in names for a in ("--metric", spec)]
    files = ["--qrels", data / "qrels.txt", "--run", data / "run.txt"]
    code, out, err = run(capsys, "evaluate", *files, *metrics, "--conventions", "trec_eval", "--relevance-level", "2",
                         "--json")  # fmt: skip
    assert code == 0, err
    means = json.loads(out)
    assert {spec: f"{means[spec]:6.4f}" for spec in names} == {spec: want[name] for spec, name in names.items()}
    code, out, err = run(capsys, "evaluate", *files, *metrics, "--conventions", "trec_eval", "--json")
    assert code == 0, err
    assert json.loads(out)["map"] != means["map"] and json.loads(out)["ndcg"] == means["ndcg"]
    other = tmp_path / "other.run"
    other.write_text((data / "run.txt").read_text().replace(" 1.5 ", " 0.1 "))
    code, out, err = run(capsys, "compare", *files, "--run", other, "--metric", "map", "--conventions", "trec_eval",
                         "--relevance-level", "2", "--json")  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["conventions"]["map"].startswith("relevant=label>=2")
    assert result["means"]["map"]["run.txt"] == means["map"]


@pytest.mark.parametrize("command", ["evaluate", "compare"])
@pytest.mark.parametrize("value, fragment", [("nan", "--relevance-level must be a finite number"),
                                             ("inf", "--relevance-level must be a finite number"),
                                             ("two", "--relevance-level")])  # fmt: skip
def test_relevance_level_bad_values_are_one_line_errors(capsys, tmp_path, command, value, fragment):
    from pathlib import Path

    data = Path(__file__).parent / "data" / "trec_eval"
    runs = ["--run", data / "run.txt"] * (2 if command == "compare" else 1)
    code, _, err = run(capsys, command, "--qrels", data / "qrels.txt", *runs, "--metric", "map",
                       "--relevance-level", value)  # fmt: skip
    assert_one_line_error(code, err, fragment)

