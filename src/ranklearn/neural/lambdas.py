"""RankNet and LambdaRank lambdas in torch, for a padded batch of queries.

Sign convention (docs/DESIGN.md): lambda_i = dC/ds_i, negative = push document i up.
For a pair where document i is more relevant than j,

    lambda_ij = -sigma / (1 + exp(sigma (s_i - s_j))) * |dZ_ij|

(|dZ_ij| = 1 for RankNet), the derivative of C_ij = |dZ_ij| log(1 + exp(-sigma (s_i - s_j)))
with respect to s_i, and

    lambda_i = sum_{j: i > j} lambda_ij - sum_{j: j > i} lambda_ji.

How it is computed. The documents of every query are put in their current ranking order
(score descending, ties in input order, padding last). Each unordered pair is visited once,
as (t, j) with t ranked above j: its lambda goes to t and its negation to j. The pair
matrix is formed for a block of rows t at a time against the documents below them, so
memory stays at most about ``max_elements`` elements per temporary whatever the list
length. Only rows that can matter are visited: the top ``truncation_level`` positions
with a truncation level, the top k for NDCG@k / ERR@k (pairs with both documents below k
do not change the metric), all positions otherwise; a 10,000-document query costs 10^8
pair terms for RankNet but only 10^4 k for NDCG@k.

|dZ| is the exact change of the metric when documents t and j swap places in the
current ranking:

* NDCG@k: |g_t - g_j| |D(t) - D(j)| / IDCG@k with g = 2^rel - 1 and D(r) = 1 / log2(r + 2)
  for 0-based rank r < k, else 0 (the gain and discount of :mod:`ranklearn.metrics.gain`);
  queries whose ideal DCG is 0 get 0.
* ERR@k: R = (2^rel - 1) / 2^max_grade, ERR = sum_r R_r / (r + 1) prod_{u<r} (1 - R_u) over
  r < k; the swap changes only the terms between the two positions, computed in O(1) per
  pair from prefix products and sums (as :mod:`ranklearn.objectives.lambdas` does).

On the CPU, RankNet's lambdas without truncation (|dZ| = 1: every pair with different labels,
whatever the ranking) come from a numba loop over each list's pairs instead: the same values
(within float32 round-off: the sums are kept in float64) without forming pair matrices, which
on a CPU cost about five times more than the loop (MQ2008 batches).

With ``normalize`` (``lambda_normalization="lightgbm"``), each query's lambdas are multiplied
by LightGBM's ``lambdarank_norm`` factor log2(1 + S) / S, S the sum over its pairs of
2 |lambda_ij| (|dZ| included): the rule of the trees' objective, one function
(:func:`ranklearn.objectives.lambdas.lambdarank_norm_factor`).

Padding, single-document queries and queries with a single label (including all-zero
ones) get lambda 0, never NaN.
"""

from __future__ import annotations

import re

import numpy as np
import torch
from numba import njit

from ranklearn.objectives.lambdas import lambdarank_norm_factors

DEFAULT_MAX_ELEMENTS = 1 << 20  #: elements per [B, rows, L] pair temporary (4 MB in float32)

_METRIC_RE = re.compile(r"^(ndcg|err)(?:@(\d+))?$")


def parse_lambda_metric(spec: str | None) -> tuple[str | None, int | None]:
    """``"ndcg"`` / ``"ndcg@10"`` / ``"err"`` / ``"err@5"`` -> (name, k); ``None`` -> RankNet."""
    if spec is None:
        return None, None
    m = _METRIC_RE.match(str(spec).strip().lower())
    if m is None:
        raise ValueError(f"lambda_metric must be 'ndcg', 'ndcg@k', 'err' or 'err@k', got {spec!r}")
    k = None if m.group(2) is None else int(m.group(2))
    if k is not None and k <= 0:
        raise ValueError(f"lambda_metric {spec!r}: k must be positive")
    return m.group(1), k


