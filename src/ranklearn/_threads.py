"""How many threads numba's parallel loops use, set around a block of work."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numba


@contextlib.contextmanager
def numba_threads(n_jobs: int | None) -> Iterator[None]:
    """Run numba's parallel loops on ``n_jobs`` threads (None or -1: all cores) inside the block.

    One thread runs a ``prange`` loop as a plain loop: on small inputs that avoids waking
    the thread pool, which costs milliseconds when the cores are busy with other work.
    """
    before = numba.get_num_threads()
    if n_jobs is None or n_jobs == -1:
        n = numba.config.NUMBA_NUM_THREADS
    elif n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive number of threads, None or -1, got {n_jobs}")
    else:
        n = min(int(n_jobs), numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(before)
