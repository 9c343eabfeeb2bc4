"""Start-up (issue 30, point 5): each command's wall time, and the first fit after a plain install.

Part 1, commands: ``ranklearn --version``, ``--help``, ``predict`` of a saved LambdaMART and linear
model on 1,000 rows, ``evaluate`` of a score file and ``trec-eval`` of a small run, each the median
of 5 fresh processes (kernels already in numba's cache: a warm install), with the import time of
lightgbm and xgboost beside them (the peers' floor: a process that only imports them), runs
interleaved; and which heavy libraries each command's process imported.

Part 2, cold start: a fit + predict + NDCG@10 (10 trees on MQ2008 Fold1 train.txt, as
``bench_coldstart.py``) in a fresh copy of the package (no ``__pycache__``, new file times: what
``pip install`` gives), first run against second run, for the options of making the first run cheap:

* ``today``: nothing shipped; the first run compiles every kernel it calls for this host's CPU;
* ``shipped cache``: the package is built with its kernels compiled for a portable CPU level
  (``x86-64-v3``: AVX2/FMA, every x86-64 CPU since 2015) into its ``__pycache__`` (what
  ``tools/build_kernel_cache.py`` does before a wheel is built), then copied to a new place; the
  first run in the copy loads them (ranklearn selects that CPU level when the host has it);
* ``NUMBA_OPT=1``: nothing shipped, LLVM's lighter optimization (compile time against run time).

A warm LambdaMART fit on larger synthetic data (host CPU against ``x86-64-v3``, and
``NUMBA_OPT=1``) gives what each option costs at run time. The cores are shared with other
jobs: the 1-minute load average is printed beside every timing.

    .venv/bin/python benchmarks/bench_startup.py [--parts commands,coldstart] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, require_shared_data
from bench_coldstart import CHILD

HEAVY = ("sklearn", "scipy", "torch", "dask", "pyspark", "numba", "pandas", "matplotlib")
# A warm fit, to see what an option costs at run time: 60,000 rows x 40 features, 30 trees.
SPEED_CHILD = r"""
import json, time
from ranklearn.datasets import make_ranking
from ranklearn.models import LambdaMART
X, y, qid = make_ranking(600, 40, random_state=0, return_X_y=True)
LambdaMART(n_estimators=2, random_state=0).fit(X, y, qid).predict(X)  # compiled or loaded here
times = []
for _ in range(3):
    t = time.perf_counter()
    model = LambdaMART(n_estimators=30, random_state=0).fit(X, y, qid)
    times.append(time.perf_counter() - t)
print(json.dumps({"fit": sorted(times)[1], "checksum": float(model.predict(X).sum())}))
"""


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def _copy_package(dest: Path, source: Path, *, with_cache: bool) -> None:
    """A copy of the package with new file times; numba's cache files kept when ``with_cache``."""
    skip = ["*.pyc"] if with_cache else ["__pycache__"]
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*skip), copy_function=shutil.copy)