class _SortedQueries:
    """A padded batch in ranking order, with the per-position terms of |dZ|."""

    def __init__(
        self,
        scores: torch.Tensor,
        labels: torch.Tensor,
        mask: torch.Tensor,
        metric: str | None,
        k: int | None,
        max_grade: float | None,
    ) -> None:
        B, L = scores.shape
        dtype, device = scores.dtype, scores.device
        zero = torch.zeros((), dtype=dtype, device=device)
        keyed = scores.masked_fill(~mask, float("-inf"))
        self.order = torch.sort(keyed, dim=1, descending=True, stable=True).indices
        self.s = torch.gather(scores, 1, self.order)
        self.y = torch.gather(labels, 1, self.order)
        self.mask = torch.gather(mask, 1, self.order)  # real documents first
        self.metric = metric
        cutoff = L if k is None else min(int(k), L)
        pos = torch.arange(L, device=device, dtype=dtype)
        if metric == "ndcg":
            gains = torch.where(self.mask, torch.exp2(self.y) - 1.0, zero)
            disc = torch.where(pos < cutoff, 1.0 / torch.log2(pos + 2.0), zero)
            ideal = torch.sort(gains.masked_fill(~self.mask, float("-inf")), dim=1, descending=True).values
            ideal = torch.where(self.mask, ideal, zero)  # the mask is a prefix, like the ideal order
            idcg = (ideal * disc).sum(dim=1, keepdim=True)
            safe = torch.where(idcg > 0, idcg, torch.ones_like(idcg))
            self.gnorm = torch.where(idcg > 0, gains / safe, zero)
            self.disc = disc
        elif metric == "err":
            if max_grade is not None:
                top = float(max_grade)
            else:  # the objectives' convention: the largest label, at least 1
                top = max(1.0, float(self.y[self.mask].max())) if bool(self.mask.any()) else 1.0
            R = torch.where(self.mask, (torch.exp2(self.y) - 1.0) / (2.0**top), zero)
            reach = torch.cumprod(1.0 - R, dim=1)
            reach = torch.cat([torch.ones(B, 1, dtype=dtype, device=device), reach[:, :-1]], dim=1)
            disc = torch.where(pos < cutoff, 1.0 / (pos + 1.0), zero)
            term = reach * R * disc
            self.R, self.reach, self.disc, self.term = R, reach, disc, term
            self.before = torch.cumsum(term, dim=1) - term  # sum of the terms above each position
        elif metric is not None:  # pragma: no cover - parse_lambda_metric guards this
            raise ValueError(f"unknown lambda metric {metric!r}")
        # rows (upper positions t) whose pairs can be nonzero
        self.row_limit = cutoff if metric is not None else L

    def weights(self, r0: int, r1: int, c0: int) -> torch.Tensor | None:
        """|dZ_tj| for upper positions t in r0:r1 and lower positions j in c0: (valid where j > t)."""
        if self.metric == "ndcg":
            g, d = self.gnorm, self.disc
            return (g[:, r0:r1, None] - g[:, None, c0:]).abs() * (d[r0:r1, None] - d[None, c0:]).abs()
        if self.metric == "err":
            a, b = self.R[:, r0:r1, None], self.R[:, None, c0:]  # relevance probability at t / at j
            ratio = (1.0 - b) / (1.0 - a).clamp_min(torch.finfo(a.dtype).tiny)
            between = self.before[:, None, c0:] - self.before[:, r0:r1, None] - self.term[:, r0:r1, None]
            delta = (
                self.reach[:, r0:r1, None] * (b - a) * self.disc[r0:r1, None]
                + (ratio - 1.0) * between
                + self.reach[:, None, c0:] * (ratio * a - b) * self.disc[None, c0:]
            )
            return delta.abs()
        return None


