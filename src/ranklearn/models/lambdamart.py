"""LambdaMART: gradient-boosted regression trees fitted to lambda gradients.

Burges, "From RankNet to LambdaRank to LambdaMART: An Overview", MSR-TR-2010-82, section 5 (Newton
leaf values); Wu, Burges, Svore, Gao, "Adapting boosting for information retrieval measures",
Information Retrieval 13 (2010); best-first growth and early stopping as RankLib's LambdaMART.

Each iteration computes the lambdas and hessians of every document from the current scores
(:mod:`ranklearn.objectives.lambdas`), grows one tree best-first on them with Newton leaf
values ``-sum(lambda) / sum(hessian)`` (:mod:`ranklearn.tree`), and adds it with shrinkage
``learning_rate``. Validation sets are scored every iteration; with ``early_stopping_rounds``
the model is rolled back to its best iteration, as RankLib does.
"""

from __future__ import annotations

import copy
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Hidden, Interval, StrOptions

from ranklearn.data.groups import LAMBDA_NORMALIZATIONS
from ranklearn.metrics import Metric
from ranklearn.models.base import EARLY_STOPPING, N_JOBS, BaseRanker, EvalSet, FitData
from ranklearn.models.contributions import TreeContributions
from ranklearn.models.serving import TREE_PAYLOAD_FIELDS, check_tree_payload, trees_from_payload
from ranklearn.objectives import (
    OBJECTIVE_NAMES, UNBIASED_METHODS, Objective, check_ipw_settings, get_objective, make_unbiased,
)  # fmt: skip
from ranklearn.tree.binning import BinMapper, has_missing
from ranklearn.tree.boosting import BoostingState, draw_subsets
from ranklearn.tree.grower import LEAF_ORDERS
from ranklearn.tree.predictor import TreePredictor
from ranklearn.tree.tree import Tree


_SMALL = 10_000  # rows below which one thread is faster than starting parallel regions


