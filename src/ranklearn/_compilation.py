"""Numba's compilation of ranklearn's kernels: the CPU it compiles for, and saying when it compiles.

Every hot loop is ``@njit(cache=True)``: the first run compiles them (tens of seconds on a
small machine) and stores the machine code next to the sources (``__pycache__/*.nbi``) or under
``NUMBA_CACHE_DIR``; later runs load it in milliseconds. A cache entry is keyed by the source's
content, numba's version and the CPU the code was compiled for.

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
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, MutableMapping
from types import ModuleType

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
