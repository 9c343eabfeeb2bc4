"""Compare ranker settings on validation data of all bench_rankers.py datasets (how defaults are chosen).

No test file is read. Each dataset's validation part (MQ2008: each fold's vali.txt; the others:
the queries bench_rankers.carve sets aside from the training file) is split in two halves by
query (a seeded permutation per split): the ranker trains on the training part, early stopping
or selection watches one half, NDCG@10 (gain 2^rel-1, ties in input order, queries without
relevant documents count 0) is measured on the other half, then the other way round
(neural_defaults.md's "folds" protocol). ``--carvings 5`` validates every training query of the
datasets other than MQ2008 once (five carvings, protocol v2 of ranker_defaults.md). The table
gives each dataset's mean over folds (or carvings) and halves, and their unweighted mean over
the datasets. Below it, every setting against the first
(the baseline, normally the defaults) on each dataset: the mean per-query difference over the
same validation queries (each scored once per fold, by the fit that did not watch it) with its
paired 95% percentile-bootstrap interval (``ranklearn.stats.bootstrap_interval``).

Each setting is a JSON object ``{"model": "<registry name>", "params": {...}}``, built as
bench_rankers.py builds its rankers (``random_state=0`` where there is one; LambdaMART with
early_stopping_rounds=50 unless the setting says otherwise).

    .venv/bin/python benchmarks/tune_rankers.py --settings '[{"model": "mart"},
        {"model": "mart", "params": {"num_leaves": 10}}]' [--datasets mq2008,mslr,lightgbm,trec-news]
        [--folds 1,2,3,4,5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from _common import read_settings
from bench_rankers import CARVE_EVERY, DATASETS, NDCG10, make_ranker, splits

from ranklearn.data.groups import group_ptr
from ranklearn.stats import bootstrap_interval


def halves(vali: tuple[np.ndarray, ...], seed: int) -> list[tuple[np.ndarray, ...]]:
    """The validation part in two halves of whole queries (a seeded permutation of its qids)."""
    queries = np.unique(vali[2])
    perm = np.random.default_rng(seed).permutation(queries)
    first = np.isin(vali[2], perm[: len(queries) // 2])
    return [tuple(a[first] for a in vali), tuple(a[~first] for a in vali)]


def score_setting(setting: dict, train, vali, seed: int) -> list[np.ndarray]:
    """Per-query validation NDCG@10 of the two fits (select on one half, score the other)."""
    parts = halves(vali, seed)
    out = []
    for watch, scored in ((parts[0], parts[1]), (parts[1], parts[0])):
        model = make_ranker(setting["model"], **setting.get("params", {})).fit(*train, eval_set=[watch])
        out.append(NDCG10.per_query(scored[1], model.predict(scored[0]), group_ptr(scored[2])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", required=True, help="JSON list of settings (or @file.json)")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--folds", default="1,2,3,4,5", help="MQ2008 folds")
    ap.add_argument("--carvings", type=int, default=1, choices=range(1, CARVE_EVERY + 1), metavar="K",
                    help="validate the other datasets on K carvings of their training file (every "
                    f"{CARVE_EVERY}th query at offsets 0 .. K-1; {CARVE_EVERY}: every training query once)")  # fmt: skip
    args = ap.parse_args()
    settings = read_settings(args.settings)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    folds = [int(f) for f in args.folds.split(",")]
    results = {(i, d): [] for i in range(len(settings)) for d in datasets}
    t0, c0, loads = time.perf_counter(), time.process_time(), []
    for d in datasets:
        for k, (label, train, vali, _) in enumerate(splits(d, folds, with_test=False, carvings=args.carvings)):
            for i, s in enumerate(settings):
                values = score_setting(s, train, vali, seed=123 + k)
                results[i, d] += values
                loads.append(os.getloadavg()[0])
                print(f"  {time.perf_counter() - t0:.0f}s {d} {label} setting {i}: "
                      f"{np.mean([v.mean() for v in values]):.4f}",
                      file=sys.stderr, flush=True)  # fmt: skip
    carved = f"; the others: {args.carvings} carving{'s' if args.carvings > 1 else ''}"
    print(f"\n### Validation NDCG@10, both halves, datasets {', '.join(datasets)} (MQ2008 folds {args.folds}{carved})\n")
    print(f"{time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU; "
          f"1-minute load {min(loads):.2f}-{max(loads):.2f} on 2 cores.\n")  # fmt: skip
    print("| setting | mean of datasets | " + " | ".join(datasets) + " |")
    print("|---|---:|" + "---:|" * len(datasets))
    for i, s in enumerate(settings):
        per = [float(np.mean([v.mean() for v in results[i, d]])) for d in datasets]
        print(f"| `{json.dumps(s)}` | {np.mean(per):.4f} | " + " | ".join(f"{v:.4f}" for v in per) + " |")
    if len(settings) > 1:
        print("\nAgainst setting 0, per query: mean difference [paired 95% bootstrap interval].\n")
        print("| setting | " + " | ".join(datasets) + " |")
        print("|---|" + "---:|" * len(datasets))
        for i, s in enumerate(settings[1:], start=1):
            cells = []
            for d in datasets:
                ours, base = np.concatenate(results[i, d]), np.concatenate(results[0, d])
                lo, hi = bootstrap_interval(ours, base)
                cells.append(f"{np.mean(ours - base):+.4f} [{lo:+.4f}, {hi:+.4f}]")
            print(f"| `{json.dumps(s)}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
