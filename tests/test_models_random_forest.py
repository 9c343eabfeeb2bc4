"""Random Forests: each bag is a MART on queries drawn with replacement; the forest is their mean."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils import check_random_state

from ranklearn.datasets import make_ranking_splits
from ranklearn.io import load_model
from ranklearn.models import LambdaMART
from ranklearn.models.random_forest import RandomForest

SMALL = dict(num_leaves=8, min_samples_leaf=2, feature_fraction=0.5)


@pytest.fixture(scope="module")
def rf_splits():
    return make_ranking_splits(n_queries=(40, 15, 15), n_features=6, n_informative=4, random_state=11)


def _bags_by_hand(ds, n_bags, seed, subsample=1.0):
    """The bags as the forest draws them: queries with replacement, then a seed for the bag's trees."""
    rng = check_random_state(seed)
    ptr = ds.ptr
    n_q = ptr.shape[0] - 1
    models = []
    for _ in range(n_bags):
        chosen = rng.randint(n_q, size=max(1, int(round(subsample * n_q))))
        rows = np.concatenate([np.arange(ptr[q], ptr[q + 1]) for q in chosen])
        qid = np.repeat(np.arange(chosen.size), np.diff(ptr)[chosen])
        bag = LambdaMART(n_estimators=1, learning_rate=0.1, max_bins=255, objective="squared_error",
                         random_state=int(rng.randint(2**31 - 1)), **SMALL)  # fmt: skip
        models.append(bag.fit(ds.X[rows], ds.y[rows], qid=qid))
    return models


def test_the_forest_is_the_mean_of_its_bags(rf_splits):
    tr, _, te = rf_splits
    forest = RandomForest(n_bags=4, random_state=3, **SMALL).fit(tr.X, tr.y, qid=tr.qid)
    bags = _bags_by_hand(tr, 4, 3)
    expected = np.mean([b.predict(te.X) for b in bags], axis=0)
    np.testing.assert_allclose(forest.predict(te.X), expected, rtol=1e-12, atol=1e-15)
    assert [len(b) for b in forest.bags_] == [1, 1, 1, 1]
    # a bag's sample: drawn with replacement, so (almost surely) some query twice and some not at all
    rng = check_random_state(3)
    chosen = rng.randint(tr.n_queries, size=tr.n_queries)
    assert np.unique(chosen).size < tr.n_queries


def test_eval_sets_early_stopping_and_file_round_trip(rf_splits, tmp_path):
    tr, va, te = rf_splits
    forest = RandomForest(n_bags=12, early_stopping_rounds=3, random_state=0, **SMALL).fit(
        tr.X, tr.y, qid=tr.qid, eval_set=[(va.X, va.y, va.qid)]
    )
    assert len(forest.bags_) == forest.best_iteration_ <= forest.n_iter_
    # the score kept is the mean of the bags kept
    bags = _bags_by_hand(tr, forest.best_iteration_, 0)
    np.testing.assert_allclose(forest.predict(va.X), np.mean([b.predict(va.X) for b in bags], axis=0), rtol=1e-12)
    forest.save(tmp_path / "rf.json")
    back = load_model(tmp_path / "rf.json")
    np.testing.assert_array_equal(back.predict(te.X), forest.predict(te.X))


def test_command_line(capsys, tmp_path, rf_splits):
    from ranklearn.cli.main import main
    from ranklearn.data import save_svmlight

    tr, va, te = rf_splits
    paths = {}
    for name, ds in (("train", tr), ("vali", va), ("test", te)):
        paths[name] = tmp_path / f"{name}.txt"
        save_svmlight(ds, paths[name])
    model, scores = tmp_path / "rf.json", tmp_path / "rf.scores"
    for args in (["train", "--train", paths["train"], "--validate", paths["vali"], "--model", "random-forest",
                  "--bags", "5", "--leaves", "8", "--seed", "0", "--save", model],
                 ["predict", "--model", model, "--data", paths["test"], "--out", scores]):  # fmt: skip
        with pytest.raises(SystemExit) as info:
            main([str(a) for a in args])
        assert (info.value.code or 0) == 0, capsys.readouterr().err
    np.testing.assert_array_equal(np.loadtxt(scores), load_model(model).predict(te.X))
