"""Queries as groups: contiguous row blocks described by a boundary array ``ptr``.

Query ``q`` owns rows ``ptr[q]:ptr[q + 1]``, as in CSR matrices. Every model and
metric in ranklearn works on ``ptr``; per-row qids are only an input format.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ranklearn.exceptions import DataFormatError


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
    if q.ndim != 1:
        raise DataFormatError(f"qid must be one-dimensional, got shape {q.shape}")
    n = q.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    starts = np.flatnonzero(q[1:] != q[:-1]) + 1
    ptr = np.concatenate(([0], starts, [n])).astype(np.int64)
    heads = q[ptr[:-1]]
    if np.unique(heads).shape[0] != heads.shape[0]:
        _, first = np.unique(heads, return_index=True)
        dup_block = np.setdiff1d(np.arange(heads.shape[0]), first)[0]
        earlier = np.flatnonzero(heads[:dup_block] == heads[dup_block])[0]
        raise DataFormatError(
            f"qid {heads[dup_block]!r} reappears at row {ptr[dup_block]} after other queries "
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
