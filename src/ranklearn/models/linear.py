"""Linear regression on the labels: least squares with an L2 penalty (RankLib's ``-ranker 9``).

RankLib's ``LinearRegRank`` solves the normal equations ``(X'X + lambda I) w = X'y`` on the
raw features with a constant 1 appended (the intercept, penalized like the weights),
``lambda = 1e-10``. So does this ranker, with the same defaults and no standardization;
the small system is solved by Cholesky (:func:`scipy.linalg.solve`), or by least squares
(:func:`scipy.linalg.lstsq`) when it is singular (``lambda = 0`` with collinear features).
"""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np
import scipy.linalg
from sklearn.utils._param_validation import Interval

from ranklearn.metrics import Metric
from ranklearn.models._linear import LinearRanker
from ranklearn.models.base import N_JOBS

__all__ = ["LinearRegression"]

_CHUNK = 65_536  # rows per block of X'X: float64 copies stay small on MSLR-sized data


class LinearRegression(LinearRanker):
    """Linear regression ranker: least squares with an L2 penalty, in closed form.

    Parameters
    ----------
    l2_regularization : float
        ``lambda`` added to the diagonal of ``X'X`` (the intercept's entry included), as
        RankLib's ``-L2`` (default 1e-10, RankLib's): the minimum of
        ``sum((s - y)^2) + lambda * sum(w^2)``, the same penalty as the trees' ``l2_regularization``
        (docs/DESIGN.md, "Vocabulary").
    metric : str or Metric
        Metric reported on the evaluation sets and by ``score``.
    n_jobs : int or None
        Threads of ``predict``.
    random_state : int or None
        Unused: the fit is deterministic. Taken, as by every ranker, so that one setting reaches
        any ranker (a search over rankers, a pipeline).
    verbose : int
        0: silent; 1: a progress bar.

    Attributes
    ----------
    coef_ : ndarray of float64 (n_features,)
    intercept_ : float
    n_features_in_, feature_names_in_, evals_result_, best_iteration_, best_score_, n_iter_, interrupted_, max_grade_
        See :class:`ranklearn.models.base.BaseRanker` (one iteration: the solve).
    """

    _model_name = "linear"
    _vocabulary_since = 2  # payload 2: random_state
    _display_name = "Linear regression"
    iteration_unit = "solve"
    _parameter_constraints: ClassVar[dict] = {
        "l2_regularization": [Interval(Real, 0, np.inf, closed="left")],
        "metric": [str, Metric],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self, l2_regularization: float = 1e-10, metric: str | Metric = "ndcg@10", n_jobs: int | None = None,
        random_state: int | None = None, verbose: int = 0,
    ) -> None:  # fmt: skip
        self.l2_regularization = l2_regularization
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _total(self) -> int:
        return 1

    def early_stopping_patience(self, n_evals: int) -> None:
        return None  # one solve: nothing to stop

    def _fit_step(self, iteration: int) -> None:
        X, y, w = self._data.X, self._data.y, self._data.weight
        m = X.shape[1] + 1
        gram, rhs = np.zeros((m, m)), np.zeros(m)
        for lo in range(0, X.shape[0], _CHUNK):
            block = np.ones((min(_CHUNK, X.shape[0] - lo), m))
            block[:, :-1] = X[lo : lo + _CHUNK]
            target = y[lo : lo + _CHUNK].astype(np.float64)
            if w is not None:  # weighted least squares: each row's squared error times its weight
                target = target * w[lo : lo + _CHUNK]
                gram += block.T @ (block * w[lo : lo + _CHUNK, None])
            else:
                gram += block.T @ block
            rhs += block.T @ target
        gram[np.diag_indices(m)] += self.l2_regularization
        try:  # Cholesky keeps an all-zero feature decoupled: its weight is exactly 0
            solution = scipy.linalg.solve(gram, rhs, assume_a="pos", check_finite=False)
        except np.linalg.LinAlgError:  # not positive definite in floating point (lambda 0 and collinear features)
            solution = scipy.linalg.lstsq(gram, rhs)[0]
        if not np.all(np.isfinite(solution)):
            raise ValueError("linear regression found no finite solution: are the features finite and not huge?")
        self.coef_, self.intercept_ = solution[:-1], float(solution[-1])
        self._score_evals()
