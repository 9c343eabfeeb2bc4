"""The base estimator every ranker derives from: one ``fit``, ``predict``, ``score``, ``save``.

:class:`BaseRanker` owns everything the rankers share, so that they cannot drift apart:
parameter validation (declarative ``_parameter_constraints``, as scikit-learn's estimators),
query ids or group sizes, sample weights, feature names, evaluation sets, the metric, the
thread policy (:mod:`ranklearn._threads`), the training loop (:mod:`ranklearn.models.driver`:
early stopping, rollback, Ctrl-C, callbacks, progress), the ranking ``score`` and the model
file (versioned payloads, one policy for unknown saved parameters).

A ranker implements the hooks:

* ``_begin_fit(data, evals)`` -- set up the model from the training data and prepare the
  evaluation sets' rows (bin them, move them to a device...);
* ``_fit_step(iteration)``, ``_eval_scores(index)``, ``_snapshot()``, ``_restore(snapshot)``
  -- one iteration and the rollback, for the driver;
* ``_predict_raw(X)`` -- scores of a checked float32 matrix;
* ``_state_to_payload()`` / ``_state_from_payload(payload, version)`` -- its learned state
  in the model file (parameters and the shared fitted attributes are handled here);

and optionally ``_check_params()`` (rules across parameters), ``_check_labels(y)``,
``_fit_threads(n_rows)``, ``_predict_threads(n_rows)``, ``_shares_cpus()`` (n_jobs=None fits share the CPUs),
``_fit_context()``, ``_end_fit()`` (free the training buffers, build the predictor)
and ``_predicts_serially(n_rows)`` (True where ``_predict_raw`` of that many rows starts no parallel region:
``predict`` then sets no thread count).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from os import PathLike
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import validate_data

from ranklearn._threads import fit_threads, thread_limit
from ranklearn.exceptions import ModelFormatError
from ranklearn.foreign_names import OLD_AUTO_EARLY_STOPPING, RENAMED, hint, naming_other_tools
from ranklearn.metrics import Metric, get_metric, query_mean
from ranklearn.data.groups import group_ptr, regroup_order
from ranklearn.data.normalize import SPECS as NORMALIZE_SPECS
from ranklearn.data.normalize import Normalizer
from ranklearn.data.positions import check_position
from ranklearn.models.checks import as_dense_features, check_feature_values, check_ranking_data, check_weight, in_context
from ranklearn.models.driver import Callback, EvalData, run_training
from ranklearn.models.frames import split_query_column
from ranklearn.models.iterations import check_iteration_range, resolve_iteration_range

__all__ = [
    "BaseRanker", "FitData", "EvalSet", "named_eval_sets", "resolve_qid", "N_JOBS", "EARLY_STOPPING", "ROUTING_RECIPE",
    "auto_early_stopping_rounds",
]  # fmt: skip


def _n_jobs_constraint() -> list:
    from sklearn.utils._param_validation import Interval, Options

    return [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1}), None]


#: the ``_parameter_constraints`` entry of ``n_jobs`` (see :mod:`ranklearn._threads`)
N_JOBS = _n_jobs_constraint()

#: parameters every ranker takes, with their defaults, declared here once: each ranker's
#: ``__init__`` gets them as keyword-only arguments (:func:`_with_shared_params`), so that
#: scikit-learn's ``get_params``, ``clone`` and ``repr`` and the model file see them as any other
SHARED_PARAMS: dict[str, Any] = {"normalize": None, "features": None}


def _with_shared_params(init: Any) -> Any:
    """``init`` taking :data:`SHARED_PARAMS` too (set on the estimator after ``init`` ran, so that a
    subclass's ``__init__`` calling its parent's keeps the value it was given)."""
    sig = inspect.signature(init)
    extra = [n for n in SHARED_PARAMS if n not in sig.parameters]
    if not extra:
        return init

    @functools.wraps(init)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        shared = {n: kwargs.pop(n, SHARED_PARAMS[n]) for n in extra}
        init(self, *args, **kwargs)
        for name, value in shared.items():
            setattr(self, name, value)

    params = list(sig.parameters.values())
    tail = [p for p in params if p.kind is p.VAR_KEYWORD]
    added = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=SHARED_PARAMS[n]) for n in extra]
    wrapper.__signature__ = sig.replace(parameters=[p for p in params if p not in tail] + added + tail)  # type: ignore[attr-defined]
    return wrapper


def _early_stopping_constraint() -> list:
    from sklearn.utils._param_validation import Interval, StrOptions

    return [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None]


#: the ``_parameter_constraints`` entry of ``early_stopping_rounds``, the same in every ranker
EARLY_STOPPING = _early_stopping_constraint()


def auto_early_stopping_rounds(n_estimators: int) -> int:
    """What ``early_stopping_rounds="auto"`` means with an evaluation set, in every ranker
    (docs/DESIGN.md, "Vocabulary"): stop after max(20, n_estimators // 10) iterations without a
    gain (MART's 1000 trees: RankLib's 100; the networks' 100 epochs: 20)."""
    return max(20, int(n_estimators) // 10)


@dataclass
class FitData:
    """Checked training data: queries contiguous (``ptr``), rows reordered if they were not."""

    X: np.ndarray
    y: np.ndarray
    ptr: np.ndarray
    weight: np.ndarray | None
    #: 1-based display rank of each row in its logged list (int64), or None
    position: np.ndarray | None = None

    def side(self) -> dict[str, np.ndarray] | None:
        """The per-row side data objectives and losses receive (``{"position": ...}``), or None."""
        return None if self.position is None else {"position": self.position}


@dataclass
class EvalSet:
    """A checked evaluation set (features as float32; the model prepares its own copy)."""

    name: str
    X: np.ndarray
    y: np.ndarray
    ptr: np.ndarray


#: score() without queries: what scikit-learn's model selection needs
ROUTING_RECIPE = (
    "score needs the queries (qid= or group=). scikit-learn's GridSearchCV, RandomizedSearchCV and "
    "cross_val_score give them to score only with metadata routing: call "
    "sklearn.set_config(enable_metadata_routing=True) first, then search.fit(X, y, qid=qid, groups=qid) "
    "(cross_val_score(model, X, y, cv=GroupKFold(5), params={'qid': qid, 'groups': qid})); without it "
    "every fold scores nan"
)


def resolve_qid(qid: ArrayLike | None, group: ArrayLike | None, n_rows: int, what: str = "X") -> np.ndarray:
    """Per-row query ids from ``qid`` or from ``group`` (query sizes, as LightGBM and XGBoost take).

    Raises
    ------
    ValueError
        If neither or both are given, or the group sizes are not positive integers adding
        up to the number of rows.
    """
    if qid is None and group is None:
        raise ValueError(
            f"qid is required for {what} (a query id per row), or group= (query sizes): "
            "ranking models learn from queries"
        )
    if qid is not None and group is not None:
        raise ValueError(f"give qid= or group= for {what}, not both")
    if qid is not None:
        return np.asarray(qid).ravel()
    sizes = np.asarray(group).ravel()
    if sizes.dtype.kind not in "iu" and not (sizes.dtype.kind == "f" and np.array_equal(sizes, np.round(sizes))):
        raise ValueError(f"group must hold integer query sizes, got dtype {sizes.dtype}")
    sizes = sizes.astype(np.int64)
    if sizes.size == 0 or (sizes < 1).any():
        raise ValueError("group sizes must be positive integers (one per query, in row order)")
    if int(sizes.sum()) != n_rows:
        raise ValueError(f"group sizes add up to {int(sizes.sum())} rows, {what} has {n_rows}")
    return np.repeat(np.arange(sizes.size), sizes)


def named_eval_sets(
    eval_set: Sequence[tuple] | None, eval_group: Sequence[ArrayLike] | None, eval_names: Sequence[str] | None
) -> list[tuple[str, Any, Any, Any, Any]]:
    """The evaluation sets of a ``fit`` as ``(name, X, y, qid, group)`` (qid or group None), their
    names and shapes checked: the checks of every engine (one machine, Dask), before any data is read.

    ``eval_set`` is a list of ``(X, y, qid)`` or ``(X, y)`` (then ``eval_group`` gives each
    set's query sizes), or one such tuple; names default to ``valid_0``, ``valid_1``, ...

    Raises
    ------
    ValueError
        If ``eval_group`` or ``eval_names`` come without ``eval_set``, their lengths differ from
        the sets', names repeat, a set is not such a tuple or has neither qid nor group.
    """
    if eval_set is None:
        if eval_group is not None or eval_names is not None:
            raise ValueError("eval_group / eval_names given without eval_set")
        return []
    if isinstance(eval_set, tuple) and len(eval_set) in (2, 3) and not isinstance(eval_set[0], tuple):
        eval_set = [eval_set]  # one set given bare
    eval_set = list(eval_set)
    names = [f"valid_{i}" for i in range(len(eval_set))] if eval_names is None else [str(n) for n in eval_names]
    if len(names) != len(eval_set):
        raise ValueError(f"eval_names has {len(names)} names for {len(eval_set)} evaluation sets")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"evaluation set names must be distinct; repeated: {', '.join(map(repr, repeated))}")
    groups = [None] * len(eval_set) if eval_group is None else list(eval_group)
    if len(groups) != len(eval_set):
        raise ValueError(f"eval_group has {len(groups)} entries for {len(eval_set)} evaluation sets")
    out = []
    for name, item, grp in zip(names, eval_set, groups):
        if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
            raise ValueError(f"evaluation set {name!r} must be (X, y, qid), or (X, y) with eval_group")
        qid = item[2] if len(item) == 3 else None
        if qid is None and grp is None:
            raise ValueError(
                f"evaluation set {name!r} needs its queries: give it as (X, y, qid), or as (X, y) with "
                "eval_group= (query sizes of each set)"
            )
        out.append((name, item[0], item[1], qid, grp))
    return out


def _finite_or_none(v: float) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def metric_to_json(metric: str | Metric) -> str | dict[str, Any]:
    """A ``metric`` parameter as JSON: the spec string, or a Metric's spec and conventions."""
    if isinstance(metric, Metric):
        return {"spec": metric.name, "gain": metric.gain, "empty": metric.empty, "ties": metric.ties,
                "max_grade": metric.max_grade}  # fmt: skip
    return metric


def metric_from_json(value: str | dict[str, Any]) -> str | Metric:
    """Inverse of :func:`metric_to_json`."""
    if isinstance(value, dict):
        spec = value["spec"]
        return get_metric(spec, **{k: v for k, v in value.items() if k != "spec"})
    return value


class BaseRanker(BaseEstimator):
    """Base class of ranklearn's rankers (not used directly).

    Fitted attributes shared by every ranker: ``n_features_in_``, ``feature_names_in_`` (when
    fitted on a data frame with string column names), ``evals_result_`` (``{set: {metric:
    [value per iteration]}}``), ``best_iteration_`` (iterations of the best model on the
    watched set, 1-based; None without evaluation sets), ``best_score_`` (the watched set's
    metric at ``best_iteration_``), ``n_iter_`` (iterations run), ``interrupted_`` (fit
    stopped by Ctrl-C; the best model so far was kept) and ``max_grade_`` (the largest label
    of the training and evaluation sets, at least 1: ERR's top grade, fixed at fit; give the
    metric as ``get_metric("err@10", max_grade=4)`` to fix it yourself).

    Every ranker also takes ``normalize`` (:data:`SHARED_PARAMS`): None, or a spec of
    :data:`ranklearn.data.normalize.SPECS`. ``"zscore"``, ``"sum"``, ``"linear"`` fit one
    :class:`ranklearn.data.Normalizer` per feature on the training rows; ``"query-zscore"``,
    ``"query-sum"``, ``"query-linear"`` normalize each query's rows within the query, as
    RankLib's ``-norm`` does. The model trains on the normalized features, keeps the fitted
    normalizer (``normalizer_``, saved in the model file) and ``predict`` applies it: a
    per-query one needs the rows' queries (``predict(X, qid=...)``) and exports refuse it; a
    global one is folded into every export.

    And ``features`` (RankLib's ``-feature``): None (every column), or the 0-based columns of
    ``X`` to train on, distinct. The fitted model still takes whole rows (``n_features_in_``
    is the width of ``X``) and no other column changes its scores: the learned state is mapped
    back to the whole row at the end of fit (a split's feature, a weight of 0...), so the model
    predicts, saves, explains and exports as any other.
    """

    #: name in the registry and in model files
    _model_name: ClassVar[str] = ""
    _display_name: ClassVar[str] = ""
    #: what one iteration of this ranker is called ("tree", "epoch", "bag", "round", "restart",
    #: "solve"): the unit of ``n_estimators``, ``n_iter_``, ``best_iteration_`` and of the messages
    iteration_unit: ClassVar[str] = "iteration"
    #: whether the ranker takes missing values (NaN) in ``X``; scikit-learn's ``allow_nan`` tag
    #: (``sklearn.utils.get_tags(model).input_tags.allow_nan``) says it publicly
    _allow_nan: ClassVar[bool] = False
    _parameter_constraints: ClassVar[dict] = {}
    # scikit-learn's metadata routing (sklearn.set_config(enable_metadata_routing=True)): the
    # queries go to fit and score by default, fold by fold, in GridSearchCV, cross_val_score...
    __metadata_request__fit: ClassVar[dict] = {"qid": True, "group": True}
    __metadata_request__score: ClassVar[dict] = {"qid": True, "group": True}
    #: JSON types of the ranker's own payload fields (see ranklearn.io.payload_schema)
    _payload_fields: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: a ranker whose training rows are elsewhere (a cluster's) names itself here: it refuses
    #: ``normalize`` and ``features``, which need the rows on this machine
    _remote_rows: ClassVar[str] = ""
    #: the first payload version saved with issue 30's vocabulary (docs/DESIGN.md): older files'
    #: parameters are renamed by ``foreign_names.RENAMED`` and their "auto" restated
    _vocabulary_since: ClassVar[int] = 1

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # LightGBM's, XGBoost's and RankLib's names given to a ranker say "ranklearn calls it ..."
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _with_shared_params(cls.__dict__["__init__"])  # type: ignore[method-assign]
        for name in ("__init__", "fit"):
            if name in cls.__dict__:
                setattr(cls, name, naming_other_tools(cls.__dict__[name]))

    # ------------------------------------------------------------------ parameters
    def _validate_params(self) -> None:
        # scikit-learn's integer intervals accept True and False; a flag is never a count.
        from sklearn.utils._param_validation import InvalidParameterError, StrOptions, validate_parameter_constraints

        validate_parameter_constraints(
            {"normalize": [StrOptions(set(NORMALIZE_SPECS)), None]}, {"normalize": self.normalize}, type(self).__name__
        )
        for name in SHARED_PARAMS:
            if getattr(self, name) is not None and self._remote_rows:
                raise ValueError(
                    f"{name}={getattr(self, name)!r}: {self._remote_rows} trains on rows that are not on this "
                    f"machine; prepare the features first, or train a LambdaMART with {name}= on one machine"
                )
        self._feature_columns(None)

        for name, constraints in self._parameter_constraints.items():
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) and not {"boolean", "verbose"} & {c for c in constraints if isinstance(c, str)}:
                raise InvalidParameterError(
                    f"The {name!r} parameter of {type(self).__name__} must be a number, not a boolean. Got {value!r} instead."
                )
        super()._validate_params()

    def set_params(self, **params: Any) -> BaseRanker:
        """scikit-learn's ``set_params``; another tool's name for a parameter says ranklearn's."""
        for name in params:
            said = None if name.split("__")[0] in self._get_param_names() else hint(name, self._get_param_names())
            if said is not None:
                raise ValueError(f"Invalid parameter {name!r} for estimator {type(self).__name__}: {said}")
        return super().set_params(**params)

    def check_params(self) -> None:
        """Check every parameter (as ``fit`` does first), without data.

        Raises
        ------
        ValueError
            Naming the parameter (scikit-learn's ``InvalidParameterError`` for a value
            outside its ``_parameter_constraints``).
        """
        self._validate_params()
        if isinstance(self.metric, str):
            get_metric(self.metric)
        elif self.metric.ties == "docid":  # a Metric object (the constraints allow no other)
            raise ValueError(
                f"metric: {self._display_name} cannot use ties='docid' (conventions='trec_eval'): training data, "
                "evaluation sets and score() have no document ids; give the metric ties='stable' or 'average'"
            )
        self._check_params()

    def _check_params(self) -> None:
        """Rules across parameters (beyond ``_parameter_constraints``); raise ValueError."""

    def _side_keys(self) -> tuple[str, ...]:
        """The per-row side data (``FitData.side()`` keys) that this ranker's objective or loss reads."""
        return ()

    def _side_reader(self) -> str:
        """What would read side data, as a warning names it (e.g. "objective 'lambdarank'")."""
        return "its training"

    def _required_side(self) -> dict[str, str]:
        """The side data this ranker's settings cannot train without, each with the setting that
        needs it (e.g. ``{"position": "unbiased='pairwise'"}``)."""
        return {}

    def _check_required_side(self, given: Iterable[str]) -> None:
        """One clear error, before any training, when required side data was not given."""
        given = set(given)
        for key, setting in self._required_side().items():
            if key not in given:
                raise ValueError(
                    f"{self._display_name}({setting}) needs {key}=: the 1-based rank each row was shown at "
                    f"in its logged list; pass fit(..., {key}=...)"
                )

    def _warn_unread_side(self, side: Mapping[str, Any] | None) -> None:
        """Warn about side data the fit was given (``FitData.side()``) but will not use: never silence."""
        given = side or {}
        unread = [k for k in given if k not in self._side_keys()]
        if unread:
            warnings.warn(
                f"{self._display_name} ignores {unread[0]}=: {self._side_reader()} does not read it "
                f"(the model is the one it would be without {unread[0]}=)",
                UserWarning,
                stacklevel=3,
            )

    def evaluation_metric(self) -> Metric:
        """The evaluation metric; ERR's top grade fixed from the training labels, and the
        conventions the estimator's own parameters set (:meth:`_metric_conventions`)."""
        if isinstance(self.metric, Metric):
            return self.metric
        return get_metric(self.metric, max_grade=getattr(self, "max_grade_", None), **self._metric_conventions())

    def _metric_conventions(self) -> dict[str, str]:
        """Conventions of a metric given by name that follow the estimator's parameters."""
        return {}

    def early_stopping_patience(self, n_evals: int) -> int | None:
        """The rounds without improvement after which a fit watching ``n_evals`` evaluation sets
        stops (``early_stopping_rounds``, ``"auto"`` resolved for this ranker), None for never.

        Raises
        ------
        ValueError
            For rounds given with no evaluation set to watch.
        """
        rounds = self.early_stopping_rounds
        if isinstance(rounds, str):  # "auto"
            return auto_early_stopping_rounds(self._total()) if n_evals else None
        if rounds is not None and n_evals == 0:
            raise ValueError(
                f"early_stopping_rounds={rounds} needs an evaluation set to watch: pass eval_set=[(X, y, qid)]"
            )
        return rounds

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        qid: ArrayLike | None = None,
        *,
        group: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        position: ArrayLike | None = None,
        eval_set: Sequence[tuple] | None = None,
        eval_group: Sequence[ArrayLike] | None = None,
        eval_names: Sequence[str] | None = None,
        early_stopping_set: str | None = None,
        callbacks: Sequence[Callback] | None = None,
    ) -> BaseRanker:
        """Fit the ranker on queries.

        Parameters
        ----------
        X : array-like, sparse matrix or data frame, (n_samples, n_features)
            Held as float32, as XGBoost holds features: a feature with a large offset (a Unix
            timestamp: steps of 128 s) loses resolution; subtract the offset first.
        y : array-like (n_samples,), relevance labels
        qid : array-like (n_samples,) or str, optional
            Query id of each row (the rows of a query need not be contiguous); or the name of
            the column of the data frame ``X`` that holds them (then not a feature).
        group : array-like or str, optional
            Query sizes in row order, instead of ``qid`` (as LightGBM and XGBoost take); a
            column name is taken as ``qid=`` is.
        sample_weight : array-like (n_samples,), optional
            Multiplies each document's gradient (and hessian) for the gradient-trained rankers
            (LambdaMART, MART, random forest, the neural ones) and each row's squared error for
            linear regression; coordinate ascent and AdaRank weigh each query by its
            documents' mean weight (in the metric they maximize, and AdaRank's first
            distribution), RankBoost each pair by the mean of its two documents' weights: for
            these three a weight of 5 on a query counts it as five copies of it.
        position : array-like (n_samples,) of int, optional
            The 1-based rank at which each document was shown in its logged list (clicks
            data). Reordered with the rows and given to the objective or loss as side data
            (``side={"position": ...}``); ``predict`` never needs it. Whole numbers >= 1.
        eval_set : list of (X, y, qid), or of (X, y) with ``eval_group``
            Scored with ``metric`` after every iteration.
        eval_group : list of array-like, optional
            Query sizes of each evaluation set.
        eval_names : list of str, optional
            Distinct names of the evaluation sets (default ``valid_0``, ``valid_1``, ...).
        early_stopping_set : str, optional
            Name of the set that early stopping and ``best_iteration_`` watch. Default: the
            last evaluation set, as XGBoost does.
        callbacks : list of callables
            Called as ``cb(iteration, total, {set: {metric: value}})`` after every iteration.

        Returns
        -------
        self
        """
        self.check_params()
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        X, qid, group = split_query_column(X, qid, group)  # fit(df, y, qid="qid"): that column is no feature
        q = resolve_qid(qid, group, _n_rows(X))
        Xc, yc, ptr, order = check_ranking_data(X, y, q, allow_nan=self._allow_nan)
        data = FitData(
            Xc, yc, ptr, check_weight(sample_weight, Xc.shape[0], order), check_position(position, Xc.shape[0], order)
        )
        self._check_required_side(data.side() or {})
        self._warn_unread_side(data.side())
        self._check_labels(yc)
        was_fitted = self.__sklearn_is_fitted__()
        validate_data(self, X, reset=True, skip_check_array=True)  # n_features_in_, feature_names_in_
        evals = self._check_eval_sets(eval_set, eval_group, eval_names)
        normalizer = self._normalize_fit_data(data, evals)
        columns = self._feature_columns(Xc.shape[1])
        if columns is not None:  # train on those columns; _train maps the model back to whole rows
            data.X = np.ascontiguousarray(data.X[:, columns])
            for e in evals:
                e.X = np.ascontiguousarray(e.X[:, columns])
        # ERR's top grade: the largest label the fit sees, so that its evaluation sets are scored
        max_label = max([float(yc.max()), *(float(e.y.max()) for e in evals if e.y.size)])
        return self._train(
            data, evals, Xc.shape[0], max_label, early_stopping_set, callbacks, was_fitted, normalizer, columns
        )

    def _feature_columns(self, n_features: int | None) -> np.ndarray | None:
        """``features`` as int64 columns (None: every column), checked; against the width of ``X``
        when ``n_features`` is given.

        Raises
        ------
        ValueError
            Naming ``features``: not distinct whole numbers >= 0, none, or beyond ``X``.
        """
        if self.features is None:
            return None
        try:
            columns = np.asarray(self.features)
            ok = columns.ndim == 1 and columns.dtype.kind in "iu"
        except (TypeError, ValueError):
            ok = False
        if not ok or columns.size == 0 or (columns < 0).any() or np.unique(columns).size != columns.size:
            raise ValueError(
                f"features must be None or distinct 0-based column numbers (at least one), got {self.features!r}"
            )
        if n_features is not None and columns.max() >= n_features:
            raise ValueError(f"features: column {int(columns.max())} is beyond X's {n_features} columns (0-based)")
        return columns.astype(np.int64)

    def _widen_features(self, columns: np.ndarray, n_features: int) -> None:
        """Map the state learned on ``X[:, columns]`` to whole rows of ``n_features`` columns (a
        split on feature ``j`` becomes one on ``columns[j]``, the other columns' weights 0...), after
        ``_end_fit``; each ranker that trains on a subset of columns implements it."""
        raise NotImplementedError(f"{type(self).__name__} cannot train on part of the columns (features=)")

    def _normalize_fit_data(self, data: FitData, evals: Sequence[EvalSet]) -> Normalizer | None:
        """The ``normalize`` normalizer fitted on the training rows (None without ``normalize``),
        with the training rows and the evaluation sets normalized in place."""
        if self.normalize is None:
            return None
        norm = Normalizer.from_spec(self.normalize).fit(data.X, data.ptr)
        data.X = norm.transform(data.X, data.ptr)
        for e in evals:
            e.X = norm.transform(e.X, e.ptr)
        return norm

    def _train(
        self,
        data: Any,
        evals: Sequence[Any],
        n_rows: int,
        max_label: float,
        early_stopping_set: str | None,
        callbacks: Sequence[Callback] | None,
        was_fitted: bool,
        normalizer: Normalizer | None = None,
        columns: np.ndarray | None = None,
    ) -> BaseRanker:
        """Run the checked training data (``data`` and ``evals`` as ``_begin_fit`` takes them;
        an evaluation set has ``name``, ``y`` and ``ptr``) through the driver; set the fitted
        attributes (``normalizer_``: the one the rows went through, kept with the model the fit
        keeps; a fit interrupted before its first iteration keeps the previous model and its
        normalizer); a model trained on ``columns`` of the rows is mapped back to whole rows
        (:meth:`_widen_features`). Shared by ``fit`` and fits whose rows live elsewhere (:mod:`ranklearn.dask`)."""
        rounds = self.early_stopping_patience(len(evals))
        watch = self._watched(evals, early_stopping_set)
        self.max_grade_ = float(max(1.0, max_label))
        metric = self.evaluation_metric()
        callbacks = list(callbacks or [])
        progress = None
        if self.verbose:
            from ranklearn._progress import TrainingProgress

            progress = TrainingProgress(self._total(), description=self._display_name)
            callbacks.append(progress)
        outcome = None
        try:
            with fit_threads(self._fit_threads(n_rows), self._shares_cpus()) as share, self._fit_context():
                self._begin_fit(data, evals)
                share.rebalance()  # fits that started during the setup (binning) count from the first iteration
                outcome = run_training(
                    self,
                    total=self._total(),
                    evals=[EvalData(e.name, e.y, e.ptr) for e in evals],
                    metric=metric,
                    early_stopping_rounds=rounds,
                    watch=watch,
                    callbacks=[share.rebalance, *callbacks],
                    unit=self.iteration_unit,
                )
        except KeyboardInterrupt as exc:
            # the loop's outcome; or, for a Ctrl-C after the loop ended (a cluster fit's context
            # closing), the finished one: the iterations it ran are kept, not lost
            outcome = getattr(exc, "outcome", None) or outcome
            kept = outcome is not None and (outcome.n_iter > 0 or not was_fitted)
            if kept:
                self._set_outcome(outcome, normalizer)
            if self.__sklearn_is_fitted__():
                self._end_fit()
                if kept and columns is not None:
                    self._widen_features(columns, self.n_features_in_)
            raise
        finally:
            if progress is not None:
                progress.close()
        self._set_outcome(outcome, normalizer)
        self._end_fit()
        if columns is not None:
            self._widen_features(columns, self.n_features_in_)
        return self

    def _set_outcome(self, outcome, normalizer: Normalizer | None) -> None:
        self.normalizer_ = normalizer
        self.evals_result_ = outcome.evals_result
        self.best_iteration_ = outcome.best_iteration
        self.best_score_ = outcome.best_score
        self.n_iter_ = outcome.n_iter
        self.interrupted_ = outcome.interrupted

    def _total(self) -> int:
        return int(self.n_estimators)

    def _check_labels(self, y: np.ndarray) -> None:
        """Refuse labels the model cannot learn from (ValueError)."""

    def _fit_context(self) -> contextlib.AbstractContextManager:
        """Entered around the whole training (e.g. a seeded random state)."""
        return contextlib.nullcontext()

    def _fit_threads(self, n_rows: int) -> int | None:
        return self.n_jobs

    def _predict_threads(self, n_rows: int) -> int | None:
        return self._fit_threads(n_rows)

    def _shares_cpus(self) -> bool:
        # n_jobs=None shares the CPUs with the other fits running (ranklearn._threads.fit_threads)
        return self.n_jobs is None

    def _end_fit(self) -> None:
        """Called when a fit ends with a model (also after Ctrl-C): free training buffers,
        build what ``predict`` needs (so that ``predict`` never changes the estimator)."""

    def _check_eval_sets(
        self, eval_set: Sequence[tuple] | None, eval_group: Sequence[ArrayLike] | None, eval_names: Sequence[str] | None
    ) -> list[EvalSet]:
        out = []
        for name, Xe, ye, qe, grp in named_eval_sets(eval_set, eval_group, eval_names):
            Xe, qe, grp = split_query_column(Xe, qe, grp, what=f"evaluation set {name!r}")
            q = resolve_qid(qe, grp, _n_rows(Xe), what=f"evaluation set {name!r}")
            try:
                Xc, yc, pc, _ = check_ranking_data(Xe, ye, q, allow_nan=self._allow_nan)
            except ValueError as exc:  # the same error, saying which set
                raise in_context(exc, f"evaluation set {name!r}") from None
            if Xc.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"evaluation set {name!r} has {Xc.shape[1]} features, the training data has {self.n_features_in_}"
                )
            validate_data(self, Xe, reset=False, skip_check_array=True)  # same feature names as the training data
            out.append(EvalSet(name, Xc, yc, pc))
        return out

    @staticmethod
    def _watched(evals: list[EvalSet], early_stopping_set: str | None) -> int | None:
        if not evals:
            if early_stopping_set is not None:
                raise ValueError(f"early_stopping_set={early_stopping_set!r} but no eval_set was given")
            return None
        if early_stopping_set is None:
            return len(evals) - 1
        names = [e.name for e in evals]
        if early_stopping_set not in names:
            raise ValueError(f"early_stopping_set={early_stopping_set!r} is not one of the evaluation sets {names}")
        return names.index(early_stopping_set)

    def _set_imported(self, n_features: int, n_iter: int) -> None:
        """The fitted attributes of a model read from another tool's file: no training history."""
        self.n_features_in_ = int(n_features)
        self.max_grade_ = 1.0
        self.evals_result_ = {}
        self.best_iteration_ = self.best_score_ = None
        self.n_iter_ = int(n_iter)
        self.interrupted_ = False

    # ------------------------------------------------------------------ predict / score
    def __sklearn_is_fitted__(self) -> bool:
        return getattr(self, "n_iter_", 0) > 0

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit() or load a model first")

    def predict(
        self,
        X: ArrayLike,
        iteration_range: tuple[int, int] | None = None,
        *,
        num_iteration: int | None = None,
        start_iteration: int = 0,
        qid: ArrayLike | None = None,
        group: ArrayLike | None = None,
    ) -> np.ndarray:
        """Scores of the rows of ``X`` (float64; higher ranks first). No query ids needed, but
        by a model fitted with a per-query ``normalize`` (``"query-zscore"``...).

        Parameters
        ----------
        X : array-like, sparse matrix or data frame
        iteration_range : (int, int), optional
            Score with iterations ``start+1..end`` of the kept model only (XGBoost's name;
            see :meth:`iterations`). Default: the whole kept model, which after a fit with an
            evaluation set is its best iteration (``best_iteration_``).
        num_iteration, start_iteration : int, optional
            LightGBM's names for the same range: ``(start_iteration, start_iteration +
            num_iteration)``; ``num_iteration`` None or <= 0 goes to the end.
        qid, group : array-like, optional
            The rows' queries (query ids, or query sizes in row order), read only by a model
            fitted with a per-query ``normalize``: it normalizes each query's rows within the
            query, as at fit. Other models score each row alone and ignore them.

        Raises
        ------
        ValueError
            If ``X`` has another number of features (or other feature names) than the
            training data, or holds values the model cannot score; or a range this model
            does not have; or the queries are missing for a per-query ``normalize``.
        """
        self._check_fitted()
        if iteration_range is not None or num_iteration is not None or start_iteration != 0:
            start, end = resolve_iteration_range(iteration_range, num_iteration, start_iteration, self._n_kept(), self.iteration_unit)
            return self.iterations(start, end).predict(X, qid=qid, group=group)
        Xc = self._checked_features(X, qid, group)
        if self._predicts_serially(Xc.shape[0]):
            return self._predict_raw(Xc)  # no thread count to set (that costs ~10 us, 1% of a 100-row query)
        with thread_limit(self._predict_threads(Xc.shape[0])):
            return self._predict_raw(Xc)

    def _checked_features(self, X: ArrayLike, qid: ArrayLike | None = None, group: ArrayLike | None = None) -> np.ndarray:
        """``X`` as the dense array prediction reads, after the checks of :meth:`predict`, through
        ``normalizer_`` when the model has one (``qid``/``group``: the rows' queries, for a per-query one)."""
        self._check_fitted()
        Xc = as_dense_features(X)
        # scikit-learn's checks of the feature count and names; they pass with nothing to say for a
        # plain array of the right width given to a model fitted without names, which skips them
        # (half of the Python time of a 100-row call around the trees)
        if type(X) is not np.ndarray or hasattr(self, "feature_names_in_") or Xc.shape[1] != self.n_features_in_:
            validate_data(self, X, reset=False, skip_check_array=True)
        check_feature_values(Xc, allow_nan=self._allow_nan)
        norm = self._normalizer()
        if norm is None:
            return Xc
        if not norm.per_query:
            return norm.transform(Xc)
        if qid is None and group is None:
            raise ValueError(
                f"this {type(self).__name__} normalizes each query's features within the query "
                f"(normalize={self.normalize!r}, RankLib's -norm): scoring needs the rows' queries, predict(X, qid=...) "
                "or group= (feature contributions take none: they are not available for such a model)"
            )
        q = resolve_qid(qid, group, Xc.shape[0])
        if q.shape[0] != Xc.shape[0]:
            raise ValueError(f"qid has {q.shape[0]} values for {Xc.shape[0]} rows")
        order = regroup_order(q)  # each query's rows together, as the normalizer reads them
        out = np.empty_like(Xc)
        out[order] = norm.transform(Xc[order], group_ptr(q[order]))
        return out

    def iterations(self, start: int, end: int) -> BaseRanker:
        """A fitted copy holding only iterations ``start+1..end`` of the kept model.

        An iteration is a tree (LambdaMART, MART), a bag (random forest) or a weak ranker
        (RankBoost); the copy predicts, saves and exports as any model (``export --iterations``).
        It has no training history (``evals_result_`` empty, ``best_iteration_`` None).

        Raises
        ------
        ValueError
            For a range outside ``0 <= start < end <= kept``, or a partial range of a ranker
            whose iterations all update one set of weights (neural, coordinate ascent,
            AdaRank, linear): only the kept weights exist.
        """
        self._check_fitted()
        kept = self._n_kept()
        start, end = check_iteration_range((start, end), kept, self.iteration_unit, name="iterations")
        if (start, end) == (0, kept):
            part = copy.copy(self)
        else:
            part = self._part(start, end)
            part.evals_result_, part.best_iteration_, part.best_score_, part.interrupted_ = {}, None, None, False
            part.n_iter_ = end - start
        return part

    @classmethod
    def parameter_constraints(cls) -> dict[str, list[Any]]:
        """The scikit-learn constraints of each of the ranker's own parameters (a copy of the
        ``_parameter_constraints`` that scikit-learn's validation reads; ``normalize`` and
        ``features``, every ranker's, are :data:`SHARED_PARAMS`): ``ranklearn train`` derives
        its options and their types from them."""
        return dict(cls._parameter_constraints)

    def n_kept_iterations(self) -> int:
        """The number of iterations (:attr:`iteration_unit`) of the kept model, which ``predict``
        uses by default: its best iteration on the watched evaluation set, or every iteration run
        when there is none (``iterations(0, n)`` is the whole model).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit`` or a load.
        """
        self._check_fitted()
        return self._n_kept()

    def _n_kept(self) -> int:
        """:meth:`n_kept_iterations` of a fitted model; rankers that hold their iterations (trees,
        bags, weak rankers) count them."""
        return self.best_iteration_ if self.best_iteration_ is not None else self.n_iter_

    def _part(self, start: int, end: int) -> BaseRanker:
        """A copy of the fitted model with iterations ``start+1..end`` only (0 <= start < end <= kept,
        not the whole model); rankers whose iterations add up override it."""
        raise ValueError(
            f"{type(self).__name__} cannot score part of its {self.iteration_unit}s ({start}, {end}): its {self.iteration_unit}s are "
            f"not parts that add up, and only the kept model's weights exist; the only range is the whole model, "
            f"(0, {self._n_kept()})"
        )

    def _predicts_serially(self, n_rows: int) -> bool:
        """True when predicting ``n_rows`` rows runs no parallel region, so ``predict`` sets no thread count."""
        return False

    def score(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        qid: ArrayLike | None = None,
        group: ArrayLike | None = None,
    ) -> float:
        """Mean of the model's ``metric`` over the queries of ``X`` (with the metric's conventions).

        ``sample_weight`` (per row) weights each query by the mean weight of its documents.
        """
        self._check_fitted()
        if qid is None and group is None and sample_weight is not None:
            raise ValueError(
                "score needs the queries as qid= or group=; its third positional argument is "
                "sample_weight, as in scikit-learn"
            )
        X, qid, group = split_query_column(X, qid, group)
        if qid is None and group is None:
            raise ValueError(ROUTING_RECIPE)
        q = resolve_qid(qid, group, _n_rows(X))
        scores = self.predict(X, qid=q)
        _, yc, ptr, order = check_ranking_data(scores[:, None], y, q)
        if order is not None:
            scores = scores[order]
        metric = self.evaluation_metric()
        if metric.uses_max_grade and not isinstance(self.metric, Metric) and yc.size and yc.max() > metric.max_grade:
            # the metric's own advice (max_grade=) names no parameter of the estimator
            raise ValueError(
                f"{metric.name}: label {yc.max():g} exceeds the top grade of the model's ERR scale, "
                f"max_grade_={metric.max_grade:g}; to score on another scale, set "
                f'metric=get_metric("{self.metric}", max_grade=<top grade>) (set_params: no refit needed)'
            )
        values = metric.per_query(yc, scores, ptr)
        weight = check_weight(sample_weight, yc.shape[0], order)
        if weight is None:
            return query_mean(values)
        qw = np.add.reduceat(weight, ptr[:-1]) / np.diff(ptr)
        keep = ~np.isnan(values)
        if not keep.any() or qw[keep].sum() == 0:
            return math.nan
        return float(np.average(values[keep], weights=qw[keep]))

    # ------------------------------------------------------------------ persistence
    def _json_params(self) -> dict[str, Any]:
        out = {}
        for key, val in self.get_params(deep=False).items():
            if isinstance(val, np.generic):
                val = val.item()
            if key == "propensity" and val is not None:  # numbers per rank, or a ranklearn.clicks.Propensity
                val = np.asarray(getattr(val, "propensity", val), dtype=np.float64)
            if isinstance(val, (tuple, np.ndarray)):
                val = val.tolist() if isinstance(val, np.ndarray) else list(val)
            if key == "random_state" and not (val is None or (isinstance(val, Integral) and not isinstance(val, bool))):
                val = None  # a RandomState / Generator object is not serializable
            if key == "metric":
                val = metric_to_json(val)
            out[key] = val
        return out

    def _to_payload(self) -> dict[str, Any]:
        from ranklearn.registry import get_spec

        self._check_fitted()
        names = getattr(self, "feature_names_in_", None)
        return {
            "payload_version": get_spec(self._model_name).payload_version,
            "params": self._json_params(),
            "n_features": int(self.n_features_in_),
            "feature_names": None if names is None else [str(n) for n in names],
            "max_grade": self.max_grade_,
            "evals_result": {
                s: {m: [_finite_or_none(v) for v in vals] for m, vals in d.items()} for s, d in self.evals_result_.items()
            },
            "best_iteration": self.best_iteration_,
            "best_score": None if self.best_score_ is None else _finite_or_none(self.best_score_),
            "n_iter": int(self.n_iter_),
            "interrupted": bool(self.interrupted_),
            "normalizer": None if self._normalizer() is None else self._normalizer().to_dict(),
            **self._state_to_payload(),
        }

    @classmethod
    def _upgrade_params(cls, params: dict[str, Any], version: int) -> dict[str, Any]:
        """Parameters saved by an older payload version, in today's names."""
        return params

    @classmethod
    def _upgrade_vocabulary(cls, params: dict[str, Any], version: int) -> dict[str, Any]:
        """Parameters saved before issue 30's vocabulary under today's names (``foreign_names.RENAMED``,
        all at once: a forest's old ``n_estimators`` is ``trees_per_bag``), with an old
        ``early_stopping_rounds="auto"`` restated as what it trained with when today's "auto"
        differs (``foreign_names.OLD_AUTO_EARLY_STOPPING``; None: the best kept without stopping)."""
        if version >= cls._vocabulary_since:
            return params
        renamed = RENAMED.get(cls._model_name, {})
        params = {renamed.get(name, name): value for name, value in params.items()}
        if params.get("early_stopping_rounds") == "auto" and cls._model_name in OLD_AUTO_EARLY_STOPPING:
            old = OLD_AUTO_EARLY_STOPPING[cls._model_name]
            n_estimators = params.get("n_estimators", cls().n_estimators)
            if old is None or old != auto_early_stopping_rounds(n_estimators):
                params["early_stopping_rounds"] = old
        return params

    @classmethod
    def from_payload(cls, payload: dict[str, Any], **load_options: Any) -> BaseRanker:
        """Rebuild a fitted model from a model-file payload.

        Unknown saved parameters are refused (a file from a newer ranklearn), and so is a
        payload version newer than this ranklearn writes.

        Raises
        ------
        ModelFormatError
        """
        from ranklearn.io.payload_schema import check_fields, check_shared
        from ranklearn.registry import get_spec

        # before any value is read
        version, n_features = check_shared(payload, cls._model_name, get_spec(cls._model_name).payload_version)
        check_fields(payload, cls._payload_fields, cls._model_name)
        params = cls._upgrade_params(cls._upgrade_vocabulary(dict(payload["params"]), version), version)
        unknown = sorted(set(params) - set(cls._get_param_names()))
        if unknown:
            raise ModelFormatError(
                f"{cls._model_name} model saved with parameters this ranklearn does not know: {', '.join(unknown)}; "
                "upgrade ranklearn"
            )
        if "metric" in params:
            params["metric"] = metric_from_json(params["metric"])
        if isinstance(params.get("hidden"), list):
            params["hidden"] = tuple(params["hidden"])
        model = cls(**params)
        model.check_params()
        model.n_features_in_ = n_features
        names = payload.get("feature_names")
        if names is not None:
            if len(names) != model.n_features_in_:
                raise ModelFormatError(f"{len(names)} feature names for {model.n_features_in_} features")
            model.feature_names_in_ = np.asarray(names, dtype=object)
        model.max_grade_ = float(payload.get("max_grade") or 1.0)
        model.evals_result_ = {
            s: {m: [math.nan if v is None else float(v) for v in vals] for m, vals in d.items()}
            for s, d in payload.get("evals_result", {}).items()
        }
        best = payload.get("best_iteration")
        model.best_iteration_ = None if best is None else int(best)
        model.best_score_ = payload.get("best_score")
        model.interrupted_ = bool(payload.get("interrupted", False))
        model.normalizer_ = model._normalizer_from_payload(payload.get("normalizer"))
        model._state_from_payload(payload, version, **load_options)
        # _saved_iterations only for files that predate n_iter (the base one raises)
        model.n_iter_ = int(payload["n_iter"] if "n_iter" in payload else model._saved_iterations(payload))
        return model

    def _normalizer(self) -> Normalizer | None:
        """The fitted ``normalizer_`` (None for a model without, or read from another tool)."""
        return getattr(self, "normalizer_", None)

    def _normalizer_from_payload(self, saved: dict[str, Any] | None) -> Normalizer | None:
        """The saved normalizer, checked against the ``normalize`` parameter and the feature count."""
        if saved is None:
            if self.normalize is not None:
                raise ModelFormatError(f"{self._model_name} payload has normalize={self.normalize!r} but no normalizer")
            return None
        try:
            norm = Normalizer.from_dict(saved)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"{self._model_name} payload has a malformed normalizer ({type(exc).__name__}: {exc})") from None
        if norm.spec != self.normalize:
            raise ModelFormatError(f"{self._model_name} payload's normalizer is {norm.spec!r}, its normalize parameter {self.normalize!r}")
        n = self.n_features_in_
        params = {} if norm.per_query else getattr(norm, "params_", None)
        if getattr(norm, "n_features_in_", None) != n or params is None or any(v.shape != (n,) for v in params.values()):
            raise ModelFormatError(f"{self._model_name} payload's normalizer is not fitted on its {self.n_features_in_} features")
        return norm

    def _saved_iterations(self, payload: dict[str, Any]) -> int:
        """Iterations of a model file that predates ``n_iter``."""
        raise KeyError("n_iter")

    def save(self, path: str | PathLike[str]) -> None:
        """Write the model as a versioned, checksummed JSON file (atomically)."""
        from ranklearn.io.model_file import write_model_file

        write_model_file(path, self._model_name, self._to_payload())

    @classmethod
    def load(cls, path: str | PathLike[str], **load_options: Any) -> BaseRanker:
        """Read a model written by :meth:`save`.

        Raises
        ------
        ModelFormatError
            If the file is not a ranklearn model of this class.
        """
        from ranklearn.io import load_model

        model = load_model(path, **load_options)
        if not isinstance(model, cls):
            raise ModelFormatError(
                f"model file holds a model_type {model._model_name!r} model, not a {cls._model_name!r} model", path=path
            )
        return model

    # ------------------------------------------------------------------ scikit-learn
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._allow_nan
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags


BaseRanker.fit = naming_other_tools(BaseRanker.fit)  # type: ignore[method-assign]


def _n_rows(X: Any) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        raise ValueError(f"X must be a 2-D array of features, got {type(X).__name__}") from None

