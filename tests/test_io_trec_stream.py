"""The streaming TREC reader: block boundaries, numbers, comments and errors naming the line."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.exceptions import DataFormatError
from ranklearn.io import trec_stream
from ranklearn.io.trec_stream import read_judged_rankings


def files(tmp_path, qrels, run):
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    return tmp_path / "q", tmp_path / "r"


def test_blocks_of_any_size_give_the_same_lists(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    qrels = "".join(f"{q} 0 d{d} {rng.integers(-1, 3)}\n" for q in range(5) for d in range(0, 40, 3))
    run = "# comment\n" + "".join(f"{q} Q0 d{d} 1 {rng.integers(0, 4) / 4} t{q}\n" for q in range(5) for d in range(30))
    q, r = files(tmp_path, qrels, run)
    whole, runid, _ = read_judged_rankings(q, r)
    monkeypatch.setattr(trec_stream, "BLOCK", 7)  # lines cut across reads
    cut, _, _ = read_judged_rankings(q, r)
    assert runid == "t4" and whole.query_ids == cut.query_ids == [str(i) for i in range(5)]
    np.testing.assert_array_equal(whole.rels, cut.rels)
    np.testing.assert_array_equal(whole.levels, cut.levels)
    # query 0: scores tie, so docid descending within each score; d0 (grade in qrels) present
    first = whole.rels[whole.ptr[0] : whole.ptr[1]]
    assert first.size == 30 and set(first) <= {-2, -1, 0, 1, 2}


@pytest.mark.parametrize("text", ["1.5", "-3", "1e-3", "0.1", "12345678901234567890", "1e300", "-0.000000000000000000000001"])
def test_scores_are_read_exactly(tmp_path, text):
    q, r = files(tmp_path, "1 0 a 1\n1 0 b 0\n", f"1 Q0 a 1 {text} t\n1 Q0 b 2 {float(text)!r} t\n")
    assert trec_stream._read(r, run=True).values.tolist() == [float(text)] * 2


@pytest.mark.parametrize(
    "qrels, run, fragments",
    [
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n\n1 Q0 b 1\n", ["r:3:", "6 columns", "got 4"]),
        ("1 0 a 1\n", "1 Q0 a 1 nan t\n", ["r:1:", "score must be a finite number", "nan"]),
        ("1 0 a 1\n", "1 Q0 a 1 1e999 t\n", ["r:1:", "finite", "1e999"]),
        ("1 0 a 1\n", "1 Q0 a 1 1..2 t\n", ["r:1:", "finite", "1..2"]),
        ("# c\n1 0 a x\n", "1 Q0 a 1 1 t\n", ["q:2:", "grade must be a finite number"]),
        ("1 0 a 1 2\n", "1 Q0 a 1 1 t\n", ["q:1:", "4 columns"]),
    ],
)
def test_errors_name_the_line(tmp_path, qrels, run, fragments):
    q, r = files(tmp_path, qrels, run)
    with pytest.raises(DataFormatError) as info:
        read_judged_rankings(q, r)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))
