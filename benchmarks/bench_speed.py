"""LambdaMART speed against LightGBM lambdarank, measured in the same run.

Synthetic 200,000 documents x 136 features (1,600 queries x 125 documents, from
ranklearn.datasets.make_ranking), 50 trees, 31 leaves, 255 bins, 2 threads. Both libraries
are warmed up first (numba compilation for ranklearn); the two libraries run interleaved,
``--repeats`` times, and each timing is the median, with the load average (1 minute) over
those runs beside it. Ratios are ranklearn / LightGBM: below 1 means ranklearn is faster.
The machines are shared and noisy, so read the ratios, not the seconds.
Both libraries run in this one process and share GNU OpenMP, loaded first by LightGBM with its
spinning default, so ranklearn's wait policy does not apply here; bench_scaling.py runs each
library in its own process with its own defaults.

    .venv/bin/python benchmarks/bench_speed.py [--repeats 3] [--threads 2]
"""

from __future__ import annotations

import argparse
from _common import group_sizes, interleaved

TREES, LEAVES, BINS, LR, MIN_LEAF = 50, 31, 255, 0.1, 20


def lgb_params(threads: int) -> dict:
    return {
        "objective": "lambdarank",
        "num_leaves": LEAVES,
        "max_bin": BINS,
        "learning_rate": LR,
        "min_data_in_leaf": MIN_LEAF,
        "num_threads": threads,
        "verbose": -1,
        "seed": 0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--queries", type=int, default=1600)
    ap.add_argument("--docs", type=int, default=125)
    ap.add_argument("--features", type=int, default=136)
    args = ap.parse_args()

    import lightgbm as lgb

    from ranklearn import LambdaMART
    from ranklearn.datasets import make_ranking
    from ranklearn._threads import numba_threads
    from ranklearn.tree.binning import BinMapper

    X, y, qid = make_ranking(
        args.queries, args.features, n_informative=20, docs_per_query=(args.docs, args.docs),
        random_state=0, return_X_y=True,
    )
    groups = group_sizes(qid)
    print(f"data: {X.shape[0]:,} rows x {X.shape[1]} features, {len(groups)} queries; "
          f"{TREES} trees, {LEAVES} leaves, {BINS} bins, {args.threads} threads", flush=True)

    def ours_fit():
        return LambdaMART(n_estimators=TREES, num_leaves=LEAVES, max_bins=BINS, learning_rate=LR,
                          min_samples_leaf=MIN_LEAF, n_jobs=args.threads, random_state=0).fit(X, y, qid)

    def lgb_dataset():
        return lgb.Dataset(X, y, group=groups, params={"max_bin": BINS, "verbose": -1,
                                                      "num_threads": args.threads}).construct()

    def lgb_fit():
        return lgb.train(lgb_params(args.threads), lgb_dataset(), num_boost_round=TREES)

    def ours_bin():
        with numba_threads(args.threads):
            return BinMapper(BINS).fit_transform(X)

    # warm-up: compile ranklearn's kernels, load LightGBM's library
    small = slice(0, 20 * args.docs)
    LambdaMART(n_estimators=2, n_jobs=args.threads).fit(X[small], y[small], qid[small]).predict(X[small])
    lgb.train(lgb_params(args.threads), lgb.Dataset(X[small], y[small], group=groups[:20]), 2)

    rows = []
    t, _, loads = interleaved(args.repeats, {"ours": ours_bin, "lgb": lgb_dataset})
    rows.append(("binning (fit bins + bin the data)", t["ours"], t["lgb"], loads))
    t_bin = t
    t, fitted, loads = interleaved(args.repeats, {"ours": ours_fit, "lgb": lgb_fit})
    rows.append((f"training {TREES} trees, binning included", t["ours"], t["lgb"], loads))
    rows.append((f"training {TREES} trees, binning excluded", t["ours"] - t_bin["ours"], t["lgb"] - t_bin["lgb"], loads))
    model, booster = fitted["ours"], fitted["lgb"]
    t, _, loads = interleaved(
        args.repeats, {"ours": lambda: model.predict(X), "lgb": lambda: booster.predict(X, num_threads=args.threads)}
    )
    rows.append((f"prediction ({X.shape[0]:,} rows)", t["ours"], t["lgb"], loads))

    print(f"\nMedian of {args.repeats} interleaved runs; load = 1-minute load average over those runs (min-max).\n")
    print("| step | ranklearn (s) | LightGBM (s) | ratio ranklearn/LightGBM | load |")
    print("|---|---|---|---|---|")
    for name, a, b, load in rows:
        print(f"| {name} | {a:.3f} | {b:.3f} | **{a / b:.2f}x** | {min(load):.2f}-{max(load):.2f} |")
    print(f"\nRegenerate: .venv/bin/python benchmarks/bench_speed.py --repeats {args.repeats} --threads {args.threads}")


if __name__ == "__main__":
    main()
