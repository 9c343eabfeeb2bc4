"""Cold start: the first fit + predict + evaluate in a fresh environment against a warm one (issue 15).

Each scenario runs in a fresh copy of ``src/ranklearn`` (no ``__pycache__``) with
``NUMBA_CACHE_DIR`` pointing to a new empty folder, so nothing compiled before is found. A child
process times each step (import, load MQ2008 Fold1 train.txt, fit 10 trees, predict, NDCG@10) in
wall and CPU time and records the compile events of ranklearn's kernels; it runs twice: the first
run compiles, the second loads the cache. The second scenario runs ``python -m ranklearn.warmup``
(what ``make demo`` / ``make test`` run after installing) first. The cores are shared: the load
average is printed before and after each run, and CPU time beside wall time.

    .venv/bin/python benchmarks/bench_coldstart.py [--fold ../shared/data/MQ2008/Fold1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, require_shared_data

STEPS = ("import", "load", "fit", "predict", "ndcg@10")
# The timed child: every step, wall and CPU, and the compile time of each ranklearn kernel (its
# own time: the kernels it calls are counted on their own line; numba's helpers are counted in).
# ranklearn first: numba imported before it would keep compiling for this exact CPU, not the level
# ranklearn picks (ranklearn._compilation.select_cpu_target), and miss the warm-up's kernels.
CHILD = r"""
import json, sys, time
import ranklearn
from numba.core import event
compiles, stack = {}, []
class Timer(event.Listener):
    def on_start(self, ev):
        stack.append([time.perf_counter(), 0.0])
    def on_end(self, ev):
        t0, nested = stack.pop()
        d = ev.data["dispatcher"].py_func
        took = time.perf_counter() - t0
        if d.__module__.startswith("ranklearn."):
            if stack:
                stack[-1][1] += took
            name = d.__module__[len("ranklearn."):] + "." + d.__qualname__
            compiles[name] = compiles.get(name, 0.0) + took - nested
event.register("numba:compile", Timer())
steps = {}
def step(name, fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    steps[name] = (time.perf_counter() - w, time.process_time() - c)
    return out
def imports():
    from ranklearn.data import load_svmlight
    from ranklearn.metrics import get_metric
    from ranklearn.models import LambdaMART
    return load_svmlight, get_metric, LambdaMART
load_svmlight, get_metric, LambdaMART = step("import", imports)
ds = step("load", lambda: load_svmlight(sys.argv[1]))
model = step("fit", lambda: LambdaMART(n_estimators=10, random_state=0).fit(ds.X, ds.y, qid=ds.qid))
scores = step("predict", lambda: model.predict(ds.X))
value = step("ndcg@10", lambda: get_metric("ndcg@10").mean(ds.y, scores, ds.ptr))
print(json.dumps({"steps": steps, "compiles": compiles, "ndcg": value}))
"""


def _load() -> str:
    return "%.2f %.2f %.2f" % os.getloadavg()


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cmd: list[str], env: dict) -> tuple[subprocess.CompletedProcess, float, float, str]:
    """Run ``cmd``: (result, wall seconds, CPU seconds of it and its children, load before -> after)."""
    before, cpu, w = _load(), _child_cpu(), time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return out, time.perf_counter() - w, _child_cpu() - cpu, f"{before} -> {_load()}"


def scenario(train: Path, warm_up: bool) -> dict:
    """Fresh package copy and cache; optionally the warm-up; then the timed child twice."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(REPO / "src" / "ranklearn", Path(tmp) / "pkg" / "ranklearn",
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "pkg"), "NUMBA_CACHE_DIR": str(Path(tmp) / "cache"),
               "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
        result: dict = {"runs": []}
        if warm_up:
            out, wall, cpu, load = _run([sys.executable, "-m", "ranklearn.warmup", "2"], env)
            result["warm_up"] = (wall, cpu, load, out.stdout.strip())
        for _ in range(2):
            out, wall, cpu, load = _run([sys.executable, "-c", CHILD, str(train)], env)
            result["runs"].append({**json.loads(out.stdout), "wall": wall, "cpu": cpu, "load": load})
        return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fold", type=Path, default=None, help="LETOR fold folder with train.txt (MQ2008 Fold1)")
    args = ap.parse_args()
    train = (args.fold or require_shared_data() / "MQ2008" / "Fold1") / "train.txt"
    print(f"data: {train}; 10 trees of 31 leaves; {os.cpu_count()} cores (shared)\n", flush=True)
    cold = scenario(train, warm_up=False)
    warmed = scenario(train, warm_up=True)
    runs = {"fresh, first run": cold["runs"][0], "second run (cache filled)": cold["runs"][1],
            "first run after the warm-up": warmed["runs"][0]}  # fmt: skip

    print("Wall seconds of each step inside the process (CPU seconds in brackets):\n")
    print("| step | " + " | ".join(runs) + " |")
    print("|---" * (len(runs) + 1) + "|")
    for name in STEPS:
        cells = [f"{r['steps'][name][0]:.2f} ({r['steps'][name][1]:.2f})" for r in runs.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    cells = [f"**{r['wall']:.1f}** ({r['cpu']:.1f})" for r in runs.values()]
    print("| whole process, interpreter start included | " + " | ".join(cells) + " |")
    print("| load average before -> after | " + " | ".join(r["load"] for r in runs.values()) + " |")
    print("| ranklearn kernels compiled | " + " | ".join(str(len(r["compiles"])) for r in runs.values()) + " |")

    first, second, after = runs.values()
    print(f"\nFirst run minus warm run: {first['wall'] - second['wall']:.1f} s wall "
          f"({first['cpu'] - second['cpu']:.1f} s CPU) without the warm-up; "
          f"{after['wall'] - second['wall']:.1f} s wall ({after['cpu'] - second['cpu']:.1f} s CPU) after it.")
    wall, cpu, load, said = warmed["warm_up"]
    print(f"Warm-up (`python -m ranklearn.warmup 2`, once after installing): {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"of its processes, load {load}. It printed:\n")
    print("```\n" + said + "\n```\n")
    top = sorted(first["compiles"].items(), key=lambda kv: -kv[1])
    print(f"Where the first run's compile time goes ({sum(first['compiles'].values()):.1f} s wall in "
          f"{len(top)} kernels; each kernel's own time, numba's helpers included):\n")
    print("| kernel | seconds |\n|---|---|")
    for name, seconds in top[:12]:
        print(f"| {name} | {seconds:.2f} |")
    print(f"\nNDCG@10 on train (same in every run): {first['ndcg']:.4f} / {second['ndcg']:.4f} / {after['ndcg']:.4f}")
    print("\nRegenerate: .venv/bin/python benchmarks/bench_coldstart.py")


if __name__ == "__main__":
    main()
