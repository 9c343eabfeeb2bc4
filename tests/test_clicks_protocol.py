"""The offline click protocol: what each ranker may see, and its rows on small synthetic data."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.clicks import PBM
from ranklearn.clicks.protocol import (
    ClickExperiment,
    full_information_ranker,
    prepare,
    run_protocol,
    shown_information_ranker,
)
from ranklearn.datasets import make_ranking_splits
from ranklearn.models.lambdamart import LambdaMART


@pytest.fixture(scope="module")
def splits():
    return make_ranking_splits((120, 40, 60), n_features=8, random_state=0)


def test_prepare_simulates_sessions_on_both_splits(splits):
    tr, va, _ = splits
    exp = prepare(tr, va, PBM(eta=1.0, epsilon=0.1), n_sessions=3000, seed=1, top_k=5)
    t, v = exp.train_clicks, exp.valid_clicks
    assert np.unique(t.qid).size == 3000  # one list per session
    assert np.unique(v.qid).size == max(va.n_queries, round(3000 * va.n_queries / tr.n_queries))
    assert set(np.unique(t.y)) <= {0.0, 1.0} and t.position.min() == 1 and t.position.max() <= 5
    for clicks, split in ((t, tr), (v, va)):  # the rows are the split's documents, features included
        assert np.array_equal(clicks.X, split.X[clicks.document])
    # validation rows are shuffled within their session: ties of a model's scores must not fall in
    # the logged order (which the biased clicks reward)
    assert np.all(np.diff(v.qid) >= 0)
    in_order = [np.all(np.diff(v.position[v.qid == k]) > 0) for k in np.unique(v.qid)[:100]]
    assert not all(in_order) and sorted(v.position[v.qid == v.qid[0]]) == list(range(1, (v.qid == v.qid[0]).sum() + 1))
    # the shown lists are the logging ranker's top 5 of each query
    first = np.flatnonzero(np.r_[True, t.qid[1:] != t.qid[:-1]])
    scores = exp.logging.predict(tr.X)
    for row in first[:50]:
        q = np.searchsorted(tr.ptr, t.document[row], side="right") - 1
        assert scores[t.document[row]] == scores[tr.ptr[q] : tr.ptr[q + 1]].max()


def test_protocol_rows_and_reproducibility(splits):
    tr, va, te = splits
    seen = {}

    def spy(exp: ClickExperiment):
        seen["exp"] = exp
        return exp.logging

    result = run_protocol(tr, va, te, PBM(eta=1.0), n_sessions=2000, seed=0,
                          rankers={"spy": spy, "declines": lambda exp: None}, metrics=("ndcg@10",))  # fmt: skip
    # a ranker that cannot train on the experiment returns None: no row, and it is named
    assert list(result.per_query) == ["logging", "naive", "full information", "spy"]
    assert result.settings["skipped"] == ["declines"]
    values = result.per_query["naive"]["ndcg@10"]
    assert values.shape == (te.n_queries,) and np.all((values >= 0) & (values <= 1))
    # a ranker of one's own is scored like the references: the spy returned the logging ranker
    assert np.array_equal(result.per_query["spy"]["ndcg@10"], result.per_query["logging"]["ndcg@10"])
    means = result.means()
    assert means["full information"]["ndcg@10"] > means["logging"]["ndcg@10"]  # labels beat 1% of them
    assert "gain=2^rel-1" in result.conventions and result.settings["n_sessions"] == 2000
    again = run_protocol(tr, va, te, PBM(eta=1.0), n_sessions=2000, seed=0, metrics=("ndcg@10",))
    assert np.array_equal(again.per_query["naive"]["ndcg@10"], values)


def test_merged_sessions_and_the_validation_cap(splits):
    tr, va, _ = splits
    each = prepare(tr, va, PBM(eta=1.0, epsilon=0.1), n_sessions=3000, seed=1, top_k=5)
    merged = prepare(tr, va, PBM(eta=1.0, epsilon=0.1), n_sessions=3000, seed=1, top_k=5, merge_sessions=True,
                     max_valid_sessions=10)  # fmt: skip
    t, m = each.train_clicks, merged.train_clicks
    first = np.r_[True, m.qid[1:] != m.qid[:-1]]
    assert m.sample_weight[first].sum() == 3000 and m.y.size < t.y.size / 2  # every session, fewer rows
    # the same clicks per document and position, each counted with its session's weight
    for clicks in (t, m):
        assert clicks.y @ clicks.sample_weight == t.y.sum()
    assert np.array_equal(merged.fit_kwargs()["sample_weight"], m.sample_weight)
    assert np.unique(merged.valid_clicks.qid).size == va.n_queries  # capped (1,000 proportional), at least one a query
    with pytest.raises(ValueError, match="max_valid_sessions must be at least 1"):
        prepare(tr, va, PBM(), n_sessions=10, max_valid_sessions=0)


def test_protocol_parameter_errors(splits):
    tr, va, _ = splits
    with pytest.raises(ValueError, match="logging_fraction must be in"):
        prepare(tr, va, PBM(), n_sessions=10, logging_fraction=0)
    with pytest.raises(ValueError, match="n_sessions must be at least 1"):
        prepare(tr, va, PBM(), n_sessions=0)


def test_shown_information_ranker_reads_the_shown_documents_true_labels(splits):
    tr, va, te = splits
    exp = prepare(tr, va, PBM(eta=1.0, epsilon=0.1), n_sessions=3000, seed=2, top_k=5, merge_sessions=True)
    model = shown_information_ranker(exp, n_estimators=20)
    # the logging ranker's top 5 of every query (3000 sessions reach all 120), with their true labels
    sizes = np.diff(tr.ptr)
    rows = np.unique(exp.train_clicks.document)
    assert rows.size == np.minimum(sizes, 5).sum()
    scores = exp.logging.predict(tr.X)
    for q in range(0, tr.n_queries, 7):
        mine = rows[(rows >= tr.ptr[q]) & (rows < tr.ptr[q + 1])]
        top = tr.ptr[q] + np.argsort(-scores[tr.ptr[q] : tr.ptr[q + 1]], kind="stable")[:5]
        assert np.array_equal(np.sort(scores[mine]), np.sort(scores[top]))
    v_rows = np.unique(exp.valid_clicks.document)
    by_hand = LambdaMART(n_estimators=20, early_stopping_rounds=50, random_state=2).fit(
        tr.X[rows], tr.y[rows], qid=tr.qid[rows], eval_set=[(va.X[v_rows], va.y[v_rows], va.qid[v_rows])]
    )
    assert np.array_equal(model.predict(te.X), by_hand.predict(te.X))
    # few sessions: the queries no session showed have no rows, the others stay grouped
    sparse = prepare(tr, va, PBM(eta=1.0, epsilon=0.1), n_sessions=30, seed=2, top_k=5)
    rows = np.unique(sparse.train_clicks.document)
    assert np.unique(tr.qid[rows]).size <= 30 < tr.n_queries  # at most one query a session
    shown_model = shown_information_ranker(sparse, n_estimators=5)
    by_hand = LambdaMART(n_estimators=5, early_stopping_rounds=50, random_state=2).fit(
        tr.X[rows], tr.y[rows], qid=tr.qid[rows], eval_set=[(va.X[v], va.y[v], va.qid[v]) for v in
                                                             [np.unique(sparse.valid_clicks.document)]]
    )  # fmt: skip
    assert np.array_equal(shown_model.predict(te.X), by_hand.predict(te.X))
    # every document shown: the full-information ranker itself
    everything = prepare(tr, va, PBM(eta=1.0, epsilon=0.1), n_sessions=3000, seed=2, top_k=100)
    assert np.array_equal(
        shown_information_ranker(everything, n_estimators=20).predict(te.X),
        full_information_ranker(everything, n_estimators=20).predict(te.X),
    )
