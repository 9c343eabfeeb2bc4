"""LambdaMART: gradient-boosted regression trees fitted to lambda gradients (seeds 001, 003, 004).

Each iteration computes the lambdas and hessians of every document from the current scores
(:mod:`ranklearn.objectives.lambdas`), grows one tree best-first on them with Newton leaf
values ``-sum(lambda) / sum(hessian)`` (:mod:`ranklearn.tree`), and adds it with shrinkage
``learning_rate``. Validation sets are scored every iteration; with ``early_stopping_rounds``
the model is rolled back to its best iteration, as RankLib does.
"""

from __future__ import annotations

import dataclasses

import math
from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np
from numba import njit
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ranklearn._threads import numba_threads
from ranklearn.models._base import RankerMixin, as_dense_features, check_ranking_data
from ranklearn.objectives.lambdas import Z_KINDS, LambdaObjective
from ranklearn.tree.binning import BinMapper, has_missing
from ranklearn.tree.grower import Tree, TreeGrower
from ranklearn.tree.predictor import TreePredictor

Callback = Callable[[int, int, dict[str, dict[str, float]]], None]


@njit(cache=True)
def _add_leaf_values(scores, samples, leaf_ranges, values):
    for r in range(leaf_ranges.shape[0]):
        v = values[leaf_ranges[r, 0]]
        for p in range(leaf_ranges[r, 1], leaf_ranges[r, 2]):
            scores[samples[p]] += v


_SMALL = 10_000  # rows below which one thread is faster than starting parallel regions


def _threads_for(n_rows: int, n_jobs: int | None) -> int | None:
    """Threads to use: one for small inputs (results do not depend on the thread count)."""
    return 1 if n_rows < _SMALL else n_jobs


def _parse_lambda_metric(lambda_metric: str | None, metric: str) -> tuple[str, int | None]:
    """(Z kind, k) of the swap change weighting the lambdas; by default the evaluation metric's."""
    spec = (lambda_metric or metric).lower()
    name, _, k_text = spec.partition("@")
    if lambda_metric is None and name not in Z_KINDS:
        name = "ndcg"  # P@k, RR@k... have no smooth swap change; NDCG at the same depth stands in
    if name not in Z_KINDS:
        raise ValueError(f"lambda_metric must be one of ndcg@k, err@k, map, none; got {lambda_metric!r}")
    if not k_text:
        return name, None
    try:
        k = int(k_text)
    except ValueError:
        raise ValueError(f"bad cut-off in lambda metric {spec!r}") from None
    if k <= 0:
        raise ValueError(f"the cut-off of {spec!r} must be positive")
    return name, k