class TreeImportance:
    """Feature importance of a tree ensemble (LambdaMART, MART, random forest) from the trees
    that :meth:`_importance_trees` gives."""

    def _importance_trees(self) -> list[Tree]:
        raise NotImplementedError

    def feature_importance(self, kind: str = "gain", *, by_name: bool = False) -> np.ndarray | dict[str, float]:
        """Total split gain ("gain") or number of splits ("split") of every feature.

        With ``by_name=True``, a dict from feature name (``feature_names_in_``, or ``f1``,
        ``f2``... for 1-based column numbers) to importance.
        """
        self._check_fitted()
        if kind not in ("gain", "split"):
            raise ValueError(f"kind must be 'gain' or 'split', got {kind!r}")
        out = np.zeros(self.n_features_in_)
        for t in self._importance_trees():
            internal = t.feature >= 0
            np.add.at(out, t.feature[internal], t.gain[internal] if kind == "gain" else 1.0)
        if not by_name:
            return out
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = [f"f{i + 1}" for i in range(self.n_features_in_)]
        return {str(n): float(v) for n, v in zip(names, out)}

    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalized total gain of every feature (sums to 1 when any split exists)."""
        imp = self.feature_importance("gain")
        total = imp.sum()
        return imp / total if total > 0 else imp


class LambdaMART(TreeContributions, TreeImportance, BaseRanker):
    """LambdaMART ranker: histogram gradient-boosted trees on LambdaRank gradients.

    Burges, "From RankNet to LambdaRank to LambdaMART: An Overview", MSR-TR-2010-82; Wu,
    Burges, Svore, Gao, "Adapting boosting for information retrieval measures", Information
    Retrieval 13 (2010).

    Parameters
    ----------
    n_estimators : int
        Maximum number of trees (boosting iterations).
    learning_rate : float
        The step of each update in function space: every tree's leaf values times it
        (shrinkage; the networks' ``learning_rate`` is their optimizer's step).
    num_leaves : int
        Leaves per tree, grown best-first.
    min_samples_leaf : int
        Minimum number of documents in a leaf.
    max_bins : int
        Quantile bins per feature (2..255); missing values get a bin of their own.
    metric : str or Metric
        Metric computed on the evaluation sets, used for early stopping and by ``score``,
        e.g. "ndcg@10" (the model's ``gain``, queries without relevant documents count 0,
        ties in input order), or a :class:`ranklearn.metrics.Metric` with other conventions.
    early_stopping_rounds : int, "auto" or None
        Stop when the watched evaluation set's metric has not improved for this many trees
        (an int needs an ``eval_set``); "auto": max(20, n_estimators // 10) with an ``eval_set``,
        none without; None: every tree. With an evaluation set the model is rolled back to its
        best iteration either way.
    n_jobs : int or None
        Threads (None or -1: every CPU this process may use). Inputs under 10,000 rows run
        on one thread, which is faster there; results never depend on the number of threads.
        None also shares the CPUs with this user's other ranklearn fits with ``n_jobs=None``
        on the same CPUs (two fits on 2 cores: one thread each, re-checked after every
        tree); -1 never gives way.
    random_state : int or None
        Seed of binning subsample, feature subsampling and query bagging.
    objective : str, object or None
        What the trees minimise (None: the ranker's own, "lambdarank" for LambdaMART and
        "squared_error" for MART): "lambdarank" (RankNet's pair loss weighted by the |ΔZ| of
        ``lambda_metric``; the LambdaMART of the papers), "ranknet" (no |ΔZ| weights),
        "squared_error" (pointwise regression on the labels: RankLib's MART) or "xendcg"
        (XE-NDCG, Bruch et al. 2019, LightGBM's ``rank_xendcg``); or an object with
        ``gradients(scores, y, ptr) -> (grad, hess)`` (an :class:`ranklearn.objectives.Objective`,
        or any object with that method), grad = dC/ds per document, hess >= 0. A model with
        a user's objective saves and predicts, but the object itself is not saved.
    sigma : float
        Steepness of the RankNet sigmoid.
    lambda_metric : str or None
        Swap change weighting the lambdas: "ndcg@k", "err@k", "map" or "none" (plain RankNet
        on trees). None: the same as ``metric``.
    truncation_level : int or None
        Only pairs with a document in the current top ``truncation_level`` get lambdas
        (None: the metric's cut-off, where nothing is lost).
    lambda_normalization : {"lightgbm", "docs", "pairs", "none"}
        "lightgbm": multiply each query's lambdas and hessians by log2(1 + S) / S, S the sum
        of its pairs' 2 |lambda_ij| (LightGBM's normalization; chosen on MQ2008 validation
        NDCG). "docs" / "pairs": divide them by the query's documents / pairs with different
        labels (per-row weights times ``sample_weight``). "none": the plain sums. The networks
        take the same four values with the same meanings (one rule: the "lightgbm" factor is
        :func:`ranklearn.objectives.lambdas.lambdarank_norm_factor` for both).
    lambda_distance_weight : bool
        Divide each pair's |ΔZ| by 0.01 + |s_i - s_j|, as LightGBM's ``lambdarank_norm`` also
        does. Off by default: it lowered MQ2008 validation NDCG@10.
    gain : {"exp2", "linear"}
        Label gain of ΔNDCG, and of the metric when ``metric`` is a name ("ndcg@10" with
        ``gain="linear"`` is NDCG with gain rel), as LightGBM's ``label_gain`` serves both.
    max_depth : int or None
        Maximum depth of a tree (None: unlimited; leaf count is the limit).
    min_sum_hessian : float
        Minimum sum of hessians in a leaf.
    l2_regularization : float
        L2 penalty ``lambda`` on leaf values: Newton leaves ``-G / (H + lambda)``, the minimum of
        the loss plus ``lambda / 2 * sum(w^2)`` in the hessian's half-loss convention (under squared
        error, LinearRegression's penalty; docs/DESIGN.md, "Vocabulary").
    min_gain_to_split : float
        Minimum gain of a split.
    leaf_order : {"gain", "deviance"}
        Which leaf of a growing tree is split next: the one whose best split gains most
        ("gain", LightGBM's order), or the one whose gradients have the largest sum of squares
        about their mean ("deviance", RankLib's order, the newest leaf on a tie). It decides
        which leaves exist when ``num_leaves`` stops a tree; each split itself is the same. As in
        RankLib, "deviance" splits its leaf even for no gain (``min_gain_to_split > 0`` still asks
        for one) and never a leaf whose gradients are all equal.
    feature_fraction : float
        Fraction of features each tree may split on, drawn per tree without replacement.
    bagging_fraction : float
        Fraction of queries each tree is fitted on, drawn per tree.
    bin_subsample : int or None
        Rows used to find bin edges (None: all).
    verbose : int
        0: silent; 1: a progress bar with the evaluation metric.
    unbiased : {"pairwise", "position_factors", "ipw"} or None
        Learn from biased clicks (labels = clicks, ``fit(..., position=)`` the 1-based ranks
        they were shown at; :mod:`ranklearn.objectives.unbiased`): "pairwise" is Unbiased
        LambdaMART (Hu et al., WWW 2019: position-bias ratios of clicked and unclicked
        documents learned with the trees, each pair's lambda divided by them; XGBoost's
        ``lambdarank_unbiased`` learns its ratios from the reversed pair's loss instead, see
        :mod:`ranklearn.objectives.unbiased`), "position_factors" LightGBM's additive position term (scores
        ``f(x) + g(rank)`` in training, ``predict`` gives ``f``), "ipw" inverse propensity
        weighting of the pairs by the clicked document's ``propensity``. Needs positions and
        the objective "lambdarank" or "ranknet". None: clicks taken as labels.
    position_bias_max_rank : int
        Ranks whose bias "pairwise" and "position_factors" learn; deeper positions share the
        last rank's ("ipw": the length of ``propensity``).
    position_bias_norm : float
        "pairwise": p of the L_p regularization of the ratios, ``t = (cost ratio)^(1/(1+p))``
        (XGBoost's ``lambdarank_bias_norm``, whose default is 2). 4 was chosen on the IPW click
        DCG of validation clicks of MQ2008 and MSLR-sample (benchmarks/ranker_defaults.md).
    position_bias_regularization : float
        "position_factors": L2 regularization of the factors (LightGBM's
        ``lambdarank_position_bias_regularization``, whose default is 0). 1 was chosen on validation
        clicks of MQ2008 and MSLR-sample (benchmarks/ranker_defaults.md). It shrinks the factors
        toward 0 (no bias): 0 estimates the bias unshrunk, e.g. to read ``position_bias_``.
    propensity : array-like or None
        "ipw": examination propensity per rank from 1 (e.g.
        ``ranklearn.clicks.estimate_propensity(log).propensity``, or a ``Propensity``); positions
        past its end take its last value.
    propensity_clip : float or None
        "ipw": propensities below it count as it (inverse weights at most ``1 / clip``).

    Attributes
    ----------
    trees_ : list of Tree
        The trees kept (after early stopping, ``best_iteration_`` of them).
    bin_mapper_ : BinMapper
    trained_with_missing_ : bool
    objective_ : dict
        The objective's name and settings, with what the fit fixed (ERR's top grade, a seed).
    position_bias_ : dict of str to ndarray, or None
        With ``unbiased``: the bias per rank from 1 after the last tree kept ("pairwise":
        ``t_plus`` and ``t_minus``, ratios to rank 1; "position_factors": ``factor``, the additive
        score term ``g``; "ipw": ``propensity``, clipped). :func:`ranklearn.plot.position_bias`
        draws it. Exports (RankLib, LightGBM) hold the trees ``f`` only.
    n_features_in_, feature_names_in_, evals_result_, best_iteration_, best_score_, n_iter_, interrupted_, max_grade_
        See :class:`ranklearn.models.base.BaseRanker`.
    """

    _model_name = "lambdamart"
    _vocabulary_since = 4  # payload 4: issue 30's vocabulary (MART's too)
    _display_name = "LambdaMART"
    #: what ``objective=None`` means (MART sets "squared_error")
    _default_objective: ClassVar[str] = "lambdarank"
    iteration_unit = "tree"
    _allow_nan = True
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, np.inf, closed="neither")],
        "num_leaves": [Interval(Integral, 2, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_bins": [Interval(Integral, 2, 255, closed="both")],
        "metric": [str, Metric],
        "early_stopping_rounds": EARLY_STOPPING,
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        # "custom" marks a loaded model trained with a user's objective: not an option to offer
        "objective": [StrOptions(set(OBJECTIVE_NAMES)), Hidden(StrOptions({"custom"})), HasMethods(["gradients"]), None],
        "sigma": [Interval(Real, 0, np.inf, closed="neither")],
        "lambda_metric": [str, None],
        "truncation_level": [Interval(Integral, 1, None, closed="left"), None],
        "lambda_normalization": [StrOptions(set(LAMBDA_NORMALIZATIONS))],
        "lambda_distance_weight": ["boolean"],
        "gain": [StrOptions({"exp2", "linear"})],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_sum_hessian": [Interval(Real, 0, np.inf, closed="left")],
        "l2_regularization": [Interval(Real, 0, np.inf, closed="left")],
        "min_gain_to_split": [Interval(Real, 0, np.inf, closed="left")],
        "leaf_order": [StrOptions(set(LEAF_ORDERS))],
        "feature_fraction": [Interval(Real, 0, 1, closed="right")],
        "bagging_fraction": [Interval(Real, 0, 1, closed="right")],
        "bin_subsample": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
        "unbiased": [StrOptions(set(UNBIASED_METHODS)), None],
        "position_bias_max_rank": [Interval(Integral, 1, None, closed="left")],
        "position_bias_norm": [Interval(Real, 0, np.inf, closed="neither")],
        "position_bias_regularization": [Interval(Real, 0, np.inf, closed="left")],
        "propensity": "no_validation",  # checked by objectives.make_unbiased (an array or a Propensity)
        "propensity_clip": [Interval(Real, 0, np.inf, closed="neither"), None],
    }

    def __init__(
        self,
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        num_leaves: int = 31,
        min_samples_leaf: int = 20,
        max_bins: int = 255,
        metric: str | Metric = "ndcg@10",
        early_stopping_rounds: int | str | None = None,
        n_jobs: int | None = None,
        random_state: int | None = None,
        objective: str | Objective | None = None,
        sigma: float = 1.0,
        lambda_metric: str | None = None,
        truncation_level: int | None = None,
        lambda_normalization: str = "lightgbm",
        lambda_distance_weight: bool = False,
        gain: str = "exp2",
        max_depth: int | None = None,
        min_sum_hessian: float = 1e-3,
        l2_regularization: float = 0.0,
        min_gain_to_split: float = 0.0,
        leaf_order: str = "gain",
        feature_fraction: float = 1.0,
        bagging_fraction: float = 1.0,
        bin_subsample: int | None = 200_000,
        verbose: int = 0,
        unbiased: str | None = None,
        position_bias_max_rank: int = 10,
        position_bias_norm: float = 4.0,
        position_bias_regularization: float = 1.0,
        propensity: Any = None,
        propensity_clip: float | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_samples_leaf = min_samples_leaf
        self.max_bins = max_bins
        self.metric = metric
        self.early_stopping_rounds = early_stopping_rounds
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.objective = objective
        self.sigma = sigma
        self.lambda_metric = lambda_metric
        self.truncation_level = truncation_level
        self.lambda_normalization = lambda_normalization
        self.lambda_distance_weight = lambda_distance_weight
        self.gain = gain
        self.max_depth = max_depth
        self.min_sum_hessian = min_sum_hessian
        self.l2_regularization = l2_regularization
        self.min_gain_to_split = min_gain_to_split
        self.leaf_order = leaf_order
        self.feature_fraction = feature_fraction
        self.bagging_fraction = bagging_fraction
        self.bin_subsample = bin_subsample
        self.verbose = verbose
        self.unbiased = unbiased
        self.position_bias_max_rank = position_bias_max_rank
        self.position_bias_norm = position_bias_norm
        self.position_bias_regularization = position_bias_regularization
        self.propensity = propensity
        self.propensity_clip = propensity_clip

    # ------------------------------------------------------------------ hooks of BaseRanker
    def effective_objective(self) -> str | Objective:
        """The objective the trees minimise: ``objective``, or the ranker's own when it is None
        ("lambdarank" for LambdaMART, "squared_error" for MART)."""
        return self._default_objective if self.objective is None else self.objective

    def _make_objective(self) -> Objective:
        objective = self.effective_objective()
        if objective == "custom":
            raise ValueError(
                "this model was trained with a user's objective, which model files do not hold; "
                "pass the object again as objective= to train"
            )
        if not isinstance(objective, str):
            objective = copy.deepcopy(objective)
        made = get_objective(
            objective,
            sigma=self.sigma,
            lambda_metric=self.lambda_metric,
            metric=self.metric.name if isinstance(self.metric, Metric) else self.metric,
            truncation_level=self.truncation_level,
            gain=self.gain,
            lambda_normalization=self.lambda_normalization,
            lambda_distance_weight=self.lambda_distance_weight,
            random_state=self.random_state,
        )
        if self.unbiased is None:
            check_ipw_settings("unbiased", None, self.propensity, self.propensity_clip)
            return made
        return make_unbiased(
            self.unbiased, made, max_rank=self.position_bias_max_rank, norm=self.position_bias_norm,
            regularization=self.position_bias_regularization, learning_rate=self.learning_rate,
            propensity=self._propensity_values(), clip=self.propensity_clip,
        )  # fmt: skip

    def _propensity_values(self) -> Any:
        """``propensity`` as given, or the ``.propensity`` of a ``ranklearn.clicks.Propensity``."""
        return getattr(self.propensity, "propensity", self.propensity)

    def _required_side(self) -> dict[str, str]:
        return {} if self.unbiased is None else {"position": f"unbiased={self.unbiased!r}"}

    def _check_params(self) -> None:
        if self.effective_objective() != "custom":
            self._make_objective()

    def _side_keys(self) -> tuple[str, ...]:
        return () if self.effective_objective() == "custom" else tuple(self._make_objective().side_keys)

    def _side_reader(self) -> str:
        objective = self.effective_objective()
        return f"objective {objective if isinstance(objective, str) else type(objective).__name__!r}"

    def _fit_threads(self, n_rows: int) -> int | None:
        return 1 if n_rows < _SMALL else self.n_jobs  # results do not depend on the thread count

    def _begin_fit(self, data: FitData, evals: list[EvalSet]) -> None:
        self.position_bias_ = None
        self._bias_history: list[dict[str, np.ndarray] | None] = []  # the bias after each tree
        self._objective = self._make_objective()
        self._objective.prepare(data.y, data.ptr)  # refuses labels the objective cannot take
        self.objective_ = self._objective.get_params()
        self._rng = check_random_state(self.random_state)
        self.bin_mapper_ = BinMapper(self.max_bins, self.bin_subsample, self._rng.randint(2**31 - 1))
        binned = self._bin_training(data.X)
        self.trained_with_missing_ = has_missing(binned)
        self._state = BoostingState(
            binned, self.bin_mapper_.n_bins_, data.y, data.ptr, self._objective, weight=data.weight, side=data.side(),
            evals=[self.bin_mapper_.transform(e.X) for e in evals], learning_rate=self.learning_rate,
            limits=self._growth_limits(),
        )  # fmt: skip
        self.trees_: list[Tree] = []
        self._predictor = None

    def _bin_training(self, X: np.ndarray) -> np.ndarray:
        """Fit ``bin_mapper_`` on the training rows and return them binned (Random Forests'
        bags override it to bin from their forest's sorted values)."""
        return self.bin_mapper_.fit(X).transform(X)

    def _fit_step(self, iteration: int) -> None:
        state = self._state
        n_features, n_queries = state.binned.shape[0], state.ptr.shape[0] - 1
        self._finish_tree(
            state.step(*draw_subsets(self._rng, n_queries, n_features, self.bagging_fraction, self.feature_fraction))
        )
        objective = self._objective
        self._bias_history.append(objective.position_bias() if hasattr(objective, "position_bias") else None)

    def _growth_limits(self) -> dict[str, Any]:
        """The :class:`TreeGrower` limits of this model's parameters."""
        return {
            "num_leaves": self.num_leaves,
            "max_depth": self.max_depth,
            "min_samples_leaf": self.min_samples_leaf,
            "min_sum_hessian": self.min_sum_hessian,
            "l2_regularization": self.l2_regularization,
            "min_gain_to_split": self.min_gain_to_split,
            "leaf_order": self.leaf_order,
        }

    def _finish_tree(self, tree: Tree) -> None:
        """Give a grown (and shrunk) tree's splits raw thresholds, keep it."""
        internal = tree.feature >= 0
        tree.threshold[internal] = self.bin_mapper_.thresholds(tree.feature[internal], tree.bin_threshold[internal])
        self.trees_.append(tree)

    def _eval_scores(self, index: int) -> np.ndarray:
        return self._state.eval_scores[index]

    def _snapshot(self) -> int:
        return len(self.trees_)

    def _restore(self, n_trees: int) -> None:
        del self.trees_[n_trees:]

    def _end_fit(self) -> None:
        history = self.__dict__.pop("_bias_history", None)
        if history and self.trees_:  # the bias that went with the kept trees (early stopping rolls both back)
            self.position_bias_ = history[len(self.trees_) - 1]
        for name in ("_objective", "_rng", "_state"):
            self.__dict__.pop(name, None)
        self._predictor = TreePredictor(self.trees_)

    def _predict_raw(self, X: np.ndarray) -> np.ndarray:
        return self._predictor.predict(X)

    def _widen_features(self, columns: np.ndarray, n_features: int) -> None:
        self.trees_ = [t.on_columns(columns) for t in self.trees_]
        if self.bin_mapper_ is not None:
            self.bin_mapper_ = self.bin_mapper_.on_columns(columns, n_features)
        self._predictor = TreePredictor(self.trees_)

    def _n_kept(self) -> int:
        return len(self.trees_)

    def _part(self, start: int, end: int) -> LambdaMART:
        part = copy.copy(self)
        part.trees_ = self.trees_[start:end]
        part._predictor = TreePredictor(part.trees_)
        return part

    def _predicts_serially(self, n_rows: int) -> bool:
        return self._predictor.runs_serially(n_rows)

    def _metric_conventions(self) -> dict[str, str]:
        # one gain for the lambdas and the metric, as LightGBM's label_gain serves both
        return {"gain": self.gain}

    def _importance_trees(self) -> list[Tree]:
        return self.trees_


    # ------------------------------------------------------------------ persistence
    @classmethod
    def _upgrade_params(cls, params: dict[str, Any], version: int) -> dict[str, Any]:
        if version < 2 and "lambda_normalize" in params:  # a bool before the families shared one name
            params["lambda_normalization"] = "lightgbm" if params.pop("lambda_normalize") else "none"
        return params

    def _json_params(self) -> dict[str, Any]:
        params = super()._json_params()
        if not isinstance(self.objective, (str, type(None))):
            params["objective"] = "custom"  # the object cannot be saved; objective_ says what it was
        return params

    # objective null: a model imported from a RankLib or LightGBM file (trained elsewhere)
    _payload_fields: ClassVar[dict[str, tuple[str, ...]]] = TREE_PAYLOAD_FIELDS

    def _state_to_payload(self) -> dict[str, Any]:
        return {
            "objective": getattr(self, "objective_", None),
            "bin_mapper": self.bin_mapper_.to_dict() if self.bin_mapper_ is not None else None,
            "trained_with_missing": bool(getattr(self, "trained_with_missing_", False)),
            "trees": [t.to_dict() for t in self.trees_],
            "position_bias": None if getattr(self, "position_bias_", None) is None
            else {k: v.tolist() for k, v in self.position_bias_.items()},
        }  # fmt: skip

    def _state_from_payload(self, payload: dict[str, Any], version: int) -> None:
        check_tree_payload(payload, self._model_name)
        self.bin_mapper_ = BinMapper.from_dict(payload["bin_mapper"]) if payload["bin_mapper"] else None
        self.trained_with_missing_ = bool(payload.get("trained_with_missing", False))
        self.objective_ = payload.get("objective")
        bias = payload.get("position_bias")  # payload version 3 (older files: none)
        self.position_bias_ = None if bias is None else {k: np.asarray(v, dtype=np.float64) for k, v in bias.items()}
        self.trees_ = trees_from_payload(payload["trees"], self.n_features_in_)
        if version < 2:
            self.max_grade_ = float(payload.get("objective_max_grade") or 1.0)
        self._predictor = TreePredictor(self.trees_)

    def _saved_iterations(self, payload: dict[str, Any]) -> int:
        return len(payload["trees"])

    @classmethod
    def from_trees(cls, trees: list[Tree], n_features: int) -> LambdaMART:
        """A model that predicts with given trees (read from another tool: no bin mapper, so it
        cannot be trained further, but it predicts, saves and exports like any other)."""
        model = cls()
        model.trees_ = list(trees)
        model._set_imported(n_features, len(model.trees_))
        model.bin_mapper_ = None
        model.trained_with_missing_ = False
        model._predictor = TreePredictor(model.trees_)
        return model
