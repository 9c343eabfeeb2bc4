"""LambdaMART training time against LightGBM lambdarank as the data grows: the scaling table.

Cells (synthetic data from ranklearn.datasets.make_ranking, 136 features): 50,000 /
200,000 / 800,000 rows at 125 documents per query; 10 / 100 / 1,000 documents per query at
200,000 rows; each at 1 and 2 threads. Both libraries train with bench_speed.py's parameters
(50 trees, 31 leaves, 255 bins, learning rate 0.1, 20 documents per leaf); LightGBM
otherwise keeps its lambdarank defaults, and the table says which histogram layout it chose
(``force_col_wise`` / ``force_row_wise``: it tests both and logs its choice). A timing is a
whole fit, binning included (LightGBM: ``Dataset`` construction + ``train``).

Each library runs in its own long-lived process, so that each has its own OpenMP runtime
with its own defaults (ranklearn's threads sleep while they wait, LightGBM's spin first;
in one process the first library loaded would set both). This script sends the cells to
both processes in turn: every repeat of a cell times ranklearn then LightGBM, ``--repeats``
times, cells one after the other, so the two share the machine's state. Each timing is the
median, with the 1-minute load average before every timed fit beside it (min-max) and the
CPU time (``time.process_time``) of the fit. Ratios are ranklearn / LightGBM: below 1
means ranklearn is faster.

    .venv/bin/python benchmarks/bench_scaling.py [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench_speed import BINS, LEAVES, LR, MIN_LEAF, TREES, lgb_params

FEATURES = 136
#: (rows, documents per query) of the table; every cell runs at 1 and 2 threads
CELLS = [(50_000, 125), (200_000, 125), (800_000, 125), (200_000, 10), (200_000, 100), (200_000, 1000)]
THREADS = (1, 2)


# ----------------------------------------------------------------------------- workers
def _data(rows: int, docs: int):
    from ranklearn.datasets import make_ranking

    return make_ranking(rows // docs, FEATURES, n_informative=20, docs_per_query=(docs, docs), random_state=0,
                        return_X_y=True)  # fmt: skip


def serve(library: str) -> None:
    """Answer one JSON request per line on stdin: {"rows", "docs", "threads", "trees"} -> one fit's times."""
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything a library prints goes to stderr, not into the protocol
    if library == "lightgbm":
        import lightgbm as lgb  # first: its OpenMP runtime starts with LightGBM's own defaults

        class Choice:
            """LightGBM's log, kept for its "Auto-choosing col-wise/row-wise" line."""

            layout = "?"

            def info(self, msg: str) -> None:
                if "Auto-choosing" in msg:
                    self.layout = "col-wise" if "col-wise" in msg else "row-wise"

            warning = info

        log = Choice()
        lgb.register_logger(log)
    from _common import group_sizes

    from ranklearn import LambdaMART

    data: dict = {}

    def fit(req: dict) -> dict:
        X, y, qid = data[(req["rows"], req["docs"])]
        n = req["threads"]
        if library == "ranklearn":
            LambdaMART(n_estimators=req["trees"], num_leaves=LEAVES, max_bins=BINS, learning_rate=LR,
                       min_samples_leaf=MIN_LEAF, n_jobs=n, random_state=0).fit(X, y, qid)  # fmt: skip
            return {}
        log.layout = "?"
        groups = group_sizes(qid)
        params = {**lgb_params(n), "verbose": 1}  # info: the layout choice is logged (to `log`)
        ds = lgb.Dataset(X, y, group=groups, params={"max_bin": BINS, "verbose": 1, "num_threads": n})
        lgb.train(params, ds, num_boost_round=req["trees"])
        return {"layout": log.layout}

    for line in sys.stdin:
        req = json.loads(line)
        key = (req["rows"], req["docs"])
        if key not in data:
            data.clear()  # one cell's data at a time: 800,000 x 136 float32 is 435 MB
            data[key] = _data(*key)
            small = slice(0, 20 * req["docs"])
            data[(-1, -1)] = tuple(a[small] for a in data[key])
            fit({**req, "rows": -1, "docs": -1, "trees": 2})  # warm-up: numba's cache, thread pools
            del data[(-1, -1)]
        load = os.getloadavg()[0]
        w0, c0 = time.perf_counter(), time.process_time()
        extra = fit(req)
        protocol.write(json.dumps({"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0, "load": load,
                                   **extra}) + "\n")  # fmt: skip
        protocol.flush()


# ----------------------------------------------------------------------------- table
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="rows / 40, 5 trees, 1 repeat: a check that it runs")
    ap.add_argument("--serve", choices=["ranklearn", "lightgbm"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve)
        return
    scale, trees = (40, 5) if args.quick else (1, TREES)
    repeats = 1 if args.quick else args.repeats

    workers = {
        lib: subprocess.Popen([sys.executable, __file__, "--serve", lib], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
        for lib in ("ranklearn", "lightgbm")
    }

    def ask(lib: str, req: dict) -> dict:
        p = workers[lib]
        p.stdin.write(json.dumps(req) + "\n")
        p.stdin.flush()
        line = p.stdout.readline()
        if not line:
            sys.exit(f"the {lib} process ended (exit status {p.wait()}); see its messages above")
        return json.loads(line)

    print(f"{FEATURES} features; {trees} trees, {LEAVES} leaves, {BINS} bins, learning rate {LR}, "
          f"min {MIN_LEAF} documents per leaf; median of {repeats} interleaved fits per cell (binning included); "
          f"{os.cpu_count()} CPUs.\n")  # fmt: skip
    print("| rows | docs/query | threads | ranklearn (s) | LightGBM (s) | ratio ranklearn/LightGBM "
          "| CPU s ranklearn / LightGBM | LightGBM layout | load |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for rows, docs in CELLS:
        for threads in THREADS:
            req = {"rows": rows // scale, "docs": docs, "threads": threads, "trees": trees}
            got: dict[str, list[dict]] = {"ranklearn": [], "lightgbm": []}
            for _ in range(repeats):
                for lib in got:
                    got[lib].append(ask(lib, req))

            def med(lib: str, key: str) -> float:
                return statistics.median(r[key] for r in got[lib])

            a, b = med("ranklearn", "wall"), med("lightgbm", "wall")
            loads = [r["load"] for runs in got.values() for r in runs]
            layouts = "/".join(sorted({r["layout"] for r in got["lightgbm"]}))
            print(f"| {req['rows']:,} | {docs:,} | {threads} | {a:.3f} | {b:.3f} | **{a / b:.2f}x** "
                  f"| {med('ranklearn', 'cpu'):.2f} / {med('lightgbm', 'cpu'):.2f} | {layouts} "
                  f"| {min(loads):.2f}-{max(loads):.2f} |", flush=True)  # fmt: skip
    for p in workers.values():
        p.stdin.close()
        p.wait()
    print(f"\nRegenerate: .venv/bin/python benchmarks/bench_scaling.py --repeats {repeats}{' --quick' if args.quick else ''}")


if __name__ == "__main__":
    main()
