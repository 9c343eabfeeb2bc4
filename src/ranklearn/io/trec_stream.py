"""Streaming readers of TREC runs and qrels straight into trec_eval's judgement lists
(:class:`ranklearn.metrics.trec.ranking.JudgedRankings`), for ``ranklearn trec-eval``.

A run of any size is read in blocks of :data:`BLOCK` bytes into one reused buffer: a parallel
numba pass over each block splits the lines, converts the numbers and looks the query and
document ids up in a hash table per file (integer codes; each distinct id's bytes held once);
a serial pass interns the ids it did not find and appends the rows, so only 12 bytes a line
are kept, never the text, and no Python object is made per line. The rules are
:mod:`ranklearn.io.trec`'s (blank and ``#`` lines skipped, a run's columns past the sixth
ignored, qrels of exactly 4 columns, scores and grades plain finite numbers, a document listed
twice for a query refused). The qrels join the run by their codes; ranking (score descending
as a C float, as trec_eval keeps it, then docid descending in byte order), grade lookup, ``-M``
and ``-J`` run in a parallel numba kernel over the queries. :func:`read_rankings` gives the
run's rankings alone (``-R prefs``, ``qrels_prefs``, ``qrels_jg``).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from os import PathLike

import numba
import numpy as np
from numba import njit, prange

from ranklearn.exceptions import DataFormatError
from ranklearn.metrics.trec.counts import NONPOOL, UNJUDGED
from ranklearn.metrics.trec.ranking import JudgedRankings

#: Bytes read at a time.
BLOCK = 1 << 23
#: Bytes of the first read.
FIRST_BLOCK = 1 << 20
_NUMBER_BYTES = np.zeros(256, dtype=np.bool_)
_NUMBER_BYTES[np.frombuffer(b"0123456789+-.eE", dtype=np.uint8)] = True
_BOM = np.frombuffer(b"\xef\xbb\xbf", dtype=np.uint8)
_RUN_FIELDS = (0, 2, 4, 5)  # query, document, score, tag
_QRELS_FIELDS = (0, 2, 3, -1)  # query, document, grade


_EXACT_POWERS = np.array([10.0**e for e in range(23)])  # exact in float64


@njit(cache=True)
def _parse_number(buf: np.ndarray, a: int, b: int, powers: np.ndarray) -> float:
    """The decimal number ``buf[a:b]``, correctly rounded as strtod, when it has a fast exact
    conversion: its significant digits an integer w up to 2**53 and a power of ten up to 22
    (Clinger's: the division or product of two exact doubles), or up to 18 digits and
    w / 10**t with t <= 22 (:func:`_divided`: Python's repr of a float has 17), else NaN (the
    caller parses it with Python's ``float``)."""
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
            if digits > 18:  # (10**18 fits an int64)
                return np.nan
            mantissa = mantissa * 10 + (buf[i] - 48)
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
    if scale > 22 or scale < -22:
        return np.nan if mantissa else (-0.0 if negative else 0.0)
    if mantissa <= 9007199254740992:  # 2**53: every integer up to it is a double
        value = float(mantissa)
        value = value * powers[scale] if scale >= 0 else value / powers[-scale]
    elif scale <= 0:
        value = _divided(mantissa, -scale)
    else:
        return np.nan
    return -value if negative else value


_POWERS_OF_5 = np.array([5**e for e in range(23)], dtype=np.int64)  # below 2**52


@njit(cache=True)
def _divided(w: int, t: int) -> float:
    """w / 10**t correctly rounded (to nearest, ties to even), for 0 < w < 2**63 and t <= 22:
    w / 5**t by binary long division into a quotient of at least 55 bits and a sticky
    remainder, rounded to 53 bits, times 2**-t (exact: the result is a normal double)."""
    d = _POWERS_OF_5[t]
    q = w // d
    r = w % d
    shift = 0
    while q < (1 << 54):  # r < d < 2**52: r << 1 never overflows
        r <<= 1
        q <<= 1
        if r >= d:
            r -= d
            q |= 1
        shift += 1
    n_bits = 0
    while (q >> n_bits) > 0:
        n_bits += 1
    drop = n_bits - 53
    mantissa = q >> drop
    rest = q & ((1 << drop) - 1)
    half = 1 << (drop - 1)
    if rest > half or (rest == half and (r != 0 or mantissa & 1)):
        mantissa += 1
    return np.ldexp(float(mantissa), drop - shift - t)


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _find(buf, a, b, h, slots, hashes, offsets, store) -> tuple[int, int]:
    """(code of ``buf[a:b]`` or -1, the slot where it is or would go) in an open-addressing table."""
    mask = slots.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    while True:
        c = slots[i]
        if c < 0:
            return -1, i
        if hashes[c] == h and _compare(buf, a, b, store, offsets[c], offsets[c + 1]) == 0:
            return c, i
        i = (i + 1) & mask


@njit(cache=True, inline="always")
def _intern(buf, a, b, h, slots, hashes, offsets, store, n) -> tuple[int, int]:
    """(code of ``buf[a:b]`` (hash ``h``), codes in the table): the table's code, a new one
    appended, or -1 when the table lacks room for it (the caller grows it and asks again)."""
    code, slot = _find(buf, a, b, h, slots, hashes, offsets, store)
    if code >= 0:
        return code, n
    if 2 * (n + 1) > slots.shape[0] or n + 1 >= hashes.shape[0] or offsets[n] + b - a > store.shape[0]:
        return -1, n
    store[offsets[n] : offsets[n] + b - a] = buf[a:b]
    offsets[n + 1] = offsets[n] + b - a
    hashes[n] = h
    slots[slot] = n
    return n, n + 1


@njit(cache=True, parallel=True)
def _split(buf, start, end, n_chunks, fields, min_fields, max_fields, number_bytes, powers, q_slots, q_hashes,
           q_offsets, q_store, d_slots, d_hashes, d_offsets, d_store, q_codes, d_codes, values, flags, spans):  # fmt: skip
    """The whole lines ``buf[start:end]`` split in ``n_chunks`` parallel chunks of lines: per
    content line its query's and document's codes in the two tables as they are (read only
    here; -1 where an id is new), its number (NaN where the fast conversion is not exact) and
    ``flags`` (1 the first line of a new query, whose next lines are -1 too, 2 a new document, 4
    a NaN number; then the chunk's next row of ``spans``, from ``first[k]`` too, holds the bounds
    of the query, document and number fields for :func:`_gather`: few rows, so few pages
    touched). Chunk ``k`` writes its rows from ``first[k]`` (room for a line of every 2 fields'
    bytes).

    Returns ``first``, rows and lines per chunk, per chunk its first bad line (line index in
    the chunk, -1 none; field count or -1 for a bad number; the number's bounds) and its last
    row's tag bounds.
    """
    bounds = np.empty(n_chunks + 1, dtype=np.int64)
    bounds[0], bounds[n_chunks] = start, end
    for k in range(1, n_chunks):
        p = max(start + (end - start) * k // n_chunks, bounds[k - 1])
        while start < p < end and buf[p - 1] != 10:
            p += 1
        bounds[k] = p
    first = np.zeros(n_chunks + 1, dtype=np.int64)
    for k in range(n_chunks):
        first[k + 1] = first[k] + (bounds[k + 1] - bounds[k]) // (2 * min_fields) + 1
    rows = np.zeros(n_chunks, dtype=np.int64)
    lines = np.zeros(n_chunks, dtype=np.int64)
    bad = np.full((n_chunks, 4), -1, dtype=np.int64)
    tags = np.zeros((n_chunks, 2), dtype=np.int64)
    top = 0
    for f in fields:
        top = max(top, f + 1)
    # scratch made outside the parallel loop, a row per chunk: never shared between threads
    starts = np.zeros((n_chunks, top), dtype=np.int64)
    ends = np.zeros((n_chunks, top), dtype=np.int64)
    for k in prange(n_chunks):
        f_start = starts[k]
        f_end = ends[k]
        row = first[k]
        flagged = first[k]
        line = 0
        i = bounds[k]
        prev_a, prev_b, prev_code = 0, -1, -1  # the previous line's query: most lines repeat it
        while i < bounds[k + 1]:
            field = 0
            while buf[i] != 10:
                c = buf[i]
                if c == 32 or 9 <= c <= 13:
                    i += 1
                    continue
                if field == 0 and c == 35:  # '#': a comment line
                    while buf[i] != 10:
                        i += 1
                    break
                a = i
                while not (buf[i] == 32 or 9 <= buf[i] <= 13):  # a newline (10) is a blank
                    i += 1
                if field < top:
                    f_start[field] = a
                    f_end[field] = i
                field += 1
            if field:
                if field < min_fields or field > max_fields:
                    bad[k, 0], bad[k, 1] = line, field
                    break
                na, nb = f_start[fields[2]], f_end[fields[2]]
                value = _parse_number(buf, na, nb, powers)
                if math.isnan(value):  # (a number parsed has only number bytes)
                    ok = True
                    for j in range(na, nb):
                        ok = ok and number_bytes[buf[j]]
                    if not ok:
                        bad[k, 0], bad[k, 1], bad[k, 2], bad[k, 3] = line, -1, na, nb
                        break
                values[row] = value
                qa, qb = f_start[fields[0]], f_end[fields[0]]
                flag = 0
                if qb - qa != prev_b - prev_a or _compare(buf, qa, qb, buf, prev_a, prev_b) != 0:
                    prev_code = _find(buf, qa, qb, _hash(buf, qa, qb), q_slots, q_hashes, q_offsets, q_store)[0]
                    prev_a, prev_b = qa, qb
                    if prev_code < 0:
                        flag = 1  # a new query's first line: its next lines are also -1
                da, db = f_start[fields[1]], f_end[fields[1]]
                code = _find(buf, da, db, _hash(buf, da, db), d_slots, d_hashes, d_offsets, d_store)[0]
                q_codes[row] = prev_code
                d_codes[row] = code
                if code < 0:
                    flag |= 2
                if math.isnan(value):
                    flag |= 4
                flags[row] = flag
                if flag:
                    spans[flagged, 0], spans[flagged, 1], spans[flagged, 2], spans[flagged, 3] = qa, qb, da, db
                    spans[flagged, 4], spans[flagged, 5] = na, nb
                    flagged += 1
                if fields[3] >= 0:
                    tags[k, 0], tags[k, 1] = f_start[fields[3]], f_end[fields[3]]
                row += 1
            line += 1
            i += 1
        rows[k] = row - first[k]
        lines[k] = line
    return first, rows, lines, bad, tags


@njit(cache=True)
def _gather(buf, q_codes, d_codes, values, flags, spans, first, rows, k, r, f, new_query, q_slots, q_hashes,
            q_offsets, q_store, n_q, d_slots, d_hashes, d_offsets, d_store, n_d, run_code, run_start, n_runs, out_d,
            out_v, n_out, slow, n_slow):  # fmt: skip
    """Each split row (chunk ``k``'s row ``r`` on) appended to ``out_d`` and ``out_v``, its query
    to ``run_code`` and ``run_start`` where it starts a run of lines of one query (so a file
    listing each query's lines together keeps a few numbers a query, not one a line), the ids
    :func:`_split` found new interned into the two tables, rows whose number is NaN listed in
    ``slow``.

    ``f`` is the row of ``spans`` of the next flagged row, ``new_query`` the code of the last new
    query's first line (its chunk's next -1 lines are it). Returns where it stopped (chunk, row,
    ``f``: the end, or a row whose id does not fit a table: ``grow`` 1 queries, 2 documents,
    ``need`` its length; the caller grows it and goes on from there with the ``f`` and
    ``new_query`` returned), query runs, rows out, ids and slow rows so far. No array is
    reallocated here: numba then keeps the loop free of reference counting.
    """
    while k < rows.shape[0]:
        while r < rows[k]:
            s = first[k] + r
            q, d, flag = q_codes[s], d_codes[s], flags[s]
            if flag & 1:
                qa, qb = spans[f, 0], spans[f, 1]
                new_query, n_q = _intern(buf, qa, qb, _hash(buf, qa, qb), q_slots, q_hashes, q_offsets, q_store, n_q)
                if new_query < 0:
                    return k, r, f, new_query, 1, qb - qa, n_runs, n_out, n_q, n_d, n_slow
            if q < 0:
                q = new_query
            if flag & 2:
                da, db = spans[f, 2], spans[f, 3]
                d, n_d = _intern(buf, da, db, _hash(buf, da, db), d_slots, d_hashes, d_offsets, d_store, n_d)
                if d < 0:
                    return k, r, f, new_query, 2, db - da, n_runs, n_out, n_q, n_d, n_slow
            if flag & 4:
                slow[n_slow, 0], slow[n_slow, 1], slow[n_slow, 2] = n_out, spans[f, 4], spans[f, 5]
                n_slow += 1
            if flag:
                f += 1
            if n_runs == 0 or run_code[n_runs - 1] != q:
                run_code[n_runs] = q
                run_start[n_runs] = n_out
                n_runs += 1
            out_d[n_out] = d
            out_v[n_out] = values[s]
            n_out += 1
            r += 1
        k += 1
        r = 0
        if k < rows.shape[0]:
            f = first[k]
    return k, r, f, new_query, 0, 0, n_runs, n_out, n_q, n_d, n_slow


@njit(cache=True)
def _last_newline(buf: np.ndarray, start: int, end: int) -> int:
    """Index after the last newline of ``buf[start:end]``, ``start`` if none."""
    for i in range(end - 1, start - 1, -1):
        if buf[i] == 10:
            return i + 1
    return start


@njit(cache=True)
def _rehashed(hashes, n, size):
    """Open-addressing slots of ``size`` (a power of two) for the codes ``0..n-1``."""
    slots = np.full(size, -1, dtype=np.int64)
    mask = size - 1
    for c in range(n):
        i = np.int64(hashes[c] & np.uint64(mask))
        while slots[i] >= 0:
            i = (i + 1) & mask
        slots[i] = c
    return slots


class _Ids:
    """Interned ids: code ``c`` is ``store[offsets[c]:offsets[c+1]]`` (FNV-1a ``hashes[c]``,
    found through the open-addressing ``slots``)."""

    def __init__(self) -> None:
        self.hashes = np.empty(512, dtype=np.uint64)
        self.slots = _rehashed(self.hashes, 0, 1024)  # (compiled on every path: warm-up covers growth)
        self.offsets = np.zeros(513, dtype=np.int64)
        self.store = np.empty(8192, dtype=np.uint8)
        self.n = 0

    def state(self) -> tuple:
        return self.slots, self.hashes, self.offsets, self.store, self.n

    def grow(self, length: int) -> None:
        """Twice the room (and at least room for an id of ``length`` bytes)."""
        size = 2 * self.hashes.size
        self.hashes = _grown(self.hashes, self.n, size)
        self.offsets = _grown(self.offsets, self.n + 1, size + 1)
        self.store = _grown(self.store, self.offsets[self.n], max(2 * self.store.size, self.store.size + length))
        self.slots = _rehashed(self.hashes, self.n, 2 * size)

    def text(self, code: int) -> str:
        return bytes(self.store[self.offsets[code] : self.offsets[code + 1]]).decode("utf-8", "replace")


class _Split:
    """A block's split lines, ``most`` rows at most (pages only touched where rows are)."""

    def __init__(self, most: int) -> None:
        self.q_codes, self.d_codes = np.empty(most, np.int32), np.empty(most, np.int32)
        self.values, self.flags = np.empty(most), np.empty(most, np.uint8)
        self.spans = np.empty((most, 6), np.int64)  # only rows with flags
        self.slow = np.empty((most, 3), dtype=np.int64)

    def arrays(self) -> tuple:
        return self.q_codes, self.d_codes, self.values, self.flags, self.spans


class _Scratch:
    """The read buffer and a block's split lines, reused by the files read one after the other
    (pages touched once)."""

    def __init__(self) -> None:
        self.buf = np.empty(BLOCK + 1, dtype=np.uint8)  # + 1: room for a last newline
        self.split = _Split(0)

    def split_for(self, min_fields: int, n_chunks: int) -> _Split:
        """Room for a block's lines of at least ``min_fields`` fields."""
        most = self.buf.size // (2 * min_fields) + n_chunks
        if self.split.flags.size < most:
            self.split = _Split(most)
        return self.split

    def longer(self) -> None:
        """A buffer twice as long (a line longer than the buffer), its bytes kept."""
        self.buf = np.concatenate([self.buf, np.empty(self.buf.size, dtype=np.uint8)])


@dataclass
class _Table:
    """Parsed lines: their queries as runs of rows (the query code ``run_code[j]`` from row
    ``run_start[j]``), document codes per row (codes into ``queries`` and ``docs``), numbers."""

    run_code: np.ndarray
    run_start: np.ndarray
    doc: np.ndarray
    values: np.ndarray
    queries: _Ids
    docs: _Ids
    last_tag: str


def _read(path: str | PathLike[str], *, run: bool, scratch: _Scratch | None = None) -> _Table:
    fields = np.array(_RUN_FIELDS if run else _QRELS_FIELDS, dtype=np.int64)
    min_fields, max_fields = (6, 1 << 30) if run else (4, 4)
    what = "score" if run else "grade"
    queries, docs = _Ids(), _Ids()
    capacity = 1 << 16
    run_code, run_start = np.empty(capacity, np.int32), np.empty(capacity, np.int64)
    out_d, out_v = np.empty(capacity, np.int32), np.empty(capacity)
    rows = n_runs = 0
    last_tag = ""
    line_base = 0
    scratch = scratch or _Scratch()
    buf = scratch.buf
    n_chunks = 4 * numba.get_num_threads()
    split = scratch.split_for(min_fields, n_chunks)
    filled = 0
    start = -1  # unknown until the first bytes are seen (a byte-order mark is skipped)
    stream = sys.stdin.buffer if str(path) == "-" else open(path, "rb")
    read_bytes = 0
    try:
        size = 0 if stream is sys.stdin.buffer else os.fstat(stream.fileno()).st_size
        eof = False
        while not eof:
            if filled == buf.size - 1:  # a line longer than the buffer
                scratch.longer()
                buf = scratch.buf
                split = scratch.split_for(min_fields, n_chunks)
            # a small first block fills the tables, so that most ids of the later ones are found in parallel
            upto = buf.size - 1 if read_bytes else min(buf.size - 1, FIRST_BLOCK)
            got = stream.readinto(memoryview(buf)[filled:upto])
            read_bytes += got
            eof = not got
            filled += got
            if start < 0:
                if filled < 3 and not eof:
                    continue
                start = 3 if filled >= 3 and (buf[:3] == _BOM).all() else 0
            if eof:
                if filled > start and buf[filled - 1] != 10:
                    buf[filled] = 10
                    filled += 1
                end = filled
            else:
                end = _last_newline(buf, start, filled)
            if end == start:
                continue
            first, n_rows, n_lines, bad, tags = _split(
                buf, start, end, n_chunks, fields, min_fields, max_fields, _NUMBER_BYTES, _EXACT_POWERS,
                *queries.state()[:4], *docs.state()[:4], *split.arrays())  # fmt: skip
            for k in np.flatnonzero(bad[:, 0] >= 0)[:1].tolist():
                bad_line, bad_count, bad_a, bad_b = bad[k].tolist()
                line = line_base + int(n_lines[:k].sum()) + bad_line + 1
                if bad_count >= 0:
                    expected = "6 columns 'qid Q0 docid rank score tag'" if run else "4 columns 'qid iter docid grade'"
                    raise DataFormatError(f"expected {expected}, got {bad_count}", path=path, line=line)
                token = bytes(buf[bad_a:bad_b]).decode("utf-8", "replace")
                raise DataFormatError(f"{what} must be a finite number", path=path, line=line, token=token)
            if rows + int(n_rows.sum()) > capacity:
                # the first block's rows per byte times the file's size (one copy, not log n doublings)
                guess = int(1.05 * (rows + int(n_rows.sum())) * size / max(read_bytes, 1))
                capacity = max(rows + int(n_rows.sum()), 2 * capacity, guess)
                out_d, out_v = _grown(out_d, rows, capacity), _grown(out_v, rows, capacity)
                run_code, run_start = _grown(run_code, n_runs, capacity), _grown(run_start, n_runs, capacity)
            k = r = n_slow = 0
            f, new_query = int(first[0]), -1
            while True:
                k, r, f, new_query, grow, need, n_runs, rows, queries.n, docs.n, n_slow = _gather(
                    buf, *split.arrays(), first, n_rows, k, r, f, new_query, *queries.state(), *docs.state(), run_code,
                    run_start, n_runs, out_d, out_v, rows, split.slow, n_slow)  # fmt: skip
                if not grow:
                    break
                (queries if grow == 1 else docs).grow(need)
            raw = buf[:end].tobytes() if n_slow else b""  # slicing bytes: far cheaper than an array a row
            for row, a, b in split.slow[:n_slow].tolist():
                value = _float_or_nan(raw[a:b])
                if not math.isfinite(value):
                    token = raw[a:b].decode("ascii", "replace")
                    line = line_base + int(np.count_nonzero(buf[start:a] == 10)) + 1
                    raise DataFormatError(f"{what} must be a finite number", path=path, line=line, token=token)
                out_v[row] = value
            last = np.flatnonzero(n_rows)
            if run and last.size:
                last_tag = bytes(buf[tags[last[-1], 0] : tags[last[-1], 1]]).decode("utf-8", "replace")
            line_base += int(n_lines.sum())
            buf[: filled - end] = buf[end:filled]
            filled -= end
            start = 0
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    return _Table(run_code[:n_runs], run_start[:n_runs], out_d[:rows], out_v[:rows], queries, docs, last_tag)


def _grown(array: np.ndarray, used: int, size: int) -> np.ndarray:
    """``array[:used]`` in a new array of ``size`` items (the rest left unset: not touched, not committed)."""
    out = np.empty(size, dtype=array.dtype)
    out[:used] = array[:used]
    return out


def _float_or_nan(text: bytes) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


@njit(cache=True)
def _grouped(run_code: np.ndarray, run_start: np.ndarray, n_rows: int, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_rows`` rows (runs of rows of one code: ``run_code[j]`` from row ``run_start[j]``)
    grouped by code, in file order within a group (a counting sort; empty when the rows are so
    already: one run a code, as files usually list each query's lines together, since codes
    are numbered in order of first appearance), and the groups' bounds."""
    n_runs = run_code.shape[0]
    ends = np.empty(n_runs, dtype=np.int64)
    ptr = np.zeros(n_groups + 1, dtype=np.int64)
    together = True
    for j in range(n_runs):
        ends[j] = run_start[j + 1] if j + 1 < n_runs else n_rows
        ptr[run_code[j] + 1] += ends[j] - run_start[j]
        together = together and (j == 0 or run_code[j] > run_code[j - 1])
    for g in range(n_groups):
        ptr[g + 1] += ptr[g]
    if together:
        return np.empty(0, dtype=np.int64), ptr
    at = ptr[:-1].copy()
    order = np.empty(n_rows, dtype=np.int64)
    for j in range(n_runs):
        c = run_code[j]
        for i in range(run_start[j], ends[j]):
            order[at[c]] = i
            at[c] += 1
    return order, ptr


@njit(cache=True)
def _translated(store, offsets, hashes, n, slots, t_hashes, t_offsets, t_store):
    """Each of the ``n`` ids of one table (``store``, ``offsets``, ``hashes``) as its code in
    another (``slots``, ``t_hashes``, ``t_offsets``, ``t_store``), -1 where it is absent."""
    out = np.empty(n, dtype=np.int64)
    for c in range(n):
        out[c] = _find(store, offsets[c], offsets[c + 1], hashes[c], slots, t_hashes, t_offsets, t_store)[0]
    return out


@njit(cache=True, inline="always")
def _row(order: np.ndarray, k: int) -> int:
    """Row ``k`` of the rows in :func:`_grouped`'s ``order`` (empty: in file order)."""
    return order[k] if order.shape[0] else k


@njit(cache=True)
def _judged_twice(order, ptr, doc, n_docs) -> tuple[int, int]:
    """(group, document code) of the first document listed twice in a group, (-1, -1) if none."""
    seen = np.full(n_docs, -1, dtype=np.int64)
    for g in range(ptr.shape[0] - 1):
        for k in range(ptr[g], ptr[g + 1]):
            d = doc[_row(order, k)]
            if seen[d] == g:
                return g, d
            seen[d] = g
    return -1, -1


#: Equal scores beyond this many are merge-sorted by their ids (fewer: insertion sort).
_FEW = 16


@njit(cache=True)
def _rank(scores, codes, store, offsets, sign=1):
    """Positions of a query's rows in trec_eval's order: score descending as a C float (trec_eval
    keeps the scores as ``float``: scores that differ only beyond float32 tie), then docid
    descending (``sign`` -1: ascending, the order of the prefs measures). A radix sort of the
    floats' bits (4 passes of a byte, a pass skipped where every key has the same byte), then
    each run of equal scores sorted by its ids."""
    n = scores.shape[0]
    single = np.empty(n, dtype=np.float32)
    for i in range(n):
        single[i] = np.float32(scores[i]) + np.float32(0.0)  # -0.0 becomes 0.0: equal in C
    bits = single.view(np.uint32)
    keys = np.empty(n, dtype=np.uint32)  # descending scores as ascending keys
    for i in range(n):
        b = bits[i]
        keys[i] = b if b >> np.uint32(31) else ~(b | np.uint32(0x80000000))
    order = np.arange(n)
    spare = np.empty(n, dtype=np.int64)
    count = np.empty(257, dtype=np.int64)
    for shift in range(0, 32, 8):
        count[:] = 0
        for i in range(n):
            count[((keys[i] >> np.uint32(shift)) & np.uint32(255)) + 1] += 1
        if n == 0 or count[((keys[0] >> np.uint32(shift)) & np.uint32(255)) + 1] == n:
            continue
        for j in range(256):
            count[j + 1] += count[j]
        for i in range(n):
            row = order[i]
            byte = (keys[row] >> np.uint32(shift)) & np.uint32(255)
            spare[count[byte]] = row
            count[byte] += 1
        order, spare = spare, order
    a = 0
    while a < n:
        b = a + 1
        while b < n and keys[order[b]] == keys[order[a]]:
            b += 1
        if b - a > _FEW:
            _sort_ids_descending(order[a:b], codes, store, offsets, sign)
        else:
            for i in range(a + 1, b):
                row = order[i]
                x = codes[row]
                j = i
                while j > a:
                    y = codes[order[j - 1]]
                    if sign * _compare(store, offsets[y], offsets[y + 1], store, offsets[x], offsets[x + 1]) >= 0:
                        break
                    order[j] = order[j - 1]
                    j -= 1
                order[j] = row
        a = b
    return order


@njit(cache=True)
def _sort_ids_descending(rows, codes, store, offsets, sign):
    """Sort ``rows`` in place by document id (``codes[row]``'s bytes), descending (``sign`` -1:
    ascending; a bottom-up merge sort)."""
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
                x, y = codes[a[i]], codes[a[j]]
                if sign * _compare(store, offsets[x], offsets[x + 1], store, offsets[y], offsets[y + 1]) >= 0:
                    b[k] = a[i]
                    i += 1
                else:
                    b[k] = a[j]
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
def _judge(pick_run, pick_qrels, r_order, r_ptr, r_doc, scores, d_store, d_offsets, n_docs, j_order, j_ptr, j_doc,
           in_run, grades, top, max_docs, judged_only, n_chunks):  # fmt: skip
    """Judgement lists of the queries ``pick_run`` (run groups, rows in :func:`_grouped`'s
    ``r_order``) / ``pick_qrels`` (qrels groups, ``j_order``; ``j_doc``: their document codes,
    ``in_run`` a qrels document code's run code, -1 not retrieved at all), their bounds, the
    grade counts, and per query a document code listed twice (-1: none). Each chunk of queries
    marks its documents in arrays over the run's document codes (no hashing, no sorting)."""
    n = pick_run.shape[0]
    ptr = np.zeros(n + 1, dtype=np.int64)
    for q in range(n):
        ptr[q + 1] = ptr[q] + r_ptr[pick_run[q] + 1] - r_ptr[pick_run[q]]
    out = np.empty(ptr[n], dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    duplicate = np.full(n, -1, dtype=np.int64)
    levels = np.zeros((n, top + 1), dtype=np.int64)
    # scratch made outside the parallel loop, a row per chunk: never shared between threads
    seen_by = np.full((n_chunks, n_docs), -1, dtype=np.int32)  # query that retrieved the document last
    judged_by = np.full((n_chunks, n_docs), -1, dtype=np.int32)  # query that judged it last
    grades_by = np.empty((n_chunks, n_docs), dtype=np.int64)
    for chunk in prange(n_chunks):
        seen, judged, grade = seen_by[chunk], judged_by[chunk], grades_by[chunk]
        for q in range(chunk * n // n_chunks, (chunk + 1) * n // n_chunks):
            for k in range(j_ptr[pick_qrels[q]], j_ptr[pick_qrels[q] + 1]):
                row = _row(j_order, k)
                g = grades[row]
                if g >= 0:
                    levels[q, g] += 1
                d = in_run[j_doc[row]]
                if d >= 0:
                    judged[d] = q
                    grade[d] = UNJUDGED if g < 0 else g
            lo, hi = r_ptr[pick_run[q]], r_ptr[pick_run[q] + 1]
            rows = r_order[lo:hi] if r_order.shape[0] else np.arange(lo, hi)
            codes = r_doc[rows]
            for d in codes:
                if seen[d] == q:
                    duplicate[q] = d
                    break
                seen[d] = q
            if duplicate[q] >= 0:
                continue
            ranked = _rank(scores[rows], codes, d_store, d_offsets, 1)
            m = 0
            for r in ranked[: min(max_docs, ranked.shape[0])]:
                d = codes[r]
                rel = grade[d] if judged[d] == q else NONPOOL
                if judged_only and rel < 0:
                    continue
                out[ptr[q] + m] = rel
                m += 1
            counts[q] = m
    kept = _compacted(out, ptr, counts)
    return out[: kept[n]], kept, levels, duplicate


@njit(cache=True)
def _compacted(out, ptr, counts):
    """Query q's first ``counts[q]`` values moved from ``ptr[q]`` to just after query q-1's;
    their new bounds. One element at a time, front to back: a parallel slice copy (what numba
    makes of a slice assignment in a parallel function) would race over the overlap."""
    kept = np.zeros(ptr.shape[0], dtype=np.int64)
    for q in range(ptr.shape[0] - 1):
        for j in range(counts[q]):
            out[kept[q] + j] = out[ptr[q] + j]
        kept[q + 1] = kept[q] + counts[q]
    return kept


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
    # every array freed as soon as it is done with: the peak memory is what costs here
    scratch = _Scratch()
    qrels = _read(qrels_path, run=False, scratch=scratch)
    grades = qrels.values.astype(np.int64)  # trec_eval's atol: 2.7 is 2
    qrels.values = grades
    run = _read(run_path, run=True, scratch=scratch)
    del scratch
    j_order, j_ptr = _grouped(qrels.run_code, qrels.run_start, qrels.doc.size, qrels.queries.n)
    g, d = _judged_twice(j_order, j_ptr, qrels.doc, qrels.docs.n)
    if g >= 0:
        raise DataFormatError(f"document {qrels.docs.text(d)!r} is judged twice for query {qrels.queries.text(g)!r}",
                              path=qrels_path)  # fmt: skip
    rq, qq = run.queries, qrels.queries
    in_qrels = _translated(rq.store, rq.offsets, rq.hashes, rq.n, qq.slots, qq.hashes, qq.offsets, qq.store)
    ids = sorted((rq.text(c), c) for c in np.flatnonzero(in_qrels >= 0).tolist())
    if not ids:
        raise ValueError(f"no queries with both results and relevance info ({qrels_path}, {run_path})")
    pick_run = np.array([c for _, c in ids], dtype=np.int64)
    pick_qrels = in_qrels[pick_run]
    rd, qd = run.docs, qrels.docs
    in_run = _translated(qd.store, qd.offsets, qd.hashes, qd.n, rd.slots, rd.hashes, rd.offsets, rd.store)
    r_order, r_ptr = _grouped(run.run_code, run.run_start, run.doc.size, rq.n)
    limit = np.iinfo(np.int64).max if max_docs is None else int(max_docs)
    top = max(int(grades.max(initial=0)), 0)
    n_chunks = max(1, min(numba.get_num_threads(), len(ids)))
    rels, ptr, levels, duplicate = _judge(pick_run, pick_qrels, r_order, r_ptr, run.doc, run.values, rd.store,
                                          rd.offsets, rd.n, j_order, j_ptr, qrels.doc, in_run, grades, top, limit,
                                          judged_only, n_chunks)  # fmt: skip
    twice = np.flatnonzero(duplicate >= 0)
    if twice.size:
        doc = rd.text(duplicate[twice[0]])
        raise DataFormatError(f"document {doc!r} is listed twice for query {ids[twice[0]][0]!r}", path=run_path)
    by_query = {qq.text(c): grades[j_order[j_ptr[c] : j_ptr[c + 1]] if j_order.size else slice(j_ptr[c], j_ptr[c + 1])]
                for c in range(qq.n)}  # fmt: skip
    return JudgedRankings([q for q, _ in ids], rels, ptr, levels), run.last_tag, by_query


@njit(cache=True, parallel=True)
def _ranked_docs(pick, order, ptr, doc, scores, store, offsets, max_docs, sign):
    """The document codes of the groups ``pick`` (rows in :func:`_grouped`'s ``order``) in
    trec_eval's order (:func:`_rank`), each cut at ``max_docs``, and their bounds."""
    n = pick.shape[0]
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    for q in range(n):
        out_ptr[q + 1] = out_ptr[q] + min(ptr[pick[q] + 1] - ptr[pick[q]], max_docs)
    out = np.empty(out_ptr[n], dtype=np.int32)
    for q in prange(n):
        lo, hi = ptr[pick[q]], ptr[pick[q] + 1]
        rows = order[lo:hi] if order.shape[0] else np.arange(lo, hi)
        codes = doc[rows]
        ranked = _rank(scores[rows], codes, store, offsets, sign)
        for m in range(out_ptr[q + 1] - out_ptr[q]):
            out[out_ptr[q] + m] = codes[ranked[m]]
    return out, out_ptr


class RankedDocs(Sequence):
    """Each query's docnos in trec_eval's order, made as a query is asked for (one query's
    strings at a time, never the whole run's)."""

    def __init__(self, codes: np.ndarray, ptr: np.ndarray, docs: _Ids) -> None:
        self._codes, self._ptr, self._docs = codes, ptr, docs

    def __len__(self) -> int:
        return self._ptr.size - 1

    def __getitem__(self, q):  # type: ignore[override]
        if not 0 <= q < len(self):
            raise IndexError(q)
        return [self._docs.text(c) for c in self._codes[self._ptr[q] : self._ptr[q + 1]].tolist()]


def read_rankings(
    run_path: str | PathLike[str],
    queries: Collection[str],
    *,
    max_docs: int | None = None,
    ids_ascending: bool = False,
) -> tuple[list[str], RankedDocs, str]:
    """The run's rankings of those of ``queries`` it retrieves for, read as
    :func:`read_judged_rankings` reads a run (streamed, 12 bytes a line kept).

    Returns
    -------
    ids : list of str
        The queries ranked, in byte order.
    ranked : RankedDocs
        Each one's docnos by score (a C float) descending, equal scores by docno descending
        (``ids_ascending``: ascending, trec_eval's order for the prefs measures), cut at ``max_docs``.
    runid : str
        The tag of the run's last line.

    Raises
    ------
    DataFormatError
        A malformed line (named) or a document listed twice for a query.
    """
    run = _read(run_path, run=True)
    rq, rd = run.queries, run.docs
    order, ptr = _grouped(run.run_code, run.run_start, run.doc.size, rq.n)
    g, d = _judged_twice(order, ptr, run.doc, rd.n)
    if g >= 0:
        raise DataFormatError(f"document {rd.text(d)!r} is listed twice for query {rq.text(g)!r}", path=run_path)
    wanted = set(queries)
    ids = sorted((text, c) for c in range(rq.n) if (text := rq.text(c)) in wanted)  # code points: UTF-8's byte order
    pick = np.array([c for _, c in ids], dtype=np.int64)
    limit = np.iinfo(np.int64).max if max_docs is None else int(max_docs)
    codes, bounds = _ranked_docs(pick, order, ptr, run.doc, run.values, rd.store, rd.offsets, limit,
                                 -1 if ids_ascending else 1)  # fmt: skip
    return [q for q, _ in ids], RankedDocs(codes, bounds, rd), run.last_tag
