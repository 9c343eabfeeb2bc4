"""Position-bias (propensity) estimation from click logs: swap interventions, EM, intervention harvesting.

Every estimator returns the examination propensity per rank relative to rank 1 (``p_k / p_1``)
under the position-based model ``P(click | q, d, k) = p_k gamma_{q,d}``, with a bootstrap
interval: sessions, the log's independent units, are resampled (Poisson bootstrap: each
session weighs a Poisson(1) draw) and the estimator is run again on each resample.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numba
import numpy as np

from ranklearn.clicks.aggregate import ClickTrainingSet, dataset_rows, runs
from ranklearn.clicks.log import ClickLog

if TYPE_CHECKING:
    from ranklearn.data import RankingDataset

#: The estimators :func:`estimate_propensity` offers.
METHODS = ("swap", "em", "regression_em", "harvest")


@dataclass(frozen=True)
class Propensity:
    """Estimated examination propensities, per rank from 1, normalized to rank 1.

    Attributes
    ----------
    method : str
    propensity : ndarray of shape (max_rank,)
        ``p_k / p_1`` for ranks ``1..max_rank`` (``propensity[0] == 1``; NaN where the log holds
        no information on a rank).
    interval : ndarray of shape (max_rank, 2)
        Percentile bootstrap interval of each rank's propensity at level ``confidence``.
    stderr : ndarray of shape (max_rank,)
        Bootstrap standard deviation of each rank's propensity.
    confidence : float
    n_sessions : int
        Sessions estimated from (a merged distinct session counts as the sessions it stands for).
    """

    method: str
    propensity: np.ndarray
    interval: np.ndarray
    stderr: np.ndarray
    confidence: float
    n_sessions: int


class _Sessions:
    """Per impression, its session's index and the log's cells (query, document, position)."""

    def __init__(self, log: ClickLog, max_rank: int) -> None:
        self.log = log
        self.max_rank = max_rank
        _, self.index, counts = np.unique(log.session, return_inverse=True, return_counts=True)
        self.n_sessions = len(counts)
        self.length = np.zeros(self.n_sessions, dtype=np.int64)
        np.maximum.at(self.length, self.index, log.position)


# ---------------------------------------------------------------------------- swap interventions


class _Swap:
    """Swap interventions: Joachims, Swaminathan and Schnabel, "Unbiased learning-to-rank with
    biased feedback", WSDM 2017, and their RandPair generalization (Wang, Golbandi, Bendersky,
    Metzler and Najork, WSDM 2018): a session whose pivot rank ``P`` (1 for Joachims et al.)
    traded places with rank ``k`` shows the documents logged at ranks ``P`` and ``k`` at ``k``
    and ``P``; a control session (``k = P``) shows them in place. With ``r`` the mean click rate
    per session (the control sessions taken among lists of at least ``k`` documents, so that both
    groups hold the same queries), under the PBM ``r_swap(k) + r_control(k) = p_k (g_P + g_k)``
    and ``r_control(P) + r_swap(P) = p_P (g_P + g_k)``, so their ratio is ``p_k / p_P``: the
    paper's ratio for the document moved from the pivot, pooled with the one for the document
    moved to the pivot (the same swaps' other clicks, less variance). Divided by the same ratio
    at ``k = 1``, it is ``p_k / p_1``. Sessions without an intervention (``swap == 0``: lists
    shorter than the pivot) are left out.
    """

    def __init__(self, s: _Sessions) -> None:
        log = s.log
        if log.swap is None:
            raise ValueError("method='swap' needs a log with swap interventions "
                             "(simulate(..., intervention='swap' or 'randpair'))")  # fmt: skip
        pivots = np.unique(log.pivot[log.swap > 0]) if log.pivot is not None else np.ones(1, np.int64)
        if pivots.size > 1:
            raise ValueError(f"method='swap' reads one pivot rank per log; this log holds pivots {pivots.tolist()} "
                             "(estimate each pivot's sessions separately)")  # fmt: skip
        self.pivot = int(pivots[0]) if pivots.size else 1
        self.max_rank = s.max_rank
        self.session = s.index
        self.click = log.click.astype(np.float64)
        self.position = log.position
        self.swap = log.swap
        self.length = s.length[s.index]  # per impression, its list's length
        self.control = log.swap == self.pivot
        self.intervened = log.swap > 0
        self.at_swap = log.position == log.swap

    def estimate(self, w: np.ndarray) -> np.ndarray:
        P = self.pivot
        K = max(self.max_rank, P)
        wi = w[self.session]
        wc = wi * self.click
        at_pivot, ctl, swapped = self.position == P, self.control, self.intervened & ~self.control

        def per_rank(mask: np.ndarray, key: np.ndarray, weights: np.ndarray) -> np.ndarray:
            return np.bincount(key[mask], weights[mask], minlength=K + 1)[: K + 1]

        swap_n = per_rank(at_pivot & swapped, self.swap, wi)  # sessions swapping the pivot with k
        swap_at_k = per_rank(self.at_swap & swapped, self.swap, wc)  # their clicks at rank k
        swap_at_p = per_rank(at_pivot & swapped, self.swap, wc)  # and at the pivot
        ctl_n = per_rank(ctl, self.position, wi)  # control sessions reaching rank k
        ctl_at_k = per_rank(ctl, self.position, wc)
        # control clicks at the pivot in lists of at least k documents: by length, summed from the longest
        by_length = np.bincount(self.length[ctl & at_pivot], wc[ctl & at_pivot], minlength=K + 1)
        ctl_at_p = np.cumsum(by_length[::-1])[::-1][: K + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (swap_at_k / swap_n + ctl_at_k / ctl_n) / (ctl_at_p / ctl_n + swap_at_p / swap_n)
            ratio[P] = 1.0  # p_k / p_P, k = 1..K
            return (ratio[1:] / ratio[1])[: self.max_rank]


# ---------------------------------------------------------------------------- click-log cells


class _Cells:
    """The (query, document, position) cells of the log within ``max_rank`` and each impression's cell."""

    def __init__(self, s: _Sessions) -> None:
        log = s.log
        keep = log.position <= s.max_rank
        self.session = s.index[keep]
        self.click = log.click[keep].astype(np.float64)
        query, document, position = log.query[keep], log.document[keep], log.position[keep]
        order, starts = runs(query, document, position)
        self.n_cells = len(starts) - 1
        self.cell = np.empty(len(order), dtype=np.int64)
        self.cell[order] = np.repeat(np.arange(self.n_cells), np.diff(starts))
        first = order[starts[:-1]]  # cells sorted by query, document, position
        new_pair = np.ones(self.n_cells, dtype=bool)
        new_pair[1:] = (query[first][1:] != query[first][:-1]) | (document[first][1:] != document[first][:-1])
        self.query_doc = np.cumsum(new_pair) - 1
        self.n_pairs = int(new_pair.sum())
        self.position = position[first] - 1  # 0-based rank
        self.max_rank = s.max_rank

    def counts(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        wi = w[self.session]
        shown = np.bincount(self.cell, wi, minlength=self.n_cells)
        clicked = np.bincount(self.cell, wi * self.click, minlength=self.n_cells)
        return clicked, shown


def _expected(p: np.ndarray, g: np.ndarray, clicked: np.ndarray, missed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The PBM's E-step per cell: expected examined impressions and expected relevant ones
    (every click is both; a non-click is examined with P(E=1, R=0 | C=0) = p(1 - g)/(1 - pg) and
    relevant with P(E=0, R=1 | C=0) = (1 - p)g/(1 - pg))."""
    none = np.maximum(1.0 - p * g, 1e-12)
    return clicked + missed * p * (1.0 - g) / none, clicked + missed * (1.0 - p) * g / none


class _EM(_Cells):
    """Expectation-maximization of the position-based model on the click log alone: Wang, Golbandi,
    Bendersky, Metzler and Najork, "Position bias estimation for unbiased learning to rank in
    personal search", WSDM 2018 (Section 4, with a relevance ``gamma`` per query-document; the
    paper's regression variant, which fits ``gamma`` from features, is :class:`_RegressionEM`).

    E-step, for a cell's non-clicks: ``P(E=1, R=0 | C=0) = p(1 - g)/(1 - pg)`` and
    ``P(E=0, R=1 | C=0) = (1 - p)g/(1 - pg)``; M-step: ``p_k`` = (clicks + non-clicks x
    P(E=1, R=0 | C=0)) / impressions over rank ``k``'s cells, ``g`` likewise over a
    query-document's. The EM map is accelerated by SQUAREM (Varadhan and Roland, "Simple and
    globally convergent methods for accelerating the convergence of any EM algorithm", Scand.
    J. Statist. 2008), which keeps EM's fixed point. ``p_k`` is identified only where documents
    are shown at several ranks (stochastic logging, several rankers or randomization).
    """

    def __init__(self, s: _Sessions, max_iter: int, tol: float) -> None:
        super().__init__(s)
        self.max_iter = max_iter
        self.tol = tol
        self.start: np.ndarray | None = None

    def estimate(self, w: np.ndarray) -> np.ndarray:
        clicked, shown = self.counts(w)
        K, pos, qd = self.max_rank, self.position, self.query_doc
        missed = shown - clicked
        rank_shown = np.bincount(pos, shown, minlength=K)
        pair_shown = np.bincount(qd, shown, minlength=self.n_pairs)
        rank_seen, pair_seen = rank_shown > 0, pair_shown > 0

        def step(x: np.ndarray) -> np.ndarray:
            theta, gamma = x[:K], x[K:]
            examined, relevant = _expected(theta[pos], gamma[qd], clicked, missed)
            t = np.bincount(pos, examined, minlength=K)
            r = np.bincount(qd, relevant, minlength=self.n_pairs)
            t[rank_seen] /= rank_shown[rank_seen]
            r[pair_seen] /= pair_shown[pair_seen]
            t[~rank_seen], r[~pair_seen] = theta[~rank_seen], gamma[~pair_seen]
            return np.clip(np.concatenate((t, r)), 0.0, 1.0)

        # a bootstrap resample starts from the whole log's solution
        x = np.full(K + self.n_pairs, 0.5) if self.start is None else self.start.copy()
        for _ in range(self.max_iter):
            x1 = step(x)
            x2 = step(x1)
            r, v = x1 - x, x2 - 2.0 * x1 + x
            norm_v = np.sqrt(v @ v)
            alpha = -np.sqrt(r @ r) / norm_v if norm_v > 0 else -1.0
            alpha = min(alpha, -1.0)  # -1 is the plain double EM step
            x_new = step(np.clip(x - 2.0 * alpha * r + alpha * alpha * v, 0.0, 1.0))
            change = np.max(np.abs(x_new[:K] / max(x_new[0], 1e-300) - x[:K] / max(x[0], 1e-300)))
            x = x_new
            if change < self.tol:
                break
        if self.start is None:
            self.start = x
        theta = np.where(rank_seen, x[:K], np.nan)
        return theta / theta[0]


@numba.njit(cache=True)
def _expected_kernel(theta, gamma, pos, qd, clicked, shown, n_ranks, n_pairs):  # pragma: no cover - compiled
    """The PBM's E-step over the cells, summed per rank (expected examined impressions) and per
    query-document (expected relevant impressions); see :func:`_expected`."""
    examined = np.zeros(n_ranks)
    relevant = np.zeros(n_pairs)
    for c in range(pos.shape[0]):
        p, g = theta[pos[c]], gamma[qd[c]]
        missed = shown[c] - clicked[c]
        none = max(1.0 - p * g, 1e-12)
        examined[pos[c]] += clicked[c] + missed * p * (1.0 - g) / none
        relevant[qd[c]] += clicked[c] + missed * (1.0 - p) * g / none
    return examined, relevant


#: The relevance models of regression EM's M-step (``relevance_model=``).
RELEVANCE_MODELS = ("gbdt", "logistic")


def _relevance_model(name_or_model: Any) -> Any:
    """A scikit-learn classifier for regression EM's M-step: ``"gbdt"`` (gradient-boosted trees, as
    Wang et al.), ``"logistic"`` (logistic regression, warm-started from the last fit), or a classifier of the user's
    (cloned; it must take ``sample_weight`` and have ``predict_proba``)."""
    from sklearn.base import clone
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    if isinstance(name_or_model, str):
        if name_or_model not in RELEVANCE_MODELS:
            raise ValueError(f"relevance_model must be one of {RELEVANCE_MODELS} or a scikit-learn classifier, "
                             f"got {name_or_model!r}")  # fmt: skip
        if name_or_model == "logistic":
            return LogisticRegression(C=1.0, warm_start=True, max_iter=200)
        # shallow trees, strong leaves: relevance shared across documents of alike features, which
        # is what identifies the propensities; deterministic (no early-stopping split)
        return HistGradientBoostingClassifier(max_iter=50, learning_rate=0.2, max_leaf_nodes=8, min_samples_leaf=50,
                                              max_bins=63, early_stopping=False, random_state=0)  # fmt: skip
    if not (hasattr(name_or_model, "fit") and hasattr(name_or_model, "predict_proba")):
        raise ValueError(f"relevance_model must be one of {RELEVANCE_MODELS} or a scikit-learn classifier "
                         f"(fit with sample_weight, predict_proba), got {name_or_model!r}")  # fmt: skip
    return clone(name_or_model)


class _RegressionEM(_Cells):
    """Regression EM: Wang, Golbandi, Bendersky, Metzler and Najork, WSDM 2018 (Section 4.2):
    the PBM's EM where the relevance ``gamma(x)`` of a query-document is a regression on its
    features instead of one parameter per query-document, so that propensities are identified
    from documents of alike features shown at different ranks, even under deterministic logging.

    E-step as :class:`_EM` (a numba kernel over the cells); M-step: ``p_k`` in closed form, and
    the relevance model refitted on the posteriors: a classifier (by default gradient-boosted
    trees, scikit-learn's ``HistGradientBoostingClassifier``, as the paper's GBDT) on every
    query-document's features with its expected relevant impressions as the weight of label 1
    and the rest of its impressions as the weight of label 0 (the paper's regression on sampled
    posteriors, with the exact expectations as sample weights instead of samples). Stops when the
    propensities relative to rank 1 move less than ``tol`` or after ``max_iter`` iterations.
    """

    def __init__(self, s: _Sessions, features: Callable[[np.ndarray], Any], relevance_model: Any,
                 max_iter: int, tol: float) -> None:  # fmt: skip
        super().__init__(s)
        keep = s.log.position <= s.max_rank
        first = np.zeros(self.n_pairs, dtype=np.int64)  # an impression of every query-document
        cell_of = np.full(self.n_cells, -1, dtype=np.int64)
        cell_of[self.cell] = np.flatnonzero(keep)
        first[self.query_doc[::-1]] = cell_of[::-1]
        from sklearn.preprocessing import StandardScaler

        # standardized: the logistic regression's L2 penalty treats features alike (trees do not care)
        self.X = StandardScaler().fit_transform(np.asarray(features(first), dtype=np.float64))
        self.model = _relevance_model(relevance_model)
        self.max_iter = max_iter
        self.tol = tol
        self.start: tuple[np.ndarray, np.ndarray] | None = None

    def estimate(self, w: np.ndarray) -> np.ndarray:
        from threadpoolctl import threadpool_limits

        clicked, shown = self.counts(w)
        K, pos, qd = self.max_rank, self.position, self.query_doc
        rank_shown = np.bincount(pos, shown, minlength=K)
        pair_shown = np.bincount(qd, shown, minlength=self.n_pairs)
        rank_seen, pair_seen = rank_shown > 0, pair_shown > 0
        Xy = np.concatenate((self.X[pair_seen], self.X[pair_seen]))
        labels = np.repeat([1, 0], int(pair_seen.sum()))
        # a bootstrap resample starts from the whole log's solution
        theta, gamma = (np.full(K, 0.5), np.full(self.n_pairs, 0.5)) if self.start is None else self.start
        for _ in range(self.max_iter):
            examined, relevant = _expected_kernel(theta, gamma, pos, qd, clicked, shown, K, self.n_pairs)
            new = np.where(rank_seen, examined / np.maximum(rank_shown, 1e-300), theta).clip(0.0, 1.0)
            rel = np.clip(relevant[pair_seen], 0.0, pair_shown[pair_seen])
            with threadpool_limits(1):  # small fits: threads cost more than they give
                self.model.fit(Xy, labels, sample_weight=np.concatenate((rel, pair_shown[pair_seen] - rel)))
                gamma = self.model.predict_proba(self.X)[:, 1]
            change = np.max(np.abs(new / max(new[0], 1e-300) - theta / max(theta[0], 1e-300)))
            theta = new
            if change < self.tol:
                break
        if self.start is None:
            self.start = (theta, gamma)
        theta = np.where(rank_seen, theta, np.nan)
        return theta / theta[0]


class _Harvest(_Cells):
    """Intervention harvesting: Agarwal, Zaitsev, Wang, Li, Najork and Joachims, "Estimating
    position bias without intrusive interventions", WSDM 2019.

    A query-document shown at ranks ``k`` and ``k'`` (by different logging rankers, or by
    stochastic logging) is an intervention harvested from the log: over the set ``S_{k,k'}``
    of such pairs, ``sum CTR(q, d, k) / sum CTR(q, d, k')`` estimates ``p_k / p_{k'}`` (the
    click-through rate of a cell is clicks over its impressions, so each pair weighs as in
    the paper's ``w(q, d, k)`` with the rankers' sessions counted per query). The ratios of
    all pairs of ranks are combined as the paper's AllPairs estimator: least squares on
    ``log p_k - log p_{k'}``, each pair weighted by its inverse variance
    ``1 / (1/clicks_k + 1/clicks_{k'})``, ``log p_1 = 0``.
    """

    def __init__(self, s: _Sessions) -> None:
        super().__init__(s)
        order = np.lexsort((self.position, self.query_doc))
        a, b = [], []
        for t in range(1, self.max_rank):  # every pair of cells of one query-document, lower rank first
            i, j = order[:-t], order[t:]
            same = self.query_doc[i] == self.query_doc[j]
            a.append(i[same])
            b.append(j[same])
        self.a = np.concatenate(a)
        self.b = np.concatenate(b)
        self.pair = self.position[self.a] * self.max_rank + self.position[self.b]

    def estimate(self, w: np.ndarray) -> np.ndarray:
        clicked, shown = self.counts(w)
        K = self.max_rank
        seen = (shown[self.a] > 0) & (shown[self.b] > 0)
        a, b, pair = self.a[seen], self.b[seen], self.pair[seen]
        ctr = clicked / np.maximum(shown, 1e-300)
        sum_a = np.bincount(pair, ctr[a], minlength=K * K)
        sum_b = np.bincount(pair, ctr[b], minlength=K * K)
        clicks_a = np.bincount(pair, clicked[a], minlength=K * K)
        clicks_b = np.bincount(pair, clicked[b], minlength=K * K)
        usable = np.flatnonzero((clicks_a > 0) & (clicks_b > 0))
        if usable.size == 0:
            return np.full(K, np.nan)
        ka, kb = np.divmod(usable, K)
        weight = np.sqrt(1.0 / (1.0 / clicks_a[usable] + 1.0 / clicks_b[usable]))
        design = np.zeros((usable.size, K))
        design[np.arange(usable.size), ka] = 1.0
        design[np.arange(usable.size), kb] = -1.0
        target = np.log(sum_a[usable] / sum_b[usable])
        reached = np.zeros(K, dtype=bool)  # ranks linked to rank 1 through some pair
        reached[0] = True
        for _ in range(K):
            reached[ka[reached[kb]]] = True
            reached[kb[reached[ka]]] = True
        cols = np.flatnonzero(reached)[1:]
        rows = reached[ka] & reached[kb]
        out = np.full(K, np.nan)
        out[0] = 0.0
        if cols.size:
            solution = np.linalg.lstsq(design[rows][:, cols] * weight[rows, None], target[rows] * weight[rows], rcond=None)[0]
            out[cols] = solution
        return np.exp(out)


def _training_set_log(rows: ClickTrainingSet) -> tuple[ClickLog, np.ndarray]:
    """Session rows as a click log (one query, documents named by their dataset rows) and every
    session's count in the log's session order: ``sample_weight``, 1 for per-session rows, the
    number of alike sessions for merged ones (:meth:`ClickTrainingSet.per_pattern`)."""
    if rows.position is None or rows.document.size != rows.y.size or np.any((rows.y != 0) & (rows.y != 1)):
        raise ValueError("a ClickTrainingSet must hold session rows (ClickTrainingSet.per_session or .per_pattern): "
                         "clicks 0/1 with positions")  # fmt: skip
    sessions, first = np.unique(rows.qid, return_index=True)
    count = rows.sample_weight[first]
    bad = np.flatnonzero(rows.sample_weight != count[np.searchsorted(sessions, rows.qid)])
    if bad.size:
        raise ValueError(f"a ClickTrainingSet's sample_weight must be one count per session (qid), the same on its "
                         f"rows; session {rows.qid[bad[0]]} has {rows.sample_weight[bad[0]]:g} on row {bad[0]} and "
                         f"{count[np.searchsorted(sessions, rows.qid[bad[0]])]:g} on its first")  # fmt: skip
    zeros = np.zeros(rows.y.size, dtype=np.int64)
    log = ClickLog.from_arrays(query=zeros, session=rows.qid, document=rows.document, position=rows.position, click=rows.y)
    return log, count


def _dataset_features(log: ClickLog, dataset: RankingDataset) -> Callable[[np.ndarray], Any]:
    """Features of the log's impressions (by index) from the dataset the log names rows of."""
    return lambda at: dataset.X[dataset_rows(dataset, log.query[at], log.document[at])[0]]


def estimate_propensity(
    log: ClickLog | ClickTrainingSet,
    method: str = "swap",
    *,
    dataset: RankingDataset | None = None,
    max_rank: int = 10,
    n_bootstrap: int = 100,
    confidence: float = 0.95,
    seed: int = 0,
    max_iter: int = 1000,
    tol: float | None = None,
    relevance_model: Any = "logistic",
) -> Propensity:
    """Estimate the examination propensity of ranks ``1..max_rank`` relative to rank 1.

    Parameters
    ----------
    log : ClickLog or ClickTrainingSet
        A click log, or session training rows (:meth:`ClickTrainingSet.per_session`, or
        :meth:`~ClickTrainingSet.per_pattern`'s distinct sessions, each counted ``sample_weight``
        times and resampled as that many sessions), which carry the documents' features and
        dataset rows: ``dataset`` is then not needed.
    method : {"swap", "em", "regression_em", "harvest"}
        ``"swap"``: swap interventions (Joachims et al., WSDM 2017; the log needs its ``swap``
        column: ``simulate(..., intervention="swap")``); ``"em"``: expectation-maximization of
        the position-based model with a relevance per query-document (Wang et al., WSDM 2018);
        ``"regression_em"``: the same EM with the relevance a classifier of the documents'
        features (ibid., Section 4.2; needs ``dataset``; ``relevance_model``); ``"harvest"``: intervention
        harvesting across logging rankers (Agarwal et al., WSDM 2019). ``"em"`` and
        ``"harvest"`` need documents shown at several ranks (several logging rankers,
        Plackett-Luce logging or randomization); ``"regression_em"`` needs documents of alike
        features shown at different ranks (and a relevance that the features explain).
    dataset : RankingDataset, optional
        The dataset the log's documents come from (their features), for ``"regression_em"``.
    max_rank : int, default 10
        Estimate ranks ``1..max_rank`` (at most the log's deepest position).
    n_bootstrap : int, default 100
        Bootstrap resamples of the sessions for ``interval`` and ``stderr`` (0: none, NaN).
    confidence : float, default 0.95
    seed : int, default 0
        Seed of the bootstrap.
    max_iter, tol : EM's iteration limit and its convergence threshold on the propensities
        (both EMs). ``tol=None``: 1e-7 for ``"em"``, 1e-4 for ``"regression_em"``, whose M-step is
        an iterative fit solved to about that precision (a smaller one is never reached: the
        iterations run to ``max_iter``).
    relevance_model : {"logistic", "gbdt"} or scikit-learn classifier, default "logistic"
        Regression EM's M-step: logistic regression, gradient-boosted trees (as Wang et al.), or
        a classifier of yours (fit with ``sample_weight``, ``predict_proba``). On MQ2008 the trees
        were no closer to the simulated propensities than the logistic regression and ten times
        slower (benchmarks/clicks_simulation.md), hence the default.

    Returns
    -------
    Propensity

    Raises
    ------
    ValueError
        For an unknown method, an empty log, a swap estimate from a log without swaps,
        ``"regression_em"`` without ``dataset`` (or a log that names rows it lacks), or a bad
        parameter.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if isinstance(max_rank, bool) or not isinstance(max_rank, (int, np.integer)) or max_rank < 1:
        raise ValueError(f"max_rank must be an integer >= 1, got {max_rank!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be an integer >= 0, got {n_bootstrap!r}")
    features, count = None, None
    if isinstance(log, ClickTrainingSet):
        features = log.X.__getitem__
        log, count = _training_set_log(log)
    elif dataset is not None:
        features = _dataset_features(log, dataset)
    if len(log) == 0:
        raise ValueError("the click log is empty")
    sessions = _Sessions(log, int(min(max_rank, log.position.max())))
    if method == "swap":
        estimator = _Swap(sessions)
    elif method == "em":
        estimator = _EM(sessions, max_iter, 1e-7 if tol is None else tol)
    elif method == "regression_em":
        if features is None:
            raise ValueError("method='regression_em' needs dataset= (the documents' features) or a ClickTrainingSet")
        estimator = _RegressionEM(sessions, features, relevance_model, max_iter, 1e-4 if tol is None else tol)
    else:
        estimator = _Harvest(sessions)
    point = estimator.estimate(np.ones(sessions.n_sessions) if count is None else count)
    rng = np.random.default_rng(seed)
    # a distinct session counted c times is c sessions: the sum of c Poisson(1) draws is Poisson(c)
    lam = 1.0 if count is None else count
    draws = np.array([estimator.estimate(rng.poisson(lam, sessions.n_sessions).astype(np.float64))
                      for _ in range(n_bootstrap)]).reshape(n_bootstrap, len(point))  # fmt: skip
    tail = (1.0 - confidence) / 2.0 * 100.0
    with np.errstate(invalid="ignore"):
        if n_bootstrap:
            interval = np.nanpercentile(draws, [tail, 100.0 - tail], axis=0).T
            stderr = np.nanstd(draws, axis=0, ddof=1) if n_bootstrap > 1 else np.full(len(point), np.nan)
        else:
            interval, stderr = np.full((len(point), 2), np.nan), np.full(len(point), np.nan)
    n = sessions.n_sessions if count is None else int(round(count.sum()))
    return Propensity(method, point, interval, stderr, float(confidence), n)
