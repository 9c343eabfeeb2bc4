"""ranklearn: learning to rank for Python.

LambdaMART (histogram gradient-boosted trees on lambda gradients), RankNet and LambdaRank
(PyTorch, imported lazily), LETOR/SVMlight data, and IR metrics with explicit conventions.
"""

from __future__ import annotations

from typing import Any

from ranklearn._compilation import select_cpu_target
from ranklearn._threads import apply_wait_policy

# Before any OpenMP runtime (numba's, torch's) is loaded: see ranklearn._threads.
apply_wait_policy()
# Before numba is imported: kernels compiled for a portable CPU level (see ranklearn._compilation).
select_cpu_target()

from ranklearn._version import __version__  # noqa: E402 (after the CPU target is chosen)

__all__ = ["LambdaMART", "RankNet", "LambdaRank", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy: `import ranklearn` stays cheap and torch is only imported for the neural models.
    if name in ("LambdaMART", "RankNet", "LambdaRank"):
        from ranklearn import models

        return getattr(models, name)
    raise AttributeError(f"module 'ranklearn' has no attribute {name!r}")
