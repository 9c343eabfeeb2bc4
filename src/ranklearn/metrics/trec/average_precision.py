"""Average precision: ``map``, ``map_cut_k`` and the geometric mean ``gm_map``.

AP = (1/R) sum over ranks i holding a relevant document of P@i, where P@i = relevant
documents in the top i / i and R counts every judged relevant document (retrieved or not).
``map_cut_k`` sums the ranks i <= k only and still divides by R. ``gm_map`` is AP per query
stored as log(max(AP, 1e-5)) and averaged as exp(mean of the logs) (Robertson, "On GMAP",
CIKM 2006), so that a query with AP 0 counts as 1e-5. ``yaap`` ("yet another AP") is
log((1 + S) / (1 + R - S)) with S = sum over the retrieved relevant documents of P@i, the AP sum
before its division by R (Robertson, "On Smoothing Average Precision", ECIR 2012).

Reference: C. Buckley and E. Voorhees, "Retrieval System Evaluation", TREC: Experiment and
Evaluation in Information Retrieval, MIT Press 2005.
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel

#: Floor of a per-query value before its logarithm (trec_eval's MIN_GEO_MEAN).
MIN_GEO_MEAN = 0.00001


@kernel(cache=True)
def precision_sum(rels: np.ndarray, rl: int) -> tuple[float, int]:
    """(sum of P@i over the ranks i of retrieved relevant documents, their number)."""
    total = 0.0
    found = 0
    for i in range(rels.shape[0]):
        if rels[i] >= rl:
            found += 1
            total += found / (i + 1.0)
    return total, found


@kernel(cache=True)
def average_precision(rels: np.ndarray, n_rel: int, rl: int) -> float:
    """AP of one query (0 without a relevant document retrieved)."""
    total, found = precision_sum(rels, rl)
    return total / n_rel if found else 0.0


@kernel(cache=True)
def log_average_precision(rels: np.ndarray, n_rel: int, rl: int) -> float:
    """log(max(AP, 1e-5)): ``gm_map``'s per-query value."""
    return np.log(max(average_precision(rels, n_rel, rl), MIN_GEO_MEAN))


@kernel(cache=True)
def yaap(rels: np.ndarray, n_rel: int, rl: int) -> float:
    """log((1 + S) / (1 + R - S)), S the sum of P@i over the retrieved relevant documents."""
    total = precision_sum(rels, rl)[0]
    return np.log((1.0 + total) / (1.0 + n_rel - total))
