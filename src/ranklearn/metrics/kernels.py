"""Numba kernels of the ranking metrics: one pass per query, parallel over queries.

Every metric is written once, over *tie groups*: runs of consecutive rank positions
whose documents share a score. Under ``ties="stable"`` and ``ties="pessimistic"`` the
documents are first put in a definite order and every group is a single document, so
the formulas reduce to the textbook ones. Under ``ties="average"`` a group holds all
documents with the same score and each metric returns its exact expected value over
all orderings of every tied group (all orderings equally likely).
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel, prange
from ranklearn.metrics.gain import discount, gain

DCG, NDCG, ERR, AP, PREC, RR, RECALL, F1 = 0, 1, 2, 3, 4, 5, 6, 7
TIES_STABLE, TIES_PESSIMISTIC, TIES_AVERAGE = 0, 1, 2
EMPTY_ZERO, EMPTY_ONE, EMPTY_SKIP = 0, 1, 2
P_BY_MIN_K_N, P_BY_K = 0, 1  # P@k divides by min(k, list length) (RankLib) or by k (trec_eval)
AP_BY_MIN_R_K, AP_BY_R = 0, 1  # AP@k divides by min(R, k) (LightGBM) or by R (trec_eval)


@kernel(cache=True)
def _rank(labels: np.ndarray, scores: np.ndarray, ties: int) -> tuple[np.ndarray, np.ndarray]:
    """Documents in rank order and the end position (exclusive) of each one's tie group."""
    n = scores.shape[0]
    # A stable sort of the negated scores: descending, equal scores keep input order.
    order = np.argsort(-scores, kind="mergesort")
    group_end = np.empty(n, dtype=np.int64)
    a = 0
    while a < n:
        b = a + 1
        while b < n and scores[order[b]] == scores[order[a]]:
            b += 1
        if ties == TIES_AVERAGE:
            group_end[a:b] = b
        else:
            if ties == TIES_PESSIMISTIC and b - a > 1:
                block = order[a:b].copy()
                by_label = np.argsort(labels[block], kind="mergesort")
                # a loop, not `order[a:b] = block[by_label]`: that would compile numba's
                # shape-mismatch message (string formatting, seconds of the first run)
                for i in range(b - a):
                    order[a + i] = block[by_label[i]]
            for i in range(a, b):
                group_end[i] = i + 1
        a = b
    return order, group_end


@kernel(cache=True)
def ideal_dcg(labels: np.ndarray, k: int, gain_kind: int) -> float:
    best = np.sort(labels)[::-1]
    total = 0.0
    for p in range(min(k, best.shape[0])):
        total += gain(best[p], gain_kind) * discount(p)
    return total


@kernel(cache=True)
def _dcg(labels, order, group_end, k, gain_kind):
    # Each document of a tie group gets the mean discount of the group's positions
    # (positions at or past the cutoff count 0): E[DCG@k] over the group's orderings.
    total = 0.0
    a = 0
    while a < k:
        b = group_end[a]
        disc = 0.0
        for p in range(a, min(b, k)):
            disc += discount(p)
        g = 0.0
        for p in range(a, b):
            g += gain(labels[order[p]], gain_kind)
        total += g * disc / (b - a)
        a = b
    return total


@kernel(cache=True, inline="always")
def _relevant_in(labels, order, a, b):
    """Relevant (label > 0) documents at rank positions a..b-1."""
    rel = 0
    for p in range(a, b):
        if labels[order[p]] > 0:
            rel += 1
    return rel


@kernel(cache=True)
def _precision(labels, order, group_end, k):
    # Expected relevant documents in the top k: a group straddling the cutoff contributes
    # its relevant count times the fraction of its positions inside it.
    hits = 0.0
    a = 0
    while a < k:
        b = group_end[a]
        rel = _relevant_in(labels, order, a, b)
        hits += rel * (min(b, k) - a) / (b - a)
        a = b
    return hits