@njit(cache=True)
def _ranknet_pairs(
    s: np.ndarray, y: np.ndarray, mask: np.ndarray, sigma: float, lam: np.ndarray, loss: np.ndarray, pair_sum: np.ndarray
) -> None:
    """RankNet lambdas (added to ``lam``), pair cost (``loss``) and sum of the pairs' 2 |lambda_ij|
    (``pair_sum``) of every row of a padded batch."""
    B, L = s.shape
    for r in range(B):
        cost = 0.0
        total = 0.0
        for i in range(L):
            if not mask[r, i]:
                continue
            for j in range(i + 1, L):
                if not mask[r, j] or y[r, i] == y[r, j]:
                    continue
                sgn = 1.0 if y[r, i] > y[r, j] else -1.0  # +1: i is the more relevant
                z = -sigma * sgn * (s[r, i] - s[r, j])  # -sigma (s_more - s_less)
                t = np.exp(-abs(z))  # sigmoid(z) and softplus(z) from one exp, without overflow
                rho = 1.0 / (1.0 + t) if z >= 0 else t / (1.0 + t)
                cost += max(z, 0.0) + np.log1p(t)
                lam[r, i] -= sigma * sgn * rho
                lam[r, j] += sigma * sgn * rho
                total += 2.0 * sigma * rho
        loss[r] = cost
        pair_sum[r] = total