def _env(pkg: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    return {**env, "PYTHONPATH": str(pkg), "PYTHONDONTWRITEBYTECODE": "1", **extra}


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[str, float, str, float]:
    """Run ``cmd``: (stdout, wall seconds, 1-min load after, CPU seconds of it and its children)."""
    start, cpu = time.perf_counter(), _child_cpu()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed:\n{out.stderr[-3000:]}")
    return out.stdout, wall, _load(), _child_cpu() - cpu


# ---------------------------------------------------------------- part 1: commands

#: run in the child: the command, then which heavy libraries its process imported (stderr's last line)
CLI_CHILD = r"""
import sys
sys.argv = ["ranklearn", *sys.argv[1:]]
from ranklearn.cli import run
try:
    run()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = [m for m in %r if m in sys.modules]
print("HEAVY", len(sys.modules), ",".join(heavy) or "-", file=sys.stderr)
sys.exit(code)
""" % (HEAVY,)


def _fixtures(folder: Path, data: Path) -> dict[str, list[str]]:
    """Model files (LambdaMART, linear), 1,000 rows to score, a score file and a TREC run: the commands' inputs."""
    import numpy as np

    from ranklearn.data import from_arrays, load_svmlight, save_svmlight
    from ranklearn.io.trec import run_lines
    from ranklearn.models import LambdaMART, LinearRegression

    train = load_svmlight(data / "MQ2008" / "Fold1" / "train.txt")
    X, y, qid = np.asarray(train.X.toarray() if hasattr(train.X, "toarray") else train.X), train.y, train.qid
    rows = folder / "rows.txt"
    save_svmlight(from_arrays(X[:1000], y[:1000], qid[:1000]), rows)
    LambdaMART(n_estimators=100, random_state=0).fit(X, y, qid).save(folder / "lambdamart.json")
    LinearRegression().fit(X, y, qid).save(folder / "linear.json")
    scores = folder / "scores.txt"
    scores.write_text("".join(f"{v!r}\n" for v in X[:1000, 0].astype(float).tolist()))
    qrels, run = folder / "qrels", folder / "run"
    qrels.write_text("".join(f"{q} 0 d{i} {int(g)}\n" for i, (q, g) in enumerate(zip(qid[:1000], y[:1000]))))
    lines = run_lines(qid[:1000], [f"d{i}" for i in range(1000)], X[:1000, 0].astype(float), "bench")
    run.write_text("".join(line + "\n" for line in lines))
    return {
        "ranklearn --version": ["--version"],
        "ranklearn --help": ["--help"],
        "ranklearn predict (LambdaMART, 100 trees), 1,000 rows": ["predict", "--model", str(folder / "lambdamart.json"),
                                                                   "--data", str(rows), "--out", str(folder / "o1")],
        "ranklearn predict (linear), 1,000 rows": ["predict", "--model", str(folder / "linear.json"), "--data", str(rows),
                                                   "--out", str(folder / "o2")],
        "ranklearn evaluate (1,000 rows, ndcg@10)": ["evaluate", "--data", str(rows), "--scores", str(scores)],
        "ranklearn trec-eval (1,000 lines)": ["trec-eval", str(qrels), str(run)],
    }  # fmt: skip


PEERS = {"import lightgbm": "import lightgbm", "import xgboost": "import xgboost"}


def _baseline(rev: str, dest: Path) -> Path:
    """The ``src`` folder of commit ``rev`` of this repository, extracted to ``dest``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "src"


def commands(data: Path, repeats: int, baseline: str | None) -> None:
    print("## Commands: median wall time of fresh processes (kernels in numba's cache)\n", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        cases = _fixtures(Path(tmp), data)
        trees = {"this tree": (REPO / "src", {})}
        if baseline:  # the same commands on the code before the change, with a numba cache of its own
            trees[f"before ({baseline})"] = (_baseline(baseline, Path(tmp)), {"NUMBA_CACHE_DIR": str(Path(tmp) / "nc")})
        jobs: dict[tuple[str, str], tuple[list[str], dict[str, str]]] = {}
        for tree, (src, extra) in trees.items():
            env = _env(src, extra)
            env.pop("PYTHONDONTWRITEBYTECODE")  # an installed package has its .pyc
            jobs.update({(name, tree): ([sys.executable, "-c", CLI_CHILD, *args], env) for name, args in cases.items()})
        jobs.update({(name, "-"): ([sys.executable, "-c", code], _env(REPO / "src", {})) for name, code in PEERS.items()})
        for cmd, env in jobs.values():  # once untimed: kernels compiled or loaded, files in the page cache
            subprocess.run(cmd, env=env, capture_output=True)
        times: dict[tuple[str, str], list[tuple[float, float, str]]] = {key: [] for key in jobs}
        heavy: dict[tuple[str, str], str] = {}
        for _ in range(repeats):  # interleaved: every command once per round
            for key, (cmd, env) in jobs.items():
                start, cpu = time.perf_counter(), _child_cpu()
                out = subprocess.run(cmd, env=env, capture_output=True, text=True)
                times[key].append((time.perf_counter() - start, _child_cpu() - cpu, _load()))
                if out.returncode != 0:
                    raise SystemExit(f"{key} failed:\n{out.stderr[-2000:]}")
                line = [ln for ln in out.stderr.splitlines() if ln.startswith("HEAVY")]
                if line:
                    _, count, libs = line[-1].split()
                    heavy[key] = f"{count} | {libs}"
    print(f"| command | code | median wall s ({repeats} processes) | median CPU s | 1-min load per run | "
          f"modules imported | heavy libraries imported |")  # fmt: skip
    print("|---|---|---:|---:|---|---:|---|")
    rows = [(name, tree) for name in cases for tree in trees] + [(name, "-") for name in PEERS]
    for name, tree in rows:
        runs = times[(name, tree)]
        wall, cpu = statistics.median(t for t, _, _ in runs), statistics.median(c for _, c, _ in runs)
        loads = " ".join(load for _, _, load in runs)
        print(f"| {name} | {tree} | {wall:.3f} | {cpu:.3f} | {loads} | {heavy.get((name, tree), '- | -')} |")
    print(f"\nheavy libraries looked for: {', '.join(HEAVY)}; python {sys.version.split()[0]}. CPU: user + system "
          "time of the process and its children; under load, read CPU and ratios rather than wall seconds.")


# ---------------------------------------------------------------- part 2: cold start


def _host_cpu() -> str:
    import llvmlite.binding as ll

    return ll.get_host_cpu_name()


#: option -> (environment, whether the package is built with its kernels compiled);
#: NUMBA_CPU_NAME=<this CPU> is numba's default target (what ranklearn did before)
OPTIONS = {
    "today (this CPU, nothing shipped)": ({"NUMBA_CPU_NAME": _host_cpu()}, False),
    "shipped cache (x86-64-v3)": ({}, True),
    "NUMBA_OPT=1 (this CPU, nothing shipped)": ({"NUMBA_CPU_NAME": _host_cpu(), "NUMBA_OPT": "1"}, False),
}


def coldstart(train: Path, only: str | None = None) -> None:
    print(f"## Cold start: first run after a plain install\n\ndata: {train}; 10 trees of 31 leaves; "
          f"{os.cpu_count()} cores (shared)\n", flush=True)  # fmt: skip
    rows, speeds = [], {}
    for name, (extra, shipped) in OPTIONS.items():
        if only is not None and only not in name:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            build, install = Path(tmp) / "build", Path(tmp) / "install"
            _copy_package(build / "ranklearn", REPO / "src" / "ranklearn", with_cache=False)
            built = ""
            if shipped:  # what tools/build_kernel_cache.py does before the wheel is made
                _, wall, load, cpu = _timed([sys.executable, str(REPO / "tools" / "build_kernel_cache.py"),
                                             "--package", str(build / "ranklearn")], _env(build, extra))  # fmt: skip
                size = sum(p.stat().st_size for p in (build / "ranklearn").rglob("*.nb[ic]"))
                built = f"built in {wall:.0f} s wall, {cpu:.0f} s CPU (load {load}), {size / 2**20:.1f} MiB"
            _copy_package(install / "ranklearn", build / "ranklearn", with_cache=True)
            env = _env(install, extra)
            runs = []
            for _ in range(2):
                out, wall, load, cpu = _timed([sys.executable, "-c", CHILD, str(train)], env)
                runs.append({**json.loads(out), "wall": wall, "load": load, "cpu": cpu})
            out, _, load, _ = _timed([sys.executable, "-c", SPEED_CHILD], env)
            speeds[name] = {**json.loads(out), "load": load}
        first, second = runs
        rows.append((name, first, second, built))
        print(f"{name}: first {first['wall']:.1f} s wall {first['cpu']:.1f} s CPU (load {first['load']}), second "
              f"{second['wall']:.1f} s wall {second['cpu']:.1f} s CPU (load {second['load']}), "
              f"{len(first['compiles'])} kernels compiled; {built}", flush=True)  # fmt: skip
        top = sorted(first["compiles"].items(), key=lambda kv: -kv[1])[:8]
        if top:
            print("   slowest compiles: " + ", ".join(f"{k} {v:.1f}" for k, v in top), flush=True)

    print("\n| option | first run s wall (CPU) | second run s wall (CPU) | first - second s wall (CPU) | "
          "kernels compiled in the first | load (first; second) | warm fit, 60,000 x 40, 30 trees s | build |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---|---:|---|")
    for name, first, second, built in rows:
        speed = speeds[name]
        print(f"| {name} | {first['wall']:.1f} ({first['cpu']:.1f}) | {second['wall']:.1f} ({second['cpu']:.1f}) | "
              f"**{first['wall'] - second['wall']:.1f}** ({first['cpu'] - second['cpu']:.1f}) | {len(first['compiles'])} | "
              f"{first['load']}; {second['load']} | {speed['fit']:.2f} (load {speed['load']}) | {built or '-'} |")  # fmt: skip
    sums = {name: round(s["checksum"], 6) for name, s in speeds.items()}
    print(f"\nSum of the warm fit's predictions per option (the same model whatever the CPU level): {sums}")
    print("First and second run: whole processes (interpreter start, import, load, fit, predict, NDCG@10).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="commands,coldstart")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline", default=None, help="also time the commands on this commit's code (e.g. main)")
    ap.add_argument("--fold", type=Path, default=None, help="LETOR fold folder with train.txt (MQ2008 Fold1)")
    ap.add_argument("--option", default=None, help="cold start: only the options whose name contains this, e.g. shipped")
    args = ap.parse_args()
    data = require_shared_data()
    parts = args.parts.split(",")
    if "commands" in parts:
        commands(data, args.repeats, args.baseline)
    if "coldstart" in parts:
        coldstart((args.fold or data / "MQ2008" / "Fold1") / "train.txt", args.option)
    print("\nRegenerate: .venv/bin/python benchmarks/bench_startup.py")


if __name__ == "__main__":
    main()
