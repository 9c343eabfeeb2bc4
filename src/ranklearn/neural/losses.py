"""Losses of the neural rankers: the upstream gradient of the scores of a padded batch of queries.

A :class:`Loss` turns the scores of a batch of queries, laid out as padded tensors
``[..., B, L]`` (the leading dimension, when there is one, is the networks of an
:class:`~ranklearn.neural.scorer.MLPScorer`, each ranking on its own scores), into

* the gradient dC/ds of the loss with respect to every score (0 at padding), which the
  trainer back-propagates once through the network (``scores.backward(grad)``), and
* the loss of every query (``[..., B]``), reported per epoch.

Two families share that interface:

* lambda losses (:class:`LambdaLoss`: RankNet, and LambdaRank with |dNDCG@k| or |dERR@k|
  pair weights) compute the gradient directly, pair by pair
  (:func:`~ranklearn.neural.lambdas.compute_lambdas`); LambdaRank has no loss whose
  gradient the lambdas are, so their reported loss is the |dZ|-weighted pair cost;
* differentiable listwise losses (:class:`ListNetLoss`, :class:`ListMLELoss`,
  :class:`ApproxNDCGLoss`, :class:`NeuralNDCGLoss`) define a torch loss per query and get
  the gradient by autograd.

Per-document weights (``sample_weight`` times the query normalization of
:class:`~ranklearn.neural.training.QuerySet`) multiply the gradient, for every loss alike;
the reported loss is before them. Padding never contributes to a loss or receives a gradient.

:func:`get_loss` resolves a loss by name (``"ranknet"``, ``"lambdarank"``, ``"listnet"``,
``"listmle"``, ``"approxndcg"``, ``"neuralndcg"``); another loss is one subclass of
:class:`AutogradLoss` (its :meth:`~AutogradLoss.query_loss`) or of :class:`Loss`.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch

from ranklearn.neural.lambdas import DEFAULT_MAX_ELEMENTS, compute_lambdas, parse_lambda_metric
from ranklearn.objectives.unbiased import checked_clip, propensity_per_rank

__all__ = [
    "Loss",
    "AutogradLoss",
    "LambdaLoss",
    "ListNetLoss",
    "ListMLELoss",
    "ApproxNDCGLoss",
    "NeuralNDCGLoss",
    "IPWLoss",
    "DLALoss",
    "RegressionEMLoss",
    "LOSSES",
    "CLICK_LOSSES",
    "get_loss",
]


class Loss(ABC):
    """Upstream gradient and loss of a padded batch of queries (see the module docstring)."""

    #: name in :func:`get_loss`
    name: str = ""
    #: the per-document side data this loss reads (e.g. ``("position",)``); a loss that reads
    #: some gets them as ``gradient(..., side={name: Tensor [B, L]})``, the others never see them
    side_keys: tuple[str, ...] = ()
    #: True for a loss that learns from every list, even one whose labels are all equal (a
    #: pointwise click model learns from lists without clicks); False: only lists with a pair
    every_list: bool = False
    #: True for a loss that fits a model of its own beside the ranker (DLA's propensities,
    #: regression EM's theta): it gets the documents' ``weight`` too, ``gradient(..., weight=)``,
    #: and weighs that model's step by it, so that a distinct session merged with its count
    #: (``sample_weight``) counts there as that many sessions, as it does in the ranker's gradient
    weighs_own_model: bool = False

    def __call__(
        self,
        scores: torch.Tensor,
        labels: torch.Tensor,
        mask: torch.Tensor,
        weight: torch.Tensor | None = None,
        side: dict[str, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Gradient dC/ds and per-query loss of a padded batch.

        Parameters
        ----------
        scores : Tensor [..., B, L]
            Scores (their graph, if any, is not used); the leading dimensions are
            independent rankers (networks) scored on the same queries.
        labels : Tensor [B, L]
            Relevance labels (any value at padding).
        mask : bool Tensor [B, L]
            True for real documents; every query's real documents come first.
        weight : Tensor [B, L], optional
            Per-document multiplier of the gradient (sample weight and normalization).
        side : dict of Tensor [B, L], optional
            Per-document side data of the fit (``"position"``: the 1-based display rank; 0 at
            padding). Passed on to :meth:`gradient` as ``side=`` when the loss names keys in
            :attr:`side_keys`, restricted to those.

        Returns
        -------
        grad : Tensor [..., B, L]
            dC/ds (negative = push the document up), 0 at padding, times ``weight``.
        loss : Tensor [..., B]
            Loss of every query, before ``weight``.
        """
        extra: dict[str, Any] = {"weight": weight} if self.weighs_own_model else {}
        if self.side_keys:
            missing = [k for k in self.side_keys if side is None or k not in side]
            if missing:
                raise ValueError(f"loss {self.name!r} needs {', '.join(missing)} per document: fit with {missing[0]}=")
            extra["side"] = {k: side[k] for k in self.side_keys}
        grad, loss = self.gradient(scores.detach(), labels.to(scores.dtype), mask, **extra)
        if weight is not None:
            grad = grad * weight
        return grad, loss

    @abstractmethod
    def gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Unweighted (dC/ds [..., B, L], loss [..., B]); ``scores`` is detached."""

    def weighted_gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, relevance_weight: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(dC/ds, loss) of the loss with each document's relevance counted ``relevance_weight``
        [B, L] times: the inverse-propensity-weighted form of the loss on clicks (:class:`IPWLoss`).

        Raises
        ------
        NotImplementedError
            For a loss without a weighted form.
        """
        raise NotImplementedError(f"loss {self.name or type(self).__name__!r} has no propensity-weighted form")


