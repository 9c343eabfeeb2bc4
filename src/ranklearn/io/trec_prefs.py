"""trec_eval's other judgement formats (its ``-R``): ``prefs``, ``qrels_prefs`` and ``qrels_jg``.

* ``prefs``: ``qid jg jsg docno rel_level`` lines. Within a judgment sub-group (jsg) of a
  judgment group (jg, one user), a document with a higher rel_level is preferred to one with a
  lower level; rel_level 0 means non-relevant.
* ``qrels_prefs``: a qrels file ``qid iter docno rel_level`` read as prefs, the iter column
  being the judgment group and every line in one sub-group ``"0"``.
* ``qrels_jg``: a qrels file ``qid jg docno grade`` whose iter column names a judgment group:
  each group is a complete set of judgements of the query (grades read as integers, as C's
  ``atol``; negative: pooled but unjudged).

The rules are trec_eval 9.0.8's (``get_prefs.c``, ``get_qrels_prefs.c``, ``get_qrels_jg.c``);
as ranklearn's qrels reader, blank lines and ``#`` comment lines are skipped.
"""

from __future__ import annotations

import math
from os import PathLike

import numpy as np

from ranklearn.exceptions import DataFormatError
from ranklearn.io.trec import _lines

__all__ = ["FORMATS", "PrefLine", "read_prefs", "read_qrels_jg"]

#: trec_eval's ``-R`` formats besides ``qrels``.
FORMATS = ("prefs", "qrels_prefs", "qrels_jg")

#: One preference line: (judgment group, sub-group, docno, rel_level as C's float).
PrefLine = tuple[str, str, str, float]


def _float32(text: str, what: str, path: str | PathLike[str], line: int) -> float:
    from ranklearn._text import plain_float

    value = plain_float(text)
    if not math.isfinite(value):
        raise DataFormatError(f"{what} must be a finite number", path=path, line=line, token=text)
    return float(np.float32(value))  # trec_eval keeps rel_level as a C float


def read_prefs(path: str | PathLike[str], *, rel_format: str = "prefs") -> dict[str, list[PrefLine]]:
    """Preference judgements of every query: ``{qid: [(jg, jsg, docno, rel_level), ...]}``.

    Parameters
    ----------
    rel_format : {"prefs", "qrels_prefs"}
        5 columns ``qid jg jsg docno rel_level``, or 4 columns ``qid jg docno rel_level``
        (a qrels file: sub-group ``"0"``).

    Raises
    ------
    DataFormatError
        Naming the line: a wrong number of columns or a rel_level that is not a finite number.
    """
    if rel_format not in ("prefs", "qrels_prefs"):
        raise ValueError(f"rel_format must be 'prefs' or 'qrels_prefs', got {rel_format!r}")
    width, layout = (5, "qid jg jsg docno rel_level") if rel_format == "prefs" else (4, "qid jg docno rel_level")
    prefs: dict[str, list[PrefLine]] = {}
    for line, fields in _lines(path):
        if len(fields) != width:
            raise DataFormatError(f"expected {width} columns '{layout}', got {len(fields)}", path=path, line=line)
        qid, jg = fields[0], fields[1]
        jsg = fields[2] if width == 5 else "0"
        prefs.setdefault(qid, []).append((jg, jsg, fields[-2], _float32(fields[-1], "rel_level", path, line)))
    return prefs


def read_qrels_jg(path: str | PathLike[str]) -> dict[str, dict[str, dict[str, int]]]:
    """Judgements per judgment group: ``{qid: {jg: {docno: grade}}}`` from ``qid jg docno grade`` lines.

    Raises
    ------
    DataFormatError
        Naming the line: not 4 columns, a grade that is not a number, or a document judged
        twice in the same group of a query.
    """
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    for line, fields in _lines(path):
        if len(fields) != 4:
            raise DataFormatError(f"expected 4 columns 'qid jg docno grade', got {len(fields)}", path=path, line=line)
        qid, jg, docno, grade = fields
        group = qrels.setdefault(qid, {}).setdefault(jg, {})
        if docno in group:
            raise DataFormatError(
                f"document {docno!r} is judged twice in judgment group {jg!r} of query {qid!r}", path=path, line=line
            )
        group[docno] = int(_float32(grade, "grade", path, line))  # C's atol: the integer part
    return qrels
