"""Lambda gradients: RankNet's pairwise cross-entropy scaled by the swap change |ΔZ|.

For a pair where document ``i`` is more relevant than ``j`` (Burges, "From RankNet to LambdaRank to
LambdaMART: An Overview", MSR-TR-2010-82, sections 3-5; Burges, Ragno, Le, NIPS 2006)::

    rho_ij    = 1 / (1 + exp(sigma * (s_i - s_j)))
    lambda_ij = -sigma * rho_ij * |ΔZ_ij|          (dC/ds_i: negative pushes i up)
    g_i += lambda_ij,  g_j -= lambda_ij
    h_i += sigma^2 * rho_ij * (1 - rho_ij) * |ΔZ_ij|,  h_j += the same

This is the papers' sign convention; RankLib (and its LambdaMART source) uses ``-g``. ``Z`` is NDCG@k,
ERR@k, AP, or 1 (plain RankNet). Documents are ranked by their current scores with ties in
input order. Only pairs with at least one document in the top ``truncation`` positions are
visited; for NDCG@k and ERR@k every other pair has ΔZ = 0, so truncation at k loses nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numba import njit, prange

from ranklearn.metrics.gain import GAIN_EXP2, discount, gain
from ranklearn.objectives.base import Objective, output_arrays

Z_NDCG = 0
Z_ERR = 1
Z_MAP = 2
Z_NONE = 3

Z_KINDS = {"ndcg": Z_NDCG, "err": Z_ERR, "map": Z_MAP, "none": Z_NONE}


def parse_lambda_metric(lambda_metric: str | None, metric: str) -> tuple[str, int | None]:
    """(Z kind, k) of the swap change weighting the lambdas; by default the evaluation metric's.

    Parameters
    ----------
    lambda_metric : str or None
        ``ndcg@k``, ``ndcg``, ``err@k``, ``err``, ``map`` or ``none`` (plain RankNet);
        None: the evaluation metric's, with NDCG at the same depth standing in for a metric
        that has no smooth swap change (P@k, RR@k...).
    metric : str
        The evaluation metric's spec.

    Raises
    ------
    ValueError
        On another name, or a cut-off that is not a positive integer.
    """
    spec = (lambda_metric or metric).lower()
    name, _, k_text = spec.partition("@")
    if lambda_metric is None and name not in Z_KINDS:
        name = "ndcg"
    if name not in Z_KINDS:
        raise ValueError(f"lambda_metric must be one of ndcg@k, err@k, map, none; got {lambda_metric!r}")
    if not k_text:
        return name, None
    try:
        k = int(k_text)
    except ValueError:
        raise ValueError(f"bad cut-off in lambda metric {spec!r}") from None
    if k <= 0:
        raise ValueError(f"the cut-off of {spec!r} must be positive")
    return name, k


#: queries up to this long are sorted by insertion into scratch memory, longer ones by numpy
SHORT_QUERY = 32
#: rows of a scratch array: s, e, l, w, d, g, h per rank, two prefix arrays, sort keys, and for position
#: debiasing the ratios' reciprocals and the pair costs per rank
_SCRATCH_ROWS = 14
#: query blocks of :func:`lambda_gradients`: each allocates its scratch once
QUERY_BLOCKS = 256
#: integer labels below this take their 2^rel - 1 gain from a table
GAIN_TABLE = 32


@njit(cache=True, inline="always")
def _before(a: float, b: float) -> bool:
    """numpy's sort order: ``a`` before ``b``, NaN last."""
    return a < b or (b != b and a == a)


@njit(cache=True)
def _stable_argsort(keys: np.ndarray, order: np.ndarray) -> None:
    """``order[:n] = np.argsort(keys, kind="mergesort")`` (n = len(keys)) by insertion: a short
    query is sorted without the allocations of numpy's sort. Stable, NaN last, as numpy."""
    for j in range(keys.shape[0]):
        x = keys[j]
        i = j
        while i > 0 and _before(x, keys[order[i - 1]]):
            order[i] = order[i - 1]
            i -= 1
        order[i] = j


@njit(cache=True, inline="always")
def _table_gain(label: float, kind: int, gains: np.ndarray) -> float:
    """``gain(label, kind)``; an integer label's 2^rel - 1 read from ``gains`` (the same value,
    computed once a block: a pow a document is most of a short query's time)."""
    if kind == GAIN_EXP2 and 0.0 <= label < gains.shape[0]:
        i = int(label)
        if i == label:
            return gains[i]
    return gain(label, kind)


