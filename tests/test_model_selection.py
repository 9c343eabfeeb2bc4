"""Query-grouped folds and cross_validate, against a hand-written loop."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from ranklearn.datasets import make_ranking
from ranklearn.metrics import get_metric
from ranklearn.model_selection import cross_validate, query_folds
from ranklearn.models import LambdaMART


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(60, 6, n_informative=4, docs_per_query=(3, 12), random_state=0, return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))  # queries interleaved: rows need regrouping
    return X[order], y[order], qid[order]


def test_query_folds_keep_queries_whole_and_are_seeded(data):
    _, _, qid = data
    folds = list(query_folds(qid, 4, random_state=3))
    assert len(folds) == 4
    tested = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(tested), np.arange(len(qid)))  # every row tested exactly once
    for train, test in folds:
        assert not set(qid[train]) & set(qid[test])
        assert len(train) + len(test) == len(qid)
    again = list(query_folds(qid, 4, random_state=3))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    other = list(query_folds(qid, 4, random_state=4))
    assert any(not np.array_equal(a[1], b[1]) for a, b in zip(folds, other))
    with pytest.raises(ValueError, match="n_splits"):
        list(query_folds(qid, 1))
    with pytest.raises(ValueError, match="n_splits"):
        list(query_folds(qid, 61))


def test_cross_validate_equals_a_hand_written_loop(data):
    X, y, qid = data
    model = LambdaMART(n_estimators=5, num_leaves=4, min_samples_leaf=2, random_state=0)
    metrics = ["ndcg@5", "map"]
    result = cross_validate(model, X, y, qid=qid, cv=3, metrics=metrics, random_state=1)
    assert set(result) == {"test_ndcg@5", "test_map", "fit_time", "n_test_queries"}
    assert result["n_test_queries"].sum() == 60
    for i, (train, test) in enumerate(query_folds(qid, 3, random_state=1)):
        fitted = clone(model).fit(X[train], y[train], qid=qid[train])
        # rows of each test query gathered in input order
        test = test[np.argsort(qid[test], kind="stable")]
        s = fitted.predict(X[test])
        _, starts = np.unique(qid[test], return_index=True)
        ptr = np.append(np.sort(starts), len(test))
        for spec in metrics:
            assert result[f"test_{spec}"][i] == pytest.approx(get_metric(spec).mean(y[test], s, ptr), abs=1e-12)
    # explicit folds give the same numbers; conventions pass through
    same = cross_validate(model, X, y, qid=qid, cv=list(query_folds(qid, 3, random_state=1)), metrics=metrics)
    assert np.array_equal(same["test_map"], result["test_map"])
    lgbm = cross_validate(model, X, y, qid=qid, cv=3, metrics=["ndcg@5"], random_state=1, conventions="lightgbm")
    assert (lgbm["test_ndcg@5"] >= result["test_ndcg@5"]).all()  # empty queries count 1 instead of 0
    with pytest.raises(ValueError, match="fold 1: a query is in both"):
        cross_validate(model, X, y, qid=qid, cv=[(np.arange(100), np.arange(50, 120))])


def test_cross_validate_takes_frames_splitters_and_trec_eval_ties(data, monkeypatch):
    pd = pytest.importorskip("pandas")
    from sklearn.model_selection import GroupKFold

    X, y, qid = data
    model = LambdaMART(n_estimators=4, num_leaves=4, min_samples_leaf=2, random_state=0)
    folds = list(query_folds(qid, 3, random_state=1))
    arrays = cross_validate(model, X, y, qid=qid, cv=folds, metrics="ndcg@5")
    # a frame's rows are taken by position (X[rows] picked columns: a KeyError)
    frame = cross_validate(model, pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]), y, qid=qid,
                           cv=folds, metrics="ndcg@5")  # fmt: skip
    assert np.array_equal(frame["test_ndcg@5"], arrays["test_ndcg@5"])
    import scipy.sparse as sp

    coo = cross_validate(model, sp.coo_matrix(X), y, qid=qid, cv=folds, metrics="ndcg@5")  # not subscriptable
    assert np.array_equal(coo["test_ndcg@5"], arrays["test_ndcg@5"])
    splitter = GroupKFold(3)  # a scikit-learn splitter gets the queries as its groups
    expected = cross_validate(model, X, y, qid=qid, cv=list(splitter.split(X, y, groups=qid)), metrics="ndcg@5")
    assert np.array_equal(cross_validate(model, X, y, qid=qid, cv=splitter, metrics="ndcg@5")["test_ndcg@5"],
                          expected["test_ndcg@5"])  # fmt: skip
    # trec_eval's ties need the document ids; without them, refused before any fit
    docids = np.array([f"d{i:03d}" for i in range(len(y))], dtype=object)
    fits = []
    monkeypatch.setattr(LambdaMART, "fit", lambda self, *a, **k: fits.append(1))
    with pytest.raises(ValueError, match="pass docids="):
        cross_validate(model, X, y, qid=qid, cv=folds, conventions="trec_eval")
    assert fits == []
    monkeypatch.undo()
    for X_, y_ in ((X, y[:-5]), (X[:-5], y), (np.vstack([X, X[:5]]), y)):  # extra rows were dropped, short ones IndexError
        with pytest.raises(ValueError, match="X, y and qid lengths differ"):
            cross_validate(model, X_, y_, qid=qid, cv=folds)
    with pytest.raises(ValueError, match="docids has 50 values for"):
        cross_validate(model, X, y, qid=qid, cv=folds, conventions="trec_eval", docids=docids[:50])
    trec = cross_validate(model, X, y, qid=qid, cv=folds, metrics="ndcg@5", conventions="trec_eval", docids=docids)
    for i, (train, test) in enumerate(folds):
        fitted = clone(model).fit(X[train], y[train], qid=qid[train])
        test = test[np.argsort(qid[test], kind="stable")]
        _, starts = np.unique(qid[test], return_index=True)
        ptr = np.append(np.sort(starts), len(test))
        metric = get_metric("ndcg@5", conventions="trec_eval")
        assert trec["test_ndcg@5"][i] == pytest.approx(
            metric.mean(y[test], fitted.predict(X[test]), ptr, docids=docids[test]), abs=1e-12)
