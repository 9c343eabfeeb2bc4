"""The click protocol's paired intervals, again with each test query counted once (seeds averaged).

``bench_clicks.py``'s intervals resample the per-query values of every run (queries x splits x
seeds) as if they were independent. The seeds of one split share its test queries, so a query's
values across seeds are correlated and those intervals may be too narrow. Here the per-query
differences of a split are first averaged over its seeds, and the bootstrap resamples the
queries (split x query). Prints both intervals for the comparisons issue 31's targets read, and
each tree entry's share of the gap (its mean difference to naive over full information's) with a
paired percentile interval (``scipy.stats.bootstrap``, the two differences resampled together).

    cd benchmarks && ../.venv/bin/python clicks_intervals_by_query.py DIR [--join DIR2,DIR3] [--clicks pbm1,pbm2]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy import stats

from bench_clicks import join_runs, load_runs
from ranklearn.stats import bootstrap_interval

FIRST, SECOND = "ranklearn chosen on IPW-DCG", "ranklearn chosen on IPW-DCG, 31 or 7 leaves"
THIRD = "ranklearn IPW labels over the candidates, 31 or 7 leaves"
IPW, DLA = "neural IPW (regression-EM propensities)", "neural DLA"
COMPARISONS = [(SECOND, "naive"), (SECOND, "LightGBM position"), (SECOND, "XGBoost unbiased"), (FIRST, "naive"),
               (FIRST, "LightGBM position"), (FIRST, "XGBoost unbiased"), (DLA, "neural naive"),
               (IPW, "neural naive"), (DLA, IPW), ("full information", "naive")]  # fmt: skip


def _verdict(low: float, high: float) -> str:
    return "above" if low > 0 else "below" if high < 0 else "inside the noise"


def _share(entry: np.ndarray, full: np.ndarray) -> str:
    """An entry's share of the gap, ``mean(entry) / mean(full)`` of per-unit differences to naive,
    and its 95% percentile interval, the units resampled with both differences."""
    ratio = lambda a, b, axis=-1: a.mean(axis=axis) / b.mean(axis=axis)  # noqa: E731
    ci = stats.bootstrap((entry, full), ratio, paired=True, vectorized=True, n_resamples=5000, method="percentile",
                         random_state=np.random.default_rng(0)).confidence_interval  # fmt: skip
    return f"{ratio(entry, full):.0%} [{ci.low:.0%}, {ci.high:.0%}]"


def _differences(group: list[dict], a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    """``a - b`` per value (queries x splits x seeds) and per query (a split's seeds averaged)."""
    per_split: dict[str, list[np.ndarray]] = {}
    for r in group:
        per_split.setdefault(r["split"], []).append(r["per_query"][a]["ndcg@10"] - r["per_query"][b]["ndcg@10"])
    return (np.concatenate([d for ds in per_split.values() for d in ds]),
            np.concatenate([np.mean(d, axis=0) for d in per_split.values()]))  # fmt: skip


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
            by_query = _differences(group, a, b)[1]
            low, high = bootstrap_interval(*values, n_resamples=5000, seed=0)
            q_low, q_high = bootstrap_interval(by_query, np.zeros_like(by_query), n_resamples=5000, seed=0)
            print(f"| {a} - {b} | {values[0].mean() - values[1].mean():+.4f} | [{low:+.4f}, {high:+.4f}] "
                  f"{_verdict(low, high)} | [{q_low:+.4f}, {q_high:+.4f}] {_verdict(q_low, q_high)} ({by_query.size} "
                  "queries) |")  # fmt: skip
        print()
        entries = [e for e in (FIRST, SECOND, THIRD) if all(e in r["per_query"] for r in group)]
        if entries and all("full information" in r["per_query"] for r in group):
            full = _differences(group, "full information", "naive")
            print("| entry | share of the gap full information - naive, per value [95%] | per query, seeds averaged |")
            print("|---|---|---|")
            for e in entries:
                mine = _differences(group, e, "naive")
                print(f"| {e} | {_share(mine[0], full[0])} | {_share(mine[1], full[1])} |")
            print()


if __name__ == "__main__":
    main()
