"""Unjudged fraction ``unj_k`` (trec_eval 10): the share of the top k ranks (divided by k)
holding a document the qrels do not judge (absent, or present with a negative grade).
A diagnostic for the reliability of the other measures (cf. Buckley & Voorhees, "Retrieval
Evaluation with Incomplete Information", SIGIR 2004)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def unjudged_at(rels: np.ndarray, cutoffs: np.ndarray, out: np.ndarray) -> None:
    """Unjudged documents in the top k / k for each increasing cutoff k."""
    unjudged = 0
    c = 0
    i = 0
    while i < rels.shape[0] and c < cutoffs.shape[0]:
        if i == cutoffs[c]:
            out[c] = unjudged / i
            c += 1
            continue
        if rels[i] < 0:
            unjudged += 1
        i += 1
    while c < cutoffs.shape[0]:
        out[c] = unjudged / cutoffs[c]
        c += 1
