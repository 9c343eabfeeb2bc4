"""Metric objects and their conventions (:func:`ranklearn.metrics.lookup.get_metric` builds them by name)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ranklearn._compilation import interprets_small_inputs
from ranklearn._threads import numba_threads
from ranklearn.metrics import kernels as K
from ranklearn.metrics.gain import gain_code

_METRICS = {
    "dcg": K.DCG,
    "ndcg": K.NDCG,
    "err": K.ERR,
    "map": K.AP,
    "p": K.PREC,
    "recall": K.RECALL,
    "f1": K.F1,  # ranx's f1: harmonic mean of P@k (divisor p_divisor) and recall@k
    "rr": K.RR,
    "mrr": K.RR,  # ranx's and most papers' name for the mean of RR
}
# "docid" is stable ties on rows put in descending document-id order first (trec_eval's rule).
_TIES = {"stable": K.TIES_STABLE, "pessimistic": K.TIES_PESSIMISTIC, "average": K.TIES_AVERAGE, "docid": K.TIES_STABLE}
_P_DIVISOR = {"min(k,n)": K.P_BY_MIN_K_N, "k": K.P_BY_K}
_MAP_DIVISOR = {"min(R,k)": K.AP_BY_MIN_R_K, "R": K.AP_BY_R}
#: ERR's default top grade: the 0-4 scale of LETOR/MSLR and RankLib's g_max = 2^4. Fixed, so
#: that one query's ERR never depends on which other queries are evaluated with it.
DEFAULT_MAX_GRADE = 4.0
_EMPTY = {"zero": K.EMPTY_ZERO, "one": K.EMPTY_ONE, "skip": K.EMPTY_SKIP}
_EMPTY_TEXT = {"zero": "empty queries=0", "one": "empty queries=1", "skip": "empty queries skipped"}
#: Largest label the exp2 gain takes: 2^1000 leaves room to sum millions of gains in float64.
MAX_EXP2_LABEL = 1000
#: Largest cutoff: k beyond any list length is the whole list; larger k does not fit the kernels' int64.
MAX_K = np.iinfo(np.int64).max


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
    max_grade: float = DEFAULT_MAX_GRADE
    p_divisor: str = "min(k,n)"
    map_divisor: str = "min(R,k)"
    _code: int = field(default=K.NDCG, repr=False)
    #: trec_eval's ``-l``: binary metrics call a label relevant when it is at least this (None: > 0)
    relevance_level: float | None = None
    #: per-grade gains of DCG/NDCG (``gain={0: 0, 1: 3, 2: 9}``), other grades keeping gain = grade
    gain_pairs: tuple[tuple[float, float], ...] = ()

    @property
    def uses_max_grade(self) -> bool:
        """Whether the metric's values depend on ``max_grade`` (ERR's stop probabilities)."""
        return self._code == K.ERR

    @property
    def conventions(self) -> str:
        """Short human statement of the conventions, e.g. ``gain=2^rel-1, empty queries=0, ties=stable``."""
        if self._code in (K.DCG, K.NDCG) and self.gain_pairs:
            head = f"gain={dict(self.gain_pairs)}, other grades gain=rel"
        elif self._code in (K.DCG, K.NDCG):
            head = "gain=2^rel-1" if self.gain == "exp2" else "gain=rel"
        elif self._code == K.ERR:
            head = f"R=(2^rel-1)/2^max_grade, max_grade={self.max_grade:g}"
        else:
            head = "relevant=label>0" if self.relevance_level is None else f"relevant=label>={self.relevance_level:g}"
            if self._code == K.AP and self.k is not None:
                head += f", AP@k divides by {self.map_divisor}"
            if self._code == K.PREC:
                head += f", P@k divides by {self.p_divisor}"
            if self._code == K.RECALL:
                head += ", divides by R"
            if self._code == K.F1:
                head += f", F1 = 2PR/(P+R), P@k divides by {self.p_divisor}"
        return f"{head}, {_EMPTY_TEXT[self.empty]}, ties={self.ties}"

    def per_query(
        self,
        y: ArrayLike,
        scores: ArrayLike,
        ptr: ArrayLike,
        *,
        docids: ArrayLike | None = None,
        retrieved: ArrayLike | None = None,
        judged: ArrayLike | None = None,
    ) -> np.ndarray:
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
        docids : array-like of str, shape (n_samples,), optional
            Document ids; required by ``ties="docid"`` (trec_eval's rule: scores compared as the C
            ``float`` trec_eval keeps, equal ones in descending id order).
        retrieved : array-like of int, shape (n_queries,), optional
            Rows of each query that the ranking holds: the first ``retrieved[q]`` rows of
            query ``q`` are ranked, the others are judged documents it did not retrieve
            (TREC runs), which count in R and in the ideal DCG only. Default: every row.
        judged : array-like of int, shape (n_samples,), optional
            ``TrecArrays.judged``: 0 for a retrieved document the qrels do not list, -1 for
            one they give a negative grade; read by the trec_eval measures (bpref, infAP,
            ...), ignored by these metrics (such a row is non-relevant).

        Returns
        -------
        ndarray of float64, shape (n_queries,)
            NaN for queries skipped under ``empty="skip"``.

        Raises
        ------
        ValueError
            Lengths that differ, boundaries that are not integers rising from 0 to
            ``len(y)``, NaN scores, labels that are negative, not finite, or too large for
            the gain, (ERR) a label above ``max_grade``, or ``ties="docid"`` without docids.
        """
        labels, s, p = check_inputs(y, scores, ptr)
        n_ret = check_retrieved(retrieved, p)
        if self.ties == "docid":
            if docids is None:
                raise ValueError(f"{self.name}: ties='docid' needs the document ids (docids=)")
            order = docid_order(docids, p, n_ret)
            labels, s = labels[order], as_c_float(s[order])
        labels = self._relevance(labels)
        self._check_labels(labels)
        return self._values(labels, s, p, n_ret)

    def summarize(self, values: np.ndarray) -> float:
        """The summary of per-query values: their mean, skipped (NaN) queries left out."""
        return query_mean(values)

    def _relevance(self, labels: np.ndarray) -> np.ndarray:
        """Labels as the kernels take them: with ``relevance_level`` a binary metric's label is
        1 from that level up, else 0 (a level <= 0 makes grade 0 relevant too, as trec_eval's
        ``-l``); per-grade gains replace DCG's labels (then summed with the linear gain)."""
        if self.relevance_level is not None and self._code in (K.AP, K.PREC, K.RECALL, K.RR, K.F1):
            return (labels >= self.relevance_level).astype(np.float64)
        if self.gain_pairs and self._code in (K.DCG, K.NDCG):
            grades = np.array([g for g, _ in self.gain_pairs])
            gains = np.array([v for _, v in self.gain_pairs])
            at = np.searchsorted(grades, labels).clip(0, grades.size - 1)
            return np.where(grades[at] == labels, gains[at], labels)
        return labels

    def _check_labels(self, labels: np.ndarray) -> None:
        """Labels that this metric's gain or stop probabilities cannot take."""
        if self._code in (K.DCG, K.NDCG) and self.gain == "exp2" and labels.size and labels.max() > MAX_EXP2_LABEL:
            raise ValueError(
                f"{self.name}: label {labels.max():g} is too large for gain 2^rel-1 (it overflows float64 "
                f"above {MAX_EXP2_LABEL}); use gain='linear'"
            )
        if self.uses_max_grade:
            largest = float(labels.max()) if labels.size else 0.0
            if largest > self.max_grade:
                raise ValueError(
                    f"{self.name}: label {largest:g} exceeds max_grade={self.max_grade:g} "
                    "(stop probabilities would exceed 1); pass max_grade= the top grade of your scale"
                )

    def _values(self, labels: np.ndarray, s: np.ndarray, p: np.ndarray, n_ret: np.ndarray) -> np.ndarray:
        if labels.size <= K.INTERPRETED_DOCS and interprets_small_inputs():
            return K.per_query_values.run(labels, s, p, n_ret, *self.kernel_args(), small=True)
        with numba_threads(1 if labels.size < K.PARALLEL_MIN_DOCS else None):
            return K.per_query_values(labels, s, p, n_ret, *self.kernel_args())

    def kernel_args(self) -> tuple[int, int, int, int, float, int, int, int]:
        """The conventions as the kernels take them, after the rows (``kernels.query_value``):
        metric code, k (-1: whole list), gain, ties, max grade, empty, P@k and AP@k divisors.

        ``ties="docid"`` is stable ties on rows already put in document-id order.
        """
        return (
            self._code,
            -1 if self.k is None else self.k,
            gain_code("linear" if self.gain_pairs else self.gain),
            _TIES[self.ties],
            float(self.max_grade),
            _EMPTY[self.empty],
            _P_DIVISOR[self.p_divisor],
            _MAP_DIVISOR[self.map_divisor],
        )

    def mean(
        self,
        y: ArrayLike,
        scores: ArrayLike,
        ptr: ArrayLike,
        *,
        docids: ArrayLike | None = None,
        retrieved: ArrayLike | None = None,
        judged: ArrayLike | None = None,
    ) -> float:
        """Mean over queries; skipped queries are excluded (NaN if every query is skipped)."""
        return self.summarize(self.per_query(y, scores, ptr, docids=docids, retrieved=retrieved, judged=judged))

    def scorer(self, y: ArrayLike, ptr: ArrayLike) -> Callable[[np.ndarray], float]:
        """``scores -> mean(y, scores, ptr)`` for many score vectors on the same queries.

        The labels and boundaries are checked and converted once, not on every call (a
        booster scores its evaluation sets after every tree); each call checks the scores
        only. Every row is retrieved; ``ties="docid"`` needs :meth:`mean` with the ids.

        Parameters
        ----------
        y, ptr : array-like
            As for :meth:`per_query`.

        Returns
        -------
        callable
            Takes scores of shape (n_samples,) and returns the same float as :meth:`mean`.
        """
        if self.ties == "docid":
            raise ValueError(f"{self.name}: ties='docid' needs the document ids; use mean(..., docids=)")
        labels, _, p = check_inputs(y, np.zeros(np.shape(y)), ptr)
        labels = self._relevance(labels)
        self._check_labels(labels)
        sizes = np.diff(p)

        def score(scores: np.ndarray) -> float:
            return query_mean(self._values(labels, _check_scores(scores, labels.size), p, sizes))

        return score


