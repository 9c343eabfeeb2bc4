"""Say so when numba compiles ranklearn's kernels (the first run in a fresh environment).

Every hot loop is ``@njit(cache=True)``: the first run compiles them (tens of seconds on a
small machine) and stores the machine code next to the sources (``__pycache__/*.nbi``) or under
``NUMBA_CACHE_DIR``; later runs load it in milliseconds. :func:`on_first_compile` listens to
numba's compile events, so the command line can say "compiling" at the moment it starts,
and says nothing when everything comes from the cache or nothing is compiled at all.
``ranklearn warm-up`` (:mod:`ranklearn.warmup`) fills the cache ahead of the first run.
"""

from __future__ import annotations

from collections.abc import Callable

from numba.core import event


class _FirstCompile(event.Listener):
    def __init__(self, callback: Callable[[], None], ignore: tuple[str, ...]) -> None:
        self.callback: Callable[[], None] | None = callback
        self.ignore = ignore

    def on_start(self, ev: event.Event) -> None:
        module = getattr(ev.data["dispatcher"].py_func, "__module__", None) or ""  # None for exec-made functions
        # ranklearn's kernels only (numba's own helpers compile inside them, and other code is not ours)
        if self.callback is not None and module.startswith("ranklearn.") and not module.startswith(self.ignore):
            callback, self.callback = self.callback, None  # once per process
            callback()

    def on_end(self, ev: event.Event) -> None:
        pass


_registered = False


def on_first_compile(callback: Callable[[], None], *, ignore: tuple[str, ...] = ()) -> None:
    """Call ``callback`` once, when numba starts compiling the first ranklearn kernel of this
    process whose module does not start with one of ``ignore`` (later calls of this function
    in the same process change nothing)."""
    global _registered
    if not _registered:
        _registered = True
        event.register("numba:compile", _FirstCompile(callback, ignore))
