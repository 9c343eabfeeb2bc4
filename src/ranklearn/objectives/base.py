"""The objective interface of the tree models: per-document gradients and hessians.

Sign convention (the papers'): ``grad[i] = dC/ds_i``, so a negative gradient pushes document
``i`` up; ``hess[i] >= 0``. A tree's leaf value is then the Newton step ``-G / (H + l2)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np


class Objective(ABC):
    """What a tree booster minimises, seen through its first and second derivatives.

    A booster calls :meth:`prepare` once per fit with the training labels and query
    boundaries ``ptr`` (query ``q`` owns rows ``ptr[q]:ptr[q+1]``), then :meth:`gradients`
    once per iteration with the current scores (and the rows' side data, ``side=``).
    """

    name: str
    """Short name (a class attribute or property of every implementation), as
    :func:`ranklearn.objectives.get_objective` takes it and a saved model records it."""

    side_keys: tuple[str, ...] = ()
    """The per-row side data this objective reads (e.g. ``("position",)``): a ranker given
    side data that its objective does not read warns that it is ignored."""

    def prepare(self, y: np.ndarray, ptr: np.ndarray) -> None:
        """Fix data-dependent conventions (a maximum grade, a random seed) for one fit.

        Parameters
        ----------
        y : float64 (n_samples,)
            Training labels, grouped by query.
        ptr : int64 (n_queries + 1,)
            Query boundaries.

        Raises
        ------
        ValueError
            If the labels do not suit the objective.
        """

    @abstractmethod
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
        """Fill ``grad`` and ``hess`` (float64, ``len(scores)``; allocated when None) and return them.

        Parameters
        ----------
        scores : float64 (n_samples,)
            Current model scores.
        y : float64 (n_samples,)
            Labels.
        ptr : int64 (n_queries + 1,)
            Query boundaries.
        grad, hess : float64 (n_samples,), optional
            Output arrays, overwritten.
        side : mapping of str to arrays (n_samples,), optional
            Per-row side data aligned with ``scores`` (today ``"position"``: the 1-based
            rank at which each document was shown, int64), or None. The built-in objectives
            accept and ignore it; debiased (click) objectives read it.

        Returns
        -------
        grad, hess : float64 (n_samples,)
            ``dC/ds`` and the (approximate) second derivatives, ``>= 0``.
        """

    def row_weights(self, y: np.ndarray, ptr: np.ndarray) -> np.ndarray | None:
        """Per-row weights the objective's gradients and hessians are multiplied by, fixed for
        the fit (a per-query normalization: ``lambda_normalization="docs"`` or ``"pairs"``), on
        whole queries; the boosting step multiplies them into the sample weights. None (the
        default): none."""
        return None

    def bias_statistics(self, grad: np.ndarray, hess: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray | None:
        """Sums over this process's rows that the objective's global state is updated from.

        The boosting step calls it after every :meth:`gradients` (``grad`` and ``hess`` then
        hold that call's output times the sample weights ``weight``, None: all 1). An objective with state shared by
        all rows (a position bias, :mod:`ranklearn.objectives.unbiased`) returns one float64
        vector of sums over its rows; the step adds the vectors of every process (the Dask
        peers' ``allreduce``) and passes the total to :meth:`update_bias`, so every process, and
        one machine, reach the same state. None (the default): no such state.
        """
        return None

    def update_bias(self, totals: np.ndarray) -> None:
        """Update the global state from :meth:`bias_statistics`' vector summed over all
        processes (called before the next :meth:`gradients`; never called when it returns None)."""

    def get_params(self) -> dict[str, Any]:
        """JSON-ready description of the objective for a saved model: ``{"name": ..., **parameters}``.

        Includes what :meth:`prepare` fixed (``None`` before it ran).
        """
        return {"name": self.name}

    def __repr__(self) -> str:
        params = self.get_params()
        name = params.pop("name")
        inner = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return f"{type(self).__name__}({name!r}{', ' if inner else ''}{inner})"


def output_arrays(
    n: int, grad: np.ndarray | None, hess: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """``grad`` and ``hess`` as given, or new float64 arrays of length ``n``."""
    return (np.empty(n) if grad is None else grad), (np.empty(n) if hess is None else hess)
