"""trec_eval's per-query judgement lists (``form_res_rels.c``): a run's documents in rank order
as the grades the qrels give them.

A query's retrieved documents are ranked by score, descending, equal scores by document id
descending (byte order, as C's ``strcmp``); ``max_docs`` (``-M``) keeps the first ones and
``judged_only`` (``-J``) then drops the documents without a judgement. Each becomes its grade,
-1 (:data:`~ranklearn.metrics.trec.counts.NONPOOL`) when the qrels do not list it, or -2
(:data:`~ranklearn.metrics.trec.counts.UNJUDGED`) when they give it a negative grade.
``levels[q, g]`` counts the query's judged documents (retrieved or not) with grade g >= 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ranklearn.metrics.trec.counts import NONPOOL, UNJUDGED


@dataclass(frozen=True)
class JudgedRankings:
    """The judgement lists of the evaluated queries (query ``q``: ``rels[ptr[q]:ptr[q+1]]``)."""

    query_ids: list[str]
    rels: np.ndarray
    ptr: np.ndarray
    levels: np.ndarray


def rank_order(docids: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Positions in trec_eval's order: score descending, equal scores by docid descending."""
    return np.lexsort((docids, scores))[::-1]


def judged_rankings(
    qrels: Mapping[str, Mapping[str, float]],
    run: Mapping[str, Mapping[str, float]],
    query_ids: Iterable[str],
    *,
    max_docs: int | None = None,
    judged_only: bool = False,
) -> JudgedRankings:
    """The judgement lists of ``query_ids`` (each judged in ``qrels``; a query missing from
    ``run`` has an empty ranking), with grades as integers (trec_eval reads them with ``atol``)."""
    ids = list(query_ids)
    chunks: list[np.ndarray] = []
    tops = [int(max(grades.values(), default=0)) for grades in (qrels[q] for q in ids)]
    levels = np.zeros((len(ids), max(max(tops, default=0), 0) + 1), dtype=np.int64)
    for q, qid in enumerate(ids):
        judged = qrels[qid]
        grades = np.fromiter((int(g) for g in judged.values()), dtype=np.int64, count=len(judged))
        np.add.at(levels[q], grades[grades >= 0], 1)
        ranked = run.get(qid, {})
        docids = np.array(list(ranked), dtype=str)
        scores = np.fromiter(ranked.values(), dtype=np.float64, count=len(ranked))
        order = rank_order(docids, scores)[:max_docs]
        rels = np.fromiter((_grade(judged.get(d)) for d in docids[order]), dtype=np.int64, count=order.size)
        chunks.append(rels[rels >= 0] if judged_only else rels)
    ptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum([c.size for c in chunks], out=ptr[1:])
    rels = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    return JudgedRankings(ids, rels, ptr, levels)


def _grade(grade: float | None) -> int:
    if grade is None:
        return NONPOOL
    level = int(grade)  # trec_eval reads grades with atol: 2.7 is 2, -0.5 is 0
    return UNJUDGED if level < 0 else level
