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


def _bags_by_hand(ds, n_bags, seed, subsample=1.0, **extra):
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
                         random_state=int(rng.randint(2**31 - 1)), **SMALL, **extra)  # fmt: skip
        models.append(bag.fit(ds.X[rows], ds.y[rows], qid=qid))
    return models


def test_the_forest_is_the_mean_of_its_bags(rf_splits):
    tr, _, te = rf_splits
    forest = RandomForest(n_estimators=4, random_state=3, **SMALL).fit(tr.X, tr.y, qid=tr.qid)
    bags = _bags_by_hand(tr, 4, 3)
    expected = np.mean([b.predict(te.X) for b in bags], axis=0)
    np.testing.assert_allclose(forest.predict(te.X), expected, rtol=1e-12, atol=1e-15)
    assert [len(b) for b in forest.bags_] == [1, 1, 1, 1]
    # feature importance: the bags' totals summed (it had none, though a tree model)
    for kind in ("gain", "split"):
        np.testing.assert_allclose(forest.feature_importance(kind), np.sum([b.feature_importance(kind) for b in bags], axis=0))
    assert forest.feature_importances_.sum() == pytest.approx(1.0)
    assert list(forest.feature_importance(by_name=True)) == [f"f{i}" for i in range(1, 7)]
    # a bag's sample: drawn with replacement, so (almost surely) some query twice and some not at all
    rng = check_random_state(3)
    chosen = rng.randint(tr.n_queries, size=tr.n_queries)
    assert np.unique(chosen).size < tr.n_queries


def test_leaf_order_reaches_every_bag(rf_splits):
    tr, _, te = rf_splits
    forest = RandomForest(n_estimators=3, random_state=5, leaf_order="deviance", **SMALL).fit(tr.X, tr.y, qid=tr.qid)
    bags = _bags_by_hand(tr, 3, 5, leaf_order="deviance")
    expected = np.mean([b.predict(te.X) for b in bags], axis=0)
    np.testing.assert_allclose(forest.predict(te.X), expected, rtol=1e-12, atol=1e-15)
    gain_order = RandomForest(n_estimators=3, random_state=5, **SMALL).fit(tr.X, tr.y, qid=tr.qid)
    assert not np.allclose(forest.predict(te.X), gain_order.predict(te.X))


def test_eval_sets_early_stopping_and_file_round_trip(rf_splits, tmp_path):
    tr, va, te = rf_splits
    forest = RandomForest(n_estimators=12, early_stopping_rounds=3, random_state=0, **SMALL).fit(
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
                  "--n-estimators", "5", "--leaves", "8", "--seed", "0", "--save", model],
                 ["predict", "--model", model, "--data", paths["test"], "--out", scores]):  # fmt: skip
        with pytest.raises(SystemExit) as info:
            main([str(a) for a in args])
        assert (info.value.code or 0) == 0, capsys.readouterr().err
    np.testing.assert_array_equal(np.loadtxt(scores), load_model(model).predict(te.X))


def test_bags_binned_from_the_forest_are_the_bags_fitted_alone(rf_splits):
    # the forest bins each bag from values sorted once (SampleBinner): the trees must be those
    # of a LambdaMART fitted on the bag's own copy of the rows, split for split
    tr, _, _ = rf_splits
    forest = RandomForest(n_estimators=5, random_state=4, **SMALL).fit(tr.X, tr.y, qid=tr.qid)
    for tree, bag in zip((b[0] for b in forest.bags_), _bags_by_hand(tr, 5, 4)):
        assert tree.to_dict() == bag.trees_[0].to_dict()


