"""Body of ``ranklearn report``: one self-contained HTML page about a model on a test file.

The page holds ``evaluate``'s table (the model, and the baseline when given), ``compare``'s
tables (the model tested against the baseline) and the plots of :mod:`ranklearn.plot`, each
an inline base64 PNG. CSS is inline; there is no script and nothing is fetched, so the file
can be mailed or opened offline.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ranklearn.cli import _common as C
from ranklearn.cli import _evaluate as E

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ranklearn.data import RankingDataset
    from ranklearn.metrics import Metric

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8em 0; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; }
figure { margin: 1em 0; } img { max-width: 100%; height: auto; }
figcaption, p.note { color: #555; font-size: 0.9em; }
"""


def forces_query(ds: RankingDataset, qid: str | None) -> int:
    """Index of the query whose lambdas are drawn: ``qid`` as written in the file, or the
    first query with at least two distinct labels.

    Raises
    ------
    ValueError
        When ``qid`` is not a query of the file, or no query has two distinct labels.
    """
    ids = [str(q) for q in ds.query_ids.tolist()]
    if qid is not None:
        if qid not in ids:
            raise ValueError(f"--query {qid!r} is not a query of the data file")
        return ids.index(qid)
    for q in range(ds.n_queries):
        labels = ds.y[ds.ptr[q] : ds.ptr[q + 1]]
        if labels.shape[0] >= 2 and labels.min() < labels.max():
            return q
    raise ValueError("no query of the data file has two different labels: there are no lambdas to draw")


