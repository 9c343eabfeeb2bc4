"""Dask worker preload of ``train --workers``: the local workers leave the terminal's process group.

A Ctrl-C at a terminal sends SIGINT to the whole foreground process group; the local
cluster's worker processes (children of this process, whose nannies run in it) would each
die of it with their own traceback before the command's one line. In a process group of
their own they never see it: the command alone is interrupted, keeps its best model and
closes the cluster, which ends the workers.
"""

from __future__ import annotations

import os
from typing import Any


def dask_setup(worker: Any) -> None:
    """Called in each worker process as it starts."""
    os.setpgid(0, 0)
