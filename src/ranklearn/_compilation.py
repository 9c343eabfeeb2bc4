"""Numba's compilation of ranklearn's kernels: the CPU it compiles for, and saying when it compiles.

Every hot loop is ``@njit(cache=True)``: the first run compiles them (tens of seconds on a
small machine) and stores the machine code next to the sources (``__pycache__/*.nbi``) or under
``NUMBA_CACHE_DIR``; later runs load it in milliseconds. A cache entry is keyed by the source's
content, numba's version and the CPU the code was compiled for: the kernel's own source only, not
that of the kernels it calls in other modules (a source checkout edited there needs its cache deleted).

:func:`select_cpu_target` (run by the package init, before numba loads) makes numba compile for
the portable x86-64 level ``x86-64-v3`` (AVX2, FMA, BMI2: every x86-64 CPU sold since about
2015) rather than this exact CPU, when the CPU has it: then kernels compiled on one machine load
on another, so a package built with its kernels compiled (``tools/build_kernel_cache.py``) starts
at once after ``pip install``. Models are the same bit for bit (no fast-math, so no CPU fuses or
reorders an addition).

:func:`on_first_compile` listens to numba's compile events, so the command line can say
"compiling" at the moment it starts, and says nothing when everything comes from the cache or
nothing is compiled at all; it imports numba only when the command does.
``ranklearn warm-up`` (:mod:`ranklearn.warmup`) fills the cache ahead of the first run.

:func:`kernel` is ``njit`` without importing numba: importing it and starting its CPU target
costs about half a second of CPU, most of a short command (``ranklearn predict`` of 1,000 rows).
A :class:`Kernel` is compiled (or loaded from the cache) on its first compiled call; a caller
whose input is small runs it with :meth:`Kernel.run` ``(..., small=True)``, which, as long as
numba has not been imported by anything else, runs the same Python function interpreted (the
kernels it calls too, ``prange`` as ``range``): the same operations in the same order on the
same IEEE doubles, so the same results bit for bit (the tests compare both).
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, MutableMapping
from types import FunctionType, ModuleType
from typing import Any

#: numba's CPU level for ranklearn's kernels on x86-64 (LLVM's name) and the CPU flags it needs
#: (``/proc/cpuinfo``'s names: x86-64-v2's and v3's, as the x86-64 psABI lists them)
PORTABLE_CPU = "x86-64-v3"
PORTABLE_CPU_FLAGS = frozenset(
    "cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave".split()
)


def _cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The first CPU's flags (Linux), empty where they cannot be read."""
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def select_cpu_target(environ: MutableMapping[str, str] = os.environ, *, flags: frozenset[str] | None = None) -> bool:
    """Have numba compile for :data:`PORTABLE_CPU` when this is an x86-64 CPU that has it.

    Sets ``NUMBA_CPU_NAME`` and ``NUMBA_CPU_FEATURES`` (numba reads them when it is imported)
    unless the user set either (their choice stands, ``NUMBA_CPU_NAME=<this CPU's name>``
    restores numba's default). Another architecture, a CPU without AVX2, no
    ``/proc/cpuinfo``, or numba imported before ranklearn: nothing changes (the kernels compile
    for this CPU, as numba's other code in the process). Returns whether it set them. The
    variables are inherited by child processes, whose numba code then compiles for that level too.
    """
    if "NUMBA_CPU_NAME" in environ or "NUMBA_CPU_FEATURES" in environ:
        return False
    if "numba" in sys.modules:
        # numba re-reads its settings at every compile, but a CPU it has compiled for stays: code for
        # this CPU would be stored under the portable level's name, and load where it cannot run
        return False
    if not hasattr(os, "uname") or os.uname().machine != "x86_64":  # (platform costs an import)
        return False
    if not PORTABLE_CPU_FLAGS <= (_cpu_flags() if flags is None else flags):
        return False
    environ["NUMBA_CPU_NAME"] = PORTABLE_CPU
    environ["NUMBA_CPU_FEATURES"] = ""  # the level's own features, not this CPU's
    return True


def on_first_compile(callback: Callable[[], None], *, ignore: tuple[str, ...] = ()) -> None:
    """Call ``callback`` once, when numba starts compiling the first ranklearn kernel of this
    process whose module does not start with one of ``ignore`` (later calls of this function
    in the same process change nothing). Numba is not imported for it: the listener is
    registered when numba is."""
    global _registered
    if _registered:
        return
    _registered = True
    if "numba" in sys.modules:
        _listen(callback, ignore)
    else:
        sys.meta_path.insert(0, _AfterImport("numba", lambda: _listen(callback, ignore)))


_registered = False


def _listen(callback: Callable[[], None], ignore: tuple[str, ...]) -> None:
    from numba.core import event

    class _FirstCompile(event.Listener):
        def __init__(self) -> None:
            self.callback: Callable[[], None] | None = callback

        def on_start(self, ev: event.Event) -> None:
            module = getattr(ev.data["dispatcher"].py_func, "__module__", None) or ""  # None for exec-made functions
            # ranklearn's kernels only (numba's own helpers compile inside them, and other code is not ours)
            if self.callback is not None and module.startswith("ranklearn.") and not module.startswith(ignore):
                run, self.callback = self.callback, None  # once per process
                run()

        def on_end(self, ev: event.Event) -> None:
            pass

    event.register("numba:compile", _FirstCompile())


