"""The report: one self-contained HTML page about a model on a dataset, from both in memory.

:func:`build` returns the page as text: the evaluation table (the model, and a baseline's scores
when given), the paired tests of the model against the baseline (:func:`ranklearn.stats.compare`),
the plots of :mod:`ranklearn.plot`, each an inline base64 PNG, and explanations
(:mod:`ranklearn.explain`: a summary plot of the feature contributions and, with a baseline, the
three queries where the systems differ most). CSS is inline; there is no script and nothing is
fetched, so the page can be mailed, served or opened offline. ``ranklearn report`` reads the
files and writes what :func:`build` returns; :func:`page`, :func:`table` and :func:`figure` are
the page's parts, which ``ranklearn explain --out`` uses too.

Needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ranklearn.data import RankingDataset
    from ranklearn.explain import QueryExplanation
    from ranklearn.metrics import Metric

__all__ = ["build", "figure", "forces_query", "page", "query_tables", "table"]

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
_SUMMARY_ROWS = 2000  # documents drawn for the summary plot (TreeSHAP on all rows of a big file is minutes)
_NEURAL_ROWS = 200  # fewer for expected gradients (a backward pass per row and background sample)


def _position_bias_caption(model: Any) -> str:
    """The caption of a model's position-bias plot: what the bias is, whether it was learned from
    the clicks or given (:func:`ranklearn.plot.bias_source`), and that the scores leave it out."""
    from ranklearn.plot import bias_source

    source = bias_source(model)
    unbiased = getattr(model, "unbiased", None)
    if unbiased is not None:  # a tree ensemble's unbiased= estimator
        what = "learned from the clicks" if source == "learned" else "given, clipped"
        return (f"Position bias {what} (unbiased={unbiased!r}), per rank shown; the "
                "model's scores (and this report's) are the trees f alone.")  # fmt: skip
    loss = getattr(model, "loss", None)
    name = loss if isinstance(loss, str) else getattr(loss, "name", type(loss).__name__)
    what = {"given": "the propensities given to it, clipped", "learned": "the propensities it learned from the clicks"}
    return (f"Position bias of the click loss ({name}: {what.get(source, 'the propensities it used or learned')}), "
            "per rank shown; the model's scores (and this report's) are the network's relevance scores alone, "
            "without it.")  # fmt: skip


def build(
    model: Any,
    data: RankingDataset,
    metrics: Sequence[str | Metric] = ("ndcg@10",),
    *,
    scores: ArrayLike | None = None,
    baseline: ArrayLike | None = None,
    model_name: str = "model",
    data_name: str = "data",
    baseline_name: str = "baseline",
    conventions: dict[str, Any] | None = None,
    docids: ArrayLike | None = None,
    query: str | None = None,
    permutations: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> str:
    """The report page of a fitted ``model`` on ``data``, as HTML text.

    Parameters
    ----------
    model : fitted ranker
        Any ranklearn ranker (its ``predict``; its ``evals_result_``, ``feature_importance``,
        ``position_bias_`` and ``predict_contributions`` when it has them).
    data : RankingDataset
        The rows to score, as many features as the model takes.
    metrics : sequence of str or Metric
        The metrics of the tables (names as :func:`ranklearn.metrics.get_metric` takes them, or
        metrics); the first one's family gives the metric@k plot and the per-query differences.
    scores : array-like (n_samples,), optional
        The model's scores of ``data`` when already computed (default:
        ``model.predict(data.X, qid=data.qid)``; the queries serve a per-query normalizer).
    baseline : array-like (n_samples,), optional
        Another system's scores of the rows of ``data``: its row in the table, the paired tests
        of the model against it, the per-query differences and the explained queries.
    model_name, data_name, baseline_name : str
        How the page names the model, the data and the baseline (``ranklearn report``: the files).
    conventions : dict, optional
        Convention options of the metric@k curves (``gain``, ``ties``, ...; as ``get_metric``).
    docids : array-like (n_samples,), optional
        Document ids, for metrics that order ties by them (``ties="docid"``).
    query : str, optional
        The query whose lambdas are drawn, as its id is written (default: the first with two
        distinct labels).
    permutations, seed, confidence
        Of the paired tests (:func:`ranklearn.stats.compare`): sign assignments of the
        randomization test and bootstrap resamples, their seed, the interval's level.

    Returns
    -------
    str
        The whole page.

    Raises
    ------
    ValueError
        On scores, labels or options the metrics or tests refuse, an unknown ``query``, or no
        query with two distinct labels.
    ImportError
        Without matplotlib (``pip install 'ranklearn[plot]'``).
    """
    from ranklearn import plot
    from ranklearn.metrics import conventions_line, get_metric, means_scope

    conventions = dict(conventions or {})
    metrics = [m if not isinstance(m, str) else get_metric(m, **conventions) for m in metrics]
    systems = {model_name: _scores(model.predict(data.X, qid=data.qid) if scores is None else scores, data, "scores")}
    if baseline is not None:
        if baseline_name == model_name:
            raise ValueError(f"the model and the baseline are both named {model_name!r}")
        systems[baseline_name] = _scores(baseline, data, "baseline")
    docids = None if docids is None else np.asarray(docids)
    values = {name: {m.name: m.per_query(data.y, s, data.ptr, docids=docids) for m in metrics}
              for name, s in systems.items()}  # fmt: skip
    names = [m.name for m in metrics]
    parts = [
        f"<h1>ranklearn report: {_e(model_name)} on {_e(data_name)}</h1>",
        f"<p>model <code>{_e(model_name)}</code> ({_e(type(model).__name__)}, "
        f"{model.n_features_in_} features); data <code>{_e(data_name)}</code>: {data.n_samples:,} rows, "
        f"{data.n_queries:,} queries; written {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC.</p>",
        "<h2>Evaluation</h2>",
        table(["system", *names], [[s, *(_mean_text(m.summarize(v[m.name])) for m in metrics)] for s, v in values.items()],
              caption=means_scope(values, data.n_queries)),  # fmt: skip
        f'<p class="note">{_e(conventions_line(metrics))}</p>',
    ]
    if baseline is not None:
        from ranklearn.stats import compare

        ordered = {name: values[name] for name in (baseline_name, model_name)}
        by_metric = {m: {system: ordered[system][m] for system in ordered} for m in names}
        result = compare(by_metric, n_permutations=permutations, n_resamples=permutations, confidence=confidence,
                         seed=seed)  # fmt: skip
        parts.append(f"<h2>Comparison with the baseline {_e(baseline_name)}</h2>")
        for m in names:
            columns, rows = result.table(m)
            parts.append(table(columns, rows, caption=result.title(m, data.n_queries)))
        parts.append(f'<p class="note">{_e(result.note(seed))}</p>')
    parts.append("<h2>Plots</h2>")
    first = metrics[0]
    family = first.name.split("@", 1)[0]
    if getattr(model, "evals_result_", None):
        parts.append(figure(plot.learning_curves(model), "Learning curves: the metric on each evaluation set "
                            "after every iteration; the dashed line is the iteration kept."))  # fmt: skip
    if hasattr(model, "feature_importance"):
        parts.append(figure(plot.feature_importance(model), "Feature importance: total split gain per feature."))
    if getattr(model, "position_bias_", None):
        parts.append(figure(plot.position_bias(model), _position_bias_caption(model)))
    parts.append(figure(plot.metric_at_k(data.y, systems, data.ptr, family, docids=docids, **conventions),
                        f"Mean {family}@k for k = 1 to 20."))  # fmt: skip
    if baseline is not None:
        fig = plot.per_query_difference(values[model_name][first.name], values[baseline_name][first.name],
                                        first.name, model_name, baseline_name)  # fmt: skip
        parts.append(figure(fig, f"Per-query difference of {first.name} against the baseline, sorted."))
    q = forces_query(data, query)
    rows = slice(data.ptr[q], data.ptr[q + 1])
    qid = data.query_ids[q]
    fig = plot.lambda_forces(data.y[rows], systems[model_name][rows], title=f"lambdas of query {qid}")
    parts.append(figure(fig, f"LambdaRank lambdas (NDCG@10) of query {qid} under the model's scores: documents "
                             "in ranked order, arrows up for documents pushed up, length = |lambda|."))  # fmt: skip
    parts += _explanations(model, data, values, model_name, baseline_name if baseline is not None else None, first.name)
    return page(f"ranklearn report: {model_name}", "\n".join(parts))


def _scores(values: ArrayLike, data: RankingDataset, name: str) -> np.ndarray:
    scores = np.asarray(values, dtype=np.float64).ravel()
    if scores.shape[0] != data.n_samples:
        raise ValueError(f"{name} has {scores.shape[0]} values for {data.n_samples} rows")
    return scores


def forces_query(data: RankingDataset, qid: str | None) -> int:
    """Index of the query whose lambdas are drawn: ``qid`` as written in the data, or the first
    query with at least two distinct labels.

    Raises
    ------
    ValueError
        When ``qid`` is not a query of the data, or no query has two distinct labels.
    """
    ids = [str(q) for q in data.query_ids.tolist()]
    if qid is not None:
        if qid not in ids:
            raise ValueError(f"--query {qid!r} is not a query of the data file")
        return ids.index(qid)
    for q in range(data.n_queries):
        labels = data.y[data.ptr[q] : data.ptr[q + 1]]
        if labels.shape[0] >= 2 and labels.min() < labels.max():
            return q
    raise ValueError("no query of the data file has two different labels: there are no lambdas to draw")


def _mean_text(value: float) -> str:
    return "n/a" if np.isnan(value) else f"{value:.4f}"


def _explanations(model: Any, data: RankingDataset, values: dict, model_name: str,
                  baseline_name: str | None, metric: str) -> list[str]:  # fmt: skip
    """The "Explanations" section: feature contributions of a sample of the rows (summary plot)
    and, with a baseline, the three queries whose metric differs most between the two systems."""
    from ranklearn import explain, plot

    parts = ["<h2>Explanations</h2>"]
    if not hasattr(model, "predict_contributions"):
        return parts + [f'<p class="note">{_e(type(model).__name__)} has no feature contributions.</p>']
    limit = _NEURAL_ROWS if "expected gradients" in explain.method(model) else _SUMMARY_ROWS
    rows = np.arange(data.n_samples)
    if rows.shape[0] > limit:
        rows = np.sort(np.random.default_rng(0).choice(rows, limit, replace=False))
    X = np.asarray(data.X[rows], dtype=np.float32)
    try:
        phi = model.predict_contributions(X)
    except ValueError as exc:  # a RankLib import without cover
        return parts + [f'<p class="note">No explanations: {_e(str(exc))}.</p>']
    names = explain.feature_names(model)
    parts.append(f'<p class="note">Feature contributions: {_e(explain.method(model))}; each document\'s contributions '
                 "sum to its score minus the expected score.</p>")  # fmt: skip
    parts.append(figure(plot.summary(phi, X, names), f"Summary: contributions of {X.shape[0]:,} documents"
                        f"{' (a seeded sample)' if rows.shape[0] < data.n_samples else ''}, top features by mean "
                        "|contribution|; color: the feature's value."))  # fmt: skip
    if baseline_name is None:
        parts.append('<p class="note">With --baseline, the queries where the two systems differ most are '
                     "explained here.</p>")  # fmt: skip
        return parts
    diff = values[model_name][metric] - values[baseline_name][metric]
    for q in np.argsort(-np.nan_to_num(np.abs(diff), nan=-1.0), kind="stable")[:3]:
        qid = str(data.query_ids[q])
        qrows = slice(int(data.ptr[q]), int(data.ptr[q + 1]))
        ex = explain.query(model, np.asarray(data.X[qrows], dtype=np.float32), top=5,
                           doc_ids=explain.document_ids(data, qrows))  # fmt: skip
        parts.append(f"<h3>Query {_e(qid)}: {metric} {values[model_name][metric][q]:.4g} against the baseline's "
                     f"{values[baseline_name][metric][q]:.4g}</h3>")  # fmt: skip
        parts += query_tables(ex, qid, 4)
    return parts


def query_tables(ex: QueryExplanation, qid: str, n: int) -> list[str]:
    """A query's documents and adjacent pairs (:func:`ranklearn.explain.query`) as HTML tables, with
    each one's ``n`` features of largest share (the report's and ``ranklearn explain --out``'s)."""
    from ranklearn.explain import shares_text

    rows = [[str(r + 1), ex.doc_ids[i], f"{ex.scores[i]:.6g}", shares_text(ex.document(int(i), n))]
            for r, i in enumerate(ex.order[: len(ex.pairs) + 1])]  # fmt: skip
    docs = table(["rank", "doc", "score", "moved by (share of score - query mean)"], rows,
                 caption=f"Documents of query {qid} by score", text=(1, 3))  # fmt: skip
    rows = [[f"{p + 1}-{p + 2}", ex.doc_ids[ex.order[p]], ex.doc_ids[ex.order[p + 1]], f"{q.difference:+.4g}",
             shares_text(q.top(n))] for p, q in enumerate(ex.pairs)]  # fmt: skip
    pairs = table(["ranks", "above", "below", "gap", "decided by"], rows, caption=f"Adjacent pairs of query {qid}",
                  text=(1, 2, 4))  # fmt: skip
    return [docs, pairs]


def page(title: str, body: str) -> str:
    """A whole self-contained page around ``body`` (HTML): inline CSS, no script."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def table(columns: Sequence[str], rows: Sequence[Sequence[str]], *, caption: str, text: Sequence[int] = (0,)) -> str:
    """An HTML table of text cells (escaped); every column but those of ``text`` (the first) is
    numeric (right-aligned)."""

    def cells(tag: str, values: Sequence[str]) -> str:
        return "".join(f'<{tag}{"" if i in text else " class=num"}>{_e(v)}</{tag}>' for i, v in enumerate(values))

    head = f"<tr>{cells('th', columns)}</tr>"
    body = "".join(f"<tr>{cells('td', r)}</tr>" for r in rows)
    return f"<table>\n<caption>{_e(caption)}</caption>\n<thead>{head}</thead>\n<tbody>{body}</tbody>\n</table>"


def figure(fig: Figure, caption: str) -> str:
    """A matplotlib figure as an inline base64 PNG (100 dpi) with its caption (escaped)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )
