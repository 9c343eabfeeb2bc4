"""One entry point for every export format (``export_model``) and the check of an exported file
with the real reader (``check_export``): what ``ranklearn export --format F [--check DATA]`` runs.

Formats (module: options; see each module for the engine's rules):

* ``ranklib`` (:mod:`ranklearn.io.ranklib`), ``lightgbm`` (:mod:`ranklearn.io.lightgbm`),
  ``treelite`` (:mod:`ranklearn.io.treelite`): no options.
* ``onnx`` (:mod:`ranklearn.io.onnx`): ``opset_version``.
* ``xgboost`` (JSON model), ``xgboost-dump`` (JSON dump) (:mod:`ranklearn.io.xgboost`): ``feature_names``.
* ``elasticsearch``, ``opensearch`` (:mod:`ranklearn.io.elasticsearch`): ``name``, ``model_type``,
  ``feature_names``, ``normalizer``.
* ``solr`` (:mod:`ranklearn.io.solr`): ``name``, ``store``, ``feature_names``, ``missing_as``.
* ``vespa`` (:mod:`ranklearn.io.vespa`): ``flavor``, ``feature_names``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from typing import Any

import numpy as np

#: format -> (module, export function, scoring function of the real reader or None)
_FORMATS: dict[str, tuple[str, str, str | None]] = {
    "ranklib": ("ranklib", "export_ranklib", None),
    "lightgbm": ("lightgbm", "export_lightgbm", "score_lightgbm"),
    "onnx": ("onnx", "export_onnx", "score_onnx"),
    "xgboost": ("xgboost", "export_xgboost", "score_xgboost"),
    "xgboost-dump": ("xgboost", "export_xgboost_dump", None),
    "elasticsearch": ("elasticsearch", "export_elasticsearch", None),
    "opensearch": ("elasticsearch", "export_elasticsearch", None),
    "solr": ("solr", "export_solr", None),
    "vespa": ("vespa", "export_vespa", None),
    "treelite": ("treelite", "export_treelite", "score_treelite"),
}
FORMATS = tuple(_FORMATS)
#: formats whose reader runs in Python, for ``check_export``
CHECKED_FORMATS = tuple(f for f, (_, _, score) in _FORMATS.items() if score)


def _function(fmt: str, which: int) -> Callable[..., Any]:
    if fmt not in _FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (known: {', '.join(FORMATS)})")
    module = importlib.import_module(f"ranklearn.io.{_FORMATS[fmt][0]}")
    return getattr(module, _FORMATS[fmt][which])


def format_options(fmt: str) -> tuple[str, ...]:
    """The keyword options ``export_model`` takes for ``fmt``."""
    params = inspect.signature(_function(fmt, 1)).parameters.values()
    return tuple(p.name for p in params if p.kind is p.KEYWORD_ONLY)


def export_model(model: Any, path: str | PathLike[str], format: str, **options: Any) -> None:
    """Write a fitted model in another tool's format (atomically, through ``ranklearn._files``).

    A tree model trained on clicks with ``unbiased=`` is exported as its trees ``f``: its position
    bias (``position_bias_``) served training only, and ``predict`` scores with ``f`` alone too.
    A model fitted with a global ``normalize=`` is exported as the map of raw rows it is (the
    normalizer folded into thresholds, weights or the ONNX graph: :mod:`ranklearn.io._trees`); one
    fitted with a per-query ``normalize`` is refused (an engine scores each document alone).

    Parameters
    ----------
    model
        A fitted ranklearn model (or an imported one).
    path : str or PathLike
        The file to write (``-``: standard output).
    format : str
        One of :data:`FORMATS` (see the module's table).
    **options
        The format's options (the table); another is a ``ValueError`` naming it.

    Raises
    ------
    ValueError
        For an unknown format or option, or a model the format cannot hold (one line saying what).
    ImportError
        When the format's library (treelite, torch for ONNX) is missing.
    """
    export = _function(format, 1)
    known = format_options(format)
    unknown = sorted(set(options) - set(known))
    if unknown:
        takes = f"takes {', '.join(known)}" if known else "takes no options"
        raise ValueError(f"export format {format!r} {takes}; got {', '.join(unknown)}")
    try:
        export(model, path, **options)
    except TypeError as exc:  # ONNX refuses a tree model with a TypeError: one kind of refusal here
        raise ValueError(str(exc)) from None


@dataclass(frozen=True)
class ExportCheck:
    """The scores of an exported file by its reader against ``model.predict``."""

    reader: str
    n_rows: int
    max_difference: float
    tolerance: float

    @property
    def passed(self) -> bool:
        return self.max_difference <= self.tolerance


def _tolerance(model: Any, expected: np.ndarray) -> float:
    """float32 round-off: of the trees' sums for a tree model, of the scores for another."""
    from ranklearn.io._trees import float32_sum_tolerance, is_tree_model, model_trees

    if is_tree_model(model):
        return float32_sum_tolerance(model_trees(model, "the check"))
    return 1e-5 * max(1.0, float(np.max(np.abs(expected), initial=0.0)))  # the float32 graph of a network


def check_export(model: Any, path: str | PathLike[str], format: str, X: np.ndarray) -> ExportCheck:
    """Score ``X`` with the exported file through the format's real reader (xgboost, lightgbm,
    treelite, onnxruntime) and compare with ``model.predict(X)``.

    Raises
    ------
    ValueError
        For a format no reader of which runs in Python (Solr, the LTR plugins, Vespa, RankLib).
    ImportError
        When the reader is not installed.
    """
    if format not in CHECKED_FORMATS:
        raise ValueError(
            f"no reader of {format!r} runs here: --check takes {', '.join(CHECKED_FORMATS)} "
            "(the tests check the others against their engines' rules)"
        )
    got = np.asarray(_function(format, 2)(path, X), dtype=np.float64)
    expected = model.predict(X)
    diff = float(np.max(np.abs(got - expected), initial=0.0))
    if np.any(np.isnan(got) != np.isnan(expected)):
        diff = float("inf")
    return ExportCheck(_FORMATS[format][0], int(X.shape[0]), diff, _tolerance(model, expected))
