"""Shared helpers of the benchmark scripts: locating ../shared/data and loading LETOR files."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def require_shared_data() -> Path:
    """The shared data folder, or exit with a message when it is absent."""
    if not SHARED_DATA.is_dir():
        sys.exit(f"this benchmark needs {SHARED_DATA} (the shared LETOR data); it is absent")
    return SHARED_DATA


def load_letor(path: Path, **load_kwargs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense float32 X, labels and per-row qids of a LETOR file, via ranklearn's loader
    (``load_kwargs``, e.g. ``query_file`` or ``n_features``, go to ``load_svmlight``)."""
    from ranklearn.data import load_svmlight

    ds = load_svmlight(path, **load_kwargs)
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X)
    return np.ascontiguousarray(X, dtype=np.float32), np.asarray(ds.y, dtype=np.float64), np.asarray(ds.qid)


def group_sizes(qid: np.ndarray) -> np.ndarray:
    """Sizes of the contiguous query blocks (LightGBM's and XGBoost's group format)."""
    from ranklearn.data.groups import group_ptr

    return np.diff(group_ptr(qid))


def block_ids(qid: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... for the consecutive query blocks: sorted ids with the same grouping."""
    sizes = group_sizes(qid)
    return np.repeat(np.arange(sizes.shape[0]), sizes)


class TreeClock:
    """A training callback: the time of every tree's end."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def __call__(self, iteration, total, results) -> None:
        self.times.append(time.perf_counter())

    def per_tree(self) -> float:
        """Seconds per tree between the first and the last tree's end (setup excluded)."""
        return (self.times[-1] - self.times[0]) / (len(self.times) - 1)


def interleaved(repeats: int, fns: dict) -> tuple[dict, dict, list[float]]:
    """Run every function once per round, ``repeats`` rounds, so that the libraries share the
    machine's state: (median seconds by name, last result by name, 1-minute load after each run)."""
    times: dict = {name: [] for name in fns}
    out: dict = {}
    loads = []
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            out[name] = fn()
            times[name].append(time.perf_counter() - t0)
            loads.append(os.getloadavg()[0])
    return {name: float(np.median(t)) for name, t in times.items()}, out, loads


def read_settings(text: str) -> list:
    """The settings of a tuning script: a JSON list, or ``@file.json`` naming a file that holds one."""
    if text.startswith("@"):
        with open(text[1:]) as fh:
            text = fh.read()
    return json.loads(text)
