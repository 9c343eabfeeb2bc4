"""LambdaMART quality on MQ2008 5-fold against LightGBM lambdarank and XGBoost rank:ndcg.

Same settings for all three (31 leaves, learning rate 0.1, at least 20 documents per leaf,
at most 500 trees, early stopping after 50 rounds on validation NDCG@10), all scored by
ranklearn's evaluator: test NDCG@10, gain 2^rel-1, ties in input order, queries without a
relevant document count 0 (and, for comparison, 1).

    .venv/bin/python benchmarks/bench_quality.py [--folds 1,2,3,4,5] [--threads 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import block_ids, group_sizes, load_letor, require_shared_data

from ranklearn.data.groups import group_ptr
from ranklearn.metrics import get_metric

TREES, LEAVES, LR, MIN_LEAF, PATIENCE = 500, 31, 0.1, 20, 50


def run_ranklearn(tr, va, te, threads, seed):
    from ranklearn import LambdaMART

    m = LambdaMART(
        n_estimators=TREES,
        learning_rate=LR,
        num_leaves=LEAVES,
        min_samples_leaf=MIN_LEAF,
        early_stopping_rounds=PATIENCE,
        n_jobs=threads,
        random_state=seed,
    )
    m.fit(*tr, eval_set=[va])
    return m.predict(te[0]), m.best_iteration_


def run_lightgbm(tr, va, te, threads, seed):
    import lightgbm as lgb

    m = lgb.LGBMRanker(
        objective="lambdarank",
        n_estimators=TREES,
        learning_rate=LR,
        num_leaves=LEAVES,
        min_child_samples=MIN_LEAF,
        n_jobs=threads,
        random_state=seed,
        verbose=-1,
    )
    m.fit(
        tr[0], tr[1], group=group_sizes(tr[2]),
        eval_set=[(va[0], va[1])], eval_group=[group_sizes(va[2])], eval_at=[10],
        callbacks=[lgb.early_stopping(PATIENCE, verbose=False)],
    )
    return m.predict(te[0], num_iteration=m.best_iteration_), m.best_iteration_


def run_xgboost(tr, va, te, threads, seed):
    import xgboost as xgb

    m = xgb.XGBRanker(
        objective="rank:ndcg",
        n_estimators=TREES,
        learning_rate=LR,
        tree_method="hist",
        grow_policy="lossguide",
        max_leaves=LEAVES,
        max_depth=0,
        eval_metric="ndcg@10",
        early_stopping_rounds=PATIENCE,
        n_jobs=threads,
        random_state=seed,
    )
    # XGBoost wants sorted qids; MQ2008's are not, so number the query blocks in order.
    m.fit(tr[0], tr[1], qid=block_ids(tr[2]), eval_set=[(va[0], va[1])], eval_qid=[block_ids(va[2])], verbose=False)
    return m.predict(te[0], iteration_range=(0, m.best_iteration + 1)), m.best_iteration + 1


RUNNERS = {"ranklearn": run_ranklearn, "lightgbm": run_lightgbm, "xgboost": run_xgboost}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", default="1,2,3,4,5")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--libs", default="ranklearn,lightgbm,xgboost")
    args = ap.parse_args()
    root = require_shared_data() / "MQ2008"
    libs = args.libs.split(",")
    folds = [int(f) for f in args.folds.split(",")]
    zero = get_metric("ndcg@10", empty="zero")
    one = get_metric("ndcg@10", empty="one")
    res = {lib: {"zero": [], "one": [], "trees": [], "secs": []} for lib in libs}
    for fold in folds:
        d = root / f"Fold{fold}"
        tr, va, te = (load_letor(d / f"{n}.txt") for n in ("train", "vali", "test"))
        ptr = group_ptr(te[2])
        for lib in libs:
            t0 = time.perf_counter()
            scores, trees = RUNNERS[lib](tr, va, te, args.threads, args.seed)
            res[lib]["secs"].append(time.perf_counter() - t0)
            res[lib]["zero"].append(zero.mean(te[1], scores, ptr))
            res[lib]["one"].append(one.mean(te[1], scores, ptr))
            res[lib]["trees"].append(trees)
            print(f"fold {fold} {lib:10s} NDCG@10 {res[lib]['zero'][-1]:.4f} (empty=1: {res[lib]['one'][-1]:.4f}) trees {trees}", flush=True)
    print()
    print("| library | " + " | ".join(f"Fold{f}" for f in folds) + " | mean (empty=0) | mean (empty=1) | mean trees |")
    print("|---|" + "---|" * (len(folds) + 3))
    for lib in libs:
        r = res[lib]
        print(
            f"| {lib} | " + " | ".join(f"{v:.4f}" for v in r["zero"])
            + f" | **{np.mean(r['zero']):.4f}** | {np.mean(r['one']):.4f} | {np.mean(r['trees']):.0f} |"
        )
    print("\nNDCG@10: gain 2^rel-1, ties in input order, queries without relevant documents count 0 "
          "(empty=0) or 1 (empty=1); all scored by ranklearn.metrics.")


if __name__ == "__main__":
    main()
