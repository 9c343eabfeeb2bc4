"""ranklearn.explain: pair and query explanations add up to the score differences, and say which
features decided, checked against the contributions and hand-computed linear cases."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn import LambdaMART, explain
from ranklearn.datasets import make_ranking
from ranklearn.models.linear import LinearRegression


@pytest.fixture(scope="module")
def trees():
    X, y, qid = make_ranking(40, 6, n_informative=4, random_state=0, return_X_y=True)
    model = LambdaMART(n_estimators=15, num_leaves=6, min_samples_leaf=3, random_state=0, n_jobs=1).fit(X, y, qid)
    return model, X[qid == qid[0]]


def test_pair_splits_the_score_difference_exactly(trees):
    model, Xq = trees
    pe = explain.pair(model, Xq[0], Xq[1])
    s = model.predict(Xq[:2])
    assert pe.score_a == s[0] and pe.score_b == s[1]
    assert abs(pe.residual) <= 1e-9 * max(1.0, abs(pe.difference))
    phi = model.predict_contributions(Xq[:2])
    np.testing.assert_array_equal(pe.contributions, phi[0, :-1] - phi[1, :-1])
    (name, value), *_ = pe.top(3)
    j = int(np.argmax(np.abs(pe.contributions)))
    assert name == f"f{j + 1}" and value == pe.contributions[j]
    d = pe.to_dict(2)
    assert d["difference"] == pe.difference and len(d["features"]) == 2


def test_pair_of_a_linear_ranker_is_coef_times_the_difference():
    X, y, qid = make_ranking(30, 4, n_informative=3, random_state=1, return_X_y=True)
    model = LinearRegression().fit(X, y, qid)
    a, b = X[0].astype(np.float32).astype(np.float64), X[1].astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(explain.pair(model, a, b).contributions, model.coef_ * (a - b), rtol=1e-12, atol=1e-12)


def test_query_orders_documents_and_explains_each_adjacent_pair(trees):
    model, Xq = trees
    ex = explain.query(model, Xq, top=4, doc_ids=[f"d{i}" for i in range(Xq.shape[0])])
    s = model.predict(Xq)
    np.testing.assert_array_equal(ex.order, np.argsort(-s, kind="stable"))
    # each document's relative contributions add up to its score minus the query's mean
    np.testing.assert_allclose(ex.relative.sum(axis=1), s - s.mean(), atol=1e-9)
    assert ex.residual <= 1e-9
    assert len(ex.pairs) == 3
    for p, pe in enumerate(ex.pairs):
        a, b = ex.order[p], ex.order[p + 1]
        assert pe.difference == s[a] - s[b] >= 0
        np.testing.assert_allclose(pe.contributions, ex.relative[a] - ex.relative[b], atol=1e-12)
    d = ex.to_dict(3)
    assert [doc["doc"] for doc in d["documents"]] == [f"d{i}" for i in ex.order[:4]]
    assert d["adjacent_pairs"][0]["above"] == f"d{ex.order[0]}"


def test_query_checks_its_input(trees):
    model, Xq = trees
    with pytest.raises(ValueError, match="top must be >= 1"):
        explain.query(model, Xq, top=0)
    with pytest.raises(ValueError, match="doc_ids has 1 names for"):
        explain.query(model, Xq, doc_ids=["x"])
    with pytest.raises(ValueError, match="at least one document"):
        explain.query(model, Xq[:0])
    with pytest.raises(TypeError, match="has no predict_contributions"):
        explain.pair(object(), Xq[0], Xq[1])


def test_a_neural_rankers_query_residual_is_its_additivity_error():
    pytest.importorskip("torch")
    from ranklearn.models import RankNet
    from ranklearn.models.contributions import additivity_error

    X, y, qid = make_ranking(20, 4, n_informative=3, random_state=2, return_X_y=True)
    model = RankNet(hidden=(8,), n_estimators=2, random_state=0, n_jobs=1).fit(X, y, qid)
    Xq = X[qid == qid[0]]
    ex = explain.query(model, Xq, n_steps=4)
    err = additivity_error(model, Xq, model.predict_contributions(Xq, n_steps=4))
    assert ex.residual == pytest.approx(np.abs(err - err.mean()).max(), abs=1e-9)
    assert ex.residual > 0  # an approximation: not exactly additive with 4 points
