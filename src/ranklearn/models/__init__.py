"""The rankers: LambdaMART and MART (trees), RankNet, LambdaRank and ListNet (neural, torch
imported lazily), CoordinateAscent, LinearRegression and AdaRank (linear), RankBoost (feature
thresholds), RandomForest (bags of trees); each loads on first use (a ranker's module imports
scikit-learn, which :mod:`ranklearn.models.serving`, ``predict``'s path, does without).

Every ranker derives from :class:`ranklearn.models.base.BaseRanker` and is listed in
:mod:`ranklearn.registry`, where this module finds them (no second list to keep in step: the
random forest was once missing from one).
"""

from __future__ import annotations

from typing import Any

from ranklearn.registry import REGISTRY, get_model_class, model_names

#: class name -> registry name of the models, imported on first use (torch only when asked for)
_LAZY = {spec.target.partition(":")[2]: name for name, spec in REGISTRY.items()}

__all__ = [*_LAZY, "get_model_class", "model_names"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return get_model_class(_LAZY[name])
    raise AttributeError(f"module 'ranklearn.models' has no attribute {name!r}")
