"""Byte-level SVMlight / LETOR parser (numba; a small file is parsed by the same functions
interpreted, see :meth:`ranklearn._compilation.Kernel.run`).

One pass over the raw bytes fills preallocated arrays (the caller sizes them from the
number of newlines and colons, upper bounds of the row and entry counts). The kernel
never raises: it returns an error code with the line and the byte span of the offending
token, and :mod:`ranklearn.data.svmlight` turns that into a ``DataFormatError``.

Numbers are converted exactly. The fast path covers plain decimals with at most 15-16
significant digits and a decimal exponent within +-22: mantissa and power of ten are
then both exact doubles, so one IEEE multiplication or division gives the correctly
rounded result (Clinger's fast path). Any other valid number is reported as "slow" and
converted by Python's ``float`` from its text.
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel

# Error codes returned by parse_svmlight (0 = no error).
E_LABEL = 1
E_LABEL_NONFINITE = 2
E_QID = 3
E_QID_POSITION = 4
E_TOKEN = 5
E_FID_EMPTY = 6
E_FID_NOT_INT = 7
E_FID_NONPOSITIVE = 8
E_FID_RANGE = 9
E_VALUE_EMPTY = 10
E_VALUE = 11
E_VALUE_INF = 12
E_VALUE_RANGE = 13
E_DUPLICATE_FID = 14
E_QID_MISSING = 15
E_QID_UNEXPECTED = 16

# Status of _parse_number.
NUM_EXACT = 0
NUM_SLOW = 1
NUM_INVALID = 2
NUM_NAN = 3
NUM_INF = 4

MAX_FID = 2**31 - 1  # CSR column indices are int32
_MAX_EXACT_MANTISSA = 2**53
_POW10 = np.array([10.0**i for i in range(23)])  # all exact doubles

_NL = 10
_HASH = 35
_COLON = 58


@kernel(cache=True, inline="always")
def _is_space(c: int) -> bool:
    # space, \t, \v, \f, \r; "\n" ends the line and is handled by the caller
    return c == 32 or c == 9 or c == 11 or c == 12 or c == 13


@kernel(cache=True, inline="always")
def _is_digit(c: int) -> bool:
    return 48 <= c <= 57


@kernel(cache=True)
def _matches_word(buf, s, e, word) -> bool:
    """Case-insensitive comparison of buf[s:e] with an ASCII lowercase word (uint8 array)."""
    if e - s != word.shape[0]:
        return False
    for i in range(word.shape[0]):
        if (buf[s + i] | 0x20) != word[i]:
            return False
    return True


_NAN = np.frombuffer(b"nan", dtype=np.uint8).copy()
_INF = np.frombuffer(b"inf", dtype=np.uint8).copy()
_INFINITY = np.frombuffer(b"infinity", dtype=np.uint8).copy()


@kernel(cache=True)
def _parse_number(buf, s, e):
    """Parse buf[s:e] as a float with Python's ``float`` grammar, minus underscores.

    Returns
    -------
    status : int
        NUM_EXACT (value is the correctly rounded double), NUM_SLOW (valid, convert the
        text elsewhere), NUM_INVALID, NUM_NAN or NUM_INF.
    value : float
    """
    i = s
    negative = False
    if i < e and (buf[i] == 43 or buf[i] == 45):  # '+' or '-'
        negative = buf[i] == 45
        i += 1
    if i == e:
        return NUM_INVALID, 0.0
    if not _is_digit(buf[i]) and buf[i] != 46:  # not a digit nor '.': only nan/inf remain
        if _matches_word(buf, i, e, _NAN):
            return NUM_NAN, np.nan
        if _matches_word(buf, i, e, _INF) or _matches_word(buf, i, e, _INFINITY):
            return NUM_INF, -np.inf if negative else np.inf
        return NUM_INVALID, 0.0
    mantissa = 0
    n_sig = 0  # significant digits kept in mantissa (at most 18, so it fits in int64)
    exp10 = 0
    inexact = False  # a nonzero digit did not fit in the mantissa
    any_digit = False
    while i < e and _is_digit(buf[i]):
        any_digit = True
        d = buf[i] - 48
        if n_sig < 18:
            if mantissa != 0 or d != 0:
                mantissa = mantissa * 10 + d
                n_sig += 1
        else:
            exp10 += 1
            inexact |= d != 0
        i += 1
    if i < e and buf[i] == 46:  # '.'
        i += 1
        while i < e and _is_digit(buf[i]):
            any_digit = True
            d = buf[i] - 48
            if n_sig < 18:
                if mantissa != 0 or d != 0:
                    mantissa = mantissa * 10 + d
                    n_sig += 1
                exp10 -= 1
            else:
                inexact |= d != 0
            i += 1
    if not any_digit:
        return NUM_INVALID, 0.0
    if i < e and (buf[i] | 0x20) == 101:  # 'e' or 'E'
        i += 1
        exp_negative = False
        if i < e and (buf[i] == 43 or buf[i] == 45):
            exp_negative = buf[i] == 45
            i += 1
        if i == e:
            return NUM_INVALID, 0.0
        exp_value = 0
        while i < e and _is_digit(buf[i]):
            if exp_value < 100000:  # beyond that the value is 0 or inf anyway (slow path)
                exp_value = exp_value * 10 + (buf[i] - 48)
            i += 1
        if i != e:
            return NUM_INVALID, 0.0
        exp10 += -exp_value if exp_negative else exp_value
    if i != e:
        return NUM_INVALID, 0.0
    if mantissa == 0 and not inexact:
        return NUM_EXACT, -0.0 if negative else 0.0
    if inexact or mantissa > _MAX_EXACT_MANTISSA or exp10 > 22 or exp10 < -22:
        return NUM_SLOW, 0.0
    if exp10 >= 0:
        value = mantissa * _POW10[exp10]
    else:
        value = mantissa / _POW10[-exp10]
    return NUM_EXACT, -value if negative else value


@kernel(cache=True)
def count_rows_and_entries(buf):
    """Upper bounds for preallocation: (number of lines, number of ':' bytes)."""
    lines = 1
    colons = 0
    for c in buf:
        if c == _NL:
            lines += 1
        elif c == _COLON:
            colons += 1
    return lines, colons


@kernel(cache=True)
def parse_svmlight(
    buf,
    n_features_limit,
    overflow_at,
    labels,
    qid_int,
    qid_span,
    row_ptr,
    row_line,
    comment_span,
    indices,
    values,
    slow,
):
    """Parse SVMlight lines into preallocated arrays.

    Parameters
    ----------
    buf : uint8 array
        The whole (decompressed) file.
    n_features_limit : int
        Largest allowed feature id, 0 for no limit (up to ``MAX_FID``).
    overflow_at : float
        Smallest magnitude that overflows the output dtype; such values are errors.
    labels, qid_int : float64 / int64 arrays, one slot per possible row
    qid_span, comment_span : int64 arrays (rows, 2)
        Byte span of each row's qid value and comment text (-1, -1 when absent).
    row_ptr : int64 array (rows + 1)
    row_line : int64 array
        1-based source line of each row.
    indices, values : int32 / float64 arrays, one slot per possible entry
    slow : int64 array (rows + entries, 3)
        Numbers left to Python: (target, start, end) of the label or ``fid:value`` token;
        target is the entry index, or ``-(row + 1)`` for a row's label.

    Returns
    -------
    tuple
        (n_rows, nnz, n_slow, max_fid, first_row_has_qid, all_qids_int,
        error_code, error_line, error_start, error_end, error_aux).
        ``error_aux`` is the duplicated feature id, the n_features limit or the first
        data line, depending on the code.
    """
    n = buf.shape[0]
    pos = 0
    line = 0
    row = 0
    nnz = 0
    n_slow = 0
    max_fid = 0
    first_has_qid = -1  # unknown until the first data line
    first_line = 0
    all_int = True
    fid_limit = n_features_limit if n_features_limit > 0 else MAX_FID
    row_ptr[0] = 0
    while pos < n:
        line += 1
        row_start = nnz
        slow_start = n_slow
        n_tokens = 0
        has_qid = False
        second_s = -1  # span of the token after the label, for "missing qid" errors
        second_e = -1
        label_s = -1
        label_e = -1
        row_max_fid = 0
        unsorted = False
        i = pos
        while True:
            while i < n and _is_space(buf[i]):
                i += 1
            if i >= n or buf[i] == _NL or buf[i] == _HASH:
                break
            ts = i
            colon = -1
            while i < n and buf[i] != _NL and buf[i] != _HASH and not _is_space(buf[i]):
                if buf[i] == _COLON and colon < 0:
                    colon = i
                i += 1
            te = i
            if n_tokens == 0:
                label_s = ts
                label_e = te
                status, v = _parse_number(buf, ts, te)
                if status == NUM_INVALID:
                    return 0, 0, 0, 0, 0, 0, E_LABEL, line, ts, te, 0
                if status == NUM_NAN or status == NUM_INF:
                    return 0, 0, 0, 0, 0, 0, E_LABEL_NONFINITE, line, ts, te, 0
                if status == NUM_SLOW:
                    slow[n_slow, 0] = -(row + 1)
                    slow[n_slow, 1] = ts
                    slow[n_slow, 2] = te
                    n_slow += 1
                labels[row] = v
                n_tokens = 1
                continue
            if n_tokens == 1:
                second_s = ts
                second_e = te
            is_qid = (
                colon == ts + 3
                and buf[ts] == 113  # 'q'
                and buf[ts + 1] == 105  # 'i'
                and buf[ts + 2] == 100  # 'd'
            )
            if is_qid:
                if n_tokens != 1:
                    return 0, 0, 0, 0, 0, 0, E_QID_POSITION, line, ts, te, 0
                vs = colon + 1
                if vs == te:
                    return 0, 0, 0, 0, 0, 0, E_QID, line, ts, te, 0
                for j in range(vs, te):
                    if buf[j] == _COLON:
                        return 0, 0, 0, 0, 0, 0, E_QID, line, ts, te, 0
                has_qid = True
                qid_span[row, 0] = vs
                qid_span[row, 1] = te
                if all_int:
                    # an optional minus and at most 18 digits, written as the integer prints (no
                    # "+", no leading zero, no "-0"); anything else keeps every qid as its text,
                    # so that qid:007 stays "007", as a TREC qrels file made from the file has it
                    j = vs
                    neg = buf[j] == 45
                    if neg:
                        j += 1
                    if j == te or te - j > 18 or (buf[j] == 48 and (te - j > 1 or neg)):
                        all_int = False
                    else:
                        q = 0
                        while j < te and _is_digit(buf[j]):
                            q = q * 10 + (buf[j] - 48)
                            j += 1
                        if j != te:
                            all_int = False
                        qid_int[row] = -q if neg else q
                n_tokens += 1
                continue
            # a feature token "fid:value"
            if colon < 0:
                return 0, 0, 0, 0, 0, 0, E_TOKEN, line, ts, te, 0
            if colon == ts:
                return 0, 0, 0, 0, 0, 0, E_FID_EMPTY, line, ts, te, 0
            if colon == te - 1:
                return 0, 0, 0, 0, 0, 0, E_VALUE_EMPTY, line, ts, te, 0
            fid = 0
            j = ts
            if buf[j] == 45:  # '-': a negative id if digits follow
                j += 1
                while j < colon and _is_digit(buf[j]):
                    j += 1
                if j == colon and colon > ts + 1:
                    return 0, 0, 0, 0, 0, 0, E_FID_NONPOSITIVE, line, ts, te, 0
                return 0, 0, 0, 0, 0, 0, E_FID_NOT_INT, line, ts, te, 0
            while j < colon and _is_digit(buf[j]):
                if fid <= MAX_FID:  # stop growing once out of range, avoids overflow
                    fid = fid * 10 + (buf[j] - 48)
                j += 1
            if j != colon:
                return 0, 0, 0, 0, 0, 0, E_FID_NOT_INT, line, ts, te, 0
            if fid == 0:
                return 0, 0, 0, 0, 0, 0, E_FID_NONPOSITIVE, line, ts, te, 0
            if fid > fid_limit:
                return 0, 0, 0, 0, 0, 0, E_FID_RANGE, line, ts, te, n_features_limit
            if fid <= row_max_fid:
                # out of order: rare, so a linear look-back for duplicates is cheap enough
                for j in range(row_start, nnz):
                    if indices[j] == fid - 1:
                        return 0, 0, 0, 0, 0, 0, E_DUPLICATE_FID, line, ts, te, fid
                unsorted = True
            else:
                row_max_fid = fid
            status, v = _parse_number(buf, colon + 1, te)
            if status == NUM_INVALID:
                return 0, 0, 0, 0, 0, 0, E_VALUE, line, ts, te, 0
            if status == NUM_INF:
                return 0, 0, 0, 0, 0, 0, E_VALUE_INF, line, ts, te, 0
            if status == NUM_SLOW:
                slow[n_slow, 0] = nnz
                slow[n_slow, 1] = ts
                slow[n_slow, 2] = te
                n_slow += 1
            elif abs(v) >= overflow_at:
                return 0, 0, 0, 0, 0, 0, E_VALUE_RANGE, line, ts, te, 0
            indices[nnz] = fid - 1
            values[nnz] = v
            nnz += 1
            if fid > max_fid:
                max_fid = fid
            n_tokens += 1
        # comment: from '#' to the end of the line, surrounding whitespace stripped
        cs = -1
        ce = -1
        if i < n and buf[i] == _HASH:
            i += 1
            while i < n and buf[i] != _NL:
                if not _is_space(buf[i]):
                    if cs < 0:
                        cs = i
                    ce = i + 1
                i += 1
        pos = i + 1  # i is at "\n" or at the end
        if n_tokens == 0:
            continue  # blank or comment-only line: not data
        if first_has_qid < 0:
            first_has_qid = 1 if has_qid else 0
            first_line = line
        elif has_qid and first_has_qid == 0:
            return 0, 0, 0, 0, 0, 0, E_QID_UNEXPECTED, line, second_s, second_e, first_line
        elif not has_qid and first_has_qid == 1:
            if second_s < 0:
                second_s = label_s
                second_e = label_e
            return 0, 0, 0, 0, 0, 0, E_QID_MISSING, line, second_s, second_e, first_line
        if not has_qid:
            qid_span[row, 0] = -1
            qid_span[row, 1] = -1
        if unsorted:
            # insertion sort of this row's entries by feature id (ids are distinct)
            for a in range(row_start + 1, nnz):
                key_i = indices[a]
                key_v = values[a]
                b = a - 1
                while b >= row_start and indices[b] > key_i:
                    indices[b + 1] = indices[b]
                    values[b + 1] = values[b]
                    b -= 1
                indices[b + 1] = key_i
                values[b + 1] = key_v
            # slow entries of this row moved too: re-target them by searching their new slot
            for t in range(slow_start, n_slow):
                if slow[t, 0] >= 0:  # an entry, not the label
                    fid_of_slow = _fid_at(buf, slow[t, 1])
                    for a in range(row_start, nnz):
                        if indices[a] == fid_of_slow - 1:
                            slow[t, 0] = a
                            break
        comment_span[row, 0] = cs
        comment_span[row, 1] = ce
        row_line[row] = line
        row += 1
        row_ptr[row] = nnz
    return row, nnz, n_slow, max_fid, first_has_qid, all_int, 0, 0, 0, 0, 0


@kernel(cache=True)
def _fid_at(buf, token_start):
    """Feature id of the ``fid:value`` token starting at ``token_start`` (already validated)."""
    fid = 0
    j = token_start
    while buf[j] != _COLON:
        fid = fid * 10 + (buf[j] - 48)
        j += 1
    return fid
