"""Metrics by name: :func:`get_metric` (ranklearn's metrics and trec_eval's measures, with their
conventions), :func:`evaluate` and the one-metric shortcuts built on it."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ranklearn.data.groups import check_qid, group_ptr, regroup_order
from ranklearn.metrics import kernels as K
from ranklearn.metrics._api import _EMPTY, _MAP_DIVISOR, _METRICS, _P_DIVISOR, _TIES, MAX_K, Metric, _choice
from ranklearn.metrics.gain import gain_code
from ranklearn.metrics._presets import preset
from ranklearn.metrics.trec.metric import trec_metric

#: Metrics whose ideal value is 1 whenever a query has a relevant document, so that "a query
#: without one counts as ideal" (empty="one") means something.
_HAS_IDEAL = (K.NDCG, K.AP)
_SPEC = re.compile(r"^\s*([a-z][a-z0-9]*)\s*(?:@\s*([+-]?\d+))?\s*$")


def get_metric(
    spec: str,
    *,
    conventions: str | None = None,
    gain: str | None = None,
    empty: str | None = None,
    ties: str | None = None,
    max_grade: float | None = None,
    p_divisor: str | None = None,
    map_divisor: str | None = None,
    relevance_level: float | None = None,
) -> Metric:
    """Build a metric from a spec such as ``"ndcg@10"``.

    Parameters
    ----------
    spec : str
        ``dcg``, ``ndcg``, ``err``, ``map``, ``p``, ``recall``, ``f1`` or ``rr`` (``mrr`` is another
        name of ``rr``; ``dcg_burges`` and ``ndcg_burges``, ranx's names, are DCG and NDCG with
        gain 2^rel-1), optionally ``@k`` (``k >= 1``; no ``@k`` = whole list; a ``k``
        longer than a list is fine). ``f1`` is ranx's F1@k = 2 P@k R@k / (P@k + R@k) =
        2 hits@k / (d + R), d the divisor of P@k (``p_divisor``; k in the ranx preset, the
        list length without @k) and R the relevant documents (0 when there is none; van
        Rijsbergen, "Information Retrieval", 1979, ch. 7). Or one of trec_eval's measures
        (:mod:`ranklearn.metrics.trec`): ``bpref``, ``gm_bpref``, ``infap``, ``gm_map``,
        ``rprec`` (``r_precision``), ``rprec_mult@x``, ``iprec@x``, ``11pt``,
        ``success@k`` (``hit_rate@k``), ``relative_p@k``, ``set_p``, ``set_recall``,
        ``set_relative_p``, ``set_map``, ``set_f[@beta]``, ``utility``, ``bing``, ``g``,
        ``ndcg_rel``, ``rndcg``, ``num_ret``, ``num_rel``, ``num_rel_ret``,
        ``num_nonrel_judged_ret``, ``unj@k``, ``rbp[@p]``, ``rbp_resid[@p]``: a
        :class:`~ranklearn.metrics.trec.metric.TrecMetric` (ties ``docid`` or ``stable``).
    conventions : {"ranklearn", "trec_eval", "lightgbm", "xgboost", "ranklib", "ranx"}, optional
        A named preset setting every convention below so that the value equals that tool's
        (see ``ranklearn.metrics.PRESETS``); the parameters given explicitly override it.
        Default: "ranklearn", whose values are the defaults listed below.
    gain : {"exp2", "linear"} or dict
        Gain of DCG/NDCG: ``2^rel - 1`` (default) or ``rel``; or a gain per grade
        (``{0: 0, 1: 3, 2: 9}``, trec_eval's ``-m ndcg.1=3,2=9``), the other grades' gain
        being the grade (also the gains of trec_eval's ndcg_rel, rndcg, g and rbp). ERR always uses its own
        ``R = (2^rel - 1) / 2^max_grade``; MAP, P, recall and RR use binary relevance (label > 0).
    empty : {"zero", "one", "skip"}
        Value of a query with no relevant document (ideal value 0): 0 (default; RankLib,
        trec_eval), 1 (LightGBM, XGBoost), or excluded from the mean (NaN per query).
        ``"one"`` (the query counts as ideal) exists for NDCG and MAP only: DCG and ERR have
        no ideal value, and for P and RR a perfect score is not reachable in general. (A
        preset's ``"one"`` applies to NDCG and MAP; its other metrics count such queries 0.)
    ties : {"stable", "pessimistic", "average", "docid"}
        Order among equal scores: input order (default); relevant documents last (label
        ascending); the exact expected value over all orderings of each tied group; or by
        document id, descending (trec_eval), which needs ``docids=`` when evaluating.
    max_grade : float
        ERR's top grade (default 4, the 0-4 scale); a label above it is an error.
    p_divisor : {"min(k,n)", "k"}
        P@k divides by min(k, list length) (default; RankLib) or by k (trec_eval, ranx).
    map_divisor : {"min(R,k)", "R"}
        AP@k divides by min(R, k) (default; LightGBM) or by R, the relevant documents of the
        query (trec_eval, ranx). Whole-list AP always divides by R.
    relevance_level : float, optional
        trec_eval's ``-l``: MAP, P, recall and RR call a label relevant when it is at least
        this (default: above 0; the ``trec_eval`` preset: 1, its default); NDCG keeps the
        grades, as trec_eval's. The trec_eval measures use it too (default 1).

    Returns
    -------
    Metric

    Raises
    ------
    ValueError
        Unknown metric name or preset, ``k <= 0`` or ``k > MAX_K`` (2^63 - 1), an unknown
        convention, or ``empty="one"`` for a metric without an ideal value.
    """
    if not isinstance(spec, str):
        raise ValueError(f"unknown metric {spec!r}: a metric is named by a string such as 'ndcg@10'")
    pairs = _gain_pairs(gain)
    conv = preset("ranklearn" if conventions is None else conventions)
    given = dict(gain=None if pairs else gain, empty=empty, ties=ties, max_grade=max_grade, p_divisor=p_divisor,
                 map_divisor=map_divisor, relevance_level=relevance_level)  # fmt: skip
    conv.update({key: value for key, value in given.items() if value is not None})
    conv["gain_pairs"] = pairs
    _choice("empty", conv["empty"], _EMPTY)
    _choice("ties", conv["ties"], _TIES)
    special = trec_metric(spec, conv)
    if special is not None:
        if empty == "one":
            raise ValueError(f"metric {spec!r}: empty='one' is defined for ndcg and map only; use 'zero' or 'skip'")
        if special.ties not in ("docid", "stable", "pessimistic"):
            raise ValueError(f"metric {spec!r}: ties={special.ties!r} is not defined for trec_eval's measures")
        return special
    text = spec.lower()
    if text.strip().startswith(("dcg_burges", "ndcg_burges")):  # ranx's names of DCG and NDCG with gain 2^rel-1
        text, conv["gain"] = text.replace("_burges", "", 1), "exp2"
    match = _SPEC.match(text)
    if match is None or match.group(1) not in _METRICS:
        raise ValueError(
            f"unknown metric {spec!r}: expected one of {sorted(_METRICS)}, optionally with @k "
            "(e.g. 'ndcg@10'), or a trec_eval measure (bpref, infap, rprec, iprec@0.5, 11pt, success@5, set_f, "
            "utility, ...: see ranklearn.metrics.trec.metric.SPEC_NAMES)"
        )
    k = None if match.group(2) is None else int(match.group(2))
    if k is not None and k <= 0:
        raise ValueError(f"metric {spec!r}: the cutoff k must be >= 1")
    if k is not None and k > MAX_K:  # the kernels take k as int64
        raise ValueError(f"metric {spec!r}: the cutoff k must be at most {MAX_K} (leave out @k for the whole list)")
    gain_code(conv["gain"])
    _choice("p_divisor", conv["p_divisor"], _P_DIVISOR)
    _choice("map_divisor", conv["map_divisor"], _MAP_DIVISOR)
    top = conv["max_grade"]
    # a numpy number (max_grade=y.max()) is a number; a bool is not, nor is inf
    if isinstance(top, bool) or not isinstance(top, numbers.Real) or not 0 < top < math.inf:
        raise ValueError(f"max_grade must be a finite number > 0, got {top!r}")
    conv["max_grade"] = float(top)
    code = _METRICS[match.group(1)]
    if conv["empty"] == "one" and code not in _HAS_IDEAL:
        if empty is None:  # a preset's "one" (LightGBM, XGBoost) concerns NDCG and MAP; the others count 0
            conv["empty"] = "zero"
        else:
            raise ValueError(
                f"metric {spec!r}: empty='one' (a query without relevant documents counts as ideal) is defined "
                "for ndcg and map only; use 'zero' or 'skip'"
            )
    level = conv.get("relevance_level")
    if level is not None and (isinstance(level, bool) or not isinstance(level, numbers.Real) or not math.isfinite(level)):
        raise ValueError(f"relevance_level must be a finite number, got {level!r}")
    return Metric(
        spec, k, str(conv["gain"]), str(conv["empty"]), str(conv["ties"]), float(top),
        str(conv["p_divisor"]), str(conv["map_divisor"]), code,
        None if level is None else float(level), pairs,
    )  # fmt: skip


def _gain_pairs(gain: object) -> tuple[tuple[float, float], ...]:
    """A per-grade gain mapping as sorted (grade, gain) pairs; () for a named gain."""
    if not isinstance(gain, dict):
        return ()
    pairs = []
    for grade, value in gain.items():
        if not all(isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x) for x in (grade, value)):
            raise ValueError(f"gain per grade needs finite numbers, got {grade!r}: {value!r}")
        if value < 0:
            raise ValueError(f"gain per grade must be >= 0 (NDCG's range), got {grade!r}: {value!r}")
        pairs.append((float(grade), float(value)))
    return tuple(sorted(pairs))


def evaluate(
    y: ArrayLike,
    scores: ArrayLike,
    ptr: ArrayLike,
    metrics: str | Sequence[str],
    *,
    docids: ArrayLike | None = None,
    **conventions: object,
) -> dict[str, float]:
    """Means of several metrics under the same conventions.

    Parameters
    ----------
    y, scores, ptr
        As in :meth:`Metric.per_query`.
    metrics : str or sequence of str
        Specs such as ``["ndcg@10", "err@10", "map"]`` (one spec alone: ``"ndcg@10"``).
    docids : array-like, optional
        Document id of every row, for ``ties="docid"`` (``conventions="trec_eval"``).
    **conventions
        ``conventions``, ``gain``, ``empty``, ``ties``, ``max_grade``... as in :func:`get_metric`.

    Returns
    -------
    dict
        Spec as given -> mean.
    """
    specs = [metrics] if isinstance(metrics, str) else list(metrics)
    return {spec: get_metric(spec, **conventions).mean(y, scores, ptr, docids=docids) for spec in specs}  # type: ignore[arg-type]


def _score(
    name: str,
    k: int | None,
    y: ArrayLike,
    scores: ArrayLike,
    qid: ArrayLike | None,
    ptr: ArrayLike | None,
    conventions: dict[str, object],
) -> float:
    if (qid is None) == (ptr is None):
        raise ValueError("give exactly one of qid (per-row query ids) or ptr (query boundaries)")
    y = np.asarray(y)
    scores = np.asarray(scores)
    if qid is not None:
        q = check_qid(np.asarray(qid).ravel())
        if not q.shape[0] == y.shape[0] == scores.shape[0]:
            raise ValueError(f"qid, y and scores lengths differ: {q.shape[0]}, {y.shape[0]}, {scores.shape[0]}")
        # A stable regrouping keeps input order within each query, so ties="stable" still holds.
        order = regroup_order(q)
        y, scores, ptr = y[order], scores[order], group_ptr(q[order])
    spec = name if k is None else f"{name}@{k}"
    return get_metric(spec, **conventions).mean(y, scores, ptr)  # type: ignore[arg-type]


# One docstring for the seven shortcuts below, which differ only in the metric and its conventions.
_SCORE_DOC = """Mean {title} over queries.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Relevance labels.
    scores : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,), optional
        Per-row query ids (regrouped stably if a query's rows are not contiguous).
    ptr : array-like of int, optional
        Query boundaries, instead of ``qid``.
    k : int or None
        Cutoff; None = whole list.
    {conventions}
        Conventions, as in :func:`get_metric`.

    Returns
    -------
    float
    """


def dcg_score(
    y: ArrayLike,
    scores: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ptr: ArrayLike | None = None,
    k: int | None = 10,
    gain: str = "exp2",
    empty: str = "zero",
    ties: str = "stable",
) -> float:
    return _score("dcg", k, y, scores, qid, ptr, dict(gain=gain, empty=empty, ties=ties))


def ndcg_score(
    y: ArrayLike,
    scores: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ptr: ArrayLike | None = None,
    k: int | None = 10,
    gain: str = "exp2",
    empty: str = "zero",
    ties: str = "stable",
) -> float:
    return _score("ndcg", k, y, scores, qid, ptr, dict(gain=gain, empty=empty, ties=ties))


def err_score(
    y: ArrayLike,
    scores: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ptr: ArrayLike | None = None,
    k: int | None = 10,
    empty: str = "zero",
    ties: str = "stable",
    max_grade: float | None = None,
) -> float:
    return _score("err", k, y, scores, qid, ptr, dict(empty=empty, ties=ties, max_grade=max_grade))


def _binary_score(function: str, name: str, default_k: int | None, title: str) -> Callable[..., float]:
    """The shortcut ``function`` of the binary-relevance metric ``name`` (conventions: empty, ties)."""

    def score(
        y: ArrayLike,
        scores: ArrayLike,
        qid: ArrayLike | None = None,
        *,
        ptr: ArrayLike | None = None,
        k: int | None = default_k,
        empty: str = "zero",
        ties: str = "stable",
    ) -> float:
        return _score(name, k, y, scores, qid, ptr, dict(empty=empty, ties=ties))

    score.__name__ = score.__qualname__ = function
    score.__doc__ = _SCORE_DOC.format(title=title, conventions="empty, ties")
    return score


map_score = _binary_score("map_score", "map", None, "average precision (MAP; AP@k divides by min(R, k))")
precision_score = _binary_score("precision_score", "p", 10, "precision@k (k capped at the list length)")
recall_score = _binary_score("recall_score", "recall", 10, "recall@k (relevant documents in the top k / all relevant ones, R)")
rr_score = _binary_score("rr_score", "rr", None, "reciprocal rank (MRR)")


dcg_score.__doc__ = _SCORE_DOC.format(title="DCG@k", conventions="gain, empty, ties")
ndcg_score.__doc__ = _SCORE_DOC.format(title="NDCG@k", conventions="gain, empty, ties")
err_score.__doc__ = _SCORE_DOC.format(title="ERR@k", conventions="empty, ties, max_grade")
