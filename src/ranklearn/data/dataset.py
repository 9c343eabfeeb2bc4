"""``RankingDataset``: features, labels and query boundaries kept together."""

from __future__ import annotations

import sys
from collections.abc import Hashable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ranklearn.data.groups import block_ptr, first_reappearance, group_ptr, regroup_order, take_queries
from ranklearn.data.positions import check_position
from ranklearn.exceptions import DataFormatError


def issparse(X: Any) -> bool:
    """Whether ``X`` is a SciPy sparse matrix or array, without importing SciPy (about 0.1 s of a
    short command): nothing is one unless ``scipy.sparse`` has been imported."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(X)


#: A dense ``X`` bigger than this (bytes) must hold at least 1 / DENSE_MAX_EMPTY_RATIO
#: stored values per cell; otherwise it is almost all zeros (a stray feature id such as
#: 1000000000:1) and building it silently could exhaust memory.
DENSE_MIN_CHECKED_BYTES = 256 * 2**20
DENSE_MAX_EMPTY_RATIO = 1000


def dense_size_problem(n_rows: int, n_cols: int, nnz: int, itemsize: int) -> str | None:
    """Why a dense (n_rows, n_cols) matrix with only ``nnz`` stored values should not be built.

    Returns None when it is fine: small (at most ``DENSE_MIN_CHECKED_BYTES``), or not mostly
    empty (at least one stored value per ``DENSE_MAX_EMPTY_RATIO`` cells). Real ranking
    features are far denser than that; a giant, almost empty matrix comes from a stray
    huge feature id.
    """
    cells = int(n_rows) * int(n_cols)
    size = cells * int(itemsize)
    if size <= DENSE_MIN_CHECKED_BYTES or cells <= DENSE_MAX_EMPTY_RATIO * max(int(nnz), int(n_rows), 1):
        return None
    return (
        f"a dense {n_rows:,} x {n_cols:,} matrix would take {size / 2**30:.1f} GiB for {nnz:,} stored "
        f"values (almost all zeros)"
    )


class Query(NamedTuple):
    """The rows of one query, as yielded by :meth:`RankingDataset.query` and iteration."""

    query_id: Any
    X: Any  # ndarray or CSR matrix (a view for dense X)
    y: np.ndarray
    comments: np.ndarray | None


class RankingDataset:
    """Learning-to-rank data: feature rows grouped into queries.

    Query ``q`` owns rows ``ptr[q]:ptr[q + 1]``. Arrays are stored as given when
    their dtype already fits (no copy), so treat a dataset as read-only.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix, shape (n_samples, n_features)
        Features. float32 and float64 are kept; other dtypes become float32.
        Sparse input becomes CSR in canonical form (sorted, unique column indices).
        NaN marks a missing value.
    y : array-like of shape (n_samples,)
        Relevance labels, any finite real values (stored as float64).
    ptr : array-like of int, shape (n_queries + 1,)
        Query boundaries: starts at 0, strictly increasing (no empty query), ends at
        ``n_samples``.
    query_ids : array-like of shape (n_queries,), optional
        The original id of each query (ints or strings), all distinct. Defaults to
        ``0 .. n_queries - 1``.
    comments : sequence of (str or None), shape (n_samples,), optional
        Per-row comment text (LETOR's ``docid = ...``); None when no row has one.
    feature_names : sequence of str, shape (n_features,), optional
    lines : array-like of int, shape (n_samples,), optional
        The 1-based line of each row in the file it was read from (:func:`load_svmlight`
        sets it), so that an error about a row can name its line; None for data made in memory.
    position : array-like of int, shape (n_samples,), optional
        The 1-based rank at which each row was shown in its logged result list (click data;
        see :mod:`ranklearn.data.positions`). Whole numbers >= 1; stored as int64.

    Raises
    ------
    DataFormatError
        On inconsistent shapes, bad boundaries, duplicate query ids or non-finite labels.
    """

    #: class defaults: a dataset pickled before rows knew their lines or positions has none
    lines: np.ndarray | None = None
    position: np.ndarray | None = None

    def __init__(
        self,
        X: Any,
        y: ArrayLike,
        ptr: ArrayLike,
        *,
        query_ids: ArrayLike | None = None,
        comments: Sequence[str | None] | None = None,
        feature_names: Sequence[str] | None = None,
        lines: ArrayLike | None = None,
        position: ArrayLike | None = None,
    ) -> None:
        if issparse(X):
            X = X.tocsr()
            if X.dtype not in (np.float32, np.float64):
                X = X.astype(np.float32)
            if not X.has_canonical_format:  # sorted, unique column indices; never edit the caller's matrix
                X = X.copy()
                X.sum_duplicates()
        else:
            X = np.asarray(X)
            if X.dtype not in (np.float32, np.float64):
                X = X.astype(np.float32)
        if X.ndim != 2:
            raise DataFormatError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
        n = X.shape[0]
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (n,):
            raise DataFormatError(f"y must have shape ({n},) to match X, got {y.shape}")
        if not np.isfinite(y).all():
            bad = int(np.flatnonzero(~np.isfinite(y))[0])
            raise DataFormatError(f"labels must be finite; row {bad} has {y[bad]}")
        ptr = np.asarray(ptr)
        if ptr.ndim != 1 or ptr.shape[0] < 1 or not np.issubdtype(ptr.dtype, np.integer):
            raise DataFormatError(f"ptr must be a 1-D integer array of n_queries + 1 boundaries, got {ptr!r}")
        ptr = ptr.astype(np.int64, copy=False)
        if ptr[0] != 0 or ptr[-1] != n:
            raise DataFormatError(f"ptr must start at 0 and end at n_samples={n}, got {ptr[0]} .. {ptr[-1]}")
        if (np.diff(ptr) <= 0).any():
            q = int(np.flatnonzero(np.diff(ptr) <= 0)[0])
            raise DataFormatError(f"ptr must be strictly increasing (no empty query); query {q} is empty or negative")
        n_queries = ptr.shape[0] - 1
        if query_ids is None:
            query_ids = np.arange(n_queries, dtype=np.int64)
        else:
            query_ids = _as_id_array(query_ids)
            if query_ids.shape != (n_queries,):
                raise DataFormatError(f"query_ids must have shape ({n_queries},) to match ptr, got {query_ids.shape}")
            uniq, counts = np.unique(query_ids, return_counts=True)
            if uniq.shape[0] != n_queries:
                raise DataFormatError(f"query ids must be distinct; {uniq[counts > 1][0]!r} is used more than once")
        if comments is not None:
            comments = np.asarray(comments, dtype=object)
            if comments.shape != (n,):
                raise DataFormatError(f"comments must have shape ({n},) to match X, got {comments.shape}")
        if feature_names is not None:
            feature_names = [str(f) for f in feature_names]
            if len(feature_names) != X.shape[1]:
                raise DataFormatError(
                    f"feature_names has {len(feature_names)} names for {X.shape[1]} features"
                )
        self.X = X
        self.y = y
        self.ptr = ptr
        self.query_ids = query_ids
        if lines is not None:
            lines = np.asarray(lines)
            if not np.issubdtype(lines.dtype, np.integer):
                raise DataFormatError(f"lines must be integers (1-based line numbers), got {lines.dtype}")
            lines = lines.astype(np.int64, copy=False)
            if lines.shape != (n,):
                raise DataFormatError(f"lines must have shape ({n},) to match X, got {lines.shape}")
        try:
            position = check_position(position, n)
        except ValueError as exc:
            raise DataFormatError(str(exc)) from None
        self.comments = comments
        self.feature_names = feature_names
        self.lines = lines
        self.position = position

    # ----------------------------------------------------------------- sizes
    @property
    def n_samples(self) -> int:
        """Number of rows (documents)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.X.shape[1])

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return int(self.ptr.shape[0] - 1)

    @property
    def query_sizes(self) -> np.ndarray:
        """Number of rows of each query (int64, LightGBM's ``group``)."""
        return np.diff(self.ptr)

    @property
    def qid(self) -> np.ndarray:
        """Query id of each row, derived from ``query_ids`` and ``ptr``."""
        return np.repeat(self.query_ids, self.query_sizes)

    @property
    def is_sparse(self) -> bool:
        """Whether ``X`` is a scipy CSR matrix."""
        return issparse(self.X)

    # --------------------------------------------------------------- queries
    def query(self, i: int) -> Query:
        """Rows of query ``i`` (negative counts from the end)."""
        if not -self.n_queries <= i < self.n_queries:
            raise IndexError(f"query index {i} out of range for {self.n_queries} queries")
        i %= self.n_queries
        lo, hi = int(self.ptr[i]), int(self.ptr[i + 1])
        comments = None if self.comments is None else self.comments[lo:hi]
        return Query(self.query_ids[i], self.X[lo:hi], self.y[lo:hi], comments)

    def __iter__(self) -> Iterator[Query]:
        """Iterate over queries in order."""
        for i in range(self.n_queries):
            yield self.query(i)

    def subset(self, query_indices: ArrayLike) -> RankingDataset:
        """A dataset of the given queries, in the given order.

        Parameters
        ----------
        query_indices : array-like of int, or boolean mask of shape (n_queries,)
        """
        idx = np.asarray(query_indices)
        if idx.dtype == bool:
            if idx.shape != (self.n_queries,):
                raise IndexError(f"boolean mask must have shape ({self.n_queries},), got {idx.shape}")
            idx = np.flatnonzero(idx)
        rows, ptr = take_queries(self.ptr, idx)
        return RankingDataset(
            self.X[rows],
            self.y[rows],
            ptr,
            query_ids=self.query_ids[idx],
            comments=None if self.comments is None else self.comments[rows],
            feature_names=self.feature_names,
            lines=None if self.lines is None else self.lines[rows],
            position=None if self.position is None else self.position[rows],
        )

    @classmethod
    def concatenate(cls, datasets: Sequence[RankingDataset]) -> RankingDataset:
        """Stack datasets query-wise (queries keep their ids, which must stay distinct).

        The result is sparse if any input is; its dtype is the widest of the inputs. When some
        inputs have integer query ids and others text ones (a file with ``qid:007`` keeps its
        ids as text), the integers become their text: ids of one kind compare and sort. The
        result has no ``lines`` (its rows come from several files). Positions are kept when
        every input has them (a mix is a ``DataFormatError``: rows without a position cannot
        be given one).
        """
        datasets = list(datasets)
        if not datasets:
            raise ValueError("concatenate needs at least one dataset")
        n_features = {d.n_features for d in datasets}
        if len(n_features) != 1:
            raise DataFormatError(f"cannot concatenate datasets with different n_features {sorted(n_features)}")
        names = {tuple(d.feature_names) for d in datasets if d.feature_names is not None}
        if len(names) > 1:
            raise DataFormatError("cannot concatenate datasets with different feature_names")
        dtype = np.result_type(*[d.X.dtype for d in datasets])
        if any(d.is_sparse for d in datasets):
            import scipy.sparse as sp

            X = sp.vstack([sp.csr_matrix(d.X) for d in datasets], format="csr", dtype=dtype)
        else:
            X = np.concatenate([d.X for d in datasets]).astype(dtype, copy=False)
        offsets = np.cumsum([0] + [d.n_samples for d in datasets])
        ptr = np.concatenate([d.ptr[:-1] + off for d, off in zip(datasets, offsets)] + [offsets[-1:]])
        if all(d.comments is None for d in datasets):
            comments = None
        else:
            comments = np.concatenate(
                [np.full(d.n_samples, None, dtype=object) if d.comments is None else d.comments for d in datasets]
            )
        with_position = [d.position is not None for d in datasets]
        if any(with_position) and not all(with_position):
            raise DataFormatError(
                f"cannot concatenate datasets with and without positions ({with_position.count(False)} of "
                f"{len(datasets)} have none)"
            )
        ids = [_as_id_array(d.query_ids) for d in datasets]
        if {a.dtype.kind for a in ids} == {"i", "O"}:
            ids = [a if a.dtype == object else np.array([str(v) for v in a.tolist()], dtype=object) for a in ids]
        return cls(
            X,
            np.concatenate([d.y for d in datasets]),
            ptr,
            query_ids=np.concatenate(ids),
            comments=comments,
            feature_names=next(iter(names), None),
            position=np.concatenate([d.position for d in datasets]) if all(with_position) else None,
        )

    def to_dense(self) -> RankingDataset:
        """The same data with ``X`` as a dense ndarray (``self`` when already dense)."""
        if not self.is_sparse:
            return self
        return RankingDataset(
            self.X.toarray(),
            self.y,
            self.ptr,
            query_ids=self.query_ids,
            comments=self.comments,
            feature_names=self.feature_names,
            lines=self.lines,
            position=self.position,
        )

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        return (
            f"RankingDataset(n_samples={self.n_samples}, n_features={self.n_features}, "
            f"n_queries={self.n_queries}, X={kind} {self.X.dtype}"
            + (", with positions)" if self.position is not None else ")")
        )


