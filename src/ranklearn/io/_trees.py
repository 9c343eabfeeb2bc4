"""What the tree-model exports share: a fitted tree ensemble, checked without importing the models."""

from __future__ import annotations

from typing import Any


#: models made of LambdaMART's trees (MART is LambdaMART with another objective)
TREE_MODELS = ("lambdamart", "mart")


def require_fitted_lambdamart(model: Any, target: str) -> None:
    """Refuse anything but a fitted LambdaMART or MART for an export to ``target`` (e.g. "RankLib").

    Raises
    ------
    ValueError
        Naming the target format.
    """
    if getattr(model, "_model_name", None) not in TREE_MODELS or not model.__sklearn_is_fitted__():
        raise ValueError(f"export to {target} needs a fitted LambdaMART or MART model")
