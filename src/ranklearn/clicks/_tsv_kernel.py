"""Byte-level reader and writer of the click log's TSV layout (numba): tab-separated integers.

The reader never raises: it returns an error code with the 1-based line and the byte span of
the offending token, and :mod:`ranklearn.clicks.log` turns that into a ``DataFormatError``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

E_TOKEN = 1  # a field that is not a plain integer
E_COLUMNS = 2  # a line with another number of fields than the header
E_RANGE = 3  # an integer beyond int64

_TAB = 9
_NL = 10
_CR = 13
_MINUS = 45
_PLUS = 43


@njit(cache=True)
def parse_int_tsv(buf, start, n_cols, first_line):
    """Parse lines of ``n_cols`` tab-separated integers from ``buf[start:]``.

    Returns ``(values[n_rows, n_cols], n_rows, error, line, token_start, token_end)``;
    ``first_line`` is the 1-based line number of ``buf[start]``. A final line without a
    newline is read; an empty line (or ``\\r`` alone) is skipped.
    """
    n = buf.shape[0]
    max_rows = 1
    for i in range(start, n):
        if buf[i] == _NL:
            max_rows += 1
    values = np.empty((max_rows, n_cols), dtype=np.int64)
    row = 0
    line = first_line
    i = start
    while i < n:
        end = i
        while end < n and buf[end] != _NL:
            end += 1
        stop = end
        if stop > i and buf[stop - 1] == _CR:
            stop -= 1
        if stop > i:
            col = 0
            s = i
            while True:
                e = s
                while e < stop and buf[e] != _TAB:
                    e += 1
                if col >= n_cols:
                    return values, row, E_COLUMNS, line, s, e
                p = s
                negative = False
                if p < e and (buf[p] == _MINUS or buf[p] == _PLUS):
                    negative = buf[p] == _MINUS
                    p += 1
                if p == e:
                    return values, row, E_TOKEN, line, s, e
                v = 0
                while p < e:
                    c = buf[p]
                    if c < 48 or c > 57:
                        return values, row, E_TOKEN, line, s, e
                    d = c - 48
                    if v > (9223372036854775807 - d) // 10:
                        return values, row, E_RANGE, line, s, e
                    v = v * 10 + d
                    p += 1
                values[row, col] = -v if negative else v
                col += 1
                if e >= stop:
                    break
                s = e + 1
            if col != n_cols:
                return values, row, E_COLUMNS, line, i, stop
            row += 1
        line += 1
        i = end + 1
    return values, row, 0, line, 0, 0


@njit(cache=True)
def _digits(v):
    n = 1
    if v < 0:
        n += 1
        v = -v
    while v >= 10:
        v //= 10
        n += 1
    return n


@njit(cache=True)
def format_int_tsv(columns):
    """``columns[n_cols, n_rows]`` as lines of tab-separated integers (uint8 bytes)."""
    n_cols, n_rows = columns.shape
    size = 0
    for r in range(n_rows):
        for c in range(n_cols):
            size += _digits(columns[c, r]) + 1
    out = np.empty(size, dtype=np.uint8)
    pos = 0
    for r in range(n_rows):
        for c in range(n_cols):
            v = columns[c, r]
            k = _digits(v)
            end = pos + k
            if v < 0:
                out[pos] = _MINUS
                v = -v
            q = end - 1
            while True:
                out[q] = 48 + v % 10
                v //= 10
                q -= 1
                if v == 0:
                    break
            pos = end
            out[pos] = _TAB if c < n_cols - 1 else _NL
            pos += 1
    return out
