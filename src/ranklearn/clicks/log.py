"""Click logs: one row per impression (a document shown at a rank in a session of a query).

File layouts
------------
TSV (any other suffix than ``.parquet``/``.pq``): a header line, then one impression per
line, tab-separated integers::

    query	session	document	position	clicked
    3	0	5	1	1
    3	0	2	2	0

``query`` is the query id of the dataset the documents come from, ``document`` the row's index
within its query in that dataset (0-based, in the file's row order), ``position`` the 1-based
rank at which it was shown, ``clicked`` 0 or 1. An optional sixth column ``swap`` records a swap
intervention (Joachims et al. 2017): the rank whose document traded places with rank 1's in
that session (1: a control session of the experiment, 0: no intervention). An optional seventh
column ``pivot`` (after ``swap``) generalizes it to RandPair (Wang et al. 2018): the rank whose
document traded places with the ``swap`` rank's (``swap == pivot``: a control session); without
it the pivot is rank 1.

Parquet (``.parquet``, ``.pq``; needs pyarrow): the same columns, integer typed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ranklearn._files import write_output
from ranklearn.clicks import _tsv_kernel as K
from ranklearn.exceptions import DataFormatError

if TYPE_CHECKING:
    from ranklearn.clicks.aggregate import ClickCounts, ClickTrainingSet
    from ranklearn.data import RankingDataset

#: The header of the TSV layout (the optional ``swap`` and ``pivot`` columns follow them).
COLUMNS = ("query", "session", "document", "position", "clicked")
SWAP = "swap"
PIVOT = "pivot"
PARQUET_SUFFIXES = (".parquet", ".pq")


class _Bad(ValueError):
    """A bad impression: ``row`` (0-based) and what is wrong with it."""

    def __init__(self, row: int, message: str) -> None:
        self.row = row
        self.message = message
        super().__init__(f"row {row}: {message}")


def _integers(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as int64, refusing NaN and non-integral numbers (as ``_Bad`` at the first such row)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        return arr.astype(np.int64, copy=False)
    try:
        as_float = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers, got dtype {arr.dtype}") from None
    nan = np.isnan(as_float)
    bad = nan | ~np.isfinite(as_float) | (as_float != np.round(as_float))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        what = "NaN" if nan[row] else f"{as_float[row]:g}, not an integer"
        raise _Bad(row, f"{name} is {what}")
    return as_float.astype(np.int64)


def _first_repeat(key_a: np.ndarray, key_b: np.ndarray) -> int | None:
    """The smallest row index that repeats an earlier row's ``(key_a, key_b)``, else None."""
    order = np.lexsort((np.arange(len(key_a)), key_b, key_a))
    a, b = key_a[order], key_b[order]
    same = (a[1:] == a[:-1]) & (b[1:] == b[:-1])
    return int(order[1:][same].min()) if same.any() else None


def _check(query, session, document, position, click, swap, pivot) -> None:
    """Raise ``_Bad`` for the first (smallest) row that breaks a rule."""
    found: list[tuple[int, str]] = []

    def first(mask: np.ndarray, message) -> None:
        if mask.any():
            row = int(np.flatnonzero(mask)[0])
            found.append((row, message(row)))

    first(position < 1, lambda r: f"position must be at least 1 (1 = top), got {position[r]}")
    first(document < 0, lambda r: f"document must be a row index within its query (0 or more), got {document[r]}")
    first((click != 0) & (click != 1), lambda r: f"clicked must be 0 or 1, got {click[r]}")
    if swap is not None:
        first(swap < 0, lambda r: f"swap must be a rank (or 0: no intervention), got {swap[r]}")
    if pivot is not None:
        first(pivot < 1, lambda r: f"pivot must be a rank (at least 1), got {pivot[r]}")
    repeat = _first_repeat(session, position)
    if repeat is not None:
        found.append((repeat, f"session {session[repeat]} shows position {position[repeat]} twice"))
    # a session is one query's result list: the same session under another query is an error
    order = np.lexsort((np.arange(len(session)), session))
    s, q = session[order], query[order]
    other = (s[1:] == s[:-1]) & (q[1:] != q[:-1])
    if other.any():
        row = int(order[1:][other].min())
        found.append((row, f"session {session[row]} belongs to query {query[row]} and to another query"))
    if found:
        row, message = min(found, key=lambda f: f[0])
        raise _Bad(row, message)


