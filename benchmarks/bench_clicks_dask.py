"""DaskLambdaMART's debiased fits against one machine's at the click protocol's scale (issue 31).

    cd benchmarks && ../.venv/bin/python bench_clicks_dask.py [--sessions 1000000] [--trees 100] [--fold 1]

One experiment of ``bench_clicks.py`` (MQ2008 FoldN, PBM eta=1, epsilon 0.1, the logging ranker on
1% of the training queries' labels, ``--sessions`` training sessions merged per distinct session
with their counts as ``sample_weight``, 10% more with swap interventions for the IPW propensities).
For ``unbiased`` in pairwise, position_factors and ipw (the swap estimate's propensities), at the
defaults and ``--trees`` trees: ``LambdaMART`` on one machine and ``DaskLambdaMART`` on a
``LocalCluster`` of two 1-thread worker processes, its rows in 3 partitions cut at session
boundaries. Printed per method: how many trees have the same splits (features, bin thresholds,
missing directions, children, counts; the fields of the first trees that differ), the largest leaf-value difference, the largest difference of
the test predictions, whether ``position_bias_`` is the same bits, and both fit times beside the load.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from _common import require_shared_data

SPLIT_FIELDS = ("feature", "bin_threshold", "missing_left", "left", "right", "count")


def _load() -> str:
    return ", ".join(f"{v:.1f}" for v in os.getloadavg())


def _partitioned(arrays: list[np.ndarray], qid: np.ndarray, n_parts: int) -> list:
    """Dask arrays of ``n_parts`` partitions cut at session (qid) boundaries."""
    import dask.array as da

    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    cuts = np.r_[starts, qid.size][np.linspace(0, starts.size, n_parts + 1).astype(int)]
    rows = tuple(np.diff(cuts).tolist())
    return [da.from_array(a, chunks=(rows, -1) if a.ndim == 2 else (rows,)) for a in arrays]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=1_000_000)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--fold", type=int, default=1)
    args = ap.parse_args()

    import distributed

    from ranklearn import LambdaMART
    from ranklearn.clicks import PBM, estimate_propensity
    from ranklearn.clicks.protocol import prepare
    from ranklearn.dask import DaskLambdaMART
    from ranklearn.datasets import load_letor_fold

    train, valid, test = load_letor_fold(require_shared_data() / "MQ2008", args.fold)
    exp = prepare(train, valid, PBM(eta=1.0, epsilon=0.1), n_sessions=args.sessions, seed=0, merge_sessions=True,
                  max_valid_sessions=50_000, swap_sessions=args.sessions // 10)  # fmt: skip
    t = exp.train_clicks
    X = np.asarray(t.X.toarray() if hasattr(t.X, "toarray") else t.X, dtype=np.float32)
    Xte = np.asarray(test.X.toarray() if hasattr(test.X, "toarray") else test.X, dtype=np.float32)
    propensity = estimate_propensity(exp.swap_log, "swap", n_bootstrap=0).propensity
    print(f"MQ2008 Fold{args.fold}, PBM eta=1, {args.sessions:,} sessions merged into {X.shape[0]:,} rows "
          f"({np.unique(t.qid).size:,} distinct sessions), {args.trees} trees, defaults otherwise; "
          f"DaskLambdaMART on 2 worker processes x 1 thread, 3 partitions")  # fmt: skip
    print("| unbiased | trees with the same splits | max leaf-value diff | max test-prediction diff | position_bias_ same bits "
          "| one machine s | Dask s | load (1, 5, 15 min) |")  # fmt: skip
    print("|---|---|---|---|---|---:|---:|---|")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:  # fmt: skip
        dX, dy, dq, dw, dp = _partitioned([X, t.y, t.qid, t.sample_weight, t.position], t.qid, 3)
        for method in ("pairwise", "position_factors", "ipw"):
            params = dict(n_estimators=args.trees, random_state=0, unbiased=method)
            if method == "ipw":
                params["propensity"] = propensity
            start = time.perf_counter()
            ref = LambdaMART(**params).fit(X, t.y, qid=t.qid, sample_weight=t.sample_weight, position=t.position)
            local_s = time.perf_counter() - start
            start = time.perf_counter()
            ours = DaskLambdaMART(client=client, **params).fit(dX, dy, dq, sample_weight=dw, position=dp)
            dask_s = time.perf_counter() - start
            # per tree, the split fields that differ (an equal gain of two adjacent bins, one of them empty
            # in the node, is broken by the float sums' order: same rows each side, another bin threshold)
            differ = {i: [f for f in SPLIT_FIELDS if not np.array_equal(getattr(a, f), getattr(b, f))]
                      for i, (a, b) in enumerate(zip(ours.trees_, ref.trees_))}  # fmt: skip
            differ = {i: fields for i, fields in differ.items() if fields}
            same = f"{len(ref.trees_) - len(differ)}/{len(ref.trees_)}" if len(ours.trees_) == len(ref.trees_) else "no"
            if differ:
                same += " (" + "; ".join(f"tree {i}: {', '.join(f)}" for i, f in list(differ.items())[:3]) + ")"
            leaf = max(float(np.abs(a.value - b.value).max()) for a, b in zip(ours.trees_, ref.trees_))
            pred = float(np.abs(ours.predict(Xte) - ref.predict(Xte)).max())
            bias = ours.position_bias_.keys() == ref.position_bias_.keys() and all(
                np.array_equal(ours.position_bias_[k], v) for k, v in ref.position_bias_.items()
            )  # fmt: skip
            print(f"| {method} | {same} | {leaf:.1e} | {pred:.1e} | {'yes' if bias else 'no'} | "
                  f"{local_s:.1f} | {dask_s:.1f} | {_load()} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