@njit(cache=True)
def lambdarank_norm_factor(pair_lambda_sum: float) -> float:
    """LightGBM's ``lambdarank_norm`` factor of one query: ``log2(1 + S) / S``, S the sum over
    its pairs of ``2 |lambda_ij|`` (1 when S is 0). Every lambda (and hessian) of the query is
    multiplied by it, before sample weights, so a query with many large lambdas is damped
    (rank_objective.hpp, ``norm_``). The one rule of ``lambda_normalization="lightgbm"`` for
    the trees (:func:`lambda_gradients`) and the networks (:func:`lambdarank_norm_factors`)."""
    if pair_lambda_sum > 0.0:
        return np.log2(1.0 + pair_lambda_sum) / pair_lambda_sum
    return 1.0


@njit(cache=True)
def lambdarank_norm_factors(pair_lambda_sums: np.ndarray) -> np.ndarray:
    """:func:`lambdarank_norm_factor` of every query (float64 array of S, one per query)."""
    out = np.empty(pair_lambda_sums.shape[0])
    for q in range(pair_lambda_sums.shape[0]):
        out[q] = lambdarank_norm_factor(pair_lambda_sums[q])
    return out


@njit(cache=True)
def _query_lambdas(
    sc: np.ndarray,
    lab: np.ndarray,
    kind: int,
    k: int,
    sigma: float,
    truncation: int,
    gain_kind: int,
    max_grade: float,
    normalize: bool,
    distance_weight: bool,
    g: np.ndarray,
    h: np.ndarray,
    work: np.ndarray,
    order: np.ndarray,
    gains: np.ndarray,
    discounts: np.ndarray,
    bucket: np.ndarray,
    inv_plus: np.ndarray,
    inv_minus: np.ndarray,
    cost_plus: np.ndarray,
    cost_minus: np.ndarray,
) -> None:
    """Set one query's gradients in ``g`` and ``h`` (already zeroed).

    Position debiasing (:mod:`ranklearn.objectives.unbiased`), when ``bucket`` (this query's
    rows' position buckets, 0-based) is not empty: each pair's lambda and hessian are multiplied
    by ``inv_plus[bucket[hi]] * inv_minus[bucket[lo]]`` (``hi`` the more relevant document;
    the reciprocals of the ratios ``t+`` and ``t-``), and, when ``cost_plus`` is not empty (this
    query's rows, set here), the pair's cost ``-log(1 - rho) |ΔZ|`` times ``inv_minus[bucket[lo]]``
    is added to ``cost_plus[hi]`` and times ``inv_plus[bucket[hi]]`` to ``cost_minus[lo]``
    (Hu et al., WWW 2019, eqs. 30-31): per row, so that the caller can weight them by the rows'
    sample weights before summing them per rank.

    ``work`` (``_SCRATCH_ROWS``, >= n + 1) float64 and ``order`` (>= 2 n) int64 are scratch
    memory: allocating a dozen arrays per query serializes the threads on the allocator.
    ``gains[v]`` is ``gain(v, gain_kind)`` for v < ``GAIN_TABLE``, ``discounts[r]`` is
    ``discount(r)`` for r < min(k, n).
    """
    n = sc.shape[0]
    if n < 2:
        return
    for i in range(1, n):  # a loop, not lab.min() == lab.max(): two fewer numba functions to compile
        if lab[i] != lab[0]:
            break
    else:
        return  # one label: no pair to order
    keys = work[9, :n]
    if n <= SHORT_QUERY:
        for i in range(n):
            keys[i] = -sc[i]
        _stable_argsort(keys, order)
    else:
        order[:n] = np.argsort(-sc, kind="mergesort")
    kk = min(k, n)
    # Everything the pair loop needs, in rank order: no pow/log2 inside it.
    # e_r = exp(sigma * (s_r - s_top)) in (0, 1]: one exp per document, and for a pair
    # exp(sigma * (s_hi - s_lo)) = e_hi / e_lo.
    s_r = work[0, :n]
    e_r = work[1, :n]
    l_r = work[2, :n]
    s_top = sc[order[0]]
    for r in range(n):
        s_r[r] = sc[order[r]]
        e_r[r] = np.exp(sigma * (s_r[r] - s_top))
        l_r[r] = lab[order[r]]
    w_r = work[3, :n]  # per-position weight: gain for NDCG, R for ERR, relevance count for AP
    d_r = work[4, :n]  # per-position discount (NDCG) or 1/(rank+1) terms (ERR, AP)
    w_r[:] = 0.0
    d_r[:] = 0.0
    inv_norm = 1.0  # 1/ideal DCG@k for NDCG, 1/#relevant for AP
    p_before = work[7, : n + 1]
    t_cum = work[8, : n + 1]
    q_cum = work[7, : n + 1]
    if kind == Z_NDCG:
        # labels in ascending order (NaN last, as np.sort), read from the end
        if n <= SHORT_QUERY:
            _stable_argsort(lab, order[n : 2 * n])
            ideal = keys
            for r in range(n):
                ideal[r] = lab[order[n + r]]
        else:
            ideal = np.sort(lab)
        idcg = 0.0
        for r in range(kk):
            idcg += _table_gain(ideal[n - 1 - r], gain_kind, gains) * discounts[r]
        if idcg <= 0.0:
            return
        inv_norm = 1.0 / idcg
        for r in range(n):
            w_r[r] = _table_gain(l_r[r], gain_kind, gains)
            if r < kk:
                d_r[r] = discounts[r]
    elif kind == Z_ERR:
        # Prefix products and sums give each swap's ERR change in O(1).
        scale = 2.0**max_grade
        p_before[0] = 1.0
        t_cum[0] = 0.0
        for r in range(n):
            rr = (2.0 ** l_r[r] - 1.0) / scale
            w_r[r] = rr
            term = rr * p_before[r] / (r + 1.0) if r < kk else 0.0
            t_cum[r + 1] = t_cum[r] + term
            p_before[r + 1] = p_before[r] * (1.0 - rr)
    elif kind == Z_MAP:
        cnt = 0.0
        q_cum[0] = 0.0
        for r in range(n):
            is_rel = l_r[r] > 0
            if is_rel:
                cnt += 1.0
            w_r[r] = cnt
            q_cum[r + 1] = q_cum[r] + (1.0 / (r + 1.0) if is_rel else 0.0)
        if cnt == 0.0:
            return
        inv_norm = 1.0 / cnt

    g_r = work[5, :n]
    h_r = work[6, :n]
    g_r[:] = 0.0
    h_r[:] = 0.0
    sum_lambdas = 0.0
    # LightGBM weights each pair by 1 / (0.01 + |s_i - s_j|), focusing on pairs the model
    # cannot yet tell apart (skipped while all scores are equal).
    by_distance = distance_weight and s_r[0] != s_r[n - 1]
    debias = bucket.shape[0] > 0
    track = cost_plus.shape[0] > 0
    # the ratios' reciprocals and the costs in rank order: no gather per pair
    inv_tp = work[10, :n]
    inv_tm = work[11, :n]
    cp_r = work[12, :n]
    cm_r = work[13, :n]
    if debias:
        for r in range(n):
            b_r = bucket[order[r]]
            inv_tp[r] = inv_plus[b_r]
            inv_tm[r] = inv_minus[b_r]
    if track:
        cp_r[:] = 0.0
        cm_r[:] = 0.0
    top = min(truncation, n)
    for a in range(top):
        la = l_r[a]
        # A pair's log loss depends on its two scores and which one is more relevant. Rows of
        # equal score are adjacent in rank order (click data aggregated per position repeats a
        # document at several positions): the last one is reused, the same value bit for bit.
        last_s = np.nan
        last_a_hi = False
        last_loss = 0.0
        for b in range(a + 1, n):
            lb = l_r[b]
            if la == lb:
                continue
            if kind == Z_NDCG:
                delta = abs(w_r[a] - w_r[b]) * (d_r[a] - d_r[b]) * inv_norm
            elif kind == Z_ERR:
                ra = w_r[a]
                rb = w_r[b]
                ratio = (1.0 - rb) / (1.0 - ra)
                d = rb * p_before[a] / (a + 1.0) - (t_cum[a + 1] - t_cum[a])
                d += (ratio - 1.0) * (t_cum[b] - t_cum[a + 1])
                if b < kk:
                    d += ra * p_before[b] * ratio / (b + 1.0) - (t_cum[b + 1] - t_cum[b])
                delta = abs(d)
            elif kind == Z_MAP:
                rel_a = la > 0
                if rel_a == (lb > 0):
                    continue
                between = q_cum[b] - q_cum[a + 1]
                if rel_a:
                    d = w_r[b] / (b + 1.0) - w_r[a] / (a + 1.0) - between
                else:
                    d = (w_r[a] + 1.0) / (a + 1.0) - w_r[b] / (b + 1.0) + between
                delta = abs(d) * inv_norm
            else:
                delta = 1.0
            if delta == 0.0:
                continue
            if by_distance:
                delta /= 0.01 + abs(s_r[a] - s_r[b])
            if la > lb:
                hi = a
                lo = b
            else:
                hi = b
                lo = a
            if e_r[lo] > 1e-300:
                rho = e_r[lo] / (e_r[lo] + e_r[hi])
            else:  # far below the top: exp underflowed, compute the pair directly
                rho = 1.0 / (1.0 + np.exp(sigma * (s_r[hi] - s_r[lo])))
            lam = -sigma * rho * delta
            hw = sigma * sigma * rho * (1.0 - rho) * delta
            if debias:
                if track:
                    a_hi = hi == a
                    if s_r[b] != last_s or a_hi != last_a_hi:
                        last_s = s_r[b]
                        last_a_hi = a_hi
                        last_loss = -np.log1p(-rho)
                    cost = last_loss * delta
                    cp_r[hi] += cost * inv_tm[lo]
                    cm_r[lo] += cost * inv_tp[hi]
                scale = inv_tp[hi] * inv_tm[lo]
                lam *= scale
                hw *= scale
            g_r[hi] += lam
            g_r[lo] -= lam
            h_r[hi] += hw
            h_r[lo] += hw
            sum_lambdas -= 2.0 * lam
    factor = lambdarank_norm_factor(sum_lambdas) if normalize else 1.0
    for r in range(n):
        g[order[r]] = g_r[r] * factor
        h[order[r]] = h_r[r] * factor
    if track:
        for r in range(n):
            cost_plus[order[r]] = cp_r[r]
            cost_minus[order[r]] = cm_r[r]


