"""ranklearn explain: tables, JSON and a page for one query of a file, the numbers those of
ranklearn.explain; bad queries and documents are one line naming them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import TINY_TREES

from ranklearn import LambdaMART, explain
from ranklearn.cli.main import main
from ranklearn.data import load_svmlight, save_svmlight
from ranklearn.datasets import make_ranking_splits


def run(capsys, *args):
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return (exit_info.value.code or 0), out.out, out.err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explain")
    train, _, test = make_ranking_splits((30, 5, 6), n_features=5, n_informative=3, random_state=0)
    LambdaMART(**{**TINY_TREES, "n_estimators": 8}).fit(train.X, train.y, train.qid).save(folder / "m.json")
    save_svmlight(test, folder / "test.txt")
    lines = (folder / "test.txt").read_text().splitlines()
    (folder / "named.txt").write_text("".join(f"{line} #docid = D{i}\n" for i, line in enumerate(lines)))
    return folder


def _query(files, name="named.txt"):
    from ranklearn.io import load_model

    ds = load_svmlight(files / name)
    q = 0
    rows = slice(ds.ptr[q], ds.ptr[q + 1])
    return load_model(files / "m.json"), str(ds.query_ids[q]), np.asarray(ds.X[rows]), rows


def test_json_holds_the_query_explanation(capsys, files):
    model, qid, X, rows = _query(files)
    code, out, err = run(capsys, "explain", "--model", files / "m.json", "--data", files / "named.txt", "--query", qid,
                         "--top", "3", "--features", "2", "--json")  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    ids = [f"D{i}" for i in range(rows.start, rows.stop)]
    ref = explain.query(model, X, top=3, doc_ids=ids).to_dict(2)
    assert got["query"] == qid and "TreeSHAP" in got["method"]
    assert got["documents"] == ref["documents"] and got["adjacent_pairs"] == ref["adjacent_pairs"]


def test_pair_table_and_json(capsys, files):
    model, qid, X, rows = _query(files)
    a, b = f"D{rows.start + 1}", f"D{rows.start}"
    code, out, _ = run(capsys, "explain", "--model", files / "m.json", "--data", files / "named.txt", "--query", qid,
                       "--pair", a, b, "--json")  # fmt: skip
    assert code == 0
    pe = explain.pair(model, X[1], X[0])
    got = json.loads(out)["pair"]
    assert got["a"] == a and got["difference"] == pe.difference
    assert got["features"][0]["feature"] == pe.top(1)[0][0]
    code, out, _ = run(capsys, "explain", "--model", files / "m.json", "--data", files / "named.txt", "--query", qid,
                       "--pair", a, b)  # fmt: skip
    assert code == 0 and a in out and "= score difference" in out and f"{pe.difference:+.6g}" in out


def test_documents_without_ids_are_named_by_line_and_the_page_is_written(capsys, files, tmp_path):
    pytest.importorskip("matplotlib")
    _, qid, _, rows = _query(files, "test.txt")
    code, out, _ = run(capsys, "explain", "--model", files / "m.json", "--data", files / "test.txt", "--query", qid)
    assert code == 0 and f"line {rows.start + 1}" in out and "adjacent pairs" in out
    page = tmp_path / "p.html"
    code, out, _ = run(capsys, "explain", "--model", files / "m.json", "--data", files / "test.txt", "--query", qid,
                       "--pair", f"line {rows.start + 1}", f"line {rows.start + 2}", "--out", page)  # fmt: skip
    text = page.read_text()
    assert code == 0 and text.startswith("<!DOCTYPE html>") and text.count("data:image/png;base64,") == 2
    assert f"Adjacent pairs of query {qid}" in text and "<script" not in text


def test_errors_are_one_line(capsys, files):
    def error(*args):
        code, _, err = run(capsys, "explain", "--model", files / "m.json", "--data", files / "named.txt", *args)
        assert code == 2 and err.startswith("ranklearn: error: ") and err.count("\n") == 1, err
        return err

    assert "--query 'nope' is not a query of" in error("--query", "nope")
    _, qid, _, _ = _query(files)
    assert "no document 'X'" in error("--query", qid, "--pair", "X", "D0")
    assert "--json and --out" in error("--query", qid, "--json", "--out", "x.html")
    assert "--top" in error("--query", qid, "--top", "0")
