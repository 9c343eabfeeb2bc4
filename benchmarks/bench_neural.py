"""RankNet / LambdaRank: the factorization speed-up, measured, and quality on MQ2008.

Speed (seed 002, "Factoring RankNet"): time per training epoch of the original per-pair SGD
(``mode="pairwise"``: a forward pass, backward pass and weight update for every document
pair) against the factorized training (``mode="factorized"``: one forward pass, the
lambdas of the query's pair matrix, one backward pass and one update per query, or per
batch of queries), on MQ2008 Fold1 train and on synthetic queries of 100 and 500
documents. Same network (the default MLP 64-32, ReLU), same plain SGD, one torch thread.
Per-pair SGD is slow, so it is timed on a bounded number of pairs and extrapolated to the
epoch's pair count (said so in the table); the factorized epochs are timed in full.

Quality: MQ2008 test NDCG@10 (gain 2^rel-1, queries without relevant documents count 0,
ties in input order) of RankNet() and LambdaRank() with their defaults (early stopping on
the fold's validation NDCG@10), on every fold, and the 5-fold mean; then a paired comparison
of the two over the test queries (each query's NDCG@10 averaged over the seeds): the mean
difference, a 95% bootstrap interval and a paired t-test's p-value.

    .venv/bin/python benchmarks/bench_neural.py [--part speed|quality|all] [--folds 1,2,3,4,5]
        [--seeds 0,1,2,3,4] [--pairs 3000] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from _common import load_letor, require_shared_data

RANKLIB_RANKNET_FOLD1 = 0.4736  # RankLib RankNet, its defaults, MQ2008 Fold1 test NDCG@10


# --------------------------------------------------------------------------- speed
def synthetic(n_queries: int, docs: int, n_features: int = 46, seed: int = 0):
    """Queries of exactly ``docs`` documents with graded labels 0-4 from a noisy linear score."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    u = X[:, :8] @ rng.normal(size=8) + rng.normal(size=n)
    y = np.digitize(u, np.quantile(u, [0.55, 0.80, 0.92, 0.97])).astype(np.float64)
    qid = np.repeat(np.arange(n_queries), docs)
    return X, y, qid


def time_epochs(X, y, qid, *, pairs_budget: int, factorized_repeats: int = 3, seed: int = 0):
    import torch

    from ranklearn.models.checks import check_ranking_data
    from ranklearn.neural.scorer import MLPScorer, standardization_stats
    from ranklearn.neural.losses import LambdaLoss
    from ranklearn.neural.pairwise import pairwise_epoch
    from ranklearn.neural.training import QuerySet, factorized_epoch

    X, y, ptr, _ = check_ranking_data(X, y, qid, allow_nan=False)
    dev = torch.device("cpu")
    data = QuerySet(X, y, ptr, dev)
    queries = data.trainable_queries()
    n_pairs = data.n_pairs(queries)
    cfg = LambdaLoss(sigma=1.0)
    mean, scale = standardization_stats(X)

    def fresh():
        torch.manual_seed(seed)
        model = MLPScorer(X.shape[1], (64, 32), "relu", 0.0)
        model.set_standardization(mean, scale)
        return model, torch.optim.SGD(model.parameters(), lr=1e-3)

    rng = np.random.default_rng(seed)
    out = {"queries": len(queries), "docs": int(np.diff(ptr)[queries].sum()), "pairs": n_pairs}
    for bq in (1, 16):
        model, opt = fresh()
        factorized_epoch(model, opt, data, rng.permutation(queries), bq, cfg)  # warm-up
        times = []
        for _ in range(factorized_repeats):
            t0 = time.perf_counter()
            factorized_epoch(model, opt, data, rng.permutation(queries), bq, cfg)
            times.append(time.perf_counter() - t0)
        out[f"factorized_b{bq}"] = statistics.median(times)
    model, opt = fresh()
    pairwise_epoch(model, opt, data, rng.permutation(queries), cfg, rng, max_pairs=200)  # warm-up
    budget = min(pairs_budget, n_pairs)
    t0 = time.perf_counter()
    _, done = pairwise_epoch(model, opt, data, rng.permutation(queries), cfg, rng, max_pairs=budget)
    per_pair = (time.perf_counter() - t0) / done
    out["pairs_timed"] = done
    out["per_pair"] = per_pair
    out["pairwise"] = per_pair * n_pairs
    return out