@dataclass(frozen=True)
class LambdaLoss(Loss):
    """RankNet (``metric=None``) or LambdaRank (|dZ| of ``metric@k``) lambdas.

    The cost of a pair (i more relevant than j) is |dZ_ij| log(1 + exp(-sigma (s_i - s_j)))
    (Burges et al. 2005, 2006) and lambda_i = dC/ds_i sums it over i's pairs; |dZ_ij| = 1 for
    RankNet, the change of NDCG@k or ERR@k when i and j swap places for LambdaRank.
    ``normalize`` (the rankers' ``lambda_normalization="lightgbm"``) multiplies each query's
    lambdas by LightGBM's log2(1 + S) / S, S the sum of its pairs' 2 |lambda_ij|.
    See :func:`~ranklearn.neural.lambdas.compute_lambdas` for the parameters.
    """

    sigma: float = 1.0
    metric: str | None = None
    k: int | None = None
    truncation_level: int | None = None
    max_grade: float | None = None
    max_elements: int = DEFAULT_MAX_ELEMENTS
    normalize: bool = False

    def __post_init__(self) -> None:
        if self.metric not in (None, "ndcg", "err"):
            raise ValueError(f"metric must be None (RankNet), 'ndcg' or 'err', got {self.metric!r}")
        sigma = self.sigma
        if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not 0 < sigma < np.inf:
            raise ValueError(f"sigma must be a positive number, got {sigma!r}")
        for field, value in (("truncation_level", self.truncation_level), ("k", self.k)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
                raise ValueError(f"{field} must be a positive integer or None, got {value!r}")
        top = self.max_grade
        if top is not None and (isinstance(top, bool) or not isinstance(top, (int, float)) or not 0 < top < np.inf):
            raise ValueError(f"max_grade must be a positive number or None, got {top!r}")

    @property
    def name(self) -> str:  # type: ignore[override]
        return "ranknet" if self.metric is None else "lambdarank"

    def gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        lead, (B, L) = scores.shape[:-2], scores.shape[-2:]
        n = int(np.prod(lead, dtype=np.int64))
        # the networks' lists are rows of one [n B, L] batch (the pair chunks depend on its shape)
        lam, loss = compute_lambdas(
            scores.reshape(n * B, L),
            labels.repeat(n, 1),
            mask.repeat(n, 1),
            sigma=self.sigma,
            metric=self.metric,
            k=self.k,
            truncation_level=self.truncation_level,
            max_grade=self.max_grade,
            max_elements=self.max_elements,
            return_loss=True,
            normalize=self.normalize,
        )
        return lam.reshape(scores.shape), loss.reshape(*lead, B)

    def weighted_gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, relevance_weight: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Pairs (i, j) with y_i > y_j weighted by the weight of the more relevant document i
        (Joachims, Swaminathan, Schnabel, WSDM 2017): cost ``w_i |dZ_ij| log(1 + exp(-sigma (s_i - s_j)))``,
        |dZ_ij| = 1 (RankNet) or the change of NDCG@k of the current ranking (LambdaRank, from the
        labels' gains 2^y - 1). The whole [B, L, L] pair matrix at once: meant for click lists (a
        session's top 10 or so), not for lists of thousands of documents.

        Raises
        ------
        NotImplementedError
            For ERR lambdas or a truncation level (no weighted form here).
        """
        if self.metric == "err" or self.truncation_level is not None:
            raise NotImplementedError("the propensity-weighted lambdas support RankNet and NDCG lambdas without truncation_level")
        real = mask[..., :, None] & mask[..., None, :]
        pairs = (labels[..., :, None] > labels[..., None, :]) & real
        weight = pairs.to(scores.dtype) * relevance_weight.to(scores.dtype)[..., :, None]
        if self.metric == "ndcg":
            weight = weight * _delta_ndcg(scores, labels, mask, self.k)
        diff = self.sigma * (scores[..., :, None] - scores[..., None, :])
        force = self.sigma * weight * torch.sigmoid(-diff)
        grad = force.sum(dim=-2) - force.sum(dim=-1)
        return grad, (weight * torch.nn.functional.softplus(-diff)).sum(dim=(-2, -1))


def _delta_ndcg(scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, k: int | None) -> torch.Tensor:
    """|NDCG@k change| when documents i and j swap places in the ranking by ``scores`` (ties in
    input order), [..., B, L, L]; gains 2^y - 1, 0 for a query whose ideal DCG@k is 0."""
    zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
    L = mask.shape[-1]
    order = torch.sort(scores.masked_fill(~mask, float("-inf")), dim=-1, descending=True, stable=True).indices
    rank = torch.argsort(order, dim=-1, stable=True).to(scores.dtype)
    disc = 1.0 / torch.log2(rank + 2.0)
    if k is not None:
        disc = torch.where(rank < k, disc, zero)
    gains = torch.where(mask, torch.exp2(labels) - 1.0, zero)
    pos = torch.arange(L, dtype=scores.dtype, device=scores.device)
    ideal_disc = 1.0 / torch.log2(pos + 2.0)
    if k is not None:
        ideal_disc = torch.where(pos < k, ideal_disc, zero)
    idcg = (torch.sort(gains, dim=-1, descending=True).values * ideal_disc).sum(dim=-1)
    safe = torch.where(idcg > 0, idcg, torch.ones_like(idcg))
    delta = (gains[..., :, None] - gains[..., None, :]).abs() * (disc[..., :, None] - disc[..., None, :]).abs()
    return torch.where((idcg > 0)[..., None, None], delta / safe[..., None, None], zero)


class AutogradLoss(Loss):
    """A loss defined per query in torch; its gradient comes from autograd."""

    @abstractmethod
    def query_loss(self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Differentiable loss of every query, [..., B], from scores [..., B, L] (labels, mask [B, L]).

        Padding must neither change the loss nor receive a gradient.
        """

    def weighted_query_loss(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, relevance_weight: torch.Tensor
    ) -> torch.Tensor:
        """:meth:`query_loss` with each document's relevance counted ``relevance_weight`` times
        (see :meth:`Loss.weighted_gradient`); a loss without such a form raises NotImplementedError."""
        raise NotImplementedError(f"loss {self.name or type(self).__name__!r} has no propensity-weighted form")

    def gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return _autograd(self.query_loss, scores, mask, labels, mask)

    def weighted_gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, relevance_weight: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        w = relevance_weight.to(scores.dtype)
        return _autograd(self.weighted_query_loss, scores, mask, labels, mask, w)


def _autograd(query_loss: Callable[..., torch.Tensor], scores: torch.Tensor, mask: torch.Tensor, *args: Any):
    """(d loss / d scores, 0 at padding; loss [..., B]) of ``query_loss(scores, *args)``."""
    with torch.enable_grad():
        s = scores.clone().requires_grad_(True)
        loss = query_loss(s, *args)
        (grad,) = torch.autograd.grad(loss.sum(), s)
    return grad.masked_fill(~mask, 0.0), loss.detach()


def _masked_log_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log softmax over the real documents of every list; 0 (not -inf) at padding."""
    logp = torch.log_softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return logp.masked_fill(~mask, 0.0)


class ListNetLoss(AutogradLoss):
    """ListNet's top-one loss (Cao et al. 2007): cross-entropy of the top-one probabilities.

    With phi = exp, the top-one probability of document i is softmax over the query of its
    label (target) and of its score (model); the loss is -sum_i P_y(i) log P_s(i), whose
    gradient is P_s(i) - P_y(i). A query of one document has loss and gradient 0.
    """

    name = "listnet"

    def query_loss(self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        target = torch.softmax(labels.masked_fill(~mask, float("-inf")), dim=-1).masked_fill(~mask, 0.0)
        return -(target * _masked_log_softmax(scores, mask)).sum(dim=-1)

    def weighted_query_loss(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, relevance_weight: torch.Tensor
    ) -> torch.Tensor:
        """The propensity-weighted softmax cross-entropy (Ai, Bi, Luo, Guo, Croft, SIGIR 2018):
        ``-sum_i y_i w_i log softmax(s)_i``, gradient ``(sum_j y_j w_j) softmax(s)_i - y_i w_i``."""
        r = (labels * relevance_weight).masked_fill(~mask, 0.0)
        return -(r * _masked_log_softmax(scores, mask)).sum(dim=-1)


class ListMLELoss(AutogradLoss):
    """ListMLE (Xia et al. 2008): minus the Plackett-Luce log-likelihood of the label order.

    For the documents in a ground-truth order pi (label descending),
    loss = -sum_r [s_pi(r) - log sum_{u >= r} exp(s_pi(u))]. Documents with equal labels are
    ordered at random, anew on every call (so on every epoch), from ``random_state``.

    Parameters
    ----------
    random_state : int, numpy Generator or None
        Seed of the tie-breaking order.
    """

    name = "listmle"

    def __init__(self, random_state: int | np.random.Generator | None = None) -> None:
        self.rng = np.random.default_rng(random_state)

    def ground_truth_order(self, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """[B, L] positions of the documents by label descending, ties at random, padding last."""
        shuffle = torch.as_tensor(np.argsort(self.rng.random(labels.shape), axis=-1), device=labels.device)
        keyed = torch.gather(labels.masked_fill(~mask, float("-inf")), -1, shuffle)
        by_label = torch.sort(keyed, dim=-1, descending=True, stable=True).indices
        return torch.gather(shuffle, -1, by_label)

    def query_loss(self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.terms(scores, labels, mask, None)

    def weighted_query_loss(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, relevance_weight: torch.Tensor
    ) -> torch.Tensor:
        """The Plackett-Luce terms of the relevant documents (label > 0: the clicked ones), each
        weighted by its ``w``: ``sum_{r: y_pi(r) > 0} w_pi(r) [log sum_{u >= r} exp(s_pi(u)) - s_pi(r)]``
        (the unclicked documents' order is unknown, so they are only the competitors)."""
        return self.terms(scores, labels, mask, relevance_weight.masked_fill(labels <= 0, 0.0))

    def terms(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, weight: torch.Tensor | None
    ) -> torch.Tensor:
        """Sum of the (optionally per-document ``weight`` [B, L]-weighted) Plackett-Luce terms."""
        order = self.ground_truth_order(labels, mask)
        real = torch.gather(mask, -1, order)  # a prefix of every row
        s = torch.gather(scores, -1, order.expand(scores.shape))
        s = s.masked_fill(~real, float("-inf"))
        # log sum_{u >= r} exp(s_u): logcumsumexp of the reversed list
        tail = torch.flip(torch.logcumsumexp(torch.flip(s, [-1]), dim=-1), [-1])
        terms = torch.where(real, tail - s, torch.zeros((), dtype=s.dtype, device=s.device))
        if weight is not None:
            terms = terms * torch.gather(weight, -1, order)
        return terms.sum(dim=-1)


def _gains(labels: torch.Tensor, mask: torch.Tensor, weight: torch.Tensor | None) -> torch.Tensor:
    """Gains 2^y - 1 (times ``weight`` when given), 0 at padding."""
    gains = torch.exp2(labels) - 1.0
    if weight is not None:
        gains = gains * weight
    return torch.where(mask, gains, torch.zeros((), dtype=gains.dtype, device=gains.device))


class ApproxNDCGLoss(AutogradLoss):
    """ApproxNDCG (Qin et al. 2010): minus NDCG computed with smooth ranks.

    The rank of document i is approximated by pi_i = 1 + sum_{j != i} sigmoid((s_j - s_i) / T)
    and NDCG by sum_i (2^y_i - 1) / log2(1 + pi_i) / IDCG (full list). Queries whose ideal DCG
    is 0 have loss 0. Costs B x L^2 per batch (all pairs), like the lambdas without a cutoff.

    Parameters
    ----------
    temperature : float
        T > 0; smaller is closer to the true ranks and less smooth.
    """

    name = "approxndcg"

    def __init__(self, temperature: float = 1.0) -> None:
        if not (isinstance(temperature, (int, float)) and np.isfinite(temperature) and temperature > 0):
            raise ValueError(f"temperature must be a positive number, got {temperature!r}")
        self.temperature = float(temperature)

    def query_loss(self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.weighted_query_loss(scores, labels, mask, None)

    def weighted_query_loss(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, relevance_weight: torch.Tensor | None
    ) -> torch.Tensor:
        """With weights: every gain ``2^y - 1`` times its document's ``w`` in the DCG (the
        propensity-weighted DCG estimate), over the ideal DCG of the unweighted gains. The weighted
        gains' ideal DCG would cancel the weights: a list's only click would count 1 at any rank."""
        zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
        pair = mask[..., :, None] & mask[..., None, :]
        pair = pair & ~torch.eye(mask.shape[-1], dtype=torch.bool, device=mask.device)
        above = torch.sigmoid((scores[..., None, :] - scores[..., :, None]) / self.temperature)
        rank = 1.0 + torch.where(pair, above, zero).sum(dim=-1)
        gains = _gains(labels, mask, relevance_weight)
        ideal = torch.sort(_gains(labels, mask, None), dim=-1, descending=True).values  # padding's 0 sorts last
        pos = torch.arange(mask.shape[-1], dtype=scores.dtype, device=scores.device)
        idcg = (ideal / torch.log2(pos + 2.0)).sum(dim=-1)
        dcg = (gains / torch.log2(1.0 + rank)).sum(dim=-1)
        safe = torch.where(idcg > 0, idcg, torch.ones_like(idcg))
        return torch.where(idcg > 0, -dcg / safe, zero)


class NeuralNDCGLoss(AutogradLoss):
    """NeuralNDCG (Pobrotyn & Bialobrzeski 2021): minus NDCG@k with a relaxed sort.

    NeuralSort (Grover et al. 2019) relaxes the sorting permutation of a list of n scores
    into the row-stochastic matrix P[r, :] = softmax_j(((n + 1 - 2r) s_j - sum_u |s_j - s_u|) / T),
    r = 1..n, whose row r tends to the indicator of the r-th highest score as T -> 0;
    ``sinkhorn_iterations`` rounds of column then row normalization make it (nearly) doubly
    stochastic. NeuralNDCG@k = sum_{r <= k} (P g)_r / log2(r + 1) / IDCG@k with gains
    g = 2^y - 1. Queries whose ideal DCG is 0 have loss 0. Autograd keeps every Sinkhorn
    round: memory grows as ``sinkhorn_iterations`` x B x L^2 (fine for LETOR lists of a few
    hundred documents; lower the iterations or ``batch_queries`` for longer ones).

    Parameters
    ----------
    temperature : float
        T > 0 of NeuralSort.
    k : int or None
        NDCG cutoff (None: the whole list).
    sinkhorn_iterations : int
        Normalization rounds (a fixed number, so the loss is one smooth function).
    """

    name = "neuralndcg"

    def __init__(self, temperature: float = 1.0, k: int | None = None, sinkhorn_iterations: int = 50) -> None:
        if not (isinstance(temperature, (int, float)) and np.isfinite(temperature) and temperature > 0):
            raise ValueError(f"temperature must be a positive number, got {temperature!r}")
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise ValueError(f"k must be a positive integer or None, got {k!r}")
        it = sinkhorn_iterations
        if isinstance(it, bool) or not isinstance(it, (int, np.integer)) or it < 0:
            raise ValueError(f"sinkhorn_iterations must be a non-negative integer, got {it!r}")
        self.temperature = float(temperature)
        self.k = None if k is None else int(k)
        self.sinkhorn_iterations = int(it)

    def soft_permutation(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """[..., B, L (positions), L (documents)] relaxed permutation; 0 outside the real block."""
        zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
        block = mask[..., :, None] & mask[..., None, :]  # (position, document) both within the list
        spread = torch.where(block, (scores[..., :, None] - scores[..., None, :]).abs(), zero).sum(dim=-1)
        n = mask.sum(dim=-1, keepdim=True).to(scores.dtype)  # [B, 1]
        rank = torch.arange(1, mask.shape[-1] + 1, dtype=scores.dtype, device=scores.device)
        coef = n + 1.0 - 2.0 * rank  # [B, L]: one per position
        logits = (coef[..., :, None] * scores[..., None, :] - spread[..., None, :]) / self.temperature
        # padded documents get no mass; padded positions are all-padding rows, emptied below
        logits = logits.masked_fill(~mask[..., None, :], float("-inf")).masked_fill(~mask[..., :, None], 0.0)
        P = torch.where(block, torch.softmax(logits, dim=-1), zero)
        # padding's lines (all 0) are divided by 1: a tiny divisor would blow up their gradient
        # (which the 0 entries then turn into NaN); an underflowed real line stays 0
        cols, rows = mask[..., None, :], mask[..., :, None]
        one = torch.ones((), dtype=scores.dtype, device=scores.device)
        for _ in range(self.sinkhorn_iterations):
            P = P / torch.where(cols, P.sum(dim=-2, keepdim=True).clamp_min(1e-10), one)
            P = P / torch.where(rows, P.sum(dim=-1, keepdim=True).clamp_min(1e-10), one)
        return P

    def query_loss(self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.weighted_query_loss(scores, labels, mask, None)

    def weighted_query_loss(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, relevance_weight: torch.Tensor | None
    ) -> torch.Tensor:
        """With weights: every gain times its document's ``w`` in the DCG, over the ideal DCG of
        the unweighted gains (as :class:`ApproxNDCGLoss`)."""
        zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
        gains = _gains(labels, mask, relevance_weight)
        L = mask.shape[-1]
        pos = torch.arange(L, dtype=scores.dtype, device=scores.device)
        disc = 1.0 / torch.log2(pos + 2.0)
        if self.k is not None:
            disc = torch.where(pos < self.k, disc, zero)
        ideal = torch.sort(_gains(labels, mask, None), dim=-1, descending=True).values  # padding's 0 sorts last
        idcg = (ideal * disc).sum(dim=-1)
        placed = (self.soft_permutation(scores, mask) * gains[..., None, :]).sum(dim=-1)  # gain at each position
        dcg = (placed * disc).sum(dim=-1)
        safe = torch.where(idcg > 0, idcg, torch.ones_like(idcg))
        return torch.where(idcg > 0, -dcg / safe, zero)


def _check_propensity(propensity: Any) -> tuple[float, ...]:
    """Propensities per rank from 1 (a sequence, or an object with ``.propensity`` such as
    :class:`ranklearn.clicks.Propensity`) as a tuple of positive finite floats."""
    return tuple(float(v) for v in propensity_per_rank(propensity))


def _base_loss(base: str | Loss, sigma: float) -> Loss:
    """The loss weighted by an unbiased loss: a name of :func:`get_loss` (RankNet and LambdaRank
    take ``sigma``) or a Loss with a :meth:`~Loss.weighted_gradient`."""
    if isinstance(base, Loss):
        loss = base
    elif isinstance(base, str) and base.strip().lower() in LOSSES:
        key = base.strip().lower()
        loss = get_loss(key, sigma=sigma) if key in ("ranknet", "lambdarank") else get_loss(key)
    else:
        raise ValueError(f"base must be one of {sorted(LOSSES)} or a Loss object, got {base!r}")
    if type(loss).weighted_gradient is Loss.weighted_gradient or (
        isinstance(loss, AutogradLoss) and type(loss).weighted_query_loss is AutogradLoss.weighted_query_loss
    ):
        raise ValueError(f"base loss {loss.name or type(loss).__name__!r} has no propensity-weighted form")
    if isinstance(loss, LambdaLoss) and (loss.metric == "err" or loss.truncation_level is not None or loss.normalize):
        raise ValueError(
            f"base loss {loss.name!r} has no propensity-weighted form with ERR, a truncation_level or normalize"
        )
    if loss.side_keys:
        raise ValueError(f"base loss {loss.name!r} reads side data itself; give a loss of labels and scores")
    return loss


def _rank_index(position: torch.Tensor, n_ranks: int) -> torch.Tensor:
    """0-based index of every document's rank, ranks past ``n_ranks`` sharing the last one."""
    return position.long().clamp(min=1, max=n_ranks) - 1


@dataclass(frozen=True)
class IPWLoss(Loss):
    """Inverse propensity weighting of clicks (labels: clicked 0/1, or click counts), by the rank
    each document was shown at (``fit(..., position=)``), for any loss with a weighted form.

    Each clicked document counts ``w = 1 / max(propensity[k - 1], clip)`` for its rank ``k``
    (ranks past the end take the last propensity), the unbiased estimate of relevance under the
    position-based model (Wang, Bendersky, Metzler, Najork, SIGIR 2016; Joachims, Swaminathan,
    Schnabel, WSDM 2017), through the base loss's :meth:`~Loss.weighted_gradient`:

    * ``"listnet"``: the propensity-weighted softmax cross-entropy (Ai et al., SIGIR 2018),
      ``-sum_i c_i w_i log softmax(s)_i``, gradient ``(sum_j c_j w_j) softmax(s)_i - c_i w_i``;
    * ``"ranknet"`` / ``"lambdarank"``: the pairs ``(i, j)`` with ``c_i > c_j`` weighted by ``w_i``
      (Joachims et al. 2017), ``w_i |dZ_ij| log(1 + exp(-sigma (s_i - s_j)))`` (|dZ| = 1 for RankNet,
      |dNDCG@k| for LambdaRank);
    * ``"listmle"``: the Plackett-Luce terms of the clicked documents, each weighted by its ``w``;
    * ``"approxndcg"`` / ``"neuralndcg"``: the gains ``2^c_i - 1`` times ``w_i`` (the IPW estimate of
      DCG), over the ideal DCG of the unweighted gains.

    The rankers' ``loss="ipw"`` (the command line's ``--loss ipw``) is this loss over the ranker's own
    loss, with the rankers' ``propensity`` and ``propensity_clip``.

    Parameters
    ----------
    propensity : sequence of float, or Propensity
        Examination propensity per rank from 1 (any scale), > 0; e.g.
        ``ranklearn.clicks.estimate_propensity(log, "em")`` or the simulated ``theta``.
    base : str or Loss
        A name of :func:`get_loss` or a Loss object with a weighted form (for its parameters,
        e.g. ``get_loss("lambdarank", metric="ndcg@10")``).
    clip : float or None
        Propensities below it count as it (weights at most ``1 / clip``).
    sigma : float
        RankNet's and LambdaRank's sigmoid steepness when ``base`` is their name.
    """

    propensity: tuple[float, ...] = ()
    base: str | Loss = "listnet"
    clip: float | None = None
    sigma: float = 1.0
    name: ClassVar[str] = "ipw"
    side_keys: ClassVar[tuple[str, ...]] = ("position",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "propensity", _check_propensity(self.propensity))
        object.__setattr__(self, "clip", checked_clip(self.clip))
        if isinstance(self.sigma, bool) or not isinstance(self.sigma, (int, float)) or not 0 < self.sigma < np.inf:
            raise ValueError(f"sigma must be a positive number, got {self.sigma!r}")
        object.__setattr__(self, "base_loss", _base_loss(self.base, float(self.sigma)))

    def inverse_weights(self, position: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``1 / max(propensity, clip)`` of every document's rank [B, L] (0 at padding)."""
        p = torch.tensor(self.propensity, dtype=torch.float64, device=position.device)
        if self.clip is not None:
            p = p.clamp(min=self.clip)
        return (1.0 / p[_rank_index(position, p.shape[0])]).masked_fill(~mask, 0.0)

    def position_bias(self) -> dict[str, np.ndarray]:
        """The propensities used (clipped), relative to rank 1: ``{"propensity": ...}``."""
        p = np.maximum(np.asarray(self.propensity), self.clip or 0.0)
        return {"propensity": p / p[0]}

    def gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, *, side: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        w = self.inverse_weights(side["position"], mask).to(scores.dtype)
        return self.base_loss.weighted_gradient(scores, labels.masked_fill(~mask, 0.0), mask, w)


def _list_weights(weight: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor | None:
    """Every list's weight [B] (float64): the mean of its documents' ``weight`` (a sample weight
    per row weighs its query by the mean, as the rankers' ``fit`` says); None without weights."""
    if weight is None:
        return None
    w = weight.to(torch.float64).masked_fill(~mask, 0.0)
    return w.sum(dim=-1) / mask.sum(dim=-1).clamp(min=1)


class DLALoss(Loss):
    """The Dual Learning Algorithm (Ai, Bi, Luo, Guo, Croft, "Unbiased learning to rank with
    unbiased propensity estimation", SIGIR 2018): a propensity model learned jointly with the ranker.

    The propensity model is one logit ``g_k`` per rank ``k = 1..max_rank`` (ranks past it share
    the last). On every batch of click lists (labels: clicked 0/1):

    * the ranker gets the base loss's propensity-weighted gradient (:class:`IPWLoss`'s forms) with
      ``w_i = 1 / max(exp(g_{k_i} - g_{k_top}), clip)``, the inverse of the propensity of i's rank
      relative to the list's top rank (``P_top / P_i`` with ``P = softmax(g)`` over the list);
    * the propensity model takes one Adam step (``learning_rate``) on the inverse-relevance-weighted
      softmax cross-entropy ``-sum_i c_i v_i log softmax_list(g)_{k_i}`` per list (averaged over the
      lists, weighted by their sample weights when the fit has them), with
      ``v_i = 1 / max(exp(s_i - s_top), clip)``, the ranker's relevance of the top document over
      i's (``R_top / R_i`` with ``R = softmax(s)``; the networks' mean of it).

    Each is the other's unbiased estimate under the position-based model (examination and
    relevance play symmetric parts). The learned propensities relative to rank 1 are
    :meth:`position_bias` (the neural rankers' ``position_bias_`` after the fit).

    Parameters
    ----------
    base : str or Loss
        The ranker's loss (see :class:`IPWLoss`); DLA's paper uses ``"listnet"`` (softmax).
    max_rank : int
        Ranks of the propensity model.
    learning_rate : float
        Adam's step for the propensity logits.
    clip : float or None
        Floor of both relative propensities and relevances (weights at most ``1 / clip``).
    sigma : float
        RankNet's and LambdaRank's sigmoid steepness when ``base`` is their name.
    """

    name = "dla"
    side_keys = ("position",)
    weighs_own_model = True

    def __init__(
        self,
        base: str | Loss = "listnet",
        max_rank: int = 10,
        learning_rate: float = 0.05,
        clip: float | None = 0.01,
        sigma: float = 1.0,
    ) -> None:
        if isinstance(max_rank, bool) or not isinstance(max_rank, (int, np.integer)) or max_rank < 1:
            raise ValueError(f"max_rank must be a positive integer, got {max_rank!r}")
        lr = learning_rate
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr < np.inf:
            raise ValueError(f"learning_rate must be a positive number, got {lr!r}")
        clip = checked_clip(clip)
        self.base = base
        self.base_loss = _base_loss(base, float(sigma))
        self.max_rank = int(max_rank)
        self.learning_rate = float(lr)
        self.clip = clip
        self.sigma = float(sigma)
        self.logits = torch.zeros(self.max_rank, dtype=torch.float64, requires_grad=True)
        self.optimizer = torch.optim.Adam([self.logits], lr=self.learning_rate)

    def position_bias(self) -> dict[str, np.ndarray]:
        """The learned propensities ``exp(g_k - g_1)`` of ranks 1..max_rank: ``{"propensity": ...}``."""
        g = self.logits.detach().cpu().numpy()
        return {"propensity": np.exp(g - g[0])}

    def _inverse(self, values: torch.Tensor, top: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``1 / max(exp(values - values[top]), clip)`` per document (0 at padding)."""
        ratio = torch.exp(values - torch.gather(values, -1, top))
        if self.clip is not None:
            ratio = ratio.clamp(min=self.clip)
        return (1.0 / ratio).masked_fill(~mask, 0.0)

    def gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, *,
        side: dict[str, torch.Tensor], weight: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        if self.logits.device != scores.device:  # the propensity model lives beside the scores
            self.logits = self.logits.detach().to(scores.device).requires_grad_(True)
            self.optimizer = torch.optim.Adam([self.logits], lr=self.learning_rate)
        position = side["position"]
        rank = _rank_index(position, self.max_rank).masked_fill(~mask, 0)
        clicks = labels.masked_fill(~mask, 0.0)
        # the list's top document: its smallest position
        top = position.long().masked_fill(~mask, torch.iinfo(torch.int64).max).argmin(dim=-1, keepdim=True)
        with torch.enable_grad():
            g = self.logits[rank].masked_fill(~mask, float("-inf"))
            w = self._inverse(g.detach(), top, mask).to(scores.dtype)
            grad, loss = self.base_loss.weighted_gradient(scores, clicks, mask, w)
            # the propensity model's step, weighted by the ranker's relevance ratios (inverse relevance weighting)
            s = scores.detach().to(torch.float64).masked_fill(~mask, float("-inf"))
            v = self._inverse(s, top.expand(*s.shape[:-1], 1), mask)
            v = v.mean(dim=tuple(range(s.dim() - 2))) if s.dim() > 2 else v
            logp = torch.log_softmax(g, dim=-1).masked_fill(~mask, 0.0)
            per_list = -(clicks.to(torch.float64) * v * logp).sum(dim=-1)
            lists = _list_weights(weight, mask)
            exam = per_list.mean() if lists is None else (lists * per_list).sum() / lists.sum()
            self.optimizer.zero_grad(set_to_none=True)
            exam.backward()
        self.optimizer.step()
        return grad, loss


class RegressionEMLoss(Loss):
    """Regression EM of the position-based model (Wang, Golbandi, Bendersky, Metzler, Najork,
    "Position bias estimation for unbiased learning to rank in personal search", WSDM 2018), with
    the network as the relevance model: ``P(click) = theta_k gamma(x)``, ``gamma = sigmoid(s)``.

    On every batch of click lists (labels: clicked 0/1; a count above 0 counts as a click):

    * E-step: per document, ``P(R=1 | c=1) = 1`` and ``P(R=1 | c=0) = (1 - theta) gamma / (1 - theta gamma)``;
      ``P(E=1 | c=1) = 1`` and ``P(E=1 | c=0) = theta (1 - gamma) / (1 - theta gamma)``;
    * M-step of the relevance model: the gradient of the binary cross-entropy of ``sigmoid(s)``
      against ``P(R=1 | c)`` (the paper's regression on the posteriors; one optimizer step per batch);
    * M-step of the propensities: ``theta_k`` moves a step ``theta_learning_rate`` towards the
      batch's mean ``P(E=1 | c)`` at rank k (online EM; the networks' mean gamma; weighted by the
      documents' sample weights when the fit has them).

    Every list trains (sessions without clicks are evidence too). The ranker scores by
    ``s`` (rank-equivalent to ``gamma``); :meth:`position_bias` holds ``theta_k / theta_1``.

    Parameters
    ----------
    max_rank : int
        Ranks of ``theta`` (ranks past it share the last).
    theta_learning_rate : float
        Step in (0, 1] of the propensities' online M-step.
    """

    name = "regression_em"
    side_keys = ("position",)
    every_list = True
    weighs_own_model = True

    def __init__(self, max_rank: int = 10, theta_learning_rate: float = 0.05) -> None:
        if isinstance(max_rank, bool) or not isinstance(max_rank, (int, np.integer)) or max_rank < 1:
            raise ValueError(f"max_rank must be a positive integer, got {max_rank!r}")
        lr = theta_learning_rate
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr <= 1:
            raise ValueError(f"theta_learning_rate must be in (0, 1], got {lr!r}")
        self.max_rank = int(max_rank)
        self.theta_learning_rate = float(lr)
        self.theta = torch.full((self.max_rank,), 0.5, dtype=torch.float64)

    def position_bias(self) -> dict[str, np.ndarray]:
        """``theta_k / theta_1`` of ranks 1..max_rank: ``{"propensity": ...}``."""
        t = self.theta.cpu().numpy()
        return {"propensity": t / t[0]}

    def gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, *,
        side: dict[str, torch.Tensor], weight: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        rank = _rank_index(side["position"], self.max_rank).masked_fill(~mask, 0)
        self.theta = self.theta.to(scores.device)
        theta = self.theta[rank].to(scores.dtype)
        clicked = (labels > 0) & mask
        gamma = torch.sigmoid(scores)
        none = (1.0 - theta * gamma).clamp(min=1e-12)
        relevant = torch.where(clicked, torch.ones_like(gamma), (1.0 - theta) * gamma / none)
        grad = (gamma - relevant).masked_fill(~mask, 0.0)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(scores, relevant, reduction="none")
        loss = loss.masked_fill(~mask, 0.0).sum(dim=-1)
        lead = tuple(range(scores.dim() - 2))
        g = gamma.mean(dim=lead) if lead else gamma
        examined = torch.where(clicked, torch.ones_like(g), theta * (1.0 - g) / (1.0 - theta * g).clamp(min=1e-12))
        at = rank[mask]
        w = torch.ones_like(examined) if weight is None else weight.to(examined.dtype)
        count = torch.bincount(at, weights=w[mask].to(torch.float64), minlength=self.max_rank)
        total = torch.bincount(at, weights=(w * examined)[mask].to(torch.float64), minlength=self.max_rank)
        seen = count > 0
        step = self.theta_learning_rate
        self.theta[seen] = (1.0 - step) * self.theta[seen] + step * total[seen] / count[seen]
        return grad, loss


def _ranknet(sigma: float = 1.0, max_elements: int = DEFAULT_MAX_ELEMENTS, normalize: bool = False) -> LambdaLoss:
    return LambdaLoss(sigma=sigma, max_elements=max_elements, normalize=normalize)


def _lambdarank(
    metric: str = "ndcg",
    sigma: float = 1.0,
    truncation_level: int | None = None,
    max_grade: float | None = None,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
    normalize: bool = False,
) -> LambdaLoss:
    name, k = parse_lambda_metric(metric)
    if name is None:
        raise ValueError(f"metric={metric!r} is not a LambdaRank metric ('ndcg', 'ndcg@k', 'err' or 'err@k')")
    return LambdaLoss(sigma, name, k, truncation_level, max_grade, max_elements, normalize)


#: name -> factory of the loss, for :func:`get_loss`
LOSSES: dict[str, Callable[..., Loss]] = {
    "ranknet": _ranknet,
    "lambdarank": _lambdarank,
    "listnet": ListNetLoss,
    "listmle": ListMLELoss,
    "approxndcg": ApproxNDCGLoss,
    "neuralndcg": NeuralNDCGLoss,
}


#: the click losses (fit(..., position=) needed), for :func:`get_loss`: IPW with given propensities,
#: DLA and regression EM learning theirs; not bases of :class:`IPWLoss` or :class:`DLALoss`
CLICK_LOSSES: dict[str, Callable[..., Loss]] = {"ipw": IPWLoss, "dla": DLALoss, "regression_em": RegressionEMLoss}


def get_loss(name: str | Loss, **params: Any) -> Loss:
    """The loss called ``name`` with ``params`` (a :class:`Loss` object is returned as it is).

    ``"ranknet"`` (sigma, normalize), ``"lambdarank"`` (metric ``"ndcg"``, ``"ndcg@k"``, ``"err"`` or
    ``"err@k"``, sigma, truncation_level, max_grade, normalize), ``"listnet"``, ``"listmle"``
    (random_state), ``"approxndcg"`` (temperature), ``"neuralndcg"`` (temperature, k,
    sinkhorn_iterations). Clicks with positions (:data:`CLICK_LOSSES`): ``"ipw"`` (:class:`IPWLoss`:
    propensity, which it needs, base, clip, sigma), and ``"dla"`` (:class:`DLALoss`: base, max_rank,
    learning_rate, clip, sigma) and ``"regression_em"`` (:class:`RegressionEMLoss`: max_rank,
    theta_learning_rate), which learn the propensities.

    Raises
    ------
    ValueError
        If the name is unknown or a parameter is invalid.
    """
    if isinstance(name, Loss):
        if params:
            raise ValueError("parameters cannot be given with a Loss object")
        return name
    key = str(name).strip().lower()
    named = LOSSES | CLICK_LOSSES
    if key not in named:
        raise ValueError(f"loss must be one of {sorted(named)} or a Loss object, got {name!r}")
    factory = named[key]
    accepted = inspect.signature(factory).parameters
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        takes = ", ".join(accepted) or "none"
        raise ValueError(f"loss {key!r} has no parameter {', '.join(unknown)} (it takes: {takes})")
    return factory(**params)
