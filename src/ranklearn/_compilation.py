"""Say so when numba compiles ranklearn's kernels (the first run in a fresh environment).

Every hot loop is ``@njit(cache=True)``: the first run compiles them (tens of seconds on a
small machine) and stores the machine code next to the sources (``__pycache__/*.nbi``) or under
``NUMBA_CACHE_DIR``; later runs load it in milliseconds. :func:`on_first_compile` listens to
numba's compile events, so the command line can say "compiling" at the moment it starts,
and says nothing when everything comes from the cache or nothing is compiled at all.
"""

from __future__ import annotations

from collections.abc import Callable

from numba.core import event


class _FirstCompile(event.Listener):
    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback: Callable[[], None] | None = callback

    def on_start(self, ev: event.Event) -> None:
        if self.callback is not None:
            callback, self.callback = self.callback, None  # once per process
            callback()

    def on_end(self, ev: event.Event) -> None:
        pass


_registered = False


def on_first_compile(callback: Callable[[], None]) -> None:
    """Call ``callback`` once, when numba starts compiling the first function of this process
    (later calls of this function in the same process change nothing)."""
    global _registered
    if not _registered:
        _registered = True
        event.register("numba:compile", _FirstCompile(callback))
