"""Streaming readers of TREC runs and qrels straight into trec_eval's judgement lists
(:class:`ranklearn.metrics.trec.ranking.JudgedRankings`), for ``ranklearn trec-eval``.

A run of any size is read in blocks of :data:`BLOCK` bytes: only the parsed values are kept
(per line: its query, score and document id bytes; about 30 bytes a line), never the text.
The rules are :mod:`ranklearn.io.trec`'s (blank and ``#`` lines skipped, a run's columns
past the sixth ignored, qrels of exactly 4 columns, scores and grades plain finite numbers, a
document listed twice for a query refused); ranking (score descending, docid descending in
byte order), grade lookup, ``-M`` and ``-J`` run in parallel numba kernels over the queries.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from os import PathLike

import numpy as np
from numba import njit, prange

from ranklearn._text import strip_bom
from ranklearn.exceptions import DataFormatError
from ranklearn.metrics.trec.counts import NONPOOL, UNJUDGED
from ranklearn.metrics.trec.ranking import JudgedRankings

#: Bytes read at a time.
BLOCK = 1 << 25
_NUMBER_BYTES = np.zeros(256, dtype=np.bool_)
_NUMBER_BYTES[np.frombuffer(b"0123456789+-.eE", dtype=np.uint8)] = True


@njit(cache=True)
def _is_blank(c: int) -> bool:
    return c == 32 or 9 <= c <= 13


_EXACT_POWERS = np.array([10.0**e for e in range(23)])  # exact in float64


@njit(cache=True)
def _parse_number(buf: np.ndarray, a: int, b: int, powers: np.ndarray) -> float:
    """The decimal number ``buf[a:b]`` when it has an exact fast conversion (at most 15
    significant digits and a power of ten up to 22: the division or product of two exact
    doubles, correctly rounded as strtod), else NaN (the caller parses it with numpy)."""
    i = a
    negative = False
    if i < b and (buf[i] == 43 or buf[i] == 45):
        negative = buf[i] == 45
        i += 1
    mantissa = 0
    digits = 0
    scale = 0
    seen = False
    dot = False
    while i < b and (48 <= buf[i] <= 57 or (buf[i] == 46 and not dot)):
        if buf[i] == 46:
            dot = True
        else:
            seen = True
            if mantissa or buf[i] != 48:
                digits += 1
            mantissa = mantissa * 10 + (buf[i] - 48) if digits <= 15 else mantissa
            if digits > 15:
                return np.nan
            if dot:
                scale -= 1
        i += 1
    if not seen:
        return np.nan
    if i < b and (buf[i] == 101 or buf[i] == 69):
        i += 1
        exp_negative = False
        if i < b and (buf[i] == 43 or buf[i] == 45):
            exp_negative = buf[i] == 45
            i += 1
        if i == b:
            return np.nan
        exponent = 0
        while i < b and 48 <= buf[i] <= 57 and exponent < 10000:
            exponent = exponent * 10 + (buf[i] - 48)
            i += 1
        scale += -exponent if exp_negative else exponent
    if i != b:
        return np.nan
    value = float(mantissa)
    if scale > 22 or scale < -22:
        return np.nan if mantissa else (-0.0 if negative else 0.0)
    value = value * powers[scale] if scale >= 0 else value / powers[-scale]
    return -value if negative else value


@njit(cache=True)
def _split(buf: np.ndarray, wanted: np.ndarray, min_fields: int, max_fields: int, number_field: int,
           number_bytes: np.ndarray, powers: np.ndarray):  # fmt: skip
    """Field bounds of every content line of ``buf`` (whole lines): ``starts``/``ends`` of the
    ``wanted`` fields, the number field's value (NaN: not converted here), and (line index,
    field count or -1 for a bad number) of the first bad line."""
    n = buf.shape[0]
    n_lines = 0
    for i in range(n):
        if buf[i] == 10:
            n_lines += 1
    starts = np.empty((n_lines + 1, wanted.shape[0]), dtype=np.int64)
    ends = np.empty((n_lines + 1, wanted.shape[0]), dtype=np.int64)
    numbers = np.empty(n_lines + 1)
    top = 0
    for w in range(wanted.shape[0]):
        top = max(top, wanted[w] + 1)
    top = max(top, number_field + 1)
    line_starts = np.empty(top, dtype=np.int64)
    line_ends = np.empty(top, dtype=np.int64)
    rows = 0
    line = 0
    i = 0
    while i < n:
        field = 0
        while i < n and buf[i] != 10:
            c = buf[i]
            if c == 32 or 9 <= c <= 13:
                i += 1
                continue
            if field == 0 and c == 35:  # '#': a comment line
                while i < n and buf[i] != 10:
                    i += 1
                break
            a = i
            while i < n and not (buf[i] == 32 or 9 <= buf[i] <= 13):  # a newline (10) is a blank
                i += 1
            if field < top:
                line_starts[field] = a
                line_ends[field] = i
            field += 1
        if field:
            if field < min_fields or field > max_fields:
                return starts[:rows], ends[:rows], numbers[:rows], line, field
            a, b = line_starts[number_field], line_ends[number_field]
            for j in range(a, b):
                if not number_bytes[buf[j]]:
                    return starts[:rows], ends[:rows], numbers[:rows], line, -1
            numbers[rows] = _parse_number(buf, a, b, powers)
            for w in range(wanted.shape[0]):
                starts[rows, w] = line_starts[wanted[w]]
                ends[rows, w] = line_ends[wanted[w]]
            rows += 1
        line += 1
        i += 1
    return starts[:rows], ends[:rows], numbers[:rows], -1, 0


@njit(cache=True)
def _gather(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The byte strings ``buf[starts[i]:ends[i]]`` concatenated, and their offsets."""
    offsets = np.empty(starts.shape[0] + 1, dtype=np.int64)
    offsets[0] = 0
    for i in range(starts.shape[0]):
        offsets[i + 1] = offsets[i] + ends[i] - starts[i]
    out = np.empty(offsets[-1], dtype=np.uint8)
    for i in range(starts.shape[0]):
        out[offsets[i] : offsets[i + 1]] = buf[starts[i] : ends[i]]
    return out, offsets


