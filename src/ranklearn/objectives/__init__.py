"""Objectives of the tree models: per-document gradients and hessians of a ranking loss.

:func:`get_objective` resolves a name or a user's object to an :class:`Objective`:

=================  ==============================================================
``"lambdarank"``   LambdaRank: RankNet's pair loss weighted by the swap change |ΔZ|
                   of ``lambda_metric`` (NDCG@k, ERR@k, AP), :mod:`.lambdas`
``"ranknet"``      RankNet's pair loss, no |ΔZ| weights, :mod:`.lambdas`
``"squared_error"`` pointwise regression on the labels (RankLib's MART), :mod:`.squared_error`
``"xendcg"``       XE-NDCG cross entropy (LightGBM's ``rank_xendcg``), :mod:`.xendcg`
=================  ==============================================================

:func:`make_unbiased` wraps a pair objective in a position-debiased one (clicks; :mod:`.unbiased`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ranklearn.objectives.base import Objective
from ranklearn.objectives.custom import CustomObjective
from ranklearn.objectives.lambdas import LambdaObjective, parse_lambda_metric
from ranklearn.objectives.squared_error import SquaredErrorObjective
from ranklearn.objectives.unbiased import UNBIASED_METHODS, DebiasedObjective, check_ipw_settings, make_unbiased
from ranklearn.objectives.xendcg import XENDCGObjective

OBJECTIVE_NAMES = ("lambdarank", "ranknet", "squared_error", "xendcg")

__all__ = [
    "OBJECTIVE_NAMES",
    "UNBIASED_METHODS",
    "CustomObjective",
    "DebiasedObjective",
    "LambdaObjective",
    "Objective",
    "SquaredErrorObjective",
    "XENDCGObjective",
    "get_objective",
    "make_unbiased",
    "check_ipw_settings",
]


def get_objective(
    objective: str | Any = "lambdarank",
    *,
    sigma: float = 1.0,
    lambda_metric: str | None = None,
    metric: str = "ndcg@10",
    truncation_level: int | None = None,
    gain: str = "exp2",
    lambda_normalization: str = "lightgbm",
    lambda_distance_weight: bool = False,
    random_state: int | np.random.RandomState | None = None,
) -> Objective:
    """The objective a tree model minimises, from its name or a user's object.

    Parameters
    ----------
    objective : str or object
        One of :data:`OBJECTIVE_NAMES`, an :class:`Objective`, or any object with a method
        ``gradients(scores, y, ptr) -> (grad, hess)``; user objects are wrapped in
        :class:`CustomObjective`, which checks every output.
    sigma, truncation_level, gain, lambda_normalization, lambda_distance_weight
        The pair objectives' settings (``"lambdarank"`` and ``"ranknet"``); see
        :class:`LambdaObjective` (``lambda_normalization="lightgbm"`` is its ``normalize``).
    lambda_metric : str or None
        ``"lambdarank"`` only: the metric whose |ΔZ| weights the pairs (``ndcg@k``,
        ``err@k``, ``map``, ``none``); None: the evaluation ``metric``'s (NDCG at the same
        depth for a metric without a smooth swap change).
    metric : str
        The model's evaluation metric.
    random_state : int, RandomState or None
        Seeds the randomized objectives (``"xendcg"``) once per fit.

    Raises
    ------
    ValueError
        On an unknown name (listing the names), a bad ``lambda_metric``, or a
        ``lambda_metric`` other than ``"none"`` with ``"ranknet"``.
    TypeError
        For an object without a ``gradients`` method.
    """
    if isinstance(
        objective, (LambdaObjective, SquaredErrorObjective, XENDCGObjective, CustomObjective, DebiasedObjective)
    ):
        return objective
    if not isinstance(objective, str):
        return CustomObjective(objective)
    pair_settings = dict(
        sigma=sigma,
        truncation=truncation_level,
        gain=gain,
        normalize=lambda_normalization == "lightgbm",
        query_normalization=lambda_normalization if lambda_normalization in ("docs", "pairs") else None,
        distance_weight=lambda_distance_weight,
    )
    if objective == "lambdarank":
        z, k = parse_lambda_metric(lambda_metric, metric)
        return LambdaObjective(z=z, k=k, **pair_settings)
    if objective == "ranknet":
        if lambda_metric is not None and lambda_metric.lower() != "none":
            raise ValueError(f"objective 'ranknet' has no |ΔZ| weights; lambda_metric={lambda_metric!r} needs 'lambdarank'")
        return LambdaObjective(z="none", k=None, **pair_settings)
    if objective == "squared_error":
        return SquaredErrorObjective()
    if objective == "xendcg":
        return XENDCGObjective(random_state=random_state)
    raise ValueError(f"objective must be one of {', '.join(OBJECTIVE_NAMES)} or an object; got {objective!r}")
