"""Recall at cutoffs and interpolated precision at recall levels: ``recall_k``,
``iprec_at_recall_x`` and ``11pt_avg``.

* recall@k = (relevant documents in the top k) / R, R = the judged relevant documents
  (0 when R = 0).
* Interpolated precision at recall x: iP(x) = max over ranks j with recall(j) >= x of P@j,
  where the recall level x is reached at the floor(x R + 0.9)-th relevant document; a level
  beyond the retrieved relevant documents takes the precision of the whole ranking's tail
  (the standard recall-precision graph; 0 once nothing relevant follows).
* 11pt_avg = mean of iP(x) over x in {0, 0.1, ..., 1} (or the levels given).

Reference: C. Buckley and E. Voorhees, "Retrieval System Evaluation", TREC: Experiment and
Evaluation in Information Retrieval, MIT Press 2005; G. Salton and M. McGill, Introduction
to Modern Information Retrieval, 1983 (11-point average).
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel


@kernel(cache=True)
def fraction_cutoffs(fractions: np.ndarray, n_rel: int) -> np.ndarray:
    """floor(x R + 0.9) for each fraction x of R (trec_eval's rounding: the default 11 recall
    levels fall where the historical implementations put them)."""
    cutoffs = np.empty(fractions.shape[0], dtype=np.int64)
    for c in range(fractions.shape[0]):
        cutoffs[c] = np.int64(fractions[c] * n_rel + 0.9)
    return cutoffs


@kernel(cache=True)
def interpolated_precision(rels: np.ndarray, n_rel: int, n_rel_ret: int, rl: int, levels: np.ndarray,
                           out: np.ndarray) -> None:  # fmt: skip
    """iP(x) for each increasing recall level x."""
    n_ret = rels.shape[0]
    cutoffs = fraction_cutoffs(levels, n_rel)
    c = levels.shape[0] - 1
    while c >= 0 and cutoffs[c] > n_rel_ret:
        c -= 1
    # an empty ranking (-J, -M 0): trec_eval's 0.0/0.0, on x86 a NaN with its sign bit set
    best = n_rel_ret / n_ret if n_ret else np.copysign(np.nan, -1.0)
    found = n_rel_ret
    i = n_ret
    while i > 0 and found > 0:
        best = max(best, found / i)
        if rels[i - 1] >= rl:
            while c >= 0 and found == cutoffs[c]:
                out[c] = best
                c -= 1
            found -= 1
        i -= 1
    while c >= 0:
        out[c] = best
        c -= 1


@kernel(cache=True)
def eleven_point_average(rels: np.ndarray, n_rel: int, n_rel_ret: int, rl: int, levels: np.ndarray) -> float:
    """Mean of iP(x) over the recall levels."""
    values = np.zeros(levels.shape[0])
    interpolated_precision(rels, n_rel, n_rel_ret, rl, np.sort(levels), values)
    return values.sum() / levels.shape[0]
