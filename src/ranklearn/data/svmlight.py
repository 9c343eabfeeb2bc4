"""Reading and writing SVMlight / LETOR ranking files.

Format, one document per line::

    <label> qid:<query id> <fid>:<value> ... [# comment]

Feature ids are 1-based (column ``j - 1`` holds feature ``j``); missing ids are zeros.
Blank and comment-only lines are not data and are skipped. LightGBM's layout has no
qid column: group sizes come from a ``<file>.query`` file, one size per line.

Value policy: ``nan`` (any case) is accepted and means "missing" (LambdaMART sends
missing values down a learned branch); ``inf`` is rejected, as are values that overflow
the requested dtype. Labels may be any finite real number.
"""

from __future__ import annotations

import warnings
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from ranklearn._compilation import interprets_small_inputs
from ranklearn._files import write_output, write_outputs, writes_stdout
from ranklearn._text import token_text
from ranklearn.data import _svmlight_kernel as K
from ranklearn.data.dataset import RankingDataset, dense_size_problem
from ranklearn.data.groups import block_ptr, first_reappearance, regroup_order, sizes_to_ptr
from ranklearn.data.positions import format_positions, read_position_file, sidecar_path
from ranklearn.data.source import PathOrFile, read_source
from ranklearn.data.weights import weight_path
from ranklearn.exceptions import DataFormatError

_MESSAGES = {
    K.E_LABEL: "bad label: expected a number as the first token of the line",
    K.E_LABEL_NONFINITE: "label is not finite: expected a finite number",
    K.E_QID: "malformed qid: expected 'qid:<query id>' with a non-empty id and no ':'",
    K.E_QID_POSITION: "misplaced qid: expected 'qid:<query id>' once, right after the label",
    K.E_TOKEN: "malformed token: expected '<feature id>:<value>'",
    K.E_FID_EMPTY: "missing feature id: expected '<feature id>:<value>'",
    K.E_FID_NOT_INT: "feature id is not an integer: expected '<feature id>:<value>' with a positive integer id",
    K.E_FID_NONPOSITIVE: "feature id must be >= 1 (ids are 1-based)",
    K.E_VALUE_EMPTY: "missing value: expected '<feature id>:<value>'",
    K.E_VALUE: "feature value is not a number: expected a decimal number (or 'nan' for missing)",
    K.E_VALUE_INF: "infinite feature value: expected a finite number ('nan' marks a missing value)",
}

#: Files up to this size are parsed by the kernel interpreted while numba is not imported
#: (:meth:`ranklearn._compilation.Kernel.run`): about 1.2 s of CPU per MiB, against about 0.5 s
#: for importing numba and loading the compiled kernel (1,000 LETOR rows of 46 features: 256 KiB).
INTERPRETED_BYTES = 384 << 10


def _overflow_threshold(dtype: np.dtype) -> float:
    """Smallest float64 magnitude that rounds to inf in ``dtype``.

    Halfway between the largest finite value and the next power of two: a tie rounds to
    even, which is upwards there. For float64 the sum itself rounds to inf.
    """
    info = np.finfo(dtype)
    return float(info.max) + 2.0 ** (info.maxexp - info.nmant - 2)


def _overflow_message(dtype: np.dtype) -> str:
    return f"feature value overflows {dtype}: expected a magnitude of at most {np.finfo(dtype).max}"


def _token_text(raw: bytes, start: int, end: int) -> str:
    return token_text(raw[start:end])


def _decode(raw: bytes, start: int, end: int, what: str, name: str, line: int) -> str:
    try:
        return raw[start:end].decode("utf-8")
    except UnicodeDecodeError:
        raise DataFormatError(
            f"{what} is not valid UTF-8 text", path=name, line=line, token=_token_text(raw, start, end)
        ) from None


def _read_query_file(path: str | PathLike[str], n_rows: int) -> np.ndarray:
    """Group sizes of a LightGBM ``.query`` file, checked against the row count."""
    raw, name = read_source(path)
    sizes = []
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        token = line.strip()
        if not token:
            continue
        text = token_text(token)
        # ASCII digits only: no sign, no decimal point, no other script's digits or superscripts
        if not (text.isascii() and text.isdigit()) or int(text) == 0:
            raise DataFormatError(
                "bad group size: expected one positive integer per line", path=name, line=lineno, token=text
            )
        sizes.append(int(text))
    total = sum(sizes)
    if total != n_rows:
        raise DataFormatError(
            f"group sizes sum to {total} but the data file has {n_rows} rows", path=name
        )
    return sizes_to_ptr(sizes)


