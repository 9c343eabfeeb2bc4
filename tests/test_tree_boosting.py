"""The one boosting step (BoostingState): gradients with side data and weights, bagged rows and
features, the tree, the training and evaluation scores; the same step over a communicator."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.objectives import get_objective
from ranklearn.tree.binning import BinMapper
from ranklearn.tree.boosting import BoostingState, draw_subsets
from ranklearn.tree.grower import TreeGrower
from ranklearn.tree.predictor import add_tree_binned

LIMITS = dict(num_leaves=6, min_samples_leaf=3)


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    sizes = rng.integers(4, 12, 30)
    ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n = int(ptr[-1])
    X = rng.normal(size=(n, 5)).astype(np.float32)
    y = np.clip(np.round(X[:, 0] + rng.normal(scale=0.5, size=n)), 0, 3)
    mapper = BinMapper(32, None).fit(X)
    X_eval = rng.normal(size=(40, 5)).astype(np.float32)
    return mapper, mapper.transform(X), y, ptr, mapper.transform(X_eval)


class Recorder:
    """Squared error that records the side data of every call (a class list: models copy objectives)."""

    calls: list = []

    def gradients(self, scores, y, ptr, grad, hess, *, side=None):
        Recorder.calls.append(side)
        np.subtract(scores, y, out=grad)
        hess[:] = 1.0
        return grad, hess


def test_scores_are_the_sum_of_the_shrunk_trees_on_training_and_evaluation_rows(rows):
    mapper, binned, y, ptr, eval_binned = rows
    state = BoostingState(binned, mapper.n_bins_, y, ptr, get_objective("lambdarank"), evals=[eval_binned],
                          learning_rate=0.3, limits=LIMITS)  # fmt: skip
    train, evals, trees = np.zeros(len(y)), np.zeros(eval_binned.shape[1]), []
    for _ in range(3):
        trees.append(state.step())
        add_tree_binned(trees[-1], binned, train)
        add_tree_binned(trees[-1], eval_binned, evals)
    np.testing.assert_allclose(state.scores, train, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(state.eval_scores[0], evals)
    # the first tree is the grower's on the objective's gradients, its values shrunk
    grad, hess = get_objective("lambdarank").gradients(np.zeros(len(y)), y, ptr)
    ref, _, _ = TreeGrower(binned, mapper.n_bins_, grad, hess, **LIMITS).grow()
    np.testing.assert_array_equal(trees[0].feature, ref.feature)
    np.testing.assert_array_equal(trees[0].value, ref.value * 0.3)


def test_weights_side_data_bagged_queries_and_features(rows):
    mapper, binned, y, ptr, _ = rows
    weight = np.linspace(0.5, 2.0, len(y))
    side = {"position": np.arange(1, len(y) + 1, dtype=np.int64)}
    Recorder.calls.clear()
    state = BoostingState(binned, mapper.n_bins_, y, ptr, Recorder(), weight=weight, side=side, limits=LIMITS)
    chosen, features = np.array([1, 4, 7, 20]), np.array([0, 2])
    tree = state.step(chosen, features)
    assert Recorder.calls == [side]
    np.testing.assert_array_equal(state.grad, (0.0 - y) * weight)
    np.testing.assert_array_equal(state.hess, weight)
    rows_in = np.concatenate([np.arange(ptr[q], ptr[q + 1]) for q in chosen])
    assert tree.count[0] == len(rows_in)  # the root holds the chosen queries' rows
    assert set(tree.feature[tree.feature >= 0]) <= {0, 2}
    moved = np.zeros(len(y))
    add_tree_binned(tree, binned, moved)
    np.testing.assert_array_equal(state.scores, moved)  # every row is scored, chosen or not


def test_over_a_communicator_the_same_tree(rows):
    mapper, binned, y, ptr, eval_binned = rows

    class Alone:  # the sum over one process
        rank = 0

        def allreduce(self, values):
            return values

    states = [
        BoostingState(binned, mapper.n_bins_, y, ptr, get_objective("ranknet"), evals=[eval_binned], limits=LIMITS,
                      comm=comm)  # fmt: skip
        for comm in (None, Alone())
    ]
    for _ in range(2):
        local, shared = (s.step(np.arange(0, 30, 2), np.array([0, 1, 3])) for s in states)
        for name in ("feature", "bin_threshold", "left", "right", "count"):
            np.testing.assert_array_equal(getattr(local, name), getattr(shared, name))
        np.testing.assert_allclose(local.value, shared.value, rtol=1e-12)
    np.testing.assert_allclose(states[0].eval_scores[0], states[1].eval_scores[0], rtol=1e-12)


def test_draw_subsets():
    rng = np.random.RandomState(0)
    assert draw_subsets(rng, 10, 4, 1.0, 1.0) == (None, None)
    chosen, features = draw_subsets(np.random.RandomState(1), 10, 4, 0.5, 0.5)
    assert len(chosen) == 5 and len(set(chosen)) == 5 and np.all(np.diff(chosen) > 0)
    assert len(features) == 2 and np.all(np.diff(features) > 0)
    # queries first, then features, from the same stream
    again = np.random.RandomState(1)
    np.testing.assert_array_equal(np.sort(again.choice(10, 5, replace=False)), chosen)