def _as_id_array(ids: ArrayLike) -> np.ndarray:
    """Query ids as int64 when all are integers, else as an object array (strings kept, as the
    loader keeps ``qid:007``)."""
    arr = np.asarray(ids)
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind in "US":
        return arr.astype(object)
    return arr


def from_arrays(
    X: Any,
    y: ArrayLike,
    qid: ArrayLike,
    *,
    comments: Sequence[str | None] | None = None,
    feature_names: Sequence[str] | None = None,
    regroup: bool = False,
    dtype: type = np.float32,
    position: ArrayLike | None = None,
) -> RankingDataset:
    """Build a dataset from per-row arrays.

    Parameters
    ----------
    X : array-like or scipy sparse matrix, shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    qid : array-like of shape (n_samples,)
        Query id of each row. Rows of a query must be contiguous unless ``regroup``.
    comments, feature_names : optional
        See :class:`RankingDataset`.
    regroup : bool, default False
        Stably reorder rows so that every query is contiguous (queries in order of
        first appearance).
    dtype : numpy float type, default float32
        dtype of ``X``.
    position : array-like of int, shape (n_samples,), optional
        The 1-based display rank of each row (see :class:`RankingDataset`); reordered with the
        rows by ``regroup``.

    Raises
    ------
    DataFormatError
        If lengths differ, a position is not a whole number >= 1, or a qid reappears after
        another one and ``regroup`` is False.
    """
    X = X.astype(dtype) if issparse(X) else np.asarray(X, dtype=dtype)
    q = np.asarray(qid)
    if q.ndim != 1 or q.shape[0] != X.shape[0]:
        raise DataFormatError(f"qid must have shape ({X.shape[0]},) to match X, got {q.shape}")
    y = np.asarray(y)
    try:
        position = check_position(position, X.shape[0])
    except ValueError as exc:
        raise DataFormatError(str(exc)) from None
    if regroup:
        ptr = block_ptr(q)
        if first_reappearance(q, ptr) is not None:
            order = regroup_order(q)
            X, y, q = X[order], y[order], q[order]
            if comments is not None:
                comments = np.asarray(comments, dtype=object)[order]
            if position is not None:
                position = position[order]
    ptr = group_ptr(q)
    return RankingDataset(
        X, y, ptr, query_ids=q[ptr[:-1]], comments=comments, feature_names=feature_names, position=position
    )