@kernel(cache=True)
def _reciprocal_rank(labels, order, group_end, k):
    a = 0
    while a < k:
        b = group_end[a]
        m = b - a
        rel = _relevant_in(labels, order, a, b)
        if rel > 0:
            # Offset j of the group's first relevant document in a random ordering:
            # P(0) = rel/m, P(j+1) = P(j) (m-j-rel)/(m-1-j).
            prob = rel / m
            total = 0.0
            for j in range(min(m - rel + 1, k - a)):
                total += prob / (a + j + 1)
                if j < m - rel:
                    prob *= (m - j - rel) / (m - 1 - j)
            return total
        a = b
    return 0.0


@kernel(cache=True)
def _average_precision(labels, order, group_end, k, divisor):
    # E[AP]: position i of a group holds a relevant document with probability rel/m and,
    # given that, has on average j (rel-1)/(m-1) relevant group members above it
    # (McSherry & Najork, ECIR 2008).
    total = 0.0
    above = 0  # relevant documents in earlier groups
    a = 0
    while a < k:
        b = group_end[a]
        m = b - a
        rel = _relevant_in(labels, order, a, b)
        if rel > 0:
            for j in range(min(m, k - a)):
                inside = j * (rel - 1) / (m - 1) if m > 1 else 0.0
                total += (rel / m) * (above + inside + 1.0) / (a + j + 1)
        above += rel
        a = b
    return total / divisor


@kernel(cache=True)
def _subset_product_means(x: np.ndarray, skip: int, depth: int) -> np.ndarray:
    """Mean over all j-subsets of ``x`` without element ``skip`` of prod(subset), j < depth.

    Built one element at a time with M_j <- (n+1-j)/(n+1) M_j + j/(n+1) x M_{j-1}, a convex
    combination, so there is no overflow or cancellation however large the group.
    """
    means = np.zeros(depth)
    means[0] = 1.0
    n = 0
    for i in range(x.shape[0]):
        if i == skip:
            continue
        for j in range(min(n + 1, depth - 1), 0, -1):
            means[j] = ((n + 1 - j) * means[j] + j * x[i] * means[j - 1]) / (n + 1)
        n += 1
    return means


@kernel(cache=True)
def _err(labels, order, group_end, k, max_grade):
    # Cascade model: stop at rank r with probability R_r = (2^g - 1) / 2^max_grade.
    # Within a tie group the chance of reaching a document is a random subset's product of
    # (1 - R); the expectation uses the exact subset-product means, one per distinct R.
    total = 0.0
    reach = 1.0
    a = 0
    while a < k:
        b = group_end[a]
        m = b - a
        stop = np.empty(m)
        for p in range(a, b):
            g = labels[order[p]]
            stop[p - a] = 2.0 ** (g - max_grade) - 2.0 ** (-max_grade)
        if m == 1:
            total += reach * stop[0] / (a + 1)
        else:
            stop = np.sort(stop)
            depth = min(m, k - a)
            i = 0
            while i < m:
                same = i
                while same < m and stop[same] == stop[i]:
                    same += 1
                if stop[i] > 0.0:
                    means = _subset_product_means(1.0 - stop, i, depth)
                    inner = 0.0
                    for j in range(depth):
                        inner += means[j] / (a + j + 1)
                    total += reach * (same - i) / m * stop[i] * inner
                i = same
        for p in range(m):
            reach *= 1.0 - stop[p]
        a = b
    return total


@kernel(cache=True)
def query_value(labels, scores, n_ret, metric, k, gain_kind, ties, max_grade, empty, p_by, ap_by):
    # Rows n_ret: are judged documents the ranking did not retrieve: they count in R and
    # in the ideal DCG only.
    n = labels.shape[0]
    n_relevant = _count_relevant(labels)
    if n_relevant == 0:
        return _empty_value(empty)
    kq = n_ret if k < 0 else min(k, n_ret)
    if kq == 0:
        return 0.0
    ranked = labels[:n_ret]
    order, group_end = _rank(ranked, scores[:n_ret], ties)
    ideal = ideal_dcg(labels, n if k < 0 else min(k, n), gain_kind) if metric == NDCG else 1.0
    return ranked_value(ranked, order, group_end, kq, n_relevant, ideal, metric, k, gain_kind, max_grade, empty,
                         p_by, ap_by)  # fmt: skip