def compute_lambdas(
    scores: torch.Tensor,
    labels: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    sigma: float = 1.0,
    metric: str | None = None,
    k: int | None = None,
    truncation_level: int | None = None,
    max_grade: float | None = None,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
    return_loss: bool = False,
    normalize: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Lambdas lambda_i = dC/ds_i of a padded batch of queries (no autograd graph is built).

    Parameters
    ----------
    scores, labels : Tensor [B, L] (or [L] for one query)
        Current scores and relevance labels; padded entries are ignored.
    mask : bool Tensor [B, L], optional
        True for real documents (default: all).
    sigma : float
        Shape of the pair sigmoid.
    metric : {None, "ndcg", "err"}
        None: RankNet (|dZ| = 1). Otherwise LambdaRank with |dNDCG@k| or |dERR@k|.
    k : int, optional
        Metric cutoff (None = whole list).
    truncation_level : int, optional
        Keep only pairs with at least one document in the current top ``truncation_level``.
    max_grade : float, optional
        ERR's top grade (R = (2^rel - 1) / 2^max_grade); default: max(1, largest label in the batch).
    max_elements : int
        Budget per [B, rows, L] temporary; the pair matrix is formed in row blocks within it.
    return_loss : bool
        Also return the per-query cost sum_{i > j} |dZ_ij| log(1 + exp(-sigma (s_i - s_j))).
    normalize : bool
        Multiply each query's lambdas by log2(1 + S) / S, S the sum of its pairs' 2 |lambda_ij|
        (LightGBM's ``lambdarank_norm``; the loss is not scaled).

    Returns
    -------
    lambdas : Tensor [B, L] (0 at padding) [, loss : Tensor [B]]
    """
    single = scores.dim() == 1
    if single:
        scores, labels = scores[None, :], labels[None, :]
        mask = None if mask is None else mask[None, :]
    if mask is None:
        mask = torch.ones(scores.shape, dtype=torch.bool, device=scores.device)
    if truncation_level is not None and int(truncation_level) <= 0:
        raise ValueError(f"truncation_level must be a positive integer, got {truncation_level!r}")
    with torch.no_grad():
        scores = scores.detach()
        zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
        s = torch.where(mask, scores, zero)  # keep padding finite
        y = torch.where(mask, labels.to(scores.dtype), zero)
        B, L = s.shape
        if metric is None and truncation_level is None and s.device.type == "cpu":
            lam64, loss64, sum64 = np.zeros((B, L)), np.zeros(B), np.zeros(B)
            _ranknet_pairs(s.numpy(), y.numpy(), mask.numpy(), float(sigma), lam64, loss64, sum64)
            if normalize:
                lam64 *= lambdarank_norm_factors(sum64)[:, None]
            lambdas, loss = torch.from_numpy(lam64).to(s.dtype), torch.from_numpy(loss64).to(s.dtype)
            if single:
                lambdas, loss = lambdas[0], loss[0]
            return (lambdas, loss) if return_loss else lambdas
        q = _SortedQueries(s, y, mask, metric, k, max_grade)
        rows_end = q.row_limit if truncation_level is None else min(q.row_limit, int(truncation_level))
        lam = torch.zeros_like(s)  # in ranking order
        loss = torch.zeros(B, dtype=s.dtype, device=s.device)
        pair_sum = torch.zeros(B, dtype=torch.float64, device=s.device) if normalize else None
        step = max(1, int(max_elements) // max(1, B * L))
        positions = torch.arange(L, device=s.device)
        for r0 in range(0, min(rows_end, L - 1), step):
            r1 = min(rows_end, r0 + step)
            c0 = r0 + 1  # documents below the block's first row
            below = positions[None, c0:] > positions[r0:r1, None]
            valid = (q.mask[:, r0:r1, None] & q.mask[:, None, c0:]).logical_and_(below)
            # sgn = +1: the upper document t is more relevant (pair (t, j)); -1: j is (pair (j, t))
            sgn = torch.sign(q.y[:, r0:r1, None] - q.y[:, None, c0:]).mul_(valid)
            # z = -sigma (s_more - s_less); in place: the pair temporaries are the cost of a batch
            z = (q.s[:, r0:r1, None] - q.s[:, None, c0:]).mul_(sgn).mul_(-sigma)
            # to t: lambda_tj = -sigma sigmoid(z) or -lambda_jt = +sigma sigmoid(z), i.e. -sigma sgn sigmoid(z);
            # to j: the negation (sigma applied to the sums)
            term = torch.sigmoid(z).mul_(sgn)
            w = q.weights(r0, r1, c0)
            if w is not None:
                term.mul_(w)
            lam[:, r0:r1] -= sigma * term.sum(dim=2)
            lam[:, c0:] += sigma * term.sum(dim=1)
            if pair_sum is not None:  # |term| = |dZ| sigmoid(z) of every pair
                pair_sum += 2.0 * sigma * term.abs().sum(dim=(1, 2), dtype=torch.float64)
            if return_loss:
                cost = torch.nn.functional.softplus(z).mul_(sgn.abs_())  # 0 for pairs that are none
                if w is not None:
                    cost.mul_(w)
                loss += cost.sum(dim=(1, 2))
        if pair_sum is not None:
            factors = torch.from_numpy(lambdarank_norm_factors(pair_sum.cpu().numpy()))
            lam *= factors.to(device=lam.device, dtype=lam.dtype)[:, None]
        lambdas = torch.empty_like(lam).scatter_(1, q.order, lam)
    if single:
        lambdas, loss = lambdas[0], loss[0]
    return (lambdas, loss) if return_loss else lambdas


def pair_weight_matrix(
    scores: torch.Tensor,
    labels: torch.Tensor,
    *,
    metric: str | None,
    k: int | None = None,
    truncation_level: int | None = None,
    max_grade: float | None = None,
) -> torch.Tensor:
    """|dZ_ij| (times the truncation mask) of one query as an [L, L] matrix in input order.

    1 for every pair with RankNet (metric None). Used by the per-pair training mode, which
    fixes the weights of a query's pairs from the ranking at the start of the query.
    """
    with torch.no_grad():
        s = scores.detach()[None, :]
        y = labels.to(s.dtype)[None, :]
        L = s.shape[1]
        q = _SortedQueries(s, y, torch.ones_like(s, dtype=torch.bool), metric, k, max_grade)
        w = q.weights(0, L, 0)
        w = torch.ones(L, L, dtype=s.dtype, device=s.device) if w is None else w[0]
        w = torch.triu(w, diagonal=1)  # upper position first
        if truncation_level is not None:
            w[int(truncation_level) :, :] = 0
        w = w + w.T
        inv = torch.empty_like(q.order[0]).scatter_(0, q.order[0], torch.arange(L, device=s.device))
        return w[inv][:, inv]