def check_retrieved(retrieved: ArrayLike | None, ptr: np.ndarray) -> np.ndarray:
    """Rows ranked per query (``retrieved=``; None: every row), checked against the boundaries."""
    sizes = np.diff(ptr)
    n_ret = sizes if retrieved is None else np.ascontiguousarray(retrieved, dtype=np.int64).ravel()
    if n_ret.shape != sizes.shape or np.any(n_ret < 0) or np.any(n_ret > sizes):
        raise ValueError(f"retrieved must hold one count per query, each between 0 and its rows ({sizes.size} queries)")
    return n_ret


def as_c_float(scores: np.ndarray) -> np.ndarray:
    """Scores as trec_eval compares them: it keeps each as a C ``float``, so scores that differ
    only beyond single precision tie (and go to the document-id rule)."""
    return scores.astype(np.float32).astype(np.float64)


def docid_order(docids: ArrayLike, ptr: np.ndarray, retrieved: np.ndarray) -> np.ndarray:
    """Row order that puts each query's retrieved rows in descending document-id order.

    Ids compare as strings by code point (byte order in UTF-8, as C's ``strcmp``); the
    unretrieved rows stay after the retrieved ones.
    """
    ids = np.asarray(docids, dtype=object).ravel()
    if ids.shape[0] != ptr[-1]:
        raise ValueError(f"docids has {ids.shape[0]} values for {ptr[-1]} rows")
    codes = np.unique(ids.astype(str), return_inverse=True)[1].ravel()
    sizes = np.diff(ptr)
    query = np.repeat(np.arange(sizes.size), sizes)
    unretrieved = (np.arange(ids.shape[0]) - ptr[query]) >= retrieved[query]
    return np.lexsort((-codes, unretrieved, query))


