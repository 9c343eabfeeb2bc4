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

Fits that leave ``n_jobs=None`` share the CPUs with each other (:func:`fit_threads`): every
such fit of a user registers in a lock file of the user's temporary directory (one file per
CPU set) and takes its fair share of the CPUs, re-checked after every iteration. Two fits on
2 cores then run on one thread each instead of four threads that wait for each other at
every parallel loop; a fit alone keeps every CPU.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import stat
import sys
import tempfile
import threading
import time
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
    with numba_threads(n):
        # numba first: starting its OpenMP pool can reset the thread count of a torch that
        # shares the runtime (GNU libgomp), so torch's is set after it
        before = torch.get_num_threads() if torch is not None else None
        if torch is not None:
            torch.set_num_threads(n)
        try:
            yield
        finally:
            if torch is not None:
                torch.set_num_threads(before)


# ---------------------------------------------------------------------------- fits share the CPUs

#: Fits that can register at once (bytes of the lock file); a fit finding no free slot runs
#: on its own threads, as before sharing.
FIT_SLOTS = 64

#: Seconds between two looks at the other fits: a look costs :data:`FIT_SLOTS` lock calls
#: (about 0.1 ms), a tree or an epoch is rarely shorter.
REBALANCE_INTERVAL = 0.05

#: Seconds before a process that could not open the lock file tries again.
RETRY_OPEN = 60.0


def fair_share(demands: list[int], cpus: int, index: int) -> int:
    """Threads of fit ``index`` when fits wanting ``demands`` threads share ``cpus`` CPUs.

    Max-min fairness in whole threads: one thread at a time to each fit still below its
    demand, in order, until the CPUs are given out (so a fit that wants one thread leaves
    the rest to the others); at least one thread, even when the fits outnumber the CPUs.

    Examples
    --------
    >>> fair_share([2, 2], 2, 0), fair_share([2, 1], 4, 0), fair_share([4, 4, 4], 4, 0), fair_share([4, 4, 4], 4, 2)
    (1, 2, 2, 1)
    """
    given = [0] * len(demands)
    left = cpus
    while left > 0 and any(g < d for g, d in zip(given, demands)):
        for i, demand in enumerate(demands):
            if left and given[i] < demand:
                given[i] += 1
                left -= 1
    return max(1, given[index])


