"""RankBoost: boosting feature thresholds on document pairs (RankLib's ``-ranker 2``).

Freund, Iyer, Schapire, Singer, "An efficient boosting algorithm for combining preferences",
JMLR 4 (2003). The procedure and defaults are RankLib's ``RankBoost``:

* the pairs are the *crucial* pairs of each query (one document's label above the other's),
  with a distribution D, uniform at first;
* a weak ranker is ``h(x) = 1 if x_f > theta else 0``, ``theta`` among ``n_thresholds`` evenly
  spaced values from the feature's training maximum down (``max - j (max - min) / n``,
  j = 0..n-1) and ``min - 1e8``; each round takes the (feature, threshold) with the largest
  ``r = sum_x pi(x) h(x)``, ``pi(x)`` = D of the pairs ``x`` should win minus D of those it
  should lose (the first of equals, features in column order and thresholds from the top);
* its weight is ``alpha = 0.5 ln((1 + r) / (1 - r))`` (capped at ``0.5 ln(2 / eps)`` when a
  threshold orders every pair, ``r = 1``, where RankLib's is infinite) and every pair's D is
  multiplied by ``exp(alpha (h(loser) - h(winner)))``, then D is normalized.

The score is ``sum_t alpha_t h_t(x)``. A round is one driver iteration; with an evaluation set
the model is the round best on it, as RankLib keeps.
The pairs are stored once as index arrays, and ``r`` for every feature and threshold is one
weighted count per round, so a round costs O(pairs + rows x features).
"""

from __future__ import annotations

import copy
import warnings

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval

from ranklearn.exceptions import ModelFormatError
from ranklearn.metrics import Metric
from ranklearn.models.base import EARLY_STOPPING, N_JOBS, BaseRanker, EvalSet, FitData

__all__ = ["RankBoost"]


