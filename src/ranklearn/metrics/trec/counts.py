"""Counts per query: ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``.

All four take a query's ranked judgements ``rels`` (trec_eval's ``results_rel_list``: the
grade of each retrieved document in rank order, -1 for a document the qrels do not list,
-2 for one they list with a negative grade, i.e. pooled but not judged), the count of judged
documents at each grade ``levels`` and the relevance level ``rl`` (trec_eval's ``-l``).

* num_ret = |retrieved|; num_rel = R = judged documents with grade >= rl;
* num_rel_ret = retrieved documents with grade >= rl;
* num_nonrel_judged_ret = retrieved judged documents with grade < rl.

Reference: C. Buckley and E. Voorhees, "Retrieval System Evaluation", in TREC: Experiment and
Evaluation in Information Retrieval, MIT Press 2005 (trec_eval's counts).
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel

NONPOOL = -1  #: retrieved, absent from the qrels
UNJUDGED = -2  #: retrieved, in the qrels with a negative grade (pooled, not judged)


@kernel(cache=True)
def num_rel(levels: np.ndarray, rl: int) -> int:
    """R: judged documents whose grade is at least ``rl``."""
    total = 0
    for grade in range(max(rl, 0), levels.shape[0]):
        total += levels[grade]
    return total


@kernel(cache=True)
def num_rel_ret(rels: np.ndarray, rl: int) -> int:
    """Retrieved judged documents whose grade is at least ``rl``."""
    total = 0
    for r in rels:
        if r >= 0 and r >= rl:
            total += 1
    return total


@kernel(cache=True)
def num_nonrel_judged_ret(rels: np.ndarray, rl: int) -> int:
    """Retrieved judged documents whose grade is below ``rl``."""
    total = 0
    for r in rels:
        if 0 <= r < rl:
            total += 1
    return total
