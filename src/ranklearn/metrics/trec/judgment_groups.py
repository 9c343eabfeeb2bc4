"""Measures averaged over judgment groups (``-R qrels_jg``): ``map_avgjg``, ``P_avgjg``,
``Rprec_mult_avgjg``.

A ``qrels_jg`` file holds several complete sets of judgements of a query, one per judgment
group (user): the iter column names the group. Each measure is the qrels measure of the same
name (:mod:`.average_precision` map, :mod:`.precision` P@k and Rprec_mult) computed against
each group's judgements on the same ranking, then averaged over the groups of the query:

    map_avgjg = (1/|JG|) sum over groups g of AP_g, and likewise for P_k and Rprec_mult_x.

The ranking, ``-M``, ``-J`` and ``-l`` are trec_eval's (``form_res_rels_jg.c``, ``m_*_avgjg.c``
of trec_eval 9.0.8): scores descending, equal scores by docno descending. References: C.
Buckley, trec_eval documentation (``-R qrels_jg``); average precision and precision as in
C. Buckley and E. Voorhees, "Retrieval System Evaluation", MIT Press 2005.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ranklearn.metrics.trec.counts import NONPOOL, UNJUDGED
from ranklearn.metrics.trec.measures import BY_NAME, Request, evaluate_rels


def _base(request: Request) -> Request:
    """The qrels measure that ``request`` averages (``P_avgjg_5`` is ``P_5`` per group)."""
    spec = BY_NAME[request.spec.name.removesuffix("_avgjg")]
    return Request(spec, request.values, request.columns)


def avgjg_values(
    ranked: Sequence[list[str]],
    groups: list[dict[str, dict[str, int]]],
    requests: list[Request],
    *,
    relevance_level: int = 1,
    judged_only: bool = False,
) -> np.ndarray:
    """Values of the ``*_avgjg`` requests for every query: shape (n_queries, their columns).

    Parameters
    ----------
    ranked : sequence of list of str
        Each query's retrieved docnos in trec_eval's order (already cut by ``-M``).
    groups : list of dict
        Each query's judgment groups: ``{jg: {docno: grade}}``.
    judged_only : bool
        trec_eval's ``-J``: documents without a grade >= 0 in a group leave its ranking.
    """
    rels: list[np.ndarray] = []
    levels: list[np.ndarray] = []
    owner: list[int] = []
    top = max((g for query in groups for group in query.values() for g in group.values()), default=0)
    for q, (docnos, query) in enumerate(zip(ranked, groups)):
        for jg in sorted(query, key=str.encode):
            judged = query[jg]
            # absent: not pooled; a negative grade: pooled, not judged
            r = np.array([judged.get(d, NONPOOL) for d in docnos], dtype=np.int64)
            r[np.array([d in judged for d in docnos], dtype=bool) & (r < 0)] = UNJUDGED
            if judged_only:
                r = r[r >= 0]
            grades = np.array([g for g in judged.values() if g >= 0], dtype=np.int64)
            levels.append(np.bincount(grades, minlength=max(top, 0) + 1))
            rels.append(r)
            owner.append(q)
    ptr = np.zeros(len(rels) + 1, dtype=np.int64)
    np.cumsum([r.size for r in rels], out=ptr[1:])
    flat = np.concatenate(rels) if rels else np.zeros(0, dtype=np.int64)
    per_group = evaluate_rels(flat, ptr, np.array(levels).reshape(len(rels), -1), [_base(r) for r in requests],
                              relevance_level=relevance_level)  # fmt: skip
    out = np.zeros((len(ranked), per_group.shape[1]))
    np.add.at(out, np.array(owner, dtype=np.int64), per_group)
    return out / np.maximum(np.bincount(owner, minlength=len(ranked)), 1)[:, None]
