"""The click protocol's paired intervals, again with each test query counted once (seeds averaged).

``bench_clicks.py``'s intervals resample the per-query values of every run (queries x splits x
seeds) as if they were independent. The seeds of one split share its test queries, so a query's
values across seeds are correlated and those intervals may be too narrow. Here the per-query
differences of a split are first averaged over its seeds, and the bootstrap resamples the
queries (split x query). Prints both intervals for the comparisons issue 31's targets read.

    cd benchmarks && ../.venv/bin/python clicks_intervals_by_query.py DIR [--join DIR2,DIR3] [--clicks pbm1,pbm2]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench_clicks import join_runs, load_runs
from ranklearn.stats import bootstrap_interval

FIRST, SECOND = "ranklearn chosen on IPW-DCG", "ranklearn chosen on IPW-DCG, 31 or 7 leaves"
IPW, DLA = "neural IPW (regression-EM propensities)", "neural DLA"
COMPARISONS = [(SECOND, "naive"), (SECOND, "LightGBM position"), (SECOND, "XGBoost unbiased"), (FIRST, "naive"),
               (FIRST, "LightGBM position"), (FIRST, "XGBoost unbiased"), (DLA, "neural naive"),
               (IPW, "neural naive"), (DLA, IPW), ("full information", "naive")]  # fmt: skip


def _verdict(low: float, high: float) -> str:
    return "above" if low > 0 else "below" if high < 0 else "inside the noise"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--join", default="")
    ap.add_argument("--clicks", default="pbm1,pbm2")
    args = ap.parse_args()
    runs = load_runs([[args.dir]])
    if args.join:
        runs = join_runs(runs, [Path(d) for d in args.join.split(",")])
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        if run["click"] in args.clicks.split(","):
            groups.setdefault((run["split"].split()[0], run["click"], run["n_sessions"]), []).append(run)
    for (data, click, sessions), group in sorted(groups.items()):
        print(f"### {data}, {click}, {sessions:,} sessions: {len(group)} runs")
        print()
        print("| comparison | difference | per value (bench_clicks) | per query, seeds averaged |")
        print("|---|---:|---|---|")
        for a, b in COMPARISONS:
            if not all(a in r["per_query"] and b in r["per_query"] for r in group):
                continue
            values = [np.concatenate([r["per_query"][n]["ndcg@10"] for r in group]) for n in (a, b)]
            per_split: dict[str, list[np.ndarray]] = {}
            for r in group:
                per_split.setdefault(r["split"], []).append(r["per_query"][a]["ndcg@10"] - r["per_query"][b]["ndcg@10"])
            by_query = np.concatenate([np.mean(d, axis=0) for d in per_split.values()])
            low, high = bootstrap_interval(*values, n_resamples=5000, seed=0)
            q_low, q_high = bootstrap_interval(by_query, np.zeros_like(by_query), n_resamples=5000, seed=0)
            print(f"| {a} - {b} | {values[0].mean() - values[1].mean():+.4f} | [{low:+.4f}, {high:+.4f}] "
                  f"{_verdict(low, high)} | [{q_low:+.4f}, {q_high:+.4f}] {_verdict(q_low, q_high)} ({by_query.size} "
                  "queries) |")  # fmt: skip
        print()


if __name__ == "__main__":
    main()
