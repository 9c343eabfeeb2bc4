"""The estimators: LambdaMART (trees) and the neural RankNet / LambdaRank."""

from __future__ import annotations

from typing import Any

from ranklearn.models.lambdamart import LambdaMART

MODEL_NAMES = ("lambdamart", "ranknet", "lambdarank")

__all__ = ["LambdaMART", "RankNet", "LambdaRank", "get_model_class", "MODEL_NAMES"]


def get_model_class(name: str) -> type:
    """The estimator class for a model name used on the command line."""
    key = name.lower()
    if key == "lambdamart":
        return LambdaMART
    if key == "ranknet":
        from ranklearn.models.neural import RankNet

        return RankNet
    if key == "lambdarank":
        from ranklearn.models.neural import LambdaRank

        return LambdaRank
    raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODEL_NAMES)}")


def __getattr__(name: str) -> Any:
    # The neural models import torch only when asked for.
    if name in ("RankNet", "LambdaRank"):
        return get_model_class(name)
    raise AttributeError(f"module 'ranklearn.models' has no attribute {name!r}")
