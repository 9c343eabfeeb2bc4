"""Random Forests for ranking: bags of boosted trees over resampled queries (RankLib's ``-ranker 8``).

Breiman, "Random Forests", Machine Learning 45 (2001), as RankLib's RFRanker applies it to
ranking: each bag draws ``subsample`` x (number of queries) queries *with* replacement,
trains a small boosted ensemble of ``trees_per_bag`` trees on them, each tree on a
``feature_fraction`` of the features drawn *without* replacement (RankLib's default: MART, one
tree of 100 leaves, at least one document a leaf: the features are then drawn per bag), and
the forest's score is the mean of the bags' scores. One bag is one iteration of the training
driver, so evaluation sets are scored after every bag.

Every tree keeps raw float32 thresholds, so the bags' trees (each bag binned on its own
sample) are packed into one predictor with their leaf values divided by the number of bags.

Speed: the training values are sorted once per forest (:class:`~ranklearn.tree.binning.SampleBinner`);
a bag's bins are then counted from how often it holds each row, O(n) a feature instead of a
sort, with the very edges a bag binned alone gets, so the trees are the same. Bags run on one
thread when the data is small (as LambdaMART does), since a bag starts hundreds of short
parallel loops.
"""

from __future__ import annotations

import copy
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ranklearn.data.groups import take_queries
from ranklearn.metrics import Metric
from ranklearn.models.base import EARLY_STOPPING, N_JOBS, BaseRanker, EvalSet, FitData
from ranklearn.models.contributions import TreeContributions
from ranklearn.models.lambdamart import LambdaMART, TreeImportance
from ranklearn.models.serving import forest_predictor, trees_from_payload
from ranklearn.tree.binning import SampleBinner
from ranklearn.tree.grower import LEAF_ORDERS
from ranklearn.tree.tree import Tree

__all__ = ["RandomForest"]