def _crucial_pairs(y: np.ndarray, ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows (winner, loser) of every pair of a query whose labels differ."""
    winners, losers = [], []
    for q in range(ptr.shape[0] - 1):
        lo, hi = ptr[q], ptr[q + 1]
        yq = y[lo:hi]
        w, l = np.nonzero(yq[:, None] > yq[None, :])
        winners.append(w + lo)
        losers.append(l + lo)
    return np.concatenate(winners).astype(np.int64), np.concatenate(losers).astype(np.int64)


class RankBoost(BaseRanker):
    """RankBoost ranker: a weighted sum of feature-threshold indicators, boosted on document pairs.

    Parameters
    ----------
    n_estimators : int
        Rounds at most (RankLib's ``-round``, 300).
    n_thresholds : int
        Candidate thresholds per feature (50; RankLib's ``-tc`` default is 10). 50 won on the
        validation data of all four shared datasets together (MSLR-sample +0.077 NDCG@10,
        lightgbm-example +0.019, MQ2008 +0.001, trec-news-2018 a tie;
        ``benchmarks/ranker_defaults.md``).
    metric : str or Metric
        Metric watched on the evaluation sets and used by ``score``.
    early_stopping_rounds : int, "auto" or None, default=None
        Stop when the watched evaluation set's metric has not improved for this many rounds
        (an int needs an ``eval_set``); "auto": max(20, n_estimators // 10) with an ``eval_set``,
        none without; None: run every round. With an evaluation set the model is the round best
        on it either way, as RankLib keeps.
    n_jobs : int or None
        Threads of the metric.
    random_state : int or None
        Unused: the fit is deterministic. Taken, as by every ranker, so that one setting reaches
        any ranker (a search over rankers, a pipeline).
    verbose : int
        0: silent; 1: a progress bar.

    Attributes
    ----------
    rankers_ : list of (int, float, float)
        The rounds kept: 0-based feature, threshold and alpha.
    n_features_in_, feature_names_in_, evals_result_, best_iteration_, best_score_, n_iter_, interrupted_, max_grade_
        See :class:`ranklearn.models.base.BaseRanker`.
    """

    _model_name = "rankboost"
    _vocabulary_since = 2  # payload 2: random_state, early_stopping_rounds=None (was "auto")
    _display_name = "RankBoost"
    iteration_unit = "round"
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "n_thresholds": [Interval(Integral, 1, None, closed="left")],
        "metric": [str, Metric],
        "early_stopping_rounds": EARLY_STOPPING,
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_estimators: int = 300,
        n_thresholds: int = 50,
        metric: str | Metric = "ndcg@10",
        early_stopping_rounds: int | str | None = None,
        n_jobs: int | None = None,
        random_state: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.n_thresholds = n_thresholds
        self.metric = metric
        self.early_stopping_rounds = early_stopping_rounds
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _begin_fit(self, data: FitData, evals: list[EvalSet]) -> None:
        X = data.X.astype(np.float64)  # RankLib compares float features with double thresholds
        n, m = X.shape
        self._winners, self._losers = _crucial_pairs(data.y, data.ptr)
        if self._winners.size == 0:
            warnings.warn(
                "RankBoost found no document pair to learn from (the labels of every query are one class): "
                "the model scores every document 0",
                stacklevel=3,
            )
        if data.weight is None:
            self._D = np.full(self._winners.size, 1.0 / max(1, self._winners.size))
        else:  # with sample_weight, D starts at each pair's weight: the mean of its two documents'
            pair = (data.weight[self._winners] + data.weight[self._losers]) / 2.0
            if self._winners.size and not pair.sum() > 0:
                raise ValueError("sample_weight is 0 for every document pair RankBoost learns from")
            self._D = pair / max(pair.sum(), np.finfo(float).tiny)
        fmax, fmin = X.max(axis=0), X.min(axis=0)
        steps = np.abs(fmax - fmin) / self.n_thresholds
        thr = np.empty((m, self.n_thresholds + 1))
        thr[:, 0] = fmax
        for j in range(1, self.n_thresholds):
            thr[:, j] = thr[:, j - 1] - steps  # accumulated as RankLib does
        thr[:, -1] = fmin - 1.0e8
        self._thresholds = thr
        # first (highest) threshold each value is above = how many thresholds it is not above
        # (n_thresholds + 1: none); feature f's codes are f * (n_thresholds + 2) + that
        first = np.empty((n, m), dtype=np.int64)
        for f in range(m):
            first[:, f] = thr.shape[1] - np.searchsorted(thr[f, ::-1], X[:, f], side="left")
        self._codes = (np.arange(m)[None, :] * (self.n_thresholds + 2) + first).ravel()
        self._X = X
        self._evals = [[e.X.astype(np.float64), np.zeros(e.X.shape[0])] for e in evals]
        self.rankers_: list[tuple[int, float, float]] = []

    def _fit_step(self, iteration: int) -> None:
        X, win, lose, D = self._X, self._winners, self._losers, self._D
        if win.size == 0:  # no pair: nothing to learn, the model stays 0
            return
        n, m = X.shape
        k = self.n_thresholds + 2
        potential = np.bincount(win, D, n) - np.bincount(lose, D, n)
        per_bin = np.bincount(self._codes, np.repeat(potential, m), m * k).reshape(m, k)
        r = np.cumsum(per_bin[:, :-1], axis=1)  # r[f, j]: the documents above threshold j
        best = int(np.argmax(r))  # the first of equals, features first, as RankLib
        f, j = divmod(best, k - 1)
        theta, rt = float(self._thresholds[f, j]), float(r[f, j])
        alpha = 0.5 * np.log((1.0 + rt) / (1.0 - rt)) if rt < 1.0 else 0.5 * np.log(2.0 / np.finfo(float).eps)
        h = X[:, f] > theta
        D *= np.exp(alpha * (h[lose].astype(np.float64) - h[win]))
        D /= D.sum()
        self.rankers_.append((int(f), theta, float(alpha)))
        for Xe, scores in self._evals:
            scores += alpha * (Xe[:, f] > theta)

    def _eval_scores(self, index: int) -> np.ndarray:
        return self._evals[index][1]

    def _snapshot(self) -> int:
        return len(self.rankers_)

    def _restore(self, n_rounds: int) -> None:
        del self.rankers_[n_rounds:]

    def _end_fit(self) -> None:
        for name in ("_winners", "_losers", "_D", "_thresholds", "_codes", "_X", "_evals"):
            self.__dict__.pop(name, None)

    def _n_kept(self) -> int:
        return len(self.rankers_)

    def _part(self, start: int, end: int) -> RankBoost:
        part = copy.copy(self)
        part.rankers_ = self.rankers_[start:end]
        return part

    def _predict_raw(self, X: np.ndarray) -> np.ndarray:
        X = X.astype(np.float64)
        scores = np.zeros(X.shape[0])
        for f, theta, alpha in self.rankers_:
            scores += alpha * (X[:, f] > theta)
        return scores

    def _widen_features(self, columns: np.ndarray, n_features: int) -> None:
        self.rankers_ = [(int(columns[f]), theta, alpha) for f, theta, alpha in self.rankers_]

    def _state_to_payload(self) -> dict[str, Any]:
        return {"rankers": [[f, t, a] for f, t, a in self.rankers_]}

    def _state_from_payload(self, payload: dict[str, Any], version: int) -> None:
        try:
            rankers = [(int(f), float(t), float(a)) for f, t, a in payload["rankers"]]
        except (KeyError, TypeError, ValueError):
            raise ModelFormatError("rankboost payload needs 'rankers': [feature, threshold, alpha] triples") from None
        if any(not 0 <= f < self.n_features_in_ for f, _, _ in rankers):
            raise ModelFormatError(f"rankboost payload names a feature outside 0..{self.n_features_in_ - 1}")
        self.rankers_ = rankers