@njit(parallel=True, cache=True)
def lambda_gradients(
    scores: np.ndarray,
    labels: np.ndarray,
    ptr: np.ndarray,
    kind: int,
    k: int,
    sigma: float,
    truncation: int,
    gain_kind: int,
    max_grade: float,
    normalize: bool,
    distance_weight: bool,
    grad: np.ndarray,
    hess: np.ndarray,
    bucket: np.ndarray,
    t_plus: np.ndarray,
    t_minus: np.ndarray,
    costs: np.ndarray,
) -> None:
    """Fill ``grad`` and ``hess`` (float64, length n_samples) for every query, in parallel.

    ``bucket`` (int64 per row, or empty: no debiasing), ``t_plus`` and ``t_minus`` (the ratios)
    are the position debiasing of :func:`_query_lambdas`; ``costs`` (``(2, n_samples)``, or
    empty: not tracked) is set to the pair costs per row (row 0 as the more relevant document of
    a pair, row 1 as the other).

    Queries are taken in ``QUERY_BLOCKS`` blocks of consecutive queries; a block allocates
    scratch memory for its longest query, and the gain and discount tables, once. Each query
    is computed alone, so the results do not depend on the blocks or the thread count.
    """
    n_queries = ptr.shape[0] - 1
    n_blocks = min(n_queries, QUERY_BLOCKS)
    for c in prange(n_blocks):
        q0 = c * n_queries // n_blocks
        q1 = (c + 1) * n_queries // n_blocks
        longest = 0
        for q in range(q0, q1):
            longest = max(longest, ptr[q + 1] - ptr[q])
        work = np.empty((_SCRATCH_ROWS, longest + 1))
        order = np.empty(2 * longest, dtype=np.int64)
        gains = np.empty(GAIN_TABLE)
        for v in range(GAIN_TABLE):
            gains[v] = gain(float(v), gain_kind)
        discounts = np.empty(min(k, longest))
        for r in range(discounts.shape[0]):
            discounts[r] = discount(r)
        inv_plus = 1.0 / t_plus
        inv_minus = 1.0 / t_minus
        track = costs.shape[0] > 0
        for q in range(q0, q1):
            s = ptr[q]
            e = ptr[q + 1]
            grad[s:e] = 0.0
            hess[s:e] = 0.0
            if track:
                costs[:, s:e] = 0.0
            _query_lambdas(
                scores[s:e],
                labels[s:e],
                kind,
                k,
                sigma,
                truncation,
                gain_kind,
                max_grade,
                normalize,
                distance_weight,
                grad[s:e],
                hess[s:e],
                work,
                order,
                gains,
                discounts,
                bucket[s:e] if bucket.shape[0] > 0 else bucket,
                inv_plus,
                inv_minus,
                costs[0, s:e] if track else inv_plus[:0],
                costs[1, s:e] if track else inv_plus[:0],
            )