def query_mean(values: np.ndarray) -> float:
    """Mean of per-query values with skipped (NaN) queries left out; NaN if none is left."""
    kept = values[~np.isnan(values)]
    return float(kept.mean()) if kept.size else float("nan")


def means_scope(values: dict[str, dict[str, np.ndarray]], n_queries: int) -> str:
    """Which queries the means cover: those the first metric scored for each system (``empty="skip"``
    leaves some out, and so does a run that lacks a judged query)."""
    counts = {name: int((~np.isnan(next(iter(by_metric.values())))).sum()) for name, by_metric in values.items()}
    if len(set(counts.values())) == 1:
        return f"mean over {next(iter(counts.values()))} of {n_queries} queries"
    each = ", ".join(f"{name} {n}" for name, n in counts.items())
    return f"means over each system's scored queries ({each}) of {n_queries} queries"


def conventions_line(metrics: Sequence[Metric]) -> str:
    """One line stating the conventions of every metric, grouping metrics that share them (the tables' footnote)."""
    groups: dict[str, list[str]] = {}
    for m in metrics:
        groups.setdefault(m.conventions, []).append(m.name)
    if len(groups) == 1:
        return f"conventions: {next(iter(groups))}"
    return "conventions: " + "; ".join(f"{', '.join(names)}: {text}" for text, names in groups.items())


def check_inputs(
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
    _check_scores(s, labels.size)
    if not np.all(np.isfinite(labels)) or (labels < 0).any():
        bad = int(np.flatnonzero(~(np.isfinite(labels) & (labels >= 0)))[0])
        raise ValueError(f"labels must be finite and >= 0; row {bad} has {labels[bad]}")
    return labels, s, p


def _check_scores(s: np.ndarray, n_rows: int) -> np.ndarray:
    """Float64 contiguous scores for ``n_rows`` rows, without NaN."""
    s = np.ascontiguousarray(s, dtype=np.float64).ravel()
    if s.size != n_rows:
        raise ValueError(f"y has {n_rows} values but scores has {s.size}")
    if np.isnan(s).any():
        raise ValueError(f"scores contain NaN (first at row {int(np.flatnonzero(np.isnan(s))[0])})")
    return s

