"""One boosting step on one process's rows, the same for every engine.

:class:`BoostingState` holds what a gradient-boosted tree ensemble keeps between iterations
for the rows of this process (binned features, labels, query boundaries, sample weights,
per-row side data, training and evaluation scores) and runs one iteration on them
(:meth:`BoostingState.step`): gradients from the objective (weighted), the bagged rows and the
feature subset, growth on a :class:`~ranklearn.tree.histogram_builder.HistogramBuilder`, the
leaf update of the training scores and the evaluation scores. LambdaMART, MART and Random
Forests' bags run it on the rows of one process; the Dask peers (and any other engine) run it
on their local rows with a communicator, so that the builder is an
:class:`~ranklearn.tree.allreduce_builder.AllreduceHistogramBuilder` and every process grows
the same tree. The engine keeps placement, transport and faults; what is drawn at random
(:func:`draw_subsets`) is drawn once, where all the queries are known, and handed to every
process.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numba import njit

from ranklearn.tree.allreduce_builder import AllreduceHistogramBuilder, Comm
from ranklearn.tree.binning import N_HIST_BINS
from ranklearn.tree.grower import TreeGrower
from ranklearn.tree.predictor import add_tree_binned
from ranklearn.tree.tree import Tree

__all__ = ["BoostingState", "draw_subsets"]


@njit(cache=True)
def _add_leaf_values(scores, samples, leaf_ranges, values):
    for r in range(leaf_ranges.shape[0]):
        v = values[leaf_ranges[r, 0]]
        for p in range(leaf_ranges[r, 1], leaf_ranges[r, 2]):
            scores[samples[p]] += v


def draw_subsets(
    rng: np.random.RandomState, n_queries: int, n_features: int, bagging_fraction: float, feature_fraction: float
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """One tree's bagged queries (without replacement) and features, sorted (None: all).

    Drawn from ``rng`` in a fixed order (queries, then features), by the one process that
    knows every query: a distributed engine splits the queries among its processes
    (each gets its own, numbered locally) and gives every process the same features.
    """
    chosen = None
    n_bag = max(1, int(round(bagging_fraction * n_queries)))
    if n_bag < n_queries:
        chosen = np.sort(rng.choice(n_queries, size=n_bag, replace=False))
    features = None
    n_use_feat = max(1, int(round(feature_fraction * n_features)))
    if n_use_feat < n_features:
        features = np.sort(rng.choice(n_features, size=n_use_feat, replace=False))
    return chosen, features


class BoostingState:
    """The rows of one process in a boosted fit, and one boosting iteration on them.

    Parameters
    ----------
    binned : uint8 (n_features, n_samples)
        This process's training rows, binned feature-major (whole queries; may have no rows
        on a distributed process).
    n_bins : int64 (n_features,)
        Value bins of each feature (the fit's :class:`~ranklearn.tree.binning.BinMapper`).
    y : float64 (n_samples,)
        Labels, grouped by query.
    ptr : int64 (n_queries + 1,)
        Query boundaries of these rows.
    objective : Objective
        Gives ``gradients(scores, y, ptr, grad, hess, side=side)`` (prepared by the caller),
        then, when it has one, ``bias_statistics(grad, hess, weight)``: a vector (summed over the processes when ``comm``
        is given) passed to ``update_bias``, or None.
    weight : float64 (n_samples,), optional
        Sample weights: multiply every gradient and hessian, times the objective's
        ``row_weights(y, ptr)`` when it has them (a per-query normalization, on whole queries).
    side : mapping of str to arrays (n_samples,), optional
        Per-row side data for the objective (``{"position": int64}``), aligned with the rows.
    binned_rows : uint8 (n_samples, n_features), optional
        ``binned`` row-major, for small nodes' histograms (made here when None).
    evals : sequence of uint8 (n_features, m)
        Binned evaluation rows of this process; their scores are :attr:`eval_scores`.
    learning_rate : float
        Shrinkage of every tree's leaf values.
    limits : mapping
        The :class:`~ranklearn.tree.grower.TreeGrower` growth limits (``num_leaves``,
        ``max_depth``, ``min_samples_leaf``, ``min_sum_hessian``, ``l2_regularization``,
        ``min_gain_to_split``, ``leaf_order``).
    comm : optional
        None: the rows are all the training rows (a :class:`HistogramBuilder`, growth in one
        compiled call). Otherwise a communicator with ``allreduce(float64 vector)``
        (:class:`ranklearn.collective.StarComm`): the sums run over every process's rows
        (:class:`AllreduceHistogramBuilder`); every process must call :meth:`step` with
        the same features, each with its own chosen queries.

    Attributes
    ----------
    scores : float64 (n_samples,)
        Training scores (the sum of the shrunk trees so far).
    eval_scores : list of float64 (m,)
        Scores of each of ``evals``.
    grad, hess : float64 (n_samples,)
        The last iteration's weighted gradients and hessians.
    """

    def __init__(
        self,
        binned: np.ndarray,
        n_bins: np.ndarray,
        y: np.ndarray,
        ptr: np.ndarray,
        objective: Any,
        *,
        weight: np.ndarray | None = None,
        side: Mapping[str, np.ndarray] | None = None,
        binned_rows: np.ndarray | None = None,
        evals: Sequence[np.ndarray] = (),
        learning_rate: float = 0.1,
        limits: Mapping[str, Any] | None = None,
        comm: Comm | None = None,
    ) -> None:
        n = binned.shape[1]
        self.binned, self.n_bins, self.y, self.ptr = binned, n_bins, y, ptr
        row_weights = getattr(objective, "row_weights", None)  # an Objective's; duck-typed ones have none
        scale = None if row_weights is None else row_weights(y, ptr)
        if scale is not None:
            weight = scale if weight is None else weight * scale
        self.objective, self.weight, self.side = objective, weight, side
        # small nodes' histograms read the rows row-major (n x F bytes more for the fit)
        self.binned_rows = np.ascontiguousarray(binned.T) if binned_rows is None else binned_rows
        self.evals = list(evals)
        self.learning_rate = learning_rate
        self.limits = dict(limits or {})
        self.comm = comm
        self.scores, self.grad, self.hess = np.zeros(n), np.empty(n), np.empty(n)
        self.eval_scores = [np.zeros(e.shape[1]) for e in self.evals]
        # every tree's node histograms, in memory reused from tree to tree (untouched pages cost nothing)
        num_leaves = self.limits.get("num_leaves", 31)
        self._histograms = np.empty((num_leaves, binned.shape[0], N_HIST_BINS, 3))

    def step(self, chosen: np.ndarray | None = None, features: np.ndarray | None = None) -> Tree:
        """One boosting iteration: gradients, a tree on the ``chosen`` queries (sorted local
        query numbers; None: all) and ``features`` (sorted; None: all), the training and
        evaluation scores moved by it.

        Returns
        -------
        Tree
            The tree with leaf values shrunk by ``learning_rate`` (bin thresholds only: the
            caller, who holds the bin mapper, sets the raw thresholds).
        """
        binned, ptr = self.binned, self.ptr
        self.objective.gradients(self.scores, self.y, ptr, self.grad, self.hess, side=self.side)
        if self.weight is not None:
            self.grad *= self.weight
            self.hess *= self.weight
        bias_statistics = getattr(self.objective, "bias_statistics", None)  # an Objective's; duck-typed ones have none
        stats = None if bias_statistics is None else bias_statistics(self.grad, self.hess, self.weight)
        if stats is not None:  # a position bias: sums over every process's rows
            if self.comm is not None:
                stats = self.comm.allreduce(np.ascontiguousarray(stats, dtype=np.float64))
            self.objective.update_bias(stats)
        samples = None
        if chosen is not None:
            samples = np.concatenate([np.arange(ptr[q], ptr[q + 1]) for q in chosen] or [np.empty(0, np.int64)])
        if self.comm is None:
            grower = TreeGrower(
                binned, self.n_bins, self.grad, self.hess, samples=samples, features=features,
                binned_rows=self.binned_rows, histograms=self._histograms, **self.limits,
            )  # fmt: skip
        else:
            builder = AllreduceHistogramBuilder(
                self.comm, binned, self.n_bins, self.grad, self.hess, samples=samples, features=features,
                binned_rows=self.binned_rows, pool=self._histograms,
            )  # fmt: skip
            grower = TreeGrower.from_builder(builder, self.n_bins, **self.limits)
        tree, leaf_samples, leaf_ranges = grower.grow()
        tree = dataclasses.replace(tree, value=tree.value * self.learning_rate)
        if samples is None:
            _add_leaf_values(self.scores, leaf_samples, leaf_ranges, tree.value)
        else:
            add_tree_binned(tree, binned, self.scores)
        for eval_binned, eval_scores in zip(self.evals, self.eval_scores):
            add_tree_binned(tree, eval_binned, eval_scores)
        return tree