class _AfterImport:
    """A ``sys.meta_path`` finder that runs ``then`` once, right after the module ``name`` has
    been imported (by anyone), and leaves ``sys.meta_path``: Python has no post-import hook of its
    own. (Duck-typed: importing ``importlib.abc`` costs more than the rest of the package init.)"""

    def __init__(self, name: str, then: Callable[[], None]) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname: str, path=None, target=None):  # noqa: ANN001 (importlib's protocol)
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(fullname)  # by the other finders
        if spec is None or spec.loader is None:
            return spec
        loader, then = spec.loader, self.then

        class _Loader:
            def create_module(self, spec):  # noqa: ANN001
                return loader.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                module.__loader__ = module.__spec__.loader = loader  # the module sees its own loader
                loader.exec_module(module)
                then()

        spec.loader = _Loader()
        return spec


# ---------------------------------------------------------------- kernels compiled on first use


def prange(*args: int) -> range:
    """numba's ``prange`` in a :func:`kernel` (a parallel loop when compiled with
    ``parallel=True``), ``range`` when the kernel runs interpreted."""
    return range(*args)


class _Interpreting(threading.local):
    active = False


_interpreting = _Interpreting()
_DISPATCHER_LOCK = threading.Lock()

#: How :meth:`Kernel.run` runs a small input: ``"auto"``, interpreted while numba is not imported
#: (once it is, a compiled kernel costs less than its interpretation); ``"compiled"`` always
#: (``ranklearn warm-up``, whose tiny data must compile the kernels into the cache);
#: ``"interpreted"`` always (the tests that compare both forms).
SMALL_INPUTS = "auto"


def interprets_small_inputs() -> bool:
    """Whether :meth:`Kernel.run` runs an input its caller calls small interpreted (:data:`SMALL_INPUTS`)."""
    if SMALL_INPUTS == "auto":
        return "numba" not in sys.modules
    return SMALL_INPUTS == "interpreted"


class Kernel:
    """A Python function that numba compiles (``njit(**options)``) on its first compiled call.

    Calling it runs the compiled function, except inside an interpreted run, where a kernel
    calls the Python form of the kernels it calls. To numba, a kernel is its dispatcher
    (``_numba_type_``; ``targetoptions`` and ``py_func`` as a dispatcher's, which its inliner
    reads), so compiled code calls kernels as it calls ``njit`` functions.
    """

    def __init__(self, func: Callable[..., Any], options: dict[str, Any]) -> None:
        functools.update_wrapper(self, func)
        self.py_func = func
        self.targetoptions = options
        self._dispatcher: Any = None
        self._interpreted: Callable[..., Any] | None = None

    @property
    def dispatcher(self) -> Any:
        """numba's dispatcher of the function (numba imported here)."""
        if self._dispatcher is None:
            with _DISPATCHER_LOCK:
                if self._dispatcher is None:
                    self._dispatcher = self._make_dispatcher()
        return self._dispatcher

    def _make_dispatcher(self) -> Any:
        import numba

        names = self.py_func.__globals__
        for name, value in list(names.items()):  # numba knows its own prange only
            if value is prange:
                names[name] = numba.prange  # which, called from Python, is range
        return numba.njit(**self.targetoptions)(self.py_func)

    @property
    def interpreted(self) -> Callable[..., Any]:
        """The Python function as it runs interpreted: the kernels it names are their interpreted
        functions and ``prange`` is ``range`` (globals of its own, so that a call costs no more
        than a Python call: a parser calls a kernel per byte)."""
        if self._interpreted is None:
            f = self.py_func
            names = _interpreted_globals(f.__globals__)
            self._interpreted = FunctionType(f.__code__, names, f.__name__, f.__defaults__, f.__closure__)
        return self._interpreted

    @property
    def _numba_type_(self) -> Any:
        return self.dispatcher._numba_type_

    def __reduce__(self) -> str:
        return self.__qualname__  # pickled by reference, as a function

    def __call__(self, *args: Any) -> Any:
        if _interpreting.active:
            return self.interpreted(*args)
        return self.dispatcher(*args)

    def run(self, *args: Any, small: bool) -> Any:
        """Call the kernel: interpreted when the caller says the input is ``small`` and
        :func:`interprets_small_inputs`, else compiled."""
        if not small or _interpreting.active or not interprets_small_inputs():
            return self(*args)
        _interpreting.active = True  # for kernels reached through a module (``module.kernel``)
        try:
            return self.interpreted(*args)
        finally:
            _interpreting.active = False


#: module name -> the globals of its kernels' interpreted functions
_INTERPRETED_GLOBALS: dict[str, dict[str, Any]] = {}


def _interpreted_globals(names: dict[str, Any]) -> dict[str, Any]:
    """A copy of a module's globals in which its kernels are their interpreted functions (made
    when first asked for: kernels that name each other, across modules too, then share them)."""
    copy = _INTERPRETED_GLOBALS.get(names["__name__"])
    if copy is None:
        copy = _INTERPRETED_GLOBALS[names["__name__"]] = dict(names)
        numba = sys.modules.get("numba")
        for name, value in names.items():
            if value is prange or (numba is not None and value is numba.prange):
                copy[name] = range
            elif isinstance(value, Kernel):
                copy[name] = value.interpreted
    return copy


def kernel(**options: Any) -> Callable[[Callable[..., Any]], Kernel]:
    """``numba.njit(**options)`` as a :class:`Kernel`: numba is imported at the first compiled call."""
    return lambda func: Kernel(func, options)
