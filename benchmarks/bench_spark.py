"""SparkLambdaMART against one machine and against xgboost.spark.SparkXGBRanker (issue 32).

Every part runs on a Spark session started by this script (``local[2]``: 2 task slots on
the machine's 2 cores; ``local[4]`` for the 4-task overhead). Three parts (``--parts``):

* ``same``: the same model as one machine: max absolute difference of MQ2008 Fold1 test
  predictions between ``SparkLambdaMART`` (2 barrier tasks) and ``LambdaMART``, 50 trees,
  31 leaves, and whether every tree has the same structure.
* ``speed``: fit time (``fit(df)`` to the fitted model, the repartitioning by query and the
  transfer of the rows to the tasks included) of ``SparkLambdaMART`` against
  ``SparkXGBRanker`` on the same ``local[2]`` session and the same cached DataFrame:
  200,000 x 136 synthetic rows (1,600 queries x 125 documents, ``make_ranking``), 50 trees;
  ours 31 leaves best-first, 255 bins, 20 documents per leaf; XGBoost ``hist``,
  ``grow_policy="lossguide"``, ``max_leaves=31``, ``max_depth=0``, ``max_bin=255``, its
  ``rank:ndcg`` objective; learning rate 0.1, 2 workers of 1 thread each for both. Both
  warmed up once, then interleaved, median of ``--repeats``. Ratio below 1: ranklearn is
  faster.
* ``overhead``: time per tree (between the first and the last tree's callback, on the
  driver: setup excluded) of ``SparkLambdaMART`` with 2 and with 4 tasks on the ``speed``
  data, against ``LambdaMART`` on one machine (2 threads) on the same rows. On 2 cores, 4
  tasks share the cores.

    .venv/bin/python benchmarks/bench_spark.py [--repeats 3] [--parts same,speed,overhead]

The machine is shared with other agents: read ratios with the load average printed beside them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from _common import TreeClock, interleaved, require_shared_data

TREES, LEAVES, BINS, LR, MIN_LEAF = 50, 31, 255, 0.1, 20
FEATURES, DOCS, QUERIES = 136, 125, 1600
PARAMS = dict(num_leaves=LEAVES, max_bins=BINS, learning_rate=LR, min_samples_leaf=MIN_LEAF, random_state=0)


def _load() -> str:
    return ", ".join(f"{v:.1f}" for v in os.getloadavg())


def _session(master: str):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master(master).appName("ranklearn bench_spark")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "6g").config("spark.sql.shuffle.partitions", "2").getOrCreate()
    )  # fmt: skip
    session.sparkContext.setLogLevel("ERROR")
    return session


def _frame(session, X: np.ndarray, y: np.ndarray, q: np.ndarray):
    import pyarrow as pa

    offsets = pa.array(np.arange(len(y) + 1, dtype=np.int32) * X.shape[1])
    table = pa.table({"features": pa.ListArray.from_arrays(offsets, pa.array(X.astype(np.float64).ravel())),
                      "label": y.astype(np.float64), "qid": q.astype(np.int64)})  # fmt: skip
    return session.createDataFrame(table)


def _synthetic():
    from ranklearn.datasets import make_ranking

    X, y, q = make_ranking(QUERIES, FEATURES, n_informative=20, docs_per_query=(DOCS, DOCS), random_state=0,
                           return_X_y=True)  # fmt: skip
    return np.asarray(X, dtype=np.float32), np.asarray(y, dtype=np.float64), np.asarray(q)


def part_same() -> None:
    from ranklearn.datasets import load_letor_fold
    from ranklearn.models.lambdamart import LambdaMART
    from ranklearn.spark import SparkLambdaMART

    train, _, test = load_letor_fold(require_shared_data() / "MQ2008", 1)
    X, Xte = (np.asarray(s.X.toarray() if hasattr(s.X, "toarray") else s.X, dtype=np.float32) for s in (train, test))
    session = _session("local[2]")
    params = dict(PARAMS, n_estimators=TREES, min_samples_leaf=20)
    ref = LambdaMART(**params).fit(X, train.y, train.qid)
    ours = SparkLambdaMART(**params).fit(_frame(session, X, train.y, train.qid)).to_local()
    same = all(
        np.array_equal(getattr(a, f), getattr(b, f))
        for a, b in zip(ours.trees_, ref.trees_)
        for f in ("feature", "bin_threshold", "missing_left", "left", "right", "count")
    ) and len(ours.trees_) == len(ref.trees_)
    diff = np.abs(ours.predict(Xte) - ref.predict(Xte)).max()
    print("## same model as one machine (MQ2008 Fold1, 2 tasks on local[2], 50 trees, 31 leaves)\n")
    print(f"max |test prediction difference| = {diff:.2e}; same tree structure: {same}; load {_load()}\n")


def part_speed(repeats: int) -> None:
    from xgboost.spark import SparkXGBRanker

    from ranklearn.spark import SparkLambdaMART

    session = _session("local[2]")
    X, y, q = _synthetic()
    frame = _frame(session, X, y, q).cache()
    frame.count()
    ours = SparkLambdaMART(n_estimators=TREES, num_workers=2, n_jobs=1, **PARAMS)
    theirs = SparkXGBRanker(
        features_col="features", label_col="label", qid_col="qid", num_workers=2, n_estimators=TREES,
        tree_method="hist", grow_policy="lossguide", max_leaves=LEAVES, max_depth=0, max_bin=BINS,
        learning_rate=LR,  # threads per task: spark.task.cpus (1), as ours
    )  # fmt: skip
    fns = {"ranklearn": lambda: ours.fit(frame), "xgboost": lambda: theirs.fit(frame)}
    for fn in fns.values():  # warm-up: the tasks' first imports and kernels' loading
        fn()
    load = _load()
    t, _, loads = interleaved(repeats, fns)
    print("## fit time against SparkXGBRanker (200,000 x 136, 50 trees, local[2], 2 tasks x 1 thread)\n")
    print(f"Median of {repeats} interleaved runs after one warm-up each; load before: {load}.\n")
    print("| fit | SparkLambdaMART | SparkXGBRanker | ratio (ours / theirs) | 1-min load during |")
    print("|---|---:|---:|---:|---|")
    print(f"| 200,000 x 136, 50 trees | {t['ranklearn']:.2f} s | {t['xgboost']:.2f} s | "
          f"**{t['ranklearn'] / t['xgboost']:.2f}x** | {min(loads):.1f}-{max(loads):.1f} |\n")  # fmt: skip
    frame.unpersist()


def part_overhead() -> None:
    from ranklearn.models.lambdamart import LambdaMART
    from ranklearn.spark import SparkLambdaMART

    X, y, q = _synthetic()
    trees = 10
    clock = TreeClock()
    LambdaMART(n_estimators=trees, n_jobs=2, **PARAMS).fit(X, y, q, callbacks=[clock])
    rows = [("one machine, 2 threads", clock.per_tree(), _load())]
    for tasks in (2, 4):
        session = _session(f"local[{tasks}]")
        frame = _frame(session, X, y, q).cache()
        frame.count()
        est = SparkLambdaMART(n_estimators=trees, num_workers=tasks, n_jobs=1, **PARAMS)
        est.fit(frame)  # warm-up
        clock = TreeClock()
        est.fit(frame, callbacks=[clock])
        rows.append((f"SparkLambdaMART, {tasks} tasks x 1 thread", clock.per_tree(), _load()))
        session.stop()
    print(f"## time per tree (200,000 x 136, {trees} trees, setup excluded)\n")
    print("| fit | s per tree | against one machine | 1-min load |")
    print("|---|---:|---:|---|")
    for name, per, load in rows:
        print(f"| {name} | {per:.3f} | {per / rows[0][1]:.2f}x | {load} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parts", default="same,speed,overhead")
    args = parser.parse_args()
    print(f"load average at start: {_load()} (the machine is shared with other agents)\n")
    parts = args.parts.split(",")
    if "same" in parts:
        part_same()
    if "speed" in parts:
        part_speed(args.repeats)
    if "overhead" in parts:
        part_overhead()


if __name__ == "__main__":
    main()
