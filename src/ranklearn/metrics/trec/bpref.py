"""Binary preference ``bpref`` (and ``gm_bpref``) and inferred AP ``infAP``: measures for
incomplete judgements, which skip retrieved documents that were not judged.

With R the judged relevant documents, N the judged non-relevant ones (grade below rl),
and n_r the judged non-relevant documents ranked above relevant document r:

* bpref = (1/R) sum over retrieved relevant r of (1 - min(n_r, R) / min(N, R))
  (a term is 1 when n_r = 0). Buckley & Voorhees, "Retrieval Evaluation with Incomplete
  Information", SIGIR 2004.
* gm_bpref: log(max(bpref, 1e-5)) per query, averaged as exp(mean).
* infAP = (1/R) sum over retrieved relevant documents at rank k of
  1/k + ((k-1)/k) (|d100 above| / (k-1)) (rel_above + eps) / (rel_above + nonrel_above + 2 eps),
  where the documents above that are in the pool (judged or pooled-but-unjudged) stand for
  the sampled pool and eps = 1e-5. Yilmaz & Aslam, "Estimating Average Precision with
  Incomplete and Imperfect Judgments", CIKM 2006.
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel
from ranklearn.metrics.trec.average_precision import MIN_GEO_MEAN
from ranklearn.metrics.trec.counts import NONPOOL, UNJUDGED

INFAP_EPSILON = 0.00001


@kernel(cache=True)
def bpref(rels: np.ndarray, levels: np.ndarray, n_rel: int, rl: int) -> float:
    """bpref of one query (0 when R = 0)."""
    n_nonrel = 0
    for grade in range(min(max(rl, 0), levels.shape[0])):
        n_nonrel += levels[grade]
    nonrel_above = 0
    total = 0.0
    for r in rels:
        if r == NONPOOL or r == UNJUDGED:
            continue
        if 0 <= r < rl:
            nonrel_above += 1
        elif nonrel_above > 0:
            total += 1.0 - min(nonrel_above, n_rel) / min(n_nonrel, n_rel)
        else:
            total += 1.0
    return total / n_rel if n_rel else total


@kernel(cache=True)
def log_bpref(rels: np.ndarray, levels: np.ndarray, n_rel: int, rl: int) -> float:
    """log(max(bpref, 1e-5)): ``gm_bpref``'s per-query value."""
    return np.log(max(bpref(rels, levels, n_rel, rl), MIN_GEO_MEAN))


@kernel(cache=True)
def inferred_ap(rels: np.ndarray, n_rel: int, rl: int) -> float:
    """infAP of one query (0 when R = 0)."""
    nonrel_above = 0
    rel_above = 0
    unjudged_above = 0
    total = 0.0
    for j in range(rels.shape[0]):
        r = rels[j]
        if r == NONPOOL:
            continue
        if r == UNJUDGED:
            unjudged_above += 1
            continue
        if 0 <= r < rl:
            nonrel_above += 1
            continue
        rel_above += 1
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                (rel_above - 1 + nonrel_above + unjudged_above) / fj
            ) * ((rel_above - 1 + INFAP_EPSILON) / (rel_above - 1 + nonrel_above + 2 * INFAP_EPSILON))
    return total / n_rel if n_rel else total