class RunningFits:
    """The fits running on this machine under this user: one byte of a lock file per process.

    A process with fits running holds an exclusive ``fcntl`` lock on one byte (its slot) and
    writes there the threads its fits want. Another process counts the slots it cannot lock
    (a shared probe, released at once) and reads their bytes. The kernel drops a dead
    process's locks, so a crashed fit never holds CPUs. Fits of one process share its slot
    and its share; a child after ``fork`` starts with no slot (locks are not inherited).
    Processes count each other only when they may run on the same CPUs: the file's name holds
    the CPU set (``fits-<digest of the affinity mask>``), so jobs pinned to separate cores
    (``taskset``, Slurm cpusets) never give way to each other. Without ``fcntl`` (Windows) or
    a usable directory, every fit counts only its own process (the directory is tried again
    after :data:`RETRY_OPEN` seconds).

    Parameters
    ----------
    directory : path or None
        Where the lock files live; None: ``ranklearn-<uid>`` in the temporary directory,
        made private (mode 0700) and used only when this user owns it and nobody else may
        write to it.
    """

    def __init__(self, directory: str | os.PathLike | None = None) -> None:
        self._directory = directory
        self._mutex = threading.Lock()
        self._keys = 0  # never reset: a key made before a reset stays unique
        self._reset()

    def _reset(self) -> None:
        """A process's first state (also a forked child's: the parent's lock is not its own)."""
        self._pid: int | None = None
        self._fd: int | None = None
        self._failed = -math.inf  # when opening the lock file last failed
        self._slot: int | None = None
        self._fits: dict[int, int] = {}  # key -> threads wanted, this process's running fits
        self._seen: tuple[float, list[tuple[int, int]]] = (-math.inf, [])

    def _lock_path(self) -> str | None:
        directory = self._directory
        if directory is None:
            directory = os.path.join(tempfile.gettempdir(), f"ranklearn-{os.getuid()}")
            os.makedirs(directory, mode=0o700, exist_ok=True)
            info = os.lstat(directory)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o022:
                return None  # somebody else's, a link, or writable by others: never lock files there
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        digest = hashlib.sha1(",".join(map(str, cpus)).encode()).hexdigest()[:12]
        return os.path.join(directory, f"fits-{digest}")

    def _open(self) -> int | None:
        """The lock file's descriptor, opened once a process (None: this process runs unshared)."""
        if self._pid != os.getpid():  # a forked child: nothing of the parent's holds
            self._reset()
            self._pid = os.getpid()
        if self._fd is not None and self._slot is None and os.fstat(self._fd).st_nlink == 0:
            os.close(self._fd)  # a temporary-directory cleaner removed the file: the others use a new one
            self._fd = None
        if self._fd is None and time.monotonic() - self._failed >= RETRY_OPEN:
            try:
                import fcntl  # noqa: F401  (POSIX only)

                path = self._lock_path()
                if path is not None:
                    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                    self._fd = os.open(path, flags, 0o600)
            except (ImportError, AttributeError, OSError):
                self._fd = None
            if self._fd is None:
                self._failed = time.monotonic()
        return self._fd

    def _wanted(self) -> int:
        return min(255, sum(self._fits.values()))  # what this process's byte says

    def _publish(self) -> None:
        """Hold a slot while this process has fits, with the threads they want in its byte."""
        fd = self._open()
        if fd is None:
            return
        import fcntl

        if not self._fits:
            if self._slot is not None:
                fcntl.lockf(fd, fcntl.LOCK_UN, 1, self._slot)
                self._slot = None
            return
        if self._slot is None:
            for slot in range(FIT_SLOTS):
                try:
                    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
                except OSError:
                    continue
                self._slot = slot
                break
            else:
                return
        try:
            os.pwrite(fd, bytes([self._wanted()]), self._slot)
        except OSError:
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, self._slot)  # a slot without its byte would mislead the others
            self._slot = None
            raise
        self._seen = (-math.inf, [])

    def new_key(self) -> int:
        """A key for a fit, before it registers (so that an interrupt never leaves it half registered)."""
        with self._mutex:
            self._keys += 1
            return self._keys

    def register(self, key: int, threads: int) -> None:
        """Count fit ``key``, which wants ``threads`` threads, until :meth:`unregister`."""
        with self._mutex:
            self._open()  # first: in a new process it clears the parent's fits, not this one
            self._fits[key] = max(1, int(threads))
            try:
                self._publish()
            except OSError:
                pass  # a full or vanished temporary directory: this fit runs unshared

    def unregister(self, key: int) -> None:
        """The fit ``key`` has ended (nothing to do for a key never registered)."""
        with self._mutex:
            if self._pid != os.getpid() or self._fits.pop(key, None) is None:
                return
            try:
                self._publish()
            except OSError:
                pass

    def _processes(self) -> list[tuple[int, int]]:
        """(slot, threads wanted) of every process with fits, this one included, by slot."""
        import fcntl

        now = time.monotonic()
        if now - self._seen[0] < REBALANCE_INTERVAL:
            return self._seen[1]
        fd, mine = self._fd, self._slot
        wanted = os.pread(fd, FIT_SLOTS, 0).ljust(FIT_SLOTS, b"\0")
        found = []
        for slot in range(FIT_SLOTS):
            if slot == mine:  # never probed: a shared lock on our own byte would replace our exclusive one
                found.append((slot, self._wanted()))
                continue
            try:
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, slot)
            except OSError:  # held: a process with fits running
                found.append((slot, max(1, wanted[slot])))
                continue
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, slot)
        self._seen = (now, found)
        return found

    def threads(self, key: int, cpus: int | None = None) -> int:
        """Threads for fit ``key`` now: its fair share of ``cpus`` (default :func:`available_cpus`)."""
        cpus = available_cpus() if cpus is None else cpus
        with self._mutex:
            fits = self._fits
            if key not in fits:
                raise KeyError(f"fit {key} is not registered")
            ours = cpus
            if self._slot is not None:
                try:
                    processes = self._processes()
                except OSError:
                    processes = []
                slots = [slot for slot, _ in processes]
                if self._slot in slots:
                    ours = fair_share([wanted for _, wanted in processes], cpus, slots.index(self._slot))
            keys = sorted(fits)
            return fair_share([fits[k] for k in keys], ours, keys.index(key))