@pytest.mark.parametrize("bin_subsample", [None, 50])
@pytest.mark.parametrize("with_binner", [True, False])
def test_a_bag_bins_as_lambdamart_also_when_it_subsamples(rf_splits, bin_subsample, with_binner):
    from ranklearn.models.random_forest import _Bag
    from ranklearn.tree.binning import SampleBinner

    tr, _, te = rf_splits
    chosen = np.random.default_rng(0).integers(0, tr.n_queries, tr.n_queries)  # queries drawn as the forest does
    rows = np.concatenate([np.arange(tr.ptr[q], tr.ptr[q + 1]) for q in chosen])
    qid = np.repeat(np.arange(chosen.size), np.diff(tr.ptr)[chosen])
    params = dict(n_estimators=2, num_leaves=8, min_samples_leaf=2, bin_subsample=bin_subsample, random_state=1)
    bag = _Bag(**params)
    # without a binner (the forest's bags over bin_subsample rows never make one) it bins its own rows
    bag._binner, bag._rows = (SampleBinner(tr.X, bag.max_bins) if with_binner else None), rows
    bag.fit(tr.X[rows], tr.y[rows], qid=qid)
    alone = LambdaMART(**params).fit(tr.X[rows], tr.y[rows], qid=qid)
    np.testing.assert_array_equal(bag.bin_mapper_.edges_, alone.bin_mapper_.edges_)
    np.testing.assert_array_equal(bag.predict(te.X), alone.predict(te.X))


@pytest.mark.parametrize("bag_subsample", [200_000, 10])
def test_the_forest_sorts_its_data_only_when_a_bag_bins_on_all_its_rows(rf_splits, monkeypatch, bag_subsample):
    """SampleBinner costs a sort of X and twice its memory: made only when a bag can use it."""
    from ranklearn.models import random_forest

    tr, _, te = rf_splits
    made = []
    real_binner, real_bag_model = random_forest.SampleBinner, RandomForest._bag_model

    def binner(*args):
        made.append(args)
        return real_binner(*args)

    def bag_model(self, *args):
        return real_bag_model(self, *args).set_params(bin_subsample=bag_subsample)

    monkeypatch.setattr(random_forest, "SampleBinner", binner)
    monkeypatch.setattr(RandomForest, "_bag_model", bag_model)
    forest = RandomForest(n_estimators=3, random_state=0, **SMALL).fit(tr.X, tr.y, qid=tr.qid)
    assert len(made) == (1 if bag_subsample > tr.X.shape[0] * 2 else 0)
    assert np.isfinite(forest.predict(te.X)).all()


def test_each_bag_gives_its_objective_the_positions_of_its_drawn_queries(monkeypatch):
    import ranklearn.models.lambdamart as lambdamart
    from ranklearn.objectives import CustomObjective

    calls = []

    class Record:
        def gradients(self, scores, y, ptr, *, side=None):
            calls.append((y.copy(), ptr.copy(), side))
            return scores - y, np.ones_like(scores)

    # the bags' objective is a name (squared_error); every bag gets the recorder instead
    monkeypatch.setattr(lambdamart, "get_objective", lambda *a, **k: CustomObjective(Record()))
    rng = np.random.default_rng(1)
    qid = rng.permutation(np.repeat(np.arange(10), 5))
    X, row, position = rng.normal(size=(50, 3)), np.arange(50, dtype=float), rng.integers(1, 9, 50)
    RandomForest(n_estimators=3, num_leaves=3, random_state=0).fit(X, row, qid, position=position)
    assert len(calls) == 3  # one tree a bag
    for y, ptr, side in calls:
        ids = y.astype(int)  # the bag's rows: whole queries, drawn with replacement
        np.testing.assert_array_equal(side["position"], position[ids])
        assert all(len(set(qid[ids[a:b]])) == 1 for a, b in zip(ptr[:-1], ptr[1:]))
    assert any(len(np.unique(y)) < len(y) for y, _, _ in calls)  # a query drawn twice keeps its positions twice


def test_positions_the_forest_ignores_are_one_warning_not_one_per_bag():
    rng = np.random.default_rng(2)
    qid = np.repeat(np.arange(10), 5)
    X, y, position = rng.normal(size=(50, 3)), rng.integers(0, 3, 50).astype(float), rng.integers(1, 9, 50)
    with pytest.warns(UserWarning) as caught:
        RandomForest(n_estimators=3, num_leaves=3, random_state=0).fit(X, y, qid, position=position)
    said = [str(w.message) for w in caught if "ignores position=" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("RandomForest ignores position="), said
