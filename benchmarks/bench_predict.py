"""LambdaMART prediction speed against LightGBM on the same trees, measured in one run.

A ranklearn model of ``--trees`` trees of 31 leaves is trained on a slice of a synthetic
136-feature set (ranklearn.datasets.make_ranking) and exported with
ranklearn.io.lightgbm.export_lightgbm, so both libraries walk exactly the same trees; the
scores are checked equal. Then, for 1 and 2 threads, ranklearn and LightGBM are timed in turn
(interleaved, so both see the same load), each timing the median of ``--repeats`` runs with
``os.getloadavg()`` printed beside it:

* batch throughput: ``--rows`` rows (200,000 by default);
* batch-1 latency: one query of 100 documents, warm, the median of ``--calls`` calls each timed
  on its own (the two libraries in turns of 50 calls), in wall time and in the process's CPU time (which
  other processes on the cores inflate less).

    .venv/bin/python benchmarks/bench_predict.py [--repeats 3] [--rows 200000] [--trees 500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

LEAVES = 31
BLOCK = 50  # batch-1 calls per turn of each library


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def median_time(repeats: int, fn, clock=time.perf_counter) -> float:
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--train-rows", type=int, default=25_000)
    ap.add_argument("--calls", type=int, default=2000, help="calls timed for the batch-1 latency")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--model", help="ranklearn model file: loaded if it exists, else trained and saved there")
    args = ap.parse_args()

    import lightgbm as lgb

    from ranklearn import LambdaMART
    from ranklearn.datasets import make_ranking
    from ranklearn.io.lightgbm import lightgbm_model_string

    docs = 125
    X, y, qid = make_ranking(
        -(-max(args.rows, args.train_rows) // docs), 136, n_informative=20, docs_per_query=(docs, docs),
        random_state=0, return_X_y=True,
    )
    X = np.ascontiguousarray(X[: args.rows], dtype=np.float32)
    n_train = args.train_rows
    t0 = time.perf_counter()
    if args.model and os.path.exists(args.model):
        model = LambdaMART.load(args.model)
    else:
        model = LambdaMART(n_estimators=args.trees, num_leaves=LEAVES, random_state=0).fit(
            X[:n_train], y[:n_train], qid[:n_train]
        )
        if args.model:
            model.save(args.model)
    depths = [_depth(t) for t in model.trees_]
    print(f"model: {len(model.trees_)} trees of {LEAVES} leaves (depth mean {np.mean(depths):.1f}, max "
          f"{max(depths)}), trained on {n_train:,} rows or loaded in {time.perf_counter() - t0:.1f} s; "
          f"data {X.shape[0]:,} x {X.shape[1]}", flush=True)
    booster = lgb.Booster(model_str=lightgbm_model_string(model))
    query = X[:100].copy()

    diff = np.max(np.abs(model.predict(X) - booster.predict(X)))  # also warms both up
    print(f"max |ranklearn - LightGBM| = {diff:.3g}\n", flush=True)

    print("| threads | measure | ranklearn | LightGBM | LightGBM / ranklearn | load (1, 5, 15 min) |")
    print("|---|---|---|---|---|---|")
    for threads in args.threads:
        model.set_params(n_jobs=threads)
        ours = median_time(args.repeats, lambda: model.predict(X))
        theirs = median_time(args.repeats, lambda: booster.predict(X, num_threads=threads))
        print(f"| {threads} | {X.shape[0]:,} rows, Mrows/s | {X.shape[0] / ours / 1e6:.3f} | "
              f"{X.shape[0] / theirs / 1e6:.3f} | **{theirs / ours:.2f}x** | {load()} |", flush=True)

        # batch-1 latency: every call timed on its own, the median; ranklearn and LightGBM take
        # turns by blocks of BLOCK calls, so that each serves from its own warm caches, as a
        # server answering query after query does (turns of one call each would also time
        # reloading the trees the other library pushed out of the cache)
        lat: dict = {(who, what): [] for who in ("ours", "theirs") for what in ("wall", "cpu")}
        for _ in range(-(-args.calls // BLOCK)):
            for who, call in (("ours", lambda: model.predict(query)),
                              ("theirs", lambda: booster.predict(query, num_threads=threads))):  # fmt: skip
                for _ in range(BLOCK):
                    w0, c0 = time.perf_counter(), time.process_time()
                    call()
                    lat[who, "cpu"].append(time.process_time() - c0)
                    lat[who, "wall"].append(time.perf_counter() - w0)
        for what, label in (("wall", "wall"), ("cpu", "CPU time of the process")):
            ours, theirs = statistics.median(lat["ours", what]), statistics.median(lat["theirs", what])
            print(f"| {threads} | 1 query of 100 docs, ms ({label}, median of {args.calls} calls) | {ours * 1e3:.3f} | "
                  f"{theirs * 1e3:.3f} | **{theirs / ours:.2f}x** | {load()} |", flush=True)
    print(f"\nRegenerate: .venv/bin/python benchmarks/bench_predict.py --repeats {args.repeats} "
          f"--rows {args.rows} --trees {args.trees}")


def _depth(tree) -> int:
    """Depth of the deepest leaf."""
    depth = np.zeros(tree.feature.shape[0], dtype=np.int64)
    for node in range(tree.feature.shape[0]):  # children come after their parent
        if tree.feature[node] >= 0:
            depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1
    return int(depth.max())


if __name__ == "__main__":
    main()
