"""Metric objects, their conventions, and the convenience functions built on them."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ranklearn._threads import numba_threads
from ranklearn.data.groups import check_qid, group_ptr, regroup_order
from ranklearn.metrics import _kernels as K
from ranklearn.metrics._gain import gain_code
from ranklearn.metrics._presets import preset

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
#: Metrics whose ideal value is 1 whenever a query has a relevant document, so that "a query
#: without one counts as ideal" (empty="one") means something.
_HAS_IDEAL = (K.NDCG, K.AP)
_EMPTY = {"zero": K.EMPTY_ZERO, "one": K.EMPTY_ONE, "skip": K.EMPTY_SKIP}
_EMPTY_TEXT = {"zero": "empty queries=0", "one": "empty queries=1", "skip": "empty queries skipped"}
#: Largest label the exp2 gain takes: 2^1000 leaves room to sum millions of gains in float64.
MAX_EXP2_LABEL = 1000
#: Largest cutoff: k beyond any list length is the whole list; larger k does not fit the kernels' int64.
MAX_K = np.iinfo(np.int64).max
_SPEC = re.compile(r"^\s*([a-z][a-z0-9]*)\s*(?:@\s*([+-]?\d+))?\s*$")


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
            Document ids; required by ``ties="docid"`` (equal scores in descending id order).
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
            labels, s = labels[order], s[order]
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
        with numba_threads(1 if labels.size < K.PARALLEL_MIN_DOCS else None):
            return K.per_query_values(labels, s, p, n_ret, *self.kernel_args())

    def kernel_args(self) -> tuple[int, int, int, int, float, int, int, int]:
        """The conventions as the kernels take them, after the rows (``_kernels._query_value``):
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
    from ranklearn.metrics.trec.metric import trec_metric  # the trec_eval measures (they import Metric)

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
