"""Body of ``ranklearn report``: one self-contained HTML page about a model on a test file.

The page holds ``evaluate``'s table (the model, and the baseline when given), ``compare``'s
tables (the model tested against the baseline), the plots of :mod:`ranklearn.plot`, each
an inline base64 PNG, and explanations (:mod:`ranklearn.explain`: a summary plot of the
feature contributions and, with a baseline, the three queries where the systems differ most).
CSS is inline; there is no script and nothing is fetched, so the file can be mailed or opened
offline.
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
    from ranklearn.exceptions import FeatureValueError

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
        _table(["system", *names], [[s, *(C._fmt(m.summarize(v[m.name])) for m in metrics)] for s, v in values.items()],
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
    parts += _explanations(model, ds, values, model_name,
                           baseline_path.name if baseline_path is not None else None, first.name)  # fmt: skip
    return _page(f"ranklearn report: {model_path.name}", "\n".join(parts))


_SUMMARY_ROWS = 2000  # documents drawn for the summary plot (TreeSHAP on all rows of a big file is minutes)
_NEURAL_ROWS = 200  # fewer for expected gradients (a backward pass per row and background sample)


def _explanations(model, ds: RankingDataset, values: dict, model_name: str,
                  baseline_name: str | None, metric: str) -> list[str]:  # fmt: skip
    """The "Explanations" section: feature contributions of a sample of the rows (summary plot)
    and, with a baseline, the three queries whose metric differs most between the two systems."""
    import numpy as np

    from ranklearn import explain, plot
    from ranklearn.cli._explain import document_ids, html_tables, method

    parts = ["<h2>Explanations</h2>"]
    if not hasattr(model, "predict_contributions"):
        return parts + [f'<p class="note">{_e(type(model).__name__)} has no feature contributions.</p>']
    limit = _NEURAL_ROWS if "expected gradients" in method(model) else _SUMMARY_ROWS
    rows = np.arange(ds.n_samples)
    if rows.shape[0] > limit:
        rows = np.sort(np.random.default_rng(0).choice(rows, limit, replace=False))
    X = np.asarray(ds.X[rows], dtype=np.float32)
    try:
        phi = model.predict_contributions(X)
    except ValueError as exc:  # a RankLib import without cover
        return parts + [f'<p class="note">No explanations: {_e(str(exc))}.</p>']
    names = explain.feature_names(model)
    parts.append(f'<p class="note">Feature contributions: {_e(method(model))}; each document\'s contributions '
                 "sum to its score minus the expected score.</p>")  # fmt: skip
    parts.append(_figure(plot.summary(phi, X, names), f"Summary: contributions of {X.shape[0]:,} documents"
                         f"{' (a seeded sample)' if rows.shape[0] < ds.n_samples else ''}, top features by mean "
                         "|contribution|; color: the feature's value."))  # fmt: skip
    if baseline_name is None:
        parts.append('<p class="note">With --baseline, the queries where the two systems differ most are '
                     "explained here.</p>")  # fmt: skip
        return parts
    diff = values[model_name][metric] - values[baseline_name][metric]
    for q in np.argsort(-np.nan_to_num(np.abs(diff), nan=-1.0), kind="stable")[:3]:
        qid = str(ds.query_ids[q])
        qrows = slice(int(ds.ptr[q]), int(ds.ptr[q + 1]))
        ex = explain.query(model, np.asarray(ds.X[qrows], dtype=np.float32), top=5,
                           doc_ids=document_ids(ds, qrows, "docid"))  # fmt: skip
        parts.append(f"<h3>Query {_e(qid)}: {metric} {values[model_name][metric][q]:.4g} against the baseline's "
                     f"{values[baseline_name][metric][q]:.4g}</h3>")  # fmt: skip
        parts += html_tables(ex, qid, 4)
    return parts


def _page(title: str, body: str) -> str:
    """A whole self-contained page: inline CSS, no script."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]], *, caption: str,
           text: Sequence[int] = (0,)) -> str:  # fmt: skip
    """An HTML table; every column but those of ``text`` (the first) is numeric (right-aligned)."""
    def cells(tag: str, values: Sequence[str]) -> str:
        return "".join(f'<{tag}{"" if i in text else " class=num"}>{_e(v)}</{tag}>' for i, v in enumerate(values))

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
