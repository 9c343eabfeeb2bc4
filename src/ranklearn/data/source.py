"""Reading a data source (a path or an open file) into bytes, for the file readers of ``ranklearn.data``."""

from __future__ import annotations

import gzip
import zlib
from os import PathLike
from typing import IO

from ranklearn._text import strip_bom
from ranklearn.exceptions import DataFormatError

PathOrFile = str | PathLike[str] | IO[bytes] | IO[str]

_GZIP_MAGIC = b"\x1f\x8b"


def read_source(source: PathOrFile) -> tuple[bytes, str]:
    """The (decompressed) content of a path or file object, and a name for messages.

    gzip is detected by content (so misnamed files work too); a UTF-8 byte-order mark is removed.

    Raises
    ------
    DataFormatError
        For a text-mode stream over bytes that are not text, or corrupt gzip data.
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
    raw = strip_bom(raw)  # files saved by some Windows editors
    return raw, name
