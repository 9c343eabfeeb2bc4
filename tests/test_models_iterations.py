"""What a validated fit keeps (its best iteration, for every ranker, Ctrl-C included) and
scoring with part of a model (``iteration_range``, LightGBM's aliases, ``iterations``)."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.datasets import make_ranking_splits
from ranklearn.metrics import get_metric
from ranklearn.models import get_model_class
from ranklearn.tree.predictor import TreePredictor
from _helpers import NEURAL

SPLITS = make_ranking_splits((40, 15, 15), n_features=6, n_informative=4, docs_per_query=(5, 20), random_state=4)

#: every ranker, with few iterations; its validation metric moves from one iteration to the next
RANKERS = {
    "lambdamart": dict(n_estimators=25, num_leaves=7, learning_rate=0.3, random_state=0, n_jobs=1),
    "mart": dict(n_estimators=25, num_leaves=7, learning_rate=0.3, random_state=0, n_jobs=1),
    "random-forest": dict(n_estimators=6, trees_per_bag=3, random_state=0, n_jobs=1),
    "rankboost": dict(n_estimators=15),
    "adarank": dict(n_estimators=10),
    "coordinate-ascent": dict(n_estimators=3, line_search_steps=3, random_state=0),
    "linear": dict(),
    "ranknet": dict(hidden=(8,), n_estimators=8, learning_rate=3e-2, random_state=0),
    "lambdarank": dict(hidden=(8,), n_estimators=8, learning_rate=3e-2, random_state=0),
    "listnet": dict(hidden=(8,), n_estimators=8, learning_rate=3e-2, random_state=0),
}
NEEDS_TORCH = {"ranknet", "lambdarank", "listnet"}
ADDITIVE = {"lambdamart": "trees_", "mart": "trees_", "random-forest": "bags_", "rankboost": "rankers_"}


def _model(name, **extra):
    if name in NEEDS_TORCH and not NEURAL:
        pytest.skip("torch not installed")
    return get_model_class(name)(**{**RANKERS[name], **extra})


def _valid_metric(model):
    _, va, _ = SPLITS
    return get_metric("ndcg@10").mean(va.y, model.predict(va.X), va.ptr)


@pytest.mark.parametrize("name", RANKERS)
def test_a_validated_fit_keeps_its_best_iteration_and_predicts_with_it(name):
    tr, va, _ = SPLITS
    extra = {} if name == "linear" else {"early_stopping_rounds": None}  # one solve: nothing to stop
    model = _model(name, **extra).fit(tr.X, tr.y, tr.qid, eval_set=[(va.X, va.y, va.qid)])
    # no early stopping: all iterations ran, and the model is still the best one on the validation set
    assert model.best_iteration_ is not None and model.best_iteration_ <= model.n_iter_
    assert model.evals_result_["valid_0"]["ndcg@10"][model.best_iteration_ - 1] == model.best_score_
    assert _valid_metric(model) == pytest.approx(model.best_score_, abs=1e-6)
    if name in ADDITIVE:
        assert len(getattr(model, ADDITIVE[name])) == model.best_iteration_ or name == "rankboost"


def test_lambdamart_finished_and_interrupted_fits_keep_the_same_iteration():
    # the defect: a finished fit kept every tree, an interrupted one the best, both said best_iteration_
    tr, va, _ = SPLITS
    finished = _model("lambdamart").fit(tr.X, tr.y, tr.qid, eval_set=[(va.X, va.y, va.qid)])
    assert finished.best_iteration_ < finished.n_iter_, "the data must give a best before the last tree"
    assert len(finished.trees_) == finished.best_iteration_

    def stop(iteration, total, results):
        if iteration == finished.n_iter_:
            raise KeyboardInterrupt

    interrupted = _model("lambdamart")
    with pytest.raises(KeyboardInterrupt):
        interrupted.fit(tr.X, tr.y, tr.qid, eval_set=[(va.X, va.y, va.qid)], callbacks=[stop])
    assert interrupted.interrupted_ and interrupted.best_iteration_ == finished.best_iteration_
    np.testing.assert_array_equal(interrupted.predict(va.X), finished.predict(va.X))


def test_without_an_evaluation_set_the_last_iteration_is_kept():
    tr, _, _ = SPLITS
    model = _model("lambdamart").fit(tr.X, tr.y, tr.qid)
    assert model.best_iteration_ is None and len(model.trees_) == model.n_iter_ == 25


def test_tree_ranges_score_as_lightgbm_does_with_the_same_trees(tmp_path):
    lightgbm = pytest.importorskip("lightgbm")
    from ranklearn.io.lightgbm import export_lightgbm

    tr, _, te = SPLITS
    model = _model("lambdamart").fit(tr.X, tr.y, tr.qid)
    export_lightgbm(model, tmp_path / "m.txt")
    booster = lightgbm.Booster(model_file=str(tmp_path / "m.txt"))
    for start, n in [(0, 1), (0, 10), (7, 5), (3, 22)]:
        ours = model.predict(te.X, iteration_range=(start, start + n))
        np.testing.assert_allclose(ours, booster.predict(te.X, start_iteration=start, num_iteration=n), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(ours, model.predict(te.X, start_iteration=start, num_iteration=n))  # LightGBM's names
    full = model.predict(te.X)
    for same in [dict(iteration_range=(0, 0)), dict(iteration_range=(0, 25)), dict(num_iteration=0), dict(num_iteration=-1)]:
        np.testing.assert_array_equal(model.predict(te.X, **same), full)
    # a part is a model: it saves, loads and scores the same
    part = model.iterations(3, 12)
    assert part.n_iter_ == 9 and part.best_iteration_ is None and part.evals_result_ == {} and model.n_iter_ == 25
    part.save(tmp_path / "part.json")
    np.testing.assert_array_equal(type(model).load(tmp_path / "part.json").predict(te.X), model.predict(te.X, iteration_range=(3, 12)))


def test_forest_ranges_are_the_mean_over_the_range_bags():
    tr, _, te = SPLITS
    forest = _model("random-forest").fit(tr.X, tr.y, tr.qid)
    for start, end in [(0, 1), (2, 5), (0, 6)]:
        bags = forest.bags_[start:end]
        expected = sum(TreePredictor(bag).predict(te.X.astype(np.float32)) for bag in bags) / len(bags)
        np.testing.assert_allclose(forest.predict(te.X, iteration_range=(start, end)), expected, rtol=1e-12, atol=1e-12)


def test_rankboost_ranges_sum_the_range_weak_rankers():
    tr, _, te = SPLITS
    model = _model("rankboost").fit(tr.X, tr.y, tr.qid)
    start, end = 4, 11
    expected = sum(alpha * (te.X[:, f] > theta) for f, theta, alpha in model.rankers_[start:end])
    np.testing.assert_allclose(model.predict(te.X, iteration_range=(start, end)), expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["adarank", "coordinate-ascent", "linear", "ranknet"])
def test_rankers_of_one_weight_set_refuse_a_part_and_take_the_whole(name):
    tr, _, te = SPLITS
    model = _model(name).fit(tr.X, tr.y, tr.qid)
    kept = model.n_iter_
    np.testing.assert_array_equal(model.predict(te.X, iteration_range=(0, kept)), model.predict(te.X))
    if kept > 1:
        with pytest.raises(ValueError, match=rf"cannot score part of its \w+s \(0, 1\).*the whole model, \(0, {kept}\)"):
            model.predict(te.X, iteration_range=(0, 1))


@pytest.mark.parametrize(
    "kwargs, words",
    [(dict(iteration_range=(0, 26)), "iteration_range=(0, 26) is not a range of this model's 25 trees"),
     (dict(iteration_range=(5, 5)), "need 0 <= start < end <= 25"),
     (dict(iteration_range=(-1, 3)), "need 0 <= start < end"),
     (dict(iteration_range=(0.5, 3)), "iteration_range must be two whole numbers"),
     (dict(iteration_range=5), "iteration_range must be two whole numbers"),
     (dict(iteration_range=(0, 3), num_iteration=3), "not both"),
     (dict(num_iteration=20, start_iteration=10), "range=(10, 30) is not a range"),
     (dict(start_iteration=-2), "start_iteration must be a whole number >= 0"),
     (dict(num_iteration=2.5), "num_iteration must be a whole number")],
)  # fmt: skip
def test_bad_ranges_are_refused_by_name(kwargs, words):
    tr, _, te = SPLITS
    model = _model("lambdamart").fit(tr.X, tr.y, tr.qid)
    with pytest.raises(ValueError) as info:
        model.predict(te.X, **kwargs)
    assert words in str(info.value)