def load_svmlight(
    path_or_file: PathOrFile,
    *,
    query_file: str | PathLike[str] | None = None,
    position_file: str | PathLike[str] | bool | None = None,
    regroup: bool = False,
    n_features: int | None = None,
    dtype: type = np.float32,
    sparse: bool = False,
    return_order: bool = False,
    require_groups: bool = True,
    warn_weight_file: bool = True,
) -> RankingDataset | tuple[RankingDataset, np.ndarray | None]:
    """Load a ranking file in SVMlight / LETOR format.

    Parameters
    ----------
    path_or_file : str, PathLike or binary/text file object
        Plain or gzip-compressed (detected by content); LF or CRLF line ends.
    query_file : str or PathLike, optional
        LightGBM group sizes for a file without qid. By default ``<path>.query`` is used
        when the lines have no qid and that file exists.
    position_file : str, PathLike, None or False, optional
        Display positions, one per data row in file order (LightGBM's ``.position`` file; see
        :mod:`ranklearn.data.positions`). None (the default): ``<path>.position`` is read when
        it exists, and the dataset's ``position_file`` names it; False: never read positions.
    regroup : bool, default False
        If a qid reappears after another qid, stably regroup rows (queries in order of
        first appearance) instead of raising.
    n_features : int, optional
        Number of columns. Default: the largest feature id seen. A larger id is an error.
    dtype : {numpy.float32, numpy.float64}, default float32
        dtype of ``X``. Values are parsed exactly as float64 first.
    sparse : bool, default False
        Return ``X`` as a scipy CSR matrix (entries as written, explicit zeros kept).
        Dense loading refuses a giant, almost empty matrix (more than 256 MiB with under
        one stored value per 1000 cells, as a stray id like ``1000000000:1`` makes) with a
        ``DataFormatError`` naming the line; ``sparse=True`` loads such files.
    return_order : bool, default False
        Also return the row order ``regroup`` applied: row ``i`` of the dataset is data
        row ``order[i]`` of the file (None when the rows kept the file's order). Lets a
        caller line up per-row data kept in file order, such as a scores file.
    require_groups : bool, default True
        With False, a file whose lines have no qid and that has no query file is one query of
        every row (for scoring only, where groups do not matter) instead of an error.
    warn_weight_file : bool, default True
        Warn when ``<path>.weight`` (LightGBM's weight file, :func:`weight_path`) exists: a
        dataset holds no weights, so it is not read (False: the caller reads or names it).

    Returns
    -------
    RankingDataset
        ``query_ids`` are int64 when every qid is an integer written as it prints (no ``+``,
        no leading zero), else the strings as written;
        ``0 .. n_queries - 1`` with a ``.query`` file. ``comments`` holds the text after
        ``#`` (whitespace-stripped, None where a row has none), or is None when no row
        has a comment. ``position`` holds the positions (None without a position file) and
        ``position_file`` the file they came from (None without), so that a caller can say
        which file it used. With ``return_order=True``, a tuple ``(dataset, order)``.

    Raises
    ------
    DataFormatError
        For any malformed input, naming the file, the 1-based line, the offending token
        and what was expected. Nothing is silently dropped. Also when a dense ``X`` would
        be giant and almost empty (see ``sparse``).
    FileNotFoundError
        If the file does not exist.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    if n_features is not None and not 1 <= n_features <= K.MAX_FID:
        raise ValueError(f"n_features must be between 1 and {K.MAX_FID}, got {n_features}")
    raw, name = read_source(path_or_file)
    small = len(raw) <= INTERPRETED_BYTES and interprets_small_inputs()
    # interpreted, the kernels read Python ints from a memoryview (numpy's uint8 scalars are 5x slower)
    buf = memoryview(raw) if small else np.frombuffer(raw, dtype=np.uint8)
    row_cap, entry_cap = K.count_rows_and_entries.run(buf, small=small)
    labels = np.empty(row_cap, dtype=np.float64)
    qid_int = np.empty(row_cap, dtype=np.int64)
    qid_span = np.empty((row_cap, 2), dtype=np.int64)
    row_ptr = np.empty(row_cap + 1, dtype=np.int64)
    row_line = np.empty(row_cap, dtype=np.int64)
    comment_span = np.empty((row_cap, 2), dtype=np.int64)
    indices = np.empty(entry_cap, dtype=np.int32)
    values = np.empty(entry_cap, dtype=np.float64)
    slow = np.empty((row_cap + entry_cap, 3), dtype=np.int64)
    overflow_at = _overflow_threshold(dtype)
    (n_rows, nnz, n_slow, max_fid, has_qid, all_int, err, err_line, err_s, err_e, aux) = K.parse_svmlight.run(
        buf, n_features or 0, overflow_at, labels, qid_int, qid_span, row_ptr, row_line, comment_span,
        indices, values, slow, small=small,
    )  # fmt: skip
    if err:
        _raise_parse_error(err, raw, name, err_line, err_s, err_e, aux, dtype)
    if n_rows == 0:
        raise DataFormatError("no data lines (the file is empty or has only blank/comment lines)", path=name)
    labels, row_line, row_ptr = labels[:n_rows], row_line[:n_rows], row_ptr[: n_rows + 1]
    _convert_slow_numbers(raw, name, slow[:n_slow], labels, values, row_ptr, row_line, overflow_at, dtype)

    if has_qid:
        if query_file is not None:
            raise DataFormatError(
                f"query_file={str(query_file)!r} given but the lines already carry qids; use one or the other",
                path=name,
            )
        qid = _qids(raw, name, qid_int, qid_span, n_rows, all_int, row_line)
        ptr, query_ids, order = _query_blocks(qid, regroup, name, row_line)
    else:
        if query_file is None and isinstance(path_or_file, (str, PathLike)):
            candidate = Path(f"{path_or_file}.query")
            query_file = candidate if candidate.exists() else None
        if query_file is None and require_groups:
            first_line = int(row_line[0])
            tokens = raw.split(b"\n", first_line)[first_line - 1].split(b"#", 1)[0].split()
            raise DataFormatError(
                "missing qid: expected 'qid:<query id>' after the label "
                f"(or group sizes in a query file such as {name}.query)",
                path=name,
                line=first_line,
                token=token_text(tokens[min(1, len(tokens) - 1)]),
            )
        ptr = _read_query_file(query_file, n_rows) if query_file is not None else np.array([0, n_rows])
        query_ids = np.arange(ptr.shape[0] - 1, dtype=np.int64)
        order = None

    n_cols = n_features if n_features is not None else max_fid
    if not sparse:
        _check_dense_size(name, n_rows, n_cols, nnz, dtype, n_features, indices[:nnz], row_ptr, row_line)
    X = _features(values[:nnz].astype(dtype), indices[:nnz], row_ptr, (n_rows, n_cols), sparse)
    comments = _comments(raw, name, comment_span[:n_rows], row_line)
    if warn_weight_file and isinstance(path_or_file, (str, PathLike)) and weight_path(path_or_file).exists():
        # LightGBM's weight file (simulate-clicks --aggregate writes one): a dataset holds no
        # weights, so say that it is not read rather than drop it in silence
        warnings.warn(
            f"{weight_path(path_or_file)} (per-row weights, LightGBM's weight file) is not read: a RankingDataset has "
            f"no weights; pass them to fit: sample_weight=numpy.loadtxt('{weight_path(path_or_file)}')",
            UserWarning,
            stacklevel=2,
        )
    if position_file is None and isinstance(path_or_file, (str, PathLike)):
        candidate = sidecar_path(path_or_file)
        position_file = candidate if candidate.exists() else None
    position = None
    if position_file is not None and position_file is not False:
        if position_file is True:
            raise ValueError("position_file must be a path, None (the sidecar when it exists) or False, not True")
        position = read_position_file(position_file, n_rows, name)
    if order is not None:
        X, labels, row_line = X[order], labels[order], row_line[order]
        comments = None if comments is None else comments[order]
        position = None if position is None else position[order]
    dataset = RankingDataset(
        X,
        labels,
        ptr,
        query_ids=query_ids,
        comments=comments,
        lines=row_line,
        position=position,
    )
    dataset.position_file = None if position is None else str(position_file)
    return (dataset, order) if return_order else dataset


def _features(values: np.ndarray, indices: np.ndarray, row_ptr: np.ndarray, shape: tuple[int, int],
              sparse: bool) -> Any:  # fmt: skip
    """The parsed entries (CSR parts, sorted and distinct per row) as a CSR matrix, or dense
    (zeros elsewhere) without SciPy, which ``predict`` and ``evaluate`` then never import."""
    if sparse:
        import scipy.sparse as sp

        return sp.csr_matrix((values, indices, row_ptr), shape=shape, copy=False)
    X = np.zeros(shape, dtype=values.dtype)
    X[np.repeat(np.arange(shape[0]), np.diff(row_ptr)), indices] = values
    return X


def _check_dense_size(
    name: str,
    n_rows: int,
    n_cols: int,
    nnz: int,
    dtype: np.dtype,
    n_features: int | None,
    indices: np.ndarray,
    row_ptr: np.ndarray,
    row_line: np.ndarray,
) -> None:
    """Refuse to build a giant, almost empty dense ``X`` (a stray huge feature id) silently."""
    problem = dense_size_problem(n_rows, n_cols, nnz, dtype.itemsize)
    if problem is None:
        return
    advice = "load with sparse=True if the file really is that sparse"
    if n_features is not None:
        raise DataFormatError(f"n_features={n_features:,}: {problem}; {advice}", path=name)
    entry = int(np.argmax(indices))
    row = int(np.searchsorted(row_ptr, entry, side="right")) - 1
    raise DataFormatError(
        f"feature id {n_cols:,} is far beyond the other features: {problem}; fix the id, or {advice}",
        path=name,
        line=int(row_line[row]),
    )


def _query_blocks(
    qid: np.ndarray, regroup: bool, name: str, row_line: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Boundaries, query ids and the regrouping row order (None if not needed) of per-row qids."""
    ptr = block_ptr(qid)
    dup = first_reappearance(qid, ptr)
    if dup is None:
        return ptr, qid[ptr[:-1]], None
    if not regroup:
        earlier, later = (int(ptr[b]) for b in dup)
        token = f"qid:{qid[later : later + 1].tolist()[0]}"
        raise DataFormatError(
            f"{token} reappears on line {row_line[later]} after other queries (its rows start on line "
            f"{row_line[earlier]}); rows of a query must be contiguous (regroup=True gathers them)",
            path=name,
            line=int(row_line[later]),
            token=token,
        )
    order = regroup_order(qid)
    qid = qid[order]
    ptr = block_ptr(qid)
    return ptr, qid[ptr[:-1]], order


