"""Metric speed against ranx and pytrec_eval, and the speed of ``ranklearn.stats.compare``.

Metrics: synthetic ``--queries`` queries x ``--docs`` documents (100,000 x 100 by default),
labels 0-4 (P = .50 .25 .13 .08 .04), uniform random float64 scores (no ties), seed 0;
NDCG@10 and MAP, timed two ways:

* computing only: each library given the data already in its own input form (ranklearn:
  float64 labels and scores and the query boundaries ``ptr``, ``Metric.per_query``; ranx:
  ``Qrels`` / ``Run`` built beforehand, ``ranx.evaluate``; pytrec_eval: a
  ``RelevanceEvaluator`` built beforehand on the qrels, ``.evaluate(run)`` on the run dict);
  ranx's evaluate turns the Qrels / Run into numba lists (hashing the document ids) on every
  call, and stores the per-query values in the Run: that is its computing;
* end to end from arrays: from the same numpy arrays y (int64), scores, qid, each library's
  conversion to its input plus the computation, means returned.

Every library is warmed up first (numba compiles ranklearn's and ranx's kernels). Within each
of ``--repeats`` rounds the three libraries run one after the other (interleaved, so they see
the same load); each timing is the median, with the 1-minute load average over those runs.
Ratios are the other library's time / ranklearn's: above 1 means ranklearn is faster. Before
timing, the three are checked to agree query by query. ranklearn and ranx use numba's
threads (all cores); pytrec_eval runs on one.

compare: 5 systems x 784 queries (MQ2008 S1-S5: five of its features used as rankers; seeded
synthetic values where the shared data is absent) x 4 metrics (ndcg@10, map, p@10, rr),
``--permutations`` sign flips and as many bootstrap resamples, as ``ranklearn compare`` calls it.

    .venv/bin/python benchmarks/bench_metrics.py [--queries 100000] [--docs 100] [--repeats 3] [--permutations 10000]
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from importlib import metadata

import numpy as np
from _common import SHARED_DATA, interleaved, load_letor

METRICS = ("ndcg@10", "map")
RANX_METRICS = ["ndcg@10", "map"]
TREC_MEASURES = {"ndcg_cut_10", "map"}
TREC_KEYS = {"ndcg@10": "ndcg_cut_10", "map": "map"}
LABEL_P = (0.50, 0.25, 0.13, 0.08, 0.04)
COMPARE_METRICS = ("ndcg@10", "map", "p@10", "rr")
#: MQ2008 features used as the five systems of the compare timing (1-based LETOR 4.0 ids)
COMPARE_FEATURES = {"BM25": 25, "TF-IDF": 15, "LMIR.DIR": 35, "LMIR.JM": 40, "PageRank": 41}


def load1() -> float:
    return os.getloadavg()[0]


def make_data(n_queries: int, n_docs: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = n_queries * n_docs
    y = rng.choice(len(LABEL_P), size=n, p=LABEL_P).astype(np.int64)
    scores = rng.random(n)
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), n_docs)
    return y, scores, qid


def bounds(qid: np.ndarray) -> np.ndarray:
    """Query boundaries of contiguous qid blocks, plain numpy (the other libraries' side)."""
    change = np.flatnonzero(qid[1:] != qid[:-1]) + 1
    return np.concatenate(([0], change, [qid.shape[0]])).astype(np.int64)


def trec_dicts(y: np.ndarray, scores: np.ndarray, qid: np.ndarray) -> tuple[dict, dict]:
    """{qid: {docid: label}} and {qid: {docid: score}} from the arrays; docid = position in the query."""
    b = bounds(qid)
    names = [f"d{j}" for j in range(int(np.diff(b).max()))]
    qids = [f"q{q}" for q in qid[b[:-1]].tolist()]
    b = b.tolist()
    yl, sl = y.tolist(), scores.tolist()
    qrels, run = {}, {}
    for i, q in enumerate(qids):
        lo, hi = b[i], b[i + 1]
        nm = names[: hi - lo]
        qrels[q] = dict(zip(nm, yl[lo:hi]))
        run[q] = dict(zip(nm, sl[lo:hi]))
    return qrels, run


def tied_queries(scores: np.ndarray, b: np.ndarray) -> int:
    """Queries (boundaries ``b``) holding two equal scores."""
    qid = np.repeat(np.arange(b.shape[0] - 1), np.diff(b))
    order = np.lexsort((scores, qid))
    s, q = scores[order], qid[order]
    same = (s[1:] == s[:-1]) & (q[1:] == q[:-1])
    return int(np.unique(q[1:][same]).shape[0])


def docid_array(qid: np.ndarray) -> np.ndarray:
    """The docids of ``trec_dicts`` as an array (for ranklearn's ``ties="docid"``)."""
    b = bounds(qid)
    pos = np.arange(qid.shape[0]) - np.repeat(b[:-1], np.diff(b))
    return np.char.add("d", pos.astype(str))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--permutations", type=int, default=10_000)
    args = ap.parse_args()

    import numba
    import pytrec_eval
    import ranx

    from ranklearn.data.groups import group_ptr
    from ranklearn.metrics import get_metric

    packages = ("ranklearn", "ranx", "pytrec-eval-terrier", "numba", "numpy")
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in packages)
    print(f"Versions: {versions}; numba threads {numba.get_num_threads()}; "
          "load (1, 5, 15 min) at start %.2f %.2f %.2f." % os.getloadavg(), flush=True)

    # ---- data, each library's input form ------------------------------------------------------
    y, scores, qid = make_data(args.queries, args.docs)
    n_rows = y.shape[0]
    print(f"\n### Metrics: {args.queries:,} queries x {args.docs} documents = {n_rows:,} rows; NDCG@10 and MAP\n")
    # ranklearn's "ranx" preset: linear gain (the gain of trec_eval's and ranx's ndcg), stable ties,
    # MAP / R. On tie-free scores it equals both other libraries (checked below); the conventions
    # are kernel arguments, they do not change the work.
    ours = {m: get_metric(m, conventions="ranx") for m in METRICS}

    def ours_e2e(y=y, scores=scores, qid=qid):
        p = group_ptr(qid)
        return {m: float(ours[m].per_query(y, scores, p).mean()) for m in METRICS}

    def ranx_e2e(y=y, scores=scores, qid=qid):
        qd, rd = trec_dicts(y, scores, qid)
        return ranx.evaluate(ranx.Qrels.from_dict(qd), ranx.Run.from_dict(rd), RANX_METRICS)

    def trec_e2e(y=y, scores=scores, qid=qid):
        qd, rd = trec_dicts(y, scores, qid)
        res = pytrec_eval.RelevanceEvaluator(qd, TREC_MEASURES).evaluate(rd)
        return {m: float(np.mean([v[TREC_KEYS[m]] for v in res.values()])) for m in METRICS}

    # warm-up: numba compiles ranklearn's and ranx's kernels (ranx's evaluate drops numba to one
    # thread, for good, when given fewer than 10 queries: warm up on 50)
    w = slice(0, min(50, args.queries) * args.docs)
    for fn in (ours_e2e, ranx_e2e, trec_e2e):
        fn(y[w], scores[w], qid[w])

    y_f = y.astype(np.float64)
    ptr = group_ptr(qid)
    t0 = time.perf_counter()
    qrels_d, run_d = trec_dicts(y, scores, qid)
    qrels_x, run_x = ranx.Qrels.from_dict(qrels_d), ranx.Run.from_dict(run_d)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_d, TREC_MEASURES)
    del qrels_d
    print(f"(Building the other libraries' inputs once, not timed below: {time.perf_counter() - t0:.1f} s, "
          f"load {load1():.2f}.)\n")

    def ours_compute():
        return {m: ours[m].per_query(y_f, scores, ptr) for m in METRICS}

    def ranx_compute():
        return ranx.evaluate(qrels_x, run_x, RANX_METRICS)

    def trec_compute():
        return evaluator.evaluate(run_d)

    ours_compute(), ranx_compute(), trec_compute()  # warm-up on the full inputs

    # ---- agreement, query by query --------------------------------------------------------------
    b = bounds(qid)
    qnames = [f"q{q}" for q in qid[b[:-1]].tolist()]
    pos = {q: i for i, q in enumerate(qnames)}
    ranx_pq = ranx.evaluate(qrels_x, run_x, RANX_METRICS, return_mean=False)
    ranx_order = np.array([pos[q] for q in run_x.get_query_ids()])
    trec_res = trec_compute()
    docids = docid_array(qid)
    # trec_eval holds scores as C floats: scores equal in float32 are ties there, ordered by docid
    scores32 = scores.astype(np.float32).astype(np.float64)
    ties64, ties32 = tied_queries(scores, b), tied_queries(scores32, b)
    print(f"Agreement (not timed): mean over queries and the largest per-query difference from ranklearn. "
          f"Queries with two equal scores: {ties64} in float64, {ties32} in float32.\n")
    print("| metric | ranklearn, conventions=\"ranx\" | ranx | max abs diff | "
          "ranklearn, conventions=\"trec_eval\", float32 scores | pytrec_eval | max abs diff | "
          "the same on float64 scores: queries that differ (max diff) |")
    print("|---|---|---|---|---|---|---|---|")
    for m in METRICS:
        a = ours[m].per_query(y_f, scores, ptr)
        rx = np.empty(args.queries)
        rx[ranx_order] = np.asarray(ranx_pq[m])
        tr = np.array([trec_res[q][TREC_KEYS[m]] for q in qnames])
        te32 = get_metric(m, conventions="trec_eval").per_query(y_f, scores32, ptr, docids=docids)
        te64 = get_metric(m, conventions="trec_eval").per_query(y_f, scores, ptr, docids=docids)
        d64 = np.abs(te64 - tr)
        print(f"| {m} | {a.mean():.6f} | {rx.mean():.6f} | {np.abs(a - rx).max():.1e} | "
              f"{te32.mean():.6f} | {tr.mean():.6f} | {np.abs(te32 - tr).max():.1e} | "
              f"{int((d64 > 1e-12).sum())} ({d64.max():.1e}) |")
    del docids, ranx_pq, trec_res, scores32
    print(f"\nConventions: ranklearn \"ranx\" (timed): ndcg@10 {ours['ndcg@10'].conventions}; "
          f"map {ours['map'].conventions}. \"trec_eval\": the same but ties=docid (equal scores by document id "
          "descending, as trec_eval). pytrec_eval compares scores as float32 (trec_eval's `float sim`): on "
          "float64 scores equal in float32, ranklearn can differ from it unless given the float32-rounded scores.")
    tie_check(args.docs)

    # ---- timings --------------------------------------------------------------------------------
    rows = []
    t, _, loads = interleaved(args.repeats, {"ours": ours_compute, "ranx": ranx_compute, "trec": trec_compute})
    rows.append(("computing only (NDCG@10 + MAP)", t, loads))
    t_comp = t
    del qrels_x, run_x, evaluator, run_d  # free the prebuilt inputs before the end-to-end runs
    t, out, loads = interleaved(args.repeats, {"ours": ours_e2e, "ranx": ranx_e2e, "trec": trec_e2e})
    rows.append(("end to end from arrays (conversion + NDCG@10 + MAP)", t, loads))
    rows.append(("of which input conversion (difference of the two)", {k: t[k] - t_comp[k] for k in t}, loads))
    for m in METRICS:
        # means over queries; pytrec_eval's float32 ties move a few queries' values slightly
        assert abs(out["ours"][m] - out["ranx"][m]) < 1e-9 and abs(out["ours"][m] - out["trec"][m]) < 1e-6, m

    print(f"\nMedian of {args.repeats} interleaved runs; load = 1-minute load average over those runs (min-max). "
          "Ratio = the library's time / ranklearn's (target: >= 3x).\n")
    print("| step | ranklearn (s) | ranx (s) | pytrec_eval (s) | ranx / ranklearn | pytrec_eval / ranklearn | load |")
    print("|---|---|---|---|---|---|---|")
    for name, t, load in rows:
        ratios = (f"**{t['ranx'] / t['ours']:.1f}x** | **{t['trec'] / t['ours']:.1f}x**" if t["ours"] > 0.005
                  else "- | -")  # no ratio to a difference of noise
        print(f"| {name} | {t['ours']:.3f} | {t['ranx']:.3f} | {t['trec']:.3f} | {ratios} | "
              f"{min(load):.2f}-{max(load):.2f} |")

    # ---- compare --------------------------------------------------------------------------------
    bench_compare(args.repeats, args.permutations)

    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\nPeak resident memory of this process: {peak_gib:.1f} GiB.")
    print(f"\nRegenerate: .venv/bin/python benchmarks/bench_metrics.py --queries {args.queries} --docs {args.docs} "
          f"--repeats {args.repeats} --permutations {args.permutations}")