class RandomForest(TreeContributions, TreeImportance, BaseRanker):
    """Random Forests: the mean of bags of boosted trees, each on resampled queries and features.

    Parameters
    ----------
    n_estimators : int, default=300
        Bags (RankLib's ``-bag``); each is one iteration.
    subsample : float, default=1.0
        Queries drawn per bag, with replacement, as a fraction of the training queries
        (RankLib's ``-srate``).
    feature_fraction : float, default=0.3
        Features each tree may split on, drawn per tree without replacement, as LambdaMART's
        (with one tree a bag, the default, per bag as RankLib's ``-frate``).
    objective : {"squared_error", "lambdarank"}, default="squared_error"
        What each bag's trees fit: MART (RankLib's default ``-rtype 0``) or LambdaMART (``6``).
    trees_per_bag : int, default=1
        Trees of each bag's boosted ensemble (RankLib's ``-tree`` of ``-ranker 8``).
    num_leaves : int, default=100
        Leaves per tree (``-leaf``).
    learning_rate : float, default=0.1
        Shrinkage of each bag's trees (``-shrinkage``).
    min_samples_leaf : int, default=1
        Documents per leaf at least (``-mls``).
    leaf_order : {"gain", "deviance"}, default="gain"
        Which leaf of a tree is split next (see :class:`~ranklearn.models.lambdamart.LambdaMART`;
        RankLib's order is "deviance").
    max_bins : int, default=255
        Histogram bins per feature (RankLib's ``-tc 256`` threshold candidates).
    metric : str or Metric, default="ndcg@10"
        Scored on the evaluation sets after every bag, and used by ``score``.
    early_stopping_rounds : int, "auto" or None, default=None
        Stop when the watched set has not improved for this many bags (an int needs an
        ``eval_set``); "auto": max(20, n_estimators // 10) with an ``eval_set``, none without;
        None: every bag (as RankLib). With an evaluation set the forest keeps its best number
        of bags either way.
    n_jobs : int or None
    random_state : int or None
    verbose : int

    Attributes
    ----------
    bags_ : list of list of Tree
        Each bag's trees (leaf values as the bag's ensemble has them).
    trained_with_missing_ : bool
        Whether a bag saw missing values (NaN), so that splits learned where they go (the
        exports to engines without a missing-value branch check it).
    feature_importances_ : ndarray (n_features,)
        Total split gain of every feature over all bags, normalized; ``feature_importance()``
        gives the totals (``kind="gain"`` or ``"split"``), as LambdaMART's.
    n_features_in_, feature_names_in_, evals_result_, best_iteration_, best_score_, n_iter_, interrupted_, max_grade_
        See :class:`ranklearn.models.base.BaseRanker` (iterations are bags).
    """

    _model_name = "random-forest"
    _vocabulary_since = 2  # payload 2: n_estimators = bags, trees_per_bag (were n_bags, n_estimators)
    _display_name = "RandomForest"
    iteration_unit = "bag"
    _allow_nan = True
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "subsample": [Interval(Real, 0, np.inf, closed="neither")],
        "feature_fraction": [Interval(Real, 0, 1, closed="right")],
        "objective": [StrOptions({"squared_error", "lambdarank"})],
        "trees_per_bag": [Interval(Integral, 1, None, closed="left")],
        "num_leaves": [Interval(Integral, 2, None, closed="left")],
        "learning_rate": [Interval(Real, 0, np.inf, closed="neither")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "leaf_order": [StrOptions(set(LEAF_ORDERS))],
        "max_bins": [Interval(Integral, 2, 255, closed="both")],
        "metric": [str, Metric],
        "early_stopping_rounds": EARLY_STOPPING,
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_estimators: int = 300,
        subsample: float = 1.0,
        feature_fraction: float = 0.3,
        objective: str = "squared_error",
        trees_per_bag: int = 1,
        num_leaves: int = 100,
        learning_rate: float = 0.1,
        min_samples_leaf: int = 1,
        leaf_order: str = "gain",
        max_bins: int = 255,
        metric: str | Metric = "ndcg@10",
        early_stopping_rounds: int | str | None = None,
        n_jobs: int | None = None,
        random_state: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.feature_fraction = feature_fraction
        self.objective = objective
        self.trees_per_bag = trees_per_bag
        self.num_leaves = num_leaves
        self.learning_rate = learning_rate
        self.min_samples_leaf = min_samples_leaf
        self.leaf_order = leaf_order
        self.max_bins = max_bins
        self.metric = metric
        self.early_stopping_rounds = early_stopping_rounds
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ hooks of BaseRanker
    def _bag_model(self, seed: int, n_jobs: int | None = None) -> LambdaMART:
        return _Bag(
            n_estimators=self.trees_per_bag, num_leaves=self.num_leaves, learning_rate=self.learning_rate,
            min_samples_leaf=self.min_samples_leaf, leaf_order=self.leaf_order, max_bins=self.max_bins,
            feature_fraction=self.feature_fraction, objective=self.objective, n_jobs=n_jobs, random_state=seed,
        )  # fmt: skip

    def _check_params(self) -> None:
        self._bag_model(0).check_params()

    def _side_keys(self) -> tuple[str, ...]:
        return self._bag_model(0)._side_keys()

    def _side_reader(self) -> str:
        return self._bag_model(0)._side_reader()

    def _fit_threads(self, n_rows: int) -> int | None:
        return self._bag_model(0, self.n_jobs)._fit_threads(n_rows)

    def _begin_fit(self, data: FitData, evals: list[EvalSet]) -> None:
        self._bag_model(0)._make_objective().prepare(data.y, data.ptr)  # refuses labels the bags cannot take
        self._data = data
        self._binner: SampleBinner | None = None  # sorted on the first bag that bins from it
        # a bag has about as many rows as the forest: one decision for all (one thread on small data)
        self._bag_jobs = self._fit_threads(data.X.shape[0])
        self._rng = check_random_state(self.random_state)
        self._evals = [(e.X, np.zeros(e.X.shape[0])) for e in evals]
        self.bags_: list[list[Tree]] = []
        self.trained_with_missing_ = False

    def _fit_step(self, iteration: int) -> None:
        data, rng = self._data, self._rng
        n_queries = data.ptr.shape[0] - 1
        chosen = rng.randint(n_queries, size=max(1, int(round(self.subsample * n_queries))))
        rows, ptr = take_queries(data.ptr, chosen)
        qid = np.repeat(np.arange(chosen.size), np.diff(ptr))  # a query drawn twice is two queries
        weight = None if data.weight is None else data.weight[rows]
        bag = self._bag_model(int(rng.randint(2**31 - 1)), self._bag_jobs)
        # side data follows the rows; positions a bag does not read (the forest said so) it is not given
        position = None if data.position is None or "position" not in bag._side_keys() else data.position[rows]
        if self._binner is None and (bag.bin_subsample is None or rows.shape[0] <= bag.bin_subsample):
            # only a bag binned on all its rows uses it: bags over bin_subsample rows never sort X
            self._binner = SampleBinner(data.X, self.max_bins)
        bag._binner, bag._rows = self._binner, rows
        bag.fit(data.X[rows], data.y[rows], qid=qid, sample_weight=weight, position=position)
        self.bags_.append(bag.trees_)
        self.trained_with_missing_ = self.trained_with_missing_ or bag.trained_with_missing_
        for X, scores in self._evals:
            scores += bag._predict_raw(X)  # a sum ranks as the mean does (X was checked by this fit)

    def _eval_scores(self, index: int) -> np.ndarray:
        return self._evals[index][1]

    def _importance_trees(self) -> list[Tree]:
        return [tree for bag in self.bags_ for tree in bag]

    def _contribution_scale(self) -> float:
        return 1.0 / len(self.bags_)  # the forest's score is the bags' mean

    def _snapshot(self) -> int:
        return len(self.bags_)

    def _restore(self, n_bags: int) -> None:
        del self.bags_[n_bags:]

    def _end_fit(self) -> None:
        for name in ("_data", "_rng", "_evals", "_binner", "_bag_jobs"):
            self.__dict__.pop(name, None)
        self._build_predictor()

    def _build_predictor(self) -> None:
        self._predictor = forest_predictor(self.bags_)

    def _predict_raw(self, X: np.ndarray) -> np.ndarray:
        return self._predictor.predict(X)

    def _widen_features(self, columns: np.ndarray, n_features: int) -> None:
        self.bags_ = [[t.on_columns(columns) for t in bag] for bag in self.bags_]
        self._build_predictor()

    def _n_kept(self) -> int:
        return len(self.bags_)

    def _part(self, start: int, end: int) -> RandomForest:
        part = copy.copy(self)  # the mean over the range's bags: a smaller forest
        part.bags_ = self.bags_[start:end]
        part._build_predictor()
        return part

    def _predicts_serially(self, n_rows: int) -> bool:
        return self._predictor.runs_serially(n_rows)

    # ------------------------------------------------------------------ persistence
    def _state_to_payload(self) -> dict[str, Any]:
        return {"bags": [[t.to_dict() for t in bag] for bag in self.bags_], "trained_with_missing": self.trained_with_missing_}

    def _state_from_payload(self, payload: dict[str, Any], version: int) -> None:
        self.bags_ = [trees_from_payload(bag, self.n_features_in_) for bag in payload["bags"]]
        # files from before it was recorded: unknown, so taken as trained with missing values
        self.trained_with_missing_ = bool(payload.get("trained_with_missing", True))
        self._build_predictor()


class _Bag(LambdaMART):
    """A bag's ensemble: a LambdaMART whose bins come from the forest's :class:`SampleBinner`
    (set as ``_binner``, with the bag's rows of the forest's data as ``_rows``, in the order fit
    keeps them: the bag's qids are increasing) instead of sorting the bag's copy of the rows
    again: the same edges, so the same trees."""

    def _bin_training(self, X: np.ndarray) -> np.ndarray:
        mapper = self.bin_mapper_
        if self._binner is None or (mapper.subsample is not None and self._rows.shape[0] > mapper.subsample):
            return super()._bin_training(X)  # the mapper fits on a random subsample of these rows
        return self._binner.fit_transform(self._rows, mapper)
