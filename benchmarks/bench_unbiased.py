"""Speed of debiased LambdaMART (unbiased=) against plain LambdaMART on the same aggregated click data.

Issue 31's target: a debiased fit takes at most 1.3x the time of a plain fit, 200,000 rows,
2 threads. Clicks are simulated (PBM, eta 1, Plackett-Luce logging at temperature 1 so that
documents are shown at several ranks) on synthetic queries and aggregated per query, document
and position (y = clicks, sample_weight = impressions); the first 200,000 rows (whole queries)
are the training set of every fit. Fits run interleaved, median of ``--repeats``; the 1-minute
load average is printed beside every timing (the machine is shared with other agents' jobs).

    python benchmarks/bench_unbiased.py [--rows 200000] [--trees 100] [--repeats 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import interleaved  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sessions", type=int, default=400_000)
    args = ap.parse_args()

    from ranklearn.clicks import PBM, simulate
    from ranklearn.clicks.models import theta_base
    from ranklearn.data.groups import group_ptr
    from ranklearn.datasets import make_ranking
    from ranklearn.models.lambdamart import LambdaMART

    data = make_ranking(4000, 20, docs_per_query=(20, 60), random_state=0)
    log = simulate(data, data.X[:, 0], PBM(eta=1.0), n_sessions=args.sessions, seed=0, temperature=1.0)
    t = log.training_set(data, per="position")
    ptr = group_ptr(t.qid)
    end = int(ptr[np.searchsorted(ptr, args.rows, side="right") - 1])  # whole queries, at most --rows
    X, y, qid, w, pos = t.X[:end], t.y[:end], t.qid[:end], t.sample_weight[:end], t.position[:end]
    print(f"aggregated click rows: {end} of {len(t.y)} ({len(np.unique(qid))} queries), {int(y.sum())} clicks")

    common = dict(n_estimators=args.trees, num_leaves=31, random_state=0, n_jobs=args.threads)
    settings = {
        "plain": {},
        "pairwise": dict(unbiased="pairwise"),
        "position_factors": dict(unbiased="position_factors"),
        "ipw": dict(unbiased="ipw", propensity=theta_base(10)),
    }

    def fit(params):
        position = pos if params else None
        return lambda: LambdaMART(**common, **params).fit(X, y, qid=qid, sample_weight=w, position=position)

    fit(settings["plain"])()  # compile once, outside the timings
    fit(settings["pairwise"])()
    medians, _, loads = interleaved(args.repeats, {name: fit(p) for name, p in settings.items()})
    print(f"{args.trees} trees, {args.threads} threads, median of {args.repeats} interleaved runs")
    print(f"load average (1 min) during the runs: {min(loads):.2f}-{max(loads):.2f}; now {os.getloadavg()[0]:.2f}")
    for name, sec in medians.items():
        print(f"  {name:18s} {sec:7.2f} s   {sec / medians['plain']:.2f}x plain")


if __name__ == "__main__":
    main()
