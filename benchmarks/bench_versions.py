"""LambdaMART training time of two source trees of ranklearn, in alternating fresh processes.

For a change that must not slow training (a refactor): check out the older commit beside this
one and time both on the same data, interleaved, with the load average beside every run.

    git worktree add --detach /tmp/ranklearn-old <commit>
    .venv/bin/python benchmarks/bench_versions.py /tmp/ranklearn-old/src src [--repeats 3]

Data: the speed benchmark's (200,000 x 136 synthetic, 1,600 queries of 125), 50 trees, 31
leaves, 2 threads; each process warms up (compiles) first and then times one fit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, os, time
from ranklearn import LambdaMART
from ranklearn.datasets import make_ranking
X, y, qid = make_ranking(1600, 136, n_informative=20, docs_per_query=(125, 125), random_state=0, return_X_y=True)
LambdaMART(n_estimators=2, n_jobs=2).fit(X[:2500], y[:2500], qid[:2500]).predict(X[:2500])
t0 = time.perf_counter()
m = LambdaMART(n_estimators=50, num_leaves=31, learning_rate=0.1, min_samples_leaf=20, n_jobs=2, random_state=0).fit(X, y, qid)
seconds = time.perf_counter() - t0
print(json.dumps({"fit": seconds, "load": os.getloadavg()[0], "check": float(m.predict(X[:2000]).sum())}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="src folder of the older ranklearn")
    ap.add_argument("new", type=Path, help="src folder of the newer ranklearn")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for _ in range(args.repeats):
        for side in ("old", "new"):
            env = {**os.environ, "PYTHONPATH": str(getattr(args, side).resolve())}
            out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
            runs[side].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("| source | fit seconds, each run | median | 1-min load, each run |")
    print("|---|---|---|---|")
    for side, path in (("old", args.old), ("new", args.new)):
        fits = [r["fit"] for r in runs[side]]
        loads = ", ".join(f"{r['load']:.2f}" for r in runs[side])
        print(f"| {side} ({path}) | {', '.join(f'{f:.2f}' for f in fits)} | {statistics.median(fits):.2f} | {loads} |")
    same = all(r["check"] == runs["old"][0]["check"] for r in runs["old"] + runs["new"])
    print(f"\nnew / old (medians): {statistics.median(r['fit'] for r in runs['new']) / statistics.median(r['fit'] for r in runs['old']):.2f}; "
          f"the two give {'the same' if same else 'different'} predictions on the first 2,000 rows.")


if __name__ == "__main__":
    main()
