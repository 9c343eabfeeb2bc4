"""Synthetic data (make_ranking) and the LETOR fold loader."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.data import RankingDataset, load_svmlight
from ranklearn.datasets import LetorSplits, load_letor_fold, make_ranking, make_ranking_splits


def ndcg_at_10(y: np.ndarray, scores: np.ndarray, ptr: np.ndarray) -> float:
    """Mean NDCG@10, gain 2^rel - 1, queries without relevant documents count 0 (test-local)."""
    discount = 1.0 / np.log2(np.arange(2, 12))
    values = []
    for lo, hi in zip(ptr[:-1], ptr[1:]):
        gain = 2.0 ** y[lo:hi] - 1
        order = np.argsort(-scores[lo:hi], kind="stable")[:10]
        ideal = np.sort(gain)[::-1][:10]
        best = (ideal * discount[: len(ideal)]).sum()
        values.append((gain[order] * discount[: len(order)]).sum() / best if best > 0 else 0.0)
    return float(np.mean(values))


def test_make_ranking_is_deterministic():
    a = make_ranking(30, random_state=7)
    b = make_ranking(30, random_state=7)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.ptr, b.ptr)
    c = make_ranking(30, random_state=8)
    assert c.X.shape != a.X.shape or not np.array_equal(c.X, a.X)


def test_make_ranking_properties():
    ds = make_ranking(400, 25, n_informative=6, docs_per_query=(3, 40), random_state=0)
    assert isinstance(ds, RankingDataset)
    assert (ds.n_queries, ds.n_features) == (400, 25)
    assert ds.X.dtype == np.float32 and np.isfinite(ds.X).all()
    sizes = ds.query_sizes
    assert sizes.min() >= 3 and sizes.max() <= 40 and len(np.unique(sizes)) > 10
    counts = np.bincount(ds.y.astype(int), minlength=5)
    assert set(np.unique(ds.y)) == {0, 1, 2, 3, 4}
    assert counts[0] > 0.5 * ds.n_samples and counts[4] < 0.06 * ds.n_samples  # skewed like web data
    assert np.all(np.diff(counts) < 0)
    no_relevant = np.mean([q.y.max() == 0 for q in ds])
    assert 0.15 <= no_relevant <= 0.25
    assert ds.query_ids.tolist() == list(range(400))


def test_make_ranking_return_X_y():
    X, y, qid = make_ranking(10, 5, n_informative=3, random_state=1, return_X_y=True)
    ds = make_ranking(10, 5, n_informative=3, random_state=1)
    np.testing.assert_array_equal(X, ds.X)
    np.testing.assert_array_equal(y, ds.y)
    np.testing.assert_array_equal(qid, ds.qid)


@pytest.mark.parametrize(
    "kwargs",
    [{"n_queries": 0}, {"n_informative": 30}, {"docs_per_query": (5, 2)}, {"no_relevant_fraction": 1.5}, {"noise": -1}],
)
def test_make_ranking_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        make_ranking(**{"n_queries": 10, "n_features": 20} | kwargs)


def test_trees_beat_linear_and_both_beat_random():
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import Ridge

    from threadpoolctl import threadpool_limits

    train, _, test = make_ranking_splits((150, 10, 100), random_state=3)
    with threadpool_limits(1):  # OpenMP threads crawl on a busy shared machine
        tree = HistGradientBoostingRegressor(max_iter=60, random_state=0).fit(train.X, train.y)
    linear = Ridge().fit(train.X, train.y)
    random = np.random.default_rng(0).random(test.n_samples)
    ndcg_tree = ndcg_at_10(test.y, tree.predict(test.X), test.ptr)
    ndcg_linear = ndcg_at_10(test.y, linear.predict(test.X), test.ptr)
    ndcg_random = ndcg_at_10(test.y, random, test.ptr)
    assert ndcg_tree > ndcg_linear + 0.1
    assert ndcg_linear > ndcg_random + 0.05


def test_make_ranking_splits():
    splits = make_ranking_splits((20, 5, 7), n_features=6, n_informative=3, random_state=4)
    assert isinstance(splits, LetorSplits)
    assert [s.n_queries for s in splits] == [20, 5, 7]
    ids = np.concatenate([s.query_ids for s in splits])
    assert len(np.unique(ids)) == 32
    whole = make_ranking(32, n_features=6, n_informative=3, random_state=4)
    np.testing.assert_array_equal(RankingDataset.concatenate(list(splits)).X, whole.X)
    with pytest.raises(ValueError):
        make_ranking_splits((20, 5))


def test_load_letor_fold_mq2008(shared_data):
    root = shared_data / "MQ2008"
    fold = load_letor_fold(root, 1)
    assert [d.n_queries for d in fold] == [471, 157, 156]
    assert all(d.n_features == 46 for d in fold)
    s4 = load_svmlight(root / "S4.txt")  # Fold1 validation is S4
    np.testing.assert_array_equal(fold.vali.X, s4.X)
    np.testing.assert_array_equal(fold.vali.query_ids, s4.query_ids)
    sparse = load_letor_fold(root, "Fold1", sparse=True)
    assert sparse.test.is_sparse


def _write_fold(root, texts):
    folder = root / "Fold1"
    folder.mkdir(parents=True)
    for name, text in texts.items():
        (folder / name).write_text(text)


def test_load_letor_fold_aligns_n_features(tmp_path):
    _write_fold(tmp_path, {"train.txt": "1 qid:1 5:1\n", "vali.txt": "1 qid:2 1:1\n", "test.txt": "0 qid:3 2:1\n"})
    fold = load_letor_fold(tmp_path, 1)
    assert [d.n_features for d in fold] == [5, 5, 5]


def test_load_letor_fold_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="no Fold"):
        load_letor_fold(tmp_path, 1)
    _write_fold(tmp_path, {"train.txt": "1 qid:1 1:1\n"})
    with pytest.raises(FileNotFoundError, match=r"lacks \['vali.txt', 'test.txt'\]"):
        load_letor_fold(tmp_path, 1)
    with pytest.raises(FileNotFoundError, match="has \\['Fold1'\\]"):
        load_letor_fold(tmp_path, 2)