@kernel(cache=True)
def _count_relevant(labels: np.ndarray) -> int:
    n_relevant = 0
    for i in range(labels.shape[0]):
        if labels[i] > 0:
            n_relevant += 1
    return n_relevant


@kernel(cache=True)
def _empty_value(empty: int) -> float:
    """The value of a query with no relevant document (or an ideal DCG of 0)."""
    if empty == EMPTY_ONE:
        return 1.0
    if empty == EMPTY_SKIP:
        return np.nan
    return 0.0


@kernel(cache=True)
def ranked_value(ranked, order, group_end, kq, n_relevant, ideal, metric, k, gain_kind, max_grade, empty, p_by,
                  ap_by):  # fmt: skip
    """The metric of a query already ranked (``order``, ``group_end`` from ``_rank``), cut at ``kq``
    (at least 1), with ``n_relevant`` relevant judged documents (at least 1) and, for NDCG, the
    ideal DCG ``ideal``: the part of ``query_value`` after the sort, for callers that keep a ranking."""
    if metric == DCG:
        return _dcg(ranked, order, group_end, kq, gain_kind)
    if metric == NDCG:
        if ideal <= 0.0:  # relevant labels so small that 2^rel - 1 underflows to 0: an empty query
            return _empty_value(empty)
        return _dcg(ranked, order, group_end, kq, gain_kind) / ideal
    if metric == ERR:
        return _err(ranked, order, group_end, kq, max_grade)
    if metric == AP:
        divisor = n_relevant if (ap_by == AP_BY_R or k < 0) else min(n_relevant, k)
        return _average_precision(ranked, order, group_end, kq, divisor)
    if metric == PREC:
        hits = _precision(ranked, order, group_end, kq)
        return hits / (k if (p_by == P_BY_K and k > 0) else kq)
    if metric == RECALL:  # R counts the judged relevant documents the ranking missed too
        return _precision(ranked, order, group_end, kq) / n_relevant
    if metric == F1:  # 2PR/(P+R) with P = hits/d, R = hits/n_relevant is 2 hits/(d + n_relevant)
        hits = _precision(ranked, order, group_end, kq)
        return 2.0 * hits / ((k if (p_by == P_BY_K and k > 0) else kq) + n_relevant)
    return _reciprocal_rank(ranked, order, group_end, kq)


@kernel(cache=True, parallel=True)
def per_query_values(
    labels: np.ndarray,
    scores: np.ndarray,
    ptr: np.ndarray,
    retrieved: np.ndarray,
    metric: int,
    k: int,
    gain_kind: int,
    ties: int,
    max_grade: float,
    empty: int,
    p_by: int,
    ap_by: int,
) -> np.ndarray:
    """Metric value of every query ``ptr[q]:ptr[q+1]``; ``k < 0`` means the whole list.

    Only the first ``retrieved[q]`` rows of query ``q`` are ranked; the others are judged
    documents missing from the ranking (TREC runs), counted in R and the ideal DCG.
    """
    n_queries = ptr.shape[0] - 1
    out = np.empty(n_queries)
    for q in prange(n_queries):
        lo, hi = ptr[q], ptr[q + 1]
        out[q] = query_value(
            labels[lo:hi], scores[lo:hi], retrieved[q], metric, k, gain_kind, ties, max_grade, empty, p_by, ap_by
        )
    return out


#: Below this many documents a call runs on one thread: waking the thread pool costs more
#: than it saves, up to milliseconds when the cores are busy.
PARALLEL_MIN_DOCS = 50_000
#: Up to this many documents, a process that has not imported numba runs ``per_query_values``
#: interpreted (:meth:`ranklearn._compilation.Kernel.run`): tens of milliseconds, against about
#: half a second for importing numba
INTERPRETED_DOCS = 20_000
