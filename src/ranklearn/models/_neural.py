"""What RankNet and LambdaRank share: the torch scorer, its training epochs and its file.

torch is imported lazily: importing this module works without it; fitting or loading
raises ``ImportError`` saying ``pip install 'ranklearn[neural]'``.

The scorer is an MLP (``hidden=()`` gives a linear scorer) on standardized inputs (mean and
standard deviation of the training rows, saved with the model), or the mean of
``n_networks`` such MLPs. Training is the factorized RankNet of Burges et al. (Burges,
Ragno, Le, "Learning to Rank with Nonsmooth Cost Functions", NIPS 2006; Burges, MSR-TR-2010-82):
a batch of queries is scored in one forward pass, every document gets lambda_i = dC/ds_i
summed over its pairs, and one backward pass with the lambdas as upstream gradient gives the
update. ``mode="pairwise"`` is the original per-pair SGD of Burges et al., "Learning to Rank
using Gradient Descent", ICML 2005 (one update per document pair), kept to measure the
speed-up. How the defaults were chosen: benchmarks/RESULTS.md.

Sign convention: lambda_i = dC/ds_i (negative = push up), as in docs/DESIGN.md.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import math
from collections.abc import Iterator, Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from ranklearn._threads import warn_if_torch_spins
from ranklearn.data.groups import LAMBDA_NORMALIZATIONS
from ranklearn.exceptions import ModelFormatError, TrainingDivergedError
from ranklearn.metrics import Metric
from ranklearn.models.base import EARLY_STOPPING, N_JOBS, BaseRanker, EvalSet, FitData
from ranklearn.models.contributions import NeuralContributions

_PAYLOAD_VERSION_NETWORKS = 2  # payload 1 held one network stored as "net.*"


def _require_torch():
    from ranklearn.neural import require_torch

    return require_torch()


#: Largest label of the neural gain-based losses, computed in float32 (largest value ~2^128):
#: a query's ideal DCG sums its gains, and 2^100 leaves room for 2^27 documents at that grade
#: (at 127, three documents of grade 127 summed to inf and their query's gradient to 0).
_MAX_FLOAT32_EXP2_LABEL = 100

class NeuralRanker(NeuralContributions, BaseRanker):
    """Base of :class:`~ranklearn.models.ranknet.RankNet` and :class:`~ranklearn.models.lambdarank.LambdaRank`.

    Parameters
    ----------
    hidden : tuple of int, default=(64, 32)
        Hidden layer sizes. ``()`` gives a linear scorer ``w0 + w . x``.
    n_networks : int or "auto", default="auto"
        Networks of this shape trained side by side, each from its own initialization and on
        the lambdas of its own ranking; the score is their mean. Averaging independent
        networks lowers the variance of the model; training costs about ``n_networks``
        times one network. Early stopping watches the averaged score. "auto" with
        ``mode="factorized"``: 3 for RankNet, 5 for LambdaRank and ListNet (chosen on the
        validation data of four datasets, benchmarks/neural_defaults.md); 1 with
        ``mode="pairwise"`` (which trains a single network).
    activation : {"relu", "tanh", "sigmoid", "gelu", "elu", "leaky_relu", "selu"}, default="relu"
    dropout : float, default=0.0
        Dropout after every hidden activation.
    mode : {"factorized", "pairwise"}, default="factorized"
        ``"factorized"``: one weight update per batch of ``batch_queries`` queries, from the
        per-document lambdas (back-propagated once). ``"pairwise"``: the original per-pair
        SGD, one update per document pair (slow; for fidelity and timing).
    optimizer : {"adam", "sgd"}, default="adam"
    learning_rate : float, default=1e-3
        The optimizer's step (torch's ``lr``): the step of each update in weight space (the
        trees' ``learning_rate`` is the step in function space; docs/DESIGN.md, "Vocabulary").
    weight_decay : float, default=0.0
        Decoupled weight decay (AdamW) with ``optimizer="adam"``, an L2 penalty with ``"sgd"``.
    loss : str, Loss or None, default=None
        What the networks minimise (:mod:`ranklearn.neural.losses`): "ranknet", "lambdarank"
        (pairs weighted by |dNDCG| or |dERR|), "listnet" (top-one softmax cross-entropy, Cao
        et al. 2007), "listmle" (Plackett-Luce likelihood, Xia et al. 2008), "approxndcg" (Qin
        et al. 2010), "neuralndcg" (Pobrotyn & Bialobrzeski 2021), or a
        :class:`~ranklearn.neural.losses.Loss` object. None: the ranker's own (RankNet's
        "ranknet", LambdaRank's "lambdarank", ListNet's "listnet"). A model trained with a
        Loss object saves and predicts, but the object itself is not saved. Clicks with
        ``fit(..., position=)``: "ipw" (:class:`~ranklearn.neural.losses.IPWLoss` over the ranker's
        own loss, with ``propensity``), an :class:`~ranklearn.neural.losses.IPWLoss` object (inverse
        propensity weighting of any of these losses), "dla" or :class:`~ranklearn.neural.losses.DLALoss` (the Dual
        Learning Algorithm: propensities learned with the ranker) or
        "regression_em" or :class:`~ranklearn.neural.losses.RegressionEMLoss` (regression EM, the
        network as the relevance model).
    lambda_normalization : {"lightgbm", "docs", "pairs", "none"} or None, default=None
        Divide each query's lambdas by its number of documents (``"docs"``) or of pairs with
        different labels (``"pairs"``: every query counts the same), or multiply them by
        log2(1 + S) / S, S the sum of the query's pairs' 2 |lambda_ij| (``"lightgbm"``,
        LightGBM's ``lambdarank_norm``, the trees' rule: damps queries with many large
        lambdas; recomputed from the current scores on every batch). With ``"none"`` the
        cost is the plain sum of pair costs, in which a query weighs its number of pairs,
        about the square of its length, so long queries dominate. None: the ranker's own
        (RankNet "docs"; LambdaRank "none", as |dNDCG| is already divided by each query's ideal
        DCG; ListNet "none", as its loss is one cross-entropy per query). ``"lightgbm"`` needs
        pair lambdas computed a query at a time: the "ranknet" and "lambdarank" losses in
        ``mode="factorized"``; the listwise and click losses, which have no pair lambdas, and
        the per-pair updates of ``mode="pairwise"`` refuse it.
    n_estimators : int, default=100
        Epochs: passes over the training queries (fewer with early stopping).
    batch_queries : int, default=16
        Queries per update in factorized mode (1 = the paper's per-query mini-batch).
    sigma : float, default=1.0
        Shape of the pair sigmoid, P_ij = 1 / (1 + exp(-sigma (s_i - s_j))), of the ranknet
        and lambdarank losses; the listwise losses (ListNet's among them) have no pairs and
        do not use it.
    metric : str or Metric, default="ndcg@10"
        Metric evaluated on ``eval_set`` after every epoch, used for early stopping and by
        ``score`` (``ranklearn.metrics.get_metric`` spec: gain 2^rel-1, queries without
        relevant documents count 0, stable ties; or a Metric with other conventions).
    early_stopping_rounds : int, "auto" or None, default="auto"
        Stop when the metric on the watched eval set has not improved for this many epochs,
        and restore the best epoch's weights. "auto": max(20, n_estimators // 10) when an
        ``eval_set`` is given (20 at the default 100 epochs), off otherwise. An integer needs an
        ``eval_set``.
    standardize : bool, default=True
        Standardize features with the training mean and standard deviation (saved with the model).
    device : str, default="cpu"
        torch device, e.g. ``"cuda"`` or ``"cuda:1"``.
    n_jobs : int or None, default=None
        torch's intra-op threads. None: one thread for a fit on the CPU (a batch's matrices
        are too small to share: on a busy 2-core machine two threads made a fit up to 15
        times slower, never faster), counted among the fits that share the CPUs (see
        LambdaMART's ``n_jobs``), and every CPU for ``predict``; -1: every CPU this process
        may use.
    random_state : int or None
        Seeds initialization, query order, pair order and dropout; a fixed seed gives the same
        model on the same device.
    verbose : int, default=0
        0 silent; 1 a progress bar with the evaluation metric (rich, on stderr).
    warm_start : bool, default=False
        Continue from the current weights (and standardization) on the next ``fit``.
    propensity : array-like or None, default=None
        ``loss="ipw"``: examination propensity per rank from 1 (e.g.
        ``ranklearn.clicks.estimate_propensity(log).propensity``, or a ``Propensity``); positions
        past its end take its last value.
    propensity_clip : float or None, default=None
        ``loss="ipw"``: propensities below it count as it (inverse weights at most ``1 / clip``).

    Attributes
    ----------
    model_ : torch.nn.Module
        The trained scorer (:class:`ranklearn.neural.scorer.MLPScorer`).
    feature_mean_, feature_scale_ : ndarray or None
        The input standardization (None with ``standardize=False``).
    train_loss_ : list of float
        Training loss per epoch: the sum of the per-query losses over the number of document
        pairs with different labels, so the mean pair cost for RankNet (|dZ|-weighted for
        LambdaRank), on the same scale for the listwise losses (before sample weights).
        Queries whose labels are all equal hold no preference and are left out of training
        for every loss (ListNet's, ListMLE's and ApproxNDCG's gradients on them would only
        pull the scores together).
    position_bias_ : dict of str to ndarray, or None
        With a click loss (IPW, DLA, regression EM): ``{"propensity": ...}``, the propensity per
        rank from 1 relative to rank 1 that weighted the clicks (IPW's given ones, clipped) or
        that was learned with the kept epochs (DLA, regression EM); saved with the model and drawn
        by :func:`ranklearn.plot.position_bias`. None for the other losses.
    n_features_in_, feature_names_in_, evals_result_, best_iteration_, best_score_, n_iter_, interrupted_, max_grade_
        See :class:`ranklearn.models.base.BaseRanker` (iterations are epochs).
    """

    iteration_unit = "epoch"
    #: what ``n_networks="auto"`` means in factorized mode
    _auto_networks: ClassVar[int] = 5
    #: the first payload version whose saved "auto" means ``_auto_networks`` (before it: 5)
    _auto_networks_since: ClassVar[int] = 0
    #: what ``loss=None`` and ``lambda_normalization=None`` mean for this ranker
    _default_loss: ClassVar[str] = "ranknet"
    _default_normalization: ClassVar[str] = "docs"
    _parameter_constraints: ClassVar[dict] = {
        "hidden": ["array-like", Interval(Integral, 1, None, closed="left")],
        "n_networks": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "activation": [str],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "mode": [StrOptions({"factorized", "pairwise"})],
        "optimizer": [StrOptions({"adam", "sgd"})],
        "learning_rate": [Interval(Real, 0, np.inf, closed="neither")],
        "weight_decay": [Interval(Real, 0, np.inf, closed="left")],
        "loss": [str, HasMethods(["__call__"]), None],
        "lambda_normalization": [StrOptions(set(LAMBDA_NORMALIZATIONS)), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "batch_queries": [Interval(Integral, 1, None, closed="left")],
        "sigma": [Interval(Real, 0, np.inf, closed="neither")],
        "metric": [str, Metric],
        "early_stopping_rounds": EARLY_STOPPING,
        "standardize": ["boolean"],
        "device": [str],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "propensity": "no_validation",  # checked by IPWLoss (an array or a Propensity)
        "propensity_clip": [Interval(Real, 0, np.inf, closed="neither"), None],
    }

    def __init__(
        self,
        hidden: Sequence[int] = (64, 32),
        n_networks: int | str = "auto",
        activation: str = "relu",
        dropout: float = 0.0,
        mode: str = "factorized",
        optimizer: str = "adam",
        learning_rate: float = 1e-3,
        weight_decay: float = 0.0,
        loss: str | Any = None,
        lambda_normalization: str | None = None,
        n_estimators: int = 100,
        batch_queries: int = 16,
        sigma: float = 1.0,
        metric: str | Metric = "ndcg@10",
        early_stopping_rounds: int | str | None = "auto",
        standardize: bool = True,
        device: str = "cpu",
        n_jobs: int | None = None,
        random_state: int | None = None,
        verbose: int = 0,
        warm_start: bool = False,
        propensity: Any = None,
        propensity_clip: float | None = None,
    ) -> None:
        self.hidden = hidden
        self.n_networks = n_networks
        self.activation = activation
        self.dropout = dropout
        self.mode = mode
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.loss = loss
        self.lambda_normalization = lambda_normalization
        self.n_estimators = n_estimators
        self.batch_queries = batch_queries
        self.sigma = sigma
        self.metric = metric
        self.early_stopping_rounds = early_stopping_rounds
        self.standardize = standardize
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.propensity = propensity
        self.propensity_clip = propensity_clip

    # ------------------------------------------------------------------ configuration
    def _lambda_settings(self) -> tuple[str, int | None]:
        """(metric, truncation level) of the "lambdarank" loss; LambdaRank's are parameters."""
        return "ndcg", None

    def _loss_name(self) -> str:
        loss = self._default_loss if self.loss is None else self.loss
        return loss if isinstance(loss, str) else getattr(loss, "name", "") or type(loss).__name__

    def _make_loss(self, max_grade: float | None = None):
        """The training loss (a fresh copy of a Loss object, so that fits do not share state);
        ``max_grade`` is ERR's top grade for ERR lambdas: the training labels', never the
        evaluation sets' (``max_grade_`` covers both, for the metric)."""
        from ranklearn.neural.losses import LambdaLoss, get_loss
        from ranklearn.objectives import check_ipw_settings

        lightgbm = self._normalization() == "lightgbm"
        named = self.loss is None or isinstance(self.loss, str)
        name = self._loss_name().lower() if named else self._loss_name()  # names are taken in any case
        if not named and (self.propensity is not None or self.propensity_clip is not None):
            raise ValueError(
                "propensity= and propensity_clip= go with loss='ipw'; a Loss object carries its own settings "
                "(IPWLoss(propensity, clip=...))"
            )
        check_ipw_settings("loss", name if named else None, self.propensity, self.propensity_clip)
        if not named:
            loss = copy.deepcopy(self.loss)
        else:
            if name == "custom":
                raise ValueError(
                    "this model was trained with a Loss object, which model files do not hold; "
                    "pass it again as loss= to train"
                )
            metric, truncation = self._lambda_settings()
            pairs = dict(sigma=float(self.sigma), normalize=lightgbm)
            settings = {
                "ranknet": pairs,
                "lambdarank": dict(pairs, metric=metric, truncation_level=truncation, max_grade=max_grade),
                "listmle": dict(random_state=getattr(self, "_rng", None)),
            }
            if name == "ipw":  # the ranker's own loss, weighted
                base = get_loss(self._default_loss, **settings.get(self._default_loss, {}))
                settings["ipw"] = dict(propensity=self.propensity, base=base, clip=self.propensity_clip)
            loss = get_loss(name, **settings.get(name, {}))
        if lightgbm and not isinstance(loss, LambdaLoss):
            raise ValueError(
                "lambda_normalization='lightgbm' multiplies each query's pair lambdas by log2(1 + S) / S, S the sum "
                f"of its pairs' 2 |lambda_ij|; loss {self._loss_name()!r} has no pair lambdas: use 'docs', 'pairs' "
                "or 'none', or loss 'ranknet' or 'lambdarank'"
            )
        if isinstance(loss, LambdaLoss) and loss.normalize != lightgbm:
            if not lightgbm:
                raise ValueError("the Loss object has normalize=True: set lambda_normalization='lightgbm' with it")
            loss = dataclasses.replace(loss, normalize=True)
        return loss

    def _side_keys(self) -> tuple[str, ...]:
        return () if self._loss_name() == "custom" else tuple(self._make_loss().side_keys)

    def _side_reader(self) -> str:
        return f"loss {self._loss_name()!r}"

    def _required_side(self) -> dict[str, str]:
        return {key: f"loss={self._loss_name()!r}" for key in self._side_keys()}  # a loss reads what it names

    def _normalization(self) -> str:
        return self._default_normalization if self.lambda_normalization is None else self.lambda_normalization

    def _n_nets(self) -> int:
        if self.n_networks == "auto":
            return self._auto_networks if self.mode == "factorized" else 1
        return int(self.n_networks)

    def _check_params(self) -> None:
        _require_torch()  # says how to install it
        from ranklearn.neural.scorer import check_architecture

        self._sizes = check_architecture(self.hidden, self.activation, self.dropout)
        if self.mode == "pairwise" and self._n_nets() != 1:
            raise ValueError("mode='pairwise' trains a single network: set n_networks=1 (or 'auto')")
        if self._loss_name() != "custom":
            loss = self._make_loss()  # validates the loss and its settings
            if self.mode == "pairwise" and not hasattr(loss, "truncation_level"):
                raise ValueError(f"mode='pairwise' trains on pair lambdas: loss {self._loss_name()!r} needs mode='factorized'")
            if self.mode == "pairwise" and self._normalization() == "lightgbm":
                raise ValueError(
                    "lambda_normalization='lightgbm' scales a query's lambdas by a factor of all its pairs' lambdas "
                    "at once; mode='pairwise' updates one pair at a time: use mode='factorized'"
                )
        self._torch_device()

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
        elif dev.type != "cpu":  # mps, xpu...: usable only where this torch build and machine have one
            if dev.type == "meta":
                raise ValueError(f"device={self.device!r} holds no data to train on; use device='cpu' or 'cuda'")
            try:
                torch.empty(1, device=dev)
            except Exception as exc:  # torch raises RuntimeError, AssertionError or NotImplementedError here
                reason = str(exc).split(". ")[0].splitlines()[0][:160] if str(exc) else type(exc).__name__
                raise ValueError(f"device={self.device!r} is not available here ({reason}); use device='cpu'") from None
        return dev

    def _check_labels(self, y: np.ndarray) -> None:
        loss = self._loss_name()
        if loss not in ("lambdarank", "approxndcg", "neuralndcg") or y.size == 0:
            return
        if y.max() > _MAX_FLOAT32_EXP2_LABEL:
            # the gains are float32 on the network's device: their sums must stay finite
            raise ValueError(
                f"label {y.max():g} overflows the 2^rel-1 gain of the {loss} loss (float32: labels up to "
                f"{_MAX_FLOAT32_EXP2_LABEL}); rescale the labels"
            )
        if y.min() < 0:
            # a negative gain breaks NDCG: queries whose ideal DCG is not above 0 give no
            # gradient, and the model would silently stay as it started
            raise ValueError(
                f"labels must be >= 0 for the NDCG gains of the {loss} loss (got {y.min():g}); shift them, "
                "or use loss='ranknet' or 'listnet', which only compare labels"
            )

    def _seed(self) -> int:
        rs = self.random_state
        if rs is None:
            return int(np.random.SeedSequence().generate_state(1)[0])
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(0, 2**31 - 1))
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(0, 2**31 - 1))
        return int(rs)

    @property
    def n_epochs_(self) -> int:
        """Epochs run (the same as ``n_iter_``)."""
        return self.n_iter_

    # ------------------------------------------------------------------ fitting hooks
    def _fit_threads(self, n_rows: int) -> int | None:
        # n_jobs=None trains on one thread on the CPU (see the n_jobs parameter)
        return 1 if self.n_jobs is None and self._torch_device().type == "cpu" else self.n_jobs

    def _predict_threads(self, n_rows: int) -> int | None:
        return self.n_jobs  # every CPU for n_jobs=None: a large batch's matrices are worth sharing

    def _shares_cpus(self) -> bool:
        # a fit on the GPU keeps its CPU threads out of the other fits' count
        return self.n_jobs is None and self._torch_device().type == "cpu"

    @contextlib.contextmanager
    def _fit_context(self) -> Iterator[None]:
        # A seeded fit leaves the caller's torch random state as it was.
        torch = _require_torch()
        device = self._torch_device()
        devices = [device.index if device.index is not None else torch.cuda.current_device()] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            seed = self._seed()
            torch.manual_seed(seed)
            self._rng = np.random.default_rng(seed)
            yield

    def _begin_fit(self, data: FitData, evals: list[EvalSet]) -> None:
        import torch

        from ranklearn.neural.scorer import MLPScorer, standardization_stats
        from ranklearn.neural.training import QuerySet

        device = self._torch_device()
        if device.type == "cpu":
            warn_if_torch_spins()
        warm = bool(self.warm_start) and hasattr(self, "model_") and getattr(self, "_fitted_features", None) == data.X.shape[1]
        if bool(self.warm_start) and hasattr(self, "model_") and not warm:
            raise ValueError(
                f"warm_start: X has {data.X.shape[1]} features, the model was fitted with {self._fitted_features}"
            )
        if warm:
            self.model_.to(device)
        else:
            if self.standardize:
                self.feature_mean_, self.feature_scale_ = standardization_stats(data.X)
            else:
                self.feature_mean_ = self.feature_scale_ = None
            model = MLPScorer(data.X.shape[1], self._sizes, self.activation, float(self.dropout), self._n_nets())
            model.to(device)
            model.set_standardization(self.feature_mean_, self.feature_scale_)
            self.model_ = model
        self._fitted_features = data.X.shape[1]
        self._loss = self._make_loss(max(1.0, float(data.y.max())) if data.y.size else 1.0)
        rows = self._normalization() if self._normalization() != "lightgbm" else "none"  # "lightgbm" is the loss's
        self._queryset = QuerySet(data.X, data.y, data.ptr, device, data.weight, rows, data.side())
        self._queries = self._queryset.trainable_queries(bool(getattr(self._loss, "every_list", False)))
        self._n_pairs = max(1, self._queryset.n_pairs(self._queries))
        self._optimizer = self._make_optimizer(self.model_.parameters())
        self._eval_X = [torch.as_tensor(e.X).to(device) for e in evals]
        self.train_loss_ = []

    def _make_optimizer(self, params):
        torch = _require_torch()
        lr, wd = float(self.learning_rate), float(self.weight_decay)
        if self.optimizer == "adam":
            # fused: a step is one kernel over all the parameters, not a dozen operations on each
            # (0.2 against 0.8 ms for 5 (64, 32) networks); the same update up to float32 round-off
            if wd == 0.0:
                return torch.optim.Adam(params, lr=lr, fused=True)
            return torch.optim.AdamW(params, lr=lr, weight_decay=wd, fused=True)
        return torch.optim.SGD(params, lr=lr, weight_decay=wd)

    def _fit_step(self, iteration: int) -> None:
        from ranklearn.neural.pairwise import pairwise_epoch
        from ranklearn.neural.training import factorized_epoch

        order = self._rng.permutation(self._queries)
        if self.mode == "factorized":
            loss = factorized_epoch(self.model_, self._optimizer, self._queryset, order, int(self.batch_queries), self._loss)
        else:
            loss, _ = pairwise_epoch(self.model_, self._optimizer, self._queryset, order, self._loss, self._rng)
        if not (math.isfinite(loss) and _all_finite(self.model_)):
            raise TrainingDivergedError(
                f"{self._display_name} training diverged in epoch {iteration}: the loss or the weights are "
                f"not finite (optimizer={self.optimizer!r}, learning_rate={self.learning_rate!r}); "
                "lower learning_rate"
            )
        self.train_loss_.append(loss / self._n_pairs)

    def _eval_scores(self, index: int) -> np.ndarray:
        from ranklearn.neural.training import predict_scores

        X = self._eval_X[index]
        return predict_scores(self.model_, X, X.device)

    def _position_bias(self) -> dict[str, np.ndarray] | None:
        """The training loss's position bias per rank (IPW's propensities, DLA's or regression
        EM's learned ones), or None for a loss without one."""
        bias = getattr(getattr(self, "_loss", None), "position_bias", None)
        return None if bias is None else {k: np.asarray(v, dtype=np.float64).copy() for k, v in bias().items()}

    def _snapshot(self) -> tuple[dict[str, Any], dict[str, np.ndarray] | None]:
        return {k: v.detach().clone() for k, v in self.model_.state_dict().items()}, self._position_bias()

    def _restore(self, snapshot: tuple[dict[str, Any], dict[str, np.ndarray] | None]) -> None:
        state, self._kept_bias = snapshot  # the bias learned with the kept epochs (early stopping rolls both back)
        self.model_.load_state_dict(state)

    def _end_fit(self) -> None:
        kept = self.__dict__.pop("_kept_bias", None)
        self.position_bias_ = kept if kept is not None else self._position_bias()
        for name in ("_loss", "_queryset", "_queries", "_n_pairs", "_optimizer", "_eval_X", "_rng"):
            self.__dict__.pop(name, None)
        self.model_.eval()

    def _predict_raw(self, X: np.ndarray) -> np.ndarray:
        from ranklearn.neural.training import predict_scores

        return predict_scores(self.model_, X, next(self.model_.parameters()).device)

    def _widen_features(self, columns: np.ndarray, n_features: int) -> None:
        self.model_.on_columns(columns, n_features)
        if self.feature_mean_ is not None:
            mean, scale = np.zeros(n_features), np.ones(n_features)
            mean[columns], scale[columns] = self.feature_mean_, self.feature_scale_
            self.feature_mean_, self.feature_scale_ = mean, scale
        self._fitted_features = n_features

    # ------------------------------------------------------------------ persistence
    @classmethod
    def _upgrade_params(cls, params: dict[str, Any], version: int, *, device: str | None = None) -> dict[str, Any]:
        if version < _PAYLOAD_VERSION_NETWORKS:
            params.setdefault("n_networks", 1)
        params.setdefault("lambda_normalization", "none")  # files from before it existed trained without
        if version < cls._auto_networks_since and params.get("n_networks") == "auto" and params.get("mode") != "pairwise":
            params["n_networks"] = 5  # what "auto" trained when the file was written
        if device is not None:
            params["device"] = device
        elif params.get("device", "cpu") != "cpu":
            torch = _require_torch()
            if not torch.cuda.is_available():
                params["device"] = "cpu"
        return params

    def _json_params(self) -> dict[str, Any]:
        params = super()._json_params()
        if self.loss is not None and not isinstance(self.loss, str):
            params["loss"] = "custom"  # a Loss object cannot be saved
        return params

    def _state_to_payload(self) -> dict[str, Any]:
        _require_torch()
        from safetensors.torch import save as st_save

        state = {k: v.detach().cpu().contiguous() for k, v in self.model_.state_dict().items()}
        blob = st_save(state, metadata={"format": "pt", "model_type": self._model_name})
        std = None
        if self.feature_mean_ is not None:
            std = {"mean": [float(v) for v in self.feature_mean_], "scale": [float(v) for v in self.feature_scale_]}
        return {
            "standardization": std,
            "train_loss": [v if math.isfinite(v) else None for v in map(float, self.train_loss_)],
            "position_bias": None if getattr(self, "position_bias_", None) is None
            else {k: v.tolist() for k, v in self.position_bias_.items()},
            "weights": {"format": "safetensors", "encoding": "base64", "data": base64.b64encode(blob).decode("ascii")},
        }

    def _state_from_payload(self, payload: dict[str, Any], version: int, *, device: str | None = None) -> None:
        _require_torch()
        from safetensors import SafetensorError
        from safetensors.torch import load as st_load

        from ranklearn.neural.scorer import MLPScorer

        n_features = self.n_features_in_
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
        try:
            state = st_load(base64.b64decode(weights["data"], validate=True))
        except SafetensorError as exc:
            raise ModelFormatError(f"malformed {self._model_name} weights: {exc}") from None
        if version < _PAYLOAD_VERSION_NETWORKS:
            state = {k.replace("net.", "members.0.", 1): v for k, v in state.items()}
        model = MLPScorer(n_features, self._sizes, self.activation, float(self.dropout), self._n_nets())
        try:
            model.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            raise ModelFormatError(f"malformed {self._model_name} weights: {exc}") from None
        model.to(self._torch_device())
        model.set_standardization(mean, scale)
        model.eval()
        self.model_ = model
        self._fitted_features = n_features
        self.feature_mean_, self.feature_scale_ = mean, scale
        if version < 3:
            self.max_grade_ = float(payload.get("max_grade", 1.0))
        self.train_loss_ = [math.nan if v is None else float(v) for v in payload.get("train_loss", [])]
        bias = payload.get("position_bias")
        self.position_bias_ = None if bias is None else {k: np.asarray(v, dtype=np.float64) for k, v in bias.items()}

    def _saved_iterations(self, payload: dict[str, Any]) -> int:
        return int(payload.get("n_epochs", len(payload.get("train_loss", []))))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags


def _all_finite(module) -> bool:
    import torch

    return bool(torch.stack([torch.isfinite(p).all() for p in module.parameters()]).all())
