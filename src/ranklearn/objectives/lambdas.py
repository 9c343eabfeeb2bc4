"""Lambda gradients: RankNet's pairwise cross-entropy scaled by the swap change |ΔZ|.

For a pair where document ``i`` is more relevant than ``j`` (seeds 000, 001, 003)::

    rho_ij    = 1 / (1 + exp(sigma * (s_i - s_j)))
    lambda_ij = -sigma * rho_ij * |ΔZ_ij|          (dC/ds_i: negative pushes i up)
    g_i += lambda_ij,  g_j -= lambda_ij
    h_i += sigma^2 * rho_ij * (1 - rho_ij) * |ΔZ_ij|,  h_j += the same

This is the papers' sign convention; RankLib's walk-through prints ``-g``. ``Z`` is NDCG@k,
ERR@k, AP, or 1 (plain RankNet). Documents are ranked by their current scores with ties in
input order. Only pairs with at least one document in the top ``truncation`` positions are
visited; for NDCG@k and ERR@k every other pair has ΔZ = 0, so truncation at k loses nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ranklearn.metrics._gain import discount, gain

Z_NDCG = 0
Z_ERR = 1
Z_MAP = 2
Z_NONE = 3

Z_KINDS = {"ndcg": Z_NDCG, "err": Z_ERR, "map": Z_MAP, "none": Z_NONE}


@njit(cache=True)
def _cut_discount(position: int, k: int) -> float:
    return discount(position) if position < k else 0.0


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
    g: np.ndarray,
    h: np.ndarray,
) -> None:
    """Accumulate one query's gradients into ``g`` and ``h`` (already zeroed)."""
    n = sc.shape[0]
    if n < 2:
        return
    lo_label = lab.min()
    if lo_label == lab.max():
        return
    order = np.argsort(-sc, kind="mergesort")
    kk = min(k, n)

    inv_norm = 1.0  # 1/ideal DCG@k for NDCG, 1/#relevant for AP
    if kind == Z_NDCG:
        ideal = np.sort(lab)[::-1]
        idcg = 0.0
        for r in range(kk):
            idcg += gain(ideal[r], gain_kind) * discount(r)
        if idcg <= 0.0:
            return
        inv_norm = 1.0 / idcg
    # Prefix arrays in ranked order for O(1) swap deltas of ERR and AP.
    big_r = np.empty(n)
    p_before = np.empty(n + 1)
    t_cum = np.empty(n + 1)
    rel_cnt = np.empty(n)
    q_cum = np.empty(n + 1)
    if kind == Z_ERR:
        scale = 2.0**max_grade
        p_before[0] = 1.0
        t_cum[0] = 0.0
        for r in range(n):
            rr = (2.0 ** lab[order[r]] - 1.0) / scale
            big_r[r] = rr
            term = rr * p_before[r] / (r + 1.0) if r < kk else 0.0
            t_cum[r + 1] = t_cum[r] + term
            p_before[r + 1] = p_before[r] * (1.0 - rr)
    elif kind == Z_MAP:
        cnt = 0.0
        q_cum[0] = 0.0
        for r in range(n):
            is_rel = lab[order[r]] > 0
            if is_rel:
                cnt += 1.0
            rel_cnt[r] = cnt
            q_cum[r + 1] = q_cum[r] + (1.0 / (r + 1.0) if is_rel else 0.0)
        if cnt == 0.0:
            return
        inv_norm = 1.0 / cnt

    sum_lambdas = 0.0
    top = min(truncation, n)
    for a in range(top):
        i = order[a]
        for b in range(a + 1, n):
            j = order[b]
            li = lab[i]
            lj = lab[j]
            if li == lj:
                continue
            if kind == Z_NDCG:
                delta = (
                    abs(gain(li, gain_kind) - gain(lj, gain_kind))
                    * abs(_cut_discount(a, kk) - _cut_discount(b, kk))
                    * inv_norm
                )
            elif kind == Z_ERR:
                ra = big_r[a]
                rb = big_r[b]
                ratio = (1.0 - rb) / (1.0 - ra)
                d = rb * p_before[a] / (a + 1.0) - (t_cum[a + 1] - t_cum[a])
                d += (ratio - 1.0) * (t_cum[b] - t_cum[a + 1])
                if b < kk:
                    d += ra * p_before[b] * ratio / (b + 1.0) - (t_cum[b + 1] - t_cum[b])
                delta = abs(d)
            elif kind == Z_MAP:
                rel_a = li > 0
                rel_b = lj > 0
                if rel_a == rel_b:
                    continue
                between = q_cum[b] - q_cum[a + 1]
                if rel_a:
                    d = rel_cnt[b] / (b + 1.0) - rel_cnt[a] / (a + 1.0) - between
                else:
                    d = (rel_cnt[a] + 1.0) / (a + 1.0) - rel_cnt[b] / (b + 1.0) + between
                delta = abs(d) * inv_norm
            else:
                delta = 1.0
            if delta == 0.0:
                continue
            if li > lj:
                hi = i
                lo = j
            else:
                hi = j
                lo = i
            rho = 1.0 / (1.0 + np.exp(sigma * (sc[hi] - sc[lo])))
            lam = -sigma * rho * delta
            g[hi] += lam
            g[lo] -= lam
            hw = sigma * sigma * rho * (1.0 - rho) * delta
            h[hi] += hw
            h[lo] += hw
            sum_lambdas -= 2.0 * lam
    if normalize and sum_lambdas > 0.0:
        # LightGBM's lambdarank_norm: damp queries with many large lambdas.
        factor = np.log2(1.0 + sum_lambdas) / sum_lambdas
        for r in range(n):
            g[r] *= factor
            h[r] *= factor


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
    grad: np.ndarray,
    hess: np.ndarray,
) -> None:
    """Fill ``grad`` and ``hess`` (float64, length n_samples) for every query, in parallel."""
    for q in prange(ptr.shape[0] - 1):
        s = ptr[q]
        e = ptr[q + 1]
        grad[s:e] = 0.0
        hess[s:e] = 0.0
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
            grad[s:e],
            hess[s:e],
        )


class LambdaObjective:
    """Lambda gradients for one choice of Z and its conventions.

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
        LightGBM-style per-query lambda normalization.
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
    ) -> None:
        from ranklearn.metrics._gain import gain_code

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
        self.gain_kind = gain_code(gain)
        self.max_grade = max_grade
        self.normalize = bool(normalize)

    def prepare(self, y: np.ndarray) -> None:
        """Fix data-dependent conventions (ERR's maximum grade) from the training labels."""
        if self.max_grade is None:
            self.max_grade = float(max(1.0, np.max(y))) if y.size else 1.0

    def gradients(
        self,
        scores: np.ndarray,
        y: np.ndarray,
        ptr: np.ndarray,
        grad: np.ndarray | None = None,
        hess: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Gradients and hessians of every document (float64 arrays of len(scores))."""
        n = scores.shape[0]
        grad = np.empty(n) if grad is None else grad
        hess = np.empty(n) if hess is None else hess
        big = np.iinfo(np.int64).max
        k = big if (self.k is None or self.kind in (Z_MAP, Z_NONE)) else int(self.k)
        if self.truncation is not None:
            trunc = int(self.truncation)
        else:
            trunc = k
        max_grade = 1.0 if self.max_grade is None else float(self.max_grade)
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
            grad,
            hess,
        )
        return grad, hess
