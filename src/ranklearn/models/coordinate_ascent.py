"""Coordinate Ascent: a linear model fitted to the ranking metric itself (RankLib's ``-ranker 4``).

Metzler, Croft, "Linear feature-based models for information retrieval", Information
Retrieval 10 (2007). The procedure and defaults are RankLib's ``CoorAscent``:

* every restart starts from uniform weights ``1/n_features`` and sweeps the features in a
  fresh random order; for each feature it tries moving its weight up, then down, then
  setting it to 0, by steps that grow geometrically (first step 0.001, or ``step_base``
  times the weight when 0.001 is over half of it; each next step ``step_scale`` times the
  last; ``line_search_steps`` steps per direction), and keeps the best value that beats the
  best metric so far (the first direction that succeeds wins);
* after a success the weights are divided by their L1 norm;
* a restart ends when ``n_features - 1`` features in a row failed, or when a whole sweep
  left the metric less than ``tolerance`` above where the restart began;
* ``regularized``: the metric minus ``slack`` times the distance of the L1-normalized
  weights from uniform weights.

One restart is one driver iteration: with an evaluation set
the model is the restart best on it, as RankLib keeps the restart best on validation data;
without one, the restart best on the training data. Unlike RankLib, the downward first step
``step_base * |w|`` keeps its sign (RankLib's goes up in both directions).

Speed: a step changes scores by ``delta * x_f`` only, so the training scores are updated
in place, and only the queries whose ``x_f`` and labels are not constant (whose value can
change) are re-evaluated, for all the steps of a direction at once (numba, parallel over
queries on large data). Each query's ranking is kept from one step to the next by an
insertion sort (O(n) when few documents swap) and its value is recomputed only when its
top ``k`` changed, (N)DCG from per-row gains and per-position discounts computed once. Every
value is the metric kernels' own, bit for bit, so the weights are those of a search that
scores every step from scratch (the tests check it against one).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from numba import njit, prange
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from ranklearn.metrics import Metric
from ranklearn.metrics.gain import discount, gain
from ranklearn.metrics.kernels import (
    DCG,
    NDCG,
    TIES_STABLE,
    ideal_dcg,
    query_value,
    ranked_value,
)
from ranklearn.models._linear import MetricFittedRanker, linear_scores, query_weights
from ranklearn.models.base import EARLY_STOPPING, N_JOBS, EvalSet, FitData

__all__ = ["CoordinateAscent"]


@njit(cache=True, parallel=True)
def _rankings(scores: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Each query's rows (offsets from its first row) by score descending, then row: the
    metric's ranking under stable ties."""
    orders = np.empty(scores.shape[0], dtype=np.int64)
    for q in prange(ptr.shape[0] - 1):
        orders[ptr[q] : ptr[q + 1]] = np.argsort(-scores[ptr[q] : ptr[q + 1]], kind="mergesort")
    return orders


