"""Plots of rankers and rankings: learning curves, feature importance, metric@k, per-query
differences, the lambda "forces" of one query and the position bias of a ranker trained on clicks.

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (no global
state, no window, rendered by the Agg canvas when saved), so it works on servers and in
tests; ``fig.savefig("x.png")`` writes it. Needs the ``plot`` extra (matplotlib), imported
only when a function is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: k of :func:`metric_at_k` by default: 1 to 20, the depths LETOR papers report.
DEFAULT_KS = tuple(range(1, 21))


def _figure(width: float, height: float) -> Figure:
    """A new Agg-backed Figure; an ImportError naming the extra when matplotlib is missing."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(
            "ranklearn.plot needs matplotlib: install the 'plot' extra (pip install 'ranklearn[plot]')"
        ) from exc
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def learning_curves(model_or_evals: Any, best_iteration: int | None = None) -> Figure:
    """The metric of every evaluation set after each iteration, best iteration marked.

    Parameters
    ----------
    model_or_evals : ranker or dict
        A fitted ranker (its ``evals_result_`` and ``best_iteration_`` are used), or a dict
        ``{set: {metric: [value per iteration]}}`` as ``evals_result_`` holds.
    best_iteration : int, optional
        1-based iteration to mark with a vertical line (default: the ranker's
        ``best_iteration_``; none for a dict).

    Returns
    -------
    Figure
        One axes per metric, one line per set (x = iteration, from 1).

    Raises
    ------
    ValueError
        When there is no evaluation result (a ranker fitted without ``eval_set``).
    """
    evals = getattr(model_or_evals, "evals_result_", model_or_evals)
    if best_iteration is None:
        best_iteration = getattr(model_or_evals, "best_iteration_", None)
    metrics = list(dict.fromkeys(m for by_metric in evals.values() for m in by_metric))
    if not metrics:
        raise ValueError("no evaluation results to plot: fit the model with eval_set=[(X, y, qid)]")
    fig = _figure(6.4, 3.2 * len(metrics))
    for ax, metric in zip(fig.subplots(len(metrics), 1, squeeze=False)[:, 0], metrics):
        for set_name, by_metric in evals.items():
            if metric in by_metric:
                values = np.asarray(by_metric[metric], dtype=np.float64)  # None (non-finite) -> NaN: a gap
                ax.plot(np.arange(1, values.shape[0] + 1), values, label=set_name)
        if best_iteration is not None:
            ax.axvline(best_iteration, color="0.4", linestyle="--", label=f"best iteration ({best_iteration})")
        ax.set_xlabel("iteration")
        ax.set_ylabel(metric)
        ax.legend(loc="best")
        ax.grid(alpha=0.3)
    return fig


def feature_importance(model: Any, kind: str = "gain", top: int = 20) -> Figure:
    """Horizontal bars of the ``top`` most important features, by name.

    Parameters
    ----------
    model : LambdaMART
        A fitted tree model (anything with ``feature_importance(kind, by_name=True)``).
    kind : {"gain", "split"}
        Total split gain or number of splits.
    top : int
        How many features to show, the most important at the top.

    Raises
    ------
    TypeError
        For a model without feature importance (the neural rankers).
    ValueError
        On ``top < 1`` or an unknown ``kind``.
    """
    if not hasattr(model, "feature_importance"):
        raise TypeError(f"{type(model).__name__} has no feature importance (tree models such as LambdaMART do)")
    if top < 1:
        raise ValueError(f"top must be >= 1, got {top}")
    by_name = model.feature_importance(kind, by_name=True)
    # stable sort: equal importances keep the features' order
    names = sorted(by_name, key=lambda n: -by_name[n])[:top]
    fig = _figure(6.4, 1.0 + 0.28 * len(names))
    ax = fig.add_subplot()
    ax.barh(np.arange(len(names)), [by_name[n] for n in names], tick_label=names)
    ax.invert_yaxis()
    ax.set_xlabel("total split gain" if kind == "gain" else "number of splits")
    ax.set_title(f"feature importance ({kind}), top {len(names)} of {len(by_name)}")
    return fig


