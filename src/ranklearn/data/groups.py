"""Queries as groups: contiguous row blocks described by a boundary array ``ptr``.

Query ``q`` owns rows ``ptr[q]:ptr[q + 1]``, as in CSR matrices. Every model and
metric in ranklearn works on ``ptr``; per-row qids are only an input format.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ranklearn.exceptions import DataFormatError


def check_qid(qid: ArrayLike) -> np.ndarray:
    """Per-row query ids as a 1-D array whose values can be compared and sorted.

    Raises
    ------
    DataFormatError
        If a qid is NaN or None, or ids of incomparable types are mixed (e.g. None and 1).
    """
    q = np.asarray(qid)
    if q.ndim != 1:
        raise DataFormatError(f"qid must be one-dimensional, got shape {q.shape}")
    if q.dtype.kind in "fc":
        missing = np.isnan(q)
    elif q.dtype.kind == "O":
        missing = np.fromiter((v is None or (isinstance(v, float) and v != v) for v in q.tolist()), bool, q.shape[0])
    else:
        return q
    if missing.any():
        bad = int(np.flatnonzero(missing)[0])
        raise DataFormatError(f"qid must not be missing; row {bad} has {q[bad : bad + 1].tolist()[0]}")
    if q.dtype.kind == "O":
        try:
            np.unique(q)
        except TypeError:
            kinds = sorted({type(v).__name__ for v in q.tolist()})
            raise DataFormatError(
                f"qid values must be mutually comparable (all numbers or all strings), got {', '.join(kinds)}"
            ) from None
    return q


def block_ptr(qid: ArrayLike) -> np.ndarray:
    """Boundaries of the runs of equal consecutive qids, without checking that runs are unique.

    Parameters
    ----------
    qid : array-like of shape (n_samples,)

    Returns
    -------
    ptr : ndarray of int64, shape (n_runs + 1,)
    """
    q = np.asarray(qid)
    if q.ndim != 1:
        raise DataFormatError(f"qid must be one-dimensional, got shape {q.shape}")
    n = q.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    starts = np.flatnonzero(q[1:] != q[:-1]) + 1
    return np.concatenate(([0], starts, [n])).astype(np.int64)


def first_reappearance(qid: ArrayLike, ptr: np.ndarray) -> tuple[int, int] | None:
    """Find the first query whose rows are split into two blocks.

    Parameters
    ----------
    qid : array-like of shape (n_samples,)
    ptr : ndarray of int64
        Runs of equal qids, from :func:`block_ptr`.

    Returns
    -------
    (earlier, later) : tuple of int, or None
        Block indices: block ``later`` repeats the qid of block ``earlier``; ``later`` is
        the smallest such block. None when every qid forms a single block.
    """
    heads = np.asarray(qid)[ptr[:-1]]
    _, first = np.unique(heads, return_index=True)
    if first.shape[0] == heads.shape[0]:
        return None
    later = int(np.setdiff1d(np.arange(heads.shape[0]), first)[0])
    earlier = int(np.flatnonzero(heads[:later] == heads[later])[0])
    return earlier, later


def group_ptr(qid: ArrayLike) -> np.ndarray:
    """Boundaries of the contiguous query blocks of a per-row qid array.

    Parameters
    ----------
    qid : array-like of shape (n_samples,)
        Query id of each row. Rows of one query must be contiguous.

    Returns
    -------
    ptr : ndarray of int64, shape (n_queries + 1,)

    Raises
    ------
    DataFormatError
        If a qid reappears after another one (use :func:`regroup_order` first).
    """
    q = np.asarray(qid)
    ptr = block_ptr(q)
    dup = first_reappearance(q, ptr)
    if dup is not None:
        earlier, later = dup
        raise DataFormatError(
            f"qid {q[ptr[later] : ptr[later] + 1].tolist()[0]!r} reappears at row {ptr[later]} after other queries "
            f"(its first block starts at row {ptr[earlier]}); rows of a query must be contiguous, "
            "or regroup them (stable) first"
        )
    return ptr


def regroup_order(qid: ArrayLike) -> np.ndarray:
    """Stable row permutation that makes every query contiguous.

    Queries keep the order of their first appearance and rows keep their order
    within a query.
    """
    q = np.asarray(qid)
    _, first, inverse = np.unique(q, return_index=True, return_inverse=True)
    rank_of_query = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    return np.argsort(rank_of_query[inverse.ravel()], kind="stable")


def sizes_to_ptr(sizes: ArrayLike) -> np.ndarray:
    """Boundaries from group sizes (LightGBM's ``.query`` layout)."""
    s = np.asarray(sizes, dtype=np.int64)
    if s.ndim != 1 or (s.size and s.min() <= 0):
        raise DataFormatError("group sizes must be a 1-D array of positive integers")
    return np.concatenate(([0], np.cumsum(s))).astype(np.int64)


def take_queries(ptr: np.ndarray, query_indices: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Rows and boundaries of a selection of queries, in the order given.

    Parameters
    ----------
    ptr : ndarray of int64, shape (n_queries + 1,)
    query_indices : array-like of int
        Queries to take (negative indices count from the end).

    Returns
    -------
    rows : ndarray of int64
        Row indices of the selected queries, query after query.
    new_ptr : ndarray of int64, shape (len(query_indices) + 1,)
        Boundaries of the selected queries within ``rows``.
    """
    n_queries = ptr.shape[0] - 1
    idx = np.asarray(query_indices, dtype=np.int64).ravel()
    if idx.size and (idx.min() < -n_queries or idx.max() >= n_queries):
        raise IndexError(f"query index out of range for {n_queries} queries")
    idx = np.where(idx < 0, idx + n_queries, idx)
    starts = ptr[idx]
    sizes = ptr[idx + 1] - starts
    new_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    # Row r of the selection belongs to selected query j: original row = starts[j] + (r - new_ptr[j]).
    rows = np.arange(new_ptr[-1], dtype=np.int64) + np.repeat(starts - new_ptr[:-1], sizes)
    return rows, new_ptr


#: the values of every ranker's ``lambda_normalization`` (docs/DESIGN.md, "Vocabulary")
LAMBDA_NORMALIZATIONS = ("lightgbm", "docs", "pairs", "none")
#: the per-query normalizations that are row weights (``lambda_normalization``; "lightgbm" is
#: computed from the lambdas themselves, each iteration)
QUERY_NORMALIZATIONS = ("docs", "pairs")


def pairs_per_query(y: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Number of document pairs with different labels, per query (int64): (n^2 - sum of the
    squared label counts) / 2."""
    sizes = np.diff(ptr)
    query = np.repeat(np.arange(sizes.shape[0]), sizes)
    groups, counts = np.unique(np.column_stack([query, np.asarray(y, dtype=np.float64)]), axis=0, return_counts=True)
    same = np.bincount(groups[:, 0].astype(np.int64), weights=counts.astype(np.float64) ** 2, minlength=sizes.shape[0])
    return (sizes**2 - same.astype(np.int64)) // 2


def query_normalization_weights(y: np.ndarray, ptr: np.ndarray, normalization: str) -> np.ndarray:
    """Per-row weights of a ``lambda_normalization`` that divides each query's lambdas (and
    hessians) by its documents (``"docs"``) or by its pairs with different labels (``"pairs"``:
    every query counts the same); a query without any counts 1.

    Raises
    ------
    ValueError
        For another normalization.
    """
    if normalization not in QUERY_NORMALIZATIONS:
        raise ValueError(f"a query normalization is one of {QUERY_NORMALIZATIONS}, got {normalization!r}")
    sizes = np.diff(ptr)
    count = sizes if normalization == "docs" else pairs_per_query(y, ptr)
    return np.repeat(1.0 / np.maximum(count, 1), sizes)
