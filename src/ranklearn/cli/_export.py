"""``ranklearn export``: a model file to another tool's format (:func:`ranklearn.io.export.export_model`),
and ``--check DATA``: the exported file scored by its real reader against ranklearn's scores."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from ranklearn.cli import _common as C


class ExportFormat(str, Enum):
    ranklib = "ranklib"
    lightgbm = "lightgbm"
    onnx = "onnx"
    xgboost = "xgboost"
    xgboost_dump = "xgboost-dump"
    elasticsearch = "elasticsearch"
    opensearch = "opensearch"
    solr = "solr"
    vespa = "vespa"
    treelite = "treelite"


class VespaFlavor(str, Enum):
    lightgbm = "lightgbm"
    xgboost = "xgboost"


class PluginModelType(str, Enum):
    xgboost_json = "xgboost+json"
    ranklib = "ranklib"
    linear = "linear"


def _feature_names(path: Path) -> list[str]:
    """One feature name a line, in the model's column order (blank lines ignored)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read feature names ({getattr(exc, 'strerror', None) or exc})") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


def _normalizer(path: Path) -> Any:
    """A global Normalizer saved as JSON (``Normalizer.to_dict()``)."""
    from ranklearn.data import Normalizer

    try:
        return Normalizer.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the normalizer ({exc.strerror or exc})") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a Normalizer.to_dict() JSON ({type(exc).__name__}: {exc})") from None


def export(
    model: Path = typer.Option(..., "--model", help="A ranklearn model file (from train --save)."),
    fmt: ExportFormat = typer.Option(..., "--format", help="Target format."),
    out: Path = typer.Option(..., "--out", parser=C.output_path, help="File to write (- = stdout)."),
    check: Path = typer.Option(None, "--check", metavar="DATA", help="Score DATA with the exported file through its real reader (xgboost, lightgbm, treelite, onnx) and compare; exit 1 above float32 round-off."),
    feature_names: Path = typer.Option(None, "--feature-names", metavar="FILE", help="The features' names in the engine, one a line in column order (default: the model's, else f1, f2, ...)."),
    name: str = typer.Option("ranklearn", "--name", help="The model's name in Solr or the LTR plugin."),
    featureset: str = typer.Option(None, "--featureset", help="elasticsearch/opensearch: the feature set the model is created in (names the request to send)."),
    model_type: PluginModelType = typer.Option(None, "--model-type", help="elasticsearch/opensearch: the plugin's model type (default: xgboost+json for trees, linear or ranklib for linear models)."),
    normalizer: Path = typer.Option(None, "--normalizer", metavar="FILE", help="elasticsearch/opensearch: a global Normalizer (its to_dict() JSON) the training features went through, as feature_normalizers."),
    store: str = typer.Option(None, "--store", help="solr: the feature store of the model's features."),
    missing_as: float = typer.Option(None, "--missing-as", metavar="VALUE", help="solr: the value documents carry where a feature is missing (needed for a model with a missing-value branch)."),
    flavor: VespaFlavor = typer.Option(None, "--vespa-flavor", help="vespa: lightgbm() JSON (exact; the default) or xgboost() dump."),
    iterations: int | None = C.ITERATIONS_OPT,
) -> None:
    """Export a model to another tool's format, for serving.

    ranklib: RankLib's text (trees or linear weights; RankLib, the LTR plugins); lightgbm:
    LightGBM's text model; onnx: the neural rankers (needs the onnx extra); xgboost: XGBoost's
    JSON model (xgboost.Booster, eland, Treelite); xgboost-dump: XGBoost's JSON tree dump;
    elasticsearch / opensearch: the LTR plugin's _createmodel body; solr: Solr LTR's model JSON;
    vespa: the JSON of Vespa's lightgbm() or xgboost() rank feature; treelite: a Treelite
    checkpoint (treelite.Model.deserialize). See README "Serving".
    """
    from ranklearn.io import load_model
    from ranklearn.io.export import export_model, format_options

    C.check_output_path(out, model)
    estimator = C.model_part(load_model(model), iterations, False, model)
    if getattr(estimator, "position_bias_", None) is not None:
        # the trees' bias comes from --unbiased, a network's from its click loss (--loss)
        setting, scorer = ("--unbiased", "the trees f") if getattr(estimator, "unbiased", None) else ("--loss", "the network f")
        C.note(f"the model's position bias ({setting}) is not exported: the file holds {scorer}, which predict uses")
    # each command-line option: the export option it gives, and its value (None: not given)
    given = {
        "--feature-names": ("feature_names", _feature_names(feature_names) if feature_names is not None else None),
        "--model-type": ("model_type", model_type.value if model_type is not None else None),
        "--normalizer": ("normalizer", _normalizer(normalizer) if normalizer is not None else None),
        "--store": ("store", store),
        "--missing-as": ("missing_as", missing_as),
        "--vespa-flavor": ("flavor", flavor.value if flavor is not None else None),
    }
    takes = format_options(fmt.value)
    wrong = [opt for opt, (key, value) in given.items() if value is not None and key not in takes]
    plugin = fmt in (ExportFormat.elasticsearch, ExportFormat.opensearch)
    if featureset is not None and not plugin:  # it names the plugin's request, not an export option
        wrong.append("--featureset")
    if wrong:
        raise ValueError(f"{', '.join(wrong)} does not apply to --format {fmt.value}")
    options = {key: value for key, value in given.values() if value is not None}
    if "name" in takes:
        options["name"] = name
    if check is not None:
        from ranklearn.io.export import CHECKED_FORMATS

        if fmt.value not in CHECKED_FORMATS:  # before writing anything
            raise ValueError(f"--check takes --format {', '.join(CHECKED_FORMATS)}; no reader of {fmt.value} runs here")
        if str(out) == "-":
            raise ValueError("--check reads the exported file back: give --out a file, not -")
    try:
        export_model(estimator, out, fmt.value, **options)
    except ImportError as exc:  # treelite or the onnx extra missing: one line
        raise ValueError(str(exc)) from None
    C.report(f"wrote {out} ({fmt.value})", out)
    if plugin and featureset:
        C.report(f"send it as: POST _ltr/_featureset/{featureset}/_createmodel (body: {out})", out)
    if check is not None:
        _check(estimator, out, fmt.value, check)


def _check(estimator: Any, out: Path, fmt: str, data: Path) -> None:
    import numpy as np

    from ranklearn.io.export import check_export

    n_features = estimator.n_features_in_
    # doubles, as the file's decimals are: readers that compare doubles (LightGBM, Treelite) see them
    ds = C.load_data_as_wide(data, n_features, f"the model's features ({n_features})", warn_regroup=False,
                             dtype=np.float64, require_groups=False,
                             positions_unused="the check reads the features only")  # fmt: skip
    try:
        result = check_export(estimator, out, fmt, np.asarray(ds.X))
    except ImportError as exc:
        raise ValueError(f"--check needs the {fmt} reader: {exc}") from None
    verdict = "within" if result.passed else "ABOVE"
    C.report(
        f"checked {result.n_rows:,} rows of {C.shown(data)} with {result.reader}: largest difference from "
        f"ranklearn's scores {result.max_difference:.3g}, {verdict} float32 round-off ({result.tolerance:.3g})"
    )
    if not result.passed:
        raise typer.Exit(1)