def from_frame(
    df: Any,
    *,
    query_col: Hashable = "qid",
    label_col: Hashable = "label",
    feature_cols: Sequence[Hashable] | None = None,
    comment_col: Hashable | None = None,
    position_col: Hashable | None = None,
    regroup: bool = False,
    dtype: type = np.float32,
) -> RankingDataset:
    """Build a dataset from a data frame (pandas, or anything with ``columns`` and ``to_numpy``).

    Parameters
    ----------
    df : DataFrame
    query_col, label_col : column label
        Columns holding the query id and the label (any label the frame uses: ``"qid"``, ``0``).
    feature_cols : sequence of column labels, optional
        Feature columns, in order. Default: every other column (except ``comment_col``).
    comment_col : column label, optional
        Column of per-row comments.
    position_col : column label, optional
        Column of per-row display positions (1-based ranks in the logged list; never a feature).
    regroup, dtype
        As in :func:`from_arrays`.

    Returns
    -------
    RankingDataset
        With ``feature_names`` set to the feature column labels, as text.
    """
    columns = list(df.columns)  # labels as the frame has them: pd.DataFrame(array) names its columns 0, 1, ...
    named = (("query_col", query_col), ("label_col", label_col), ("comment_col", comment_col), ("position_col", position_col))
    for name, col in named:
        if col is not None and col not in columns:
            raise KeyError(f"{name}={col!r} is not a column of the frame (columns: {columns})")
    if feature_cols is None:
        reserved = {query_col, label_col, comment_col, position_col}
        feature_cols = [c for c in columns if c not in reserved]
    else:
        feature_cols = list(feature_cols)
        missing = [c for c in feature_cols if c not in columns]
        if missing:
            raise KeyError(f"feature columns not in the frame: {missing}")
    comments = None if comment_col is None else df[comment_col].to_numpy().astype(object)
    return from_arrays(
        df[feature_cols].to_numpy(dtype=dtype),
        df[label_col].to_numpy(),
        df[query_col].to_numpy(),
        comments=comments,
        feature_names=[str(c) for c in feature_cols],
        regroup=regroup,
        dtype=dtype,
        position=None if position_col is None else df[position_col].to_numpy(),
    )
