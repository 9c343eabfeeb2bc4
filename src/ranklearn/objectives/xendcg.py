"""XE-NDCG: the cross entropy between a softmax of the scores and randomized label gains.

Bruch, Wang, Bendersky and Najork (2019), "An Alternative Cross Entropy Loss for
Learning-to-Rank". For one query with scores ``s`` and labels ``y``::

    rho_i = exp(s_i) / sum_j exp(s_j)                     (softmax of the scores)
    phi_i = 2^y_i - gamma_i,  gamma_i ~ U[0, 1)            (a fresh draw every iteration)
    C     = -sum_i phi_i / sum_j phi_j * log(rho_i)

``dC/ds_i = rho_i - phi_i / sum_j phi_j``. As in LightGBM's ``rank_xendcg`` the gradient
handed to the trees adds the next two terms of the expansion of the Newton step (with
``t_i`` the gradient, ``p_i = t_i / (1 - rho_i)``, ``q_i = rho_i (sum_j p_j - p_i) / (1 - rho_i)``)::

    grad_i = t_i + rho_i (sum_j p_j - p_i) + rho_i (sum_j q_j - q_i)
    hess_i = rho_i (1 - rho_i)

Differences from LightGBM, which draws per query from a generator seeded ``seed + query``
and truncates labels to integers: here one generator, seeded once per fit, draws every
document's ``gamma`` in row order, and ``2^y`` takes real labels as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit, prange
from sklearn.utils import check_random_state

from ranklearn.objectives.base import Objective, output_arrays

_EPS = 1e-15  # floor of sum(phi), as LightGBM's kEpsilon
_MAX_LABEL = 1000.0  # 2^y stays finite, as the lambda objectives' exp2 gain


@njit(parallel=True, cache=True)
def xendcg_gradients(
    scores: np.ndarray,
    labels: np.ndarray,
    ptr: np.ndarray,
    gammas: np.ndarray,
    grad: np.ndarray,
    hess: np.ndarray,
) -> None:
    """Fill ``grad`` and ``hess`` for every query, in parallel, with the draws ``gammas`` (one per row)."""
    for q in prange(ptr.shape[0] - 1):
        s = ptr[q]
        e = ptr[q + 1]
        n = e - s
        if n <= 1:
            grad[s:e] = 0.0
            hess[s:e] = 0.0
            continue
        top = scores[s:e].max()
        rho = np.exp(scores[s:e] - top)
        rho /= rho.sum()
        phi = np.empty(n)
        total = 0.0
        for i in range(n):
            phi[i] = 2.0 ** labels[s + i] - gammas[s + i]
            total += phi[i]
        inv = 1.0 / max(_EPS, total)
        # p_i = term_i / (1 - rho_i); a document holding all the probability (rho = 1 after
        # rounding) contributes no correction instead of a division by zero
        p = np.empty(n)
        sum1 = 0.0
        for i in range(n):
            t = rho[i] - phi[i] * inv
            grad[s + i] = t
            p[i] = t / (1.0 - rho[i]) if rho[i] < 1.0 else 0.0
            sum1 += p[i]
        sum2 = 0.0
        for i in range(n):
            t = rho[i] * (sum1 - p[i])
            grad[s + i] += t
            p[i] = t / (1.0 - rho[i]) if rho[i] < 1.0 else 0.0
            sum2 += p[i]
        for i in range(n):
            grad[s + i] += rho[i] * (sum2 - p[i])
            hess[s + i] = rho[i] * (1.0 - rho[i])


class XENDCGObjective(Objective):
    """XE-NDCG (LightGBM's ``rank_xendcg``), with random label gains seeded once per fit.

    Parameters
    ----------
    random_state : int, RandomState or None
        Seeds the draws of ``gamma`` at :meth:`prepare` (an int: the same draws every fit).

    Attributes
    ----------
    seed_ : int or None
        The seed of the draws of the current fit (None before :meth:`prepare`).
    """

    name = "xendcg"

    def __init__(self, random_state: int | np.random.RandomState | None = None) -> None:
        self.random_state = random_state
        self.seed_: int | None = None
        self._rng: np.random.Generator | None = None

    def prepare(self, y: np.ndarray, ptr: np.ndarray) -> None:
        """Check the labels (``0 <= y <= 1000``: the gain ``2^y`` is a weight) and seed the draws."""
        if y.size and not (np.min(y) >= 0 and np.max(y) <= _MAX_LABEL):
            bad = np.min(y) if np.min(y) < 0 else np.max(y)
            raise ValueError(f"objective 'xendcg' needs labels in [0, {_MAX_LABEL:g}] (its gain is 2^label); got {bad:g}")
        self._seed()

    def _seed(self) -> None:
        self.seed_ = int(check_random_state(self.random_state).randint(2**31 - 1))
        self._rng = np.random.default_rng(self.seed_)

    def draws(self, n: int) -> np.ndarray:
        """The next ``n`` values of ``gamma`` (uniform in [0, 1)); seeds from ``random_state``
        if :meth:`prepare` has not run."""
        if self._rng is None:
            self._seed()
        return self._rng.random(n)

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
        """One iteration's gradients, with fresh draws (see :meth:`Objective.gradients`)."""
        n = scores.shape[0]
        grad, hess = output_arrays(n, grad, hess)
        xendcg_gradients(
            np.ascontiguousarray(scores, dtype=np.float64),
            np.ascontiguousarray(y, dtype=np.float64),
            np.ascontiguousarray(ptr, dtype=np.int64),
            self.draws(n),
            grad,
            hess,
        )
        return grad, hess

    def get_params(self) -> dict[str, Any]:
        return {"name": self.name, "seed": self.seed_}
