"""Click simulation: sessions of a dataset's queries, ranked by logging rankers, clicked by a click model.

Reproducible: one seed gives the same log whatever the thread count. The sessions' queries and
logging rankers are drawn by numpy's generator from ``seed``; everything random within a
session (a Plackett-Luce ranking, a swap, the clicks) comes from that session's own
counter-based stream (SplitMix64 of the seed and the session number), so the parallel kernel
may run sessions in any order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike

from ranklearn._threads import numba_threads
from ranklearn.clicks.log import ClickLog
from ranklearn.clicks.models import CASCADE_CODE, DCM_CODE, PBM_CODE, TRUST_CODE, UBM_CODE, ClickModel

if TYPE_CHECKING:
    from ranklearn.data import RankingDataset

#: Result randomizations :func:`simulate` offers (``intervention=``).
INTERVENTIONS = ("swap", "randpair")

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2^-53


@njit(cache=True, inline="always")
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _uniform(state):
    """SplitMix64: the next state and a uniform double in [0, 1) with 53 random bits."""
    state = state + _GOLDEN
    return state, float(_mix(state) >> np.uint64(11)) * _TO_UNIT


@njit(cache=True, parallel=True)
def _simulate_kernel(ptr, relevance, rankings, scores, session_query, session_ranker, offsets, query_ids,
                     code, epsilon, examination, continuation, clicked_relevant, clicked_nonrelevant, ubm,
                     temperature, pivot, base,
                     out_query, out_session, out_document, out_position, out_click, out_swap):  # fmt: skip
    for s in prange(session_query.shape[0]):
        q = session_query[s]
        r = session_ranker[s]
        start = ptr[q]
        n = ptr[q + 1] - start
        o = offsets[s]
        length = offsets[s + 1] - o
        state = _mix(base + np.uint64(s))
        if temperature > 0.0:  # Plackett-Luce: the top of score / T plus Gumbel noise
            keys = np.empty(length)  # the best keys so far, descending, and their documents
            for i in range(n):
                state, u = _uniform(state)
                key = scores[r, start + i] / temperature - np.log(-np.log(u + 0.5 * _TO_UNIT))
                j = min(i, length)  # insertion into the kept top
                while j > 0 and keys[j - 1] < key:
                    if j < length:
                        keys[j] = keys[j - 1]
                        out_document[o + j] = out_document[o + j - 1]
                    j -= 1
                if j < length:
                    keys[j] = key
                    out_document[o + j] = i
        else:
            for j in range(length):
                out_document[o + j] = rankings[r, start + j]
        chosen = -1  # 0-based rank swapped with the pivot (-1: no intervention)
        if 0 < pivot <= length:  # the pivot trades places with a rank drawn uniformly from the list (itself: control)
            state, u = _uniform(state)
            chosen = min(int(u * length), length - 1)
            d = out_document[o + pivot - 1]
            out_document[o + pivot - 1] = out_document[o + chosen]
            out_document[o + chosen] = d
        last = 0  # rank of the last click (0: none yet)
        reading = True  # cascade models: the user has not left the list
        for j in range(length):
            rel = relevance[start + out_document[o + j]]
            attract = epsilon + (1.0 - epsilon) * rel
            if code == PBM_CODE:
                p = examination[j] * attract
            elif code == UBM_CODE:
                p = ubm[j, j - last] * attract  # distance (j + 1) - last, 0-based
            elif code == TRUST_CODE:
                p = examination[j] * (clicked_relevant[j] * rel + clicked_nonrelevant[j] * (1.0 - rel))
            else:
                p = attract if reading else 0.0
            state, u = _uniform(state)
            clicked = u < p
            out_click[o + j] = clicked
            if clicked:
                last = j + 1
                if code == CASCADE_CODE:
                    reading = False
                elif code == DCM_CODE:
                    state, u = _uniform(state)
                    reading = u < continuation[j]
            out_query[o + j] = query_ids[q]
            out_session[o + j] = s
            out_position[o + j] = j + 1
            if pivot > 0:
                out_swap[o + j] = chosen + 1


def relevance_probabilities(y: np.ndarray, max_grade: float) -> np.ndarray:
    """``(2^y - 1) / (2^max_grade - 1)`` of each label: the click models' relevance probability."""
    return np.expm1(np.asarray(y, dtype=np.float64) * np.log(2.0)) / np.expm1(max_grade * np.log(2.0))