#: how :func:`position_bias` labels each kind of bias of ``position_bias_``
_BIAS_LABELS = {
    "t_plus": "t+ (clicked), ratio to rank 1",
    "t_minus": "t- (unclicked), ratio to rank 1",
    "factor": "additive score term g(rank)",
    "propensity": "propensity (clipped)",
}


def position_bias(model: Any, truth: ArrayLike | None = None) -> Figure:
    """The position bias a ranker trained with ``unbiased=`` learned, per rank.

    Parameters
    ----------
    model : LambdaMART
        Fitted with ``unbiased=`` (its ``position_bias_``): the ratios t+ and t- (``"pairwise"``),
        the score term g (``"position_factors"``) or the propensities (``"ipw"``), by rank from 1.
    truth : array-like, optional
        A known propensity per rank from 1 (a simulated click model's), drawn relative to rank 1.

    Raises
    ------
    ValueError
        For a model without a position bias.
    """
    bias = getattr(model, "position_bias_", None)
    if not bias:
        raise ValueError(f"{type(model).__name__} has no position bias: fit it with unbiased= and position=")
    fig = _figure(6.4, 4.0)
    ax = fig.add_subplot()
    for name, values in bias.items():
        ranks = np.arange(1, len(values) + 1)
        ax.plot(ranks, values, marker="o", label=_BIAS_LABELS.get(name, name))
    if truth is not None:
        t = np.asarray(truth, dtype=np.float64)
        ax.plot(np.arange(1, len(t) + 1), t / t[0], "k--", label="truth, ratio to rank 1")
    ax.set_xlabel("rank shown")
    ax.set_ylabel("bias")
    method = (getattr(model, "objective_", None) or {}).get("unbiased", "")
    ax.set_title(f"position bias learned{f' ({method})' if method else ''}")
    ax.legend()
    return fig


def metric_at_k(
    y: ArrayLike,
    scores: Mapping[str, ArrayLike],
    ptr: ArrayLike,
    metric: str = "ndcg",
    ks: Iterable[int] = DEFAULT_KS,
    docids: ArrayLike | None = None,
    **conventions: Any,
) -> Figure:
    """Mean ``metric@k`` for every k, one line per system.

    Parameters
    ----------
    y : array
        Labels of every row.
    scores : mapping
        System name -> scores of every row (same rows as ``y``).
    ptr : array
        Query boundaries (``n_queries + 1``).
    metric : str
        A metric with a depth: ``ndcg``, ``dcg``, ``err``, ``map``, ``p``, ``rr``.
    ks : iterable of int
        The depths (default 1 to 20).
    docids : array, optional
        Document id of every row: needed under ``ties="docid"`` (``conventions="trec_eval"``).
    **conventions
        Passed to :func:`ranklearn.metrics.get_metric` (``conventions=``, ``gain=``, ...).
    """
    from ranklearn.metrics import get_metric

    ks = list(ks)
    curves = {k: get_metric(f"{metric}@{k}", **conventions) for k in ks}
    fig = _figure(6.4, 3.6)
    ax = fig.add_subplot()
    for name, s in scores.items():
        s = np.asarray(s, dtype=np.float64)
        ax.plot(ks, [curves[k].mean(y, s, ptr, docids=docids) for k in ks], marker="o", markersize=3, label=name)
    ax.set_xlabel("k")
    ax.set_ylabel(f"mean {metric}@k")
    ax.set_xticks(ks)
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    return fig


