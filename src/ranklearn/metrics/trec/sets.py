"""Set measures, on the retrieved documents as an unordered set: ``set_P``, ``set_recall``,
``set_relative_P``, ``set_map``, ``set_F`` and ``utility``.

With a = relevant retrieved (num_rel_ret), n = retrieved (num_ret), R = judged relevant:

* set_P = a / n; set_recall = a / R; set_relative_P = a / min(n, R);
* set_map = (a / n) (a / R) (the AP of a ranking whose relevant documents are spread evenly);
* set_F = (beta + 1) P R / (beta P + R) with P = a / n, R = a / R (beta = 1: F1; trec_eval's
  parameter is beta itself, not beta squared) (van Rijsbergen, Information Retrieval, 1979);
* utility = p1 a + p2 (n - a) + p3 (R - a) + p4 (N - n - R + a), N the documents in the
  collection (``-N``), default coefficients (1, -1, 0, 0) (TREC filtering track: Hull and
  Robertson, "The TREC-8 Filtering Track Final Report", 1999).

Each is 0 where its denominator is 0.
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel

SET_P, SET_RECALL, SET_RELATIVE_P, SET_MAP = 0, 1, 2, 3


@kernel(cache=True)
def set_measure(n_ret: int, n_rel: int, n_rel_ret: int, kind: int) -> float:
    """set_P (``SET_P``), set_recall, set_relative_P or set_map of one query."""
    if kind == SET_P:
        return n_rel_ret / n_ret if n_ret else 0.0
    if kind == SET_RECALL:
        return n_rel_ret / n_rel if n_rel else 0.0
    if n_ret == 0 or n_rel == 0:
        return 0.0
    if kind == SET_RELATIVE_P:
        return n_rel_ret / min(n_ret, n_rel)
    return (n_rel_ret * n_rel_ret) / (n_ret * float(n_rel))


@kernel(cache=True)
def set_f(n_ret: int, n_rel: int, n_rel_ret: int, beta: float) -> float:
    """F measure of the retrieved set."""
    if n_rel_ret == 0:
        return 0.0
    precision = n_rel_ret / n_ret
    recall = n_rel_ret / n_rel
    return (beta + 1.0) * precision * recall / (beta * precision + recall)


@kernel(cache=True)
def utility(n_ret: int, n_rel: int, n_rel_ret: int, coefficients: np.ndarray, n_docs: int) -> float:
    """Linear utility of the contingency table with the four coefficients."""
    return (
        coefficients[0] * n_rel_ret
        + coefficients[1] * (n_ret - n_rel_ret)
        + coefficients[2] * (n_rel - n_rel_ret)
        + coefficients[3] * (n_docs + n_rel_ret - n_ret - n_rel)
    )
