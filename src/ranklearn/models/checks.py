"""Input checking shared by every ranker and engine (local, Dask, Spark): features as float32, feature values,
labels, sample weights, queries made contiguous."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ranklearn.data.groups import check_qid, group_ptr, regroup_order
from ranklearn.exceptions import FeatureValueError


def as_dense_features(X: ArrayLike) -> np.ndarray:
    """``X`` as a 2-D float32 ndarray; a sparse matrix is densified unless that would be absurd.

    float32, as XGBoost holds features: 24 bits of mantissa, so a feature with a large offset
    (a Unix timestamp: steps of 128 s) loses resolution; subtract the offset first.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, holds complex numbers or a finite value beyond float32's range
        (about 3.4e38, named by row and feature), or is a sparse matrix whose dense form would
        be giant and almost all zeros (see :func:`ranklearn.data.dataset.dense_size_problem`).
    TypeError
        If ``X`` holds objects that are not numbers.
    """
    from ranklearn.data.dataset import dense_size_problem, issparse

    if issparse(X):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
        problem = dense_size_problem(X.shape[0], X.shape[1], X.nnz, 4)
        if problem is not None:
            raise ValueError(
                f"X is sparse with {X.shape[1]:,} columns and the models need dense features: {problem}; "
                "drop the empty columns first"
            )
        X = X.toarray()
    if np.iscomplexobj(X) or (isinstance(X, np.ndarray) and X.dtype == object and any(isinstance(v, complex) for v in X.flat)):
        raise ValueError("Complex data not supported: X holds complex numbers; features must be real")
    try:
        if getattr(X, "ndim", None) == 2 and any(hasattr(dt, "na_value") for dt in getattr(X, "dtypes", ())):
            # pandas' nullable dtypes (Float64, Int64) mark a missing value pd.NA, which numpy
            # cannot cast: it becomes NaN, the missing value every model here knows
            X = X.to_numpy(dtype=np.float64, na_value=np.nan)
        with np.errstate(over="raise"):  # a finite value would become inf: say so, not "X contains inf"
            X = np.asarray(X, dtype=np.float32)
    except FloatingPointError:
        raise _beyond_float32(X) from None
    except TypeError as exc:
        raise TypeError(f"X must hold numbers: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"X must hold numbers: {exc}") from None
    if X.ndim != 2:
        raise ValueError(
            f"X must be 2-D (n_samples, n_features), got shape {X.shape}; Reshape your data, e.g. "
            "X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single row"
        )
    return X


def _beyond_float32(X: ArrayLike) -> ValueError:
    """The error for a finite value of ``X`` too large for float32, naming the first one."""
    with np.errstate(over="ignore"):  # a long double beyond float64 too: inf here, named below as "a value"
        wide = np.asarray(X, dtype=np.float64)
    limit = float(np.finfo(np.float32).max)
    cell = None
    if wide.ndim == 2:  # (None for a long double beyond float64's range: inf here too)
        cell = _first_cell(wide, lambda block: np.isfinite(block) & (np.abs(block) > limit))
    what = "a value" if cell is None else (
        f"{wide[cell]:g} at row {cell[0]} (from 0), feature {cell[1] + 1} (from 1, as in SVMlight files)"
    )  # fmt: skip
    return ValueError(
        f"X holds {what}, beyond float32's range (±{limit:.3g}): the models hold features as float32; "
        "rescale that feature"
    )


def _first_cell(X: np.ndarray, test) -> tuple[int, int] | None:
    """(row, column) of the first cell where ``test`` (np.isinf, np.isnan) holds, or None.

    Scans blocks of rows, so the boolean temporary stays small (about 8 MB) instead of
    one byte per cell of X (93 MiB for 720,000 x 136).
    """
    step = max(1, (1 << 23) // max(1, X.shape[1]))
    for start in range(0, X.shape[0], step):
        hit = test(X[start : start + step])
        if hit.any():
            row, col = np.argwhere(hit)[0]
            return start + int(row), int(col)
    return None


def in_context(exc: ValueError, where: str) -> ValueError:
    """``exc`` saying where it happened (an evaluation set, a partition): a FeatureValueError
    keeps its row, feature and kind, any other error becomes a ValueError."""
    if isinstance(exc, FeatureValueError):
        return FeatureValueError(f"{where}: {exc}", exc.row, exc.feature, exc.kind)
    return ValueError(f"{where}: {exc}")


def check_feature_values(X: np.ndarray, *, allow_nan: bool) -> None:
    """Refuse inf anywhere, and NaN unless the model learns where missing values go.

    Raises
    ------
    FeatureValueError
        Naming the row and feature of the first bad value (a ``ValueError``; the command line
        names the file's line from its ``row``).
    """
    bad = _first_cell(X, np.isinf)
    if bad is not None:
        raise FeatureValueError(
            f"X contains inf at row {bad[0]} (from 0), feature {bad[1] + 1} (from 1, as in SVMlight files)", *bad, "inf"
        )
    bad = None if allow_nan else _first_cell(X, np.isnan)
    if bad is not None:
        raise FeatureValueError(
            f"X contains NaN at row {bad[0]} (from 0), feature {bad[1] + 1} (from 1, as in SVMlight files); "
            "this model does not accept missing values (impute them, or use LambdaMART, which learns where NaN goes)",
            *bad,
            "NaN",
        )


def check_ranking_data(
    X: ArrayLike, y: ArrayLike, qid: ArrayLike, *, allow_nan: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Validate training data and make queries contiguous.

    Returns
    -------
    X : ndarray of float32, (n_samples, n_features)
    y : ndarray of float64
    ptr : ndarray of int64, query boundaries
    order : ndarray or None
        Row permutation applied to make queries contiguous (None when none was needed);
        apply it to per-row arrays such as sample weights.
    """
    X = as_dense_features(X)
    try:
        y = np.asarray(y, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y must hold numeric relevance labels: {exc}") from None
    q = check_qid(np.asarray(qid).ravel())
    n = X.shape[0]
    if n == 0:
        raise ValueError("X is empty: need at least one query with documents")
    if X.shape[1] == 0:
        raise ValueError(f"X has no features: 0 feature(s) (shape=({n}, 0)) while a minimum of 1 is required.")
    if y.shape[0] != n or q.shape[0] != n:
        raise ValueError(
            f"X, y and qid lengths differ: X has {n} rows, y has {y.shape[0]}, qid has {q.shape[0]}"
        )
    if not np.all(np.isfinite(y)):
        bad = int(np.flatnonzero(~np.isfinite(y))[0])
        raise ValueError(f"y must be finite; row {bad} has label {y[bad]}")
    check_feature_values(X, allow_nan=allow_nan)
    order = None
    starts = np.flatnonzero(q[1:] != q[:-1]) + 1
    heads = q[np.concatenate(([0], starts))]
    if np.unique(heads).shape[0] != heads.shape[0]:
        order = regroup_order(q)
        X, y, q = X[order], y[order], q[order]
    return X, y, group_ptr(q), order


def check_weight(sample_weight: ArrayLike | None, n: int, order: np.ndarray | None) -> np.ndarray | None:
    """``sample_weight`` as float64 in the rows' ``order`` (None stays None).

    Raises
    ------
    ValueError
        On a length other than ``n`` or a negative or non-finite weight.
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64).ravel()
    if w.shape[0] != n:
        raise ValueError(f"sample_weight has {w.shape[0]} values for {n} rows")
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise ValueError("sample_weight must be finite and non-negative")
    return w if order is None else w[order]
