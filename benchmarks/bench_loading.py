"""Loading speed: ranklearn's SVMlight/LETOR reader against scikit-learn's (Cython) one.

Times ``ranklearn.data.load_svmlight`` (dense float32 X, the default, and ``sparse=True``)
and ``sklearn.datasets.load_svmlight_file(path, query_id=True)`` on MQ2008 Fold1 train and
both MSLR sample files. Each reader is called once first (numba compiles or loads its
cache), then the calls alternate; the best of ``--repeat`` runs is reported, as a markdown
table with the ratio ours / sklearn (below 1 means ranklearn is faster). Regenerate with:

    .venv/bin/python benchmarks/bench_loading.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from _common import require_shared_data
from sklearn.datasets import load_svmlight_file

from ranklearn.data import load_svmlight

FILES = ("MQ2008/Fold1/train.txt", "MSLR-sample/msn1.fold1.train.5k.txt", "MSLR-sample/msn1.fold1.test.5k.txt")


def best_times(readers: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best wall time of each reader; the readers alternate so that load spikes hit all of them."""
    for read in readers.values():
        read()  # warm-up: numba cache, page cache
    times: dict[str, list[float]] = {name: [] for name in readers}
    for _ in range(repeat):
        for name, read in readers.items():
            start = time.perf_counter()
            read()
            times[name].append(time.perf_counter() - start)
    return {name: min(ts) for name, ts in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per reader (best is kept)")
    args = ap.parse_args()
    data = require_shared_data()

    print("| file | MB | rows | sklearn ms | ours dense ms | ratio | ours sparse ms | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for rel in FILES:
        path = data / rel
        ours = load_svmlight(path)
        X, y, qid = load_svmlight_file(str(path), query_id=True)
        # the comparison is only meaningful if both read the same numbers
        assert np.array_equal(ours.X, X.toarray().astype(np.float32)) and np.array_equal(ours.y, y)
        best = best_times(
            {
                "sklearn": lambda: load_svmlight_file(str(path), query_id=True),
                "dense": lambda: load_svmlight(path),
                "sparse": lambda: load_svmlight(path, sparse=True),
            },
            args.repeat,
        )
        sk = best["sklearn"]
        print(
            f"| {rel} | {path.stat().st_size / 1e6:.1f} | {ours.n_samples:,} | {sk * 1e3:.1f} "
            f"| {best['dense'] * 1e3:.1f} | {best['dense'] / sk:.2f} "
            f"| {best['sparse'] * 1e3:.1f} | {best['sparse'] / sk:.2f} |",
            flush=True,
        )
    print("\nregenerate: .venv/bin/python benchmarks/bench_loading.py")


if __name__ == "__main__":
    main()
