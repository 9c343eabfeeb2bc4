"""Text as LETOR, TREC and score files write it: one rule for every reader.

Python's ``float()`` also takes ``1_000`` and other scripts' digits (``"\u0663"`` is 3.0);
LETOR files, trec_eval and the other tools do not, so neither does ranklearn. A UTF-8
byte-order mark (some Windows editors write one) is not part of a file's first token. A file
that is not UTF-8 text at all (UTF-16 from a Windows tool, a binary file) is named as such,
and the bytes of a token that are not UTF-8 are shown once as ``\\xff``, not escaped twice.
"""

from __future__ import annotations

import codecs
import math
import re


def strip_bom(raw: bytes) -> bytes:
    """``raw`` without a leading UTF-8 byte-order mark."""
    return raw.removeprefix(codecs.BOM_UTF8)


def not_text_reason(raw: bytes) -> str | None:
    """Why ``raw`` (a file's first bytes) is not UTF-8 text, or None when it may be.

    UTF-16 (a byte-order mark, or a NUL in every other byte of the first 4 KiB, as PowerShell's
    ``>`` and Excel's "Unicode text" write) and binary files (a NUL byte) are told apart;
    other undecodable bytes are left to the line-by-line messages.
    """
    head = raw[:4096]
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) or (
        len(head) >= 8 and (head[1::2].count(0) > len(head) // 4 or head[0::2].count(0) > len(head) // 4)
    ):
        return (
            "not UTF-8 text: looks like UTF-16 (a byte-order mark or a NUL in every other byte); "
            "save it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8 FILE)"
        )
    if 0 in head:
        return f"not UTF-8 text: a binary file (a NUL byte at byte {head.index(0)})"
    return None


def token_text(token: bytes) -> str:
    """A token's bytes as text for a message: bytes that are not UTF-8 become lone surrogates,
    which :func:`shown_token` prints as ``\\xNN`` (one escape, not a backslash escaped again)."""
    return token.decode("utf-8", errors="surrogateescape")


def shown_token(text: str) -> str:
    """``repr(text)`` with the bytes :func:`token_text` kept as ``\\xNN``."""
    return re.sub(r"\\udc([89a-f][0-9a-f])", r"\\x\1", repr(text))


def plain_float(text: str) -> float:
    """The number ``text`` writes in plain ASCII (``1.5``, ``-2e-3``, ``nan``, ``inf``), else NaN.

    Callers that need a finite number check ``math.isfinite`` on the result.
    """
    if not text.isascii() or "_" in text:
        return math.nan
    try:
        return float(text)
    except ValueError:
        return math.nan


__all__ = ["not_text_reason", "plain_float", "shown_token", "strip_bom", "token_text"]