#: The fits of this machine (the default lock files).
RUNNING_FITS = RunningFits()

_fit_share = threading.local()  # the share of the fit running in this thread (a nested fit takes its part)


def _after_fork_in_child() -> None:
    # the child has one thread and no lock: a mutex held by another thread of the parent would
    # never be released, and a fit the parent was running is not the child's
    RUNNING_FITS._mutex = threading.Lock()
    RUNNING_FITS._reset()
    _fit_share.share = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class FitShare:
    """The threads of one fit; :meth:`rebalance` (a driver callback) follows the other fits.

    Made by :func:`fit_threads`.
    """

    def __init__(self, threads: int, key: int | None, outer: FitShare | None, fits: RunningFits) -> None:
        self.wanted = threads
        self._key, self._outer, self._fits = key, outer, fits
        self._cpus = available_cpus()  # once a fit: it reads the affinity mask and cgroup files
        self._torch = "torch" in sys.modules  # thread_limit restores torch's threads only if it was loaded
        self.current = self.threads()

    def threads(self) -> int:
        """Threads this fit should run on now."""
        if self._outer is not None:
            return min(self.wanted, self._outer.threads())
        if self._key is None:
            return self.wanted
        return min(self.wanted, self._fits.threads(self._key, self._cpus))

    def rebalance(self, *_: object) -> None:
        """Set numba's (and a loaded torch's) threads to this fit's share, if it changed."""
        n = self.threads()
        if n != self.current:
            import numba

            self.current = n
            numba.set_num_threads(n)
            if self._torch:
                sys.modules["torch"].set_num_threads(n)


@contextlib.contextmanager
def fit_threads(n_jobs: int | None, shared: bool, fits: RunningFits | None = None) -> Iterator[FitShare]:
    """:func:`thread_limit` for a fit; with ``shared``, the CPUs are shared with the other fits.

    A shared fit registers in ``fits`` with the threads ``n_jobs`` resolves to and starts on
    its fair share of the CPUs (:func:`fair_share` over every registered process);
    :meth:`FitShare.rebalance` after each iteration follows fits that start or end. A fit
    inside another (a random forest's bags) takes a part of the outer fit's share. Results
    never depend on the thread count, so sharing changes only the time.

    Parameters
    ----------
    n_jobs : int or None
        Threads wanted (see :func:`resolve_n_jobs`).
    shared : bool
        Share the CPUs (the models: ``n_jobs=None``); False: exactly ``n_jobs`` threads.
    fits : RunningFits or None
        The registry; None: :data:`RUNNING_FITS`.
    """
    fits = RUNNING_FITS if fits is None else fits
    wanted = resolve_n_jobs(n_jobs)
    outer = getattr(_fit_share, "share", None)
    key = fits.new_key() if shared and outer is None else None
    try:
        if key is not None:
            fits.register(key, wanted)
        share = FitShare(wanted, key, outer if shared else None, fits)
        _fit_share.share = share if shared else None
        with thread_limit(share.current):
            yield share
    finally:
        _fit_share.share = outer
        if key is not None:
            fits.unregister(key)
