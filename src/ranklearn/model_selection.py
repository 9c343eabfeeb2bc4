"""Cross-validation with queries kept whole.

:func:`query_folds` splits rows into folds of whole queries (scikit-learn's ``GroupKFold``
with the query ids as groups, shuffled by a seed); :func:`cross_validate` fits a clone of an
estimator on every training part and reports each requested metric on the held-out queries,
as RankLib's ``-kcv`` does.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import clone
from sklearn.model_selection import GroupKFold
from sklearn.utils import _safe_indexing

from ranklearn.data.groups import check_qid, group_ptr, regroup_order
from ranklearn.data.positions import check_position
from ranklearn.models.checks import check_weight

__all__ = ["cross_validate", "query_folds"]


def query_folds(qid: ArrayLike, n_splits: int = 5, *, random_state: int | None = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Row indices ``(train, test)`` of ``n_splits`` folds, every query in exactly one test part.

    Parameters
    ----------
    qid : array-like of shape (n_samples,)
        Per-row query ids.
    n_splits : int
        Number of folds (2 to the number of queries).
    random_state : int or None
        Seed of the query shuffle; None keeps scikit-learn's size-balanced assignment
        without shuffling.

    Raises
    ------
    ValueError
        ``n_splits`` below 2 or above the number of queries.
    """
    q = check_qid(np.asarray(qid).ravel())
    n_queries = np.unique(q).size
    if not isinstance(n_splits, (int, np.integer)) or not 2 <= n_splits <= n_queries:
        raise ValueError(f"n_splits must be an integer from 2 to the number of queries ({n_queries}), got {n_splits!r}")
    splitter = GroupKFold(n_splits, shuffle=random_state is not None, random_state=random_state)
    yield from splitter.split(np.empty((q.size, 1)), groups=q)


def _rows(q: np.ndarray, rows: np.ndarray) -> np.ndarray:
    # Stable regrouping: a query's rows stay in input order, so ties="stable" still means input order.
    return rows[regroup_order(q[rows])]


def fit_with_progress(model: Any, description: str | None, X: Any, y: Any, **fit_params: Any) -> Any:
    """``model.fit(X, y, **fit_params)``, with a progress bar on stderr labelled ``description``
    (none when it is None)."""
    if description is None:
        return model.fit(X, y, **fit_params)
    from ranklearn._progress import TrainingProgress

    with TrainingProgress(None, description=description) as bar:
        return model.fit(X, y, callbacks=[bar], **fit_params)


