"""Ranking metrics with explicit conventions.

``get_metric("ndcg@10", gain=, empty=, ties=, max_grade=, p_divisor=, map_divisor=)``
returns a :class:`Metric` with ``per_query(y, scores, ptr)`` and ``mean(y, scores, ptr)``.
The conventions that move published numbers (gain, queries without relevant documents,
ties, denominators) are parameters, every Metric states them in ``.conventions``, and
``conventions="trec_eval"`` (or lightgbm, xgboost, ranklib, ranx) sets them all as that
tool does (:data:`PRESETS`).

Definitions (``k`` = min(cutoff, list length); rel = label):

* DCG@k = sum_{r<k} gain(rel_r) / log2(r + 2); NDCG@k = DCG@k / ideal DCG@k.
* ERR@k = sum_{r<k} R_r / (r + 1) prod_{i<r} (1 - R_i), R = (2^rel - 1) / 2^max_grade
  (max_grade 4 unless given).
* AP = sum over relevant ranks r of P@r / R (R = relevant documents in the query);
  AP@k sums ranks < k and divides by min(R, k), as LightGBM does (``map_divisor="R"``: by R).
* P@k = relevant documents in the top k / k, with k = min(cutoff, list length)
  (RankLib's choice: a perfect ranking of a short list scores 1; ``p_divisor="k"``: by k).
* recall@k = relevant documents in the top k / R (every relevant judged document, retrieved
  or not); whole-list recall = relevant documents retrieved / R.
* RR@k = 1 / rank of the first relevant document within the top k, else 0 (``mrr`` is
  another name of ``rr``).

``ties="average"`` gives the exact expected value over all orderings of each group
of equally scored documents: the mean discount of the group's positions for DCG,
the expected relevant count inside the cutoff for P, McSherry & Najork's expected AP,
the exact distribution of the first relevant position for RR, and for ERR the exact
mean over random orderings (computed with subset-product means, O(m * min(m, k))
per distinct grade of a tied group of m documents).
"""

from ranklearn.metrics._api import DEFAULT_MAX_GRADE, MAX_EXP2_LABEL, Metric, conventions_line, means_scope, query_mean
from ranklearn.metrics.lookup import (
    dcg_score,
    err_score,
    evaluate,
    get_metric,
    map_score,
    ndcg_score,
    precision_score,
    recall_score,
    rr_score,
)
from ranklearn.metrics._presets import PRESETS

__all__ = [
    "DEFAULT_MAX_GRADE",
    "MAX_EXP2_LABEL",
    "Metric",
    "PRESETS",
    "conventions_line",
    "dcg_score",
    "err_score",
    "evaluate",
    "get_metric",
    "map_score",
    "means_scope",
    "ndcg_score",
    "precision_score",
    "query_mean",
    "recall_score",
    "rr_score",
]
