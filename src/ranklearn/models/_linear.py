"""What the linear rankers share: ``score = intercept + sum_j coef[j] * x[j]``.

Scores are summed in float64 from the intercept, feature by feature in column order, the
order RankLib's linear models use, so a model exported to RankLib's text format
(:func:`ranklearn.io.ranklib.export_ranklib`) scores every document exactly as ``predict``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ranklearn.exceptions import ModelFormatError
from ranklearn.metrics.kernels import PARALLEL_MIN_DOCS
from ranklearn.models.base import BaseRanker, EvalSet, FitData
from ranklearn.models.contributions import LinearContributions
from ranklearn.models.serving import linear_scores, linear_weights

__all__ = ["LinearRanker", "MetricFittedRanker", "linear_scores"]


class LinearRanker(LinearContributions, BaseRanker):
    """Base of the linear rankers (not used directly).

    A subclass sets ``coef_`` and ``intercept_`` in ``_fit_step``; evaluation sets are scored
    from them after every iteration, and the snapshot is the weights.
    """

    def _begin_fit(self, data: FitData, evals: list[EvalSet]) -> None:
        self._data = data
        self._evals = [[e.X, None] for e in evals]
        self.coef_ = np.zeros(data.X.shape[1])
        self.intercept_ = 0.0

    def _score_evals(self) -> None:
        """Rescore the evaluation sets with the current weights (after each iteration)."""
        for entry in self._evals:
            entry[1] = linear_scores(entry[0], self.coef_, self.intercept_)

    def _eval_scores(self, index: int) -> np.ndarray:
        return self._evals[index][1]

    def _snapshot(self) -> tuple[np.ndarray, float]:
        return self.coef_.copy(), self.intercept_

    def _restore(self, snapshot: tuple[np.ndarray, float]) -> None:
        self.coef_, self.intercept_ = snapshot[0].copy(), snapshot[1]

    def _end_fit(self) -> None:
        for name in ("_data", "_evals"):
            self.__dict__.pop(name, None)

    def _predict_raw(self, X: np.ndarray) -> np.ndarray:
        return linear_scores(X, self.coef_, self.intercept_)

    def _widen_features(self, columns: np.ndarray, n_features: int) -> None:
        coef = np.zeros(n_features, dtype=np.asarray(self.coef_).dtype)
        coef[columns] = self.coef_
        self.coef_ = coef

    @classmethod
    def from_weights(cls, coef: np.ndarray, intercept: float) -> LinearRanker:
        """A model that predicts with given weights (read from another tool); it predicts,
        saves and exports like a fitted one."""
        model = cls()
        model.coef_ = np.asarray(coef, dtype=np.float64)
        model.intercept_ = float(intercept)
        model._set_imported(model.coef_.shape[0], 1)
        return model

    def _state_to_payload(self) -> dict[str, Any]:
        return {"coef": [float(c) for c in self.coef_], "intercept": float(self.intercept_)}

    def _state_from_payload(self, payload: dict[str, Any], version: int) -> None:
        self.coef_, self.intercept_ = linear_weights(payload, self.n_features_in_, self._model_name)


def query_weights(weight: np.ndarray | None, ptr: np.ndarray) -> np.ndarray:
    """Each query's weight for the rankers that weigh queries, not documents: the mean weight
    of its documents (1 without ``sample_weight``; a per-query weight comes back unchanged)."""
    sizes = np.diff(ptr)
    return np.ones(sizes.size) if weight is None else np.add.reduceat(weight, ptr[:-1]) / sizes


class MetricFittedRanker(LinearRanker):
    """Base of the linear rankers fitted to the metric itself (Coordinate Ascent, AdaRank).

    With an evaluation set they keep the iteration best on it (RankLib keeps the best on
    validation data; their ``early_stopping_rounds`` defaults to None, no early stop), and their metric
    cannot break ties by document id (training data has none). Below
    ``metrics.kernels.PARALLEL_MIN_DOCS`` training rows they fit on one thread.
    """

    def _fit_threads(self, n_rows: int) -> int | None:
        # an iteration runs hundreds of metric evaluations of a millisecond or less: on small
        # data, waking the thread pool for each costs more than it saves, up to several times
        # the work when the cores are busy (results do not depend on the thread count)
        return 1 if n_rows < PARALLEL_MIN_DOCS else self.n_jobs


