"""Training under load: a fit beside another fit or a torch job, against the same fit alone.

Every job runs in its own fresh process. A job builds its data and warms up (numba's
cache, torch's thread pool) first, says it is ready, and starts its timed part when the
benchmark releases every job of the scenario at the same moment. Scenarios:

* ``tree alone``, ``neural alone``, ``torch alone``: the reference times;
* ``tree + tree``: two LambdaMART fits started together (a parallel grid search);
* ``tree + torch``: a LambdaMART fit beside a plain torch MLP training loop that knows
  nothing of ranklearn (torch's own defaults), stopped when the fit ends;
* ``tree + neural``: a LambdaMART fit and a RankNet fit started together.

Each ratio is the time under contention over the median time alone (the torch loop:
its steps per second alone over those while it shared the cores). Targets (issue 15):
two fits at most 2.5x each, a fit beside a torch training at most 3x (the tree fit beside
RankNet too, and RankNet beside the tree fit, the same treatment). Every job uses
``n_jobs=None``, as a user's default does: all CPUs, shared with the other ranklearn fits
running (``ranklearn._threads.fit_threads``). For comparison, the same jobs unshared (the
tree fit ``n_jobs=-1``, RankNet ``n_jobs=1``: the threads ``None`` gives them alone), and
unshared with GNU OpenMP's spinning wait (ranklearn before both). Scenarios run round-robin,
``--repeats`` times; each figure is the median, with the 1-minute load average taken
before the scenario started (the jobs of the scenario are not in it yet) and the CPU
time of the job (``time.process_time``), which shows threads that spin while they wait.

    .venv/bin/python benchmarks/bench_contention.py [--repeats 3] [--quick]
        [--env NUMBA_THREADING_LAYER=omp ...]

``--env`` sets variables for the ranklearn jobs only (not the outside torch job), to
compare threading layers and wait policies: ``--env GOMP_SPINCOUNT=300000`` is GNU
OpenMP's own default (threads spin before they sleep), what ranklearn ran with before its
wait policy (``ranklearn._threads.apply_wait_policy``); ``--env NUMBA_THREADING_LAYER=tbb``
needs the ``tbb`` package. This script does not import ranklearn, so that the jobs start
with the caller's environment.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

FEATURES, DOCS = 136, 125
UNSHARED = "BENCH_CONTENTION_UNSHARED"  # set to 1: the jobs' explicit n_jobs, which never share the CPUs


def _data(queries: int):
    from ranklearn.datasets import make_ranking

    return make_ranking(queries, FEATURES, n_informative=20, docs_per_query=(DOCS, DOCS), random_state=0,
                        return_X_y=True)  # fmt: skip


def _wait_for_go() -> None:
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit(0)


def _report(**values) -> None:
    print(json.dumps(values), flush=True)


def _unshared() -> bool:
    return os.environ.get(UNSHARED) == "1"


def worker_tree(args) -> None:
    import numba

    from ranklearn import LambdaMART

    X, y, qid = _data(args.queries)
    params = dict(n_estimators=args.trees, num_leaves=31, learning_rate=0.1, min_samples_leaf=20, random_state=0,
                  n_jobs=-1 if _unshared() else None)  # fmt: skip
    LambdaMART(**{**params, "n_estimators": 2}).fit(X[: 20 * DOCS], y[: 20 * DOCS], qid[: 20 * DOCS])  # warm-up
    _wait_for_go()
    seen: list[int] = []  # numba's threads after each tree (the next tree's)
    w0, c0 = time.perf_counter(), time.process_time()
    LambdaMART(**params).fit(X, y, qid, callbacks=[lambda *_: seen.append(numba.get_num_threads())])
    _report(wall=time.perf_counter() - w0, cpu=time.process_time() - c0, layer=numba.threading_layer(),
            threads=[min(seen), max(seen)])  # fmt: skip


def worker_neural(args) -> None:
    from ranklearn.models import RankNet  # ranklearn before torch, as its wait policy needs

    import torch

    X, y, qid = _data(args.neural_queries)
    params = dict(hidden=(64, 32), n_networks=1, early_stopping_rounds=None, random_state=0,
                  n_jobs=1 if _unshared() else None)  # fmt: skip
    RankNet(**params, n_estimators=1).fit(X[: 20 * DOCS], y[: 20 * DOCS], qid[: 20 * DOCS])  # warm-up
    _wait_for_go()
    seen: list[int] = []  # torch's threads after each epoch
    w0, c0 = time.perf_counter(), time.process_time()
    RankNet(**params, n_estimators=args.epochs).fit(X, y, qid, callbacks=[lambda *_: seen.append(torch.get_num_threads())])
    _report(wall=time.perf_counter() - w0, cpu=time.process_time() - c0, threads=[min(seen), max(seen)])


def worker_torch(args) -> None:
    """A torch training loop that knows nothing of ranklearn, until told to stop."""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(FEATURES, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                              torch.nn.ReLU(), torch.nn.Linear(256, 1))  # fmt: skip
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x, t = torch.randn(1024, FEATURES), torch.randn(1024, 1)

    def step():
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(x), t).backward()
        opt.step()

    for _ in range(5):  # warm-up
        step()
    stop = threading.Event()
    _wait_for_go()
    threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
    w0, c0, steps = time.perf_counter(), time.process_time(), 0
    while not stop.is_set():
        step()
        steps += 1
    wall = time.perf_counter() - w0
    _report(wall=wall, cpu=time.process_time() - c0, steps_per_s=steps / wall, threads=[torch.get_num_threads()] * 2)


WORKERS = {"tree": worker_tree, "neural": worker_neural, "torch": worker_torch}


def run_scenario(kinds: list[str], env: dict[str, str], args) -> tuple[list[dict], float]:
    """Start the jobs, release them together; the torch loop stops when the timed jobs are done
    (alone: after ``--torch-seconds``). ``env`` is added to the ranklearn jobs' environment."""
    base = [sys.executable, __file__, "--queries", str(args.queries), "--trees", str(args.trees),
            "--neural-queries", str(args.neural_queries), "--epochs", str(args.epochs)]  # fmt: skip
    procs = []
    for kind in kinds:
        job_env = dict(os.environ) if kind == "torch" else {**os.environ, **env}
        procs.append(subprocess.Popen([*base, "--worker", kind], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, env=job_env))  # fmt: skip
    for p in procs:
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError(f"a {kinds} job failed to start")
    load = os.getloadavg()[0]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    results: list[dict | None] = [None] * len(procs)
    timed = [i for i, k in enumerate(kinds) if k != "torch"]
    for i in timed:
        results[i] = json.loads(procs[i].stdout.readline())
    if not timed:
        time.sleep(args.torch_seconds)
    for i, p in enumerate(procs):
        if i not in timed:
            p.stdin.write("stop\n")
            p.stdin.flush()
            results[i] = json.loads(p.stdout.readline())
        p.stdin.close()
        if p.wait() != 0:
            raise RuntimeError(f"a {kinds} job exited with status {p.returncode}")
    return results, load


