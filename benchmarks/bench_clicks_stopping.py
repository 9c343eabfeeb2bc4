"""Which iteration early stopping picks on the validation clicks: raw click NDCG@10 against the IPW click DCG@10.

    cd benchmarks && python bench_clicks_stopping.py [--fold 1] [--clicks pbm1] [--sessions 100000]
        [--trees 300] [--swap-share 0.1] [--seed 0]

The protocol of bench_clicks.py on one MQ2008 fold (logging ranker on 1% of the training
queries, PBM clicks, training sessions merged, validation sessions in proportion, at most
50,000), plus ``swap-share x sessions`` more training-query sessions with swap interventions
from which the swap estimator gives the propensities (``ranklearn.clicks.estimate_propensity``).
Two models are fitted for ``--trees`` trees without early stopping: the naive LambdaMART (clicks
as labels) and ``LambdaMART(unbiased="ipw")`` with the estimated propensities. After every tree,
on the validation sessions: NDCG@10 of the raw clicks (the protocol's early-stopping metric until
now) and the IPW click DCG@10 (``ranklearn.clicks.ipw_dcg``, clicks / estimated propensity of
the rank shown); and, **for this diagnosis only, never for a choice**, NDCG@10 of the validation
queries' true labels. Printed: the tree each click metric would stop at (its best; ties: the
first) and the true-label NDCG@10 there, beside the true-label best. Also the estimated
propensities against the simulated ones.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from _common import require_shared_data
from bench_clicks import CLICK_MODELS, MAX_VALID_SESSIONS
from ranklearn import LambdaMART
from ranklearn.clicks import estimate_propensity, ipw_dcg, ipw_eval_set
from ranklearn.clicks.protocol import prepare
from ranklearn.data.groups import group_ptr
from ranklearn.datasets import load_letor_fold
from ranklearn.metrics import get_metric


def staged_scores(model: LambdaMART, X: np.ndarray) -> np.ndarray:
    """Scores of ``X`` after each tree (rows: trees 1..n)."""
    n = len(model.trees_)
    steps = np.array([model.predict(X, iteration_range=(t, t + 1)) for t in range(n)])
    return np.cumsum(steps, axis=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fold", type=int, default=1)
    ap.add_argument("--clicks", default="pbm1")
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--trees", type=int, default=300)
    ap.add_argument("--swap-share", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tr, va, _ = load_letor_fold(require_shared_data() / "MQ2008", args.fold)
    click_model = CLICK_MODELS[args.clicks]()
    start = time.perf_counter()
    exp = prepare(tr, va, click_model, n_sessions=args.sessions, seed=args.seed, merge_sessions=True,
                  max_valid_sessions=MAX_VALID_SESSIONS, swap_sessions=int(args.swap_share * args.sessions))  # fmt: skip
    prop = estimate_propensity(exp.swap_log, "swap", n_bootstrap=0)
    truth = click_model.kernel_params(10).examination
    print(f"MQ2008 Fold{args.fold}, {click_model!r}, {args.sessions:,} sessions (+{exp.swap_log.session.max() + 1:,} "
          f"swap sessions), seed {args.seed}; {exp.train_clicks.y.size:,} training rows")  # fmt: skip
    print("propensity (swap estimate / simulated), ranks 1-10:")
    print("  " + " ".join(f"{p:.3f}" for p in prop.propensity))
    print("  " + " ".join(f"{p:.3f}" for p in truth / truth[0]))
    t, v = exp.train_clicks, exp.valid_clicks
    v_ptr = group_ptr(v.qid)
    _, ipw_y, _ = ipw_eval_set(v, prop)
    raw, dcg, ndcg = get_metric("ndcg@10"), ipw_dcg(10), get_metric("ndcg@10")
    true_ptr = group_ptr(va.qid)
    print()
    print("| model | stopping metric | stops at tree | true-label NDCG@10 there |")
    print("|---|---|---:|---:|")
    for name, params in (("naive", {}), ("ipw (swap propensities)", dict(unbiased="ipw", propensity=prop.propensity))):
        model = LambdaMART(n_estimators=args.trees, random_state=args.seed, **params)
        kwargs = dict(position=t.position) if params else {}
        model.fit(t.X, t.y, qid=t.qid, sample_weight=t.sample_weight, **kwargs)
        s_valid, s_true = staged_scores(model, v.X), staged_scores(model, va.X)
        curves = {
            "raw click NDCG@10": np.array([raw.mean(v.y, s, v_ptr) for s in s_valid]),
            "IPW click DCG@10": np.array([dcg.mean(ipw_y, s, v_ptr) for s in s_valid]),
        }
        true = np.array([ndcg.mean(va.y, s, true_ptr) for s in s_true])
        for metric, curve in curves.items():
            best = int(np.argmax(curve))
            print(f"| {name} | {metric} | {best + 1} | {true[best]:.4f} |")
        print(f"| {name} | (true labels: diagnosis only) | {int(np.argmax(true)) + 1} | {true.max():.4f} |")
    print()
    print(f"{time.perf_counter() - start:.0f} s; 1-minute load {os.getloadavg()[0]:.2f} (2 cores, shared)")


if __name__ == "__main__":
    main()