def logged_rankings(scores: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Per ranker, each query's rows within the query, best score first (ties: row order), laid
    out as the query's rows are (``[:, ptr[q]:ptr[q + 1]]``)."""
    n_rows = scores.shape[1]
    query_of_row = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    out = np.empty(scores.shape, dtype=np.int64)
    for r, s in enumerate(scores):
        order = np.lexsort((np.arange(n_rows), -s, query_of_row))
        out[r] = order - ptr[query_of_row]
    return out


def _check_scores(scores: ArrayLike, n_rows: int) -> np.ndarray:
    arr = np.asarray(scores, dtype=np.float64)
    arr = arr[None, :] if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[1] != n_rows or arr.shape[0] < 1:
        raise ValueError(
            f"scores must be one score per row of the dataset ({n_rows}), or one such row per logging ranker; "
            f"got shape {np.shape(scores)}"
        )
    if not np.isfinite(arr).all():
        raise ValueError("scores must be finite")
    return arr


def _session_queries(rng: np.random.Generator, n_queries: int, n_sessions: int, frequency: ArrayLike | None) -> np.ndarray:
    if frequency is None:
        return rng.integers(0, n_queries, n_sessions)
    f = np.asarray(frequency, dtype=np.float64)
    if f.shape != (n_queries,) or not np.isfinite(f).all() or (f < 0).any() or f.sum() <= 0:
        raise ValueError(f"query_frequency must be {n_queries} finite weights >= 0, one per query, not all 0")
    return rng.choice(n_queries, n_sessions, p=f / f.sum())


def simulate(
    dataset: RankingDataset,
    scores: ArrayLike,
    model: ClickModel,
    *,
    n_sessions: int,
    top_k: int = 10,
    seed: int = 0,
    query_frequency: ArrayLike | None = None,
    temperature: float | None = None,
    intervention: str | None = None,
    pivot: int = 1,
    max_grade: float | None = None,
    n_jobs: int | None = None,
) -> ClickLog:
    """Simulate a click log of ``n_sessions`` sessions on ``dataset``'s queries.

    Each session draws a query (uniformly, or by ``query_frequency``) and a logging ranker
    (uniformly among the rows of ``scores``), shows the query's documents in that ranker's
    order cut at ``top_k`` (or, with ``temperature``, a Plackett-Luce sample of
    ``softmax(scores / temperature)``; ``temperature=inf`` shuffles uniformly), applies
    ``intervention`` and lets ``model`` click, from the true labels of ``dataset``.

    Parameters
    ----------
    dataset : RankingDataset
        True labels (>= 0) and queries; its query ids (integers) name the log's queries and
        a document is its row index within its query.
    scores : array-like of shape (n_rows,) or (n_rankers, n_rows)
        The logging ranker's scores (several rankers for intervention harvesting).
    model : ClickModel
        :class:`~ranklearn.clicks.models.PBM`, ``Cascade``, ``DCM``, ``UBM`` or ``TrustBias``.
    n_sessions : int
    top_k : int, default 10
        Length of the logged lists (shorter for queries with fewer documents).
    seed : int, default 0
        Same seed, same log, whatever ``n_jobs``.
    query_frequency : array-like of shape (n_queries,), optional
        Relative frequency of each query (default: uniform).
    temperature : float, optional
        Stochastic logging (Plackett-Luce sample, drawn as the top of ``scores / temperature``
        plus Gumbel noise).
    intervention : {"swap", "randpair"}, optional
        ``"swap"``: swap interventions (Joachims et al., WSDM 2017): in every session the document
        at rank 1 trades places with the one at a rank drawn uniformly from the list (rank 1: a
        control session); the log's ``swap`` column records the rank. ``"randpair"``: RandPair
        (Wang et al., WSDM 2018), the same with the document at rank ``pivot`` instead of rank 1
        (lists shorter than ``pivot`` are left as logged, ``swap`` 0); the log's ``pivot`` column
        records the pivot. Both are read by ``estimate_propensity(log, "swap")``.
    pivot : int, default 1
        RandPair's pivot rank (``intervention="randpair"`` only).
    max_grade : float, optional
        ``ymax`` of the relevance probability ``(2^y - 1)/(2^ymax - 1)``; default the largest
        label (at least 1).
    n_jobs : int, optional
        Threads (default: every CPU).

    Returns
    -------
    ClickLog
        Sessions numbered ``0..n_sessions - 1`` in order, each list from rank 1.

    Raises
    ------
    ValueError
        For a negative label or one above ``max_grade``, scores of the wrong shape or not
        finite, non-integer query ids, or a bad parameter (named).
    """
    if isinstance(n_sessions, bool) or not isinstance(n_sessions, (int, np.integer)) or n_sessions < 0:
        raise ValueError(f"n_sessions must be an integer >= 0, got {n_sessions!r}")
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
        raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
    if temperature is not None and not temperature > 0:
        raise ValueError(f"temperature must be > 0 (or None: deterministic logging), got {temperature!r}")
    if intervention is not None and intervention not in INTERVENTIONS:
        raise ValueError(f"intervention must be one of {INTERVENTIONS} or None, got {intervention!r}")
    if isinstance(pivot, bool) or not isinstance(pivot, (int, np.integer)) or not 1 <= pivot <= top_k:
        raise ValueError(f"pivot must be an integer rank from 1 to top_k ({top_k}), got {pivot!r}")
    if pivot != 1 and intervention != "randpair":
        raise ValueError(f"pivot={pivot} needs intervention='randpair' (swap interventions pivot on rank 1)")
    if not isinstance(model, ClickModel):
        raise ValueError(f"model must be a ClickModel (PBM(), Cascade(), ...), got {model!r}")
    ids = np.asarray(dataset.query_ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("click logs name queries by integer ids; the dataset's query ids are not integers")
    y = dataset.y
    if (y < 0).any():
        raise ValueError(f"labels must be >= 0 for the click models' relevance, got {y.min()}")
    top = max(float(y.max(initial=0.0)), 1.0) if max_grade is None else float(max_grade)
    if not top > 0 or (y > top).any():
        raise ValueError(f"max_grade must be > 0 and at least every label, got {max_grade!r} (largest label {y.max()})")
    scores = _check_scores(scores, dataset.n_samples)
    params = model.kernel_params(int(top_k))
    ptr = dataset.ptr
    rng = np.random.default_rng(seed)
    session_query = _session_queries(rng, len(ptr) - 1, int(n_sessions), query_frequency)
    session_ranker = rng.integers(0, scores.shape[0], int(n_sessions))
    base = np.uint64(rng.integers(0, 2**63))
    lengths = np.minimum(np.diff(ptr)[session_query], top_k)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = int(offsets[-1])
    out = dict(
        query=np.empty(n, np.int64), session=np.empty(n, np.int64), document=np.empty(n, np.int64),
        position=np.empty(n, np.int64), click=np.empty(n, np.int8),
        swap=np.empty(n if intervention is not None else 0, np.int64),
    )  # fmt: skip
    rankings = logged_rankings(scores, ptr) if temperature is None else np.empty((1, 0), np.int64)
    with numba_threads(n_jobs):
        _simulate_kernel(
            ptr, relevance_probabilities(y, top), rankings, scores, session_query, session_ranker, offsets,
            ids.astype(np.int64), params.code, params.epsilon, params.examination, params.continuation,
            params.clicked_relevant, params.clicked_nonrelevant, params.ubm,
            0.0 if temperature is None else float(temperature), 0 if intervention is None else int(pivot), base,
            out["query"], out["session"], out["document"], out["position"], out["click"], out["swap"],
        )  # fmt: skip
    return ClickLog(**{**out, "swap": out["swap"] if intervention is not None else None,
                       "pivot": np.full(n, int(pivot), np.int64) if intervention == "randpair" else None})  # fmt: skip
