"""Plots of rankers and rankings: learning curves, feature importance, metric@k, per-query
differences, the lambda "forces" of one query, explanations (feature contributions: a summary
beeswarm, a dependence plot, one document's waterfall, one pair's), the position bias of a
ranker trained on clicks and a click-protocol run's rankers against its references.

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


#: how :func:`position_bias` labels each kind of bias of ``position_bias_`` (propensities: by their source)
_BIAS_LABELS = {
    "t_plus": "t+ (clicked), ratio to rank 1",
    "t_minus": "t- (unclicked), ratio to rank 1",
    "factor": "additive score term g(rank)",
    "propensity": "propensity",
}
_PROPENSITY_LABELS = {"given": "propensity (given, clipped)", "learned": "propensity (learned), ratio to rank 1"}


def bias_source(model: Any) -> str | None:
    """Where a click model's ``position_bias_`` comes from.

    Parameters
    ----------
    model : LambdaMART or a neural ranker
        Fitted on clicks (``unbiased=`` or a click ``loss=``).

    Returns
    -------
    str or None
        ``"given"`` (inverse propensity weighting: ``unbiased="ipw"`` of the trees, ``loss="ipw"``
        or an ``IPWLoss`` of the networks), ``"learned"`` (the trees' other ``unbiased=``, DLA,
        regression EM), or None when the model does not say (a network trained with another Loss
        object, saved as "custom")."""
    unbiased = getattr(model, "unbiased", None)
    if unbiased is not None:
        return "given" if unbiased == "ipw" else "learned"
    loss = getattr(model, "loss", None)
    name = loss.lower() if isinstance(loss, str) else getattr(loss, "name", None)  # names are taken in any case
    return {"ipw": "given", "dla": "learned", "regression_em": "learned"}.get(name)


def position_bias(model: Any, truth: ArrayLike | None = None) -> Figure:
    """The position bias a ranker trained on clicks learned or was given, per rank.

    Parameters
    ----------
    model : LambdaMART or a neural ranker
        Fitted with ``unbiased=`` or a click loss (its ``position_bias_``): the ratios t+ and t-
        (``"pairwise"``), the score term g (``"position_factors"``), or the propensities given
        (``"ipw"``, clipped) or learned (DLA, regression EM), by rank from 1 (see :func:`bias_source`).
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
    source = bias_source(model)
    fig = _figure(6.4, 4.0)
    ax = fig.add_subplot()
    for name, values in bias.items():
        ranks = np.arange(1, len(values) + 1)
        label = _PROPENSITY_LABELS.get(source, _BIAS_LABELS[name]) if name == "propensity" else _BIAS_LABELS.get(name, name)
        ax.plot(ranks, values, marker="o", label=label)
    if truth is not None:
        t = np.asarray(truth, dtype=np.float64)
        ax.plot(np.arange(1, len(t) + 1), t / t[0], "k--", label="truth, ratio to rank 1")
    ax.set_xlabel("rank shown")
    ax.set_ylabel("bias")
    method = (getattr(model, "objective_", None) or {}).get("unbiased", "")
    ax.set_title(f"position bias{f' {source}' if source else ''}{f' ({method})' if method else ''}")
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


#: the click protocol's reference rows (:mod:`ranklearn.clicks.protocol`), drawn grey
PROTOCOL_REFERENCES = ("logging", "naive", "full information")


