"""Iteration ranges: which iterations of a fitted model score (XGBoost's ``iteration_range``).

A fitted model keeps ``kept`` iterations (its best on the watched set, or all it ran; see
:mod:`ranklearn.models.driver`). A range ``(start, end)`` names iterations ``start+1..end``
of those, ``0 <= start < end <= kept``; XGBoost's ``(0, 0)`` and None mean all of them.
LightGBM's ``num_iteration=``/``start_iteration=`` (on ``predict`` only) give the same range
as ``(start_iteration, start_iteration + num_iteration)``, ``num_iteration`` None or <= 0
meaning up to the end, as in LightGBM.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

__all__ = ["resolve_iteration_range", "check_iteration_range"]


def _whole(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def check_iteration_range(value: Any, kept: int, unit: str, name: str = "iteration_range") -> tuple[int, int]:
    """``value`` as ``(start, end)`` within a model of ``kept`` iterations ("tree", "bag"...).

    Raises
    ------
    ValueError
        Naming ``name`` as the user wrote it, the range and what the model keeps.
    """
    if value is None:
        return 0, kept
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(_whole(v) for v in value):
        raise ValueError(f"{name} must be two whole numbers (start, end), got {value!r}")
    start, end = int(value[0]), int(value[1])
    if (start, end) == (0, 0):  # XGBoost's "every iteration"
        return 0, kept
    if not 0 <= start < end <= kept:
        raise ValueError(
            f"{name}=({start}, {end}) is not a range of this model's {kept} {unit}s: "
            f"need 0 <= start < end <= {kept} (iterations start+1..end)"
        )
    return start, end


def resolve_iteration_range(
    iteration_range: Any, num_iteration: Any, start_iteration: Any, kept: int, unit: str
) -> tuple[int, int]:
    """The range ``predict`` was given, in XGBoost's or LightGBM's words (not both).

    Raises
    ------
    ValueError
    """
    lightgbm = num_iteration is not None or start_iteration != 0
    if iteration_range is not None and lightgbm:
        raise ValueError("give iteration_range= (XGBoost's name) or num_iteration=/start_iteration= (LightGBM's), not both")
    if not lightgbm:
        return check_iteration_range(iteration_range, kept, unit)
    if not _whole(start_iteration) or start_iteration < 0:
        raise ValueError(f"start_iteration must be a whole number >= 0, got {start_iteration!r}")
    if num_iteration is not None and not _whole(num_iteration):
        raise ValueError(f"num_iteration must be a whole number, got {num_iteration!r}")
    end = kept if num_iteration is None or num_iteration <= 0 else start_iteration + num_iteration
    return check_iteration_range(
        (start_iteration, end), kept, unit, name=f"num_iteration={num_iteration}, start_iteration={start_iteration}: range"
    )
