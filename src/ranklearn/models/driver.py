"""The training driver every iterative ranker runs through.

It owns what all of them share: the metric on every evaluation set after each iteration
(a tree, an epoch, a boosting round), early stopping with patience on one named set,
rollback to the best iteration, Ctrl-C rollback, callbacks, the progress bar and the
fitted attributes ``evals_result_``, ``best_iteration_``, ``best_score_``, ``n_iter_`` and
``interrupted_``. A model supplies the hooks of :class:`Trainable` and nothing of the loop.

Rules
-----
* Iterations count from 1; ``best_iteration_`` is the number of iterations of the best
  model (``evals_result_[watch][metric][best_iteration_ - 1]`` is its score).
* The watched set is the last evaluation set unless one is named (XGBoost's rule).
* With a watched set the model is rolled back to its best iteration at the end, with or
  without early stopping (which only decides when to stop), so ``best_iteration_`` is what
  ``predict`` uses. Without one the last iteration is kept.
* A model that sets ``_forget_best = True`` in ``_fit_step`` (AdaRank undoing a round, as
  RankLib does) makes the driver forget the best so far: the next iteration becomes it.
* Ctrl-C keeps the best model so far (the last completed iteration without evaluation
  sets), sets ``interrupted_`` and re-raises. Interrupted before the first iteration
  finished, the model is left unfitted: there is nothing to keep.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ranklearn.models.checks import in_context

Callback = Callable[[int, int, dict[str, dict[str, float]]], Any]


class Trainable(Protocol):
    """The hooks a model gives the driver."""

    def _fit_step(self, iteration: int) -> None:
        """Run iteration ``iteration`` (1-based): grow a tree, train an epoch..."""

    def _eval_scores(self, index: int) -> np.ndarray:
        """Current scores of evaluation set ``index`` (as prepared by the model)."""

    def _snapshot(self) -> Any:
        """Whatever :meth:`_restore` needs to return to the current model."""

    def _restore(self, snapshot: Any) -> None:
        """Return to a model saved by :meth:`_snapshot`."""


@dataclass
class EvalData:
    """An evaluation set: its name, labels and query boundaries (the rows live in the model)."""

    name: str
    y: np.ndarray
    ptr: np.ndarray


@dataclass
class Outcome:
    """What a run did: the fitted attributes and how it ended."""

    evals_result: dict[str, dict[str, list[float]]]
    best_iteration: int | None
    best_score: float | None
    n_iter: int
    interrupted: bool
    message: str


def run_training(
    model: Trainable,
    *,
    total: int,
    evals: Sequence[EvalData],
    metric: Any,
    early_stopping_rounds: int | None,
    watch: int | None,
    callbacks: Sequence[Callback] = (),
    unit: str = "iteration",
) -> Outcome:
    """Run up to ``total`` iterations of ``model`` and return the :class:`Outcome`.

    Parameters
    ----------
    model : Trainable
    total : int
        Iterations at most.
    evals : list of EvalData
        Scored with ``metric`` after every iteration, in this order.
    metric : ranklearn.metrics.Metric
    early_stopping_rounds : int or None
        Stop after this many iterations without a gain on the watched set, and roll back.
    watch : int or None
        Index of the watched evaluation set (None: no evaluation sets).
    callbacks : list of callables
        Called as ``cb(iteration, total, {set: {metric: value}})`` after every iteration; a
        callback with an ``end(message)`` method is also told how the run ended.
    unit : str
        What an iteration is called in the end message ("tree", "epoch").

    The outcome is also the model's state when ``KeyboardInterrupt`` propagates: the caller
    sets the fitted attributes from ``exc.outcome`` (see :class:`Interrupted`).
    """
    name = metric.name
    history: dict[str, dict[str, list[float]]] = {e.name: {name: []} for e in evals}
    best_value = -math.inf
    best_iter: int | None = None
    snapshot: Any = None  # the model to return to: the best so far, or the last iteration
    n_iter = 0
    stopped_early = False
    watched = evals[watch].name if watch is not None else None
    scorers = []
    for e in evals:  # labels and queries checked once, not per iteration
        try:
            scorers.append(metric.scorer(e.y, e.ptr))
        except ValueError as exc:  # labels the metric cannot take: say which set
            raise in_context(exc, f"evaluation set {e.name!r}") from None
    if watched is not None and math.isnan(scorers[watch](np.zeros(evals[watch].y.shape[0]))):
        # NaN whatever the scores: no iteration would ever beat another, and the first would be kept
        if early_stopping_rounds is not None:
            raise ValueError(
                f"{name} scores none of the queries of the evaluation set {watched!r} (empty='skip' leaves out "
                f"queries without a relevant document): there is nothing to choose the best {unit} on"
            )
        watched = None  # only recorded: the last iteration is kept, as without evaluation sets (Ctrl-C too)
    try:
        for it in range(1, total + 1):
            model._fit_step(it)
            n_iter = it
            if getattr(model, "_forget_best", False):  # the step undid rounds the best was built on
                model._forget_best = False
                best_value, best_iter = -math.inf, None
            results = {}
            for i, e in enumerate(evals):
                value = scorers[i](model._eval_scores(i))
                history[e.name][name].append(value)
                results[e.name] = {name: value}
            if watched is None:
                snapshot = model._snapshot()
            elif results[watched][name] > best_value or best_iter is None:
                best_value, best_iter = results[watched][name], it
                snapshot = model._snapshot()
            for cb in callbacks:
                cb(it, total, results)
            if early_stopping_rounds is not None and best_iter is not None and it - best_iter >= early_stopping_rounds:
                stopped_early = True
                break
    except (KeyboardInterrupt, SystemError) as caught:
        exc = _interruption(caught)
        if exc is None:
            raise
        if snapshot is not None:
            model._restore(snapshot)
        kept = best_iter if watched is not None else (n_iter or None)
        message = f"interrupted after {n_iter} {unit}s; " + (
            f"kept {unit} {kept}" + _best_text(watched, name, best_value, best_iter) if kept else "nothing to keep"
        )
        exc.outcome = Outcome(history, best_iter, _score(best_value, best_iter), n_iter, True, message)  # type: ignore[attr-defined]
        if n_iter:  # before the first iteration the caller says that nothing was trained
            _tell_end(callbacks, message)
        if exc is caught:
            raise
        raise exc from None
    if watched is not None and best_iter is not None and best_iter < n_iter:  # one rule: the best is kept
        model._restore(snapshot)
    kept = best_iter if (watched is not None and best_iter is not None) else n_iter
    if stopped_early:
        how = f"stopped early after {n_iter} {unit}s ({early_stopping_rounds} without a gain on {watched!r})"
    else:
        how = f"ran all {n_iter} {unit}s" if n_iter != 1 else f"ran its one {unit}"  # linear: one solve
    message = f"{how}; kept {unit} {kept}" + _best_text(watched, name, best_value, best_iter)
    _tell_end(callbacks, message)
    return Outcome(history, best_iter, _score(best_value, best_iter), n_iter, False, message)


def _interruption(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C behind ``exc``, if any.

    A compiled kernel that returns arrays calls back into Python to box them; a Ctrl-C pending
    then raises ``KeyboardInterrupt`` inside that call, and CPython reports the kernel as a
    ``SystemError`` ("returned a result with an exception set") caused by it.
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return seen
        seen = seen.__cause__
    return None


def _score(value: float, best_iter: int | None) -> float | None:
    return None if best_iter is None else value


def _best_text(watched: str | None, metric: str, value: float, best_iter: int | None) -> str:
    if watched is None or best_iter is None:
        return ""
    return f" (best: {watched} {metric}={value:.4f} at {best_iter})"


def _tell_end(callbacks: Sequence[Callback], message: str) -> None:
    for cb in callbacks:
        end = getattr(cb, "end", None)
        if callable(end):
            end(message)
