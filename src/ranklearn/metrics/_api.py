"""Metric objects, their conventions, and the convenience functions built on them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ranklearn._threads import numba_threads
from ranklearn.data.groups import check_qid, group_ptr, regroup_order
from ranklearn.metrics import _kernels as K
from ranklearn.metrics._gain import gain_code

_METRICS = {
    "dcg": K.DCG,
    "ndcg": K.NDCG,
    "err": K.ERR,
    "map": K.AP,
    "p": K.PREC,
    "rr": K.RR,
}
_TIES = {"stable": K.TIES_STABLE, "pessimistic": K.TIES_PESSIMISTIC, "average": K.TIES_AVERAGE}
_EMPTY = {"zero": K.EMPTY_ZERO, "one": K.EMPTY_ONE, "skip": K.EMPTY_SKIP}
_EMPTY_TEXT = {"zero": "empty queries=0", "one": "empty queries=1", "skip": "empty queries skipped"}
#: Largest label the exp2 gain takes: 2^1000 leaves room to sum millions of gains in float64.
MAX_EXP2_LABEL = 1000
#: Largest cutoff: k beyond any list length is the whole list; larger k does not fit the kernels' int64.
MAX_K = np.iinfo(np.int64).max
_SPEC = re.compile(r"^\s*([a-z]+)\s*(?:@\s*([+-]?\d+))?\s*$")


def _choice(kind: str, value: str, table: dict[str, int]) -> int:
    try:
        return table[value]
    except (KeyError, TypeError):
        raise ValueError(f"{kind} must be one of {sorted(table)}, got {value!r}") from None


@dataclass(frozen=True)
class Metric:
    """One ranking metric with its conventions fixed.

    Build it with :func:`get_metric`. ``k`` is the cutoff (None = whole list).
    """

    name: str
    k: int | None
    gain: str = "exp2"
    empty: str = "zero"
    ties: str = "stable"
    max_grade: float | None = None
    _code: int = field(default=K.NDCG, repr=False)

    @property
    def conventions(self) -> str:
        """Short human statement of the conventions, e.g. ``gain=2^rel-1, empty queries=0, ties=stable``."""
        if self._code in (K.DCG, K.NDCG):
            head = "gain=2^rel-1" if self.gain == "exp2" else "gain=rel"
        elif self._code == K.ERR:
            top = "max label (>=1)" if self.max_grade is None else f"{self.max_grade:g}"
            head = f"R=(2^rel-1)/2^max_grade, max_grade={top}"
        else:
            head = "relevant=label>0"
            if self._code == K.AP and self.k is not None:
                head += ", AP@k divides by min(R,k)"
        return f"{head}, {_EMPTY_TEXT[self.empty]}, ties={self.ties}"

    def per_query(self, y: ArrayLike, scores: ArrayLike, ptr: ArrayLike) -> np.ndarray:
        """Value of the metric on every query.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Relevance labels: finite and >= 0, integer or continuous. Negative labels are
            rejected (a negative gain breaks NDCG's [0, 1] range and ERR's probabilities);
            the estimators train on any real labels, so shift such labels before evaluating.
            With gain 2^rel-1, DCG/NDCG take labels up to ``MAX_EXP2_LABEL`` (1000).
        scores : array-like of shape (n_samples,)
            Predicted scores; higher ranks first. NaN is rejected.
        ptr : array-like of int, shape (n_queries + 1,)
            Query boundaries: query ``q`` owns rows ``ptr[q]:ptr[q+1]``.

        Returns
        -------
        ndarray of float64, shape (n_queries,)
            NaN for queries skipped under ``empty="skip"``.

        Raises
        ------
        ValueError
            Lengths that differ, boundaries that are not integers rising from 0 to
            ``len(y)``, NaN scores, labels that are negative, not finite, or too large for
            the gain, or (ERR) a label above ``max_grade``.
        """
        labels, s, p = _check_inputs(y, scores, ptr)
        if self._code in (K.DCG, K.NDCG) and self.gain == "exp2" and labels.size and labels.max() > MAX_EXP2_LABEL:
            raise ValueError(
                f"{self.name}: label {labels.max():g} is too large for gain 2^rel-1 (it overflows float64 "
                f"above {MAX_EXP2_LABEL}); use gain='linear'"
            )
        top = self.max_grade
        if self._code == K.ERR:
            largest = float(labels.max()) if labels.size else 0.0
            if top is None:
                top = max(1.0, largest)
            elif largest > top:
                raise ValueError(
                    f"{self.name}: label {largest:g} exceeds max_grade={top:g} "
                    "(stop probabilities would exceed 1)"
                )
        with numba_threads(1 if labels.size < K.PARALLEL_MIN_DOCS else None):
            return K.per_query_values(
                labels,
                s,
                p,
                self._code,
                -1 if self.k is None else self.k,
                gain_code(self.gain),
                _TIES[self.ties],
                float(top or 0.0),
                _EMPTY[self.empty],
            )

    def mean(self, y: ArrayLike, scores: ArrayLike, ptr: ArrayLike) -> float:
        """Mean over queries; skipped queries are excluded (NaN if every query is skipped)."""
        return query_mean(self.per_query(y, scores, ptr))


def query_mean(values: np.ndarray) -> float:
    """Mean of per-query values with skipped (NaN) queries left out; NaN if none is left."""
    kept = values[~np.isnan(values)]
    return float(kept.mean()) if kept.size else float("nan")


def get_metric(
    spec: str,
    *,
    gain: str = "exp2",
    empty: str = "zero",
    ties: str = "stable",
    max_grade: float | None = None,
) -> Metric:
    """Build a metric from a spec such as ``"ndcg@10"``.

    Parameters
    ----------
    spec : str
        ``dcg``, ``ndcg``, ``err``, ``map``, ``p`` or ``rr``, optionally ``@k``
        (``k >= 1``; no ``@k`` = whole list; a ``k`` longer than a list is fine).
    gain : {"exp2", "linear"}
        Gain of DCG/NDCG: ``2^rel - 1`` or ``rel``. ERR always uses its own
        ``R = (2^rel - 1) / 2^max_grade``; MAP, P and RR use binary relevance (label > 0).
    empty : {"zero", "one", "skip"}
        Value of a query with no relevant document (ideal value 0): 0 (RankLib, trec_eval),
        1 (LightGBM, XGBoost), or excluded from the mean (NaN per query).
    ties : {"stable", "pessimistic", "average"}
        Order among equal scores: input order; relevant documents last (label ascending);
        or the exact expected value over all orderings of each tied group.
    max_grade : float, optional
        ERR's top grade. Default: the largest label passed to each call, at least 1.

    Returns
    -------
    Metric

    Raises
    ------
    ValueError
        Unknown metric name, ``k <= 0`` or ``k > MAX_K`` (2^63 - 1), or an unknown convention.
    """
    match = _SPEC.match(spec.lower()) if isinstance(spec, str) else None
    if match is None or match.group(1) not in _METRICS:
        raise ValueError(
            f"unknown metric {spec!r}: expected one of {sorted(_METRICS)}, optionally with @k "
            "(e.g. 'ndcg@10')"
        )
    k = None if match.group(2) is None else int(match.group(2))
    if k is not None and k <= 0:
        raise ValueError(f"metric {spec!r}: the cutoff k must be >= 1")
    if k is not None and k > MAX_K:  # the kernels take k as int64
        raise ValueError(f"metric {spec!r}: the cutoff k must be at most {MAX_K} (leave out @k for the whole list)")
    gain_code(gain)
    _choice("empty", empty, _EMPTY)
    _choice("ties", ties, _TIES)
    if max_grade is not None and not max_grade > 0:
        raise ValueError(f"max_grade must be > 0, got {max_grade!r}")
    return Metric(spec, k, gain, empty, ties, max_grade, _METRICS[match.group(1)])


def _check_inputs(
    y: ArrayLike, scores: ArrayLike, ptr: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    try:
        labels = np.ascontiguousarray(y, dtype=np.float64).ravel()
        s = np.ascontiguousarray(scores, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y and scores must be numeric: {exc}") from None
    p_in = np.asarray(ptr)
    integral = p_in.dtype.kind in "iu" or (p_in.dtype.kind == "f" and np.array_equal(p_in, np.round(p_in)))
    if not integral:
        raise ValueError(f"ptr must hold integer query boundaries, got dtype {p_in.dtype}")
    p = np.ascontiguousarray(p_in, dtype=np.int64).ravel()
    if labels.shape != s.shape:
        raise ValueError(f"y has {labels.size} values but scores has {s.size}")
    if p.size == 0 or p[0] != 0 or p[-1] != labels.size or np.any(np.diff(p) < 0):
        raise ValueError(
            f"ptr must rise from 0 to the number of rows ({labels.size}); got "
            f"{p.size} boundaries from {p[0] if p.size else None} to {p[-1] if p.size else None}"
        )
    if np.isnan(s).any():
        raise ValueError(f"scores contain NaN (first at row {int(np.flatnonzero(np.isnan(s))[0])})")
    if not np.all(np.isfinite(labels)) or (labels < 0).any():
        bad = int(np.flatnonzero(~(np.isfinite(labels) & (labels >= 0)))[0])
        raise ValueError(f"labels must be finite and >= 0; row {bad} has {labels[bad]}")
    return labels, s, p


def evaluate(
    y: ArrayLike,
    scores: ArrayLike,
    ptr: ArrayLike,
    metrics: list[str],
    **conventions: object,
) -> dict[str, float]:
    """Means of several metrics under the same conventions.

    Parameters
    ----------
    y, scores, ptr
        As in :meth:`Metric.per_query`.
    metrics : list of str
        Specs such as ``["ndcg@10", "err@10", "map"]``.
    **conventions
        ``gain``, ``empty``, ``ties``, ``max_grade`` as in :func:`get_metric`.

    Returns
    -------
    dict
        Spec as given -> mean.
    """
    return {spec: get_metric(spec, **conventions).mean(y, scores, ptr) for spec in metrics}  # type: ignore[arg-type]


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


# One docstring for the six shortcuts below, which differ only in the metric and its conventions.
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


def map_score(
    y: ArrayLike,
    scores: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ptr: ArrayLike | None = None,
    k: int | None = None,
    empty: str = "zero",
    ties: str = "stable",
) -> float:
    return _score("map", k, y, scores, qid, ptr, dict(empty=empty, ties=ties))


def precision_score(
    y: ArrayLike,
    scores: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ptr: ArrayLike | None = None,
    k: int | None = 10,
    empty: str = "zero",
    ties: str = "stable",
) -> float:
    return _score("p", k, y, scores, qid, ptr, dict(empty=empty, ties=ties))


def rr_score(
    y: ArrayLike,
    scores: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ptr: ArrayLike | None = None,
    k: int | None = None,
    empty: str = "zero",
    ties: str = "stable",
) -> float:
    return _score("rr", k, y, scores, qid, ptr, dict(empty=empty, ties=ties))


dcg_score.__doc__ = _SCORE_DOC.format(title="DCG@k", conventions="gain, empty, ties")
ndcg_score.__doc__ = _SCORE_DOC.format(title="NDCG@k", conventions="gain, empty, ties")
err_score.__doc__ = _SCORE_DOC.format(title="ERR@k", conventions="empty, ties, max_grade")
map_score.__doc__ = _SCORE_DOC.format(
    title="average precision (MAP; AP@k divides by min(R, k))", conventions="empty, ties"
)
precision_score.__doc__ = _SCORE_DOC.format(
    title="precision@k (k capped at the list length)", conventions="empty, ties"
)
rr_score.__doc__ = _SCORE_DOC.format(title="reciprocal rank (MRR)", conventions="empty, ties")
