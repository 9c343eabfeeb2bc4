"""Rank-biased precision ``rbp`` and its residual ``rbp_resid`` (trec_eval 10).

RBP = (1 - p) sum_i gain(rel_i) p^(i-1), with persistence p (default 0.9; ``-m rbp.p=0.95``)
and gains scaled into [0, 1]: the grade's gain (the grade, or a ``grade=gain`` pair) mapped by
(g - min) / (max - min) over the gain table when some gain lies outside [0, 1].
rbp_resid = p^n + (1 - p) sum over unjudged retrieved ranks i of p^(i-1): the most RBP could
still rise if every unjudged retrieved document had the top gain and the ranking went on
with top gains (0 when no retrieved document is unjudged).

Reference: A. Moffat and J. Zobel, "Rank-Biased Precision for Measurement of Retrieval
Effectiveness", ACM TOIS 27(1), 2008. trec_eval 10 leaves the minimum and maximum of its
scaling uninitialized; here they are those of the gain table.
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel
from ranklearn.metrics.trec.gains import gain_table, gain_of


@kernel(cache=True)
def rbp(rels: np.ndarray, levels: np.ndarray, pair_grades: np.ndarray, pair_gains: np.ndarray, p: float) -> float:
    """RBP of one query."""
    grades, gains, _ = gain_table(levels, pair_grades, pair_gains)
    if gains.shape[0] and (gains.min() < 0.0 or gains.max() > 1.0):
        low, high = gains.min(), gains.max()
        gains = (gains - low) / (high - low)
    total = 0.0
    weight = 1.0
    for r in rels:
        gain = gain_of(r, grades, gains)
        if gain != 0:
            total += gain * weight
        weight *= p
    return (1.0 - p) * total


@kernel(cache=True)
def rbp_residual(rels: np.ndarray, p: float) -> float:
    """The residual of RBP of one query."""
    total = 0.0
    weight = 1.0
    unjudged = 0
    for r in rels:
        if r < 0:
            unjudged += 1
            total += weight
        weight *= p
    return weight + (1.0 - p) * total if unjudged else 0.0
