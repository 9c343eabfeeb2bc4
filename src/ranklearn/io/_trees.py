"""What the tree-model exports share: a fitted LambdaMART, checked without importing the models."""

from __future__ import annotations

from typing import Any


def require_fitted_lambdamart(model: Any, target: str) -> None:
    """Refuse anything but a fitted LambdaMART for an export to ``target`` (e.g. "RankLib").

    Raises
    ------
    ValueError
        Naming the target format.
    """
    if getattr(model, "_model_name", None) != "lambdamart" or not model.__sklearn_is_fitted__():
        raise ValueError(f"export to {target} needs a fitted LambdaMART model")
