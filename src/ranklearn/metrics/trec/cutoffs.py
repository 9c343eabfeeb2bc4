"""Values at rank cutoffs, in one walk down a query's ranking: ``P_k``, ``relative_P_k``,
``success_k``, ``recall_k``, ``map_cut_k`` and ``unj_k``.

With hits(k) the relevant documents (grade >= rl) among the top k ranks and R the judged
relevant documents (formulas and papers in :mod:`.precision`, :mod:`.recall`,
:mod:`.average_precision`):

* P@k = hits(k) / k; relative_P@k = hits(k) / min(k, R); success@k = [hits(k) > 0];
* recall@k = hits(k) / R; map_cut@k = (1/R) sum_{i<=k, rel_i} hits(i) / i;
* unj@k (trec_eval 10) = unjudged documents (absent from the qrels, or a negative grade) in
  the top k / k: a diagnostic of how far the other values can be trusted (cf. Buckley &
  Voorhees, "Retrieval Evaluation with Incomplete Information", SIGIR 2004).

A cutoff beyond the ranking takes the whole ranking's counts (P and unj still divide by k).
relative_P, recall and map_cut are 0 when R = 0.
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel

PRECISION, RELATIVE_P, SUCCESS, RECALL, AP, UNJUDGED_SHARE = range(6)


@kernel(cache=True)
def at_cutoffs(rels: np.ndarray, n_rel: int, rl: int, cutoffs: np.ndarray, kind: int, out: np.ndarray) -> None:
    """The ``kind`` value at each increasing cutoff k into ``out``."""
    if n_rel == 0 and (kind == RELATIVE_P or kind == RECALL or kind == AP):
        return
    hits = 0
    ap_sum = 0.0
    c = 0
    i = 0
    while i < rels.shape[0] and c < cutoffs.shape[0]:
        if i == cutoffs[c]:
            out[c] = _value(hits, ap_sum, i, n_rel, kind)
            c += 1
            continue
        if (rels[i] < 0) if kind == UNJUDGED_SHARE else (rels[i] >= rl):
            hits += 1
            ap_sum += hits / (i + 1.0)
        i += 1
    while c < cutoffs.shape[0]:
        out[c] = _value(hits, ap_sum, cutoffs[c], n_rel, kind)
        c += 1


@kernel(cache=True, inline="always")
def _value(hits: int, ap_sum: float, k: int, n_rel: int, kind: int) -> float:
    if kind == SUCCESS:
        return 1.0 if hits else 0.0
    if kind == RELATIVE_P:
        return hits / min(k, n_rel)
    if kind == RECALL:
        return hits / n_rel
    if kind == AP:
        return ap_sum / n_rel
    return hits / k