@njit(cache=True, parallel=True)
def _line_values(y, gains, scores, orders, xf, ptr, queries, relevant, ideal, deltas, qweight, current, metric, k,
                 gain_kind, ties, max_grade, empty, p_by, ap_by):  # fmt: skip
    """For each ``delta``: the weighted sum over ``queries`` of the metric of ``scores + delta * xf``,
    minus its current sum (``current``: the queries' values now). Skipped (NaN) queries count 0.

    ``gains`` is every row's gain (:func:`_row_gains`), ``orders`` every query's ranking of
    ``scores`` (:func:`_rankings`), ``relevant`` and ``ideal`` its relevant documents and ideal
    DCG at ``k`` (NDCG; any positive value for the other metrics). Each query's ranking follows
    the steps by an insertion sort, which costs O(n) when few documents swap; the value is
    recomputed only when the top ``k`` changed, and under pessimistic or average ties also when
    a tie touches the top ``k`` (the metric's own ranking then decides).
    """
    n_q, n_s = queries.shape[0], deltas.shape[0]
    values = np.empty((n_q, n_s))
    order_all, moved_all = orders.copy(), np.empty(scores.shape[0])  # each query works on its own slice
    longest = np.diff(ptr).max()
    singles = np.arange(1, longest + 1)  # group ends of a ranking without tie groups
    discounts = np.array([discount(p) for p in range(longest)])
    tables = metric == DCG or metric == NDCG
    for i in prange(n_q):
        q = queries[i]
        lo, hi = ptr[q], ptr[q + 1]
        n = hi - lo
        kq = n if k < 0 else min(k, n)
        if relevant[q] == 0 or kq == 0 or ideal[q] <= 0.0:  # the value does not depend on the ranking
            values[i, :] = current[q]
            continue
        labels, base, column = y[lo:hi], scores[lo:hi], xf[lo:hi]
        order, moved = order_all[lo:hi], moved_all[lo:hi]
        value, strict_before = current[q], _top_is_strict(base, order, kq)
        for s in range(n_s):
            for r in range(n):
                moved[r] = base[r] + deltas[s] * column[r]
            changed = False
            for p in range(1, n):  # insertion sort by (score descending, row)
                row, j = order[p], p - 1
                while j >= 0 and (moved[row] > moved[order[j]] or (moved[row] == moved[order[j]] and row < order[j])):
                    order[j + 1] = order[j]
                    j -= 1
                order[j + 1] = row
                changed |= j + 1 < p and j + 1 < kq  # a row moved up, into the top kq
            strict = ties == TIES_STABLE or _top_is_strict(moved, order, kq)
            if changed or not (strict and strict_before):
                if strict and tables:  # _dcg's sum for a ranking without tie groups, from the tables
                    value = 0.0
                    for p in range(kq):
                        value += gains[lo + order[p]] * discounts[p]
                    if metric == NDCG:
                        value /= ideal[q]
                elif strict:  # the stable order is the metric's ranking of the top kq
                    value = ranked_value(labels, order, singles, kq, relevant[q], ideal[q], metric, k, gain_kind,
                                          max_grade, empty, p_by, ap_by)  # fmt: skip
                else:
                    value = query_value(labels, moved, n, metric, k, gain_kind, ties, max_grade, empty, p_by, ap_by)
            strict_before = strict
            values[i, s] = value
    out = np.empty(n_s)
    base_sum = 0.0
    for i in range(n_q):
        base_sum += qweight[queries[i]] * current[queries[i]]
    for s in range(n_s):
        acc = 0.0
        for i in range(n_q):
            acc += qweight[queries[i]] * values[i, s]
        out[s] = acc - base_sum
    return out


@njit(cache=True)
def _row_gains(y: np.ndarray, gain_kind: int) -> np.ndarray:
    """Every row's gain, as the metric kernels compute it."""
    out = np.empty(y.shape[0])
    for i in range(y.shape[0]):
        out[i] = gain(y[i], gain_kind)
    return out


@njit(cache=True)
def _ideal_values(y: np.ndarray, ptr: np.ndarray, k: int, gain_kind: int) -> np.ndarray:
    """Every query's ideal DCG at ``k`` (the whole list for k < 0)."""
    out = np.empty(ptr.shape[0] - 1)
    for q in range(out.shape[0]):
        n = ptr[q + 1] - ptr[q]
        out[q] = ideal_dcg(y[ptr[q] : ptr[q + 1]], n if k < 0 else min(k, n), gain_kind)
    return out


@njit(cache=True)
def _top_is_strict(scores: np.ndarray, order: np.ndarray, kq: int) -> bool:
    """Whether the first ``kq`` rows of ``order`` have distinct scores, all above the other rows'."""
    for a in range(min(kq, order.shape[0] - 1)):
        if not scores[order[a]] > scores[order[a + 1]]:
            return False
    return True


