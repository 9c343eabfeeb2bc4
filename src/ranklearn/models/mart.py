"""MART: gradient-boosted regression trees on the labels (RankLib's ``-ranker 0``).

Friedman, "Greedy function approximation: a gradient boosting machine", Annals of Statistics
29 (2001). LambdaMART's tree engine with the pointwise squared-error objective
(:class:`ranklearn.objectives.SquaredErrorObjective`: gradient s - y, hessian 1), so each
tree fits the residuals of the labels and each leaf value is their mean times the learning
rate.

Defaults (chosen on the validation data of four datasets, benchmarks/ranker_defaults.md):
RankLib's 1000 trees with early stopping after 100 trees without a gain when an evaluation set
is given (``early_stopping_rounds="auto"``; without one every tree is kept, as in RankLib),
``l2_regularization=10``, which shrinks the values of leaves with few documents (hessian 1 per
document: a leaf of n documents gets n / (n + 10) of its mean residual), and
``min_samples_leaf=10`` (LambdaMART's is 20).
"""

from __future__ import annotations

from typing import Any

from ranklearn.metrics import Metric
from ranklearn.models.lambdamart import LambdaMART
from ranklearn.objectives import Objective

__all__ = ["MART"]


class MART(LambdaMART):
    __doc__ = (
        "MART: gradient-boosted regression trees fitted to the labels by squared error.\n"
        "\n    ``objective=None`` is \"squared_error\"; the other parameters are LambdaMART's, with other\n"
        "    defaults: ``n_estimators=1000``, ``min_samples_leaf=10``, ``l2_regularization=10.0`` and\n"
        "    ``early_stopping_rounds=\"auto\"`` (100 at 1000 trees with an ``eval_set``, as RankLib's MART; off without).\n"
        + LambdaMART.__doc__.split("\n", 1)[1]
    )

    _model_name = "mart"
    _display_name = "MART"
    _default_objective = "squared_error"

    def __init__(
        self,
        n_estimators: int = 1000,
        learning_rate: float = 0.1,
        num_leaves: int = 31,
        min_samples_leaf: int = 10,
        max_bins: int = 255,
        metric: str | Metric = "ndcg@10",
        early_stopping_rounds: int | str | None = "auto",
        n_jobs: int | None = None,
        random_state: int | None = None,
        objective: str | Objective | None = None,
        sigma: float = 1.0,
        lambda_metric: str | None = None,
        truncation_level: int | None = None,
        lambda_normalization: str = "lightgbm",
        lambda_distance_weight: bool = False,
        gain: str = "exp2",
        max_depth: int | None = None,
        min_sum_hessian: float = 1e-3,
        l2_regularization: float = 10.0,
        min_gain_to_split: float = 0.0,
        leaf_order: str = "gain",
        feature_fraction: float = 1.0,
        bagging_fraction: float = 1.0,
        bin_subsample: int | None = 200_000,
        verbose: int = 0,
        unbiased: str | None = None,
        position_bias_max_rank: int = 10,
        position_bias_norm: float = 4.0,
        position_bias_regularization: float = 1.0,
        propensity: Any = None,
        propensity_clip: float | None = None,
    ) -> None:
        super().__init__(
            n_estimators=n_estimators, learning_rate=learning_rate, num_leaves=num_leaves,
            min_samples_leaf=min_samples_leaf, max_bins=max_bins, metric=metric,
            early_stopping_rounds=early_stopping_rounds, n_jobs=n_jobs, random_state=random_state,
            objective=objective, sigma=sigma, lambda_metric=lambda_metric, truncation_level=truncation_level,
            lambda_normalization=lambda_normalization, lambda_distance_weight=lambda_distance_weight, gain=gain,
            max_depth=max_depth, min_sum_hessian=min_sum_hessian, l2_regularization=l2_regularization,
            min_gain_to_split=min_gain_to_split, leaf_order=leaf_order, feature_fraction=feature_fraction,
            bagging_fraction=bagging_fraction, bin_subsample=bin_subsample, verbose=verbose, unbiased=unbiased,
            position_bias_max_rank=position_bias_max_rank, position_bias_norm=position_bias_norm,
            position_bias_regularization=position_bias_regularization, propensity=propensity,
            propensity_clip=propensity_clip,
        )  # fmt: skip