def tie_check(n_docs: int, n_queries: int = 2000) -> None:
    """How the libraries order equal scores: scores rounded to one decimal (many ties)."""
    import pytrec_eval
    import ranx

    from ranklearn.metrics import get_metric

    y, scores, qid = make_data(n_queries, n_docs, seed=1)
    scores = np.round(scores, 1)
    ptr = bounds(qid)
    qrels_d, run_d = trec_dicts(y, scores, qid)
    run_x = ranx.Run.from_dict(run_d)
    rx_pq = ranx.evaluate(ranx.Qrels.from_dict(qrels_d), run_x, RANX_METRICS, return_mean=False)
    pos = {f"q{q}": i for i, q in enumerate(qid[ptr[:-1]].tolist())}
    ranx_order = np.array([pos[q] for q in run_x.get_query_ids()])
    trec_res = pytrec_eval.RelevanceEvaluator(qrels_d, TREC_MEASURES).evaluate(run_d)
    docids = docid_array(qid)
    print(f"\nTies (not timed): {n_queries:,} queries x {n_docs} documents, scores rounded to 0.1 "
          "(about 11 distinct scores a query). Mean; in brackets the queries that differ from the library's value.\n")
    print("| metric | ranx | pytrec_eval | ranklearn ties=stable | ties=docid | ties=average |")
    print("|---|---|---|---|---|---|")
    for m in METRICS:
        rx = np.empty(n_queries)
        rx[ranx_order] = np.asarray(rx_pq[m])
        tr = np.array([trec_res[q][TREC_KEYS[m]] for q in pos])
        cells = []
        for ties in ("stable", "docid", "average"):
            v = get_metric(m, conventions="trec_eval", ties=ties).per_query(y, scores, ptr, docids=docids)
            d_rx = int((np.abs(v - rx) > 1e-9).sum())
            d_tr = int((np.abs(v - tr) > 1e-9).sum())
            cells.append(f"{v.mean():.6f} (vs ranx {d_rx}, vs pytrec_eval {d_tr})")
        print(f"| {m} | {rx.mean():.6f} | {tr.mean():.6f} | " + " | ".join(cells) + " |")
    print("\nranx sorts each query with numba's np.argsort on the negated scores (quicksort, not stable): equal "
          "scores come out neither in input order (ties=stable) nor by document id (trec_eval, ranklearn's "
          "ties=docid, which equals pytrec_eval), so on tied scores ranx's values match no named convention; "
          "ranklearn's \"ranx\" preset reproduces ranx on tie-free scores only.")