@dataclass(frozen=True, eq=False)
class ClickLog:
    """Impressions of a click log: per row a query, session, document, position and click.

    Build it with :meth:`from_arrays` or :meth:`read` (both check every row); treat it as
    read-only. ``swap`` is None for a log without swap interventions, ``pivot`` None for swaps
    with rank 1 (Joachims et al.'s; RandPair's pivot otherwise).

    Attributes
    ----------
    query, session : ndarray of int64
    document : ndarray of int64
        The document's row index within its query in the source dataset.
    position : ndarray of int64
        1-based rank at which the document was shown.
    click : ndarray of int8
        1 if the document was clicked.
    swap : ndarray of int64 or None
        Per impression, the rank swapped with the pivot in its session (the pivot itself:
        control, 0: none).
    pivot : ndarray of int64 or None
        Per impression, the rank whose document traded places with the ``swap`` rank's (RandPair,
        Wang et al. 2018); None: rank 1 (the swap interventions of Joachims et al. 2017).
    """

    query: np.ndarray
    session: np.ndarray
    document: np.ndarray
    position: np.ndarray
    click: np.ndarray
    swap: np.ndarray | None = None
    pivot: np.ndarray | None = None

    @classmethod
    def from_arrays(
        cls,
        *,
        query: ArrayLike,
        session: ArrayLike,
        document: ArrayLike,
        position: ArrayLike,
        click: ArrayLike,
        swap: ArrayLike | None = None,
        pivot: ArrayLike | None = None,
    ) -> ClickLog:
        """Build a log from per-impression arrays of one length.

        Raises
        ------
        ValueError
            Naming the first bad row (0-based): a position below 1, a negative document, a
            NaN or a non-integer, a click other than 0/1, a swap below 0 or a pivot below 1,
            a session whose positions repeat or that spans two queries; arrays of different
            lengths, or a pivot without swap.
        """
        try:
            return cls._checked(query, session, document, position, click, swap, pivot)
        except _Bad as exc:
            raise ValueError(f"click log row {exc.row}: {exc.message}") from None

    @classmethod
    def _checked(cls, query, session, document, position, click, swap, pivot=None) -> ClickLog:
        given = {"query": query, "session": session, "document": document, "position": position, "click": click}
        if swap is not None:
            given["swap"] = swap
        if pivot is not None:
            if swap is None:
                raise ValueError("a pivot column needs a swap column (the rank swapped with the pivot)")
            given["pivot"] = pivot
        arrays = {name: _integers(values, name) for name, values in given.items()}
        lengths = {name: len(a) for name, a in arrays.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"click log arrays differ in length: {lengths}")
        _check(*(arrays.get(n) for n in ("query", "session", "document", "position", "click", "swap", "pivot")))
        return cls(
            arrays["query"],
            arrays["session"],
            arrays["document"],
            arrays["position"],
            arrays["click"].astype(np.int8),
            arrays.get("swap"),
            arrays.get("pivot"),
        )

    def __len__(self) -> int:
        return len(self.query)

    @property
    def n_sessions(self) -> int:
        """Number of distinct sessions."""
        return len(np.unique(self.session))

    # ------------------------------------------------------------------ files

    @classmethod
    def read(cls, path: str | PathLike[str]) -> ClickLog:
        """Read a log in the TSV layout, or Parquet for a ``.parquet``/``.pq`` path (module docstring).

        Raises
        ------
        DataFormatError
            Naming the file and line (TSV) or row (Parquet): a bad header, a line with another
            number of fields, a field that is not an integer, or any rule of :meth:`from_arrays`.
        ImportError
            For Parquet without pyarrow.
        """
        name = os.fspath(path)
        if name.lower().endswith(PARQUET_SUFFIXES):
            return cls._read_parquet(name)
        with open(name, "rb") as fh:
            raw = fh.read()
        newline = raw.find(b"\n")
        header_bytes = raw if newline < 0 else raw[:newline]
        header = header_bytes.decode("utf-8", errors="backslashreplace").strip("\r\ufeff").split("\t")
        if tuple(header) not in (COLUMNS, (*COLUMNS, SWAP), (*COLUMNS, SWAP, PIVOT)):
            raise DataFormatError(
                f"expected the header {' <tab> '.join(COLUMNS)} (optionally then <tab> {SWAP}, "
                f"then <tab> {PIVOT})",
                path=name, line=1, token=header_bytes.decode("utf-8", errors="backslashreplace"),
            )  # fmt: skip
        n_cols = len(header)
        buf = np.frombuffer(raw, dtype=np.uint8)
        start = len(raw) if newline < 0 else newline + 1
        values, n_rows, error, line, s, e = K.parse_int_tsv(buf, start, n_cols, 2)
        if error:
            token = raw[s:e].decode("utf-8", errors="backslashreplace")
            message = {
                K.E_TOKEN: "NaN is not an integer" if token.strip().lower() == "nan" else "expected an integer",
                K.E_RANGE: "integer out of range",
                K.E_COLUMNS: f"expected {n_cols} tab-separated fields as in the header",
            }[error]
            raise DataFormatError(message, path=name, line=line, token=token)
        values = values[:n_rows]
        lines = _data_lines(buf, start, n_rows)
        try:
            return cls._checked(*(values[:, c] for c in range(n_cols)), *([None] * (7 - n_cols)))
        except _Bad as exc:
            raise DataFormatError(exc.message, path=name, line=int(lines[exc.row])) from None

    @classmethod
    def _read_parquet(cls, name: str) -> ClickLog:
        _, pq = _parquet()
        table = pq.read_table(name)
        missing = [c for c in COLUMNS if c not in table.column_names]
        if missing:
            raise DataFormatError(f"missing columns {missing} (needs {', '.join(COLUMNS)}, optionally {SWAP} "
                                  f"and {PIVOT})", path=name)  # fmt: skip
        if PIVOT in table.column_names and SWAP not in table.column_names:
            raise DataFormatError(f"a {PIVOT} column needs a {SWAP} column (the rank swapped with the pivot)", path=name)
        columns = [table.column(c).to_numpy(zero_copy_only=False) for c in COLUMNS]
        swap, pivot = (table.column(c).to_numpy(zero_copy_only=False) if c in table.column_names else None
                       for c in (SWAP, PIVOT))  # fmt: skip
        try:
            return cls._checked(*columns, swap, pivot)
        except _Bad as exc:
            raise DataFormatError(f"row {exc.row}: {exc.message}", path=name) from None

    def write(self, path: str | PathLike[str]) -> None:
        """Write the log in the TSV layout, or Parquet for a ``.parquet``/``.pq`` path (safely:
        :mod:`ranklearn._files`; ``-`` is standard output for TSV)."""
        name = os.fspath(path)
        arrays = dict(zip(COLUMNS, (self.query, self.session, self.document, self.position, self.click)))
        for column, values in ((SWAP, self.swap), (PIVOT, self.pivot)):
            if values is not None:
                arrays[column] = values
        names = list(arrays)
        if name.lower().endswith(PARQUET_SUFFIXES):
            pa, pq = _parquet()
            sink = pa.BufferOutputStream()
            pq.write_table(pa.table(arrays), sink)
            write_output(name, sink.getvalue().to_pybytes())
            return
        body = K.format_int_tsv(np.stack([np.asarray(a, dtype=np.int64) for a in arrays.values()]))
        write_output(name, "\t".join(names).encode() + b"\n" + body.tobytes())

    # ------------------------------------------------------------------ aggregation

    def aggregate(self) -> ClickCounts:
        """Clicks and impressions per query, document and position (see :class:`ClickCounts`)."""
        from ranklearn.clicks.aggregate import ClickCounts

        return ClickCounts.from_log(self)

    def training_set(self, dataset: RankingDataset, *, per: str = "position") -> ClickTrainingSet:
        """The log as training rows with the documents' features from ``dataset``.

        ``per="position"``: one row per query, document and position, ``y`` = clicks and
        ``sample_weight`` = impressions (:meth:`ClickCounts.training_set`); ``per="document"``:
        the same pooled over positions (``position`` None); ``per="session"``: one row per
        impression, each session a query group (``qid`` = session id), ``y`` = the click, weight 1;
        ``per="pattern"``: the same with identical sessions (query, documents, positions, clicks)
        merged into one group weighted by their count (:meth:`ClickTrainingSet.per_pattern`).
        """
        from ranklearn.clicks.aggregate import ClickTrainingSet

        if per in ("position", "document"):
            return self.aggregate().training_set(dataset, pool_positions=per == "document")
        if per == "session":
            return ClickTrainingSet.per_session(self, dataset)
        if per == "pattern":
            return ClickTrainingSet.per_pattern(self, dataset)
        raise ValueError(f"per must be 'position', 'document', 'session' or 'pattern', got {per!r}")


def _data_lines(buf: np.ndarray, start: int, n_rows: int) -> np.ndarray:
    """The 1-based file line of each data row (blank lines are skipped by the reader)."""
    if n_rows == 0:
        return np.empty(0, dtype=np.int64)
    body = buf[start:]
    ends = np.flatnonzero(body == 10)
    starts = np.concatenate(([0], ends + 1))
    stops = np.concatenate((ends, [len(body)]))
    blank = (stops == starts) | ((stops - starts == 1) & (body[np.minimum(starts, max(len(body) - 1, 0))] == 13))
    return (np.flatnonzero(~blank) + 2)[:n_rows]


def _parquet():
    """pyarrow and pyarrow.parquet, or an ImportError saying how to get them."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ImportError(
            "Parquet click logs need pyarrow: pip install 'ranklearn[parquet]' (or use the TSV layout)"
        ) from None
    return pyarrow, pyarrow.parquet
