"""Every registered ranker with its defaults against LightGBM and XGBoost on four datasets.

Datasets (../shared/data, see its DATA.md):

* ``mq2008``: MQ2008 Fold1-5, each fold's train / vali / test files.
* ``mslr``: MSLR-sample, msn1.fold1.train.5k.txt / msn1.fold1.test.5k.txt.
* ``lightgbm``: lightgbm-example, rank.train / rank.test with their .query files.
* ``trec-news``: trec-news-2018, trec_news_2018.train / .test.

The last three have no validation file: every fifth query of the training file in file order
(the 5th, 10th, 15th, ...) is the validation part, the other queries are trained on
(:func:`carve`); the same split on every run.

Every ranker of ``ranklearn.registry`` runs with its default parameters, the validation part as
``eval_set``. A ranker whose defaults draw random numbers (``SEEDED``: their default
``random_state=None`` gives each user another draw) is fitted once with each ``random_state`` of
``--seeds`` (0-4) and its row is the expected ranker: per query, the mean of the seeds' NDCG@10,
with the lowest and highest of the seeds' own means beside it; the other rankers run once, with
``random_state=0`` where they have one. The rankers whose default is
``early_stopping_rounds="auto"`` keep their iteration best on it (MART: after 100 trees without
a gain, as RankLib's); LambdaMART, whose default ``None`` keeps the last tree, gets
``early_stopping_rounds=50`` (the peers' patience) so that it selects on it too; random-forest
keeps its default (all bags, as RankLib's does). One more row, ``mart:ranklib`` (``VARIANTS``), is
MART with RankLib's MART settings (its leaf order, 10 leaves, >= 1 document a leaf, no L2): not a
default, shown to compare ranklearn's MART with RankLib's on equal settings; it is never counted as
ranklearn's best ranker.
Peers: LightGBM lambdarank and XGBoost rank:ndcg with bench_quality.py's settings (31 leaves,
learning rate 0.1, >= 20 documents per leaf, <= 500 trees, early stopping after 50 rounds on
validation NDCG@10).

Everything is scored by ranklearn: test NDCG@10, gain 2^rel-1, ties in input order, queries
without a relevant document count 0. "vs best peer" is the mean per-query difference to the
peer with the higher test NDCG@10 on that dataset, with a paired 95% percentile-bootstrap
interval over the test queries (MQ2008: all five folds' test queries pooled, 784). Training
seconds are wall seconds of ``fit``, the median over folds (and seeds). RankLib's figures are
quoted from ../shared/data/DATA.md (RankLib 2.14, its own defaults, same folds and metric, this
machine).

    .venv/bin/python benchmarks/bench_rankers.py [--datasets mq2008,mslr,lightgbm,trec-news]
        [--rankers lambdamart,mart,...,lightgbm,xgboost] [--folds 1,2,3,4,5] [--seeds 0,1,2,3,4]
        [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator

import numpy as np
from _common import load_letor, require_shared_data
from bench_quality import PATIENCE, run_lightgbm, run_xgboost

from ranklearn.data.groups import group_ptr
from ranklearn.metrics import get_metric
from ranklearn.registry import get_model_class, model_names
from ranklearn.stats import bootstrap_interval

Data = tuple[np.ndarray, np.ndarray, np.ndarray]  # X, y, per-row qid
PEERS = {"lightgbm": run_lightgbm, "xgboost": run_xgboost}
#: ranker with a default early_stopping_rounds of None that boosts trees: given the peers' patience
SELECT_ON_VALI = ("lambdamart",)
#: rankers whose defaults draw random numbers: initial weights (the neural ones), feature orders
#: (coordinate ascent), bags of queries and features (random forest). LambdaMART and MART draw
#: none with their defaults here (no bagging or feature sampling; every dataset has fewer rows
#: than ``bin_subsample``), so one fit is their figure.
SEEDED = ("ranknet", "lambdarank", "listnet", "coordinate-ascent", "random-forest")
#: one validation query in this many (every 5th, in file order) where a dataset has no vali file
CARVE_EVERY = 5
NDCG10 = get_metric("ndcg@10", gain="exp2", empty="zero", ties="stable")

#: RankLib 2.14, its own defaults, MQ2008 Fold1-5 test NDCG@10 (mean) and training seconds per
#: fold on this 2-core machine: ../shared/data/DATA.md (measured 2026-11-23). LambdaMART's
#: figure is with bench_quality.py's settings; DATA.md gives no time for it.
RANKLIB_MQ2008 = {
    "lambdamart": (0.5030, None),
    "mart": (0.5036, 2.7),
    "ranknet": (0.4816, 16.7),
    "rankboost": (0.5003, 9.8),
    "adarank": (0.4952, 3.2),
    "coordinate-ascent": (0.5049, 17.1),
    "listnet": (0.4836, 16.6),
    "random-forest": (0.4991, 27.8),
    "linear": (0.4871, 0.8),
}

#: rows that are not a ranker's defaults: a registered ranker with other settings, to show what
#: it does with RankLib's (report only; never ranklearn's best ranker, never a default)
VARIANTS = {
    # RankLib's MART: its leaf order, 10 leaves, >= 1 document a leaf, leaf value the mean residual
    # (1000 trees and early stopping after 100 are MART's defaults)
    "mart:ranklib": ("mart", dict(leaf_order="deviance", num_leaves=10, min_samples_leaf=1, l2_regularization=0.0)),
}

DATASETS = {
    "mq2008": "MQ2008 Fold1-5 (train / vali / test)",
    "mslr": "MSLR-sample msn1 fold1 5k (train, vali carved / test)",
    "lightgbm": "lightgbm-example rank.train (vali carved) / rank.test",
    "trec-news": "trec-news-2018 train (vali carved) / test",
}


def carve(data: Data, every: int = CARVE_EVERY, offset: int = 0) -> tuple[Data, Data]:
    """(training part, validation part) of a file: every ``every``-th query in file order
    (the ``every``-th, ``2 * every``-th, ...; with ``offset`` k, the queries k places before
    those) is validation, whole queries only. Offsets 0 .. every - 1 validate each query once."""
    ptr = group_ptr(data[2])
    block = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    vali = block % every == (every - 1 - offset) % every
    return tuple(a[~vali] for a in data), tuple(a[vali] for a in data)


def _same_width(*parts: Data) -> list[Data]:
    """Pad X with zero columns (absent features of a sparse file) to the widest part's width."""
    width = max(p[0].shape[1] for p in parts)
    return [(np.pad(p[0], ((0, 0), (0, width - p[0].shape[1]))), p[1], p[2]) for p in parts]


