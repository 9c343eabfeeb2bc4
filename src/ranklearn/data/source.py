"""Reading a data source (a path or an open file) into bytes, for the file readers of ``ranklearn.data``."""

from __future__ import annotations

import gzip
import math
import zlib
from os import PathLike
from typing import IO

import numpy as np

from ranklearn._text import not_text_reason, plain_float, strip_bom, token_text
from ranklearn.exceptions import DataFormatError

PathOrFile = str | PathLike[str] | IO[bytes] | IO[str]

_GZIP_MAGIC = b"\x1f\x8b"


def read_source(source: PathOrFile) -> tuple[bytes, str]:
    """The (decompressed) content of a path or file object, and a name for messages.

    gzip is detected by content (so misnamed files work too); a UTF-8 byte-order mark is removed.

    Raises
    ------
    DataFormatError
        For a text-mode stream over bytes that are not text, corrupt gzip data, or content that
        is not UTF-8 text (UTF-16, or binary with a NUL byte), said as such.
    """
    if isinstance(source, (str, PathLike)):
        name = str(source)
        with open(source, "rb") as fh:
            raw = fh.read()
    else:
        name = str(getattr(source, "name", "<stream>"))
        try:
            raw = source.read()
        except UnicodeDecodeError as exc:  # a text-mode stream over bytes that are not text
            raise DataFormatError(
                f"cannot decode the stream as text ({exc.reason} at byte {exc.start}); open the file in binary mode",
                path=name,
            ) from None
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
    if raw[:2] == _GZIP_MAGIC:  # by content, so misnamed files work too
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataFormatError(f"corrupt or truncated gzip data ({exc})", path=name) from None
    reason = not_text_reason(raw)
    if reason is not None:  # UTF-16 or binary: say so, not "bad label" on line 1
        raise DataFormatError(reason, path=name)
    raw = strip_bom(raw)  # files saved by some Windows editors
    return raw, name


def read_lines(source: PathOrFile) -> tuple[list[bytes], str]:
    """The lines of a file of one value a line (a sidecar of a data file, a scores file), without
    the trailing blank lines editors leave, and the source's name for messages (as :func:`read_source`)."""
    raw, name = read_source(source)
    lines = raw.split(b"\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines, name


def read_numbers(
    source: PathOrFile, n_rows: int | None = None, data_name: str = "the data file", what: str = "number"
) -> tuple[np.ndarray, str]:
    """One finite number per line (float64), in file order, and the source's name for messages.

    Parameters
    ----------
    source : str, PathLike or file object
        As :func:`read_source` reads it.
    n_rows : int, optional
        The data file's row count: the file must hold one number per row.
    data_name : str
        How the count error names the data file.
    what : str
        What each number is, as the count error names it ("score", "weight").

    Raises
    ------
    DataFormatError
        Naming the file and 1-based line of a token that is not a finite number (a blank line
        among the numbers included: it would shift every later row), or both counts.
    """
    lines, name = read_lines(source)
    out = np.empty(len(lines))
    for i, line in enumerate(lines):
        token = line.strip()
        value = plain_float(token.decode("utf-8", errors="replace"))
        if not math.isfinite(value):
            raise DataFormatError("expected one finite number per line", path=name, line=i + 1, token=token_text(token))
        out[i] = value
    if n_rows is not None and out.shape[0] != n_rows:
        raise DataFormatError(
            f"{out.shape[0]} {what}s for {n_rows} rows in {data_name}; need one {what} per row, in the row order "
            "of the data file",
            path=name,
        )
    return out, name
