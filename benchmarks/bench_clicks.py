"""The offline click protocol (ranklearn.clicks.protocol) with LightGBM's and XGBoost's debiasing beside it.

    cd benchmarks && ../.venv/bin/python bench_clicks.py [--data mq2008,mslr] [--clicks pbm1,pbm0.5,pbm2,cascade,trust]
        [--sessions 10000,100000,1000000] [--seeds 0,1,2] [--rankers all|peers|ours|shown] [--neural add|only] [--ipw add|only|lightgbm|sizes|candidates]
        [--folds 1] [--save DIR [--resume]] [--join DIR[,DIR2]] [--figures DIR] | --report DIR[,DIR2] [DIR[,DIR2] ...]

For every dataset split (MQ2008 Fold1-5; MSLR-sample's training file (every 5th query validates) and test file), click model, session count
and seed: a logging ranker on 1% of the training queries' true labels, sessions simulated on its
rankings of the training and the validation queries, every ranker trained on the training clicks
and early-stopped (and tuned) on the validation clicks only, tested on the test queries' true labels.
ranklearn's ``LambdaMART(unbiased="pairwise")`` (``position_bias_norm`` in {1, 2}) and
``unbiased="position_factors"`` (``position_bias_regularization`` in {0, 0.1, 1}), tuned the same way.
Peers on the very same clicks (one row per shown document of every session, sorted by position):
LightGBM's lambdarank with ``position`` (its position-bias factors) and
``lambdarank_position_bias_regularization`` in {0, 0.1, 1}, XGBoost's ``rank:ndcg`` with
``lambdarank_unbiased=True`` and ``lambdarank_bias_norm`` in {1, 2}: the value with the best
validation-click NDCG@10 is kept. The training clicks hold each distinct session (query, shown
documents, clicks) once with its count as the sample weight (every ranker, ours and the peers,
weights its gradients by it, and the neural click losses their own propensity models' steps too: the
objective of one row per session, but 10^6 sessions cost little more than 10^4); the validation sessions are
proportional to the training ones, at most 50,000. ``--neural``: ListNet rows on
the same session rows (``NEURAL``'s fixed settings): naive (clicks as labels), IPW with regression-EM
propensities estimated from the training clicks, the Dual Learning Algorithm, and regression EM (the
network as relevance model); ``--neural only`` leaves the tree peers out (the references stay; the
comparison is then against the neural naive row). ``--rankers peers``: the references and the two peers only
(ranklearn's debiased rows left out); ``--rankers ours``: the references and ranklearn's debiased rows only
(joined with a ``peers`` run of the same settings by ``--report DIR,DIR2``); ``--rankers shown``: the references
and LambdaMART on the true labels of only the documents the sessions showed (31 and 7 leaves: these trees
given the shown documents' labels in place of their clicks; a reference, not a bound). Means over test queries pooled
across splits and seeds; paired 95% percentile-bootstrap intervals of the per-query differences (queries x
splits x seeds). ``--report`` pools the runs saved in one or more directories into one table per dataset,
click model and session count (every seed and split of it); a ranker that is not in every run of a table is named and left out
of it (its values would not pair); DIR,DIR2 joins the rows of one run saved in two directories (the same
logging row, hence the same clicks, is required; a reference both hold keeps the first one's values).
``--save DIR --resume`` reads the runs DIR already holds instead of running them again, so that an
interrupted protocol goes on where it stopped (and the tables pool old and new runs). ``--join DIR``
puts beside every run the rows of the same run saved in DIR (``--rankers ours`` beside a ``peers`` run).
``--ipw``: rows early-stopped on the IPW click DCG@10 of the validation clicks
(``ranklearn.clicks.ipw_dcg``) with propensities estimated by the swap estimator from ``SWAP_SHARE`` more training-query sessions with swap interventions (a randomized
share, read by these rows only): the naive model so stopped, ``unbiased="ipw"`` with those
propensities, and the one of ipw / pairwise (p=2) / position factors (r=0) with the best validation
IPW click DCG@10; and LightGBM's position model stopped and tuned on the same metric (``--ipw lightgbm``:
that row alone; ``--ipw sizes``: the second entry alone; ``--ipw candidates``: the third entry, LambdaMART on
every candidate document of each query labelled by its IPW relevance estimate, and its naive reference). A run
whose swap sessions have no click at some rank (no propensity estimate there: 10^3 swap
sessions at 10^4) has none of these rows, and says so; the tables name them as missing from some runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from _common import require_shared_data
from ranklearn.clicks import PBM, Cascade, TrustBias
from ranklearn.clicks.protocol import METRICS, ClickExperiment, run_protocol, shown_information_ranker
from ranklearn.data import load_svmlight
from ranklearn.datasets import load_letor_fold
from ranklearn.metrics import get_metric
from ranklearn.stats import bootstrap_interval

CLICK_MODELS = {
    "pbm1": lambda: PBM(eta=1.0, epsilon=0.1),
    "pbm0.5": lambda: PBM(eta=0.5, epsilon=0.1),
    "pbm2": lambda: PBM(eta=2.0, epsilon=0.1),
    "cascade": lambda: Cascade(),
    "trust": lambda: TrustBias(),
}
ROUNDS, PATIENCE = 500, 50
#: validation sessions are proportional to the training ones up to this many (enough for early
#: stopping; 10^6 training sessions would give MQ2008 333,000 validation lists to score every round)
MAX_VALID_SESSIONS = 50_000


def _sizes(qid: np.ndarray) -> np.ndarray:
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return np.diff(np.r_[starts, qid.size])


def _valid_ndcg(exp: ClickExperiment, model) -> float:
    v = exp.valid_clicks
    starts = np.r_[0, np.cumsum(_sizes(v.qid))]
    return get_metric("ndcg@10").mean(v.y, np.asarray(model.predict(v.X), dtype=np.float64), starts)


class _Predictor:
    """A fitted peer as the protocol needs it: ``predict(X)`` at its best iteration."""

    def __init__(self, fn) -> None:
        self.predict = fn


def group_weights(t) -> np.ndarray:
    """One weight per session group (XGBoost's ranking weights are per group)."""
    return t.sample_weight[np.r_[0, np.cumsum(_sizes(t.qid))[:-1]]]


def lightgbm_position(exp: ClickExperiment, prop=None) -> _Predictor:
    """LightGBM's position-bias model, its regularization chosen on the validation clicks; with ``prop``
    (propensities), early-stopped and chosen on the IPW click DCG@10 instead of raw click NDCG@10."""
    import lightgbm as lgb

    t, v = exp.train_clicks, exp.valid_clicks
    watch = dict(metric="ndcg", eval_at=[10])
    feval = None
    if prop is not None:
        from ranklearn.clicks import ipw_dcg, ipw_labels

        labels, starts, metric = ipw_labels(v.y, v.position, prop), np.r_[0, np.cumsum(_sizes(v.qid))], ipw_dcg(10)
        watch = dict(metric="None")
        feval = lambda preds, data: ("ipw_dcg@10", metric.mean(labels, preds, starts), True)  # noqa: E731
    best = None
    for reg in (0.0, 0.1, 1.0):
        params = dict(objective="lambdarank", lambdarank_position_bias_regularization=reg, num_threads=2,
                      verbose=-1, seed=exp.seed, **watch)  # fmt: skip
        train = lgb.Dataset(t.X, t.y, group=_sizes(t.qid), weight=t.sample_weight, position=t.position - 1)
        valid = lgb.Dataset(v.X, v.y, group=_sizes(v.qid), reference=train)
        booster = lgb.train(params, train, ROUNDS, valid_sets=[valid], feval=feval,
                            callbacks=[lgb.early_stopping(PATIENCE, verbose=False)])  # fmt: skip
        model = _Predictor(lambda X, b=booster: b.predict(X, num_iteration=b.best_iteration))
        score = _valid_ndcg(exp, model) if prop is None else booster.best_score["valid_0"]["ipw_dcg@10"]
        if best is None or score > best[0]:
            best = (score, model)
    return best[1]


def xgboost_unbiased(exp: ClickExperiment) -> _Predictor:
    import xgboost as xgb

    t, v = exp.train_clicks, exp.valid_clicks  # rows of a session are in position order, as XGBoost assumes
    best = None
    for norm in (1.0, 2.0):
        model = xgb.XGBRanker(n_estimators=ROUNDS, objective="rank:ndcg", lambdarank_unbiased=True,
                              lambdarank_bias_norm=norm, tree_method="hist", nthread=2, random_state=exp.seed,
                              eval_metric="ndcg@10", early_stopping_rounds=PATIENCE)  # fmt: skip
        model.fit(t.X, t.y, qid=t.qid, sample_weight=group_weights(t), eval_set=[(v.X, v.y)], eval_qid=[v.qid],
                  verbose=False)  # fmt: skip
        predictor = _Predictor(lambda X, m=model: m.predict(X, iteration_range=(0, m.best_iteration + 1)))
        score = _valid_ndcg(exp, predictor)
        if best is None or score > best[0]:
            best = (score, predictor)
    return best[1]


PEERS = {"LightGBM position": lightgbm_position, "XGBoost unbiased": xgboost_unbiased}


def _ranklearn_debiased(method: str, param: str, values: tuple[float, ...]):
    """LambdaMART(unbiased=method) on the session rows, early-stopped on the validation clicks, with
    ``param`` in ``values`` chosen by validation-click NDCG@10 (as the peers' settings are)."""
    from ranklearn import LambdaMART

    def fit(exp: ClickExperiment) -> LambdaMART:
        t = exp.train_clicks
        best = None
        for value in values:
            model = LambdaMART(n_estimators=ROUNDS, early_stopping_rounds=PATIENCE, random_state=exp.seed,
                               unbiased=method, **{param: value})  # fmt: skip
            model.fit(t.X, t.y, eval_set=[exp.eval_set()], **exp.fit_kwargs())
            score = _valid_ndcg(exp, model)
            if best is None or score > best[0]:
                best = (score, model)
        return best[1]

    return fit


#: ranklearn's debiased LambdaMART, tuned like the peers (issue 31)
OURS = {
    "ranklearn pairwise": _ranklearn_debiased("pairwise", "position_bias_norm", (1.0, 2.0)),
    "ranklearn position factors": _ranklearn_debiased("position_factors", "position_bias_regularization", (0.0, 0.1, 1.0)),
}


#: ``--ipw``: training-query sessions with swap interventions beside the training clicks, as a share of
#: them, from which the swap estimator gives the propensities of the IPW rows (nothing else reads them)
SWAP_SHARE = 0.1


def _swap_propensity(exp: ClickExperiment):
    """The swap sessions' propensity estimate, or None (the IPW rows then have no row in this run)
    where it is not a positive number at every rank: swap sessions without a click at a rank (a
    few thousand sessions of a small click rate) say nothing of its propensity."""
    from ranklearn.clicks import estimate_propensity

    prop = estimate_propensity(exp.swap_log, "swap", n_bootstrap=0)
    missing = np.flatnonzero(~(prop.propensity > 0))  # 0 or NaN
    if missing.size:
        print(f"[the {prop.n_sessions:,} swap sessions estimate no propensity at rank(s) {(missing + 1).tolist()} "
              f"(no clicks there): the IPW rows are left out of this run]", file=sys.stderr, flush=True)  # fmt: skip
        return None
    return prop


def _ipw_stopped(method: str | None, params: dict):
    """LambdaMART (``unbiased=method``, or the naive one) early-stopped on the IPW click DCG@10 of
    the validation clicks, with the propensities of the swap sessions (issue 31)."""
    from ranklearn import LambdaMART
    from ranklearn.clicks import ipw_dcg, ipw_eval_set

    def fit(exp: ClickExperiment, prop=None) -> LambdaMART | None:
        prop = _swap_propensity(exp) if prop is None else prop
        if prop is None:
            return None
        extra = {} if method is None else dict(unbiased=method, **params)
        if method == "ipw":
            extra["propensity"] = prop.propensity
        t = exp.train_clicks
        model = LambdaMART(n_estimators=ROUNDS, early_stopping_rounds=PATIENCE, random_state=exp.seed,
                           metric=ipw_dcg(10), lambda_metric="ndcg@10", **extra)  # fmt: skip
        kwargs = exp.fit_kwargs() if method else dict(qid=t.qid, sample_weight=t.sample_weight)
        return model.fit(t.X, t.y, eval_set=[ipw_eval_set(exp.valid_clicks, prop)], **kwargs)

    return fit


#: the candidates of "ranklearn chosen on IPW-DCG" (benchmarks/ranker_defaults.md, pre-registered)
ENTRY_CANDIDATES = {
    "ipw": ("ipw", {}),
    "pairwise p=2": ("pairwise", dict(position_bias_norm=2.0)),
    "position factors r=0": ("position_factors", dict(position_bias_regularization=0.0)),
}
#: every candidate by name: the entry's, and each of them with 7-leaf trees (the second entry's, registered
#: 2026-11-27 04:50 UTC: "A second click entry with smaller trees")
IPW_CANDIDATES = {
    **{name: _ipw_stopped(method, params) for name, (method, params) in ENTRY_CANDIDATES.items()},
    **{f"{name}, 7 leaves": _ipw_stopped(method, {**params, "num_leaves": 7})
       for name, (method, params) in ENTRY_CANDIDATES.items()},
}


#: the last experiment's fitted candidates: the IPW row and the chosen row share the IPW fit
_FITTED: dict[str, tuple[ClickExperiment, object]] = {}


def _candidate(name: str, exp: ClickExperiment, prop=None):
    hit = _FITTED.get(name)
    if hit is None or hit[0] is not exp:
        _FITTED[name] = (exp, IPW_CANDIDATES[name](exp, prop))
    return _FITTED[name][1]


def _chosen_on_ipw_dcg(names: list[str]):
    """The candidate of ``names`` with the best validation IPW click DCG@10 (at its early-stopped tree)."""

    def fit(exp: ClickExperiment):
        prop = _swap_propensity(exp)
        if prop is None:
            return None
        best = None
        for name in names:
            model = _candidate(name, exp, prop)
            if best is None or model.best_score_ > best[0]:
                best = (model.best_score_, name, model)
        print(f"[chosen on IPW-DCG: {best[1]}, {best[0]:.4f}]", file=sys.stderr, flush=True)
        return best[2]

    return fit


def _lightgbm_ipw_stopped(exp: ClickExperiment) -> _Predictor | None:
    prop = _swap_propensity(exp)
    return None if prop is None else lightgbm_position(exp, prop.propensity)


#: ``--ipw``: early stopping on the IPW click DCG (propensities from the swap sessions); see the plan
#: in benchmarks/ranker_defaults.md ("Debiased early stopping")
IPW_ROWS = {
    "naive, IPW-DCG stopping": _ipw_stopped(None, {}),
    "ranklearn IPW (swap propensities)": lambda exp: _candidate("ipw", exp),
    "ranklearn chosen on IPW-DCG": _chosen_on_ipw_dcg(list(ENTRY_CANDIDATES)),
    # the best peer at eta=1 stopped (and its regularization chosen) on the same metric: how much of our
    # rows' lead is the stopping metric's
    "LightGBM position, IPW-DCG stopping": _lightgbm_ipw_stopped,
}
#: ``--ipw sizes``: the second entry (benchmarks/ranker_defaults.md, "A second click entry with smaller trees")
SIZES_ROWS = {"ranklearn chosen on IPW-DCG, 31 or 7 leaves": _chosen_on_ipw_dcg(list(IPW_CANDIDATES))}


def candidate_labels(clicks, split, propensity: np.ndarray) -> np.ndarray:
    """Every row of ``split`` labelled with its IPW relevance estimate: the sum over its query's sessions
    of click / propensity of the rank shown, divided by the query's number of sessions (0 for a
    document no session showed). Reads the clicks and where they were shown, never a true label."""
    from ranklearn.clicks import ipw_labels

    w = clicks.sample_weight  # merged sessions: each row stands for that many sessions
    total = np.bincount(clicks.document, weights=w * ipw_labels(clicks.y, clicks.position, propensity),
                        minlength=split.n_samples)  # fmt: skip
    query = np.repeat(np.arange(split.n_queries), np.diff(split.ptr))
    first = clicks.position == 1  # one row at rank 1 per session
    sessions = np.bincount(query[clicks.document[first]], weights=w[first], minlength=split.n_queries)[query]
    return np.divide(total, sessions, out=np.zeros_like(total), where=sessions > 0)


def _over_candidates(debiased: bool):
    """LambdaMART on every candidate document of each query (the dataset's rows: their features,
    not their labels) labelled by :func:`candidate_labels` with the swap sessions' propensities
    (``debiased``) or none (1 at every rank), early-stopped on the validation queries' candidates
    labelled the same way; 31 or 7 leaves, whichever scores better there (benchmarks/ranker_defaults.md,
    "A third click entry")."""
    from ranklearn import LambdaMART

    def fit(exp: ClickExperiment) -> LambdaMART | None:
        prop = _swap_propensity(exp) if debiased else None
        if debiased and prop is None:
            return None
        p = prop.propensity if debiased else np.ones(1)
        y, y_valid = (candidate_labels(c, split, p) for c, split in ((exp.train_clicks, exp.train),
                                                                     (exp.valid_clicks, exp.valid)))
        best = None
        for leaves in (31, 7):
            model = LambdaMART(n_estimators=ROUNDS, early_stopping_rounds=PATIENCE, random_state=exp.seed,
                               metric="ndcg@10", num_leaves=leaves)  # fmt: skip
            model.fit(exp.train.X, y, qid=exp.train.qid, eval_set=[(exp.valid.X, y_valid, exp.valid.qid)])
            if best is None or model.best_score_ > best[0]:
                best = (model.best_score_, leaves, model)
        print(f"[over the candidates ({'IPW' if debiased else 'naive'}): {best[1]} leaves, {best[0]:.4f}]",
              file=sys.stderr, flush=True)  # fmt: skip
        return best[2]

    return fit


#: ``--ipw candidates``: the third entry and its naive reference (benchmarks/ranker_defaults.md, "A third
#: click entry"); unlike every other click row they read the unshown candidates' features
CANDIDATE_ROWS = {
    "ranklearn IPW labels over the candidates, 31 or 7 leaves": _over_candidates(True),
    "naive labels over the candidates": _over_candidates(False),
}
#: references on the shown documents (``--rankers shown``): LambdaMART on the true labels of the shown
#: documents only (``shown_information_ranker``), at the defaults and with the second entry's smaller trees
SHOWN_ROWS = {
    "full information, shown documents": shown_information_ranker,
    "full information, shown documents, 7 leaves": lambda exp: shown_information_ranker(exp, num_leaves=7),
}
#: the pre-registered entries for issue 31's targets, each compared with every peer
ENTRIES = ("ranklearn chosen on IPW-DCG", *SIZES_ROWS, next(iter(CANDIDATE_ROWS)))


#: the neural rows' network and training, fixed before any run (benchmarks/ranker_defaults.md, "Neural
#: click estimators"): one small network, early stopping on the validation clicks' NDCG@10
NEURAL = dict(hidden=(32,), n_networks=1, n_estimators=40, batch_queries=64, learning_rate=1e-3, early_stopping_rounds=5)


def _neural(loss_for):
    """ListNet on the session rows with the loss ``loss_for(experiment)`` (None: the naive ListNet
    on clicks as labels, positions not given), early-stopped on the validation clicks."""

    def fit(exp: ClickExperiment):
        from ranklearn.models import ListNet

        t = exp.train_clicks
        loss = loss_for(exp)
        model = ListNet(**NEURAL, loss=loss, random_state=exp.seed)
        position = None if loss is None else t.position
        return model.fit(t.X, t.y, qid=t.qid, sample_weight=t.sample_weight, position=position,
                         eval_set=[exp.eval_set()])  # fmt: skip

    return fit


def _ipw_estimated(exp: ClickExperiment):
    """IPW with the propensities that regression EM estimates from the training clicks alone."""
    from ranklearn.clicks import estimate_propensity
    from ranklearn.neural.losses import IPWLoss

    return IPWLoss(estimate_propensity(exp.train_clicks, "regression_em", n_bootstrap=0), clip=0.01)


def _dla(exp: ClickExperiment):
    from ranklearn.neural.losses import DLALoss

    return DLALoss()


def _regression_em(exp: ClickExperiment):
    from ranklearn.neural.losses import RegressionEMLoss

    return RegressionEMLoss()


#: ranklearn's neural click estimators (issue 31, point 2), ``--neural``: all on ListNet's softmax
NEURAL_ROWS = {
    "neural naive": _neural(lambda exp: None),
    "neural IPW (regression-EM propensities)": _neural(_ipw_estimated),
    "neural DLA": _neural(_dla),
    "neural regression EM": _neural(_regression_em),
}


def splits(names: list[str]):
    root = require_shared_data()
    for name in names:
        if name == "mq2008":
            for fold in range(1, 6):
                yield f"MQ2008 Fold{fold}", load_letor_fold(root / "MQ2008", fold)
        elif name == "mslr":  # a training file and a test file: every 5th training query validates
            base = root / "MSLR-sample"
            whole, test = (load_svmlight(base / f"msn1.fold1.{part}.5k.txt", n_features=136) for part in ("train", "test"))
            vali = np.arange(whole.n_queries) % 5 == 4
            yield "MSLR-sample", (whole.subset(~vali), whole.subset(vali), test)
        else:
            raise SystemExit(f"unknown dataset {name!r} (mq2008, mslr)")


def _row(label: str, values: dict[str, np.ndarray]) -> str:
    return f"| {label} | " + " | ".join(f"{v.mean():.4f}" for v in values.values()) + " |"


def _interval(a: np.ndarray, b: np.ndarray) -> str:
    low, high = bootstrap_interval(a, b, n_resamples=5000, seed=0)
    verdict = "above" if low > 0 else "below" if high < 0 else "inside the noise"
    return f"{a.mean() - b.mean():+.4f} [{low:+.4f}, {high:+.4f}] ({verdict})"


def _pooled(runs: list[dict]) -> dict[str, dict[str, np.ndarray]]:
    """Per ranker and metric, the test-query values of every run concatenated (queries x splits x
    seeds); only the rankers of every run (their values pair)."""
    names = [n for n in runs[0]["per_query"] if all(n in r["per_query"] for r in runs)]
    return {name: {m: np.concatenate([r["per_query"][name][m] for r in runs]) for m in METRICS} for name in names}


def print_summary(groups: list[tuple[tuple, list[dict]]]) -> None:
    """One line per table below: NDCG@10 of the references, and of every other row with its
    paired difference against the naive model."""
    tables = [(key, _pooled(runs), runs) for key, runs in groups]
    others = list(dict.fromkeys(n for _, t, _ in tables for n in t if n not in ("logging", "naive", "full information")))
    print("### Summary: NDCG@10 on the test queries' true labels, each row's difference against naive [paired 95%]")
    print()
    print("| data | clicks | sessions | seeds | logging | naive | full information | " + " | ".join(others) + " |")
    print("|---|---|---:|---|---:|---:|---:|" + "---|" * len(others))
    for (click, n_sessions, dataset), table, runs in tables:
        naive = table["naive"]["ndcg@10"]
        cells = []
        for name in others:
            if name not in table:
                cells.append("")
                continue
            low, high = bootstrap_interval(table[name]["ndcg@10"], naive, n_resamples=5000, seed=0)
            cells.append(f"{table[name]['ndcg@10'].mean():.4f} ({table[name]['ndcg@10'].mean() - naive.mean():+.4f} "
                         f"[{low:+.4f}, {high:+.4f}])")  # fmt: skip
        refs = " | ".join(f"{table[n]['ndcg@10'].mean():.4f}" for n in ("logging", "naive", "full information"))
        seeds = ",".join(sorted({str(r["seed"]) for r in runs}))
        print(f"| {dataset} | {click} | {n_sessions:,} | {seeds} | {refs} | " + " | ".join(cells) + " |")
    print()


def print_table(title: str, runs: list[dict]) -> None:
    """One markdown table of the pooled runs (test queries x splits x seeds), with the paired intervals.

    Only the rankers of every run are pooled (their per-query values pair); the others are named.
    """
    table = _pooled(runs)
    partial = {n: sum(n in r["per_query"] for r in runs) for r in runs for n in r["per_query"] if n not in table}
    loads, rows = [r["load"] for r in runs], [r["train_rows"] for r in runs]
    print(f"### {title}")
    print()
    print(f"{len({r['split'] for r in runs})} split(s) x {len({r['seed'] for r in runs})} seed(s) "
          f"({', '.join(sorted({str(r['seed']) for r in runs}))}), {table['naive']['ndcg@10'].size} test query values "
          f"per ranker; {min(rows):,}-{max(rows):,} training rows (distinct sessions merged); "
          f"{sum(r['seconds'] for r in runs):.0f} s of runs; 1-minute load after each run: "
          f"{min(loads):.2f}-{max(loads):.2f} (2 cores, shared)")  # fmt: skip
    for name, count in partial.items():
        print(f"\n{name}: in {count} of these {len(runs)} runs only, left out of this table")
    print()
    print("| ranker | " + " | ".join(METRICS) + " |")
    print("|---|" + "---|" * len(METRICS))
    for name, values in table.items():
        print(_row(name, values))
    print()
    # --neural only: against the neural naive row; --ipw only: against naive alone
    peers = [p for p in PEERS if p in table] or [p for p in ("neural naive",) if p in table] or ["naive"]
    best_peer = max(peers, key=lambda p: table[p]["ndcg@10"].mean())
    print(f"NDCG@10 paired differences (95% bootstrap interval) against the naive model and the best peer "
          f"({best_peer}):")  # fmt: skip
    print()
    for name, values in table.items():
        if name != "naive":
            print(f"- {name} - naive: {_interval(values['ndcg@10'], table['naive']['ndcg@10'])}")
    for name in table if best_peer != "naive" else ():
        if name not in (best_peer,) and name not in PEERS:
            print(f"- {name} - {best_peer}: {_interval(table[name]['ndcg@10'], table[best_peer]['ndcg@10'])}")
    entries = [e for e in ENTRIES if e in table]
    for i, entry in enumerate(entries):  # against every peer, the peer stopped on its metric, the earlier entries
        others = [p for p in PEERS if p != best_peer] + ["LightGBM position, IPW-DCG stopping", *entries[:i]]
        for other in (o for o in others if o in table):
            print(f"- {entry} - {other}: {_interval(table[entry]['ndcg@10'], table[other]['ndcg@10'])}")
    dla, ipw = "neural DLA", "neural IPW (regression-EM propensities)"
    if dla in table and ipw in table:  # issue 31's neural target: DLA at or above IPW
        print(f"- {dla} - {ipw}: {_interval(table[dla]['ndcg@10'], table[ipw]['ndcg@10'])}")
    naive = table["naive"]["ndcg@10"].mean()
    gap = table["full information"]["ndcg@10"].mean() - naive
    ours = [o for o in (*OURS, *IPW_ROWS, *SIZES_ROWS, *CANDIDATE_ROWS, *NEURAL_ROWS)
            if o in table and not o.startswith(("naive", "LightGBM"))]
    if ours:  # (--ipw lightgbm has none)
        best = max(ours, key=lambda o: table[o]["ndcg@10"].mean())
        closed = {o: (table[o]["ndcg@10"].mean() - naive) / gap if gap else float("nan") for o in (best, *entries)}
        each = "".join(f"; {e} {closed[e]:.0%}" for e in entries if e != best)
        print(f"- gap full information - naive: {gap:+.4f}; the best of ours ({best}) closes {closed[best]:.0%} of it{each}")
        for entry in (e for e in entries if e != best):
            print(f"- {best} - {entry}: {_interval(table[best]['ndcg@10'], table[entry]['ndcg@10'])}")
    else:
        print(f"- gap full information - naive: {gap:+.4f}")
    for shown in (r for r in SHOWN_ROWS if r in table):  # these trees given the shown documents' labels
        share = (table[shown]["ndcg@10"].mean() - naive) / gap if gap else float("nan")
        print(f"- {shown} closes {share:.0%} of the gap (LambdaMART on the true labels of the documents the "
              "sessions showed: a reference, not a bound)")  # fmt: skip
        for entry in entries:
            print(f"- {entry} - {shown}: {_interval(table[entry]['ndcg@10'], table[shown]['ndcg@10'])}")
    entry, reference = CANDIDATE_ROWS
    if entry in table and reference in table:  # the same candidates and clicks, with and without propensities
        print(f"- {entry} - {reference}: {_interval(table[entry]['ndcg@10'], table[reference]['ndcg@10'])} "
              "(what the propensities add to the candidates' click labels)")  # fmt: skip
    swaps = max(r.get("swap_sessions", 0) for r in runs)
    if swaps:
        print(f"- interventions: the rows stopped on the IPW click DCG (and the IPW model) read the propensities that "
              f"the swap estimator gives from {swaps:,} more training-query sessions with swap interventions "
              f"({swaps / runs[0]['n_sessions']:.0%} of the training sessions; rank 1 traded with a uniformly drawn "
              f"rank), which no other row sees; they do not train any model")  # fmt: skip
    print()


def draw(path: Path, title: str, runs: list[dict]) -> Any:
    """``ranklearn.plot.protocol`` of the pooled runs (the rows of every run), titled, written to
    ``path``; returns the figure."""
    from ranklearn.plot import PROTOCOL_REFERENCES, protocol

    fig = protocol(_pooled(runs), references=(*PROTOCOL_REFERENCES, *SHOWN_ROWS))  # they read true labels
    fig.suptitle(title, fontsize="medium")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    print(f"[{path}: written]", file=sys.stderr)
    return fig


def _joined_runs(dirs: list[Path]) -> list[dict]:
    """The saved runs of ``dirs``; one run's rows saved in several of them joined into one run.

    Raises
    ------
    SystemExit
        For a directory without saved runs (its rows would be missing without a word), and when
        two directories' copies of a run have different logging rows (another simulation: their
        rows cannot be paired); another row they share keeps the first directory's values.
    """
    for d in dirs:
        if not any(d.glob("*.npz")):
            raise SystemExit(f"bench_clicks: no saved runs (*.npz) in {d}")
    joined: dict[tuple, dict] = {}
    for d in dirs:
        for f in sorted(d.glob("*.npz")):
            run = dict(np.load(f, allow_pickle=True))["run"].item()
            key = (run["click"], run["n_sessions"], run["seed"], run["split"])
            if key not in joined:
                joined[key] = run
                continue
            _join(joined[key], run, f)
    return list(joined.values())


def _join(have: dict, run: dict, source: Path) -> dict:
    """``run``'s rows added to ``have`` (the same settings run elsewhere); returns ``have``.

    The logging ranker's row must be the same per query in both: it decides the clicks every row
    learns from (another one, another simulation: the rows cannot be paired). Another row both hold
    (a reference refitted on the same clicks by another version of the code) keeps ``have``'s
    values, and the difference is named on stderr.
    """
    for name in sorted(set(have["per_query"]) & set(run["per_query"])):
        a, b = have["per_query"][name], run["per_query"][name]
        if all(np.array_equal(a[m], b[m]) for m in METRICS):
            continue
        if name == "logging":
            raise SystemExit(f"{source}: row 'logging' differs from the same run's in another directory (another "
                             "simulation: the rows cannot be paired)")  # fmt: skip
        moved = np.flatnonzero(a["ndcg@10"] != b["ndcg@10"])
        print(f"[{source}: row {name!r} of {have['click']} {have['n_sessions']} seed {have['seed']} {have['split']} "
              f"differs in {moved.size} test queries (NDCG@10 by at most "
              f"{np.abs(a['ndcg@10'] - b['ndcg@10']).max():.4f}): the same clicks refitted by other code; "
              f"the first copy is kept]", file=sys.stderr)  # fmt: skip
    have["per_query"] = run["per_query"] | have["per_query"]
    have["seconds"] += run["seconds"]
    have["load"] = max(have["load"], run["load"])
    have["swap_sessions"] = max(have.get("swap_sessions", 0), run.get("swap_sessions", 0))
    return have


def run_file(out: Path, click: str, n_sessions: int, seed: int, split: str) -> Path:
    """Where a run of these settings is saved in ``out`` (one .npz a run)."""
    return out / f"{click}_{n_sessions}_{seed}_{split.replace(' ', '-')}.npz"


def _saved_run(args: argparse.Namespace, click: str, n_sessions: int, seed: int, split: str,
               rankers: dict) -> dict | None:  # fmt: skip
    """With ``--resume``, the run of these settings already in ``--save DIR`` when it holds every
    requested ranker's row and the same swap sessions (a run of other rankers is rerun), else None."""
    path = None if not args.resume else run_file(args.save, click, n_sessions, seed, split)
    if path is None or not path.exists():
        return None
    run = np.load(path, allow_pickle=True)["run"].item()
    swap = int(SWAP_SHARE * n_sessions) if args.ipw else 0
    if not set(rankers) <= set(run["per_query"]) | set(run.get("skipped", ())) or run["swap_sessions"] != swap:
        return None
    print(f"[{click} {n_sessions} seed {seed} {split}: read from {path} (--resume), ran in {run['seconds']:.0f} s "
          f"at load {run['load']:.1f}]", file=sys.stderr, flush=True)  # fmt: skip
    return run


def join_runs(runs: list[dict], dirs: list[Path]) -> list[dict]:
    """Every run with the rows of the same run (click model, sessions, seed, split) saved in ``dirs``
    beside its own (e.g. the peers' rows beside ``--rankers ours``); a run they lack is kept as it is."""
    key = lambda r: (r["click"], r["n_sessions"], r["seed"], r["split"])  # noqa: E731
    other = {key(r): r for r in _joined_runs(dirs)}
    return [_join(dict(run), other[key(run)], dirs[0]) if key(run) in other else run for run in runs]


def load_runs(groups: list[list[Path]]) -> list[dict]:
    """The runs saved (``--save``) in each group of directories (a group's copies of one run joined,
    :func:`_joined_runs`); a run of the same click model, sessions, seed and split in a later group
    too is named on stderr and not counted twice."""
    runs: dict[tuple, dict] = {}
    for dirs in groups:
        for run in _joined_runs(dirs):
            key = (run["click"], run["n_sessions"], run["seed"], run["split"])
            if key in runs:
                print(f"[{','.join(map(str, dirs))}: {key} is the same run as one already read, left out]",
                      file=sys.stderr)
            else:
                runs[key] = run
    return list(runs.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="mq2008")
    ap.add_argument("--clicks", default="pbm1")
    ap.add_argument("--sessions", default="10000")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--save", type=Path, help="also keep each run's per-query values in DIR (one .npz a run)")
    ap.add_argument("--report", nargs="+",
                    help="print the tables of the runs saved in DIR(s) instead of running (seeds and splits pooled); "
                    "DIR,DIR2: the rows of one run saved in several directories are joined, after checking that "
                    "the rows they share hold the same test values")  # fmt: skip
    ap.add_argument("--resume", action="store_true",
                    help="read the runs already saved in --save DIR instead of running them again (those with every "
                    "requested ranker's row); the tables pool them with the new ones. Empty DIR after changing the code")
    ap.add_argument("--rankers", choices=("all", "peers", "ours", "shown"), default="all",
                    help="peers: the references, LightGBM's and XGBoost's rows only; ours: the references and "
                    "ranklearn's debiased rows only; all: both; shown: the references and LambdaMART on the true labels "
                    "of the shown documents only")
    ap.add_argument("--neural", choices=("add", "only"),
                    help="add the neural click estimators' rows (only: without the tree rows beside the references)")
    ap.add_argument("--folds", help="MQ2008 folds to run, e.g. 1 (default: all five)")
    ap.add_argument("--ipw", choices=("add", "only", "lightgbm", "sizes", "candidates"),
                    help=f"add the rows early-stopped on the IPW click DCG@10, with propensities from {100 * SWAP_SHARE:.0f}%% "
                    "more sessions with swap interventions (only: without the other debiased rows; lightgbm: only "
                    "LightGBM's position model stopped on that metric; sizes: only the second entry, chosen among "
                    "the first's candidates with 31- and 7-leaf trees; candidates: only the third entry, IPW "
                    "relevance labels over every candidate document, and its naive reference)")  # fmt: skip
    ap.add_argument("--figures", type=Path, metavar="DIR",
                    help="also draw every table as a PNG in DIR (ranklearn.plot.protocol: each row's mean NDCG@10 "
                    "and its paired interval against naive, the gap shaded)")
    ap.add_argument("--join", metavar="DIR[,DIR2]",
                    help="join every run's rows with the same run's saved in DIR (e.g. --rankers ours beside the "
                    "peers' out/protocol_peers; the logging rows must agree per query, other rows both hold keep "
                    "this run's values)")
    args = ap.parse_args()
    if args.resume and args.save is None:
        ap.error("--resume reads the runs of --save DIR: give --save")
    trees = {"all": PEERS | OURS, "peers": PEERS, "ours": OURS, "shown": SHOWN_ROWS}[args.rankers]
    rankers = {"add": trees | NEURAL_ROWS, "only": NEURAL_ROWS, None: trees}[args.neural]
    lightgbm_ipw = {k: v for k, v in IPW_ROWS.items() if k.startswith("LightGBM")}
    rankers = {"add": rankers | IPW_ROWS, "only": IPW_ROWS, "lightgbm": lightgbm_ipw, "sizes": SIZES_ROWS,
               "candidates": CANDIDATE_ROWS, None: rankers}[args.ipw]  # fmt: skip
    if args.report is not None:
        runs = load_runs([[Path(d) for d in group.split(",")] for group in args.report])
    else:
        runs = []
        all_splits = list(splits(args.data.split(",")))
        if args.folds:
            keep = {f"MQ2008 Fold{f}" for f in args.folds.split(",")}
            all_splits = [(name, split) for name, split in all_splits if name in keep or not name.startswith("MQ2008")]
        for click in args.clicks.split(","):
            for n_sessions in (int(float(s)) for s in args.sessions.split(",")):
                for seed in (int(s) for s in args.seeds.split(",")):
                    for split, (tr, va, te) in all_splits:
                        saved = _saved_run(args, click, n_sessions, seed, split, rankers)
                        if saved is not None:
                            runs.append(saved)
                            continue
                        start = time.perf_counter()
                        result = run_protocol(tr, va, te, CLICK_MODELS[click](), n_sessions=n_sessions, seed=seed,
                                              rankers=rankers, merge_sessions=True,
                                              max_valid_sessions=MAX_VALID_SESSIONS,
                                              swap_sessions=int(SWAP_SHARE * n_sessions) if args.ipw else 0)  # fmt: skip
                        run = dict(click=click, n_sessions=n_sessions, seed=seed, split=split,
                                   swap_sessions=result.settings["swap_sessions"], skipped=result.settings["skipped"],
                                   seconds=time.perf_counter() - start, load=os.getloadavg()[0],
                                   train_rows=result.settings["train_rows"], per_query=result.per_query)  # fmt: skip
                        runs.append(run)
                        ndcg = ", ".join(f"{k} {v['ndcg@10'].mean():.4f}" for k, v in result.per_query.items())
                        print(f"[{click} {n_sessions} seed {seed} {split}: {run['seconds']:.0f} s, load "
                              f"{run['load']:.1f}; NDCG@10 {ndcg}]", file=sys.stderr, flush=True)  # fmt: skip
                        if args.save is not None:
                            args.save.mkdir(parents=True, exist_ok=True)
                            np.savez(run_file(args.save, click, n_sessions, seed, split), run=np.array(run, dtype=object))
    if args.join is not None:
        runs = join_runs(runs, [Path(d) for d in args.join.split(",")])
    groups: dict[tuple, list[dict]] = {}
    for run in runs:  # one table per click model, session count and dataset (MQ2008's folds pooled)
        groups.setdefault((run["click"], run["n_sessions"], run["split"].split()[0]), []).append(run)
    order = list(CLICK_MODELS)  # sessions, then click model as listed, then dataset
    ordered = sorted(groups.items(), key=lambda g: (g[0][1], order.index(g[0][0]), g[0][2]))
    if len(ordered) > 1:
        print_summary(ordered)
    for (click, n_sessions, dataset), group in ordered:
        title = f"{dataset}: {click} ({CLICK_MODELS[click]()!r}), {n_sessions:,} sessions"
        print_table(title, group)
        if args.figures is not None:
            draw(args.figures / f"{dataset}_{click}_{n_sessions}.png", title, group)
    print("Conventions: NDCG with gain 2^rel-1, queries without a relevant document count 0, ties in input order "
          "(ranklearn's), on the test queries' true labels.")  # fmt: skip


if __name__ == "__main__":
    main()