def speed(args, root) -> None:
    sets = [
        ("MQ2008 Fold1 train", lambda: load_letor(root / "MQ2008" / "Fold1" / "train.txt")),
        ("synthetic, 100 docs/query", lambda: synthetic(40, 100)),
        ("synthetic, 500 docs/query", lambda: synthetic(8, 500)),
    ]
    rows = []
    for name, load in sets:
        X, y, qid = load()
        r = time_epochs(X, y, qid, pairs_budget=args.pairs)
        rows.append((name, r))
        print(f"  {name}: {r}", file=sys.stderr, flush=True)
    print("\n### Per-pair SGD vs factorized RankNet: seconds per epoch (MLP 46-64-32-1, SGD, 1 thread)\n")
    print(
        "| data | queries (with pairs) | docs | pairs / epoch | per-pair SGD (extrapolated) "
        "| factorized, 1 query / update | factorized, 16 queries / update | speed-up (1 query) | speed-up (16) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in rows:
        print(
            f"| {name} | {r['queries']} | {r['docs']} | {r['pairs']:,} "
            f"| {r['pairwise']:.2f} s ({r['per_pair'] * 1e6:.0f} µs/pair, {r['pairs_timed']:,} pairs timed) "
            f"| {r['factorized_b1']:.3f} s | {r['factorized_b16']:.3f} s "
            f"| {r['pairwise'] / r['factorized_b1']:.0f}x | {r['pairwise'] / r['factorized_b16']:.0f}x |"
        )


# --------------------------------------------------------------------------- quality
def quality(args, root) -> None:
    from ranklearn.data.groups import group_ptr
    from ranklearn.metrics import get_metric
    from ranklearn.models import LambdaRank, RankNet

    ndcg = get_metric("ndcg@10", gain="exp2", empty="zero", ties="stable")
    folds = [int(f) for f in args.folds.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    res: dict[str, dict[int, list[tuple[float, int, float]]]] = {"RankNet": {}, "LambdaRank": {}}
    per_query: dict[str, dict[int, list[np.ndarray]]] = {"RankNet": {}, "LambdaRank": {}}
    for fold in folds:
        d = root / "MQ2008" / f"Fold{fold}"
        tr, va, te = (load_letor(d / f"{part}.txt") for part in ("train", "vali", "test"))
        te_ptr = group_ptr(te[2])
        for cls in (RankNet, LambdaRank):
            for seed in seeds:
                t0 = time.perf_counter()
                m = cls(random_state=seed, n_jobs=args.threads).fit(*tr, eval_set=[va], eval_names=["vali"])
                secs = time.perf_counter() - t0
                values = ndcg.per_query(te[1], m.predict(te[0]), te_ptr)
                score = float(values.mean())  # empty="zero": no query is skipped
                res[cls.__name__].setdefault(fold, []).append((score, m.best_iteration_, secs))
                per_query[cls.__name__].setdefault(fold, []).append(values)
                print(
                    f"  fold {fold} {cls.__name__} seed {seed}: test {score:.4f} "
                    f"(best epoch {m.best_iteration_} of {m.n_epochs_}, {secs:.1f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    print(f"\n### MQ2008 test NDCG@10 ({ndcg.conventions}), defaults, early stopping on vali NDCG@10\n")
    seed_txt = f"seed {seeds[0]}" if len(seeds) == 1 else f"mean of seeds {','.join(map(str, seeds))}"
    print(f"| fold | RankNet ({seed_txt}) | LambdaRank ({seed_txt}) | RankNet best epoch / fit time | LambdaRank best epoch / fit time |")
    print("|---|---:|---:|---:|---:|")

    def cell(v):
        scores = [s for s, _, _ in v]
        txt = f"{np.mean(scores):.4f}"
        if len(scores) > 1:
            txt += f" ± {np.std(scores):.4f}"
        return txt

    def info(v):
        return f"{np.mean([b for _, b, _ in v]):.0f} / {np.mean([t for _, _, t in v]):.1f} s"

    for fold in folds:
        rn, lr = res["RankNet"][fold], res["LambdaRank"][fold]
        print(f"| Fold{fold} | {cell(rn)} | {cell(lr)} | {info(rn)} | {info(lr)} |")
    if len(folds) > 1:
        means = {k: np.mean([np.mean([s for s, _, _ in v[f]]) for f in folds]) for k, v in res.items()}
        print(f"| {len(folds)}-fold mean | {means['RankNet']:.4f} | {means['LambdaRank']:.4f} | | |")
    print(f"\nReference: RankLib RankNet with its defaults, Fold1: {RANKLIB_RANKNET_FOLD1}.")
    print("\nLambdaRank - RankNet, paired over test queries (per-query NDCG@10 averaged over the seeds):\n")
    print("| test queries | queries | mean difference | 95% bootstrap interval | paired t-test p |")
    print("|---|---:|---:|---:|---:|")
    for label, chosen in [(f"Fold{f}", [f]) for f in folds] + ([(f"Folds {args.folds}", folds)] if len(folds) > 1 else []):
        diff = np.concatenate(
            [np.mean(per_query["LambdaRank"][f], axis=0) - np.mean(per_query["RankNet"][f], axis=0) for f in chosen]
        )
        lo, hi, p = paired_stats(diff)
        print(f"| {label} | {diff.size} | {diff.mean():+.4f} | [{lo:+.4f}, {hi:+.4f}] | {p:.2f} |")


def paired_stats(diff: np.ndarray, n_boot: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    """95% percentile-bootstrap interval of the mean of paired differences, and the t-test's p."""
    from scipy import stats

    ci = stats.bootstrap((diff,), np.mean, n_resamples=n_boot, method="percentile", random_state=seed)
    lo, hi = ci.confidence_interval
    return float(lo), float(hi), float(stats.ttest_1samp(diff, 0.0).pvalue)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("speed", "quality", "all"), default="all")
    ap.add_argument("--folds", default="1,2,3,4,5")
    ap.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated random_state values (quality)")
    ap.add_argument("--pairs", type=int, default=3000, help="pairs timed for per-pair SGD (then extrapolated)")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    root = require_shared_data()
    if args.part in ("speed", "all"):
        speed(args, root)
    if args.part in ("quality", "all"):
        quality(args, root)
    cmd = " ".join(["benchmarks/bench_neural.py", *sys.argv[1:]])
    print(f"\nRegenerate: `.venv/bin/python {cmd}` (torch {torch.__version__}, {args.threads} thread(s))")


if __name__ == "__main__":
    main()
