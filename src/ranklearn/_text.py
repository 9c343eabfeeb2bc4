"""Text as LETOR, TREC and score files write it: one rule for every reader.

Python's ``float()`` also takes ``1_000`` and other scripts' digits (``"\u0663"`` is 3.0);
LETOR files, trec_eval and the other tools do not, so neither does ranklearn. A UTF-8
byte-order mark (some Windows editors write one) is not part of a file's first token.
"""

from __future__ import annotations

import codecs
import math


def strip_bom(raw: bytes) -> bytes:
    """``raw`` without a leading UTF-8 byte-order mark."""
    return raw.removeprefix(codecs.BOM_UTF8)


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


__all__ = ["plain_float", "strip_bom"]
