"""Pointwise squared error: MART regression on the labels (RankLib's MART ranker).

``C = 1/2 sum_i (s_i - y_i)^2`` over all documents, so ``grad_i = s_i - y_i`` and
``hess_i = 1``: a leaf's Newton step is the mean residual of its documents (Friedman 2001,
"Greedy Function Approximation: A Gradient Boosting Machine"). Queries play no part.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ranklearn.objectives.base import Objective, output_arrays


class SquaredErrorObjective(Objective):
    """Least-squares regression of the scores on the labels."""

    name = "squared_error"

    def gradients(
        self,
        scores: np.ndarray,
        y: np.ndarray,
        ptr: np.ndarray,
        grad: np.ndarray | None = None,
        hess: np.ndarray | None = None,
        *,
        side: Mapping[str, np.ndarray] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``grad = scores - y``, ``hess = 1`` (see :meth:`Objective.gradients`)."""
        grad, hess = output_arrays(scores.shape[0], grad, hess)
        np.subtract(scores, y, out=grad)
        hess.fill(1.0)
        return grad, hess
