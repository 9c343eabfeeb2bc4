"""LambdaRank: RankNet's lambdas scaled by |dZ_ij|, the change of the metric Z from swapping i and j.

Burges, Ragno, Le, "Learning to Rank with Nonsmooth Cost Functions", NIPS 2006; Burges, "From
RankNet to LambdaRank to LambdaMART: An Overview", MSR-TR-2010-82, section 4. lambda_ij =
-sigma |dZ_ij| / (1 + exp(sigma (s_i - s_j))), with Z = NDCG (Järvelin & Kekäläinen 2002) or ERR
(Chapelle, Metzler, Zhang, Grinspan 2009).
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any, ClassVar

from sklearn.utils._param_validation import Interval

from ranklearn.metrics import Metric
from ranklearn.models._neural import NeuralRanker
from ranklearn.models.ranknet import RankNet

__all__ = ["LambdaRank"]


class LambdaRank(RankNet):
    """LambdaRank: RankNet's lambdas scaled by |dZ_ij|, the metric change of swapping i and j.

    A RankNet (it derives from it) with the same parameters (``loss=None`` is "lambdarank",
    ``lambda_normalization=None`` is "none": |dNDCG| is already divided by each query's ideal
    DCG), plus

    lambda_metric : str, default="ndcg"
        ``"ndcg"`` (NDCG over the whole list), ``"ndcg@k"``, ``"err"`` or ``"err@k"``:
        |dNDCG| uses gain 2^rel - 1, discount 1/log2(rank + 2) and the query's ideal DCG;
        |dERR| uses R = (2^rel - 1) / 2^max_label with max_label the largest training label.
    truncation_level : int or None, default=None
        Keep only pairs with at least one document in the current top ``truncation_level`` by
        score (None: all pairs).

    ``lambda_metric`` and ``truncation_level`` shape the lambdarank loss only: with another
    ``loss`` (ranknet, listnet, ...) they have no effect.
    """

    _model_name = "lambdarank"
    _vocabulary_since = 4  # payload 4: n_estimators (was epochs)
    _display_name = "LambdaRank"
    _default_loss = "lambdarank"
    _default_normalization = "none"
    # RankNet's 3 lost on MSLR-sample (benchmarks/neural_defaults.md)
    _auto_networks = 5
    _auto_networks_since = 0
    _parameter_constraints: ClassVar[dict] = {
        **NeuralRanker._parameter_constraints,
        "lambda_metric": [str],
        "truncation_level": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        hidden: Sequence[int] = (64, 32),
        n_networks: int | str = "auto",
        activation: str = "relu",
        dropout: float = 0.0,
        mode: str = "factorized",
        optimizer: str = "adam",
        learning_rate: float = 1e-3,
        weight_decay: float = 0.0,
        loss: str | Any = None,
        lambda_normalization: str | None = None,
        n_estimators: int = 100,
        batch_queries: int = 16,
        sigma: float = 1.0,
        metric: str | Metric = "ndcg@10",
        early_stopping_rounds: int | str | None = "auto",
        standardize: bool = True,
        device: str = "cpu",
        n_jobs: int | None = None,
        random_state: int | None = None,
        verbose: int = 0,
        warm_start: bool = False,
        lambda_metric: str = "ndcg",
        truncation_level: int | None = None,
        propensity: Any = None,
        propensity_clip: float | None = None,
    ) -> None:
        super().__init__(
            hidden=hidden, n_networks=n_networks, activation=activation, dropout=dropout, mode=mode,
            optimizer=optimizer, learning_rate=learning_rate, weight_decay=weight_decay, loss=loss,
            lambda_normalization=lambda_normalization, n_estimators=n_estimators, batch_queries=batch_queries, sigma=sigma,
            metric=metric, early_stopping_rounds=early_stopping_rounds, standardize=standardize, device=device,
            n_jobs=n_jobs, random_state=random_state, verbose=verbose, warm_start=warm_start, propensity=propensity,
            propensity_clip=propensity_clip,
        )  # fmt: skip
        self.lambda_metric = lambda_metric
        self.truncation_level = truncation_level

    def _lambda_settings(self) -> tuple[str, int | None]:
        return self.lambda_metric, self.truncation_level
