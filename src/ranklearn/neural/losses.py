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
from typing import Any

import numpy as np
import torch

from ranklearn.neural.lambdas import DEFAULT_MAX_ELEMENTS, compute_lambdas, parse_lambda_metric

__all__ = [
    "Loss",
    "AutogradLoss",
    "LambdaLoss",
    "ListNetLoss",
    "ListMLELoss",
    "ApproxNDCGLoss",
    "NeuralNDCGLoss",
    "LOSSES",
    "get_loss",
]


class Loss(ABC):
    """Upstream gradient and loss of a padded batch of queries (see the module docstring)."""

    #: name in :func:`get_loss`
    name: str = ""
    #: the per-document side data this loss reads (e.g. ``("position",)``); a loss that reads
    #: some gets them as ``gradient(..., side={name: Tensor [B, L]})``, the others never see them
    side_keys: tuple[str, ...] = ()

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
        if self.side_keys:
            missing = [k for k in self.side_keys if side is None or k not in side]
            if missing:
                raise ValueError(f"loss {self.name!r} needs {', '.join(missing)} per document: fit with {missing[0]}=")
            kept = {k: side[k] for k in self.side_keys}
            grad, loss = self.gradient(scores.detach(), labels.to(scores.dtype), mask, side=kept)
        else:
            grad, loss = self.gradient(scores.detach(), labels.to(scores.dtype), mask)
        if weight is not None:
            grad = grad * weight
        return grad, loss

    @abstractmethod
    def gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Unweighted (dC/ds [..., B, L], loss [..., B]); ``scores`` is detached."""


@dataclass(frozen=True)
class LambdaLoss(Loss):
    """RankNet (``metric=None``) or LambdaRank (|dZ| of ``metric@k``) lambdas.

    The cost of a pair (i more relevant than j) is |dZ_ij| log(1 + exp(-sigma (s_i - s_j)))
    (Burges et al. 2005, 2006) and lambda_i = dC/ds_i sums it over i's pairs; |dZ_ij| = 1 for
    RankNet, the change of NDCG@k or ERR@k when i and j swap places for LambdaRank.
    See :func:`~ranklearn.neural.lambdas.compute_lambdas` for the parameters.
    """

    sigma: float = 1.0
    metric: str | None = None
    k: int | None = None
    truncation_level: int | None = None
    max_grade: float | None = None
    max_elements: int = DEFAULT_MAX_ELEMENTS

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
        )
        return lam.reshape(scores.shape), loss.reshape(*lead, B)


class AutogradLoss(Loss):
    """A loss defined per query in torch; its gradient comes from autograd."""

    @abstractmethod
    def query_loss(self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Differentiable loss of every query, [..., B], from scores [..., B, L] (labels, mask [B, L]).

        Padding must neither change the loss nor receive a gradient.
        """

    def gradient(
        self, scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.enable_grad():
            s = scores.clone().requires_grad_(True)
            loss = self.query_loss(s, labels, mask)
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
        order = self.ground_truth_order(labels, mask)
        real = torch.gather(mask, -1, order)  # a prefix of every row
        s = torch.gather(scores, -1, order.expand(scores.shape))
        s = s.masked_fill(~real, float("-inf"))
        # log sum_{u >= r} exp(s_u): logcumsumexp of the reversed list
        tail = torch.flip(torch.logcumsumexp(torch.flip(s, [-1]), dim=-1), [-1])
        terms = torch.where(real, tail - s, torch.zeros((), dtype=s.dtype, device=s.device))
        return terms.sum(dim=-1)


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
        zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
        pair = mask[..., :, None] & mask[..., None, :]
        pair = pair & ~torch.eye(mask.shape[-1], dtype=torch.bool, device=mask.device)
        above = torch.sigmoid((scores[..., None, :] - scores[..., :, None]) / self.temperature)
        rank = 1.0 + torch.where(pair, above, zero).sum(dim=-1)
        gains = torch.where(mask, torch.exp2(labels) - 1.0, zero)
        ideal = torch.sort(gains, dim=-1, descending=True).values  # padding's gain 0 sorts last
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
        zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
        gains = torch.where(mask, torch.exp2(labels) - 1.0, zero)
        L = mask.shape[-1]
        pos = torch.arange(L, dtype=scores.dtype, device=scores.device)
        disc = 1.0 / torch.log2(pos + 2.0)
        if self.k is not None:
            disc = torch.where(pos < self.k, disc, zero)
        ideal = torch.sort(gains, dim=-1, descending=True).values  # padding's gain 0 sorts last
        idcg = (ideal * disc).sum(dim=-1)
        placed = (self.soft_permutation(scores, mask) * gains[..., None, :]).sum(dim=-1)  # gain at each position
        dcg = (placed * disc).sum(dim=-1)
        safe = torch.where(idcg > 0, idcg, torch.ones_like(idcg))
        return torch.where(idcg > 0, -dcg / safe, zero)


def _ranknet(sigma: float = 1.0, max_elements: int = DEFAULT_MAX_ELEMENTS) -> LambdaLoss:
    return LambdaLoss(sigma=sigma, max_elements=max_elements)


def _lambdarank(
    metric: str = "ndcg",
    sigma: float = 1.0,
    truncation_level: int | None = None,
    max_grade: float | None = None,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> LambdaLoss:
    name, k = parse_lambda_metric(metric)
    if name is None:
        raise ValueError(f"metric={metric!r} is not a LambdaRank metric ('ndcg', 'ndcg@k', 'err' or 'err@k')")
    return LambdaLoss(sigma, name, k, truncation_level, max_grade, max_elements)


#: name -> factory of the loss, for :func:`get_loss`
LOSSES: dict[str, Callable[..., Loss]] = {
    "ranknet": _ranknet,
    "lambdarank": _lambdarank,
    "listnet": ListNetLoss,
    "listmle": ListMLELoss,
    "approxndcg": ApproxNDCGLoss,
    "neuralndcg": NeuralNDCGLoss,
}


def get_loss(name: str | Loss, **params: Any) -> Loss:
    """The loss called ``name`` with ``params`` (a :class:`Loss` object is returned as it is).

    ``"ranknet"`` (sigma), ``"lambdarank"`` (metric ``"ndcg"``, ``"ndcg@k"``, ``"err"`` or
    ``"err@k"``, sigma, truncation_level, max_grade), ``"listnet"``, ``"listmle"``
    (random_state), ``"approxndcg"`` (temperature), ``"neuralndcg"`` (temperature, k,
    sinkhorn_iterations).

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
    if key not in LOSSES:
        raise ValueError(f"loss must be one of {sorted(LOSSES)} or a Loss object, got {name!r}")
    factory = LOSSES[key]
    accepted = inspect.signature(factory).parameters
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        takes = ", ".join(accepted) or "none"
        raise ValueError(f"loss {key!r} has no parameter {', '.join(unknown)} (it takes: {takes})")
    return factory(**params)
