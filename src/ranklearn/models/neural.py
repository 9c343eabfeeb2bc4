"""Neural rankers: RankNet and LambdaRank (scikit-learn estimators, trained with PyTorch).

torch is imported lazily: importing this module works without it, fitting or loading
raises ``ImportError`` saying ``pip install 'ranklearn[neural]'``.

The scorer is an MLP (``hidden=()`` gives a linear scorer) on standardized inputs
(mean / standard deviation of the training rows, saved with the model). Training is the
factorized RankNet of Burges et al. by default: a batch of queries is scored in one
forward pass, every document gets lambda_i = dC/ds_i summed over its pairs, and one
backward pass with the lambdas as upstream gradient gives the update. ``mode="pairwise"``
is the original per-pair SGD (one update per document pair), kept to measure the speed-up.
LambdaRank multiplies each lambda_ij by |dNDCG@k| or |dERR@k| of swapping the pair.

Sign convention: lambda_i = dC/ds_i (negative = push up), as in docs/DESIGN.md.
"""

from __future__ import annotations

import dataclasses

import base64
import math
from collections.abc import Callable, Sequence
from os import PathLike
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from ranklearn.exceptions import ModelFormatError, TrainingDivergedError
from ranklearn.models._base import RankerMixin, as_dense_features, check_ranking_data

__all__ = ["RankNet", "LambdaRank", "_from_payload"]

Callback = Callable[[int, int, dict[str, dict[str, float]]], Any]

_MODES = ("factorized", "pairwise")
_OPTIMIZERS = ("adam", "sgd")
_PAYLOAD_VERSION = 2  # 2: n_networks (version 1 files hold one network)

# Defaults chosen on MQ2008 validation data only. Protocol: each fold's validation queries
# split in two halves, early stopping on one half, NDCG@10 measured on the other (both ways,
# 5 folds, 5 seeds), so that the half that picks the epoch does not also score it. One network:
# (64, 32) ReLU 0.5031; dropout 0.3 + weight decay 0.01 0.5035; (16,) 0.5006; RankLib's (10,)
# sigmoid 0.4990; linear 0.4984. The scores of 5 such networks trained separately, averaged:
# 0.5085 / 0.5063 / 0.5060 for the first three. 5 networks trained side by side (n_networks=5,
# one early stopping, seeds 0 and 1): 0.5052 against 0.5042 for one network with the same
# seeds, and the seed-to-seed spread fell from 0.010 to 0.0005. Earlier, with early stopping
# and scoring on the whole validation set: hidden (16,), (32,), (128, 64), dropout 0.2-0.5,
# lr 3e-4 / 3e-3, 1-32 queries per update, tanh, sigma 0.5 / 2 were all within +-0.004.
# lambda_normalization (RankNet "docs", LambdaRank "none"): the protocol above reads S5 (Fold2's
# validation part), which is Fold1's test part, so it was chosen with a second protocol that never
# reads S5: 4 inner folds of S1-S4 (train on three parts, early stopping on half of the fourth,
# NDCG@10 on its other half), seeds 0-2, 5 networks: `benchmarks/tune_neural.py --protocol inner`.
# RankNet "docs" 0.5112 vs "none" 0.5080; LambdaRank "docs" 0.5067 vs "none" 0.5106. With
# `--protocol folds --seeds 0,1` (the protocol above): RankNet "docs" 0.5042, "none" 0.5012, "pairs"
# 0.4995 (a prototype that also rescaled by the batch's mean pair count). Nothing else moved
# RankNet by more than noise in either protocol (dropout 0.2: +0.002 / -0.004, no
# standardization: +0.003 / 0.000, sigma 0.5: +0.002 / -0.002, early stopping on full NDCG or
# MAP, lr 3e-4 / 3e-3, 1 or 64 queries per update, (32,), (128,), (256, 128), 10 networks: not
# higher). These ran on 15 CPU processes of a lent GPU machine (torch 2.11). LambdaRank, inner
# protocol, on this 2-core machine (torch 2.13): default 0.5100, |dNDCG@10| lambdas 0.5065,
# LightGBM's log2(1 + S) / S query normalization 0.5094 (RankNet with it: 0.5116); neither kept.
# Nor any of these (same protocol and machine, 2026-11-23): 4 / 64 queries per update 0.5045 /
# 0.5079, lr 3e-3 0.5042, weight decay 0.01 0.5090, sigma 2 0.5084, (128, 64) 0.5076, (32,)
# 0.5058, (256, 128, 64) 0.5082, tanh 0.5095, gelu 0.5043, 10 networks 0.5068, "pairs" 0.4994,
# |dERR| lambdas 0.5019, early stopping after 40 epochs without gain 0.5051, the learning rate
# multiplied by 0.9 / 0.95 after every epoch (a trial patch, not a parameter) 0.5073 / 0.5104
# (RankNet with 0.9: 0.5111 against 0.5112). Nor, 2026-11-23 later: SGD with lr 0.01 0.5055 (0.03
# and 0.1 diverge), 32 queries per update 0.5061, truncation_level 20 0.5085, |dNDCG@20| 0.5092; 8
# queries per update gave 0.5112, but on seeds 3-5 0.5060 against the default's 0.5085.
_DEFAULTS: dict[str, Any] = {
    "hidden": (64, 32),
    "n_networks": 5,
    "activation": "relu",
    "dropout": 0.0,
    "mode": "factorized",
    "optimizer": "adam",
    "learning_rate": 1e-3,
    "weight_decay": 0.0,
    "epochs": 100,
    "batch_queries": 16,
    "sigma": 1.0,
    "metric": "ndcg@10",
    "early_stopping_rounds": 20,
    "standardize": True,
    "device": "cpu",
    "random_state": None,
    "verbose": 0,
    "warm_start": False,
}


