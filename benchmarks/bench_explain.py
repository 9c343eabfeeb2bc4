"""TreeSHAP speed: ranklearn's predict_contributions against LightGBM's pred_contrib on the same
trees, and predict_interactions against XGBoost's pred_interactions on a model of the same size.

A LambdaMART of ``--trees`` trees (31 leaves) is trained on MQ2008 fold 1 and exported with
ranklearn.io.lightgbm.export_lightgbm, so both libraries explain exactly the same trees (the
contributions are checked equal). The rows explained are MQ2008 rows (all five folds' test files)
drawn with replacement, ``--rows`` of them (100,000 by default). For 1 and 2 threads, ranklearn and
LightGBM run in turn (interleaved, so both see the same load), the median of ``--repeats`` runs,
with the 1-minute load average printed beside each figure.

Interactions: XGBoost cannot read the exported model, so an XGBoost ``rank:ndcg`` model of the
same shape (``--trees`` trees, at most 31 leaves, lossguide growth) is trained on the same data and
both explain ``--interaction-rows`` rows; comparable in work (trees, leaves, features used), not
the same trees.

    .venv/bin/python benchmarks/bench_explain.py [--rows 100000] [--trees 500] [--repeats 3]
        [--parts contributions,interactions]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np
from _common import group_sizes, interleaved, load_letor, require_shared_data

LEAVES = 31


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--interaction-rows", type=int, default=200)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--parts", default="contributions,interactions", help="comma-separated parts to run")
    args = ap.parse_args()
    parts = set(args.parts.split(","))

    import lightgbm as lgb
    import xgboost as xgb

    from ranklearn import LambdaMART
    from ranklearn._threads import thread_limit
    from ranklearn.io.lightgbm import export_lightgbm

    mq = require_shared_data() / "MQ2008"
    X, y, qid = load_letor(mq / "Fold1" / "train.txt")
    pool = np.vstack([load_letor(mq / f"Fold{f}" / "test.txt", n_features=X.shape[1])[0] for f in range(1, 6)])
    rows = pool[np.random.default_rng(0).integers(pool.shape[0], size=args.rows)]
    print(f"MQ2008 fold 1 train {X.shape[0]:,} rows x {X.shape[1]} features; explaining {rows.shape[0]:,} rows "
          f"drawn from the five test files; {os.cpu_count()} CPUs; {load()} (the machine may be shared with "
          "other processes: the load says how busy)")  # fmt: skip

    model = LambdaMART(n_estimators=args.trees, num_leaves=LEAVES, random_state=0).fit(X, y, qid)
    nodes = max(int(t.feature.shape[0]) for t in model.trees_)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.txt"
        export_lightgbm(model, path)
        booster = lgb.Booster(model_file=str(path))
    rows64 = rows.astype(np.float64)
    print(f"LambdaMART: {len(model.trees_)} trees, up to {nodes} nodes a tree; {load()}")

    check = model.predict_contributions(rows[:2000])  # at most 2,000 rows
    diff = np.abs(booster.predict(rows64[:2000], pred_contrib=True) - check).max()
    print(f"contributions, ranklearn vs LightGBM on {check.shape[0]:,} rows: max |difference| {diff:.2e}")

    for threads in (1, 2) if "contributions" in parts else ():
        def ours(threads=threads):
            with thread_limit(threads):
                return model.predict_contributions(rows)

        def theirs(threads=threads):
            return booster.predict(rows64, pred_contrib=True, num_threads=threads)

        med, _, loads = interleaved(args.repeats, {"ranklearn": ours, "lightgbm": theirs})
        print(f"contributions, {threads} thread(s), {rows.shape[0]:,} rows: ranklearn {med['ranklearn']:.2f} s, "
              f"LightGBM {med['lightgbm']:.2f} s, ratio ranklearn/LightGBM {med['ranklearn'] / med['lightgbm']:.2f}; "
              f"1-min load during the runs {min(loads):.2f}-{max(loads):.2f}")  # fmt: skip

    if "interactions" not in parts:
        return
    # interactions against XGBoost on a model of the same shape
    dtrain = xgb.DMatrix(X, label=y)
    dtrain.set_group(group_sizes(qid))
    xmodel = xgb.train({"objective": "rank:ndcg", "tree_method": "hist", "grow_policy": "lossguide",
                        "max_leaves": LEAVES, "max_depth": 0, "eta": 0.1, "seed": 0}, dtrain,
                       num_boost_round=args.trees)  # fmt: skip
    sub = rows[: args.interaction_rows]
    dsub = xgb.DMatrix(sub)
    used_ours = np.mean([np.unique(t.feature[t.feature >= 0]).shape[0] for t in model.trees_])
    frame = xmodel.trees_to_dataframe()
    used_xgb = frame[frame.Feature != "Leaf"].groupby("Tree").Feature.nunique().mean()
    print(f"XGBoost model: {args.trees} trees, at most {LEAVES} leaves; features per tree: ranklearn "
          f"{used_ours:.1f}, XGBoost {used_xgb:.1f}; {load()}")  # fmt: skip
    for threads in (1, 2):
        def ours_i(threads=threads):
            with thread_limit(threads):
                return model.predict_interactions(sub)

        def xgb_i(threads=threads):
            xmodel.set_param({"nthread": threads})
            return xmodel.predict(dsub, pred_interactions=True)

        med, out, loads = interleaved(args.repeats, {"ranklearn": ours_i, "xgboost": xgb_i})
        print(f"interactions, {threads} thread(s), {sub.shape[0]:,} rows: ranklearn {med['ranklearn']:.2f} s, "
              f"XGBoost {med['xgboost']:.2f} s, ratio {med['ranklearn'] / med['xgboost']:.2f}; "
              f"1-min load during the runs {min(loads):.2f}-{max(loads):.2f}")  # fmt: skip
    rowsum = np.abs(out["ranklearn"].sum(axis=2) - model.predict_contributions(sub)).max()
    print(f"ranklearn interactions: rows sum to the contributions within {rowsum:.1e}")


if __name__ == "__main__":
    main()
