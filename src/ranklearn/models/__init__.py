"""The rankers: LambdaMART (trees), RankNet and LambdaRank (neural, torch imported lazily).

Every ranker derives from :class:`ranklearn.models.base.BaseRanker` and is listed in
:mod:`ranklearn.registry`.
"""

from __future__ import annotations

from typing import Any

from ranklearn.models.lambdamart import LambdaMART
from ranklearn.registry import get_model_class, model_names

__all__ = ["LambdaMART", "RankNet", "LambdaRank", "get_model_class", "model_names"]


def __getattr__(name: str) -> Any:
    # The neural models import torch only when asked for.
    if name in ("RankNet", "LambdaRank"):
        return get_model_class(name)
    raise AttributeError(f"module 'ranklearn.models' has no attribute {name!r}")
