"""Graded measures: ``ndcg``, ``ndcg_cut_k``, ``ndcg_rel``, ``Rndcg``, ``G`` and ``binG``.

Every grade g has a gain: g itself unless given (trec_eval's ``-m ndcg.1=3,2=9``: the pairs
``grade=gain``; gains may be 0 or negative). The ideal ranking lists the judged documents by
decreasing gain; only positive ideal gains count.

* DCG@k = sum_{i<=k} gain(rel_i) / log2(i + 1); ndcg = DCG / ideal DCG over the whole ranking
  (Järvelin & Kekäläinen, "Cumulated Gain-Based Evaluation of IR Techniques", ACM TOIS 20(4),
  2002). ndcg_cut_k uses the grades as gains, its ideal cut at k too.
* ndcg_rel: the mean of DCG(i)/ideal DCG(i) over the ranks i of relevant documents (positive
  gain), each relevant document not retrieved adding DCG(end)/ideal DCG(end) (trec_eval's
  experimental measure).
* Rndcg: the mean of DCG(i)/ideal DCG(i) at the ranks i where the ideal gain changes, and at
  the end of the ranking (trec_eval's experimental measure).
* G = (1/sum of ideal gains) sum_i gain(rel_i) / log2(2 + cost_i - gain_sum_i), where
  gain_sum_i sums the gains up to i and cost_i the ideal gains up to i (each at least 1);
  binG = (1/R) sum over relevant documents at rank i of 1 / log2(2 + non-relevant above)
  (trec_eval's experimental measures, 4/10/2008).
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel

NDCG, NDCG_REL, RNDCG, G = 0, 1, 2, 3


@kernel(cache=True)
def gain_table(levels: np.ndarray, pair_grades: np.ndarray, pair_gains: np.ndarray):
    """(grades, gains, counts) sorted by increasing gain: the grades the qrels use (gain =
    grade unless a pair sets it) and the grades of the pairs (trec_eval's setup_gains)."""
    n_levels = 0
    for g in range(levels.shape[0]):
        if levels[g] > 0:
            n_levels = g + 1
    size = pair_grades.shape[0] + n_levels
    grades = np.empty(size, dtype=np.int64)
    gains = np.empty(size)
    counts = np.zeros(size, dtype=np.int64)
    n = 0
    for p in range(pair_grades.shape[0]):
        grades[n] = pair_grades[p]
        gains[n] = pair_gains[p]
        n += 1
    for g in range(n_levels):
        j = 0
        while j < n and grades[j] != g:
            j += 1
        if j < n:
            counts[j] = levels[g]
        else:
            grades[n] = g
            gains[n] = g
            counts[n] = levels[g]
            n += 1
    order = np.arange(n)
    _merge_sort(order, gains, np.empty(n, dtype=np.int64))
    return grades[order], gains[order], counts[order]


@kernel(cache=True)
def _merge_sort(order: np.ndarray, gains: np.ndarray, tmp: np.ndarray) -> None:
    """Sort ``order`` by gain as trec_eval does: glibc's qsort (a top-down merge sort, left
    half n // 2) with trec_eval's comparison ``(int) (gain1 - gain2)``, under which gains less
    than 1 apart are equal and keep their order (``1=0.5`` stays before grade 0's gain 0)."""
    n = order.shape[0]
    if n <= 1:
        return
    half = n // 2
    _merge_sort(order[:half], gains, tmp[:half])
    _merge_sort(order[half:], gains, tmp[half:])
    i, j, k = 0, half, 0
    while i < half and j < n:
        if np.int64(gains[order[i]] - gains[order[j]]) <= 0:  # C's truncation toward zero
            tmp[k] = order[i]
            i += 1
        else:
            tmp[k] = order[j]
            j += 1
        k += 1
    while i < half:
        tmp[k] = order[i]
        i += 1
        k += 1
    while j < n:
        tmp[k] = order[j]
        j += 1
        k += 1
    order[:] = tmp[:n]


@kernel(cache=True, inline="always")
def gain_of(r: int, grades: np.ndarray, gains: np.ndarray) -> float:
    for j in range(grades.shape[0]):
        if grades[j] == r:
            return gains[j]
    return 0.0


@kernel(cache=True, error_model="numpy")
def graded(rels: np.ndarray, levels: np.ndarray, n_rel: int, pair_grades: np.ndarray, pair_gains: np.ndarray,
           kind: int) -> float:  # fmt: skip
    """ndcg (``NDCG``), ndcg_rel (``NDCG_REL``), Rndcg (``RNDCG``) or G (``G``) of one query."""
    grades, gains, counts = gain_table(levels, pair_grades, pair_gains)
    if kind == RNDCG and n_rel == 0:
        return 0.0
    n_ret = rels.shape[0]
    level = grades.shape[0] - 1
    ideal_gain = gains[level] if level >= 0 else 0.0
    old_ideal = ideal_gain
    at_level = 0
    dcg = 0.0
    ideal = 0.0
    total = 0.0  # ndcg_rel, Rndcg: sum of the averaged points; G: its sum
    points = 0
    n_ideal = 0  # ndcg_rel: relevant documents of the ideal ranking
    gain_sum = 0.0  # G
    cost = 0.0  # G
    tail = False  # Rndcg: the ideal ranking ran out before the retrieved one
    i = 0
    while i < n_ret or ideal_gain > 0.0:
        in_ideal = ideal_gain > 0.0
        gain = gain_of(rels[i], grades, gains) if i < n_ret else 0.0
        if i < n_ret and not in_ideal:
            tail = True
        if in_ideal:  # the next ideal gain
            at_level += 1
            while level >= 0 and at_level > counts[level]:
                at_level = 1
                level -= 1
                ideal_gain = gains[level] if level >= 0 else 0.0
        if kind == RNDCG and in_ideal and old_ideal != ideal_gain:
            if ideal > 0.0:
                total += dcg / ideal
                points += 1
            old_ideal = ideal_gain
        if kind == G:
            if i < n_ret:
                gain_sum += gain
                if in_ideal and ideal_gain >= 1.0:
                    cost += ideal_gain
                else:
                    cost += 1.0
                if gain != 0:
                    total += gain / np.log2(2.0 + cost - gain_sum)
            if in_ideal and ideal_gain > 0.0:
                ideal += ideal_gain
        else:
            if gain != 0:
                dcg += gain / np.log2(i + 2.0)
            if in_ideal and ideal_gain > 0.0:
                ideal += ideal_gain / np.log2(i + 2.0)
                n_ideal += 1
            if kind == NDCG_REL and gain > 0:
                total += dcg / ideal
                points += 1
        i += 1
    if kind == RNDCG and tail and ideal > 0.0:
        total += dcg / ideal
        points += 1
    if kind == G:
        return total / ideal if ideal > 0.0 else 0.0
    if kind == NDCG:
        return dcg / ideal if ideal > 0.0 else 0.0
    if kind == NDCG_REL:
        total += (n_ideal - points) * dcg / ideal
        return total / n_ideal if total > 0.0 else 0.0
    return total / points


@kernel(cache=True, error_model="numpy")
def ndcg_at(rels: np.ndarray, levels: np.ndarray, cutoffs: np.ndarray, out: np.ndarray) -> None:
    """NDCG@k with the grades as gains for each increasing cutoff k (ideal cut at k too)."""
    dcg = 0.0
    c = 0
    i = 0
    while i < rels.shape[0] and c < cutoffs.shape[0]:
        if i == cutoffs[c]:
            out[c] = dcg
            c += 1
            continue
        if rels[i] > 0:
            dcg += rels[i] / np.log2(i + 2.0)
        i += 1
    while c < cutoffs.shape[0]:
        out[c] = dcg
        c += 1
    level = -1
    for g in range(levels.shape[0]):
        if levels[g] > 0:
            level = g
    at_level = 0
    ideal = 0.0
    c = 0
    i = 0
    while True:
        at_level += 1
        while level > 0 and at_level > levels[level]:
            level -= 1
            at_level = 1
        if level <= 0:
            break
        if i == cutoffs[c]:
            if ideal > 0.0:
                out[c] /= ideal
            c += 1
            if c == cutoffs.shape[0]:
                return
        ideal += level / np.log2(i + 2.0)
        i += 1
    while c < cutoffs.shape[0]:
        if ideal > 0.0:
            out[c] /= ideal
        c += 1


@kernel(cache=True)
def binary_g(rels: np.ndarray, n_rel: int, rl: int) -> float:
    """binG of one query (0 when nothing relevant is retrieved)."""
    total = 0.0
    found = 0
    for i in range(rels.shape[0]):
        if rels[i] >= rl:
            found += 1
            total += 1.0 / np.log2(3.0 + i - found)
    return total / n_rel if found else 0.0
