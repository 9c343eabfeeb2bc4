"""AdaRank: boosting single features by the query-level metric (RankLib's ``-ranker 3``).

Xu, Li, "AdaRank: a boosting algorithm for information retrieval", SIGIR 2007. The
procedure and defaults are RankLib's ``AdaRank``:

* the weak rankers are single features (a query ranked by ``x_f``); each round picks the
  feature with the largest query-weighted metric, with weight
  ``alpha = 0.5 * ln(sum P (1 + m_f) / sum P (1 - m_f))`` (``m_f`` the per-query metric of
  the feature, ``P`` the query weights, uniform at first);
* the query weights are multiplied by ``exp(-alpha * m)`` / ``sum exp(-alpha * m)``, ``m`` the
  per-query metric of the whole model;
* training stops when the model's mean training metric gains less than ``tolerance`` (that
  last round is dropped);
* RankLib's safeguards: with ``enqueue`` (default), a feature chosen twice in a row is set
  aside (the round that chose it first is undone) and, after training stops, the set-aside
  features come back one at a time, last first, each time training on until it stops again;
  in that second stage a feature chosen ``max_selections`` times in a row without changing
  the training metric is dropped until the metric changes.

A round is one driver iteration (after training stopped, the remaining ones leave the model as
it is); with an evaluation set the model is the round best
on it, as RankLib keeps; an undone round makes the driver forget the best so far, as RankLib
does (so the best is one of the rounds after the last undoing). The model is linear: ``score = sum_t alpha_t x_{f_t}``.
Each feature's per-query metric is computed once, so a round costs one metric evaluation of
the model.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval

from ranklearn.metrics import Metric
from ranklearn.models._linear import MetricFittedRanker, query_weights
from ranklearn.models.base import EARLY_STOPPING, N_JOBS, EvalSet, FitData

__all__ = ["AdaRank"]

_TINY = np.finfo(np.float64).tiny  # keeps alpha finite when a feature ranks every query perfectly


class AdaRank(MetricFittedRanker):
    """AdaRank ranker: a weighted sum of single features, boosted by the query-level metric.

    Parameters
    ----------
    n_estimators : int
        Rounds at most (RankLib's ``-round``, 500).
    tolerance : float
        Least gain of the mean training metric that lets training go on (RankLib's ``-tolerance``, 0.002).
    enqueue : bool
        RankLib's ``trainWithEnqueue`` (default on; ``-noeq`` turns it off): see the module.
    max_selections : int
        Consecutive selections without a change of the metric after which a feature is
        dropped (RankLib's ``-max``, 5).
    metric : str or Metric
        The metric boosted on the training data, watched on the evaluation sets and used by
        ``score`` (RankLib's ``-metric2t``), e.g. "ndcg@10". ``ties="docid"`` is not supported.
    early_stopping_rounds : int, "auto" or None, default=None
        Stop when the watched evaluation set's metric has not improved for this many rounds
        (an int needs an ``eval_set``); "auto": max(20, n_estimators // 10) with an ``eval_set``,
        none without; None: run every round. With an evaluation set the model is the round best
        on it either way, since the last round that the first stage undid (RankLib forgets the
        best there; see the module).
    n_jobs : int or None
        Threads of the metric and of ``predict``.
    random_state : int or None
        Unused: the fit is deterministic. Taken, as by every ranker, so that one setting reaches
        any ranker (a search over rankers, a pipeline).
    verbose : int
        0: silent; 1: a progress bar.

    Attributes
    ----------
    rankers_ : list of (int, float)
        The rounds kept: 0-based feature and its alpha (``coef_`` is their sum per feature).
    coef_ : ndarray of float64 (n_features,)
    intercept_ : float
        Always 0.
    n_features_in_, feature_names_in_, evals_result_, best_iteration_, best_score_, n_iter_, interrupted_, max_grade_
        See :class:`ranklearn.models.base.BaseRanker`.
    """

    _model_name = "adarank"
    _vocabulary_since = 2  # payload 2: random_state, early_stopping_rounds=None (was "auto")
    _display_name = "AdaRank"
    iteration_unit = "round"
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "tolerance": [Interval(Real, 0, np.inf, closed="left")],
        "enqueue": ["boolean"],
        "max_selections": [Interval(Integral, 1, None, closed="left")],
        "metric": [str, Metric],
        "early_stopping_rounds": EARLY_STOPPING,
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_estimators: int = 500,
        tolerance: float = 0.002,
        enqueue: bool = True,
        max_selections: int = 5,
        metric: str | Metric = "ndcg@10",
        early_stopping_rounds: int | str | None = None,
        n_jobs: int | None = None,
        random_state: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.tolerance = tolerance
        self.enqueue = enqueue
        self.max_selections = max_selections
        self.metric = metric
        self.early_stopping_rounds = early_stopping_rounds
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _begin_fit(self, data: FitData, evals: list[EvalSet]) -> None:
        super()._begin_fit(data, evals)
        self._metric_obj = self.evaluation_metric()
        n_feat = data.X.shape[1]
        # a weak ranker's per-query metric never changes: compute every feature's once
        self._feature_values = np.column_stack([self._per_query(data.X[:, f]) for f in range(n_feat)])
        weights = query_weights(data.weight, data.ptr)
        if not weights.sum() > 0:
            raise ValueError("sample_weight is 0 for every training query")
        # with sample_weight, the boosting distribution starts at the queries' weights, and the
        # training metric that decides when a stage ends is their weighted mean
        self._weights = weights / weights.sum()
        self._mean_by = None if data.weight is None else self._weights.copy()
        self._backup = (self._weights.copy(), -1.0, np.zeros(data.X.shape[0]))
        self._scores = np.zeros(data.X.shape[0])
        self._last_train = -1.0
        self._last_feature, self._repeats = -1, 0
        self._queue: list[int] = []
        self._dropped: set[int] = set()
        self._first_stage = bool(self.enqueue)
        self._done = False
        self.rankers_: list[tuple[int, float]] = []

    def _per_query(self, scores: np.ndarray) -> np.ndarray:
        return np.nan_to_num(self._metric_obj.per_query(self._data.y, scores, self._data.ptr))

    def _fit_step(self, iteration: int) -> None:
        # a round, or (when a stage ends) the next stage's first round; nothing once training stopped
        while not self._done and not self._round():
            if self._queue:
                self._queue.pop()  # the last feature set aside comes back
                self._first_stage = False
            else:
                self._done = True
        self.coef_ = np.zeros(self._data.X.shape[1])
        for f, alpha in self.rankers_:
            self.coef_[f] += alpha
        self._score_evals()

    def _round(self) -> bool:
        """One RankLib round; False when the stage ends (no feature left, or no gain)."""
        X = self._data.X
        allowed = [f for f in range(X.shape[1]) if f not in self._queue and f not in self._dropped]
        if not allowed:
            return False
        quality = self._weights @ self._feature_values[:, allowed]
        f = allowed[int(np.argmax(quality))]  # the first of equals, as RankLib
        if self._first_stage:
            if f == self._last_feature:  # chosen twice in a row: set aside, undo its first round
                self._queue.append(f)
                self.rankers_.pop()
                weights, self._last_train, scores = self._backup
                self._weights, self._scores = weights.copy(), scores.copy()
                self._forget_best = True  # RankLib forgets the best model on validation here
                return True
            self._last_feature = f
            self._backup = (self._weights.copy(), self._last_train, self._scores.copy())
        m_f = self._feature_values[:, f]
        alpha = 0.5 * np.log(self._weights @ (1.0 + m_f) / max(self._weights @ (1.0 - m_f), _TINY))
        previous = self._scores.copy()
        self._scores += alpha * X[:, f]
        values = self._per_query(self._scores)
        train = float(values.mean() if self._mean_by is None else self._mean_by @ values)
        if not self._first_stage:
            if train != self._last_train:
                self._dropped.clear()
                self._repeats = 0
            elif self._last_feature == f:
                self._repeats += 1
                if self._repeats == self.max_selections:
                    self._repeats = 0
                    self._dropped.add(f)
            else:
                self._repeats = 0
                self._dropped.clear()
            self._last_feature = f
        if train + self.tolerance - self._last_train <= 0:  # no gain: drop the round, the stage ends
            self._scores = previous
            return False
        self.rankers_.append((int(f), float(alpha)))
        self._last_train = train
        factor = np.exp(-alpha * values)
        self._weights *= factor / factor.sum()
        # every use of the weights is a ratio (alpha, the best feature): rescaling to sum 1 changes
        # nothing but keeps them from underflowing to 0 (then alpha is NaN) when the metric stays
        # put for hundreds of rounds (a feature ranking every query perfectly; recall@k, k >= n)
        self._weights /= self._weights.sum()
        return True

    def _snapshot(self) -> tuple:
        return super()._snapshot(), list(self.rankers_)

    def _restore(self, snapshot: tuple) -> None:
        super()._restore(snapshot[0])
        self.rankers_ = list(snapshot[1])

    def _end_fit(self) -> None:
        for name in ("_metric_obj", "_feature_values", "_weights", "_backup", "_scores", "_last_train", "_last_feature",
                     "_repeats", "_queue", "_dropped", "_first_stage", "_done", "_forget_best", "_mean_by"):  # fmt: skip
            self.__dict__.pop(name, None)
        super()._end_fit()

    def _widen_features(self, columns: np.ndarray, n_features: int) -> None:
        super()._widen_features(columns, n_features)
        self.rankers_ = [(int(columns[f]), alpha) for f, alpha in self.rankers_]

    def _state_to_payload(self) -> dict:
        return {**super()._state_to_payload(), "rankers": [[f, a] for f, a in self.rankers_]}

    def _state_from_payload(self, payload: dict, version: int) -> None:
        super()._state_from_payload(payload, version)
        self.rankers_ = [(int(f), float(a)) for f, a in payload.get("rankers", [])]
