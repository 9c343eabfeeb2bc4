"""benchmarks/bench_clicks.py's report: saved runs of several seeds and directories pooled into one table."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
bench_clicks = pytest.importorskip("bench_clicks")

RANKERS = ("logging", "naive", "full information", "LightGBM position", "XGBoost unbiased")


def _run(seed: int, split: str, rankers=RANKERS, offset: float = 0.0) -> dict:
    rng = np.random.default_rng(seed * 10 + len(split))
    per_query = {r: {m: rng.random(7) + offset for m in bench_clicks.METRICS} for r in rankers}
    return dict(click="pbm1", n_sessions=100, seed=seed, split=split, seconds=1.0, load=0.5, train_rows=10,
                per_query=per_query)  # fmt: skip


def _save(directory: Path, run: dict) -> None:
    directory.mkdir(exist_ok=True)
    path = bench_clicks.run_file(directory, run["click"], run["n_sessions"], run["seed"], run["split"])
    np.savez(path, run=np.array(run, dtype=object))


def test_report_pools_seeds_of_several_directories_and_reads_each_run_once(tmp_path, capsys):
    first, second = tmp_path / "a", tmp_path / "b"
    runs = [_run(0, "MQ2008 Fold1"), _run(0, "MQ2008 Fold2"), _run(1, "MQ2008 Fold1")]
    for run in runs[:2]:
        _save(first, run)
    _save(second, runs[2])
    _save(second, _run(0, "MQ2008 Fold1", offset=5.0))  # the same run again: not counted twice
    loaded = bench_clicks.load_runs([[first], [second]])
    assert len(loaded) == 3 and "left out" in capsys.readouterr().err
    bench_clicks.print_table("t", loaded)
    out = capsys.readouterr().out
    assert "2 split(s) x 2 seed(s) (0, 1), 21 test query values" in out
    naive = np.concatenate([r["per_query"]["naive"]["ndcg@10"] for r in runs])  # paired over queries x runs
    naive_at_1 = np.concatenate([r["per_query"]["naive"]["ndcg@1"] for r in runs])
    assert f"| naive | {naive_at_1.mean():.4f} |" in out
    lgb = np.concatenate([r["per_query"]["LightGBM position"]["ndcg@10"] for r in runs])
    assert f"- LightGBM position - naive: {lgb.mean() - naive.mean():+.4f}" in out
    assert "best of ours" not in out  # no ranklearn rows: the peers alone


def test_report_leaves_out_and_names_a_ranker_missing_from_some_runs(tmp_path, capsys):
    runs = [_run(0, "MQ2008 Fold1", (*RANKERS, "ranklearn pairwise")), _run(1, "MQ2008 Fold1")]
    bench_clicks.print_table("t", runs)
    out = capsys.readouterr().out
    assert "ranklearn pairwise: in 1 of these 2 runs only, left out of this table" in out
    assert "| ranklearn pairwise |" not in out and "| XGBoost unbiased |" in out


def test_report_of_an_empty_directory_says_so(tmp_path):
    with pytest.raises(SystemExit, match="no saved runs"):
        bench_clicks.load_runs([[tmp_path]])


def test_resume_reads_a_saved_run_only_when_it_holds_every_requested_row(tmp_path, capsys):
    import argparse

    run = _run(0, "MQ2008 Fold1")
    run["swap_sessions"] = 0
    _save(tmp_path, run)
    args = argparse.Namespace(resume=True, save=tmp_path, ipw=None)
    peers = dict.fromkeys(("LightGBM position", "XGBoost unbiased"))
    got = bench_clicks._saved_run(args, "pbm1", 100, 0, "MQ2008 Fold1", peers)
    assert got is not None and np.array_equal(got["per_query"]["naive"]["ndcg@10"], run["per_query"]["naive"]["ndcg@10"])
    assert "read from" in capsys.readouterr().err
    # a row the saved run lacks, another seed, or no --resume: run it again
    assert bench_clicks._saved_run(args, "pbm1", 100, 0, "MQ2008 Fold1", {**peers, "ranklearn pairwise": None}) is None
    assert bench_clicks._saved_run(args, "pbm1", 100, 1, "MQ2008 Fold1", peers) is None
    assert bench_clicks._saved_run(argparse.Namespace(resume=False, save=tmp_path, ipw=None), "pbm1", 100, 0,
                                   "MQ2008 Fold1", peers) is None  # fmt: skip
    # a row the run left out (its function returned None, e.g. no propensity at some rank) counts as run
    run["skipped"] = ["ranklearn pairwise"]
    _save(tmp_path, run)
    assert bench_clicks._saved_run(args, "pbm1", 100, 0, "MQ2008 Fold1", {**peers, "ranklearn pairwise": None})
    # swap sessions are part of the run: an --ipw run is not read for a run without them
    assert bench_clicks._saved_run(argparse.Namespace(resume=True, save=tmp_path, ipw="only"), "pbm1", 100, 0,
                                   "MQ2008 Fold1", peers) is None  # fmt: skip


def test_summary_gives_every_row_against_naive(capsys):
    runs = [_run(0, "MQ2008 Fold1"), _run(1, "MQ2008 Fold1")]
    bench_clicks.print_summary([(("pbm1", 100, "MQ2008"), runs),
                                (("pbm1", 100, "MSLR-sample"), [_run(0, "MSLR-sample")])])  # fmt: skip
    out = capsys.readouterr().out
    naive = np.concatenate([r["per_query"]["naive"]["ndcg@10"] for r in runs])
    xgb = np.concatenate([r["per_query"]["XGBoost unbiased"]["ndcg@10"] for r in runs])
    line = next(line for line in out.splitlines() if line.startswith("| MQ2008 | pbm1 | 100 | 0,1 |"))
    assert f"| {naive.mean():.4f} |" in line and f"{xgb.mean():.4f} ({xgb.mean() - naive.mean():+.4f} [" in line
    assert "| MSLR-sample | pbm1 | 100 | 0 |" in out


def test_join_puts_the_peers_rows_of_the_same_run_beside_ours_and_checks_the_clicks(tmp_path, capsys):
    peers_dir = tmp_path / "peers"
    refs = ("logging", "naive", "full information")
    peers = _run(0, "MQ2008 Fold1")
    _save(peers_dir, peers)
    ours = _run(0, "MQ2008 Fold1", (*refs, "ranklearn pairwise"))  # the same seed: the same references
    alone = _run(1, "MQ2008 Fold2", (*refs, "ranklearn pairwise"))  # no peers' copy: kept as it is
    joined = bench_clicks.join_runs([ours, alone], [peers_dir])
    assert set(joined[0]["per_query"]) == {*RANKERS, "ranklearn pairwise"}
    got, saved = joined[0]["per_query"]["XGBoost unbiased"], peers["per_query"]["XGBoost unbiased"]
    assert all(np.array_equal(got[m], saved[m]) for m in bench_clicks.METRICS)
    assert joined[0]["per_query"]["ranklearn pairwise"] is ours["per_query"]["ranklearn pairwise"]
    assert set(ours["per_query"]) == {*refs, "ranklearn pairwise"}  # the run given is not changed
    assert joined[1] is alone
    # the naive model refitted on the same clicks by other code: this run's values are kept, and named
    refit = _run(0, "MQ2008 Fold1", (*refs, "ranklearn pairwise"))
    refit["per_query"]["naive"] = {m: v.copy() for m, v in refit["per_query"]["naive"].items()}
    refit["per_query"]["naive"]["ndcg@10"][2] += 0.25
    joined = bench_clicks.join_runs([refit], [peers_dir])
    assert joined[0]["per_query"]["naive"] is refit["per_query"]["naive"]
    assert "row 'naive' of pbm1 100 seed 0 MQ2008 Fold1 differs in 1 test queries (NDCG@10 by at most 0.2500)" in (
        capsys.readouterr().err)
    other = _run(0, "MQ2008 Fold1", (*refs, "ranklearn pairwise"), offset=1.0)  # another simulation
    with pytest.raises(SystemExit, match="row 'logging' differs"):
        bench_clicks.join_runs([other], [peers_dir])


def test_ipw_rows_are_left_out_where_the_swap_sessions_estimate_no_propensity(capsys):
    """1,000 swap sessions with hardly any clicks past rank 5: the swap estimate is 0 (or NaN)
    there, no IPW row can weight by it, and every IPW row returns None (no row), said once per row."""
    from types import SimpleNamespace

    from ranklearn.clicks import PBM, simulate
    from ranklearn.datasets import make_ranking_splits

    tr, _, _ = make_ranking_splits((60, 10, 10), n_features=8, random_state=0)
    log = simulate(tr, tr.X[:, 0], PBM(eta=4.0, epsilon=0.01), n_sessions=1000, seed=0, intervention="swap")
    exp = SimpleNamespace(swap_log=log)
    assert bench_clicks._swap_propensity(exp) is None
    assert "estimate no propensity at rank(s)" in capsys.readouterr().err
    for name, make in bench_clicks.IPW_ROWS.items():
        assert make(exp) is None, name


def test_each_entry_is_chosen_among_its_own_candidates_by_validation_ipw_dcg(monkeypatch, capsys):
    """The registered entry picks among its three candidates only; the second entry among those and
    their 7-leaf versions (the registered plans' candidates, by name and parameters)."""
    from types import SimpleNamespace

    assert set(bench_clicks.IPW_CANDIDATES) == {*bench_clicks.ENTRY_CANDIDATES,
                                               *(f"{n}, 7 leaves" for n in bench_clicks.ENTRY_CANDIDATES)}  # fmt: skip
    scores = {name: i / 10 for i, name in enumerate(bench_clicks.IPW_CANDIDATES)}  # a 7-leaf one is best
    best_small = max(scores, key=scores.get)
    best_entry = max(bench_clicks.ENTRY_CANDIDATES, key=scores.get)
    fits = {name: (lambda exp, prop, s=s: SimpleNamespace(best_score_=s)) for name, s in scores.items()}
    monkeypatch.setattr(bench_clicks, "IPW_CANDIDATES", fits)
    monkeypatch.setattr(bench_clicks, "_swap_propensity", lambda exp: "propensities")
    monkeypatch.setattr(bench_clicks, "_FITTED", {})
    exp = SimpleNamespace()
    entry = bench_clicks.IPW_ROWS["ranklearn chosen on IPW-DCG"](exp)
    assert entry.best_score_ == scores[best_entry] and f"[chosen on IPW-DCG: {best_entry}," in capsys.readouterr().err
    second = bench_clicks.SIZES_ROWS["ranklearn chosen on IPW-DCG, 31 or 7 leaves"](exp)
    assert second.best_score_ == scores[best_small] and best_small.endswith(", 7 leaves")


def test_table_sets_each_entry_against_the_peers_and_the_earlier_entries_and_gives_its_share_of_the_gap(capsys):
    first, second, third = bench_clicks.ENTRIES
    rankers = (*RANKERS, "LightGBM position, IPW-DCG stopping", first, second, third)
    runs = [_run(0, "MQ2008 Fold1", rankers), _run(1, "MQ2008 Fold1", rankers)]
    bench_clicks.print_table("t", runs)
    out = capsys.readouterr().out
    pooled = {r: np.concatenate([run["per_query"][r]["ndcg@10"] for run in runs]) for r in rankers}
    assert f"- {second} - {first}: {pooled[second].mean() - pooled[first].mean():+.4f} [" in out
    assert f"- {third} - {first}: {pooled[third].mean() - pooled[first].mean():+.4f} [" in out
    assert f"- {third} - {second}: {pooled[third].mean() - pooled[second].mean():+.4f} [" in out
    assert f"- {first} - LightGBM position, IPW-DCG stopping: " in out
    assert f"- {second} - XGBoost unbiased: " in out and f"- {third} - XGBoost unbiased: " in out
    gap = pooled["full information"].mean() - pooled["naive"].mean()
    entries = (first, second, third)
    shares = {e: (pooled[e].mean() - pooled["naive"].mean()) / gap for e in entries}
    best = max(shares, key=lambda e: pooled[e].mean())  # the best row by its mean (the gap may be < 0 here)
    others = "".join(f"; {e} {shares[e]:.0%}" for e in entries if e != best)
    assert f"the best of ours ({best}) closes {shares[best]:.0%} of it{others}" in out
    for other in (e for e in entries if e != best):
        assert f"- {best} - {other}: {pooled[best].mean() - pooled[other].mean():+.4f} [" in out


def test_table_sets_the_third_entry_against_its_naive_reference(capsys):
    entry, reference = bench_clicks.CANDIDATE_ROWS
    rankers = (*RANKERS, entry, reference)
    runs = [_run(0, "MSLR-sample", rankers), _run(1, "MSLR-sample", rankers)]
    bench_clicks.print_table("t", runs)
    pooled = {r: np.concatenate([run["per_query"][r]["ndcg@10"] for run in runs]) for r in rankers}
    assert f"- {entry} - {reference}: {pooled[entry].mean() - pooled[reference].mean():+.4f} [" in capsys.readouterr().out


def test_table_gives_the_shown_documents_rows_share_of_the_gap_and_each_entry_against_them(capsys):
    entry = bench_clicks.ENTRIES[-1]
    shown, small = bench_clicks.SHOWN_ROWS
    rankers = (*RANKERS, entry, shown, small)
    runs = [_run(0, "MQ2008 Fold1", rankers), _run(1, "MQ2008 Fold2", rankers)]
    bench_clicks.print_table("t", runs)
    out = capsys.readouterr().out
    pooled = {r: np.concatenate([run["per_query"][r]["ndcg@10"] for run in runs]) for r in rankers}
    gap = pooled["full information"].mean() - pooled["naive"].mean()
    for row in (shown, small):
        share = (pooled[row].mean() - pooled["naive"].mean()) / gap
        assert f"- {row} closes {share:.0%} of the gap (LambdaMART on the true labels of the documents" in out
        assert f"- {entry} - {row}: {pooled[entry].mean() - pooled[row].mean():+.4f} [" in out
    # they read true labels: never "the best of ours"
    assert "the best of ours (full information" not in out


def test_figures_draw_each_table_with_its_rows(tmp_path):
    pytest.importorskip("matplotlib")
    runs = [_run(0, "MQ2008 Fold1"), _run(1, "MQ2008 Fold1")]
    path = tmp_path / "figs" / "MQ2008_pbm1_100.png"
    runs[1]["per_query"]["ranklearn pairwise"] = runs[1]["per_query"]["naive"]  # in one run only: left out
    fig = bench_clicks.draw(path, "MQ2008: pbm1, 100 sessions", runs)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.get_suptitle() == "MQ2008: pbm1, 100 sessions"
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == list(RANKERS)


def test_join_of_a_directory_without_runs_is_an_error(tmp_path):
    _save(tmp_path / "a", _run(0, "MQ2008 Fold1"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match=r"no saved runs \(\*\.npz\) in .*empty"):
        bench_clicks.join_runs([_run(0, "MQ2008 Fold1")], [tmp_path / "a", tmp_path / "empty"])


def test_candidate_labels_are_each_documents_clicks_over_propensity_per_session_of_its_query():
    """Hand-computed: query 0 (3 documents) had 4 sessions (one pattern of weight 3 clicking the
    document shown at rank 2, one of weight 1 clicking rank 1), query 1 (2 documents) none; the
    document never shown and query 1's documents get 0. Query 0's documents shown at ranks 1, 2."""
    from types import SimpleNamespace

    from ranklearn.data import from_arrays

    split = from_arrays(np.zeros((5, 1)), np.array([9.0, 9, 9, 9, 9]), qid=[0, 0, 0, 1, 1])  # labels unread
    clicks = SimpleNamespace(
        document=np.array([1, 0, 1, 0]), position=np.array([1, 2, 1, 2]), y=np.array([0.0, 1, 1, 0]),
        sample_weight=np.array([3.0, 3, 1, 1]),
    )  # pattern A (x3): doc 1 at rank 1, doc 0 at rank 2 clicked; pattern B (x1): doc 1 at rank 1 clicked
    labels = bench_clicks.candidate_labels(clicks, split, np.array([1.0, 0.5]))
    np.testing.assert_allclose(labels, [3 * 1 / 0.5 / 4, 1 / 1.0 / 4, 0, 0, 0])
    naive = bench_clicks.candidate_labels(clicks, split, np.ones(1))
    np.testing.assert_allclose(naive, [3 / 4, 1 / 4, 0, 0, 0])


def test_the_third_entry_trains_on_every_candidate_and_reads_no_true_label(monkeypatch, capsys):
    """On a small protocol run: the entry fits the training split's every row (not the shown
    rows), its labels come from the clicks (true labels scrambled after the simulation change
    nothing), and its naive reference needs no swap sessions."""
    from dataclasses import replace

    from ranklearn.clicks import PBM
    from ranklearn.clicks.protocol import prepare
    from ranklearn.datasets import make_ranking_splits

    tr, va, _ = make_ranking_splits((40, 10, 10), n_features=8, random_state=1)
    exp = prepare(tr, va, PBM(eta=1.0, epsilon=0.1), n_sessions=4000, seed=0, merge_sessions=True, swap_sessions=4000)
    monkeypatch.setattr(bench_clicks, "ROUNDS", 20)
    first = bench_clicks.CANDIDATE_ROWS["ranklearn IPW labels over the candidates, 31 or 7 leaves"](exp)
    assert first is not None and first.n_features_in_ == tr.n_features
    exp.train.y[:], exp.valid.y[:] = 99.0, 99.0  # true labels are never read: the same model again
    again = bench_clicks.CANDIDATE_ROWS["ranklearn IPW labels over the candidates, 31 or 7 leaves"](exp)
    np.testing.assert_array_equal(first.predict(tr.X), again.predict(tr.X))
    assert bench_clicks.CANDIDATE_ROWS["naive labels over the candidates"](replace(exp, swap_log=None)) is not None
    assert "over the candidates (IPW): " in capsys.readouterr().err