class LambdaObjective(Objective):
    """Lambda gradients for one choice of Z and its conventions: LambdaRank (Burges 2010,
    "From RankNet to LambdaRank to LambdaMART: An Overview"), or RankNet's plain pairwise
    cross-entropy when Z is "none" (Burges et al. 2005).

    Parameters
    ----------
    z : {"ndcg", "err", "map", "none"}
        The metric whose swap change |ΔZ| weights each pair; "none" is plain RankNet.
    k : int or None
        Cut-off of NDCG@k / ERR@k (None: the whole list). Ignored for "map" and "none".
    sigma : float
        Steepness of RankNet's sigmoid.
    truncation : int or None
        Visit only pairs with a document in the current top ``truncation``
        (None: ``k`` for NDCG/ERR, the whole list otherwise).
    gain : {"exp2", "linear"}
        Label gain of NDCG.
    max_grade : float or None
        ERR's maximum grade (None: the largest training label, set by :meth:`prepare`).
    normalize : bool
        Multiply each query's lambdas and hessians by ``log2(1 + S) / S``, S the sum over
        pairs of ``2 |lambda_ij|`` (damps queries with many pairs).
    query_normalization : {"docs", "pairs"} or None
        Divide each query's lambdas and hessians by its documents or its pairs with different
        labels (:meth:`row_weights`; the networks' ``lambda_normalization`` of the same names).
    distance_weight : bool
        Divide each pair's |ΔZ| by ``0.01 + |s_i - s_j|`` unless all of the query's scores are
        equal. LightGBM's ``lambdarank_norm`` is ``normalize`` and ``distance_weight`` together.
    """

    def __init__(
        self,
        z: str = "ndcg",
        k: int | None = 10,
        sigma: float = 1.0,
        truncation: int | None = None,
        gain: str = "exp2",
        max_grade: float | None = None,
        normalize: bool = False,
        distance_weight: bool = False,
        query_normalization: str | None = None,
    ) -> None:
        from ranklearn.data.groups import QUERY_NORMALIZATIONS
        from ranklearn.metrics.gain import gain_code

        if query_normalization is not None and (normalize or query_normalization not in QUERY_NORMALIZATIONS):
            raise ValueError(f"query_normalization must be one of {QUERY_NORMALIZATIONS} without normalize, "
                             f"got {query_normalization!r}")  # fmt: skip

        if z not in Z_KINDS:
            raise ValueError(f"lambda metric must be one of {sorted(Z_KINDS)}, got {z!r}")
        if k is not None and k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if not sigma > 0:
            raise ValueError(f"sigma must be positive, got {sigma}")
        if truncation is not None and truncation <= 0:
            raise ValueError(f"truncation must be positive, got {truncation}")
        self.z = z
        self.kind = Z_KINDS[z]
        self.k = k
        self.sigma = float(sigma)
        self.truncation = truncation
        self.gain = gain
        self.gain_kind = gain_code(gain)
        self.max_grade = max_grade
        self.normalize = bool(normalize)
        self.distance_weight = bool(distance_weight)
        self.query_normalization = query_normalization

    @property
    def name(self) -> str:
        return "ranknet" if self.kind == Z_NONE else "lambdarank"

    def prepare(self, y: np.ndarray, ptr: np.ndarray | None = None) -> None:
        """Check the training labels and fix ERR's maximum grade (the largest label, at least 1)
        unless it was given. ``ptr`` is not needed.

        Raises
        ------
        ValueError
            On negative labels (|ΔZ| needs labels >= 0; plain RankNet takes any), or a label
            above 1000 under the ``2^rel - 1`` gain (NDCG with ``gain="exp2"``, ERR).
        """
        if self.kind != Z_NONE and y.size:
            if y.min() < 0:
                raise ValueError(
                    f"labels must be >= 0 for {self.z} lambdas (got {y.min():g}); "
                    "shift them, or use lambda_metric='none'"
                )
            if (self.gain == "exp2" or self.kind == Z_ERR) and y.max() > 1000:
                raise ValueError(
                    f"label {y.max():g} overflows the 2^rel-1 gain; use gain='linear' (with NDCG or AP lambdas)"
                )
        if self.max_grade is None:
            self.max_grade = float(max(1.0, np.max(y))) if y.size else 1.0

    def get_params(self) -> dict:
        return {
            "name": self.name,
            "lambda_metric": self.z,
            "k": self.k,
            "sigma": self.sigma,
            "truncation": self.truncation,
            "gain": self.gain,
            "max_grade": self.max_grade,
            "normalize": self.normalize,
            "distance_weight": self.distance_weight,
            # only when set: the saved objective_ of the other normalizations stays as it was
            **({"query_normalization": self.query_normalization} if self.query_normalization else {}),
        }

    def row_weights(self, y: np.ndarray, ptr: np.ndarray) -> np.ndarray | None:
        from ranklearn.data.groups import query_normalization_weights

        return None if self.query_normalization is None else query_normalization_weights(y, ptr, self.query_normalization)

    def gradients(
        self,
        scores: np.ndarray,
        y: np.ndarray,
        ptr: np.ndarray,
        grad: np.ndarray | None = None,
        hess: np.ndarray | None = None,
        *,
        side: Mapping[str, np.ndarray] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Gradients and hessians of every document (float64 arrays of len(scores))."""
        grad, hess = output_arrays(scores.shape[0], grad, hess)
        self.pair_gradients(scores, y, ptr, grad, hess)
        return grad, hess

    def pair_gradients(
        self,
        scores: np.ndarray,
        y: np.ndarray,
        ptr: np.ndarray,
        grad: np.ndarray,
        hess: np.ndarray,
        bucket: np.ndarray | None = None,
        t_plus: np.ndarray | None = None,
        t_minus: np.ndarray | None = None,
        costs: np.ndarray | None = None,
    ) -> None:
        """Fill ``grad`` and ``hess``, each pair's lambda divided by position-bias ratios.

        Parameters
        ----------
        bucket : int64 (n_samples,), optional
            Each row's 0-based position bucket (None: no debiasing).
        t_plus, t_minus : float64 (K,)
            Ratios of the more and the less relevant document of a pair, by bucket: a pair's
            lambda and hessian are divided by ``t_plus[bucket[hi]] * t_minus[bucket[lo]]``.
        costs : float64 C-contiguous (2, n_samples), optional
            Set to the pairs' costs per row (see :func:`_query_lambdas`): row 0 each row's costs
            as the more relevant document of its pairs, each divided by the other document's
            ``t_minus``; row 1 its costs as the less relevant one, each divided by the other's
            ``t_plus``.
        """
        big = np.iinfo(np.int64).max
        k = big if (self.k is None or self.kind in (Z_MAP, Z_NONE)) else int(self.k)
        trunc = int(self.truncation) if self.truncation is not None else k
        max_grade = 1.0 if self.max_grade is None else float(self.max_grade)
        empty = np.empty(0)
        lambda_gradients(
            np.ascontiguousarray(scores, dtype=np.float64),
            np.ascontiguousarray(y, dtype=np.float64),
            np.ascontiguousarray(ptr, dtype=np.int64),
            self.kind,
            k,
            self.sigma,
            trunc,
            self.gain_kind,
            max_grade,
            self.normalize,
            self.distance_weight,
            grad,
            hess,
            np.empty(0, np.int64) if bucket is None else np.ascontiguousarray(bucket, dtype=np.int64),
            empty if t_plus is None else np.ascontiguousarray(t_plus, dtype=np.float64),
            empty if t_minus is None else np.ascontiguousarray(t_minus, dtype=np.float64),
            np.empty((0, 0)) if costs is None else costs,
        )
