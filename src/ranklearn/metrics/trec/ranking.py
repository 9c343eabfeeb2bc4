"""trec_eval's per-query judgement lists (``form_res_rels.c``): a run's documents in rank order
as the grades the qrels give them.

A query's retrieved documents are ranked by score, descending, equal scores by document id
descending (byte order, as C's ``strcmp``); ``-M`` keeps the first ones and ``-J`` then drops
the documents without a judgement. Each becomes its grade, -1
(:data:`~ranklearn.metrics.trec.counts.NONPOOL`) when the qrels do not list it, or -2
(:data:`~ranklearn.metrics.trec.counts.UNJUDGED`) when they give it a negative grade.
``levels[q, g]`` counts the query's judged documents (retrieved or not) with grade g >= 0.
:func:`ranklearn.io.trec_stream.read_judged_rankings` builds them from files;
:class:`ranklearn.metrics.trec.metric.TrecMetric` from metric arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np



@dataclass(frozen=True)
class JudgedRankings:
    """The judgement lists of the evaluated queries (query ``q``: ``rels[ptr[q]:ptr[q+1]]``)."""

    query_ids: list[str]
    rels: np.ndarray
    ptr: np.ndarray
    levels: np.ndarray
