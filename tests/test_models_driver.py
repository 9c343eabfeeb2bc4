"""The training driver, with a scripted model: early stopping, rollback, Ctrl-C, callbacks, the end message."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.metrics import get_metric
from ranklearn.models.driver import EvalData, run_training

# one query of 3 documents; labels 2, 1, 0: a score vector's NDCG depends only on its order
Y = np.array([2.0, 1.0, 0.0])
PTR = np.array([0, 3])
GOOD, BAD = np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])


class Scripted:
    """A "model" whose state is the iteration it reached; its eval scores follow a script."""

    def __init__(self, script, interrupt_at=None):
        self.script, self.interrupt_at, self.state, self.restored = script, interrupt_at, 0, []

    def _fit_step(self, iteration):
        if iteration == self.interrupt_at:
            raise KeyboardInterrupt
        self.state = iteration

    def _eval_scores(self, index):
        return GOOD if self.script[self.state - 1] else BAD

    def _snapshot(self):
        return self.state

    def _restore(self, snapshot):
        self.restored.append(snapshot)
        self.state = snapshot


def train(model, total=6, rounds=None, evals=1, callbacks=()):
    sets = [EvalData(f"s{i}", Y, PTR) for i in range(evals)]
    return run_training(model, total=total, evals=sets, metric=get_metric("ndcg"), early_stopping_rounds=rounds,
                        watch=len(sets) - 1 if sets else None, callbacks=callbacks, unit="tree")  # fmt: skip


def test_early_stopping_rolls_back_to_the_best_iteration():
    model = Scripted([0, 1, 0, 0, 0, 1])
    out = train(model, rounds=3)
    assert out.n_iter == 5 and out.best_iteration == 2 and out.best_score == 1.0
    assert model.state == 2 and model.restored == [2]
    assert out.evals_result["s0"]["ndcg"] == pytest.approx([0.6, 1.0, 0.6, 0.6, 0.6], abs=0.1)
    assert out.message.startswith("stopped early after 5 trees (3 without a gain on 's0'); kept tree 2")


def test_without_early_stopping_the_best_iteration_is_kept_too():
    # one rule: a watched set chooses the model whether or not early stopping ran (and on Ctrl-C)
    model = Scripted([0, 1, 0, 0, 0, 0])
    out = train(model)
    assert out.n_iter == 6 and out.best_iteration == 2 and model.state == 2 and model.restored == [2]
    assert out.message.startswith("ran all 6 trees; kept tree 2 (best: s0 ndcg=1.0000 at 2)")


def test_ctrl_c_keeps_the_best_so_far_and_reports_it():
    ends = []

    class Progress:
        def __call__(self, iteration, total, results):
            pass

        def end(self, message):
            ends.append(message)

    model = Scripted([0, 1, 0, 0], interrupt_at=4)
    with pytest.raises(KeyboardInterrupt) as info:
        train(model, callbacks=[Progress()])
    out = info.value.outcome
    assert out.interrupted and out.n_iter == 3 and out.best_iteration == 2 and model.state == 2
    assert ends == [out.message] and out.message.startswith("interrupted after 3 trees; kept tree 2")


class InterruptedInKernel(Scripted):
    """Ctrl-C while a compiled kernel boxes its result: CPython's SystemError caused by it."""

    def _fit_step(self, iteration):
        if iteration == self.interrupt_at:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as inner:
                raise SystemError("<function _numba_unpickle> returned a result with an exception set") from inner
        self.state = iteration


def test_ctrl_c_inside_a_compiled_kernel_is_a_ctrl_c():
    model = InterruptedInKernel([0, 1, 0, 0], interrupt_at=4)
    with pytest.raises(KeyboardInterrupt) as info:
        train(model)
    assert info.value.outcome.n_iter == 3 and model.state == 2


def test_another_system_error_is_not_taken_for_a_ctrl_c():
    class Broken(Scripted):
        def _fit_step(self, iteration):
            raise SystemError("a real defect")

    with pytest.raises(SystemError, match="a real defect"):
        train(Broken([1] * 6))


def test_ctrl_c_without_eval_sets_keeps_the_last_iteration_and_before_the_first_nothing():
    model = Scripted([1] * 6, interrupt_at=3)
    with pytest.raises(KeyboardInterrupt) as info:
        train(model, evals=0)
    assert model.state == 2 and info.value.outcome.n_iter == 2
    ends = []
    model = Scripted([1] * 6, interrupt_at=1)
    with pytest.raises(KeyboardInterrupt) as info:
        train(model, evals=0, callbacks=[type("P", (), {"__call__": lambda *a: None, "end": lambda s, m: ends.append(m)})()])
    assert info.value.outcome.n_iter == 0 and model.restored == [] and ends == []  # nothing to keep or report


def test_callbacks_see_every_iteration_and_every_set():
    seen = []
    train(Scripted([1, 0, 1]), total=3, evals=2, callbacks=[lambda it, total, res: seen.append((it, total, sorted(res)))])
    assert seen == [(1, 3, ["s0", "s1"]), (2, 3, ["s0", "s1"]), (3, 3, ["s0", "s1"])]


def test_a_watched_set_the_metric_scores_no_query_of_is_refused():
    # empty="skip" and no relevant document: NaN after every tree, and the first tree was kept silently
    none_relevant = EvalData("vali", np.zeros(3), PTR)
    model = Scripted([1] * 6)
    with pytest.raises(ValueError, match="ndcg scores none of the queries of the evaluation set 'vali'"):
        run_training(model, total=6, evals=[none_relevant], metric=get_metric("ndcg", empty="skip"),
                     early_stopping_rounds=2, watch=0, callbacks=(), unit="tree")  # fmt: skip
    assert model.state == 0  # refused before the first tree
    watched_only = run_training(model, total=2, evals=[none_relevant], metric=get_metric("ndcg", empty="skip"),
                                early_stopping_rounds=None, watch=0, callbacks=(), unit="tree")  # fmt: skip
    assert model.state == 2 and np.isnan(watched_only.evals_result["vali"]["ndcg"]).all()  # only watched: trained
    assert watched_only.best_iteration is None and watched_only.message.startswith("ran all 2 trees; kept tree 2")
    stopped = Scripted([1] * 6, interrupt_at=4)  # Ctrl-C keeps the last tree, not a NaN "best" at 1
    with pytest.raises(KeyboardInterrupt) as info:
        run_training(stopped, total=6, evals=[none_relevant], metric=get_metric("ndcg", empty="skip"),
                     early_stopping_rounds=None, watch=0, callbacks=(), unit="tree")  # fmt: skip
    assert stopped.state == 3 and stopped.restored == [3] and info.value.outcome.best_iteration is None
    out = run_training(model, total=2, evals=[none_relevant], metric=get_metric("ndcg"), early_stopping_rounds=2,
                       watch=0, callbacks=(), unit="tree")  # fmt: skip
    assert out.evals_result["vali"]["ndcg"] == [0.0, 0.0]  # empty="zero": a value, if an uninformative one
