"""TREC qrels and run files, and their alignment into the arrays the metrics take.

* qrels: ``qid iter docid grade`` (4 columns, whitespace separated; ``iter`` is ignored).
* run: ``qid Q0 docid rank score tag`` (6 columns; further columns are ignored, as trec_eval
  ignores them). As trec_eval does, the rank column is ignored: documents are ranked by
  score, equal scores by docid descending (``ties="docid"``, part of the ``trec_eval`` preset).
* Both: lines whose first non-blank character is ``#`` are comments, and blank lines are
  skipped, as trec_eval skips them. The files are read line by line (a run of any size
  streams: only the parsed values are kept).

Documents of a run that the qrels do not judge are non-relevant (grade 0); judged documents
a run did not retrieve count in R and in the ideal DCG (``retrieved=`` of
:meth:`ranklearn.metrics.Metric.per_query`), exactly as in trec_eval.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from os import PathLike

import numpy as np
from numpy.typing import ArrayLike

from ranklearn._text import not_text_reason, plain_float, strip_bom
from ranklearn.exceptions import DataFormatError

__all__ = ["Run", "TrecArrays", "align", "docids_from_comments", "read_qrels", "read_run", "run_lines"]


@dataclass(frozen=True)
class Run:
    """A TREC run: ``scores[qid][docid]`` and the tag of its first line."""

    scores: dict[str, dict[str, float]]
    tag: str
    #: the tag of the last line: trec_eval's ``runid``
    last_tag: str = ""


@dataclass(frozen=True)
class TrecArrays:
    """A run and the qrels as metric inputs (query ``q`` owns rows ``ptr[q]:ptr[q+1]``).

    Each query's first ``retrieved[q]`` rows are the run's documents; the others are
    judged documents it did not retrieve (their scores are 0 and never ranked). ``judged``
    (``judged=`` of the metrics, read by trec_eval's bpref, infAP and counts) is 1 for a
    judged document, 0 for a retrieved document the qrels do not list, -1 for one they give a
    negative grade (pooled, unjudged: its label is 0).
    """

    query_ids: list[str]
    ptr: np.ndarray
    y: np.ndarray
    scores: np.ndarray
    docids: np.ndarray
    retrieved: np.ndarray
    judged: np.ndarray


def _lines(path: str | PathLike[str]) -> Iterator[tuple[int, list[str]]]:
    """Numbered non-blank, non-comment lines split on blanks; ``-`` reads standard input."""
    with contextlib.nullcontext(sys.stdin.buffer) if str(path) == "-" else open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if number == 1:
                reason = not_text_reason(raw)
                if reason is not None:
                    raise DataFormatError(reason, path=path)
                raw = strip_bom(raw)
            try:
                fields = raw.decode("utf-8").split()
            except UnicodeDecodeError:
                raise DataFormatError("not UTF-8 text", path=path, line=number) from None
            if fields and not fields[0].startswith("#"):
                yield number, fields


def _number(text: str, what: str, path: str | PathLike[str], line: int) -> float:
    value = plain_float(text)
    if not math.isfinite(value):
        raise DataFormatError(f"{what} must be a finite number", path=path, line=line, token=text)
    return value


def read_qrels(path: str | PathLike[str], *, negative: str = "zero") -> dict[str, dict[str, float]]:
    """Read a TREC qrels file: ``qid iter docid grade`` per line.

    Parameters
    ----------
    negative : {"zero", "keep"}
        A negative grade (TREC's -1 or -2 for junk or spam pages, or a pooled document left
        unjudged): read as 0, a judged non-relevant document, as trec_eval's ranked measures
        and ranx score it; or kept as written (``ranklearn trec-eval``: trec_eval's bpref,
        infAP and counts treat such a document as pooled but unjudged).

    Returns
    -------
    dict
        ``qrels[qid][docid] = grade``, queries in file order.

    Raises
    ------
    DataFormatError
        Naming the line: not 4 columns, a grade that is not a finite number, or a document
        judged twice for the same query.
    """
    if negative not in ("zero", "keep"):
        raise ValueError(f"negative must be 'zero' or 'keep', got {negative!r}")
    floor = 0.0 if negative == "zero" else -math.inf
    qrels: dict[str, dict[str, float]] = {}
    for line, fields in _lines(path):
        if len(fields) != 4:
            raise DataFormatError(
                f"expected 4 columns 'qid iter docid grade', got {len(fields)}", path=path, line=line
            )
        qid, _, docid, grade_text = fields
        grade = max(_number(grade_text, "grade", path, line), floor)
        judged = qrels.setdefault(qid, {})
        if docid in judged:
            raise DataFormatError(f"document {docid!r} is judged twice for query {qid!r}", path=path, line=line)
        judged[docid] = grade
    return qrels


def read_run(path: str | PathLike[str]) -> Run:
    """Read a TREC run file: ``qid Q0 docid rank score tag`` per line (more columns are ignored).

    Raises
    ------
    DataFormatError
        Naming the line: fewer than 6 columns, a score that is not a finite number, or a
        document listed twice for the same query.
    """
    scores: dict[str, dict[str, float]] = {}
    tag = tag_here = ""
    for line, fields in _lines(path):
        if len(fields) < 6:
            raise DataFormatError(
                f"expected 6 columns 'qid Q0 docid rank score tag', got {len(fields)}", path=path, line=line
            )
        qid, _, docid, _, score_text, tag_here = fields[:6]
        tag = tag or tag_here
        ranked = scores.setdefault(qid, {})
        if docid in ranked:
            raise DataFormatError(f"document {docid!r} is listed twice for query {qid!r}", path=path, line=line)
        ranked[docid] = _number(score_text, "score", path, line)
    return Run(scores, tag, tag_here)


def align(
    qrels: dict[str, dict[str, float]],
    runs: Sequence[Run],
    *,
    queries: str = "both",
) -> tuple[list[str], list[TrecArrays]]:
    """Put runs and qrels into metric arrays, one :class:`TrecArrays` per run, same queries.

    Parameters
    ----------
    qrels : dict
        From :func:`read_qrels`.
    runs : sequence of Run
        From :func:`read_run`.
    queries : {"both", "qrels"}
        ``"both"``: the judged queries every run retrieved for. For one run that is
        trec_eval's default; for several it is their intersection, what a paired comparison
        needs, while trec_eval scores each run on its own queries (align the runs one at a
        time, or use ``"qrels"`` and leave out each run's empty rankings, ``retrieved == 0``,
        as ``ranklearn evaluate`` does). ``"qrels"``: every judged query, a query missing from
        a run counting as an empty ranking (trec_eval ``-c``).

    Returns
    -------
    query_ids : list of str
        The evaluated queries, in qrels order.
    arrays : list of TrecArrays

    Raises
    ------
    ValueError
        No query is left to evaluate, or ``queries`` is unknown.
    """
    if queries not in ("both", "qrels"):
        raise ValueError(f"queries must be 'both' or 'qrels', got {queries!r}")
    query_ids = [q for q in qrels if queries == "qrels" or all(q in run.scores for run in runs)]
    if not query_ids:
        raise ValueError("no query is both judged in the qrels and retrieved by the run(s)")
    return query_ids, [_arrays(qrels, run, query_ids) for run in runs]


def _arrays(qrels: dict[str, dict[str, float]], run: Run, query_ids: list[str]) -> TrecArrays:
    docids: list[str] = []
    labels: list[float] = []
    scores: list[float] = []
    sizes, retrieved, listed = [], [], []
    for qid in query_ids:
        judged = qrels[qid]
        ranked = run.scores.get(qid, {})
        missing = [d for d in judged if d not in ranked]
        docids += list(ranked) + missing
        labels += [max(judged.get(d, 0.0), 0.0) for d in ranked] + [max(judged[d], 0.0) for d in missing]
        scores += list(ranked.values()) + [0.0] * len(missing)
        listed += [_pooled(judged.get(d)) for d in ranked] + [_pooled(judged[d]) for d in missing]
        retrieved.append(len(ranked))
        sizes.append(len(ranked) + len(missing))
    ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    return TrecArrays(
        list(query_ids),
        ptr,
        np.asarray(labels, dtype=np.float64),
        np.asarray(scores, dtype=np.float64),
        np.asarray(docids, dtype=object),
        np.asarray(retrieved, dtype=np.int64),
        np.asarray(listed, dtype=np.int8),
    )


def _pooled(grade: float | None) -> int:
    """``TrecArrays.judged`` of a document: 1 judged, 0 absent from the qrels, -1 negative grade."""
    return 0 if grade is None else (1 if grade >= 0 else -1)


_TAG = re.compile(r"^\S+$")


def run_lines(query_ids: ArrayLike, docids: ArrayLike, scores: ArrayLike, tag: str) -> Iterator[str]:
    """Lines of a TREC run for per-row query ids, document ids and scores.

    Each query's documents are written by rank: score descending, equal scores by docid
    descending (the order trec_eval evaluates them in), ranks from 1; queries in order of
    first appearance. Scores are written with ``repr`` so that they read back exactly.

    Raises
    ------
    ValueError
        Lengths that differ, an empty or blank-containing tag or id, or a document listed
        twice for a query.
    """
    q = np.asarray(query_ids).ravel().astype(str)
    d = np.asarray(docids, dtype=object).ravel().astype(str)
    s = np.asarray(scores, dtype=np.float64).ravel()
    if not q.shape == d.shape == s.shape:
        raise ValueError(f"query ids, docids and scores lengths differ: {q.size}, {d.size}, {s.size}")
    if not _TAG.match(tag):
        raise ValueError(f"run tag must be one word without blanks, got {tag!r}")
    for name, values in (("query id", q), ("docid", d)):
        bad = [v for v in values if not _TAG.match(v)]
        if bad:
            raise ValueError(f"a {name} must be one word without blanks, got {bad[0]!r}")
    pairs = np.char.add(np.char.add(q, "\t"), d)
    unique_pairs, counts = np.unique(pairs, return_counts=True)
    if counts.size and counts.max() > 1:
        qid, docid = str(unique_pairs[np.argmax(counts)]).split("\t")
        raise ValueError(f"document {docid!r} is listed twice for query {qid!r}")
    first_seen, query_code = np.unique(q, return_index=True, return_inverse=True)[1:]
    query_rank = np.argsort(np.argsort(first_seen))[query_code.ravel()]
    doc_code = np.unique(d, return_inverse=True)[1].ravel()
    order = np.lexsort((-doc_code, -s, query_rank))
    rank, previous = 0, None
    for i in order:
        rank = rank + 1 if q[i] == previous else 1
        previous = q[i]
        yield f"{q[i]} Q0 {d[i]} {rank} {float(s[i])!r} {tag}"


def docids_from_comments(
    comments: ArrayLike | None,
    field: str = "docid",
    *,
    path: str | PathLike[str] | None = None,
    lines: ArrayLike | None = None,
) -> np.ndarray:
    """Document ids from LETOR row comments such as ``docid = GX004-93-7097963 inc = ...``.

    Parameters
    ----------
    comments : array-like of str or None
        ``RankingDataset.comments``.
    field : str
        Name of the comment field holding the id (``<field> = <id>`` or ``<field>:<id>``).
    path : path, optional
        The data file, named in errors.
    lines : array-like of int, optional
        ``RankingDataset.lines``: the file line of each row, named in errors.

    Raises
    ------
    DataFormatError
        No comments at all, or a row whose comment lacks the field (naming the row).
    """
    if comments is None:
        raise DataFormatError(f"the rows have no '# {field} = ...' comments to take document ids from", path=path)
    pattern = re.compile(rf"(?:^|\s){re.escape(field)}\s*[=:]\s*(\S+)")
    out = np.empty(len(comments), dtype=object)
    for row, text in enumerate(comments):
        match = pattern.search(text) if isinstance(text, str) else None
        if match is None:
            if lines is not None:
                raise DataFormatError(f"no '{field} = <id>' in this row's comment", path=path, line=int(lines[row]))
            raise DataFormatError(
                f"row {row + 1} (counting data rows from 1) has no '{field} = <id>' in its comment", path=path
            )
        out[row] = match.group(1)
    return out
