"""trec_eval's prefs, qrels_prefs and qrels_jg judgement files: what is read, and errors by line."""

from __future__ import annotations

import pytest

from ranklearn.exceptions import DataFormatError
from ranklearn.io.trec_prefs import read_prefs, read_qrels_jg


def write(path, text):
    path.write_text(text)
    return path


def test_read_prefs_and_qrels_prefs(tmp_path):
    prefs = read_prefs(write(tmp_path / "p", "# users\n1 u1 s1 a 2.5\n1 u1 s2 b 0\n\n2 u2 s1 a 1e0\n"))
    assert prefs == {"1": [("u1", "s1", "a", 2.5), ("u1", "s2", "b", 0.0)], "2": [("u2", "s1", "a", 1.0)]}
    # a qrels file: the iter column is the judgment group, one sub-group "0"
    assert read_prefs(write(tmp_path / "q", "1 0 a 2\n1 7 b 0.1\n"), rel_format="qrels_prefs") == {
        "1": [("0", "0", "a", 2.0), ("7", "0", "b", pytest.approx(0.1, abs=1e-8))]
    }
    # rel_level is a C float, as trec_eval keeps it: 0.1 is not the double 0.1
    assert read_prefs(tmp_path / "q", rel_format="qrels_prefs")["1"][1][3] != 0.1


def test_read_qrels_jg(tmp_path):
    groups = read_qrels_jg(write(tmp_path / "j", "1 u1 a 2\n1 u2 a 0\n1 u1 b -1\n1 u1 c 1.9\n"))
    assert groups == {"1": {"u1": {"a": 2, "b": -1, "c": 1}, "u2": {"a": 0}}}  # grades as C's atol


@pytest.mark.parametrize(
    "reader, text, fragments",
    [
        (read_prefs, "1 u s a 1\n1 u a 1\n", ["p:2:", "5 columns", "got 4"]),
        (read_prefs, "1 u s a high\n", ["p:1:", "rel_level", "'high'"]),
        (read_prefs, "1 u s a nan\n", ["p:1:", "finite"]),
        (read_qrels_jg, "1 u a 1 x\n", ["p:1:", "4 columns"]),
        (read_qrels_jg, "1 u a 1\n1 v a 1\n1 u a 0\n", ["p:3:", "'a'", "twice", "judgment group 'u'"]),
    ],
)
def test_errors_name_the_line(tmp_path, reader, text, fragments):
    with pytest.raises(DataFormatError) as info:
        reader(write(tmp_path / "p", text))
    for fragment in fragments:
        assert fragment in str(info.value)


def test_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="rel_format must be"):
        read_prefs(write(tmp_path / "p", ""), rel_format="qrels")
