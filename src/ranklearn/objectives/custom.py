"""A user's own objective, checked on every call before the trees see its output."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np

from ranklearn.objectives.base import Objective, output_arrays


def _takes_side(gradients: Any) -> bool:
    """Whether a user's ``gradients`` accepts ``side=`` (a parameter of that name, or ``**kwargs``)."""
    try:
        params = inspect.signature(gradients).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): call it the old way
        return False
    return any(
        p.kind is p.VAR_KEYWORD or (p.name == "side" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        for p in params
    )


class CustomObjective(Objective):
    """Wrap a user's objective and validate what it returns.

    Parameters
    ----------
    objective : Objective or object
        An :class:`Objective` subclass instance, or any object with a method
        ``gradients(scores, y, ptr) -> (grad, hess)`` (arrays of ``len(scores)``, same sign
        convention: ``grad = dC/ds``, negative pushes a document up; ``hess >= 0``). When its
        ``gradients`` takes a keyword ``side`` (or ``**kwargs``), it is also given
        ``side=`` the rows' side data (``{"position": int64 array}`` when the fit had
        positions, else None), and counts as reading it (``side_keys``: the object's own, if it
        declares them); objects without it are called as before. Its
        ``prepare(y, ptr)``, if it has one, is called once per fit; its ``name``, if it has
        one, names it in errors and saved models (the class name otherwise).

    Raises
    ------
    ValueError
        From :meth:`gradients`, naming the objective, when it returns arrays of another
        shape, non-finite values or negative hessians.
    """

    def __init__(self, objective: Any) -> None:
        if not callable(getattr(objective, "gradients", None)):
            raise TypeError(
                f"objective {objective!r} has no gradients(scores, y, ptr) method returning (grad, hess)"
            )
        self.objective = objective
        self.name = str(getattr(objective, "name", None) or type(objective).__name__)
        self._takes_side = _takes_side(objective.gradients)
        # what it reads, for the warning of a fit whose side data nothing reads: its own
        # declaration, else every key when its gradients takes side=
        self.side_keys = tuple(getattr(objective, "side_keys", ("position",) if self._takes_side else ()))

    def prepare(self, y: np.ndarray, ptr: np.ndarray) -> None:
        prepare = getattr(self.objective, "prepare", None)
        if callable(prepare):
            prepare(y, ptr)

    def bias_statistics(self, grad: np.ndarray, hess: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray | None:
        """The user's ``bias_statistics(grad, hess)`` when it has one (global state such as a position
        bias), checked: a finite float64 vector. ``weight`` is not passed on: ``grad`` and ``hess``
        already carry the sample weights."""
        statistics = getattr(self.objective, "bias_statistics", None)
        if not callable(statistics):
            return None
        got = statistics(grad, hess)
        if got is None:
            return None
        out = np.ascontiguousarray(got, dtype=np.float64)
        if out.ndim != 1 or not np.all(np.isfinite(out)):
            raise ValueError(f"objective {self.name!r}: bias_statistics must return a finite 1-d vector or None")
        return out

    def update_bias(self, totals: np.ndarray) -> None:
        self.objective.update_bias(totals)

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
        n = scores.shape[0]
        grad, hess = output_arrays(n, grad, hess)
        if self._takes_side:
            got = self.objective.gradients(scores, y, ptr, side=side)
        else:  # an objective written before side data: called as it was
            got = self.objective.gradients(scores, y, ptr)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise ValueError(f"objective {self.name!r} must return (grad, hess); got {type(got).__name__}")
        for what, arr, out in (("gradients", got[0], grad), ("hessians", got[1], hess)):
            arr = np.asarray(arr, dtype=np.float64)
            if arr.shape != (n,):
                raise ValueError(f"objective {self.name!r} returned {what} of shape {arr.shape} for {n} documents")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"objective {self.name!r} returned non-finite {what}")
            out[:] = arr
        if np.any(hess < 0):
            raise ValueError(f"objective {self.name!r} returned negative hessians (min {hess.min():g})")
        return grad, hess

    def get_params(self) -> dict[str, Any]:
        cls = type(self.objective)
        return {"name": self.name, "class": f"{cls.__module__}.{cls.__qualname__}"}