def _check_X(X: ArrayLike, n_features: int | None = None) -> np.ndarray:
    X = as_dense_features(X)  # refuses to densify a giant, nearly empty sparse matrix
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but the model was fitted with {n_features}")
    if np.isnan(X).any():
        bad = np.argwhere(np.isnan(X))[0]
        raise ValueError(
            f"X contains NaN at row {bad[0]}, feature {bad[1]}; neural rankers do not accept "
            "missing values (impute them, or use LambdaMART, which learns where NaN goes)"
        )
    if np.isinf(X).any():
        bad = np.argwhere(np.isinf(X))[0]
        raise ValueError(f"X contains inf at row {bad[0]}, feature {bad[1]}")
    return X


def _finite_or_none(v: float) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


class RankNet(RankerMixin, BaseEstimator):
    """RankNet: a neural scorer trained on pairwise cross-entropy, factorized per query.

    Parameters
    ----------
    hidden : tuple of int, default=(64, 32)
        Hidden layer sizes. ``()`` gives a linear scorer ``w0 + w . x``.
    n_networks : int, default=5
        Networks of this shape trained side by side, each from its own initialization and on
        the lambdas of its own ranking; the score is their mean. Averaging independent
        networks lowers the variance of the model; training costs about ``n_networks``
        times one network. Early stopping watches the averaged score.
    activation : {"relu", "tanh", "sigmoid", "gelu", "elu", "leaky_relu", "selu"}, default="relu"
    dropout : float, default=0.0
        Dropout after every hidden activation.
    mode : {"factorized", "pairwise"}, default="factorized"
        ``"factorized"``: one weight update per batch of ``batch_queries`` queries, from the
        per-document lambdas (back-propagated once). ``"pairwise"``: the original per-pair
        SGD, one update per document pair (slow; for fidelity and timing).
    optimizer : {"adam", "sgd"}, default="adam"
    learning_rate : float, default=1e-3
    weight_decay : float, default=0.0
        Decoupled weight decay (AdamW) with ``optimizer="adam"``, an L2 penalty with ``"sgd"``.
    lambda_normalization : {"docs", "pairs", "none"}, default="docs" (LambdaRank: "none")
        Divide each query's lambdas by its number of documents (``"docs"``) or of pairs with
        different labels (``"pairs"``: every query counts the same). With ``"none"`` the
        cost is the plain sum of pair costs, in which a query weighs its number of pairs,
        about the square of its length, so long queries dominate. LambdaRank's |dNDCG| is
        already divided by each query's ideal DCG, so it defaults to ``"none"``.
    epochs : int, default=100
        Passes over the training queries (fewer with early stopping).
    batch_queries : int, default=16
        Queries per update in factorized mode (1 = the paper's per-query mini-batch).
    sigma : float, default=1.0
        Shape of the pair sigmoid, P_ij = 1 / (1 + exp(-sigma (s_i - s_j))).
    metric : str, default="ndcg@10"
        Metric evaluated on ``eval_set`` after every epoch (``ranklearn.metrics.get_metric``
        spec, gain 2^rel-1, queries without relevant documents count 0, stable ties); the
        first eval set drives early stopping.
    early_stopping_rounds : int or None, default=20
        Stop when the metric on the first eval set has not improved for this many epochs,
        and restore the best epoch's weights. Inactive without ``eval_set`` or when None.
    standardize : bool, default=True
        Standardize features with the training mean and standard deviation (saved with the model).
    device : str, default="cpu"
        torch device, e.g. ``"cuda"`` or ``"cuda:1"``.
    random_state : int or None
        Seeds initialization, query order, pair order and dropout; a fixed seed gives the same
        model on the same device.
    verbose : int, default=0
        0 silent; 1 a progress bar with the evaluation metric (rich, on stderr).
    warm_start : bool, default=False
        Continue from the current weights (and standardization) on the next ``fit``.

    Attributes
    ----------
    model_ : torch.nn.Module
        The trained scorer (:class:`ranklearn.neural.scorer.MLPScorer`).
    n_features_in_ : int
    feature_mean_, feature_scale_ : ndarray or None
        The input standardization (None with ``standardize=False``).
    evals_result_ : dict
        ``{eval name: {metric: [value per epoch]}}``.
    best_iteration_ : int or None
        Number of epochs of the best model on the first eval set (1-based, as LambdaMART's
        number of trees): ``evals_result_[name][metric][best_iteration_ - 1]`` is its score.
        With early stopping (or after an interrupt) those are the weights kept. None without
        eval sets.
    train_loss_ : list of float
        Mean pair cost per epoch (|dZ|-weighted for LambdaRank, before sample weights).
    n_epochs_ : int
        Epochs run.
    interrupted_ : bool
        True when fit was stopped by KeyboardInterrupt (the best weights so far are kept).
    """

    _model_type = "ranknet"
    _display_name = "RankNet"

    def __init__(
        self,
        hidden: Sequence[int] = _DEFAULTS["hidden"],
        n_networks: int = _DEFAULTS["n_networks"],
        activation: str = "relu",
        dropout: float = 0.0,
        mode: str = "factorized",
        optimizer: str = "adam",
        learning_rate: float = _DEFAULTS["learning_rate"],
        weight_decay: float = _DEFAULTS["weight_decay"],
        lambda_normalization: str = "docs",
        epochs: int = _DEFAULTS["epochs"],
        batch_queries: int = _DEFAULTS["batch_queries"],
        sigma: float = 1.0,
        metric: str = "ndcg@10",
        early_stopping_rounds: int | None = _DEFAULTS["early_stopping_rounds"],
        standardize: bool = True,
        device: str = "cpu",
        random_state: int | None = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.hidden = hidden
        self.n_networks = n_networks
        self.activation = activation
        self.dropout = dropout
        self.mode = mode
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.lambda_normalization = lambda_normalization
        self.epochs = epochs
        self.batch_queries = batch_queries
        self.sigma = sigma
        self.metric = metric
        self.early_stopping_rounds = early_stopping_rounds
        self.standardize = standardize
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    # ------------------------------------------------------------------ configuration
    def _lambda_spec(self) -> tuple[str | None, int | None, int | None]:
        """(metric name, k, truncation level) of the lambdas; RankNet: no |dZ| weighting."""
        return None, None, None

    def _check_params(self) -> tuple[int, ...]:
        from ranklearn.neural.scorer import check_architecture

        sizes = check_architecture(self.hidden, self.activation, self.dropout)
        nn_ = self.n_networks
        if isinstance(nn_, bool) or not isinstance(nn_, (int, np.integer)) or nn_ < 1:
            raise ValueError(f"n_networks must be a positive integer, got {nn_!r}")
        if self.mode == "pairwise" and nn_ != 1:
            raise ValueError("mode='pairwise' trains a single network: set n_networks=1")
        if self.mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {self.mode!r}")
        if self.optimizer not in _OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {_OPTIMIZERS}, got {self.optimizer!r}")
        if not (isinstance(self.learning_rate, (int, float)) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be a positive number, got {self.learning_rate!r}")
        for name in ("epochs", "batch_queries"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        wd = self.weight_decay
        if not (isinstance(wd, (int, float)) and math.isfinite(wd) and wd >= 0):
            raise ValueError(f"weight_decay must be a non-negative number, got {wd!r}")
        if not (isinstance(self.sigma, (int, float)) and self.sigma > 0 and math.isfinite(self.sigma)):
            raise ValueError(f"sigma must be a positive number, got {self.sigma!r}")
        esr = self.early_stopping_rounds
        if esr is not None and (isinstance(esr, bool) or not isinstance(esr, (int, np.integer)) or esr < 1):
            raise ValueError(f"early_stopping_rounds must be a positive integer or None, got {esr!r}")
        from ranklearn.neural.training import check_lambda_normalization

        check_lambda_normalization(self.lambda_normalization)
        self._lambda_spec()  # validates the LambdaRank parameters
        return sizes

    def _torch_device(self):
        torch = _require_torch()
        try:
            dev = torch.device(self.device)
        except (RuntimeError, TypeError):
            raise ValueError(f"device {self.device!r} is not a torch device (use 'cpu', 'cuda' or 'cuda:N')") from None
        if dev.type == "cuda":
            if not torch.cuda.is_available():
                raise ValueError(f"device={self.device!r} but CUDA is not available here; use device='cpu'")
            if dev.index is not None and dev.index >= torch.cuda.device_count():
                raise ValueError(
                    f"device={self.device!r} but this machine has {torch.cuda.device_count()} CUDA device(s)"
                )
        return dev

    # ------------------------------------------------------------------ fitting
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
    ) -> RankNet:
        """Train on queries ``qid`` (required).

        Parameters
        ----------
        X : array-like or sparse matrix (n_samples, n_features); no NaN
        y : array-like (n_samples,) relevance labels
        qid : array-like (n_samples,) query ids (rows of a query need not be contiguous)
        sample_weight : array-like (n_samples,), optional
            Multiplies each document's lambda (as in LambdaMART).
        eval_set : list of (X, y, qid)
            Evaluated with ``metric`` after every epoch; the first one drives early stopping.
        eval_names : list of str, optional
            Names of the eval sets in ``evals_result_`` (default ``valid_0``, ``valid_1``, ...).
        callbacks : list of callables ``cb(iteration, total, results)``
            Called after every epoch with the number of epochs completed (1-based), ``epochs``
            and ``{eval name: {metric: value}}``.
        """
        torch = _require_torch()
        if qid is None:
            raise ValueError("qid is required: ranking models learn from queries")
        sizes = self._check_params()
        device = self._torch_device()
        X, y, ptr, order = check_ranking_data(X, y, qid, allow_nan=False)
        if self._lambda_spec()[0] is not None and y.max() > 1000:
            # 2^rel overflows: the lambdas would be NaN and the model would learn nothing
            raise ValueError(f"label {y.max():g} overflows the 2^rel-1 gain of LambdaRank's lambdas; rescale the labels")
        weight = self._sample_weight(sample_weight, order, X.shape[0])

        warm = bool(self.warm_start) and hasattr(self, "model_")
        if warm and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"warm_start: X has {X.shape[1]} features, the model was fitted with {self.n_features_in_}"
            )
        evals = self._prepare_eval_sets(eval_set, eval_names, X.shape[1], device)
        from ranklearn.metrics import get_metric

        metric = get_metric(self.metric)
        callbacks = list(callbacks or [])

        seed = self._seed()
        devices = [device.index if device.index is not None else torch.cuda.current_device()] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            rng = np.random.default_rng(seed)
            self._init_state(X, y, sizes, device, warm)
            # ERR on the eval sets uses the top grade fixed from the training labels.
            metric = dataclasses.replace(metric, max_grade=self.max_grade_)
            self._train(X, y, ptr, weight, evals, metric, callbacks, rng, device)
        return self

    def _seed(self) -> int:
        rs = self.random_state
        if rs is None:
            return int(np.random.SeedSequence().generate_state(1)[0])
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(0, 2**31 - 1))
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(0, 2**31 - 1))
        if isinstance(rs, (int, np.integer)) and not isinstance(rs, bool):
            return int(rs)
        raise ValueError(f"random_state must be None, an int, a numpy RandomState or Generator, got {rs!r}")

    @staticmethod
    def _sample_weight(sample_weight: ArrayLike | None, order: np.ndarray | None, n: int) -> np.ndarray | None:
        if sample_weight is None:
            return None
        w = np.asarray(sample_weight, dtype=np.float64).ravel()
        if w.shape[0] != n:
            raise ValueError(f"sample_weight has {w.shape[0]} values for {n} rows")
        if not np.all(np.isfinite(w)) or (w < 0).any():
            raise ValueError("sample_weight must be finite and non-negative")
        return w if order is None else w[order]

    def _prepare_eval_sets(self, eval_set, eval_names, n_features, device) -> list[tuple[str, Any, np.ndarray, np.ndarray]]:
        torch = _require_torch()
        if eval_set is None:
            return []
        if isinstance(eval_set, tuple) and len(eval_set) == 3 and not isinstance(eval_set[0], tuple):
            eval_set = [eval_set]
        eval_set = list(eval_set)
        if eval_names is None:
            names = [f"valid_{i}" for i in range(len(eval_set))]
        else:
            names = [str(n) for n in eval_names]
            if len(names) != len(eval_set):
                raise ValueError(f"eval_names has {len(names)} names for {len(eval_set)} eval sets")
            if len(set(names)) != len(names):
                raise ValueError(f"eval_names must be distinct, got {names}")
        out = []
        for name, item in zip(names, eval_set):
            try:
                Xe, ye, qe = item
            except (TypeError, ValueError):
                raise ValueError("eval_set must be a list of (X, y, qid) tuples") from None
            Xe, ye, pe, _ = check_ranking_data(Xe, ye, qe, allow_nan=False)
            if Xe.shape[1] != n_features:
                raise ValueError(f"eval set {name!r} has {Xe.shape[1]} features, training data has {n_features}")
            out.append((name, torch.as_tensor(Xe).to(device), ye, pe))
        return out

    def _init_state(self, X: np.ndarray, y: np.ndarray, sizes, device, warm: bool) -> None:
        from ranklearn.neural.scorer import MLPScorer, standardization_stats

        if warm:
            self.model_.to(device)
            return
        self.n_features_in_ = int(X.shape[1])
        if self.standardize:
            self.feature_mean_, self.feature_scale_ = standardization_stats(X)
        else:
            self.feature_mean_ = self.feature_scale_ = None
        model = MLPScorer(X.shape[1], sizes, self.activation, float(self.dropout), int(self.n_networks))
        model.to(device)
        model.set_standardization(self.feature_mean_, self.feature_scale_)
        self.model_ = model
        self.max_grade_ = float(max(1.0, np.max(y)))  # ERR's top grade, as the objectives

    def _make_optimizer(self, params):
        torch = _require_torch()
        lr, wd = float(self.learning_rate), float(self.weight_decay)
        if self.optimizer == "adam":
            if wd == 0.0:
                return torch.optim.Adam(params, lr=lr)
            return torch.optim.AdamW(params, lr=lr, weight_decay=wd)
        return torch.optim.SGD(params, lr=lr, weight_decay=wd)

    def _evaluate(self, evals, metric) -> dict[str, dict[str, float]]:
        from ranklearn.neural.training import predict_scores

        results: dict[str, dict[str, float]] = {}
        for name, Xe, ye, pe in evals:
            scores = predict_scores(self.model_, Xe, Xe.device)
            results[name] = {metric.name: float(metric.mean(ye, scores, pe))}
        return results

    def _train(self, X, y, ptr, weight, evals, metric, callbacks, rng, device) -> None:
        from ranklearn.neural.training import LambdaConfig, QuerySet, factorized_epoch, pairwise_epoch

        name, k, trunc = self._lambda_spec()
        cfg = LambdaConfig(
            sigma=float(self.sigma), metric=name, k=k, truncation_level=trunc, max_grade=self.max_grade_
        )
        data = QuerySet(X, y, ptr, device, weight, self.lambda_normalization)
        queries = data.trainable_queries()
        n_pairs = max(1, data.n_pairs(queries))
        optimizer = self._make_optimizer(self.model_.parameters())

        mname = metric.name
        self.evals_result_ = {n: {mname: []} for n, *_ in evals}
        self.train_loss_ = []
        self.best_iteration_ = None
        self.n_epochs_ = 0
        self.interrupted_ = False
        early = self.early_stopping_rounds is not None and len(evals) > 0
        best_value = -math.inf
        best_state = None  # weights of the best epoch (of the last one without eval sets)
        total = int(self.epochs)
        if self.verbose:
            from ranklearn._progress import TrainingProgress

            progress = TrainingProgress(total, description=self._display_name)
            callbacks = [*callbacks, progress]
        else:
            progress = None
        try:
            for epoch in range(1, total + 1):
                epoch_order = rng.permutation(queries)
                if self.mode == "factorized":
                    loss = factorized_epoch(self.model_, optimizer, data, epoch_order, int(self.batch_queries), cfg)
                else:
                    loss, _ = pairwise_epoch(self.model_, optimizer, data, epoch_order, cfg, rng)
                if not (math.isfinite(loss) and _all_finite(self.model_)):
                    raise TrainingDivergedError(
                        f"{self._display_name} training diverged in epoch {epoch}: the loss or the weights are "
                        f"not finite (optimizer={self.optimizer!r}, learning_rate={self.learning_rate!r}); "
                        "lower learning_rate"
                    )
                self.train_loss_.append(loss / n_pairs)
                self.n_epochs_ = epoch
                results = self._evaluate(evals, metric)
                for n, vals in results.items():
                    self.evals_result_[n][mname].append(vals[mname])
                if evals:
                    current = results[evals[0][0]][mname]
                    if current > best_value or best_state is None:
                        best_value, self.best_iteration_ = current, epoch
                        best_state = _clone_state(self.model_)
                else:
                    best_state = _clone_state(self.model_)
                for cb in callbacks:
                    cb(epoch, total, results)
                if early and epoch - self.best_iteration_ >= int(self.early_stopping_rounds):
                    break
        except KeyboardInterrupt:
            # keep the best model so far (the last completed epoch without eval sets)
            if best_state is not None:
                self.model_.load_state_dict(best_state)
            self.interrupted_ = True
            self.model_.eval()
            raise
        finally:
            if progress is not None:
                progress.close()
        if early and best_state is not None:
            self.model_.load_state_dict(best_state)
        self.model_.eval()

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Scores (float64, one per row; higher = more relevant). numpy in, numpy out."""
        self._check_fitted()
        from ranklearn.neural.training import predict_scores

        X = _check_X(X, self.n_features_in_)
        device = next(self.model_.parameters()).device
        return predict_scores(self.model_, X, device)

    # ------------------------------------------------------------------ persistence
    def _json_params(self) -> dict[str, Any]:
        params = self.get_params(deep=False)
        params["hidden"] = [int(h) for h in (params["hidden"] if not isinstance(params["hidden"], (int, np.integer)) else [params["hidden"]])]
        rs = params.get("random_state")
        params["random_state"] = int(rs) if isinstance(rs, (int, np.integer)) and not isinstance(rs, bool) else None
        for key, val in list(params.items()):
            if isinstance(val, np.generic):
                params[key] = val.item()
        return params

    def _to_payload(self) -> dict[str, Any]:
        self._check_fitted()
        _require_torch()
        from safetensors.torch import save as st_save

        state = {k: v.detach().cpu().contiguous() for k, v in self.model_.state_dict().items()}
        blob = st_save(state, metadata={"format": "pt", "model_type": self._model_type})
        std = None
        if self.feature_mean_ is not None:
            std = {"mean": [float(v) for v in self.feature_mean_], "scale": [float(v) for v in self.feature_scale_]}
        return {
            "payload_version": _PAYLOAD_VERSION,
            "params": self._json_params(),
            "n_features": int(self.n_features_in_),
            "standardization": std,
            "max_grade": float(self.max_grade_),
            "evals_result": {
                n: {m: [_finite_or_none(v) for v in vals] for m, vals in d.items()}
                for n, d in self.evals_result_.items()
            },
            "best_iteration": self.best_iteration_,
            "train_loss": [_finite_or_none(v) for v in self.train_loss_],
            "n_epochs": int(self.n_epochs_),
            "weights": {
                "format": "safetensors",
                "encoding": "base64",
                "data": base64.b64encode(blob).decode("ascii"),
            },
        }

    def save(self, path: str | PathLike[str]) -> None:
        """Write the model (JSON config + base64 safetensors weights) atomically to ``path``."""
        from ranklearn.io.model_file import write_model_file

        write_model_file(path, self._model_type, self._to_payload())

    @classmethod
    def load(cls, path: str | PathLike[str], *, device: str | None = None) -> RankNet:
        """Read a model saved by :meth:`save` (onto ``device``, default CPU)."""
        from ranklearn.io.model_file import read_model_file

        model_type, payload = read_model_file(path)
        try:
            model = _from_payload(model_type, payload, device=device)
        except ModelFormatError as exc:
            raise ModelFormatError(exc.reason, path=path) from None
        if not isinstance(model, cls):
            raise ModelFormatError(
                f"model file holds a {model_type!r} model, not a {cls._model_type!r} model", path=path
            )
        return model

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class LambdaRank(RankNet):
    """LambdaRank: RankNet's lambdas scaled by |dZ_ij|, the metric change of swapping i and j.

    Same parameters as :class:`RankNet`, plus

    lambda_metric : str, default="ndcg"
        ``"ndcg"`` (NDCG over the whole list), ``"ndcg@k"``, ``"err"`` or ``"err@k"``:
        |dNDCG| uses gain 2^rel - 1, discount 1/log2(rank + 2) and the query's ideal DCG;
        |dERR| uses R = (2^rel - 1) / 2^max_label with max_label the largest training label.
    truncation_level : int or None, default=None
        Keep only pairs with at least one document in the current top ``truncation_level`` by
        score (None: all pairs).
    """

    _model_type = "lambdarank"
    _display_name = "LambdaRank"

    def __init__(
        self,
        hidden: Sequence[int] = _DEFAULTS["hidden"],
        n_networks: int = _DEFAULTS["n_networks"],
        activation: str = "relu",
        dropout: float = 0.0,
        mode: str = "factorized",
        optimizer: str = "adam",
        learning_rate: float = _DEFAULTS["learning_rate"],
        weight_decay: float = _DEFAULTS["weight_decay"],
        lambda_normalization: str = "none",
        epochs: int = _DEFAULTS["epochs"],
        batch_queries: int = _DEFAULTS["batch_queries"],
        sigma: float = 1.0,
        metric: str = "ndcg@10",
        early_stopping_rounds: int | None = _DEFAULTS["early_stopping_rounds"],
        standardize: bool = True,
        device: str = "cpu",
        random_state: int | None = None,
        verbose: int = 0,
        warm_start: bool = False,
        lambda_metric: str = "ndcg",
        truncation_level: int | None = None,
    ) -> None:
        super().__init__(
            hidden=hidden,
            n_networks=n_networks,
            activation=activation,
            dropout=dropout,
            mode=mode,
            optimizer=optimizer,
            learning_rate=learning_rate,
            weight_decay=weight_decay,
            lambda_normalization=lambda_normalization,
            epochs=epochs,
            batch_queries=batch_queries,
            sigma=sigma,
            metric=metric,
            early_stopping_rounds=early_stopping_rounds,
            standardize=standardize,
            device=device,
            random_state=random_state,
            verbose=verbose,
            warm_start=warm_start,
        )
        self.lambda_metric = lambda_metric
        self.truncation_level = truncation_level

    def _lambda_spec(self) -> tuple[str | None, int | None, int | None]:
        from ranklearn.neural.lambdas import parse_lambda_metric

        name, k = parse_lambda_metric(self.lambda_metric)
        if name is None:
            raise ValueError("lambda_metric must be 'ndcg', 'ndcg@k', 'err' or 'err@k', got None")
        t = self.truncation_level
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 1):
            raise ValueError(f"truncation_level must be a positive integer or None, got {t!r}")
        return name, k, None if t is None else int(t)


# ---------------------------------------------------------------------- helpers
_CLASSES: dict[str, type[RankNet]] = {"ranknet": RankNet, "lambdarank": LambdaRank}


def _require_torch():
    from ranklearn.neural import require_torch

    return require_torch()


def _clone_state(module) -> dict[str, Any]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def _all_finite(module) -> bool:
    import torch

    return bool(torch.stack([torch.isfinite(p).all() for p in module.parameters()]).all())


def _from_payload(model_type: str, payload: dict[str, Any], *, device: str | None = None) -> RankNet:
    """Rebuild a RankNet / LambdaRank from a model file payload (for ``ranklearn.io.load_model``).

    Raises
    ------
    ModelFormatError
        If ``model_type`` is not a neural model or the payload is malformed.
    ImportError
        If torch / safetensors are not installed.
    """
    if model_type not in _CLASSES:
        raise ModelFormatError(f"not a neural ranker model file (model_type {model_type!r})")
    torch = _require_torch()
    from safetensors import SafetensorError
    from safetensors.torch import load as st_load

    from ranklearn.neural.scorer import MLPScorer

    cls = _CLASSES[model_type]
    try:
        version = payload.get("payload_version", 1)
        if not isinstance(version, int) or version > _PAYLOAD_VERSION:
            raise ModelFormatError(
                f"{model_type} payload version {version!r} is newer than this ranklearn supports; upgrade ranklearn"
            )
        params = dict(payload["params"])
        params["hidden"] = tuple(int(h) for h in params["hidden"])
        params.setdefault("n_networks", 1)  # payload version 1 had a single network
        params.setdefault("lambda_normalization", "none")  # files from before it existed trained without
        if device is not None:
            params["device"] = device
        elif params.get("device", "cpu") != "cpu" and not torch.cuda.is_available():
            params["device"] = "cpu"
        known = set(cls._get_param_names())
        est = cls(**{k: v for k, v in params.items() if k in known})
        est._check_params()
        n_features = int(payload["n_features"])
        std = payload["standardization"]
        if std is None:
            mean = scale = None
        else:
            mean = np.asarray(std["mean"], dtype=np.float64)
            scale = np.asarray(std["scale"], dtype=np.float64)
            if mean.shape != (n_features,) or scale.shape != (n_features,):
                raise ModelFormatError("standardization statistics do not match the feature count")
        weights = payload["weights"]
        if weights.get("format") != "safetensors" or weights.get("encoding") != "base64":
            raise ModelFormatError("weights must be base64-encoded safetensors")
        blob = base64.b64decode(weights["data"], validate=True)
        state = st_load(blob)
        if version == 1:  # one network, stored as "net.*" before ensembles existed
            state = {k.replace("net.", "members.0.", 1): v for k, v in state.items()}
        model = MLPScorer(n_features, params["hidden"], est.activation, float(est.dropout), int(est.n_networks))
        model.load_state_dict(state, strict=True)
        dev = est._torch_device()
        model.to(dev)
        model.set_standardization(mean, scale)
        model.eval()
        est.model_ = model
        est.n_features_in_ = n_features
        est.feature_mean_, est.feature_scale_ = mean, scale
        est.max_grade_ = float(payload.get("max_grade", 1.0))
        est.evals_result_ = {
            n: {m: [math.nan if v is None else float(v) for v in vals] for m, vals in d.items()}
            for n, d in payload.get("evals_result", {}).items()
        }
        best = payload.get("best_iteration")
        est.best_iteration_ = None if best is None else int(best)
        est.train_loss_ = [math.nan if v is None else float(v) for v in payload.get("train_loss", [])]
        est.n_epochs_ = int(payload.get("n_epochs", len(est.train_loss_)))
        est.interrupted_ = False
    except ModelFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError, SafetensorError) as exc:
        raise ModelFormatError(f"malformed {model_type} payload: {exc}") from None
    return est
