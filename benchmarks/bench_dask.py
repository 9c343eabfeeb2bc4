"""DaskLambdaMART against one machine and against lightgbm.DaskLGBMRanker (issue 13).

Every cluster is a ``distributed.LocalCluster`` of worker processes with 1 thread each,
started by this script (the kernels of both libraries run on the worker's one thread).
Four parts (``--parts``):

* ``same``: the same model as one machine. Max absolute difference of test predictions
  between ``DaskLambdaMART`` and ``LambdaMART`` on MQ2008 Fold1 (3 partitions on 2
  workers) and on the synthetic set of ``speed`` (the model of its last run).
* ``speed``: training time of ``DaskLambdaMART`` against ``lightgbm.DaskLGBMRanker`` on the
  same cluster (2 workers x 1 thread), 200,000 x 136 synthetic rows (1,600 queries x 125
  documents, ``make_ranking``) in 2 partitions of whole queries persisted on the workers,
  50 trees, 31 leaves, 255 bins, 20 documents per leaf, learning rate 0.1; both warmed up,
  then interleaved, median of ``--repeats``. Ratio below 1: ranklearn is faster.
* ``scale``: ``--scale-rows`` x 136 rows generated on the workers (never on the client: 8
  partitions made lazily by the fit's tasks, pinned half to each worker, each of blocks of 100 queries that are
  ``make_ranking`` with their own seed), 2 workers each with ``memory_limit`` 1 GiB, less
  than the whole float32 matrix (1.09 GB for 2,000,000 rows). Reported: peak resident memory of every worker process (``VmHWM``, generation
  included) and the time per tree against ``LambdaMART`` on the same rows on one machine
  (2 threads), both over ``--scale-trees`` trees (time between the first and the last
  tree's callback: binning and setup excluded).
* ``overhead``: share of the time per tree in which the busiest worker computes nothing:
  the time per tree minus that worker's compute in the tree (its time growing the tree less
  its exchanges of sums with the other workers), an upper bound on communication, waiting
  and scheduling, over 10 trees of the ``speed`` data, with 2 and with 4 workers of 1
  thread. On 2 cores, 4 workers share the cores: their compute slows and the waits grow
  with it.

    .venv/bin/python benchmarks/bench_dask.py [--repeats 3] [--parts same,speed,scale,overhead]
        [--scale-rows 2000000] [--scale-trees 5]

The machine is shared: read ratios and shares, with the load average printed beside them.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
import time

import numpy as np
from _common import SHARED_DATA, TreeClock, interleaved, require_shared_data

TREES, LEAVES, BINS, LR, MIN_LEAF = 50, 31, 255, 0.1, 20
FEATURES, DOCS = 136, 125
SCALE_PARTS, SCALE_MEMORY = 8, "1GiB"
PARAMS = dict(num_leaves=LEAVES, max_bins=BINS, learning_rate=LR, min_samples_leaf=MIN_LEAF, random_state=0)


def _load() -> str:
    return ", ".join(f"{v:.1f}" for v in os.getloadavg())


def _cluster(n_workers: int, **kw):
    import distributed

    return distributed.LocalCluster(
        n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None, **kw
    )


def _at_queries(X, y, qid, n_parts: int):
    """Dask arrays of n_parts partitions of whole queries, and their group sizes (LightGBM)."""
    import dask.array as da

    from ranklearn.data.groups import group_ptr

    ptr = group_ptr(qid)
    cuts = ptr[np.linspace(0, len(ptr) - 1, n_parts + 1).astype(int)]
    rows = tuple(np.diff(cuts).tolist())
    sizes = np.diff(ptr)
    qcuts = np.linspace(0, len(ptr) - 1, n_parts + 1).astype(int)
    return (
        da.from_array(X, chunks=(rows, -1)),
        da.from_array(y, chunks=(rows,)),
        da.from_array(qid, chunks=(rows,)),
        da.from_array(sizes, chunks=(tuple(np.diff(qcuts).tolist()),)),
    )


def synthetic(n_queries: int, seed: int):
    from ranklearn.datasets import make_ranking

    return make_ranking(n_queries, FEATURES, n_informative=20, docs_per_query=(DOCS, DOCS), random_state=seed,
                        return_X_y=True)  # fmt: skip


def part_same_mq2008() -> None:
    from distributed import Client

    from ranklearn.dask import DaskLambdaMART
    from ranklearn.datasets import load_letor_fold
    from ranklearn.models.lambdamart import LambdaMART

    root = require_shared_data() / "MQ2008"
    train, _, test = load_letor_fold(root, 1)
    dense = [np.asarray(s.X.toarray() if hasattr(s.X, "toarray") else s.X, dtype=np.float32) for s in (train, test)]
    params = dict(PARAMS, n_estimators=TREES)
    ref = LambdaMART(**params).fit(dense[0], train.y, train.qid)
    with _cluster(2) as cluster, Client(cluster) as client:
        dX, dy, dq, _ = _at_queries(dense[0], train.y, train.qid, 3)
        ours = DaskLambdaMART(client=client, **params).fit(dX, dy, dq)
    diff = np.abs(ours.predict(dense[1]) - ref.predict(dense[1])).max()
    same = all(np.array_equal(a.feature, b.feature) and np.array_equal(a.bin_threshold, b.bin_threshold)
               for a, b in zip(ours.trees_, ref.trees_))  # fmt: skip
    print(f"| MQ2008 Fold1 ({len(train.y):,} x {dense[0].shape[1]}, 3 partitions, 2 workers) | {TREES} | "
          f"{'yes' if same else 'no'} | {diff:.1e} ({len(test.y):,} test rows) |")  # fmt: skip


def part_speed(repeats: int, compare_local: bool, n_queries: int) -> str | None:
    """Print the timing table; return the same-model row of the synthetic set (when asked)."""
    import lightgbm as lgb
    from distributed import Client, wait

    from ranklearn.dask import DaskLambdaMART
    from ranklearn.models.lambdamart import LambdaMART

    lgb.register_logger(logging.getLogger("lightgbm"))  # its progress lines off the tables (no handler)
    X, y, qid = synthetic(n_queries, 0)
    Xte = synthetic(200, 1)[0]
    with _cluster(2) as cluster, Client(cluster) as client:
        dX, dy, dq, dg = client.persist(_at_queries(X, y, qid, 2))
        wait([dX, dy, dq, dg])

        def ours(n: int = TREES):
            return DaskLambdaMART(client=client, n_estimators=n, **PARAMS).fit(dX, dy, dq)

        def theirs(n: int = TREES):
            return lgb.DaskLGBMRanker(
                client=client, n_estimators=n, num_leaves=LEAVES, max_bin=BINS, learning_rate=LR,
                min_child_samples=MIN_LEAF, random_state=0, verbose=-1,
            ).fit(dX, dy, group=dg)  # fmt: skip

        ours(2), theirs(2)  # warm-up: kernels loaded on the workers, LightGBM's network set up once
        load = _load()
        t, fitted, loads = interleaved(repeats, {"ours": ours, "lgb": theirs})
        print(f"data: {X.shape[0]:,} rows x {X.shape[1]} features, {len(np.unique(qid))} queries, 2 partitions "
              f"persisted on the workers; {TREES} trees, {LEAVES} leaves, {BINS} bins; 2 workers x 1 thread (processes)\n")  # fmt: skip
        print(f"Median of {repeats} interleaved runs; load = 1-minute load average after each run (before: {load}).\n")
        print("| fit | ranklearn DaskLambdaMART (s) | lightgbm DaskLGBMRanker (s) | ratio | load |")
        print("|---|---|---|---|---|")
        print(f"| {TREES} trees, binning included | {t['ours']:.2f} | {t['lgb']:.2f} | **{t['ours'] / t['lgb']:.2f}x** | "
              f"{min(loads):.1f}-{max(loads):.1f} |")  # fmt: skip
    if compare_local:
        ref = LambdaMART(n_estimators=TREES, n_jobs=2, **PARAMS).fit(X, y, qid)
        diff = np.abs(fitted["ours"].predict(Xte) - ref.predict(Xte)).max()
        same = all(np.array_equal(a.feature, b.feature) and np.array_equal(a.bin_threshold, b.bin_threshold)
                   for a, b in zip(fitted["ours"].trees_, ref.trees_))  # fmt: skip
        return (f"| synthetic ({X.shape[0]:,} x {X.shape[1]}, 2 partitions, 2 workers) | {TREES} | "
                f"{'yes' if same else 'no'} | {diff:.1e} ({Xte.shape[0]:,} rows of another seed) |")  # fmt: skip
    return None


# ---------------------------------------------------------------------- scale
def _scale_part(i: int, n_queries: int, block: int = 100):
    """Partition ``i``: blocks of ``block`` queries, each ``make_ranking`` with its own seed,
    written into one float32 array (the float64 scratch of a whole partition would not fit
    beside the others under the memory limit)."""
    rows = n_queries * DOCS
    X, y = np.empty((rows, FEATURES), np.float32), np.empty(rows)
    for k in range(0, n_queries, block):
        nq = min(block, n_queries - k)
        X[k * DOCS : (k + nq) * DOCS], y[k * DOCS : (k + nq) * DOCS], _ = synthetic(nq, 1000 + 1000 * i + k)
    return X, y, np.repeat(np.arange(i * n_queries, (i + 1) * n_queries, dtype=np.int64), DOCS)


def _peak_rss() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))


def part_scale(n_rows: int, trees: int) -> None:
    import dask
    import dask.array as da
    from distributed import Client

    from ranklearn.dask import DaskLambdaMART
    from ranklearn.models.lambdamart import LambdaMART

    per_part = n_rows // DOCS // SCALE_PARTS
    rows = per_part * DOCS
    n = rows * SCALE_PARTS
    # the memory limit is the point: no spilling or pausing, which would hide it
    quiet = {"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False,
             "distributed.worker.memory.pause": False}  # fmt: skip
    with dask.config.set(quiet), _cluster(2, memory_limit=SCALE_MEMORY) as cluster, Client(cluster) as client:
        # each partition made by a task of the fit on a worker, half of them on each: left to
        # the scheduler, tasks without inputs can pile up on one worker, which then holds more
        # than half of the data. Not persisted beforehand: persisted blocks would stay in the
        # workers' memory beside the binned shards for the whole fit
        workers = sorted(client.scheduler_info()["workers"])
        cols = [[], [], []]
        for i in range(SCALE_PARTS):
            with dask.annotate(workers=[workers[i % len(workers)]], allow_other_workers=False):
                part = dask.delayed(_scale_part, pure=True)(i, per_part, dask_key_name=f"scale-part-{i}")
                for j, (shape, dtype) in enumerate([((rows, FEATURES), np.float32), ((rows,), np.float64), ((rows,), np.int64)]):
                    cols[j].append(da.from_delayed(part[j], shape, dtype))
        clock = TreeClock()
        t0 = time.perf_counter()
        model = DaskLambdaMART(client=client, n_estimators=trees, **PARAMS).fit(
            *(da.concatenate(c) for c in cols), callbacks=[clock]
        )
        fit_s = time.perf_counter() - t0
        peaks = client.run(_peak_rss)
        limit = next(iter(client.scheduler_info()["workers"].values()))["memory_limit"]
    print(f"{n:,} rows x {FEATURES} features ({n * FEATURES * 4 / 1e9:.2f} GB as float32), made on the 2 workers "
          f"in {SCALE_PARTS} partitions; memory_limit {limit / 1e9:.2f} GB per worker (spilling and pausing off); "
          f"{trees} trees: a short run, the time per tree is what is compared\n")  # fmt: skip
    print("| | peak resident memory (VmHWM) | time per tree (s) |")
    print("|---|---|---|")
    for i, addr in enumerate(sorted(peaks)):
        print(f"| DaskLambdaMART, worker {i} | {peaks[addr] / 1e9:.2f} GB | |")
    print(f"| DaskLambdaMART (whole fit {fit_s:.0f} s, making and binning the data included) | | {clock.per_tree():.2f} |")
    X, y, qid = (np.concatenate(c) for c in zip(*[_scale_part(i, per_part) for i in range(SCALE_PARTS)]))
    clock_local = TreeClock()
    local = LambdaMART(n_estimators=trees, n_jobs=2, **PARAMS).fit(X, y, qid, callbacks=[clock_local])
    print(f"| LambdaMART, one process, 2 threads (same rows, made there) | {_peak_rss() / 1e9:.2f} GB | "
          f"{clock_local.per_tree():.2f} |")  # fmt: skip
    same = all(np.array_equal(a.feature, b.feature) and np.array_equal(a.bin_threshold, b.bin_threshold)
               for a, b in zip(model.trees_, local.trees_))  # fmt: skip
    diff = np.abs(model.predict(X[:200_000]) - local.predict(X[:200_000])).max()
    print(f"\nDaskLambdaMART / LambdaMART time per tree: **{clock.per_tree() / clock_local.per_tree():.2f}x**. "
          f"Same splits: {'yes' if same else 'no'}; max abs difference of predictions on the first 200,000 rows: "
          f"{diff:.1e}. Load after: {_load()}.")  # fmt: skip


# ---------------------------------------------------------------------- overhead
def _timed_peer_methods() -> None:
    """On a worker: add the time of every tree (``_Peer.tree``) and of every exchange of sums
    with the other workers (``StarComm.allreduce``, waiting for them included) to counters."""
    from ranklearn import collective
    from ranklearn import dask as rd

    # kept in a module of the worker: this script's functions reach the workers as copies
    counters = rd.__dict__.setdefault("_bench_counters", {})

    def timed(cls, name, counter):
        method = getattr(cls, name)

        @functools.wraps(method)
        def run(*args):
            t0 = time.perf_counter()
            try:
                return method(*args)
            finally:
                counters[counter] += time.perf_counter() - t0

        setattr(cls, name, run)

    if not counters:
        timed(rd._Peer, "tree", "tree")
        timed(collective.StarComm, "allreduce", "exchange")
    counters.update(tree=0.0, exchange=0.0)


def _counters() -> dict[str, float]:
    from ranklearn import dask as rd

    return dict(rd._bench_counters)


def part_overhead(n_queries: int, trees: int = 10) -> None:
    from distributed import Client, wait

    from ranklearn.dask import DaskLambdaMART

    X, y, qid = synthetic(n_queries, 0)
    print(f"{X.shape[0]:,} x {X.shape[1]} synthetic, {trees} trees, {LEAVES} leaves; one partition per worker, 1 thread each\n")
    print("| workers | time per tree (s) | busiest worker computing (s/tree) | exchanging sums, waits included "
          "(s/tree, that worker) | communication, waiting and scheduling (s/tree) | share of the time per tree | load |")
    print("|---|---|---|---|---|---|---|")
    for n_workers in (2, 4):
        with _cluster(n_workers) as cluster, Client(cluster) as client:
            dX, dy, dq, _ = client.persist(_at_queries(X, y, qid, n_workers))
            wait([dX, dy, dq])
            DaskLambdaMART(client=client, n_estimators=2, **PARAMS).fit(dX, dy, dq)  # warm-up
            marks = {}

            def mark(iteration, total, results):
                if iteration in (1, total):
                    marks[iteration] = (time.perf_counter(), client.run(_counters))

            client.run(_timed_peer_methods)
            DaskLambdaMART(client=client, n_estimators=trees, **PARAMS).fit(dX, dy, dq, callbacks=[mark])
            (t1, c1), (t2, c2) = marks[1], marks[trees]
            k = trees - 1
            per_tree = (t2 - t1) / k
            compute = {a: ((c2[a]["tree"] - c1[a]["tree"]) - (c2[a]["exchange"] - c1[a]["exchange"])) / k for a in c1}
            busiest = max(compute, key=compute.get)
            exchange = (c2[busiest]["exchange"] - c1[busiest]["exchange"]) / k
            comm = per_tree - compute[busiest]
            print(f"| {n_workers} | {per_tree:.3f} | {compute[busiest]:.3f} | {exchange:.3f} | {comm:.3f} | "
                  f"**{comm / per_tree:.0%}** | {os.getloadavg()[0]:.1f} |")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--parts", default="same,speed,scale,overhead")
    ap.add_argument("--scale-rows", type=int, default=2_000_000)
    ap.add_argument("--scale-trees", type=int, default=5)
    ap.add_argument("--queries", type=int, default=1600, help="queries of 125 documents of the speed/overhead data")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    # the tables keep standard output; the workers' and LightGBM's logs, which write to the
    # file descriptor they inherit, go to standard error
    sys.stdout = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    print(f"Load average (1, 5, 15 min) at start: {_load()}.\n")
    synthetic_row = None
    if "speed" in parts:
        print("### Speed against lightgbm.DaskLGBMRanker\n")
        synthetic_row = part_speed(args.repeats, "same" in parts, args.queries)
        print()
    if "same" in parts:
        print("### The same model as one machine\n")
        print("| data | trees | same splits | max abs difference of test predictions |")
        print("|---|---|---|---|")
        if SHARED_DATA.is_dir():
            part_same_mq2008()
        if synthetic_row:
            print(synthetic_row)
        print()
    if "overhead" in parts:
        print("### Communication per tree, 2 and 4 workers\n")
        part_overhead(args.queries)
        print()
    if "scale" in parts:
        print("### Scale: data made on the workers, each with less memory than the data\n")
        part_scale(args.scale_rows, args.scale_trees)
        print()
    print(f"Load average at the end: {_load()}. Regenerate: .venv/bin/python benchmarks/bench_dask.py "
          f"--repeats {args.repeats} --parts {args.parts} --scale-rows {args.scale_rows} --scale-trees {args.scale_trees} "
          f"--queries {args.queries}")  # fmt: skip


if __name__ == "__main__":
    main()
