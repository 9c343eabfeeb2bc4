"""The rankers: LambdaMART and MART (trees), RankNet, LambdaRank and ListNet (neural, torch
imported lazily), CoordinateAscent, LinearRegression and AdaRank (linear),
RankBoost (feature thresholds); the others load on first use.

Every ranker derives from :class:`ranklearn.models.base.BaseRanker` and is listed in
:mod:`ranklearn.registry`.
"""

from __future__ import annotations

from typing import Any

from ranklearn.models.lambdamart import LambdaMART
from ranklearn.registry import get_model_class, model_names

#: class name -> registry name of the models imported on first use (torch only when asked for)
_LAZY = {"RankNet": "ranknet", "LambdaRank": "lambdarank", "ListNet": "listnet", "MART": "mart",
         "CoordinateAscent": "coordinate-ascent", "LinearRegression": "linear", "AdaRank": "adarank",
         "RankBoost": "rankboost"}  # fmt: skip

__all__ = ["LambdaMART", *_LAZY, "get_model_class", "model_names"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return get_model_class(_LAZY[name])
    raise AttributeError(f"module 'ranklearn.models' has no attribute {name!r}")
