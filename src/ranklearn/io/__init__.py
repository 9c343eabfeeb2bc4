"""Model formats: ranklearn's own JSON model file, RankLib's LambdaMART text format (``ranklib``),
LightGBM's text model format (``lightgbm``, export only), ONNX export of the neural rankers
(``onnx``), the serving formats (``xgboost`` (with import), ``elasticsearch``, ``solr``,
``vespa``, ``treelite``; all through ``export_model``, see ``export``), and TREC qrels and run
files (``trec``)."""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from typing import Any

from ranklearn.exceptions import ModelFormatError
from ranklearn.io.export import check_export, export_model
from ranklearn.io.model_file import parse_model_file, read_model_file, write_model_file
from ranklearn.io.onnx import export_onnx

__all__ = [
    "check_export", "export_model", "export_onnx", "load_model", "load_model_with", "model_from_bytes",
    "read_model_file", "write_model_file",
]


def load_model(path: str | PathLike[str], **load_options: Any) -> Any:
    """Load any ranklearn model file; the model type says which registered ranker reads it.

    Parameters
    ----------
    path : file path
    **load_options
        Passed to the ranker's loader (the neural models take ``device=``).

    Raises
    ------
    ModelFormatError
        If the file is missing, corrupted, foreign, of an unknown model type or malformed.
    """
    return _model_from(*read_model_file(path), path, _estimator(load_options))


def load_model_with(path: str | PathLike[str], build: Callable[[Any, dict[str, Any]], Any]) -> Any:
    """A model file read and checked as by :func:`load_model`, its payload turned into an object
    by ``build(spec, payload)`` (``spec``: the ranker's ``registry.ModelSpec``), whose errors are
    reported as :func:`load_model`'s (``ranklearn.models.serving.load_scorer``)."""
    return _model_from(*read_model_file(path), path, build)


def model_from_bytes(raw: bytes, path: str | PathLike[str], **load_options: Any) -> Any:
    """:func:`load_model` of a model file's contents, read from ``path`` (which errors name)
    by other means than a local file (a Spark model's folder)."""
    return _model_from(*parse_model_file(raw, path), path, _estimator(load_options))


def _estimator(load_options: dict[str, Any]) -> Callable[[Any, dict[str, Any]], Any]:
    return lambda spec, payload: spec.load_class().from_payload(payload, **load_options)


def _model_from(
    model_type: str, payload: dict[str, Any], path: str | PathLike[str], build: Callable[[Any, dict[str, Any]], Any]
) -> Any:
    from ranklearn.registry import REGISTRY

    spec = REGISTRY.get(model_type)
    if spec is None:
        raise ModelFormatError(f"unknown model type {model_type!r} (known: {', '.join(REGISTRY)})", path=path)
    try:
        return build(spec, payload)
    except ModelFormatError as exc:
        raise ModelFormatError(exc.reason, path=path) from None
    except ImportError as exc:
        raise ModelFormatError(f"cannot load a {model_type} model: {exc}", path=path) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise ModelFormatError(f"malformed {model_type} model payload ({type(exc).__name__}: {exc})", path=path) from None