def build_report(
    model_path: Path,
    data_path: Path,
    metrics: Sequence[Metric],
    conventions: dict[str, Any],
    *,
    baseline_path: Path | None = None,
    query: str | None = None,
    permutations: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    regroup: bool = True,
) -> str:
    """The report page as HTML text.

    Parameters
    ----------
    model_path, data_path : Path
        A model file (``train --save``) and the ranking file to score.
    metrics : sequence of Metric
        The metrics of the tables; the first one's family gives the metric@k plot and the
        per-query differences.
    conventions : dict
        The convention options the metrics were built with (for the metric@k curves).
    baseline_path : Path, optional
        Scores of a baseline system, one per row of ``data_path``.
    query : str, optional
        The query whose lambdas are drawn (default: the first with two distinct labels).
    permutations, seed, confidence
        As ``compare``'s options.
    regroup : bool
        Merge the rows of a qid that reappears (with a warning); False refuses the file.
    """
    from ranklearn import plot
    from ranklearn.io import load_model
    from ranklearn.metrics import query_mean
    from ranklearn.models._base import FeatureValueError

    model = load_model(model_path)
    n = model.n_features_in_
    ds, order = C.load_data_as_wide(
        data_path, n, f"the model's features ({model_path} was trained on {n})", return_order=True, regroup=regroup
    )
    systems = {}
    if baseline_path is not None:
        baseline = C.read_scores(baseline_path, ds.n_samples, data_path)
        systems[baseline_path.name] = baseline if order is None else baseline[order]
    model_name = model_path.name if model_path.name not in systems else str(model_path)
    try:
        systems[model_name] = model.predict(ds.X)
    except FeatureValueError as exc:  # NaN for a model that takes none: the file's line
        raise C.feature_value_error(exc, ds, data_path, model._model_name) from None
    systems = {model_name: systems.pop(model_name), **systems}  # the model's row first in evaluate's table
    values = E.values_from_arrays(ds, systems, metrics, data_path)
    names = [m.name for m in metrics]
    parts = [
        f"<h1>ranklearn report: {_e(model_path.name)} on {_e(data_path.name)}</h1>",
        f"<p>model <code>{_e(str(model_path))}</code> ({_e(type(model).__name__)}, "
        f"{model.n_features_in_} features); data <code>{_e(str(data_path))}</code>: {ds.n_samples:,} rows, "
        f"{ds.n_queries:,} queries; written {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC.</p>",
        "<h2>Evaluation</h2>",
        _table(["system", *names], [[s, *(C._fmt(query_mean(v[n])) for n in names)] for s, v in values.items()],
               caption=E.means_scope(values, ds.n_queries)),  # fmt: skip
        f'<p class="note">{_e(C.conventions_line(metrics))}</p>',
    ]
    if baseline_path is not None:
        ordered = {baseline_path.name: values[baseline_path.name], model_name: values[model_name]}
        result = E.comparison(ordered, metrics, permutations=permutations, seed=seed, confidence=confidence)
        parts.append(f"<h2>Comparison with the baseline {_e(baseline_path.name)}</h2>")
        for m in names:
            columns, rows = E.compare_rows(result, m)
            parts.append(_table(columns, rows, caption=E.compare_title(result, m, ds.n_queries)))
        parts.append(f'<p class="note">{_e(E.compare_note(result, seed))}</p>')
    parts.append("<h2>Plots</h2>")
    first = metrics[0]
    family = first.name.split("@", 1)[0]
    if getattr(model, "evals_result_", None):
        parts.append(_figure(plot.learning_curves(model), "Learning curves: the metric on each evaluation set "
                             "after every iteration; the dashed line is the iteration kept."))  # fmt: skip
    if hasattr(model, "feature_importance"):
        parts.append(_figure(plot.feature_importance(model), "Feature importance: total split gain per feature."))
    if getattr(model, "position_bias_", None):
        parts.append(_figure(plot.position_bias(model), "Position bias learned from the clicks (unbiased=), per rank "
                             "shown; the model's scores (and this report's) are the trees f alone."))  # fmt: skip
    docids = E.docids_for(ds, metrics, data_path)  # trec_eval's ties
    parts.append(_figure(plot.metric_at_k(ds.y, systems, ds.ptr, family, docids=docids, **conventions),
                         f"Mean {family}@k for k = 1 to 20."))  # fmt: skip
    if baseline_path is not None:
        fig = plot.per_query_difference(values[model_name][first.name], values[baseline_path.name][first.name],
                                        first.name, model_name, baseline_path.name)  # fmt: skip
        parts.append(_figure(fig, f"Per-query difference of {first.name} against the baseline, sorted."))
    q = forces_query(ds, query)
    rows = slice(ds.ptr[q], ds.ptr[q + 1])
    qid = ds.query_ids[q]
    fig = plot.lambda_forces(ds.y[rows], systems[model_name][rows], title=f"lambdas of query {qid}")
    parts.append(_figure(fig, f"LambdaRank lambdas (NDCG@10) of query {qid} under the model's scores: documents "
                              "in ranked order, arrows up for documents pushed up, length = |lambda|."))  # fmt: skip
    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>ranklearn report: {_e(model_path.name)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]], *, caption: str) -> str:
    """An HTML table; every column but the first is numeric (right-aligned)."""
    def cells(tag: str, values: Sequence[str]) -> str:
        return "".join(f'<{tag}{"" if i == 0 else " class=num"}>{_e(v)}</{tag}>' for i, v in enumerate(values))

    head = f"<tr>{cells('th', columns)}</tr>"
    body = "".join(f"<tr>{cells('td', r)}</tr>" for r in rows)
    return f"<table>\n<caption>{_e(caption)}</caption>\n<thead>{head}</thead>\n<tbody>{body}</tbody>\n</table>"


def _figure(fig: Figure, caption: str) -> str:
    """A figure as an inline base64 PNG (100 dpi) with its caption."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def run_report(out: Path, model_path: Path, data_path: Path, baseline_path: Path | None, **options: Any) -> None:
    """Check the output path, build the page and write it by the output rules of :mod:`ranklearn._files`."""
    from ranklearn._files import write_output

    inputs = [model_path, data_path] + ([baseline_path] if baseline_path is not None else [])
    C.check_output_path(out, *inputs)
    if str(data_path) == "-" and baseline_path is not None and str(baseline_path) == "-":
        raise ValueError("--data and --baseline cannot both read standard input (-)")
    try:
        page = build_report(model_path, data_path, baseline_path=baseline_path, **options)
    except ImportError as exc:  # matplotlib (the plot extra), or torch for a neural model: one line
        raise ValueError(f"report is not available here ({exc})") from None
    write_output(out, page.encode("utf-8"))
    C.report(f"wrote {out}", out)


__all__ = ["build_report", "forces_query", "run_report"]
