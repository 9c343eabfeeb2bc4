"""Data frames as users hold them: the query column named, never a feature; categorical columns refused.

``fit(df, y, qid="qid")`` takes the query ids from the frame's column ``"qid"`` and trains on
the other columns (``group="qid"`` too: a column holds ids, not sizes; and an evaluation set
``(df_v, y_v, "qid")``). A frame that still holds a column named like a query id while the ids
come separately is a warning naming it: training on it is a leak of the query into the model.
Categorical and text columns have no numeric meaning the rankers could use: a ``ValueError``
names them and says what to do.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["QUERY_LIKE", "split_query_column"]

#: column names that are almost surely query ids, lowercased
QUERY_LIKE = frozenset({"qid", "query", "query_id", "queryid", "qid_", "group", "group_id", "search_id", "session_id"})


def split_query_column(X: Any, qid: Any, group: Any, what: str = "X") -> tuple[Any, Any, Any]:
    """``(X, qid, group)`` with a column named by ``qid=`` or ``group=`` taken out of the frame ``X``
    as the query ids (``group`` then None).

    Raises
    ------
    ValueError
        A name given with an ``X`` that is not a data frame, a name that is not one of its
        columns, or a categorical or text column (named, with what to do).
    """
    columns = getattr(X, "columns", None)
    for arg, value in (("qid", qid), ("group", group)):
        if not isinstance(value, str):
            continue
        if columns is None:
            raise ValueError(f"{arg}={value!r} names a column, but {what} is not a data frame: pass the query ids")
        if value not in columns:
            shown = ", ".join(map(repr, list(columns)[:8])) + (", ..." if len(columns) > 8 else "")
            raise ValueError(f"{arg}={value!r} is not a column of {what} (its columns: {shown})")
        ids = X[value].to_numpy()
        X = X.drop(columns=[value])
        _check_numeric(X, what)
        return X, ids, None  # a column holds a query id per row (group= sizes cannot be a column)
    if columns is not None:
        _check_numeric(X, what)
        like = [c for c in columns if isinstance(c, str) and c.strip().lower() in QUERY_LIKE]
        if like and (qid is not None or group is not None):
            warnings.warn(
                f"{what} has a column {like[0]!r}, named like a query id, and it is trained on as a feature; "
                f"if it is the query id, pass qid={like[0]!r} (the column is then not a feature)",
                UserWarning,
                stacklevel=4,
            )
    return X, qid, group


def _check_numeric(X: Any, what: str) -> None:
    """Refuse categorical, text and other non-numeric columns of a frame, by name."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):  # not a pandas frame: the array checks apply
        return
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    bad = [(c, str(t)) for c, t in dtypes.items() if not (is_numeric_dtype(t) or is_bool_dtype(t))]
    if bad:
        names = ", ".join(f"{c!r} ({t})" for c, t in bad[:5])
        raise ValueError(
            f"{what} has columns that are not numbers: {names}; the rankers take numeric features: encode them "
            "first (pd.get_dummies(X, columns=[...]) for one column per value, or X[col].cat.codes for the trees)"
        )