def splits(
    name: str, folds: list[int], with_test: bool = True, carvings: int = 1
) -> Iterator[tuple[str, Data, Data, Data | None]]:
    """(label, train, vali, test) of a dataset: one per MQ2008 fold, else one per carving of
    the training file (``carve`` offsets 0 .. ``carvings`` - 1; the benchmark uses offset 0).
    With ``with_test=False`` the test file is never read (``test`` is None): the tuning
    protocol."""
    root = require_shared_data()
    if name == "mq2008":
        for fold in folds:
            d = root / "MQ2008" / f"Fold{fold}"
            parts = [load_letor(d / f"{n}.txt") for n in ("train", "vali", "test")[: 3 if with_test else 2]]
            parts = _same_width(*parts)
            yield f"Fold{fold}", parts[0], parts[1], parts[2] if with_test else None
        return
    files = {
        "mslr": ("MSLR-sample/msn1.fold1.train.5k.txt", "MSLR-sample/msn1.fold1.test.5k.txt", False),
        "lightgbm": ("lightgbm-example/rank.train", "lightgbm-example/rank.test", True),
        "trec-news": ("trec-news-2018/trec_news_2018.train", "trec-news-2018/trec_news_2018.test", False),
    }
    if name not in files:
        raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")
    train_file, test_file, query_files = files[name]

    def read(rel: str) -> Data:
        path = root / rel
        return load_letor(path, query_file=path.with_name(path.name + ".query") if query_files else None)

    whole = read(train_file)
    test = read(test_file) if with_test else None
    for offset in range(carvings):
        train, vali = carve(whole, offset=offset)
        parts = _same_width(train, vali, test) if with_test else _same_width(train, vali)
        yield ("all" if carvings == 1 else f"carving {offset}"), parts[0], parts[1], parts[2] if with_test else None


def make_ranker(name: str, **params):
    """A registered ranker with its defaults, ``random_state=0`` where it has one (unless
    ``params`` gives another), and the selection on validation data this benchmark uses (see the
    module docstring)."""
    if name in VARIANTS:
        name, params = VARIANTS[name][0], {**VARIANTS[name][1], **params}
    cls = get_model_class(name)
    defaults = cls().get_params()
    if "random_state" in defaults:
        params.setdefault("random_state", 0)
    if name in SELECT_ON_VALI:
        params.setdefault("early_stopping_rounds", PATIENCE)
    return cls(**params)


