"""One thread policy for every model: what ``n_jobs`` means, for numba and for torch.

``n_jobs`` is the number of threads a fit or a prediction uses: a positive integer, or
``None`` / ``-1`` for every CPU this process may run on. "May run on" honours the CPU
affinity mask (``taskset``, ``os.sched_setaffinity``) and a cgroup CPU quota (containers,
``docker --cpus``), so that a fit in a 2-CPU container does not start 64 threads that
then wait for each other. Metrics evaluated inside a fit run on the fit's threads.

Waiting threads spin only briefly, then sleep (:func:`apply_wait_policy`, called when
``ranklearn`` is imported): with another process on the same cores (a second fit, a torch
training), OpenMP threads that spin long at every barrier burn the CPU time the thread they
wait for needs, and a fit can take many times its fair share; threads that sleep at once
cost a wake-up of a few hundred microseconds on a virtual machine at every parallel loop,
most of a small node's time.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import warnings
from collections.abc import Iterator, MutableMapping
from pathlib import Path


#: OpenMP settings that decide how idle threads wait (GNU libgomp, LLVM/Intel libomp):
#: when the user set any of them, the user's choice stands.
WAIT_POLICY_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME", "KMP_LIBRARY")

# Set by apply_wait_policy: torch was imported before it, so torch's runtime spins.
_torch_loaded_first = False
_torch_warned = False


#: GNU OpenMP spins this many times (about 0.1 ms) before a waiting thread sleeps. Chosen on
#: this project's 2-core machine (2026-11-24): 50,000 x 136 LambdaMART on 2 threads 2.06 s with
#: 0 spins, 1.87 s with 3,000, 1.65 s with 10,000, 1.74 s with 30,000 and 1.77 s with 100,000;
#: two fits at once still take about 2.1x their time alone (benchmarks/bench_contention.py).
SPIN_COUNT = 10_000


def apply_wait_policy(environ: MutableMapping[str, str] = os.environ) -> bool:
    """Make OpenMP threads spin briefly, then sleep while they wait, unless the user chose.

    Sets ``OMP_WAIT_POLICY=PASSIVE`` (LLVM and Intel runtimes: sleep at once) and
    ``GOMP_SPINCOUNT`` to :data:`SPIN_COUNT` (GNU libgomp, numba's and torch's runtime on
    Linux: an explicit count takes precedence over the policy; its own default is 300,000
    spins, 0 under ``PASSIVE``). An OpenMP runtime reads the variables once, when it is
    loaded: numba's ``omp`` threading layer at the first parallel loop, torch's when torch
    is imported. So this runs in ``ranklearn``'s package init; a runtime loaded earlier by
    another library (LightGBM, or torch imported first) keeps its own setting.

    Parameters
    ----------
    environ : mutable mapping, default ``os.environ``
        The environment to change.

    Returns
    -------
    bool
        True when the policy was set, False when one of :data:`WAIT_POLICY_SETTINGS` was
        already there.
    """
    global _torch_loaded_first
    if any(name in environ for name in WAIT_POLICY_SETTINGS):
        return False
    environ["OMP_WAIT_POLICY"] = "PASSIVE"
    environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
    _torch_loaded_first = environ is os.environ and "torch" in sys.modules
    return True


def _caller_level() -> int:
    """``stacklevel`` of the first frame outside the ranklearn package (the user's call)."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def warn_if_torch_spins() -> None:
    """Warn (once) when torch runs on several threads of an OpenMP runtime that spins while it waits.

    That is torch imported before ``ranklearn`` with no wait policy of the user's: beside
    other busy processes, a neural fit then takes many times longer (RankNet on 2 threads:
    40 s instead of 3 s on a loaded 2-core machine).
    """
    global _torch_warned
    torch = sys.modules.get("torch")
    if _torch_loaded_first and not _torch_warned and torch is not None and torch.get_num_threads() > 1:
        _torch_warned = True
        warnings.warn(
            "torch was imported before ranklearn, so its OpenMP threads spin while they wait and a neural fit "
            "can slow down many times beside other busy processes; import ranklearn first, set "
            "OMP_WAIT_POLICY=PASSIVE before starting Python, or use n_jobs=1",
            RuntimeWarning,
            stacklevel=_caller_level(),
        )


def cgroup_cpu_limit(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """CPUs allowed by a cgroup quota (v2 ``cpu.max``, v1 ``cfs_quota_us``) under ``root``, or None."""
    candidates = (
        (root / "cpu.max", None),
        (root / "cpu" / "cpu.cfs_quota_us", root / "cpu" / "cpu.cfs_period_us"),
    )
    for quota_path, period_path in candidates:
        try:
            if period_path is None:
                quota_text, _, period_text = quota_path.read_text().strip().partition(" ")
            else:
                quota_text, period_text = quota_path.read_text().strip(), period_path.read_text().strip()
        except OSError:
            continue
        if quota_text in ("max", "-1"):
            return None
        try:
            quota, period = int(quota_text), int(period_text)
        except ValueError:
            continue
        if quota > 0 and period > 0:
            return max(1, math.ceil(quota / period))
    return None


def available_cpus() -> int:
    """CPUs this process may use: the affinity mask, capped by a cgroup quota."""
    if hasattr(os, "sched_getaffinity"):
        n = len(os.sched_getaffinity(0))
    else:  # macOS, Windows
        n = os.cpu_count() or 1
    limit = cgroup_cpu_limit()
    return max(1, min(n, limit) if limit is not None else n)


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Threads for ``n_jobs`` (None or -1: :func:`available_cpus`), never above numba's pool.

    Raises
    ------
    ValueError
        If ``n_jobs`` is not None, -1 or a positive integer.
    """
    import numba  # here, not at the top: `import ranklearn` imports this module and stays light
    if n_jobs is None or n_jobs == -1:
        n = available_cpus()
    elif isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive number of threads, None or -1, got {n_jobs!r}")
    else:
        n = int(n_jobs)
    return max(1, min(n, numba.config.NUMBA_NUM_THREADS))


@contextlib.contextmanager
def numba_threads(n_jobs: int | None) -> Iterator[None]:
    """Run numba's parallel loops on ``n_jobs`` threads (see :func:`resolve_n_jobs`) inside the block.

    One thread runs a ``prange`` loop as a plain loop: on small inputs that avoids waking
    the thread pool, which costs milliseconds when the cores are busy with other work.
    """
    import numba
    before = numba.get_num_threads()
    numba.set_num_threads(resolve_n_jobs(n_jobs))
    try:
        yield
    finally:
        numba.set_num_threads(before)


@contextlib.contextmanager
def thread_limit(n_jobs: int | None) -> Iterator[None]:
    """numba's and (when torch is loaded) torch's intra-op threads set to ``n_jobs`` inside the block."""
    n = resolve_n_jobs(n_jobs)
    torch = sys.modules.get("torch")  # never import torch just to set its threads
    before = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(n)
    try:
        with numba_threads(n):
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(before)
