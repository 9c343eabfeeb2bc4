"""Unbiased LambdaMART's learned ratios, ranklearn's against XGBoost's, on the click protocol's clicks.

One split of the protocol (MQ2008 Fold1, the deterministic logging ranker, PBM clicks, merged
sessions): ranklearn's ``LambdaMART(unbiased="pairwise")`` and XGBoost's ``rank:ndcg`` with
``lambdarank_unbiased=True`` at the same L_p regularization, the same number of trees and no early
stopping. Prints both sets of ratios relative to rank 1 (``t+^(1+p)`` estimates theta_k / theta_1)
beside the simulated examination. The two differ in the cost they sum into the ratios
(``ranklearn.objectives.unbiased``: XGBoost sums the reversed pair's loss), in whether the sums
weigh a merged session by its count (ranklearn does, XGBoost does not) and in their trees.

    cd benchmarks && ../.venv/bin/python pairwise_ratios.py [--sessions 100000] [--trees 10,50,100] [--norm 2]
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench_clicks import group_weights, splits
from ranklearn import LambdaMART
from ranklearn.clicks import PBM
from ranklearn.clicks.models import theta_base
from ranklearn.clicks.protocol import prepare


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--trees", default="10,50,100")
    ap.add_argument("--norm", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import xgboost as xgb

    (_, (train, valid, _)), *_ = splits(["mq2008"])  # Fold1
    exp = prepare(train, valid, PBM(eta=1.0, epsilon=0.1), n_sessions=args.sessions, seed=args.seed,
                  merge_sessions=True)  # fmt: skip
    t, power = exp.train_clicks, 1 + args.norm
    truth = theta_base(10) / theta_base(10)[0]
    print(f"MQ2008 Fold1, PBM eta=1 epsilon=0.1, {args.sessions:,} sessions (merged), seed {args.seed}, p={args.norm}; "
          f"xgboost {xgb.__version__}")  # fmt: skip
    print(f"{'':28s}" + "".join(f"{k:>7d}" for k in range(1, 11)))
    print(f"{'simulated theta_k/theta_1':28s}" + "".join(f"{v:7.3f}" for v in truth))
    for n in (int(v) for v in args.trees.split(",")):
        ours = LambdaMART(n_estimators=n, unbiased="pairwise", position_bias_norm=args.norm, random_state=args.seed)
        bias = ours.fit(t.X, t.y, **exp.fit_kwargs()).position_bias_
        peer = xgb.XGBRanker(n_estimators=n, objective="rank:ndcg", lambdarank_unbiased=True,
                             lambdarank_bias_norm=args.norm, tree_method="hist", nthread=2,
                             random_state=args.seed)  # fmt: skip
        peer.fit(t.X, t.y, qid=t.qid, sample_weight=group_weights(t))  # rows of a session in position order
        config = json.loads(peer.get_booster().save_config())["learner"]["objective"]
        rows = {
            "ranklearn t+^(1+p)": (bias["t_plus"][:10] / bias["t_plus"][0]) ** power,
            "XGBoost   t+^(1+p)": (np.array(config["ti+"][:10]) / config["ti+"][0]) ** power,
            "ranklearn t-": bias["t_minus"][:10] / bias["t_minus"][0],
            "XGBoost   t-": np.array(config["tj-"][:10]) / config["tj-"][0],
        }
        print(f"after {n} trees:")
        for name, values in rows.items():
            print(f"  {name:26s}" + "".join(f"{v:7.3f}" for v in values))


if __name__ == "__main__":
    main()