@njit(cache=True)
def _fixed_width(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The fields as rows of a zero-padded byte matrix (numpy's ``S`` strings)."""
    width = 1
    for i in range(starts.shape[0]):
        width = max(width, ends[i] - starts[i])
    out = np.zeros((starts.shape[0], width), dtype=np.uint8)
    for i in range(starts.shape[0]):
        out[i, : ends[i] - starts[i]] = buf[starts[i] : ends[i]]
    return out


@njit(cache=True)
def _blocks(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Index of the first row of each run of rows with the same field bytes."""
    firsts = [0]
    for i in range(1, starts.shape[0]):
        a, b = starts[i - 1], starts[i]
        la, lb = ends[i - 1] - a, ends[i] - b
        same = la == lb
        j = 0
        while same and j < la:
            same = buf[a + j] == buf[b + j]
            j += 1
        if not same:
            firsts.append(i)
    return np.array(firsts, dtype=np.int64)


@dataclass
class _Table:
    """Parsed lines: query index per row, numbers, and the document ids' bytes."""

    query: np.ndarray
    values: np.ndarray
    doc_bytes: np.ndarray
    doc_offsets: np.ndarray
    query_ids: list[str]
    last_tag: str


def _read(path: str | PathLike[str], *, run: bool) -> _Table:
    wanted = np.array([0, 2, 4, 5] if run else [0, 2, 3], dtype=np.int64)
    min_fields, max_fields = (6, 1 << 30) if run else (4, 4)
    what = "score" if run else "grade"
    names: dict[str, int] = {}
    queries, values, docs, offsets = [], [], [], []
    last_tag = ""
    line_base = 0
    rest = b""
    stream = sys.stdin.buffer if str(path) == "-" else open(path, "rb")
    try:
        first = True
        while True:
            block = stream.read(BLOCK)
            data = rest + block
            if first:
                data, first = strip_bom(data), False
            cut = len(data) if not block else data.rfind(b"\n") + 1
            rest, data = data[cut:], data[:cut]
            if not data:
                if not block:
                    break
                continue
            if not data.endswith(b"\n"):
                data += b"\n"
            buf = np.frombuffer(data, dtype=np.uint8)
            starts, ends, parsed, bad, count = _split(
                buf, wanted, min_fields, max_fields, int(wanted[2]), _NUMBER_BYTES, _EXACT_POWERS
            )
            if bad >= 0:
                line = line_base + bad + 1
                if count >= 0:
                    expected = "6 columns 'qid Q0 docid rank score tag'" if run else "4 columns 'qid iter docid grade'"
                    raise DataFormatError(f"expected {expected}, got {count}", path=path, line=line)
                token = data.split(b"\n")[bad].split()[wanted[2]].decode("utf-8", "replace")
                raise DataFormatError(f"{what} must be a finite number", path=path, line=line, token=token)
            if starts.shape[0]:
                numbers = _numbers(buf, starts[:, 2], ends[:, 2], parsed, path, line_base, data, what)
                firsts = _blocks(buf, starts[:, 0], ends[:, 0])
                lengths = np.diff(np.append(firsts, starts.shape[0]))
                ids = [data[starts[f, 0] : ends[f, 0]].decode("utf-8", "replace") for f in firsts]
                codes = np.array([names.setdefault(q, len(names)) for q in ids], dtype=np.int64)
                queries.append(np.repeat(codes, lengths))
                values.append(numbers)
                chunk_docs, chunk_offsets = _gather(buf, starts[:, 1], ends[:, 1])
                docs.append(chunk_docs)
                offsets.append(chunk_offsets[1:] + sum(d.size for d in docs[:-1]))
                if run:
                    last_tag = data[starts[-1, 3] : ends[-1, 3]].decode("utf-8", "replace")
            line_base += data.count(b"\n")
            if not block:
                break
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    doc_offsets = np.concatenate([np.zeros(1, dtype=np.int64), *offsets])
    return _Table(
        np.concatenate(queries) if queries else np.zeros(0, dtype=np.int64),
        np.concatenate(values) if values else np.zeros(0),
        np.concatenate(docs) if docs else np.zeros(0, dtype=np.uint8),
        doc_offsets,
        list(names),
        last_tag,
    )


def _numbers(buf, starts, ends, parsed, path, line_base, data, what) -> np.ndarray:
    """The number fields as float64: ``parsed`` where the fast conversion was exact, numpy's
    parser (correctly rounded, as C's strtod) for the others."""
    slow = np.flatnonzero(np.isnan(parsed))
    if not slow.size:
        return parsed
    width = int((ends[slow] - starts[slow]).max())
    text = _fixed_width(buf, starts[slow], ends[slow]).view(f"S{width}").ravel()
    numbers = parsed.copy()
    numbers[slow] = [_float_or_nan(t) for t in text]
    bad = np.flatnonzero(~np.isfinite(numbers[slow]))
    if bad.size:
        token = text[bad[0]].decode("ascii", "replace")
        line = _line_of(data, starts[slow[bad[0]]]) + line_base
        raise DataFormatError(f"{what} must be a finite number", path=path, line=line, token=token)
    return numbers


def _float_or_nan(text: bytes) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


@njit(cache=True)
def _hash(store: np.ndarray, a: int, b: int) -> np.uint64:
    """FNV-1a of ``store[a:b]``."""
    h = np.uint64(14695981039346656037)
    for j in range(a, b):
        h = (h ^ np.uint64(store[j])) * np.uint64(1099511628211)
    return h


@njit(cache=True, inline="always")
def _compare(store_a, a0, a1, store_b, b0, b1) -> int:
    """strcmp of two byte strings: <0, 0, >0."""
    n = min(a1 - a0, b1 - b0)
    for j in range(n):
        if store_a[a0 + j] != store_b[b0 + j]:
            return np.int64(store_a[a0 + j]) - np.int64(store_b[b0 + j])
    return (a1 - a0) - (b1 - b0)


@njit(cache=True)
def _sorted_by_hash(store, offsets, rows):
    hashes = np.empty(rows.shape[0], dtype=np.uint64)
    for i in range(rows.shape[0]):
        hashes[i] = _hash(store, offsets[rows[i]], offsets[rows[i] + 1])
    order = np.argsort(hashes)
    return rows[order], hashes[order]


@njit(cache=True)
def _duplicate(store, offsets, rows, hashes) -> int:
    """A row whose document id an earlier row (same hash run) repeats, else -1."""
    for i in range(1, rows.shape[0]):
        j = i - 1
        while j >= 0 and hashes[j] == hashes[i]:
            a, b = rows[j], rows[i]
            if _compare(store, offsets[a], offsets[a + 1], store, offsets[b], offsets[b + 1]) == 0:
                return b
            j -= 1
    return -1


@njit(cache=True)
def _rank(rows, scores, store, offsets):
    """``rows`` in trec_eval's order: score descending, then docid descending (each group of
    equal scores merge-sorted by its ids)."""
    n = rows.shape[0]
    by_score = rows[np.argsort(-scores[rows])]
    a = 0
    while a < n:
        b = a + 1
        while b < n and scores[by_score[b]] == scores[by_score[a]]:
            b += 1
        if b - a > 1:
            _sort_ids_descending(by_score[a:b], store, offsets)
        a = b
    return by_score


@njit(cache=True)
def _sort_ids_descending(rows, store, offsets):
    """Sort ``rows`` in place by document id, descending (bottom-up merge sort)."""
    n = rows.shape[0]
    a = rows.copy()
    b = np.empty_like(a)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                x, y = a[i], a[j]
                if _compare(store, offsets[x], offsets[x + 1], store, offsets[y], offsets[y + 1]) >= 0:
                    b[k] = x
                    i += 1
                else:
                    b[k] = y
                    j += 1
                k += 1
            while i < mid:
                b[k] = a[i]
                i += 1
                k += 1
            while j < hi:
                b[k] = a[j]
                j += 1
                k += 1
        a, b = b, a
        width *= 2
    rows[:] = a


@njit(cache=True, parallel=True)
def _judge(run_ptr, run_rows, scores, run_store, run_offsets, qrels_ptr, qrels_rows, qrels_hashes, grades, qrels_store,
           qrels_offsets, max_docs, judged_only):  # fmt: skip
    """Judgement lists of every query (query ``q``: run rows ``run_rows[run_ptr[q]:...]``, its qrels
    rows sorted by hash), their lengths, and per query a duplicated run row (-1: none)."""
    n_queries = run_ptr.shape[0] - 1
    out = np.empty(run_rows.shape[0], dtype=np.int64)
    counts = np.zeros(n_queries, dtype=np.int64)
    duplicate = np.full(n_queries, -1, dtype=np.int64)
    for q in prange(n_queries):
        rows = run_rows[run_ptr[q] : run_ptr[q + 1]]
        by_hash, hashes = _sorted_by_hash(run_store, run_offsets, rows)
        duplicate[q] = _duplicate(run_store, run_offsets, by_hash, hashes)
        if duplicate[q] >= 0:
            continue
        ranked = _rank(rows, scores, run_store, run_offsets)[: min(max_docs, rows.shape[0])]
        j_rows = qrels_rows[qrels_ptr[q] : qrels_ptr[q + 1]]
        j_hashes = qrels_hashes[qrels_ptr[q] : qrels_ptr[q + 1]]
        n = 0
        for r in ranked:
            h = _hash(run_store, run_offsets[r], run_offsets[r + 1])
            at = np.searchsorted(j_hashes, h)
            rel = NONPOOL
            while at < j_hashes.shape[0] and j_hashes[at] == h:
                t = j_rows[at]
                if _compare(run_store, run_offsets[r], run_offsets[r + 1], qrels_store, qrels_offsets[t],
                            qrels_offsets[t + 1]) == 0:  # fmt: skip
                    rel = UNJUDGED if grades[t] < 0 else grades[t]
                    break
                at += 1
            if judged_only and rel < 0:
                continue
            out[run_ptr[q] + n] = rel
            n += 1
        counts[q] = n
    return out, counts, duplicate


def _text(raw: np.ndarray) -> str:
    return bytes(raw).decode("utf-8", "replace")


def _grouped(query: np.ndarray, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by query (stable) and the groups' boundaries."""
    order = np.argsort(query, kind="stable")
    ptr = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(query, minlength=n_queries), out=ptr[1:])
    return order, ptr


def read_judged_rankings(
    qrels_path: str | PathLike[str],
    run_path: str | PathLike[str],
    *,
    max_docs: int | None = None,
    judged_only: bool = False,
) -> tuple[JudgedRankings, str, dict[str, np.ndarray]]:
    """trec_eval's judgement lists of the run's judged queries (in byte order of their ids).

    Returns
    -------
    rankings : JudgedRankings
    runid : str
        The tag of the run's last line.
    judged : dict
        Every qrels query id -> its grades (for ``-c``'s counts).

    Raises
    ------
    DataFormatError
        A malformed line (named), a document listed twice for a query or judged twice.
    """
    qrels = _read(qrels_path, run=False)
    run = _read(run_path, run=True)
    grades = qrels.values.astype(np.int64)  # trec_eval's atol: 2.7 is 2
    q_order, q_ptr = _grouped(qrels.query, len(qrels.query_ids))
    q_rows = np.empty_like(q_order)
    q_hashes = np.empty(q_order.size, dtype=np.uint64)
    for q in range(len(qrels.query_ids)):
        rows, hashes = _sorted_by_hash(qrels.doc_bytes, qrels.doc_offsets, q_order[q_ptr[q] : q_ptr[q + 1]])
        q_rows[q_ptr[q] : q_ptr[q + 1]], q_hashes[q_ptr[q] : q_ptr[q + 1]] = rows, hashes
        twice = _duplicate(qrels.doc_bytes, qrels.doc_offsets, rows, hashes)
        if twice >= 0:
            doc = _text(qrels.doc_bytes[qrels.doc_offsets[twice] : qrels.doc_offsets[twice + 1]])
            raise DataFormatError(f"document {doc!r} is judged twice for query {qrels.query_ids[q]!r}", path=qrels_path)
    judged_index = {q: i for i, q in enumerate(qrels.query_ids)}
    ids = sorted(q for q in run.query_ids if q in judged_index)
    if not ids:
        raise ValueError(f"no queries with both results and relevance info ({qrels_path}, {run_path})")
    r_order, r_ptr = _grouped(run.query, len(run.query_ids))
    run_index = {q: i for i, q in enumerate(run.query_ids)}
    pick_run = np.array([run_index[q] for q in ids], dtype=np.int64)
    pick_qrels = np.array([judged_index[q] for q in ids], dtype=np.int64)
    sizes = r_ptr[pick_run + 1] - r_ptr[pick_run]
    ptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    rows = np.concatenate([r_order[r_ptr[i] : r_ptr[i + 1]] for i in pick_run])
    j_sizes = q_ptr[pick_qrels + 1] - q_ptr[pick_qrels]
    j_ptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(j_sizes, out=j_ptr[1:])
    j_rows = np.concatenate([q_rows[q_ptr[i] : q_ptr[i + 1]] for i in pick_qrels])
    j_hashes = np.concatenate([q_hashes[q_ptr[i] : q_ptr[i + 1]] for i in pick_qrels])
    limit = np.iinfo(np.int64).max if max_docs is None else int(max_docs)
    rels, counts, duplicate = _judge(ptr, rows, run.values, run.doc_bytes, run.doc_offsets, j_ptr, j_rows, j_hashes,
                                     grades, qrels.doc_bytes, qrels.doc_offsets, limit, judged_only)  # fmt: skip
    twice = np.flatnonzero(duplicate >= 0)
    if twice.size:
        r = duplicate[twice[0]]
        doc = _text(run.doc_bytes[run.doc_offsets[r] : run.doc_offsets[r + 1]])
        raise DataFormatError(f"document {doc!r} is listed twice for query {ids[twice[0]]!r}", path=run_path)
    positions = np.arange(rels.size) - np.repeat(ptr[:-1], sizes)
    keep = positions < np.repeat(counts, sizes)
    out_ptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(counts, out=out_ptr[1:])
    top = int(grades.max(initial=0))
    levels = np.zeros((len(ids), max(top, 0) + 1), dtype=np.int64)
    owner = np.repeat(np.arange(len(ids)), j_sizes)
    positive = grades[j_rows] >= 0
    np.add.at(levels, (owner[positive], grades[j_rows][positive]), 1)
    by_query = {q: grades[q_order[q_ptr[i] : q_ptr[i + 1]]] for q, i in judged_index.items()}
    return JudgedRankings(ids, rels[keep], out_ptr, levels), run.last_tag, by_query