def carve_queries(qid: ArrayLike, fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of the rows of ``fraction`` of the queries (rounded, at least one query on each
    side), drawn with ``seed``: the part to train on; the others validate (RankLib's ``-tvs``, seeded).

    Raises
    ------
    ValueError
        ``fraction`` outside (0, 1), or fewer than two queries.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"the training fraction must be between 0 and 1, got {fraction!r}")
    queries, per_row = np.unique(check_qid(np.asarray(qid).ravel()), return_inverse=True)
    if queries.size < 2:
        raise ValueError(f"carving validation queries needs two queries or more, got {queries.size}")
    n_train = min(max(round(fraction * queries.size), 1), queries.size - 1)
    chosen = np.zeros(queries.size, dtype=bool)
    chosen[np.random.default_rng(seed).permutation(queries.size)[:n_train]] = True
    return chosen[per_row]


def cross_validate(
    model: Any,
    X: ArrayLike,
    y: ArrayLike,
    *,
    qid: ArrayLike,
    cv: int | Any | Iterable[tuple[ArrayLike, ArrayLike]] = 5,
    metrics: str | Sequence[str] = ("ndcg@10",),
    random_state: int | None = 0,
    progress: bool = False,
    docids: ArrayLike | None = None,
    position: ArrayLike | None = None,
    return_estimator: bool = False,
    validation_fraction: float | None = None,
    sample_weight: ArrayLike | None = None,
    **conventions: Any,
) -> dict[str, Any]:
    """Fit a clone of ``model`` on each training part and score it on the held-out queries.

    Parameters
    ----------
    model : estimator
        A ranklearn estimator (``fit(X, y, qid=...)``, ``predict(X)``); cloned per fold.
    X : array-like, sparse matrix or data frame of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    qid : array-like of shape (n_samples,)
        Per-row query ids; a query never spans two parts.
    cv : int, scikit-learn splitter or iterable of (train rows, test rows)
        Number of query-grouped folds (:func:`query_folds`, seeded by ``random_state``), a
        splitter such as ``GroupKFold(5)`` (split with the query ids as groups), or the
        folds themselves.
    metrics : str or sequence of str
        Metric specs, as :func:`ranklearn.metrics.get_metric` takes.
    random_state : int or None
        Seed of the fold assignment when ``cv`` is an int.
    progress : bool
        Draw a progress bar on stderr for each fold's fit, then where it stopped (the
        command line's ``cv`` does).
    docids : array-like of shape (n_samples,), optional
        Document ids, for metrics that order ties by them (``conventions="trec_eval"``).
    position : array-like of int, shape (n_samples,), optional
        Display positions (1-based), given to each fold's ``fit(position=...)`` for its
        training rows; the test parts are scored on their labels, positions play no part.
    sample_weight : array-like of shape (n_samples,), optional
        Row weights (finite, >= 0), given to each fold's ``fit(sample_weight=...)`` for its
        training rows; the test parts are scored unweighted, as ``fit``'s metrics are.
    validation_fraction : float, optional
        Train each fold on this fraction of its training queries (:func:`carve_queries`, seeded
        by ``random_state``) and give the others to the fit as its evaluation set, for early
        stopping (``cv --early-stopping``).
    return_estimator : bool
        Also return each fold's fitted model (``"estimator"``, as scikit-learn's
        ``cross_validate``; ``cv --save-models``).
    **conventions
        Metric conventions (``conventions="trec_eval"``, ``empty=``, ...).

    Returns
    -------
    dict
        ``"test_<metric>"``: the metric's mean over each fold's test queries, one value per
        fold; ``"fit_time"``: seconds per fit; ``"n_test_queries"`` per fold; with
        ``return_estimator``, ``"estimator"``: the fitted models, a list.

    Raises
    ------
    ValueError
        A test part sharing a query with its training part, a metric that needs ``docids``
        without them (before any fit), or the errors of :func:`query_folds` and
        :func:`ranklearn.metrics.get_metric`.
    """
    from ranklearn.metrics import get_metric

    scorers = [get_metric(spec, **conventions) for spec in ([metrics] if isinstance(metrics, str) else metrics)]
    if docids is None and any(m.ties == "docid" for m in scorers):
        raise ValueError("ties='docid' (conventions='trec_eval') orders ties by document id: pass docids=")
    y_arr = np.asarray(y, dtype=np.float64).ravel()
    q = check_qid(np.asarray(qid).ravel())
    ids = None if docids is None else np.asarray(docids, dtype=object).ravel()
    n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
    if not n_rows == y_arr.size == q.size:
        raise ValueError(f"X, y and qid lengths differ: X has {n_rows} rows, y has {y_arr.size}, qid has {q.size}")
    if ids is not None and ids.size != q.size:
        raise ValueError(f"docids has {ids.size} values for {q.size} rows")
    pos = check_position(position, q.size)
    weight = check_weight(sample_weight, q.size, None)
    if isinstance(cv, (int, np.integer)):
        folds = query_folds(q, cv, random_state=random_state)
    elif hasattr(cv, "split"):  # a scikit-learn splitter: the queries are its groups
        folds = cv.split(np.empty((q.size, 1)), y_arr, groups=q)
    else:
        folds = cv
    X_rows = X if hasattr(X, "shape") else np.asarray(X)
    if getattr(X_rows, "format", None) in ("coo", "dia", "bsr"):  # sparse formats without row indexing
        X_rows = X_rows.tocsr()
    out: dict[str, list[float]] = {f"test_{m.name}": [] for m in scorers}
    out["fit_time"], out["n_test_queries"] = [], []
    fitted_models = []
    for number, (train, test) in enumerate(folds, start=1):
        train, test = np.asarray(train), np.asarray(test)
        if np.intersect1d(q[train], q[test]).size:
            raise ValueError(f"fold {number}: a query is in both the training and the test rows")
        train, test = _rows(q, train), _rows(q, test)
        start = time.perf_counter()
        fit_params: dict[str, Any] = {}
        if validation_fraction is not None:  # validation queries carved from the training part
            keep = carve_queries(q[train], validation_fraction, 0 if random_state is None else random_state)
            vali, train = train[~keep], train[keep]
            fit_params = {"eval_set": [(_safe_indexing(X_rows, vali), y_arr[vali], q[vali])], "eval_names": ["vali"]}
        if pos is not None:
            fit_params["position"] = pos[train]
        if weight is not None:
            if not weight[train].any():
                raise ValueError(f"fold {number}: every training row has weight 0")
            fit_params["sample_weight"] = weight[train]
        fitted = fit_with_progress(clone(model), f"fold {number}" if progress else None,
                                   _safe_indexing(X_rows, train), y_arr[train], qid=q[train], **fit_params)  # fmt: skip
        out["fit_time"].append(time.perf_counter() - start)
        scores = fitted.predict(_safe_indexing(X_rows, test), qid=q[test])
        ptr = group_ptr(q[test])
        for m in scorers:
            out[f"test_{m.name}"].append(m.mean(y_arr[test], scores, ptr, docids=None if ids is None else ids[test]))
        out["n_test_queries"].append(ptr.size - 1)
        fitted_models.append(fitted)
    result: dict[str, Any] = {key: np.asarray(values) for key, values in out.items()}
    if return_estimator:
        result["estimator"] = fitted_models
    return result
