"""Peak memory of training: ranklearn's LambdaMART against LightGBM's lambdarank, same data and settings.

Each library runs in its own fresh subprocess, which generates the same synthetic set
(``ranklearn.datasets.make_ranking``, 720,000 x 136 float32 by default: 5,760 queries of 125
documents), then measures its resident memory (the *baseline*: interpreter, libraries and
the data), resets the kernel's high-water mark (``/proc/self/clear_refs``), trains, and
reads the peak resident memory during training (``VmHWM``; a psutil polling thread
cross-checks it and stands in where ``clear_refs`` is not available). Reported per
library: baseline, training peak, and the peak above the baseline - the memory training
itself needs, with the data counted the same for both. Settings are identical: trees,
leaves, 255 bins, minimum documents per leaf, learning rate, threads.

Regenerate with::

    .venv/bin/python benchmarks/bench_memory.py [--queries 5760 --docs 125 --features 136 --trees 20 --threads 2]

``--child NAME`` runs one measurement and prints it as JSON (used internally).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

MiB = 2**20


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _reset_peak() -> bool:
    """Reset this process's peak RSS (Linux >= 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_rss() -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class Poller:
    """Samples RSS every few milliseconds in a thread; ``peak`` is the largest sample."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss())
            time.sleep(self.interval)

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())


def child(args: argparse.Namespace) -> dict:
    """One measurement, in this (fresh) process."""
    import numpy as np

    from ranklearn.datasets import make_ranking

    ds = make_ranking(
        n_queries=args.queries, n_features=args.features, docs_per_query=(args.docs, args.docs),
        random_state=0,
    )  # fmt: skip
    X = np.ascontiguousarray(ds.X, dtype=np.float32)
    y = np.asarray(ds.y, dtype=np.float64)
    qid = ds.qid
    sizes = ds.query_sizes
    del ds
    if args.child == "ranklearn":
        from ranklearn.models import LambdaMART

        model = LambdaMART(
            n_estimators=args.trees, num_leaves=args.leaves, max_bins=args.bins, min_samples_leaf=args.min_leaf,
            learning_rate=0.1, n_jobs=args.threads, random_state=0,
        )  # fmt: skip

        def train():
            model.fit(X, y, qid=qid)
    else:
        import lightgbm as lgb

        params = {
            "objective": "lambdarank", "num_leaves": args.leaves, "max_bin": args.bins,
            "min_data_in_leaf": args.min_leaf, "learning_rate": 0.1, "num_threads": args.threads,
            "verbose": -1, "seed": 0, "deterministic": True, "force_row_wise": False,
        }  # fmt: skip

        def train():
            data = lgb.Dataset(X, label=y, group=sizes, params={"max_bin": args.bins, "verbose": -1})
            lgb.train(params, data, num_boost_round=args.trees)

    import gc

    gc.collect()
    baseline = _rss()
    reset = _reset_peak()
    start = time.perf_counter()
    with Poller() as poller:
        train()
    seconds = time.perf_counter() - start
    hwm = _peak_rss() if reset else None
    peak = max(poller.peak, hwm or 0)
    return {
        "library": args.child,
        "baseline": baseline,
        "peak": peak,
        "above_baseline": peak - baseline,
        "peak_polled": poller.peak,
        "peak_hwm": hwm,
        "data_bytes": int(X.nbytes),
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=5760)
    parser.add_argument("--docs", type=int, default=125)
    parser.add_argument("--features", type=int, default=136)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--bins", type=int, default=255)
    parser.add_argument("--min-leaf", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--child", choices=["ranklearn", "lightgbm"], help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    passed = [
        f"--queries={args.queries}", f"--docs={args.docs}", f"--features={args.features}", f"--trees={args.trees}",
        f"--leaves={args.leaves}", f"--bins={args.bins}", f"--min-leaf={args.min_leaf}", f"--threads={args.threads}",
    ]  # fmt: skip
    results = []
    for library in ("ranklearn", "lightgbm"):
        proc = subprocess.run(
            [sys.executable, __file__, "--child", library, *passed],
            capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )  # fmt: skip
        if proc.returncode != 0:
            sys.exit(f"{library} measurement failed:\n{proc.stderr}")
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    n = args.queries * args.docs
    print(
        f"Training memory, {n:,} x {args.features} float32 ({results[0]['data_bytes'] / MiB:.0f} MiB), "
        f"{args.queries:,} queries of {args.docs}; {args.trees} trees, {args.leaves} leaves, {args.bins} bins, "
        f"min {args.min_leaf} docs/leaf, {args.threads} threads; each library in a fresh process.\n"
    )
    print("| library | baseline (data loaded) MiB | training peak MiB | peak above baseline MiB | train time s |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['library']} | {r['baseline'] / MiB:,.0f} | {r['peak'] / MiB:,.0f} | "
            f"{r['above_baseline'] / MiB:,.0f} | {r['seconds']:.1f} |"
        )
    ours, theirs = results[0]["above_baseline"], results[1]["above_baseline"]
    print(f"\nranklearn / LightGBM, peak above baseline: {ours / theirs:.2f}")
    print(f"regenerate: .venv/bin/python benchmarks/bench_memory.py {' '.join(passed)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
