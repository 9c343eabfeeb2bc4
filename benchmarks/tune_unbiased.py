"""Defaults of LambdaMART's debiased estimators, chosen on validation clicks only (issue 31).

    cd benchmarks && ../.venv/bin/python tune_unbiased.py [--data mq2008,mslr] [--sessions 100000] [--seed 100]
        [--metric click-ndcg|ipw-dcg]

The pre-registered plan and rule are in ranker_defaults.md ("Defaults of the debiased
LambdaMART"). For each split of bench_clicks.py: the click protocol's experiment (PBM eta=1,
training sessions merged per distinct session), then every candidate of ``position_bias_norm``
(``unbiased="pairwise"``) and ``position_bias_regularization`` (``"position_factors"``) trained on
the training clicks and early-stopped on the validation clicks; scored by the NDCG@10 of every
validation session. No true label of any split is read by a candidate.

``--metric ipw-dcg``: candidates early-stopped and scored on the IPW click DCG@10 of the
validation sessions (``ranklearn.clicks.ipw_dcg``), with propensities from the swap estimator on
``SWAP_SHARE`` more training-query sessions with swap interventions (as bench_clicks.py's
``--ipw`` rows): raw clicks reward a model for ranking as the logging ranker did, which the
debiased estimators are built not to do.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from bench_clicks import MAX_VALID_SESSIONS, PATIENCE, ROUNDS, SWAP_SHARE, _sizes, splits
from ranklearn import LambdaMART
from ranklearn.clicks import PBM, estimate_propensity, ipw_dcg, ipw_eval_set
from ranklearn.clicks.protocol import prepare
from ranklearn.metrics import get_metric
from ranklearn.stats import bootstrap_interval

#: (method, parameter, candidates; the current default first)
GRID = (
    ("pairwise", "position_bias_norm", (2.0, 0.5, 1.0, 4.0)),
    ("position_factors", "position_bias_regularization", (1.0, 0.0, 0.1, 10.0)),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="mq2008,mslr")
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--metric", choices=("click-ndcg", "ipw-dcg"), default="click-ndcg",
                    help="the validation metric that stops and scores every candidate")
    args = ap.parse_args()
    ipw = args.metric == "ipw-dcg"
    score = ipw_dcg(10) if ipw else get_metric("ndcg@10")
    values: dict[tuple[str, str, float], dict[str, list[np.ndarray]]] = {}
    start, loads = time.perf_counter(), []
    for split, (tr, va, _test) in splits(args.data.split(",")):  # the test part is never read
        dataset = split.split()[0]
        exp = prepare(tr, va, PBM(eta=1.0, epsilon=0.1), n_sessions=args.sessions, seed=args.seed,
                      merge_sessions=True, max_valid_sessions=MAX_VALID_SESSIONS,
                      swap_sessions=int(SWAP_SHARE * args.sessions) if ipw else 0)  # fmt: skip
        v = exp.valid_clicks
        ptr = np.r_[0, np.cumsum(_sizes(v.qid))]
        if ipw:
            eval_set = ipw_eval_set(v, estimate_propensity(exp.swap_log, "swap", n_bootstrap=0))
            stopping = dict(metric=score, lambda_metric="ndcg@10")
        else:
            eval_set, stopping = exp.eval_set(), {}
        labels = eval_set[1]
        for method, param, candidates in GRID:
            for value in candidates:
                model = LambdaMART(n_estimators=ROUNDS, early_stopping_rounds=PATIENCE, random_state=args.seed,
                                   unbiased=method, **{param: value}, **stopping)  # fmt: skip
                model.fit(exp.train_clicks.X, exp.train_clicks.y, eval_set=[eval_set], **exp.fit_kwargs())
                per_session = score.per_query(labels, np.asarray(model.predict(v.X), dtype=np.float64), ptr)
                values.setdefault((method, param, value), {}).setdefault(dataset, []).append(per_session)
                loads.append(os.getloadavg()[0])
                print(f"[{split} {method} {param}={value}: {per_session.mean():.4f}, load {loads[-1]:.1f}]", flush=True)
    datasets = list(next(iter(values.values())))
    print()
    print(f"{time.perf_counter() - start:.0f} s; 1-minute load {min(loads):.2f}-{max(loads):.2f} (2 cores, shared); "
          f"PBM eta=1, {args.sessions:,} training sessions, seed {args.seed}; validation "
          f"{'IPW click DCG@10 (swap propensities)' if ipw else 'click NDCG@10'} per session")  # fmt: skip
    print()
    print("| estimator | setting | mean of datasets | " + " | ".join(datasets) + " | "
          + " | ".join(f"{d} vs default [95%]" for d in datasets) + " |")  # fmt: skip
    print("|---|---|---:|" + "---:|" * (2 * len(datasets)))
    for method, param, candidates in GRID:
        base = {d: np.concatenate(values[(method, param, candidates[0])][d]) for d in datasets}
        for value in candidates:
            got = {d: np.concatenate(values[(method, param, value)][d]) for d in datasets}
            diffs = []
            for d in datasets:
                low, high = bootstrap_interval(got[d], base[d], n_resamples=5000, seed=0)
                diffs.append(f"{got[d].mean() - base[d].mean():+.4f} [{low:+.4f}, {high:+.4f}]")
            mean = np.mean([got[d].mean() for d in datasets])
            print(f"| {method} | {param}={value} | {mean:.4f} | " + " | ".join(f"{got[d].mean():.4f}" for d in datasets)
                  + " | " + " | ".join(diffs) + " |")  # fmt: skip


if __name__ == "__main__":
    main()