def per_query_difference(
    values: ArrayLike, baseline: ArrayLike, metric: str = "ndcg@10", system: str = "system", baseline_name: str = "baseline"
) -> Figure:
    """Sorted bars of ``values - baseline`` per query (queries without a value left out).

    Parameters
    ----------
    values, baseline : array
        Per-query metric values of the system and the baseline, the same queries in the
        same order (e.g. ``Metric.per_query``); NaN (a skipped query) drops the query.
    metric, system, baseline_name : str
        Names for the labels.

    Returns
    -------
    Figure
        One bar per query, from the largest gain to the largest loss; the title counts
        wins, ties and losses.
    """
    a = np.asarray(values, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"values and baseline differ in length: {a.shape[0]} and {b.shape[0]} queries")
    d = a - b
    d = np.sort(d[~np.isnan(d)])[::-1]
    fig = _figure(6.4, 3.6)
    ax = fig.add_subplot()
    ax.bar(np.arange(d.shape[0]), d, width=1.0, color=np.where(d >= 0, "tab:green", "tab:red"))
    ax.axhline(0.0, color="0.2", linewidth=0.8)
    ax.set_xlabel("queries, sorted by difference")
    ax.set_ylabel(f"{metric}: {system} - {baseline_name}")
    wins, ties, losses = int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())
    ax.set_title(f"{wins} wins, {ties} ties, {losses} losses over {d.shape[0]} queries")
    return fig


def query_lambdas(y: ArrayLike, scores: ArrayLike, **objective_params: Any) -> np.ndarray:
    """The LambdaRank gradient of every document of one query (negative = pushed up).

    ``objective_params`` go to :func:`ranklearn.objectives.get_objective` (``sigma``,
    ``lambda_metric``, ``metric``, ``lambda_normalization``...).
    """
    from ranklearn.objectives import get_objective

    y = np.asarray(y, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    ptr = np.array([0, y.shape[0]], dtype=np.int64)
    objective = get_objective("lambdarank", **objective_params)
    objective.prepare(y, ptr)
    grad, _ = objective.gradients(s, y, ptr)
    return grad


def lambda_forces(y: ArrayLike, scores: ArrayLike, *, title: str | None = None, **objective_params: Any) -> Figure:
    """The lambdas of one query as forces: documents in their current order, one arrow each.

    Documents are placed left to right by descending score (rank 1 first; equal scores keep
    their order), a dot at height 0 colored by label. Each arrow's length is the document's
    |lambda| and points up for a document the gradient pushes up the ranking (lambda < 0)
    and down otherwise, as in the RankNet/LambdaRank papers' pictures.

    Parameters
    ----------
    y, scores : array
        Labels and current scores of the query's documents.
    title : str, optional
        Axes title (default names the metric of the lambdas).
    **objective_params
        Passed to :func:`query_lambdas`.
    """
    y = np.asarray(y, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1 or y.shape[0] < 2:
        raise ValueError(f"need the labels and scores of one query with at least 2 documents, got {y.shape} and {s.shape}")
    lam = query_lambdas(y, s, **objective_params)
    order = np.argsort(-s, kind="stable")
    ranks = np.arange(1, order.shape[0] + 1)
    push = -lam[order]  # up = toward rank 1
    fig = _figure(min(10.0, max(6.4, 0.2 * ranks.shape[0])), 4.0)
    ax = fig.add_subplot()
    ax.quiver(ranks, np.zeros_like(push), np.zeros_like(push), push, angles="xy", scale_units="xy", scale=1.0,
              color=np.where(push > 0, "tab:green", "tab:red"), width=0.004)  # fmt: skip
    dots = ax.scatter(ranks, np.zeros_like(push), c=y[order], cmap="viridis", zorder=3, s=25)
    fig.colorbar(dots, ax=ax, label="label", ticks=np.unique(y))
    reach = float(np.abs(push).max()) or 1.0
    ax.set_ylim(-1.15 * reach, 1.15 * reach)
    ax.set_xlim(0, ranks.shape[0] + 1)
    ax.axhline(0.0, color="0.6", linewidth=0.6)
    ax.set_xlabel("rank under the current scores")
    ax.set_ylabel("-lambda (up = pushed up)")
    metric = objective_params.get("lambda_metric") or objective_params.get("metric", "ndcg@10")
    ax.set_title(title or f"lambdas of one query ({metric})")
    return fig


__all__ = [
    "DEFAULT_KS",
    "feature_importance",
    "lambda_forces",
    "learning_curves",
    "metric_at_k",
    "per_query_difference",
    "query_lambdas",
]
