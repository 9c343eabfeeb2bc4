"""Whether numba's on-disk cache already holds ranklearn's kernels (the first run compiles them).

Every hot loop is ``@njit(cache=True)``: the first run in a fresh environment compiles them
(tens of seconds on a small machine) and stores the machine code next to the sources
(``__pycache__/*.nbi``) or under ``NUMBA_CACHE_DIR``; later runs load it in milliseconds.
The command line uses :func:`kernels_cached` to say so before a first run instead of showing
a frozen progress bar.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def kernels_cached() -> bool:
    """True when numba's cache holds at least one compiled ranklearn kernel."""
    if any(PACKAGE.rglob("__pycache__/*.nbi")):
        return True
    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    if cache_dir and Path(cache_dir).is_dir():
        # numba mirrors the source tree under its cache dir: look for ranklearn's part of it
        return any("ranklearn" in str(p) for p in Path(cache_dir).rglob("*.nbi"))
    return False