class LambdaMART(RankerMixin, BaseEstimator):
    """LambdaMART ranker: histogram gradient-boosted trees on LambdaRank gradients.

    Parameters
    ----------
    n_estimators : int
        Maximum number of trees (boosting iterations).
    learning_rate : float
        Shrinkage applied to every tree's leaf values.
    num_leaves : int
        Leaves per tree, grown best-first.
    min_samples_leaf : int
        Minimum number of documents in a leaf.
    max_bins : int
        Quantile bins per feature (2..255); missing values get a bin of their own.
    metric : str
        Metric computed on the evaluation sets and used for early stopping, e.g. "ndcg@10"
        (gain 2^rel-1, queries without relevant documents count 0, ties in input order).
    early_stopping_rounds : int or None
        Stop when the first evaluation set's metric has not improved for this many trees,
        and roll back to the best iteration.
    n_jobs : int or None
        Threads (None or -1: all cores). Inputs under 10,000 rows run on one thread, which is
        faster there; results never depend on the number of threads.
    random_state : int or None
        Seed of binning subsample, feature subsampling and query bagging.
    sigma : float
        Steepness of the RankNet sigmoid.
    lambda_metric : str or None
        Swap change weighting the lambdas: "ndcg@k", "err@k", "map" or "none" (plain RankNet
        on trees). None: the same as ``metric``.
    truncation_level : int or None
        Only pairs with a document in the current top ``truncation_level`` get lambdas
        (None: the metric's cut-off, where nothing is lost).
    lambda_normalize : bool
        Multiply each query's lambdas and hessians by log2(1 + S) / S, S the sum of its pairs'
        2 |lambda_ij| (LightGBM's normalization; chosen on MQ2008 validation NDCG).
    lambda_distance_weight : bool
        Divide each pair's |ΔZ| by 0.01 + |s_i - s_j|, as LightGBM's ``lambdarank_norm`` also
        does. Off by default: it lowered MQ2008 validation NDCG@10.
    gain : {"exp2", "linear"}
        Label gain of ΔNDCG.
    max_depth : int or None
        Maximum depth of a tree (None: unlimited; leaf count is the limit).
    min_sum_hessian : float
        Minimum sum of hessians in a leaf.
    l2_regularization : float
        L2 penalty on leaf values (added to the hessian sum).
    min_gain_to_split : float
        Minimum gain of a split.
    feature_fraction : float
        Fraction of features each tree may use, drawn per tree.
    bagging_fraction : float
        Fraction of queries each tree is fitted on, drawn per tree.
    bin_subsample : int or None
        Rows used to find bin edges (None: all).
    verbose : int
        0: silent; 1: a progress bar with the evaluation metric.

    Attributes
    ----------
    trees_ : list of Tree
    bin_mapper_ : BinMapper
    n_features_in_ : int
    evals_result_ : dict
        ``{set name: {metric: [value per iteration]}}``.
    best_iteration_ : int or None
        Number of trees kept after early stopping (None without evaluation sets).
    interrupted_ : bool
        True when training was interrupted (Ctrl-C) and the best model so far was kept.
    """

    def __init__(
        self,
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        num_leaves: int = 31,
        min_samples_leaf: int = 20,
        max_bins: int = 255,
        metric: str = "ndcg@10",
        early_stopping_rounds: int | None = None,
        n_jobs: int | None = None,
        random_state: int | None = None,
        sigma: float = 1.0,
        lambda_metric: str | None = None,
        truncation_level: int | None = None,
        lambda_normalize: bool = True,
        lambda_distance_weight: bool = False,
        gain: str = "exp2",
        max_depth: int | None = None,
        min_sum_hessian: float = 1e-3,
        l2_regularization: float = 0.0,
        min_gain_to_split: float = 0.0,
        feature_fraction: float = 1.0,
        bagging_fraction: float = 1.0,
        bin_subsample: int | None = 200_000,
        verbose: int = 0,
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
        self.sigma = sigma
        self.lambda_metric = lambda_metric
        self.truncation_level = truncation_level
        self.lambda_normalize = lambda_normalize
        self.lambda_distance_weight = lambda_distance_weight
        self.gain = gain
        self.max_depth = max_depth
        self.min_sum_hessian = min_sum_hessian
        self.l2_regularization = l2_regularization
        self.min_gain_to_split = min_gain_to_split
        self.feature_fraction = feature_fraction
        self.bagging_fraction = bagging_fraction
        self.bin_subsample = bin_subsample
        self.verbose = verbose

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        def positive_int(name: str, allow_none: bool = False) -> None:
            v = getattr(self, name)
            if v is None and allow_none:
                return
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")

        positive_int("n_estimators")
        positive_int("min_samples_leaf")
        positive_int("early_stopping_rounds", allow_none=True)
        positive_int("max_depth", allow_none=True)
        positive_int("truncation_level", allow_none=True)
        if self.n_jobs is not None and self.n_jobs != -1:
            positive_int("n_jobs")
        if isinstance(self.num_leaves, bool) or not isinstance(self.num_leaves, (int, np.integer)) or self.num_leaves < 2:
            raise ValueError(f"num_leaves must be an integer >= 2, got {self.num_leaves!r}")
        if not (isinstance(self.learning_rate, (int, float)) and math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be a positive number, got {self.learning_rate!r}")
        for name in ("feature_fraction", "bagging_fraction"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 < v <= 1):
                raise ValueError(f"{name} must be in (0, 1], got {v!r}")
        for name in ("min_sum_hessian", "l2_regularization", "min_gain_to_split"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a non-negative number, got {v!r}")

    # --------------------------------------------------------------------- fit
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        qid: ArrayLike | None = None,
        *,
        sample_weight: ArrayLike | None = None,
        eval_set: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike]] | None = None,
        eval_names: Sequence[str] | None = None,
        callbacks: Sequence[Callback] | None = None,
    ) -> LambdaMART:
        """Fit the ensemble.

        Parameters
        ----------
        X : array-like (n_samples, n_features); NaN means missing
        y : array-like (n_samples,), relevance labels (any real values)
        qid : array-like (n_samples,), query id of each row (required)
        sample_weight : array-like (n_samples,), optional
            Multiplies each document's lambda and hessian.
        eval_set : list of (X, y, qid), optional
            Evaluated every iteration; the first one drives early stopping.
        eval_names : list of str, optional
            Names of the evaluation sets (default "valid_0", "valid_1", ...).
        callbacks : list of callables, optional
            Called as ``cb(iteration, total, results)`` after every tree.
        """
        from ranklearn.metrics import get_metric

        if qid is None:
            raise ValueError("qid is required: LambdaMART ranks documents within queries")
        self._check_params()
        metric = get_metric(self.metric)
        z, k = _parse_lambda_metric(self.lambda_metric, self.metric)
        objective = LambdaObjective(
            z=z,
            k=k,
            sigma=self.sigma,
            truncation=self.truncation_level,
            gain=self.gain,
            normalize=self.lambda_normalize,
            distance_weight=self.lambda_distance_weight,
        )
        X, y, ptr, order = check_ranking_data(X, y, qid)
        weight = None
        if sample_weight is not None:
            weight = np.asarray(sample_weight, dtype=np.float64).ravel()
            if weight.shape[0] != X.shape[0]:
                raise ValueError(f"sample_weight has {weight.shape[0]} values for {X.shape[0]} rows")
            if not np.all(np.isfinite(weight)) or np.any(weight < 0):
                raise ValueError("sample_weight must be finite and non-negative")
            if order is not None:
                weight = weight[order]
        if z != "none" and y.min() < 0:
            raise ValueError(
                f"labels must be >= 0 for {z} lambdas (got {y.min():g}); shift them, or use lambda_metric='none'"
            )
        if z != "none" and (self.gain == "exp2" or z == "err") and y.max() > 1000:
            raise ValueError(
                f"label {y.max():g} overflows the 2^rel-1 gain; use gain='linear' (with NDCG or AP lambdas)"
            )
        objective.prepare(y)
        self.objective_max_grade_ = objective.max_grade
        # ERR on the eval sets uses the top grade fixed from the training labels.
        metric = dataclasses.replace(metric, max_grade=objective.max_grade)

        evals = []
        names = list(eval_names) if eval_names is not None else [f"valid_{i}" for i in range(len(eval_set or []))]
        if eval_set is not None and len(names) != len(eval_set):
            raise ValueError(f"eval_names has {len(names)} names for {len(eval_set)} evaluation sets")
        rng = check_random_state(self.random_state)
        with numba_threads(_threads_for(X.shape[0], self.n_jobs)):
            self.bin_mapper_ = BinMapper(self.max_bins, self.bin_subsample, rng.randint(2**31 - 1)).fit(X)
            binned = self.bin_mapper_.transform(X)
            self.n_features_in_ = X.shape[1]
            self.trained_with_missing_ = has_missing(binned)
            for name, es in zip(names, eval_set or []):
                if len(es) != 3:
                    raise ValueError(f"each eval_set entry must be (X, y, qid); {name!r} is not")
                Xe, ye, pe, _ = check_ranking_data(*es)
                if Xe.shape[1] != X.shape[1]:
                    raise ValueError(
                        f"evaluation set {name!r} has {Xe.shape[1]} features, training data has {X.shape[1]}"
                    )
                evals.append((name, self.bin_mapper_.transform(Xe), ye, pe, np.zeros(Xe.shape[0])))
            self._boost(binned, y, ptr, weight, objective, metric, evals, rng, list(callbacks or []))
        return self

    def _boost(self, binned, y, ptr, weight, objective, metric, evals, rng, callbacks) -> None:
        n, n_feat = binned.shape[1], binned.shape[0]
        n_bins = self.bin_mapper_.n_bins_
        scores = np.zeros(n)
        grad = np.empty(n)
        hess = np.empty(n)
        self.trees_: list[Tree] = []
        self.evals_result_ = {name: {metric.name: []} for name, *_ in evals}
        self.best_iteration_ = None
        self.interrupted_ = False
        self._predictor = None
        best_score = -np.inf
        n_queries = ptr.shape[0] - 1
        n_bag = max(1, int(round(self.bagging_fraction * n_queries)))
        n_use_feat = max(1, int(round(self.feature_fraction * n_feat)))
        progress = self._progress_callback()
        all_callbacks = callbacks + ([progress] if progress is not None else [])
        try:
            for it in range(self.n_estimators):
                objective.gradients(scores, y, ptr, grad, hess)
                if weight is not None:
                    grad *= weight
                    hess *= weight
                samples = None
                if n_bag < n_queries:
                    chosen = np.sort(rng.choice(n_queries, size=n_bag, replace=False))
                    samples = np.concatenate([np.arange(ptr[q], ptr[q + 1]) for q in chosen])
                features = None
                if n_use_feat < n_feat:
                    features = np.sort(rng.choice(n_feat, size=n_use_feat, replace=False))
                grower = TreeGrower(
                    binned,
                    n_bins,
                    grad,
                    hess,
                    samples=samples,
                    features=features,
                    num_leaves=self.num_leaves,
                    max_depth=self.max_depth,
                    min_samples_leaf=self.min_samples_leaf,
                    min_sum_hessian=self.min_sum_hessian,
                    l2_regularization=self.l2_regularization,
                    min_gain_to_split=self.min_gain_to_split,
                )
                tree, leaf_samples, leaf_ranges = grower.grow()
                tree.value *= self.learning_rate
                internal = tree.feature >= 0
                tree.threshold[internal] = [
                    self.bin_mapper_.threshold(f, b)
                    for f, b in zip(tree.feature[internal], tree.bin_threshold[internal])
                ]
                self.trees_.append(tree)
                if samples is None:
                    _add_leaf_values(scores, leaf_samples, leaf_ranges, tree.value)
                else:
                    TreePredictor([tree]).predict_binned(binned, scores)
                results: dict[str, dict[str, float]] = {}
                for name, eb, ey, ep, escores in evals:
                    TreePredictor([tree]).predict_binned(eb, escores)
                    value = float(metric.mean(ey, escores, ep))
                    self.evals_result_[name][metric.name].append(value)
                    results[name] = {metric.name: value}
                if evals:
                    first = results[evals[0][0]][metric.name]
                    if first > best_score:
                        best_score = first
                        self.best_iteration_ = it + 1
                for cb in all_callbacks:
                    cb(it + 1, self.n_estimators, results)
                if (
                    evals
                    and self.early_stopping_rounds is not None
                    and it + 1 - self.best_iteration_ >= self.early_stopping_rounds
                ):
                    break
        except KeyboardInterrupt:
            self.interrupted_ = True
            self._rollback(interrupted=True)
            raise
        finally:
            if progress is not None:
                progress.close()
        self._rollback()

    def _rollback(self, interrupted: bool = False) -> None:
        """Keep the trees up to the best iteration: after early stopping, or on an interrupt
        (when evaluation sets say which iteration was best)."""
        if self.best_iteration_ is not None and (interrupted or self.early_stopping_rounds is not None):
            del self.trees_[self.best_iteration_ :]
        self._predictor = None

    def _progress_callback(self):
        if not self.verbose:
            return None
        from ranklearn._progress import TrainingProgress

        return TrainingProgress(self.n_estimators, description="LambdaMART")

    # ----------------------------------------------------------------- predict
    def _check_fitted(self) -> None:
        if not hasattr(self, "trees_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this LambdaMART is not fitted yet: call fit() or load a model first")

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Scores of the rows of ``X`` (higher ranks first); no qid needed."""
        self._check_fitted()
        X = as_dense_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1] if X.ndim == 2 else 'no'} features, the model was trained on "
                f"{self.n_features_in_}"
            )
        if np.isinf(X).any():
            bad = np.argwhere(np.isinf(X))[0]
            raise ValueError(f"X contains inf at row {bad[0]}, feature {bad[1]}")
        if getattr(self, "_predictor", None) is None:
            self._predictor = TreePredictor(self.trees_)
        with numba_threads(_threads_for(X.shape[0], self.n_jobs)):
            return self._predictor.predict(X)

    def feature_importance(self, kind: str = "gain") -> np.ndarray:
        """Total split gain ("gain") or number of splits ("split") of every feature."""
        self._check_fitted()
        if kind not in ("gain", "split"):
            raise ValueError(f"kind must be 'gain' or 'split', got {kind!r}")
        out = np.zeros(self.n_features_in_)
        for t in self.trees_:
            internal = t.feature >= 0
            np.add.at(out, t.feature[internal], t.gain[internal] if kind == "gain" else 1.0)
        return out

    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalized total gain of every feature (sums to 1 when any split exists)."""
        imp = self.feature_importance("gain")
        total = imp.sum()
        return imp / total if total > 0 else imp

    # ------------------------------------------------------------- persistence
    def _to_payload(self) -> dict[str, Any]:
        self._check_fitted()
        params = self.get_params()
        if not (params["random_state"] is None or isinstance(params["random_state"], (int, np.integer))):
            params["random_state"] = None  # a Generator/RandomState object is not serializable

        def clean(v: float) -> float | None:
            return v if math.isfinite(v) else None

        return {
            "params": {k: (int(v) if isinstance(v, np.integer) else v) for k, v in params.items()},
            "n_features": int(self.n_features_in_),
            "objective_max_grade": self.objective_max_grade_,
            "bin_mapper": self.bin_mapper_.to_dict() if self.bin_mapper_ is not None else None,
            "trained_with_missing": bool(getattr(self, "trained_with_missing_", False)),
            "trees": [t.to_dict() for t in self.trees_],
            "evals_result": {
                s: {m: [clean(v) for v in vals] for m, vals in d.items()} for s, d in self.evals_result_.items()
            },
            "best_iteration": self.best_iteration_,
        }

    @classmethod
    def _from_payload(cls, payload: dict[str, Any]) -> LambdaMART:
        model = cls(**payload["params"])
        model.n_features_in_ = int(payload["n_features"])
        model.objective_max_grade_ = payload.get("objective_max_grade")
        model.bin_mapper_ = BinMapper.from_dict(payload["bin_mapper"]) if payload["bin_mapper"] else None
        model.trained_with_missing_ = bool(payload.get("trained_with_missing", False))
        model.trees_ = [Tree.from_dict(t) for t in payload["trees"]]
        if model.n_features_in_ < 1:
            raise ValueError("n_features must be at least 1")
        for tree in model.trees_:
            tree.validate(model.n_features_in_)
        model.evals_result_ = payload.get("evals_result", {})
        model.best_iteration_ = payload.get("best_iteration")
        model.interrupted_ = False
        model._predictor = None
        return model

    def save(self, path: str) -> None:
        """Write the model as a versioned, checksummed JSON file (atomically)."""
        from ranklearn.io.model_file import write_model_file

        write_model_file(path, "lambdamart", self._to_payload())

    @classmethod
    def load(cls, path: str) -> LambdaMART:
        """Read a model written by :meth:`save`."""
        from ranklearn.io import load_model

        model = load_model(path)
        if not isinstance(model, cls):
            from ranklearn.exceptions import ModelFormatError

            raise ModelFormatError(f"holds a {type(model).__name__} model, not LambdaMART", path=path)
        return model
