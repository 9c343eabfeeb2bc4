"""Model formats: ranklearn's own JSON model file, RankLib's LambdaMART text format (``ranklib``) and
LightGBM's text model format (``lightgbm``, export only)."""

from __future__ import annotations

from os import PathLike
from typing import Any

from ranklearn.exceptions import ModelFormatError
from ranklearn.io.model_file import read_model_file, write_model_file

__all__ = ["load_model", "read_model_file", "write_model_file"]


def load_model(path: str | PathLike[str]) -> Any:
    """Load any ranklearn model file (LambdaMART, RankNet, LambdaRank).

    Raises
    ------
    ModelFormatError
        If the file is missing, corrupted, foreign, of an unknown model type or malformed.
    """
    model_type, payload = read_model_file(path)
    try:
        if model_type == "lambdamart":
            from ranklearn.models.lambdamart import LambdaMART

            return LambdaMART._from_payload(payload)
        if model_type in ("ranknet", "lambdarank"):
            from ranklearn.models.neural import _from_payload

            return _from_payload(model_type, payload)
    except ModelFormatError:
        raise
    except ImportError as exc:
        raise ModelFormatError(f"cannot load a {model_type} model: {exc}", path=path) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise ModelFormatError(f"malformed {model_type} model payload ({type(exc).__name__}: {exc})", path=path) from None
    raise ModelFormatError(f"unknown model type {model_type!r}", path=path)