def fit_predict(
    name: str, tr: Data, va: Data, te: Data, threads: int, seed: int = 0
) -> tuple[np.ndarray, float, float]:
    """Test scores, wall and CPU seconds of training one ranker (``random_state=seed`` where it
    has one) or peer."""
    t0, c0 = time.perf_counter(), time.process_time()
    if name in PEERS:
        # the peers' own timing includes their prediction of the test part (a few ms)
        scores, _ = PEERS[name](tr, va, te, threads, 0)
        return scores, time.perf_counter() - t0, time.process_time() - c0
    model = make_ranker(name, **({"random_state": seed} if name in SEEDED else {})).fit(*tr, eval_set=[va])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return model.predict(te[0]), wall, cpu


def warm_up(names: list[str], threads: int) -> None:
    """Fit every ranker once on small synthetic data with its demo settings, untimed: numba
    compiles its kernels (or loads them from its cache) and torch, LightGBM and XGBoost are
    imported before the clock runs."""
    from ranklearn.datasets import make_ranking
    from ranklearn.registry import get_spec

    tr, va = (
        tuple(np.asarray(a, dtype=t) for a, t in zip(make_ranking(30, 10, random_state=seed, return_X_y=True),
                                                      (np.float32, np.float64, np.int64)))
        for seed in (0, 1)
    )  # fmt: skip
    for n in names:
        if n in PEERS:
            fit_predict(n, tr, va, va, threads)
        else:
            make_ranker(n, **get_spec(VARIANTS.get(n, (n,))[0]).demo).fit(*tr, eval_set=[va]).predict(va[0])


def _fmt(v: float | None, spec: str = ".4f") -> str:
    return "" if v is None else format(v, spec)


def report(
    dataset: str, names: list[str], per_seed: dict, secs: dict, loads: list[float], n_splits: int
) -> None:
    """Print one dataset's table. ``per_seed[name]``: one array of per-query NDCG@10 per seed
    (one array for a ranker fitted once)."""
    per_query = {n: np.mean(per_seed[n], axis=0) for n in names}
    means = {n: float(np.mean(per_query[n])) for n in names}
    peers = [n for n in names if n in PEERS]
    best = max(peers, key=means.get) if peers else None
    mq = dataset == "mq2008"
    n_q = len(next(iter(per_query.values())))
    print(f"\n### {DATASETS[dataset]}: {n_q} test queries" + (f" over {n_splits} folds" if mq else ""))
    print(f"\n1-minute load average during the fits: {min(loads):.2f}-{max(loads):.2f} (2 cores).\n")
    head = "| ranker | test NDCG@10 | seeds: lowest-highest | " + (f"vs {best} [95% CI] | " if best else "")
    head += "train s (median) | CPU s |"
    if mq:
        head += " RankLib NDCG@10 | RankLib train s | RankLib s / ours | issue 17 targets |"
    print(head)
    print("|---|" + "---:|" * (head.count("|") - 2))
    for n in names:
        seed_means = [float(np.mean(q)) for q in per_seed[n]]
        spread = f"{len(seed_means)}: {min(seed_means):.4f}-{max(seed_means):.4f}" if len(seed_means) > 1 else ""
        row = f"| {n} | {means[n]:.4f} | {spread} | "
        if best:
            if n == best:
                row += "(best peer) | "
            else:
                lo, hi = bootstrap_interval(per_query[n], per_query[best])
                row += f"{means[n] - means[best]:+.4f} [{lo:+.4f}, {hi:+.4f}] | "
        wall = float(np.median([w for w, _ in secs[n]]))
        row += f"{wall:.2f} | {np.median([c for _, c in secs[n]]):.2f} |"
        if mq:
            rl, rl_s = RANKLIB_MQ2008.get(VARIANTS.get(n, (n,))[0], (None, None))
            row += f" {_fmt(rl)} | {_fmt(rl_s, '.1f')} | {_fmt(None if rl_s is None else rl_s / wall, '.1f')} |"
            marks = _targets(means[n], rl, None if rl_s is None else rl_s / wall)
            if n in VARIANTS:
                marks = "not a default (RankLib's settings): " + marks
            row += f" {marks} |"
        print(row)
    if mq:
        ours = max((n for n in names if n not in PEERS and n not in VARIANTS), key=means.get, default=None)
        if ours is not None:
            ranklib_best = max((k for k in RANKLIB_MQ2008 if RANKLIB_MQ2008[k][0] is not None),
                               key=lambda k: RANKLIB_MQ2008[k][0])  # fmt: skip
            top = RANKLIB_MQ2008[ranklib_best][0]
            print(f"\nranklearn's best ranker: {ours} {means[ours]:.4f}; RankLib's best: {ranklib_best} {top:.4f} "
                  f"(target: above it: {'ok' if means[ours] > top else '**missed**'}).")