def _raise_parse_error(
    err: int, raw: bytes, name: str, line: int, start: int, end: int, aux: int, dtype: np.dtype
) -> None:
    token = _token_text(raw, start, end)
    if err == K.E_FID_RANGE:
        msg = (
            f"feature id exceeds n_features={aux}"
            if aux
            else f"feature id too large: expected at most {K.MAX_FID}"
        )
    elif err == K.E_VALUE_RANGE:
        msg = _overflow_message(dtype)
    elif err == K.E_DUPLICATE_FID:
        msg = f"duplicate feature id {aux} in one line: expected each id at most once"
    elif err == K.E_QID_MISSING:
        msg = f"missing qid: expected 'qid:<query id>' after the label, as on line {aux}"
    elif err == K.E_QID_UNEXPECTED:
        msg = f"unexpected qid: line {aux} has none; expected every line with a qid, or none"
    else:
        msg = _MESSAGES[err]
    try:
        raw[start:end].decode("utf-8")
    except UnicodeDecodeError:  # say why the token looks garbled, not only that it is no number
        msg += "; the token is not UTF-8 text (a file in another encoding, such as Latin-1, or a binary file?)"
    raise DataFormatError(msg, path=name, line=line, token=token)


def _convert_slow_numbers(
    raw: bytes,
    name: str,
    slow: np.ndarray,
    labels: np.ndarray,
    values: np.ndarray,
    row_ptr: np.ndarray,
    row_line: np.ndarray,
    overflow_at: float,
    dtype: np.dtype,
) -> None:
    """Exact conversion, by Python's float, of the numbers the fast path left out."""
    for target, start, end in slow.tolist():
        text = raw[start:end].decode("ascii")  # the kernel checked the grammar: ASCII only
        value = float(text if target < 0 else text.split(":", 1)[1])
        if target < 0:
            row = -target - 1
            if not np.isfinite(value):
                raise DataFormatError(
                    "label overflows float64: expected a finite number", path=name, line=int(row_line[row]), token=text
                )
            labels[row] = value
        else:
            if abs(value) >= overflow_at:
                row = int(np.searchsorted(row_ptr, target, side="right")) - 1
                raise DataFormatError(
                    _overflow_message(dtype),
                    path=name,
                    line=int(row_line[row]),
                    token=text,
                )
            values[target] = value


