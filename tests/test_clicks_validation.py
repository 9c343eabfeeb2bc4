"""The IPW click DCG: hand-computed labels, unbiasedness against the exact expectation, early stopping."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn import LambdaMART
from ranklearn.clicks import PBM, ClickTrainingSet, estimate_propensity, ipw_dcg, ipw_eval_set, ipw_labels, simulate
from ranklearn.clicks.protocol import prepare
from ranklearn.clicks.simulation import relevance_probabilities
from ranklearn.data import RankingDataset
from ranklearn.datasets import make_ranking_splits
from ranklearn.metrics.gain import discount


def test_labels_are_clicks_over_the_propensity_of_the_rank_shown():
    got = ipw_labels([1, 0, 1, 1], [1, 2, 3, 12], [1.0, 0.5, 0.25])  # ranks past the end take the last
    assert got.tolist() == [1.0, 0.0, 4.0, 4.0]
    assert ipw_labels([1, 1], [1, 3], [1.0, 0.5, 0.25], clip=0.4).tolist() == [1.0, 2.5]
    assert ipw_dcg(5).k == 5 and "gain=rel" in ipw_dcg(5).conventions


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(propensity=[1.0, np.nan]), "positive finite"),
        (dict(propensity=[1.0, 0.0]), "positive finite"),
        (dict(propensity=[1.0], clip=0.0), "clip must be a positive number or None, got 0.0"),
        (dict(propensity=[1.0], position=[0, 1]), "whole numbers >= 1"),
        (dict(propensity=[1.0], position=[1.5, 1]), "whole numbers >= 1"),
        (dict(propensity=[1.0], position=[1]), "one value per row"),
    ],
)
def test_label_errors(kwargs, match):
    args = dict(click=[1, 0], position=[1, 2]) | kwargs
    with pytest.raises(ValueError, match=match):
        ipw_labels(**args)


def _one_query(n_docs: int = 6) -> RankingDataset:
    y = np.array([1, 0, 0, 0, 0, 2, 0, 1][:n_docs], dtype=np.float64)
    X = np.arange(n_docs, dtype=np.float64)[:, None]
    return RankingDataset(X, y, np.array([0, n_docs]), query_ids=np.array([7]))


def test_the_mean_over_sessions_is_the_dcg_of_attractiveness_whatever_the_logged_order():
    data = _one_query()
    click_model = PBM(eta=2.0, epsilon=0.1)  # strong bias
    logged = np.array([6.0, 5, 4, 3, 2, 1])  # the logging ranker shows row 0 first, the best (row 5) last
    log = simulate(data, logged, click_model, n_sessions=60_000, top_k=6, seed=3)
    sessions = ClickTrainingSet.per_session(log, data)
    theta = click_model.examination(6)
    attract = 0.1 + 0.9 * relevance_probabilities(data.y, 2.0)
    ptr = np.r_[0, np.flatnonzero(np.diff(sessions.qid)) + 1, sessions.qid.size]
    for model_scores in (logged, data.y, -logged):  # the logged order, the ideal one, the reversed one
        scores = model_scores[sessions.document]
        ranks = np.argsort(np.argsort(-model_scores, kind="stable"), kind="stable")
        exact = sum(attract[d] * discount(ranks[d]) for d in range(6))  # every document is shown
        _, y, _ = ipw_eval_set(sessions, theta)
        estimate = ipw_dcg(10).mean(y, scores, ptr)
        assert estimate == pytest.approx(exact, rel=0.02)
    # the raw clicks rank the logged order above the ideal one: the bias the metric removes
    raw = ipw_dcg(10).mean(sessions.y, logged[sessions.document], ptr)
    assert raw > ipw_dcg(10).mean(sessions.y, data.y[sessions.document], ptr)
    with pytest.raises(ValueError, match="needs the rank each document was shown"):
        ipw_eval_set(ClickTrainingSet(sessions.X, sessions.y, sessions.qid, sessions.sample_weight, None,
                                      sessions.document), theta)  # fmt: skip


def test_early_stopping_on_the_ipw_click_dcg_with_swap_propensities():
    tr, va, _ = make_ranking_splits((60, 20, 10), n_features=8, random_state=0)
    exp = prepare(tr, va, PBM(eta=1.0, epsilon=0.1), n_sessions=3000, seed=0, top_k=5, merge_sessions=True,
                  swap_sessions=2000)  # fmt: skip
    log = exp.swap_log
    assert np.unique(log.session).size == 2000 and log.swap is not None and log.swap.max() <= 5
    first = np.r_[True, exp.train_clicks.qid[1:] != exp.train_clicks.qid[:-1]]
    assert exp.train_clicks.sample_weight[first].sum() == 3000  # the swap sessions train nothing
    prop = estimate_propensity(log, "swap", n_bootstrap=0)
    eval_set = ipw_eval_set(exp.valid_clicks, prop)
    model = LambdaMART(n_estimators=40, early_stopping_rounds=5, metric=ipw_dcg(10), lambda_metric="ndcg@10",
                       unbiased="ipw", propensity=prop, random_state=0)  # fmt: skip
    model.fit(exp.train_clicks.X, exp.train_clicks.y, eval_set=[eval_set], **exp.fit_kwargs())
    curve = model.evals_result_["valid_0"]["dcg@10"]
    assert model.best_score_ == max(curve) and len(model.trees_) == int(np.argmax(curve)) + 1
    # the watched value is the metric of the IPW labels at the kept trees
    ptr = np.r_[0, np.flatnonzero(np.diff(eval_set[2])) + 1, eval_set[2].size]
    assert model.best_score_ == pytest.approx(ipw_dcg(10).mean(eval_set[1], model.predict(eval_set[0]), ptr))
    with pytest.raises(ValueError, match="swap_sessions must be >= 0"):
        prepare(tr, va, PBM(), n_sessions=10, swap_sessions=-1)