def _targets(ours: float, ranklib: float | None, speedup: float | None) -> str:
    """Issue 17's targets on MQ2008: NDCG@10 >= RankLib's - 0.005; training >= 5x faster than RankLib."""
    marks = []
    if ranklib is not None:
        need = ranklib - 0.005
        marks.append(f"quality {'ok' if ours >= need else '**missed**'} ({ours:.5f} {'>=' if ours >= need else '<'} {need:.5f})")
    if speedup is not None:
        marks.append(f"speed {'ok' if speedup >= 5 else '**missed**'} (>= 5x)")
    return "; ".join(marks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--rankers", default=",".join([*model_names(), *VARIANTS, *PEERS]))
    ap.add_argument("--folds", default="1,2,3,4,5", help="MQ2008 folds")
    ap.add_argument("--seeds", default="0,1,2,3,4", help=f"random_state of each fit of {', '.join(SEEDED)}")
    ap.add_argument("--threads", type=int, default=2, help="threads of the peers (ours: their default, every CPU)")
    args = ap.parse_args()
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    names = [r.strip() for r in args.rankers.split(",") if r.strip()]
    known = [*model_names(), *VARIANTS, *PEERS]
    for bad in [d for d in datasets if d not in DATASETS] + [r for r in names if r not in known]:
        sys.exit(f"unknown dataset or ranker {bad!r}: datasets {', '.join(DATASETS)}; rankers {', '.join(known)}")
    folds = [int(f) for f in args.folds.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"Test NDCG@10 ({NDCG10.conventions}; queries without a relevant document count 0). "
          f"Validation where a dataset has none: every {CARVE_EVERY}th training query in file order. "
          f"LambdaMART: early_stopping_rounds={PATIENCE} (its default keeps every tree); "
          f"every other ranker with its defaults; {', '.join(SEEDED)}: the mean over random_state "
          f"{', '.join(map(str, seeds))} (per query; lowest and highest seed beside it), the others random_state=0; "
          "mart:ranklib is MART with RankLib's MART settings "
          f"({', '.join(f'{k}={v}' for k, v in VARIANTS['mart:ranklib'][1].items())}; not a default); "
          "peers as bench_quality.py. Train seconds: wall time of "
          "fit, median over folds (and seeds); RankLib's from DATA.md (RankLib 2.14, its defaults).")  # fmt: skip
    warm_up(names, args.threads)
    for dataset in datasets:
        per_seed: dict = {n: [] for n in names}  # per ranker, per seed: per-query NDCG@10 of each split
        secs: dict = {n: [] for n in names}
        loads: list[float] = []
        n_splits = 0
        for label, tr, va, te in splits(dataset, folds):
            n_splits += 1
            ptr = group_ptr(te[2])
            for n in names:
                for i, seed in enumerate(seeds if n in SEEDED else seeds[:1]):
                    scores, wall, cpu = fit_predict(n, tr, va, te, args.threads, seed)
                    loads.append(os.getloadavg()[0])
                    if len(per_seed[n]) <= i:
                        per_seed[n].append([])
                    per_seed[n][i].append(NDCG10.per_query(te[1], scores, ptr))
                    secs[n].append((wall, cpu))
                    seed_text = f"seed {seed}" if n in SEEDED else "      "
                    print(f"{dataset} {label} {n:18s} {seed_text} NDCG@10 {NDCG10.mean(te[1], scores, ptr):.4f} "
                          f"{wall:6.2f}s (cpu {cpu:.2f}s) load {loads[-1]:.2f}", file=sys.stderr, flush=True)  # fmt: skip
        report(dataset, names, {n: [np.concatenate(v) for v in runs] for n, runs in per_seed.items()},
               secs, loads, n_splits)  # fmt: skip


if __name__ == "__main__":
    main()
