"""Body of ``ranklearn report``: the model file, the data file and a baseline's scores read, the page
built by :func:`ranklearn.report.build`, and written by the output rules of :mod:`ranklearn._files`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ranklearn.cli import _common as C
from ranklearn.cli import _evaluate as E

if TYPE_CHECKING:
    from ranklearn.metrics import Metric


def run_report(
    out: Path,
    model_path: Path,
    data_path: Path,
    baseline_path: Path | None,
    *,
    metrics: Sequence[Metric],
    conventions: dict[str, Any],
    regroup: bool = True,
    permutations: int = 10_000,
    confidence: float = 0.95,
    **options: Any,
) -> None:
    """Check the output path and the options, read the inputs, build the page and write it.

    ``regroup`` merges the rows of a qid that reappears (with a warning); False refuses the file.
    ``options`` go to :func:`ranklearn.report.build` (``query``, ``seed``).
    """
    from ranklearn._files import write_output
    from ranklearn.exceptions import FeatureValueError
    from ranklearn.io import load_model

    inputs = [model_path, data_path] + ([baseline_path] if baseline_path is not None else [])
    C.check_output_path(out, *inputs)
    if str(data_path) == "-" and baseline_path is not None and str(baseline_path) == "-":
        raise ValueError("--data and --baseline cannot both read standard input (-)")
    if baseline_path is not None:
        E.check_compare_options(permutations, confidence)
    model = load_model(model_path)
    n = model.n_features_in_
    ds, order = C.load_data_as_wide(
        data_path, n, f"the model's features ({model_path} was trained on {n})", return_order=True, regroup=regroup,
        positions_unused="the report evaluates the model on the file's labels",
    )
    baseline = baseline_name = None
    if baseline_path is not None:
        baseline_name = baseline_path.name
        baseline = C.read_scores(baseline_path, ds.n_samples, data_path)
        baseline = baseline if order is None else baseline[order]
    model_name = model_path.name if model_path.name != baseline_name else str(model_path)
    try:
        scores = model.predict(ds.X, qid=ds.qid)  # the queries: for a per-query normalizer
    except FeatureValueError as exc:  # NaN for a model that takes none: the file's line
        raise C.feature_value_error(exc, ds, data_path, model) from None
    systems = {model_name: scores, **({baseline_name: baseline} if baseline is not None else {})}
    E.values_from_arrays(ds, systems, metrics, data_path)  # labels the metrics refuse: the file's line, before plotting
    try:
        from ranklearn.report import build

        page = build(
            model, ds, metrics, scores=scores, baseline=baseline, model_name=model_name, data_name=data_path.name,
            baseline_name=baseline_name or "baseline", conventions=conventions,
            docids=E.docids_for(ds, metrics, data_path), permutations=permutations, confidence=confidence, **options,
        )  # fmt: skip
    except ImportError as exc:  # matplotlib (the plot extra), or torch for a neural model: one line
        raise ValueError(f"report is not available here ({exc})") from None
    write_output(out, page.encode("utf-8"))
    C.report(f"wrote {out}", out)


__all__ = ["run_report"]
