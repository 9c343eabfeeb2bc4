"""Click simulation speed and propensity recovery on MQ2008 Fold1 (issue 29, part 1).

1. Time ``ranklearn.clicks.simulate`` for 10^6 PBM sessions (top 10) on MQ2008 Fold1's training
   queries, on 2 threads and on 1, interleaved with a plain numpy PBM simulator (the same
   sessions' arithmetic, vectorized; no other library simulates clicks), median of --repeats.
2. Estimate the PBM propensities (eta 1, epsilon 0.1) from 10^4 / 10^5 / 10^6 sessions by swap
   interventions (rank 1, or RandPair's pivot 3, swapped with a uniform rank), EM and
   regression EM (Plackett-Luce logging at temperature 1; regression EM also under the
   deterministic logging ranker) and intervention harvesting (three logging rankers), and print
   each rank's relative error against theta_k / theta_1.

The logging ranker is a LambdaMART trained on the true labels of 1% of the training queries (5
queries), as the unbiased-LTR protocol's "production" ranker. The 1-minute load average is
printed beside every timing: the machine is shared with other agents' work.

    PYTHONPATH=src python benchmarks/bench_clicks_simulate.py [--repeats 5] [--bootstrap 20]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from _common import interleaved, require_shared_data


def numpy_pbm(ds, scores, theta, relevance, n_sessions, top_k, seed):
    """Reference: the PBM's clicks of deterministic top-k lists with numpy's vectorized generator."""
    rng = np.random.default_rng(seed)
    n_queries = ds.n_queries
    query_of_row = np.repeat(np.arange(n_queries), np.diff(ds.ptr))
    order = np.lexsort((-scores, query_of_row))  # each query's rows, best first
    lists = np.full((n_queries, top_k), -1)
    for q in range(n_queries):
        top = order[ds.ptr[q] : ds.ptr[q + 1]][:top_k]
        lists[q, : len(top)] = top
    session_query = rng.integers(0, n_queries, n_sessions)
    rows = lists[session_query]
    shown = rows >= 0
    attract = 0.1 + 0.9 * relevance[np.where(shown, rows, 0)]
    clicks = (rng.random(rows.shape) < theta[None, :] * attract) & shown
    return clicks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=20, help="bootstrap resamples of each propensity estimate")
    parser.add_argument("--sessions", type=int, nargs="+", default=[10**4, 10**5, 10**6])
    parser.add_argument("--methods", nargs="+", default=["swap", "em", "regression_em", "harvest"],
                        help="propensity estimators to run")
    parser.add_argument("--skip-speed", action="store_true", help="leave out the simulation timings")
    args = parser.parse_args()

    from ranklearn.clicks.models import theta_base
    from ranklearn.clicks.simulation import relevance_probabilities
    from ranklearn.data import load_svmlight
    from ranklearn.models import LambdaMART

    data = require_shared_data() / "MQ2008" / "Fold1" / "train.txt"
    ds = load_svmlight(data)
    rng = np.random.default_rng(0)
    few = np.isin(ds.qid, rng.choice(ds.query_ids, max(1, ds.n_queries // 100), replace=False))
    logging = LambdaMART(n_estimators=30, num_leaves=8, random_state=0).fit(ds.X[few], ds.y[few], qid=ds.qid[few])
    scores = logging.predict(ds.X)
    print(f"MQ2008 Fold1 train: {ds.n_queries} queries, {ds.n_samples} documents; logging ranker: LambdaMART "
          f"(30 trees) on {int(np.unique(ds.qid[few]).size)} queries' labels")  # fmt: skip
    print(f"cpus {os.cpu_count()}, 1-minute load at start {os.getloadavg()[0]:.2f} (machine shared with other agents)")

    # --- 1. speed
    n, top_k = 10**6, 10
    theta = theta_base(top_k)
    relevance = relevance_probabilities(ds.y, max(float(ds.y.max()), 1.0))
    if not args.skip_speed:
        speed(ds, scores, n, theta, relevance, top_k, args.repeats)
    propensities(ds, scores, theta, logging, rng, args)


def speed(ds, scores, n, theta, relevance, top_k, repeats) -> None:
    from ranklearn.clicks import PBM, simulate
    simulate(ds, scores, PBM(), n_sessions=1000, n_jobs=2)  # compile (numba's cache) outside the timings
    fns = {
        "ranklearn simulate, 2 threads": lambda: simulate(ds, scores, PBM(), n_sessions=n, seed=0, n_jobs=2),
        "ranklearn simulate, 1 thread": lambda: simulate(ds, scores, PBM(), n_sessions=n, seed=0, n_jobs=1),
        "numpy vectorized PBM (reference)": lambda: numpy_pbm(ds, scores, theta, relevance, n, top_k, 0),
        "ranklearn, Plackett-Luce T=1, 2 threads": lambda: simulate(ds, scores, PBM(), n_sessions=n, seed=0,
                                                                    n_jobs=2, temperature=1.0),  # fmt: skip
    }
    medians, out, loads = interleaved(repeats, fns)
    log = out["ranklearn simulate, 2 threads"]
    print(f"\n10^6 PBM sessions (eta 1, epsilon 0.1, top 10): {len(log):,} impressions, {int(log.click.sum()):,} clicks")
    print("| simulator | median s |")
    print("|---|---:|")
    for name, t in medians.items():
        print(f"| {name} | {t:.3f} |")
    print(f"median of {repeats} interleaved rounds; 1-minute load during the runs {min(loads):.2f}-{max(loads):.2f}")


def propensities(ds, scores, theta, logging, rng, args) -> None:
    from ranklearn.clicks import PBM, estimate_propensity, simulate

    truth = theta / theta[0]
    several = np.stack([scores, *(logging.predict(ds.X) + rng.normal(scale=s, size=ds.n_samples) for s in (0.5, 1.0))])
    print(f"\nPropensity estimates, PBM eta 1 epsilon 0.1, relative error (estimate / (theta_k/theta_1) - 1) in %, "
          f"{args.bootstrap} bootstrap resamples; 1-minute load at start {os.getloadavg()[0]:.2f}")  # fmt: skip
    print("| method | sessions | " + " | ".join(f"rank {k}" for k in range(2, 11)) + " | max abs | max abs / SE | seconds |")
    print("|---|---:|" + "---:|" * 12)
    for n_sessions in args.sessions:
        for method, make in (
            ("swap", lambda m: simulate(ds, scores, PBM(), n_sessions=m, seed=1, intervention="swap")),
            ("swap (RandPair, pivot 3)", lambda m: simulate(ds, scores, PBM(), n_sessions=m, seed=1,
                                                            intervention="randpair", pivot=3)),  # fmt: skip
            ("em (PL logging, T=1)", lambda m: simulate(ds, scores, PBM(), n_sessions=m, seed=1, temperature=1.0)),
            ("regression_em (PL logging, T=1)", lambda m: simulate(ds, scores, PBM(), n_sessions=m, seed=1,
                                                                   temperature=1.0)),  # fmt: skip
            ("regression_em (deterministic logging)", lambda m: simulate(ds, scores, PBM(), n_sessions=m, seed=1)),
            ("harvest (3 rankers)", lambda m: simulate(ds, several, PBM(), n_sessions=m, seed=1)),
        ):
            if method.split()[0] not in args.methods:
                continue
            log = make(n_sessions)
            t0 = time.perf_counter()
            p = estimate_propensity(log, method.split()[0], dataset=ds, n_bootstrap=args.bootstrap)
            seconds = time.perf_counter() - t0
            err = (p.propensity / truth - 1) * 100
            cells = " | ".join(f"{e:+.1f}" for e in err[1:])
            z = np.nanmax(np.abs(p.propensity - truth)[1:] / p.stderr[1:])  # in bootstrap standard errors
            print(f"| {method} | {n_sessions:,} | {cells} | {np.nanmax(np.abs(err)):.1f} | {z:.1f} | {seconds:.1f} |",
                  flush=True)  # fmt: skip
    print(f"1-minute load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