def _span_texts(
    raw: bytes, spans: np.ndarray, rows: np.ndarray, what: str, name: str, row_line: np.ndarray
) -> list[str]:
    """UTF-8 text of ``raw[start:end]`` for the spans of the given rows."""
    pairs = spans[rows].tolist()
    if raw.isascii():  # the common case: one decode, then byte offsets are character offsets
        text = raw.decode("ascii")
        return [text[start:end] for start, end in pairs]
    return [
        _decode(raw, start, end, what, name, int(row_line[row])) for row, (start, end) in zip(rows.tolist(), pairs)
    ]


def _qids(
    raw: bytes,
    name: str,
    qid_int: np.ndarray,
    qid_span: np.ndarray,
    n_rows: int,
    all_int: bool,
    row_line: np.ndarray,
) -> np.ndarray:
    """Per-row qids: int64 when all are integers written as they print, else the strings as written."""
    if all_int:
        return qid_int[:n_rows]
    qid = np.empty(n_rows, dtype=object)
    qid[:] = _span_texts(raw, qid_span, np.arange(n_rows), "qid", name, row_line)
    return qid


def _comments(raw: bytes, name: str, span: np.ndarray, row_line: np.ndarray) -> np.ndarray | None:
    """Per-row comment text (None where a row has none), or None when no row has one."""
    rows = np.flatnonzero(span[:, 0] >= 0)
    if rows.shape[0] == 0:
        return None
    comments = np.full(span.shape[0], None, dtype=object)
    comments[rows] = _span_texts(raw, span, rows, "comment", name, row_line)
    return comments


