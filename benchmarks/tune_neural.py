"""Compare RankNet / LambdaRank settings on MQ2008 validation data only (how the defaults were chosen).

Every run trains on three parts and uses a fourth as validation data, split in two halves by
query: early stopping watches one half, NDCG@10 (gain 2^rel-1, queries without relevant
documents count 0, ties in input order) is measured on the other, then the other way round.
No test part is read.

* ``--protocol inner`` (default): four inner folds of S1-S4 (validation part S_f, training on
  the other three). S5, Fold1's test part, is never read, so Fold1's test figure stays clean.
* ``--protocol folds``: the validation part of each of the five folds (Fold2's is S5).

Each setting is a JSON object ``{"model": "ranknet"|"lambdarank", "params": {...}}``. Runs go to
a pool of single-threaded processes; the table gives the mean over folds, seeds and halves.

    .venv/bin/python benchmarks/tune_neural.py --settings '[{"model": "ranknet"},
        {"model": "ranknet", "params": {"lambda_normalization": "none"}}]' [--seeds 0,1,2] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from _common import load_letor, read_settings, require_shared_data

_PARTS: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _part(i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if i not in _PARTS:
        _PARTS[i] = load_letor(require_shared_data() / "MQ2008" / f"S{i}.txt")
    return _PARTS[i]


def split(protocol: str, fold: int):
    """(training data, validation data) of a fold: LETOR's fold layout or the S1-S4 inner folds."""
    if protocol == "inner":
        ids = [i for i in (1, 2, 3, 4) if i != fold] + [fold]
    else:  # FoldN: train S_N..S_N+2, vali S_N+3 (cyclic)
        ids = [((fold - 1 + j) % 5) + 1 for j in range(4)]
    train = tuple(np.concatenate([_part(i)[c] for i in ids[:3]]) for c in range(3))
    return train, _part(ids[3])


def _init() -> None:
    import torch

    torch.set_num_threads(1)


def run_one(setting: dict, protocol: str, fold: int, seed: int, half: int) -> tuple[float, int]:
    """Validation NDCG@10 of one fit, and its best epoch."""
    from ranklearn.data.groups import group_ptr
    from ranklearn.exceptions import TrainingDivergedError
    from ranklearn.metrics import get_metric
    from ranklearn.models import LambdaRank, RankNet

    train, vali = split(protocol, fold)
    queries = np.unique(vali[2])
    perm = np.random.default_rng(123 + fold).permutation(queries)
    halves = [np.isin(vali[2], perm[: len(queries) // 2]), np.isin(vali[2], perm[len(queries) // 2 :])]
    stop_on = tuple(v[halves[half]] for v in vali)
    score_on = tuple(v[halves[1 - half]] for v in vali)
    cls = {"ranknet": RankNet, "lambdarank": LambdaRank}[setting["model"]]
    try:
        model = cls(random_state=seed, **setting.get("params", {})).fit(*train, eval_set=[stop_on])
    except TrainingDivergedError:
        return float("nan"), 0  # a learning rate too high for this setting: reported as diverged
    ndcg = get_metric("ndcg@10", gain="exp2", empty="zero", ties="stable")
    return float(ndcg.mean(score_on[1], model.predict(score_on[0]), group_ptr(score_on[2]))), model.best_iteration_


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", required=True, help="JSON list of settings (or @file.json)")
    ap.add_argument("--protocol", choices=("inner", "folds"), default="inner")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    settings = read_settings(args.settings)
    seeds = [int(s) for s in args.seeds.split(",")]
    folds = range(1, 5) if args.protocol == "inner" else range(1, 6)
    require_shared_data()
    # numba's own threads in every worker would oversubscribe the cores (and stalled a 15-process pool)
    os.environ["NUMBA_NUM_THREADS"] = "1"
    _init()
    run_one({"model": "ranknet", "params": {"n_estimators": 1, "n_networks": 1}}, args.protocol, 1, 0, 0)  # fill numba's cache
    results: dict[int, list[tuple[int, float, int]]] = {i: [] for i in range(len(settings))}
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers, mp_context=mp.get_context("spawn"), initializer=_init) as pool:
        futures = {
            pool.submit(run_one, s, args.protocol, f, seed, h): (i, f)
            for i, s in enumerate(settings)
            for f in folds
            for seed in seeds
            for h in (0, 1)
        }
        for fut in as_completed(futures):
            i, f = futures[fut]
            value, best = fut.result()
            results[i].append((f, value, best))
            print(f"  {time.perf_counter() - t0:.0f}s setting {i} fold {f}: {value:.4f}", file=sys.stderr, flush=True)
    print(f"\n### MQ2008 validation NDCG@10, protocol {args.protocol!r}, seeds {args.seeds}, both halves\n")
    print("| setting | mean | " + " | ".join(f"fold {f}" for f in folds) + " | mean best epoch |")
    print("|---|---:|" + "---:|" * len(folds) + "---:|")
    for i, s in enumerate(settings):
        r = results[i]
        n_diverged = sum(np.isnan(v) for _, v, _ in r)
        if n_diverged:
            print(f"| `{json.dumps(s)}` | diverged in {n_diverged} of {len(r)} fits |" + " |" * (len(folds) + 1))
            continue
        per_fold = [np.mean([v for f, v, _ in r if f == fold]) for fold in folds]
        print(
            f"| `{json.dumps(s)}` | {np.mean([v for _, v, _ in r]):.4f} | "
            + " | ".join(f"{v:.4f}" for v in per_fold)
            + f" | {np.mean([b for _, _, b in r]):.0f} |"
        )


if __name__ == "__main__":
    main()