SCENARIOS = {
    "tree alone": ["tree"],
    "neural alone": ["neural"],
    "torch alone": ["torch"],
    "tree + tree": ["tree", "tree"],
    "tree + torch": ["tree", "torch"],
    "tree + neural": ["tree", "neural"],
}
TARGETS = {"tree + tree": {"tree": 2.5}, "tree + torch": {"tree": 3.0}, "tree + neural": {"tree": 3.0, "neural": 3.0}}
#: GNU OpenMP's default spin (what ranklearn ran with before its wait policy), for comparison
SPIN = {"GOMP_SPINCOUNT": "300000"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small data and 1 repeat (a check that it runs)")
    ap.add_argument("--queries", type=int, default=800, help="LambdaMART: queries of 125 documents")
    ap.add_argument("--trees", type=int, default=15)
    ap.add_argument("--neural-queries", type=int, default=400, help="RankNet: queries of 125 documents")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--torch-seconds", type=float, default=3.0, help="the torch loop alone runs this long")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="environment of the ranklearn jobs (repeatable)")  # fmt: skip
    ap.add_argument("--no-spin", action="store_true", help="leave out the runs with GNU OpenMP's spinning wait")
    ap.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        WORKERS[args.worker](args)
        return
    if args.quick:
        args.repeats, args.queries, args.trees, args.neural_queries, args.epochs = 1, 200, 5, 100, 2
        args.torch_seconds = 1.0
    env = dict(item.split("=", 1) for item in args.env)
    settings = {
        "ranklearn's defaults (fits share the CPUs, short spin)": env,
        "unshared (explicit n_jobs), short spin": {**env, UNSHARED: "1"},
    }
    if not args.no_spin:
        settings["unshared, spinning wait (GOMP_SPINCOUNT=300000)"] = {**env, UNSHARED: "1", **SPIN}

    runs: dict[tuple[str, str], list[tuple[list[dict], float]]] = {}
    for _ in range(args.repeats):
        for setting, setting_env in settings.items():
            for name, kinds in SCENARIOS.items():
                if setting_env is not env and name == "torch alone":
                    continue  # the torch loop has no ranklearn in it: one reference is enough
                runs.setdefault((setting, name), []).append(run_scenario(kinds, setting_env, args))
                print(f"  {setting}, {name}: {runs[(setting, name)][-1]}", file=sys.stderr, flush=True)

    def median(key: tuple[str, str], job: int, field: str) -> float:
        return statistics.median(r[0][job][field] for r in runs[key])

    def loads(key: tuple[str, str]) -> str:
        values = [r[1] for r in runs[key]]
        return f"{min(values):.2f}-{max(values):.2f}"

    first = next(iter(settings))
    torch_rate = median((first, "torch alone"), 0, "steps_per_s")
    layer = runs[(first, "tree alone")][0][0][0]["layer"]
    extra = " ".join(f"{k}={v}" for k, v in env.items()) or "none"
    print("Settings: ranklearn's defaults = every job n_jobs=None (the tree fit all CPUs, RankNet one thread, "
          "each registered among the fits that share the CPUs); unshared = the same threads given explicitly "
          "(tree n_jobs=-1, RankNet n_jobs=1), which never share; spinning = unshared with GNU OpenMP's default "
          "spin (ranklearn before its wait policy).")
    print(f"LambdaMART: {args.queries * DOCS:,} rows x {FEATURES} features ({args.queries} queries of {DOCS}), "
          f"{args.trees} trees, 31 leaves; numba threading layer: {layer}. RankNet: "
          f"{args.neural_queries * DOCS:,} rows, MLP 64-32, {args.epochs} epochs. "
          f"torch loop: MLP {FEATURES}-256-256-1, Adam, batch 1024, torch defaults. Extra environment of the "
          f"ranklearn jobs: {extra}. {os.cpu_count()} CPUs.")  # fmt: skip
    print(f"\nMedian of {args.repeats} runs per scenario, all scenarios round-robin; ratio = time in the scenario / "
          "time alone with the same setting; threads = the job's threads after each tree or epoch over the runs "
          "(min-max); load = 1-minute load average before the scenario started (min-max).\n")
    print("| setting | scenario | job | time alone (s) | time in scenario (s) | ratio | target | CPU time (s) | threads "
          "| load |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|---|")
    for setting in settings:
        alone = {kind: median((setting, f"{kind} alone"), 0, "wall") for kind in ("tree", "neural")}
        for name, kinds in SCENARIOS.items():
            key = (setting, name) if (setting, name) in runs else (first, name)
            if key[0] != setting:
                continue
            for job, kind in enumerate(kinds):
                cpu = median(key, job, "cpu")
                if kind == "torch":
                    rate = median(key, job, "steps_per_s")
                    ratio, t_alone, t_here = torch_rate / rate, 1 / torch_rate, 1 / rate
                    what = "torch loop (s per step)"
                else:
                    t_alone, t_here = alone[kind], median(key, job, "wall")
                    ratio, what = t_here / t_alone, {"tree": "LambdaMART fit", "neural": "RankNet fit"}[kind]
                target = TARGETS.get(name, {}).get(kind)
                mark = "" if target is None else (" ok" if ratio <= target else " **missed**")
                lo = min(r[0][job]["threads"][0] for r in runs[key])
                hi = max(r[0][job]["threads"][1] for r in runs[key])
                print(f"| {setting} | {name} | {what} | {t_alone:.3f} | {t_here:.3f} | **{ratio:.2f}x** "
                      f"| {'' if target is None else f'{target}x'}{mark} | {cpu:.2f} | {lo if lo == hi else f'{lo}-{hi}'} "
                      f"| {loads(key)} |")  # fmt: skip
    flags = "".join(f" --env {k}={v}" for k, v in env.items()) + (" --quick" if args.quick else "")
    flags += " --no-spin" if args.no_spin else ""
    print(f"\nRegenerate: .venv/bin/python benchmarks/bench_contention.py --repeats {args.repeats}{flags}")


if __name__ == "__main__":
    main()
