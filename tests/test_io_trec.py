"""TREC qrels and runs: parsing errors by line, run round trips, and trec_eval's own numbers."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.exceptions import DataFormatError
from ranklearn.io.trec import Run, align, docids_from_comments, read_qrels, read_run, run_lines
from ranklearn.metrics import get_metric


def write(path, text):
    path.write_text(text)
    return path


def test_read_qrels_and_run(tmp_path):
    qrels = read_qrels(write(tmp_path / "q", "1 0 d1 2\n1 0 d2 0\n\n2 0 d1 1\n"))
    assert qrels == {"1": {"d1": 2.0, "d2": 0.0}, "2": {"d1": 1.0}}
    run = read_run(write(tmp_path / "r", "1 Q0 d2 1 0.5 sys\n1 Q0 d9 2 -1e-3 sys\n"))
    assert run == Run({"1": {"d2": 0.5, "d9": -0.001}}, "sys", "sys")


def test_readers_skip_comments_and_ignore_run_columns_past_the_sixth_as_trec_eval(tmp_path):
    qrels = read_qrels(write(tmp_path / "q", "# topic 1\n1 0 d1 2\n  # indented comment\n1 0 d2 -1\n"), negative="keep")
    assert qrels == {"1": {"d1": 2.0, "d2": -1.0}}
    run = read_run(write(tmp_path / "r", "# header\n1 Q0 d2 1 0.5 first more columns\n1 Q0 d9 2 0.1 last\n"))
    assert run == Run({"1": {"d2": 0.5, "d9": 0.1}}, "first", "last")
    with pytest.raises(ValueError, match="negative must be"):
        read_qrels(tmp_path / "q", negative="drop")


@pytest.mark.parametrize("reader", [read_qrels, read_run])
def test_a_byte_order_mark_is_not_part_of_the_first_qid(tmp_path, reader):
    text = "1 0 d1 1\n1 0 d2 0\n" if reader is read_qrels else "1 Q0 d1 1 5 t\n1 Q0 d2 2 4 t\n"
    plain = reader(write(tmp_path / "plain", text))
    (tmp_path / "bom").write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert reader(tmp_path / "bom") == plain


def test_a_negative_grade_is_judged_non_relevant_as_in_trec_eval(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")
    qrels = read_qrels(write(tmp_path / "q", "1 0 a -1\n1 0 b 1\n1 0 c 2\n1 0 x -2\n"))
    assert qrels == {"1": {"a": 0.0, "b": 1.0, "c": 2.0, "x": 0.0}}  # judged non-relevant: gain 0, not in R
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    (arrays,) = align(qrels, [Run(run, "t")])[1]
    raw = {"1": {"a": -1, "b": 1, "c": 2, "x": -2}}
    ref = pytrec_eval.RelevanceEvaluator(raw, {"ndcg", "map", "P_5"}).evaluate(run)["1"]
    for spec, name in (("ndcg", "ndcg"), ("map", "map"), ("p@5", "P_5")):
        ours = get_metric(spec, conventions="trec_eval").per_query(
            arrays.y, arrays.scores, arrays.ptr, docids=arrays.docids, retrieved=arrays.retrieved
        )
        assert ours[0] == pytest.approx(ref[name], abs=1e-12), spec


@pytest.mark.parametrize(
    "reader, text, fragments",
    [
        (read_qrels, "1 0 d1 1\n1 0 d2\n", [":2:", "4 columns"]),
        (read_qrels, "1 0 d1 high\n", [":1:", "grade", "'high'"]),
        (read_qrels, "1 0 d1 1\n1 0 d1 0\n", [":2:", "judged twice"]),
        (read_run, "1 Q0 d1 1 0.5\n", [":1:", "6 columns"]),
        (read_run, "1 Q0 d1 1 0.5 t\n1 Q0 d2 2 nan t\n", [":2:", "score", "'nan'"]),
        (read_run, "1 Q0 d1 1 1_0 t\n", [":1:", "score", "'1_0'"]),
        (read_qrels, "1 0 d1 1_0\n", [":1:", "grade", "'1_0'"]),
        (read_run, "1 Q0 d1 1 \u0663 t\n", [":1:", "score"]),  # an Arabic-Indic 3
        (read_run, "1 Q0 d1 1 0.5 t\n1 Q0 d1 2 0.4 t\n", [":2:", "listed twice"]),
    ],
)
def test_malformed_lines_are_named(tmp_path, reader, text, fragments):
    path = write(tmp_path / "f", text)
    with pytest.raises(DataFormatError) as info:
        reader(path)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert str(path) in str(info.value)


def test_run_lines_rank_by_score_then_docid_descending_and_read_back(tmp_path):
    q = ["b", "b", "b", "a", "a"]
    d = ["x", "z", "y", "x", "w"]
    s = [1.0, 2.0, 1.0, 0.1 + 0.2, -3.0]
    lines = list(run_lines(q, d, s, "tag1"))
    assert lines == [
        "b Q0 z 1 2.0 tag1",
        "b Q0 y 2 1.0 tag1",  # tied with x: docid descending, as trec_eval
        "b Q0 x 3 1.0 tag1",
        f"a Q0 x 1 {0.1 + 0.2!r} tag1",
        "a Q0 w 2 -3.0 tag1",
    ]
    path = write(tmp_path / "run", "\n".join(lines) + "\n")
    back = read_run(path)
    assert back.tag == "tag1" and back.scores["a"]["x"] == 0.1 + 0.2  # floats exactly
    with pytest.raises(ValueError, match="listed twice"):
        list(run_lines(["a", "a"], ["x", "x"], [1.0, 2.0], "t"))
    with pytest.raises(ValueError, match="run tag"):
        list(run_lines(["a"], ["x"], [1.0], "two words"))


def test_align_counts_unretrieved_judged_documents_like_trec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")
    rng = np.random.default_rng(0)
    qrels, run = {}, {}
    for q in range(40):
        judged = {f"d{j}": int(rng.integers(0, 3)) for j in range(int(rng.integers(1, 15)))}
        retrieved = [d for d in judged if rng.random() < 0.7] + [f"u{j}" for j in range(int(rng.integers(0, 5)))]
        qrels[str(q)] = judged
        if retrieved and q > 1:  # queries 0 and 1 (and any with nothing retrieved) are missing from the run
            run[str(q)] = {d: float(rng.integers(0, 4)) for d in retrieved}  # many ties
    measures = {"ndcg_cut_5": "ndcg@5", "ndcg": "ndcg", "map": "map", "map_cut_5": "map@5", "P_5": "p@5",
                "P_30": "p@30", "recip_rank": "rr", "recall_5": "recall@5", "recall_1000": "recall"}  # fmt: skip
    for mode, flag in (("both", False), ("qrels", True)):
        query_ids, (arrays,) = align(qrels, [Run(run, "t")], queries=mode)
        got = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut", "ndcg", "map", "map_cut", "P", "recip_rank",
                                                     "recall"}).evaluate(run)  # fmt: skip
        assert (len(query_ids) < 40) != flag
        for name, spec in measures.items():
            ours = get_metric(spec, conventions="trec_eval").per_query(
                arrays.y, arrays.scores, arrays.ptr, docids=arrays.docids, retrieved=arrays.retrieved
            )
            expected = [got[q][name] if q in got else 0.0 for q in query_ids]  # trec_eval -c: missing = 0
            np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12, err_msg=f"{name} {mode}")
    with pytest.raises(ValueError, match="no query"):
        align({"1": {"a": 1}}, [Run({"2": {"a": 1.0}}, "t")])


def test_docids_from_comments():
    comments = ["docid = GX1-2 inc = 0.5 prob = 0.1", "docid=GX3 inc = 1", "inc = 1 prob = 2"]
    assert list(docids_from_comments(comments[:2])) == ["GX1-2", "GX3"]
    assert list(docids_from_comments(comments[2:], "prob")) == ["2"]
    with pytest.raises(DataFormatError, match="row 3 .* no 'docid = <id>'"):
        docids_from_comments(comments, path="test.txt")
    with pytest.raises(DataFormatError, match="no '# docid = ...' comments"):
        docids_from_comments(None)