class CoordinateAscent(MetricFittedRanker):
    """Coordinate Ascent ranker: linear weights searched feature by feature for the metric.

    Parameters
    ----------
    n_estimators : int
        Random restarts (RankLib's ``-r``, 5); each is one iteration of the driver.
    line_search_steps : int
        Steps of the line search tried in each direction (RankLib's ``-i``, 25).
    step_base : float
        First step as a fraction of the weight when 0.001 is over half the weight (0.05).
    step_scale : float
        Each step is this times the previous one (2.0).
    tolerance : float
        A restart ends after a sweep that left the metric less than this above its start (0.001).
    regularized : bool
        Subtract ``slack`` times the distance of the normalized weights from uniform weights.
    slack : float
        Weight of that penalty (RankLib's ``-reg``, 0.001).
    metric : str or Metric
        The metric optimized on the training data, watched on the evaluation sets and used
        by ``score`` (RankLib's ``-metric2t``), e.g. "ndcg@10". ``ties="docid"`` is not supported.
    early_stopping_rounds : int, "auto" or None, default=None
        Stop when the watched evaluation set's metric has not improved for this many restarts
        (an int needs an ``eval_set``); "auto": max(20, n_estimators // 10) with an ``eval_set``,
        none without; None: run every restart. With an evaluation set the model is the restart
        best on it either way, as RankLib keeps.
    n_jobs : int or None
        Threads (steps of a line search are evaluated in parallel).
    random_state : int or None
        Seed of the feature orders.
    verbose : int
        0: silent; 1: a progress bar over restarts.

    Attributes
    ----------
    coef_ : ndarray of float64 (n_features,)
        The weights, L1-normalized.
    intercept_ : float
        Always 0 (RankLib's model has no intercept).
    n_features_in_, feature_names_in_, evals_result_, best_iteration_, best_score_, n_iter_, interrupted_, max_grade_
        See :class:`ranklearn.models.base.BaseRanker`.
    """

    _model_name = "coordinate-ascent"
    _vocabulary_since = 2  # payload 2: n_estimators, line_search_steps (were n_restarts, max_iterations)
    _display_name = "Coordinate Ascent"
    iteration_unit = "restart"
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "line_search_steps": [Interval(Integral, 1, None, closed="left")],
        "step_base": [Interval(Real, 0, np.inf, closed="neither")],
        "step_scale": [Interval(Real, 0, np.inf, closed="neither")],
        "tolerance": [Interval(Real, 0, np.inf, closed="left")],
        "regularized": ["boolean"],
        "slack": [Interval(Real, 0, np.inf, closed="left")],
        "metric": [str, Metric],
        "early_stopping_rounds": EARLY_STOPPING,
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_estimators: int = 5,
        line_search_steps: int = 25,
        step_base: float = 0.05,
        step_scale: float = 2.0,
        tolerance: float = 0.001,
        regularized: bool = False,
        slack: float = 0.001,
        metric: str | Metric = "ndcg@10",
        early_stopping_rounds: int | str | None = None,
        n_jobs: int | None = None,
        random_state: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.line_search_steps = line_search_steps
        self.step_base = step_base
        self.step_scale = step_scale
        self.tolerance = tolerance
        self.regularized = regularized
        self.slack = slack
        self.metric = metric
        self.early_stopping_rounds = early_stopping_rounds
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _begin_fit(self, data: FitData, evals: list[EvalSet]) -> None:
        super()._begin_fit(data, evals)
        X, ptr = data.X, data.ptr
        self._rng = check_random_state(self.random_state)
        self._metric_obj = self.evaluation_metric()
        self._args = self._metric_obj.kernel_args()
        self._y = np.ascontiguousarray(data.y, dtype=np.float64)
        self._columns = [np.ascontiguousarray(X[:, f], dtype=np.float64) for f in range(X.shape[1])]
        # A query's value can change with feature f only if x_f is not constant in it (else
        # its order stays) and its labels differ (else every order has the same value: this
        # drops the queries without a relevant document).
        starts = ptr[:-1]
        varies = np.maximum.reduceat(X, starts, axis=0) > np.minimum.reduceat(X, starts, axis=0)
        varies &= (np.maximum.reduceat(data.y, starts) > np.minimum.reduceat(data.y, starts))[:, None]
        self._queries = [np.flatnonzero(varies[:, f]) for f in range(X.shape[1])]
        values = self._metric_obj.per_query(self._y, np.zeros(X.shape[0]), ptr)
        qweight = query_weights(data.weight, ptr)
        qweight[np.isnan(values)] = 0.0  # queries the metric skips (empty="skip") count nowhere
        if not qweight.sum() > 0:
            raise ValueError(f"metric {self._metric_obj.name!r} scores no training query with a weight above 0")
        self._qweight = qweight
        # what the line search needs of each query that its steps do not change
        metric_code, k, gain_kind = self._args[:3]
        self._relevant = np.add.reduceat((self._y > 0).astype(np.int64), starts)
        self._gains = _row_gains(self._y, gain_kind)
        self._ideal = _ideal_values(self._y, ptr, k, gain_kind) if metric_code == NDCG else np.ones(qweight.size)
        self._best_train = -np.inf

    def _per_query(self, scores: np.ndarray) -> np.ndarray:
        return np.nan_to_num(self._metric_obj.per_query(self._y, scores, self._data.ptr))

    def _penalty(self, w: np.ndarray, f: int, new_values: np.ndarray) -> np.ndarray:
        """``slack`` times the distance from uniform of ``w`` normalized, with ``w[f]`` set to each new value."""
        if not self.regularized:
            return np.zeros(new_values.shape[0])
        u = 1.0 / w.shape[0]
        rest_abs = np.abs(w).sum() - abs(w[f])
        rest = np.delete(w, f)
        norm = rest_abs + np.abs(new_values)
        with np.errstate(divide="ignore", invalid="ignore"):  # a zero norm is refused below
            # one row per new value, summed along it as the row alone would be; the new value's
            # own term squared as a scalar (pow), as the loop over the values squared it
            own = np.array([t**2 for t in new_values / norm - u])
            dist = np.sqrt(((rest[None, :] / norm[:, None] - u) ** 2).sum(axis=1) + own)
        return self.slack * np.where(norm > 0, dist, np.inf)

    def _fit_step(self, iteration: int) -> None:
        data = self._data
        n_feat = data.X.shape[1]
        w = np.full(n_feat, 1.0 / n_feat)
        scores = linear_scores(data.X, w, 0.0)
        values, orders = self._per_query(scores), _rankings(scores, data.ptr)
        total_w = self._qweight.sum()
        current = self._qweight @ values  # the weighted sum of the current weights' values
        start = best = current / total_w
        fails = 0
        growth = np.cumsum(self.step_scale ** np.arange(self.line_search_steps))
        while (n_feat > 1 and fails < n_feat - 1) or (n_feat == 1 and fails == 0):
            for f in self._rng.permutation(n_feat):
                orig, queries, column = w[f], self._queries[f], self._columns[f]
                found = None
                for direction in (1, -1, 0):
                    if direction == 0:
                        deltas = np.array([-orig])
                    else:
                        step = 0.001 * direction
                        if orig != 0.0 and abs(step) > 0.5 * abs(orig):
                            step = direction * self.step_base * abs(orig)
                        deltas = step * growth
                    moves = _line_values(self._y, self._gains, scores, orders, column, data.ptr, queries,
                                         self._relevant, self._ideal, deltas, self._qweight, values,
                                         *self._args)  # fmt: skip
                    # a step that changes no ranking moves the sum by exactly 0, so it never beats best
                    tried = (current + moves) / total_w - self._penalty(w, f, orig + deltas)
                    j = int(np.argmax(tried))
                    if tried[j] > best:
                        best, found = float(tried[j]), float(deltas[j])
                        break
                if found is None:
                    fails += 1
                    continue
                fails = 0
                w[f] = orig + found
                scores += found * column
                norm = np.abs(w).sum()
                if norm > 0:
                    w /= norm
                    scores /= norm
                values, orders = self._per_query(scores), _rankings(scores, data.ptr)
                current = self._qweight @ values
                # best is the current model's value, in the arithmetic of the next comparisons
                best = current / total_w - self._penalty(w, f, w[f : f + 1])[0]
            if best - start < self.tolerance:
                break
        train = current / total_w
        if self._evals or train > self._best_train:  # without evaluation sets: the restart best on training
            self._best_train = train
            self.coef_, self.intercept_ = w, 0.0
        self._score_evals()

    def _end_fit(self) -> None:
        for name in ("_rng", "_metric_obj", "_args", "_y", "_columns", "_queries", "_qweight", "_gains", "_relevant",
                     "_ideal", "_best_train"):
            self.__dict__.pop(name, None)
        super()._end_fit()