def compare_inputs(seed: int = 0) -> tuple[dict, str]:
    """per_query[metric][system] for 5 systems x 784 queries: MQ2008 features as rankers, else synthetic."""
    from ranklearn.data.groups import group_ptr
    from ranklearn.metrics import get_metric

    files = [SHARED_DATA / "MQ2008" / f"S{i}.txt" for i in range(1, 6)]
    if all(f.is_file() for f in files):
        parts = [load_letor(f) for f in files]
        X = np.concatenate([p[0] for p in parts])
        y = np.concatenate([p[1] for p in parts])
        ptr = group_ptr(np.concatenate([p[2] for p in parts]))  # each query lies in one partition
        per_query = {
            m: {name: get_metric(m).per_query(y, X[:, f - 1], ptr) for name, f in COMPARE_FEATURES.items()}
            for m in COMPARE_METRICS
        }
        source = f"MQ2008 S1-S5 ({ptr.shape[0] - 1} queries), systems = features {', '.join(COMPARE_FEATURES)}"
        return per_query, source
    rng = np.random.default_rng(seed)
    base = rng.beta(2, 3, size=(4, 784))
    per_query = {
        m: {f"s{k}": np.clip(base[i] + rng.normal(0.01 * k, 0.1, 784), 0, 1) for k in range(5)}
        for i, m in enumerate(COMPARE_METRICS)
    }
    return per_query, "synthetic values (seeded; MQ2008 S1-S5 absent), 784 queries"


def bench_compare(repeats: int, permutations: int) -> None:
    from ranklearn.stats import compare

    per_query, source = compare_inputs()
    compare(per_query, n_permutations=100, n_resamples=100)  # warm-up: scipy imports
    times, loads = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = compare(per_query, n_permutations=permutations, n_resamples=permutations, confidence=0.95, seed=0)
        times.append(time.perf_counter() - t0)
        loads.append(load1())
    n_sys = len(result.systems)
    print(f"\n### compare: {n_sys} systems x {result.results[0].n_queries} queries x {len(per_query)} metrics "
          f"({', '.join(per_query)}), {permutations:,} permutations and bootstrap resamples\n")
    print(f"Data: {source}. Median of {repeats} runs; target under 2 s.\n")
    print("| step | ranklearn.stats.compare (s) | runs (s) | load |")
    print("|---|---|---|---|")
    print(f"| {n_sys - 1} comparisons x {len(per_query)} metrics: t-test, Wilcoxon, randomization, bootstrap CI, "
          f"Holm | **{np.median(times):.3f}** | {', '.join(f'{t:.3f}' for t in times)} | "
          f"{min(loads):.2f}-{max(loads):.2f} |")


if __name__ == "__main__":
    main()