# ---------------------------------------------------------------------- writing


def _format_numbers(values: np.ndarray) -> np.ndarray:
    """Shortest round-trip text of each value; integral values without '.0'; NaN as 'nan'."""
    text = values.astype(str)  # numpy's shortest repr for the value's own dtype
    integral = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 1e15)
    text[integral] = values[integral].astype(np.int64).astype(str)
    return text


def format_svmlight(dataset: RankingDataset, *, with_qid: bool = True) -> bytes:
    """A dataset as the text of an SVMlight / LETOR file (see :func:`save_svmlight`).

    ``with_qid=False`` leaves out the qid column and the comments: LightGBM's layout, whose
    group sizes go in a separate ``.query`` file.

    Raises
    ------
    ValueError
        If ``X`` holds inf, or a qid or comment cannot be written on one line (or holds a NUL
        character, which the loader reads as a binary file).
    """
    import scipy.sparse as sp

    X = sp.csr_matrix(dataset.X)  # canonical: RankingDataset sorts and merges sparse entries
    keep = X.data != 0  # NaN != 0 is True: NaN entries are written
    if np.isinf(X.data).any():
        raise ValueError("X contains inf, which the SVMlight format does not allow")
    entries = np.char.add(np.char.add((X.indices[keep] + 1).astype(str), ":"), _format_numbers(X.data[keep]))
    row_of_entry = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[keep]
    entry_ptr = np.searchsorted(row_of_entry, np.arange(X.shape[0] + 1))
    for q in dataset.query_ids.tolist() if with_qid else ():
        text = str(q)
        if not text or ":" in text or "#" in text or "\0" in text or any(c.isspace() for c in text):
            raise ValueError(f"qid {text!r} cannot be written: it is empty or has whitespace, ':', '#' or a NUL")
    labels = _format_numbers(dataset.y).tolist()
    qids = [f"qid:{q}" for q in dataset.qid.tolist()] if with_qid else None
    comments = dataset.comments if with_qid else None
    lines = []
    entries = entries.tolist()
    for row in range(X.shape[0]):
        parts = [labels[row], *([] if qids is None else [qids[row]]), *entries[entry_ptr[row] : entry_ptr[row + 1]]]
        comment = None if comments is None else comments[row]
        if comment is not None:
            comment = str(comment)
            if "\n" in comment or "\r" in comment:
                raise ValueError(f"comment of row {row} spans several lines and cannot be written")
            if "\0" in comment:  # the loader takes a NUL byte for a binary file
                raise ValueError(f"comment of row {row} has a NUL character and cannot be written")
            parts.append(f"#{comment}")
        lines.append(" ".join(parts))
    lines.append("")
    return "\n".join(lines).encode("utf-8")


def save_svmlight(dataset: RankingDataset, path: str | PathLike[str]) -> None:
    """Write a dataset in SVMlight / LETOR format (safely: ``ranklearn._files``; ``-`` is standard output).

    A dataset with positions also gets its ``<path>.position`` sidecar (both files or neither;
    to standard output the positions cannot go, which is an error).

    Lines are ``<label> qid:<id> <fid>:<value> ... [#<comment>]`` with only the nonzero
    entries (missing ids read back as 0), NaN written as ``nan``, and every number in
    its shortest text that reads back to the same value (integral values without
    ``.0``). :func:`load_svmlight` returns the same labels, qids, values and comments
    (comments come back whitespace-stripped).

    Raises
    ------
    ValueError
        If ``X`` holds inf, or a qid or comment cannot be written on one line, or positions
        would go to standard output.
    """
    text = format_svmlight(dataset)
    if dataset.position is None:
        write_output(path, text)
        return
    if writes_stdout(path):
        raise ValueError("the dataset has positions, which need a file beside the data: give a path, not '-'")
    write_outputs({path: text, sidecar_path(path): format_positions(dataset.position)})  # both or neither