def protocol(
    result: Any, metric: str = "ndcg@10", n_resamples: int = 2000, references: Iterable[str] = PROTOCOL_REFERENCES
) -> Figure:
    """Every ranker of a click-protocol run against the naive model and the full-information one.

    One row per ranker: its mean ``metric`` over the test queries (a dot) and the paired 95%
    bootstrap interval of its difference to the naive model, shifted by the naive mean (a line;
    per query, :func:`ranklearn.stats.bootstrap_interval`). The band between the naive and the
    full-information means is the gap that debiasing aims at, its middle dashed. Green: above
    naive outside the noise; red: below; blue: inside the noise; grey: the ``references``.

    Parameters
    ----------
    result : ProtocolResult or mapping
        :func:`ranklearn.clicks.protocol.run_protocol`'s result, or its ``per_query``
        (``{ranker: {metric: values per test query}}``, pooled runs' values concatenated).
    metric : str
        One of the metrics the run kept.
    n_resamples : int
        Bootstrap resamples of each interval.
    references : iterable of str
        Rows drawn grey, not judged against naive: the protocol's own, and rows of one's own
        that read true labels (e.g. :func:`~ranklearn.clicks.protocol.shown_information_ranker`'s).

    Raises
    ------
    ValueError
        For a result without a "naive" and a "full information" row, a row without ``metric``,
        with another number of values than the naive row's or with a NaN (naming the row), and
        for ``references`` given as one string.
    """
    from ranklearn.stats import bootstrap_interval

    if isinstance(references, str):
        raise ValueError(f"references must be row names, not one string: got {references!r}")
    per_query = getattr(result, "per_query", result)
    missing = [name for name in ("naive", "full information") if name not in per_query]
    if missing:
        raise ValueError(f"the protocol result has no {' and no '.join(map(repr, missing))} row")
    if metric not in per_query["naive"]:
        raise ValueError(f"metric {metric!r} is not in the protocol result (it has {', '.join(per_query['naive'])})")
    names = list(per_query)
    n_queries = len(per_query["naive"][metric])
    values = {}
    for name in names:
        if metric not in per_query[name]:
            raise ValueError(f"row {name!r} has no {metric!r} values")
        v = values[name] = np.asarray(per_query[name][metric], dtype=np.float64)
        if v.shape != (n_queries,):
            raise ValueError(f"row {name!r} has {v.size} {metric} values, the naive row {n_queries}: they must pair")
        if np.isnan(v).any():
            raise ValueError(f"row {name!r} has {int(np.isnan(v).sum())} NaN {metric} values")
    naive = values["naive"]
    full = float(values["full information"].mean())
    fig = _figure(8.0, 1.4 + 0.34 * len(names))
    ax = fig.add_subplot()
    ax.axvspan(min(naive.mean(), full), max(naive.mean(), full), color="0.92", label="gap naive - full information")
    ax.axvline((naive.mean() + full) / 2, color="0.5", linestyle="--", linewidth=0.8, label="half the gap")
    grey = set(references)
    for row, name in enumerate(names):
        mean = values[name].mean()
        if name == "naive":
            ax.plot(mean, row, "o", color="0.4")
            continue
        low, high = bootstrap_interval(values[name], naive, n_resamples=n_resamples, seed=0)
        color = "0.4" if name in grey else "tab:green" if low > 0 else "tab:red" if high < 0 else "tab:blue"
        ax.plot([naive.mean() + low, naive.mean() + high], [row, row], color=color, linewidth=2.5, alpha=0.6)
        ax.plot(mean, row, "o", color=color)
    ax.set_yticks(np.arange(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel(f"mean {metric}, test queries' true labels ({naive.size} values)")
    ax.set_title("each ranker, and its paired 95% interval against naive", fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    fig.legend(loc="outside lower center", ncols=2, fontsize="small")
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


def _names(names: Any, n: int) -> list[str]:
    if names is None:
        return [f"f{j + 1}" for j in range(n)]
    names = [str(v) for v in names]
    if len(names) != n:
        raise ValueError(f"{len(names)} feature names for {n} features")
    return names


def _features_and_contributions(contributions: ArrayLike, X: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(phi, X)`` as float64, the expected-value column dropped; shapes checked."""
    phi = np.asarray(contributions, dtype=np.float64)
    x = np.asarray(X, dtype=np.float64)
    if phi.ndim != 2 or x.ndim != 2 or phi.shape != (x.shape[0], x.shape[1] + 1):
        raise ValueError(f"contributions must be (n, F + 1) for X (n, F), as predict_contributions gives; got "
                         f"{phi.shape} and {x.shape}")  # fmt: skip
    return phi[:, :-1], x


def summary(contributions: ArrayLike, X: ArrayLike, feature_names: Any = None, top: int = 20,
            random_state: int = 0) -> Figure:  # fmt: skip
    """Beeswarm of feature contributions: one row per feature (largest mean |contribution| at
    the top), one dot per document at its contribution, colored by the feature's value (its
    rank among the documents: blue low, red high; grey missing).

    Parameters
    ----------
    contributions : array (n, F + 1)
        ``model.predict_contributions(X)``.
    X : array (n, F)
        The rows explained.
    feature_names : list of str, optional
        Default ``f1``, ``f2``... (svmlight's 1-based ids).
    top : int
        Features shown.
    random_state : int
        Seed of the vertical jitter (dots of equal contribution spread apart).
    """
    phi, x = _features_and_contributions(contributions, X)
    if top < 1:
        raise ValueError(f"top must be >= 1, got {top}")
    names = _names(feature_names, x.shape[1])
    order = np.argsort(-np.abs(phi).mean(axis=0), kind="stable")[:top]
    rng = np.random.default_rng(random_state)
    fig = _figure(7.0, 1.2 + 0.32 * order.shape[0])
    ax = fig.add_subplot()
    dots = None
    for row, j in enumerate(order):
        v = x[:, j]
        known = ~np.isnan(v)
        color = np.full(v.shape[0], np.nan)
        if known.any():  # rank of the value, 0 (lowest) to 1 (highest), ties sharing
            ranks = np.searchsorted(np.sort(v[known]), v[known])
            color[known] = ranks / max(1, known.sum() - 1)
        y = row + rng.uniform(-0.3, 0.3, v.shape[0])
        ax.scatter(phi[~known, j], y[~known], s=6, color="0.6", alpha=0.6)
        dots = ax.scatter(phi[known, j], y[known], s=6, c=color[known], cmap="coolwarm", vmin=0, vmax=1, alpha=0.8)
    ax.set_yticks(np.arange(order.shape[0]), [names[j] for j in order])
    ax.invert_yaxis()
    ax.axvline(0.0, color="0.3", linewidth=0.6)
    ax.set_xlabel("contribution to the score")
    ax.set_title(f"feature contributions, {x.shape[0]:,} documents, top {order.shape[0]} of {x.shape[1]} features")
    if dots is not None:
        bar = fig.colorbar(dots, ax=ax, ticks=[0, 1])
        bar.ax.set_yticklabels(["low", "high"])
        bar.set_label("feature value")
    return fig


def dependence(contributions: ArrayLike, X: ArrayLike, feature: int | str, feature_names: Any = None) -> Figure:
    """One feature's contribution against its value, one dot per document (missing values drawn
    at the left edge, in grey).

    Parameters
    ----------
    contributions, X, feature_names
        As :func:`summary`.
    feature : int or str
        Column number (0-based) or name.
    """
    phi, x = _features_and_contributions(contributions, X)
    names = _names(feature_names, x.shape[1])
    if isinstance(feature, str):
        if feature not in names:
            raise ValueError(f"no feature named {feature!r}")
        j = names.index(feature)
    else:
        j = int(feature)
        if not 0 <= j < x.shape[1]:
            raise ValueError(f"feature {j} is out of range (0 to {x.shape[1] - 1})")
    v = x[:, j]
    known = ~np.isnan(v)
    fig = _figure(6.4, 4.0)
    ax = fig.add_subplot()
    ax.scatter(v[known], phi[known, j], s=8, alpha=0.6)
    if not known.all():
        left = float(np.min(v[known])) if known.any() else 0.0
        ax.scatter(np.full((~known).sum(), left), phi[~known, j], s=8, color="0.6", marker="x", label="missing (NaN)")
        ax.legend(loc="best")
    ax.axhline(0.0, color="0.3", linewidth=0.6)
    ax.set_xlabel(f"value of {names[j]}")
    ax.set_ylabel(f"contribution of {names[j]}")
    ax.set_title(f"dependence: {names[j]}")
    return fig


def _steps(values: np.ndarray, names: list[str], top: int) -> list[tuple[str, float]]:
    """The ``top`` values by magnitude as (name, value), then the others' sum as one step."""
    order = np.argsort(-np.abs(values), kind="stable")[:top]
    steps = [(names[j], float(values[j])) for j in order]
    if order.shape[0] < values.shape[0]:
        steps.append((f"{values.shape[0] - order.shape[0]} other features", float(values.sum() - values[order].sum())))
    return steps


def _bars(ax, start: float, steps: list[tuple[str, float]]) -> None:
    """Waterfall bars: each step a horizontal bar from the running total, green up, red down."""
    total = start
    for i, (_, v) in enumerate(steps):
        ax.barh(i, v, left=total, color="tab:green" if v >= 0 else "tab:red")
        ax.text(total + v, i, f" {v:+.3g} ", va="center", ha="left" if v >= 0 else "right", fontsize=8)
        total += v
    ax.set_yticks(np.arange(len(steps)), [name for name, _ in steps])
    ax.invert_yaxis()
    ax.margins(x=0.15)  # room for the labels at both ends


def waterfall(contributions: ArrayLike, feature_names: Any = None, top: int = 10, title: str | None = None) -> Figure:
    """One document's score built up from the expected score: the ``top`` contributions by
    magnitude, then the rest together.

    Parameters
    ----------
    contributions : array (F + 1,)
        One row of ``predict_contributions`` (expected value last).
    """
    phi = np.asarray(contributions, dtype=np.float64).ravel()
    if phi.shape[0] < 2:
        raise ValueError("contributions must hold the features' values and the expected value last")
    if top < 1:
        raise ValueError(f"top must be >= 1, got {top}")
    base, phi = phi[-1], phi[:-1]
    steps = _steps(phi, _names(feature_names, phi.shape[0]), top)
    fig = _figure(6.4, 1.4 + 0.32 * len(steps))
    ax = fig.add_subplot()
    _bars(ax, base, steps)
    ax.axvline(base, color="0.4", linewidth=0.8, linestyle="--")
    ax.axvline(base + phi.sum(), color="0.1", linewidth=0.8)
    ax.set_xlabel(f"score (dashed: expected {base:.4g}; solid: this document {base + phi.sum():.4g})")
    ax.set_title(title or "why this score")
    return fig


def pair(explanation: Any, top: int = 10, labels: tuple[str, str] = ("A", "B")) -> Figure:
    """Why document A scores above (or below) B: from 0 to ``s_a - s_b``, the ``top`` features'
    shares of the difference, then the rest together.

    Parameters
    ----------
    explanation : ranklearn.explain.PairExplanation
        From :func:`ranklearn.explain.pair`.
    labels : (str, str)
        Names of the two documents.
    """
    if top < 1:
        raise ValueError(f"top must be >= 1, got {top}")
    steps = _steps(explanation.contributions, explanation.names, top)
    fig = _figure(6.4, 1.4 + 0.32 * len(steps))
    ax = fig.add_subplot()
    _bars(ax, 0.0, steps)
    ax.axvline(0.0, color="0.4", linewidth=0.8, linestyle="--")
    ax.axvline(explanation.difference, color="0.1", linewidth=0.8)
    a, b = labels
    ax.set_xlabel(f"score({a}) - score({b}) = {explanation.difference:+.4g}")
    ax.set_title(f"why {a} is {'above' if explanation.difference >= 0 else 'below'} {b}")
    return fig


__all__ = [
    "DEFAULT_KS",
    "PROTOCOL_REFERENCES",
    "bias_source",
    "dependence",
    "feature_importance",
    "lambda_forces",
    "learning_curves",
    "metric_at_k",
    "pair",
    "per_query_difference",
    "position_bias",
    "protocol",
    "query_lambdas",
    "summary",
    "waterfall",
]
