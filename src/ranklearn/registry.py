"""The model registry: every ranker declared once.

A :class:`ModelSpec` names a ranker on the command line (``--model``), says where its class
lives (imported only when needed, so ``import ranklearn`` and the CLI stay fast and torch is
loaded only for the neural models), its command-line options, the version of its model-file
payload and its demo settings. ``ranklearn.io.load_model``, the CLI's ``--model`` choices and
option checks, ``ranklearn demo`` and the README's model table all read :data:`REGISTRY`.

Adding a ranker is one module (the estimator, a :class:`ranklearn.models.base.BaseRanker`)
and one :func:`register` call here. This module imports no model: ``io`` and ``cli`` depend
on it, and the models on ``io``, without a cycle.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Option", "ModelSpec", "REGISTRY", "STRUCTURES", "WARMUP_GROUPS", "register", "unregister", "get_spec",
    "get_model_class", "model_names", "spec_of", "markdown_table", "parse_auto_or_count", "option_flag", "NOT_OPTIONS",
]  # fmt: skip


@dataclass(frozen=True)
class Option:
    """A command-line option of ``ranklearn train`` and the estimator parameter it sets: its
    short flag and help, where the generated ``--name-with-dashes`` and the docstring's first
    line would not do (every parameter is an option: ``cli._train.model_options`` generates the
    others from the rankers' ``_parameter_constraints``, which also give the type and choices).

    Parameters
    ----------
    flag : str
        The option as typed, e.g. ``"--leaves"``.
    param : str
        The estimator parameter, e.g. ``"num_leaves"``.
    type : type
        ``int``, ``float`` or ``str`` (what the command line parses).
    help : str
        One line for ``--help`` (the CLI adds the models it applies to).
    choices : tuple of str, optional
        Allowed values of a ``str`` option.
    parse : callable, optional
        Turns the parsed value into the parameter value (e.g. ``"64,32"`` -> ``(64, 32)``);
        raises ValueError naming the option on bad input.
    """

    flag: str
    param: str
    type: type
    help: str
    choices: tuple[str, ...] | None = None
    parse: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class ModelSpec:
    """One ranker: its CLI name, class, options, file payload version and demo settings.

    Parameters
    ----------
    name : str
        Name on the command line and ``model_type`` in model files.
    target : str
        ``"module:Class"`` of the estimator, imported on first use.
    summary : str
        One line for the README and ``--help``.
    options : tuple of Option
        Options ``ranklearn train`` accepts for this model.
    payload_version : int
        Version of the model-file payload this ranklearn writes; files with a higher version
        are refused.
    demo : dict
        Estimator parameters for ``ranklearn demo`` (train in seconds on the demo data).
    extra : str or None
        The pip extra the model needs (``"neural"`` for torch), named in errors.
    ranklib : int or None
        RankLib's ``-ranker`` number of the same method.
    structure : str or None
        What the model is made of, as the exports read it (:data:`STRUCTURES`): ``"trees"``
        (``trees_``, summed), ``"forest"`` (``bags_`` of trees, averaged), ``"linear"``
        (``intercept_ + coef_ . x``), ``"network"`` (a torch scorer, ``model_``); None: none of these.
    exports : tuple of str
        The formats of :func:`ranklearn.io.export_model` that hold it.
    contributions : bool
        It has ``predict_contributions`` (feature contributions, :mod:`ranklearn.explain`).
    positions : bool
        Its ``fit`` can give the rows' display positions (``position=``, learning from clicks) to
        what it trains on: its debiasing settings (``unbiased=``, the click losses) and a user's
        tree ``objective=`` whose ``gradients`` takes ``side=`` or neural ``loss=`` naming
        ``"position"`` in ``side_keys`` receive them in the rows' training order; its other
        settings warn that they ignore them. False: no setting reads them (a fit warns, or
        refuses such an object). ``tests/test_models_positions.py`` checks both against the fit.
    warmup : str or None
        The ``ranklearn warm-up`` group that fits it (:data:`WARMUP_GROUPS`); None: not warmed up.
    test : dict
        Estimator parameters of the shared tests (scikit-learn's checks, the command line, model
        files, the warm-up): a fit of a few iterations on tiny data.
    served : str or None
        How ``ranklearn predict`` scores a saved model without building the estimator (which
        imports scikit-learn): ``"trees"`` (the payload's ``trees``), ``"bags"`` (the mean of
        its ``bags`` of trees), ``"linear"`` (``coef`` and ``intercept``); see
        :mod:`ranklearn.models.serving`. None: the estimator is built.
    """

    name: str
    target: str
    summary: str
    options: tuple[Option, ...] = ()
    payload_version: int = 1
    demo: dict[str, Any] = field(default_factory=dict)
    extra: str | None = None
    ranklib: int | None = None
    structure: str | None = None
    exports: tuple[str, ...] = ()
    contributions: bool = False
    positions: bool = False
    warmup: str | None = None
    test: dict[str, Any] = field(default_factory=dict)
    served: str | None = None

    def load_class(self) -> type:
        """Import and return the estimator class.

        Raises
        ------
        ImportError
            Saying which extra to install when a dependency (torch) is missing.
        """
        module_name, _, attr = self.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            hint = f"; install it with: pip install 'ranklearn[{self.extra}]'" if self.extra else ""
            raise ImportError(f"model {self.name} needs a package that is missing ({exc}){hint}") from exc
        return getattr(module, attr)


REGISTRY: dict[str, ModelSpec] = {}
#: what a model can be made of, as the exports read it (``ModelSpec.structure``)
STRUCTURES = ("trees", "forest", "linear", "network")
#: the groups of ``ranklearn warm-up``, each run in a process of its own (``ModelSpec.warmup``)
WARMUP_GROUPS = ("trees", "rest")


def register(spec: ModelSpec) -> ModelSpec:
    """Add a ranker. Its name must be new, and an option flag shared with another model must
    set the same parameter with the same type.

    Raises
    ------
    ValueError
        On a repeated name or a conflicting option.
    """
    if spec.name in REGISTRY:
        raise ValueError(f"a model named {spec.name!r} is registered already")
    if spec.structure is not None and spec.structure not in STRUCTURES:
        raise ValueError(f"structure of {spec.name} must be one of {', '.join(STRUCTURES)} or None, got {spec.structure!r}")
    if spec.warmup is not None and spec.warmup not in WARMUP_GROUPS:
        raise ValueError(f"warmup of {spec.name} must be one of {', '.join(WARMUP_GROUPS)} or None, got {spec.warmup!r}")
    for other in REGISTRY.values():
        for a in spec.options:
            for b in other.options:
                if a.flag == b.flag and (a.param, a.type, a.choices) != (b.param, b.type, b.choices):
                    raise ValueError(
                        f"option {a.flag} of {spec.name} conflicts with {other.name}'s "
                        f"({a.param}: {a.type.__name__} vs {b.param}: {b.type.__name__})"
                    )
    REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a ranker (for tests that register a model of their own)."""
    REGISTRY.pop(name, None)


def model_names() -> list[str]:
    """Registered model names, in registration order."""
    return list(REGISTRY)


def get_spec(name: str) -> ModelSpec:
    """The spec of a model name (case-insensitive).

    Raises
    ------
    ValueError
        Naming the unknown model and the known ones.
    """
    spec = REGISTRY.get(str(name).lower())
    if spec is None:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(REGISTRY)}")
    return spec


def spec_of(model: Any) -> ModelSpec | None:
    """The spec of an estimator (or class): the first class of its method resolution order that a
    spec names as its target (a subclass of a registered ranker is that ranker); None for another
    object. Imports nothing."""
    targets = {spec.target: spec for spec in REGISTRY.values()}
    cls = model if isinstance(model, type) else type(model)
    for base in cls.__mro__:
        spec = targets.get(f"{base.__module__}:{base.__qualname__}")
        if spec is not None:
            return spec
    return None


def get_model_class(name: str) -> type:
    """The estimator class of a model name (imports it)."""
    return get_spec(name).load_class()


def markdown_table() -> str:
    """The README's table of rankers (``tools/readme_models.py`` writes it into README.md)."""
    rows = ["| `--model` | Python class | RankLib `-ranker` | what it is |", "|---|---|---|---|"]
    for spec in REGISTRY.values():
        module, _, cls = spec.target.partition(":")
        ranklib = "" if spec.ranklib is None else str(spec.ranklib)
        extra = f" (needs `ranklearn[{spec.extra}]`)" if spec.extra else ""
        rows.append(f"| `{spec.name}` | `{module}.{cls}` | {ranklib} | {spec.summary}{extra} |")
    return "\n".join(rows)


#: ranker parameters that are no option of ``ranklearn train``, and why
NOT_OPTIONS: dict[str, str] = {
    "verbose": "the command draws its own progress bar",
    "warm_start": "every command fits a new estimator",
}


def option_flag(param: str) -> str | None:
    """The command-line flag of a ranker parameter: its :class:`Option`'s (one flag per parameter,
    whichever rankers take it), else ``--name-with-dashes``; None for :data:`NOT_OPTIONS`."""
    if param in NOT_OPTIONS:
        return None
    for spec in REGISTRY.values():
        for option in spec.options:
            if option.param == param:
                return option.flag
    return "--" + param.replace("_", "-")


def names_markdown_table() -> str:
    """The README's table of other tools' names (:mod:`ranklearn.foreign_names`) for every ranker
    parameter (imports the rankers; a ranker whose extra is missing is left out) and fit argument."""
    import inspect

    from ranklearn.foreign_names import markdown_table as names_table

    parameters: dict[str, str] = {}
    for spec in REGISTRY.values():
        try:
            cls = spec.load_class()
        except ImportError:
            continue
        for name in cls._get_param_names():
            parameters.setdefault(name, option_flag(name) or "")
        fit = [p for p in inspect.signature(cls.fit).parameters if p not in ("self", "X", "y")]
    for name in fit:
        parameters.setdefault(f"fit({name}=)", FIT_OPTIONS.get(name, ""))
    return names_table(parameters)


#: ``ranklearn train``'s options for the arguments of ``fit`` (the others have none)
FIT_OPTIONS = {"sample_weight": "--weight-file", "position": "--position-file"}


# ------------------------------------------------------------------------------ the rankers
def parse_auto_or_count(value: str) -> int | str:
    """``"20"`` -> 20; any other word is passed on as typed (``"auto"``; the ranker's check names a wrong one)."""
    text = str(value).strip()
    return int(text) if text.isascii() and text.isdigit() else text


def _parse_floats(value: str) -> tuple[float, ...]:
    """``"1,0.6,0.4"`` -> ``(1.0, 0.6, 0.4)``."""
    try:
        return tuple(float(p) for p in str(value).split(","))
    except ValueError:
        raise ValueError(f"--propensity must be comma-separated numbers such as 1,0.6,0.4; got {value!r}") from None


def _parse_hidden(value: str) -> tuple[int, ...]:
    """``"64,32"`` -> ``(64, 32)``; an empty string gives a linear scorer ``()``."""
    text = str(value).strip()
    parts = [p.strip() for p in text.split(",")] if text else []
    if not all(p.isascii() and p.isdigit() and int(p) > 0 for p in parts):  # "64,,32" is a typo, not (64, 32)
        raise ValueError(f"--hidden must be comma-separated positive layer sizes such as 64,32; got {value!r}")
    return tuple(int(p) for p in parts)


# Options several models share are defined once.
_LEARNING_RATE = Option("--learning-rate", "learning_rate", float,
                        "Step of each update: each tree's leaf values times it (trees), the optimizer's step (networks).")
_METRIC = Option("--metric", "metric", str, "Metric watched on --validate, e.g. ndcg@10, err@10, map.")
_EARLY = Option("--early-stopping", "early_stopping_rounds", str,
                "Stop after this many iterations without improvement on --validate; auto: max(20, n_estimators / 10).",
                parse=parse_auto_or_count)  # fmt: skip
_SEED = Option("--seed", "random_state", int, "Random seed.")
_SIGMA = Option("--sigma", "sigma", float, "Steepness of the pairwise sigmoid.")
_THREADS = Option(
    "--threads",
    "n_jobs",
    int,
    "Threads (default: every CPU this process may use; the neural rankers train on one and predict on every CPU).",
)
_LEAVES = Option("--leaves", "num_leaves", int, "Leaves per tree.")
_MIN_LEAF = Option("--min-leaf-samples", "min_samples_leaf", int, "Minimum documents per leaf.")
_MAX_BINS = Option("--max-bins", "max_bins", int, "Histogram bins per feature.")
_LEAF_ORDER = Option("--leaf-order", "leaf_order", str,
                     "Which leaf is split next: the best split's gain (LightGBM) or the leaf's deviance (RankLib).",
                     choices=("gain", "deviance"))  # fmt: skip
#: what every ranker of boosted trees takes
_TREE_GROWTH = (_LEAVES, _LEARNING_RATE, _MIN_LEAF, _LEAF_ORDER, _MAX_BINS, _METRIC, _EARLY, _THREADS, _SEED)
_UNBIASED = Option(
    "--unbiased", "unbiased", str,
    "Learn from clicks: debias by the rows' positions (--position-file or the FILE.position sidecar); "
    "lambdarank/ranknet objectives.",
    choices=("pairwise", "position_factors", "ipw"),
)  # fmt: skip
#: the given propensities of inverse propensity weighting, of the trees (--unbiased ipw) and the networks (--loss ipw)
_PROPENSITY = Option("--propensity", "propensity", str,
                     "--unbiased ipw (trees), --loss ipw (networks): examination propensity per rank from 1, e.g. "
                     "1,0.6,0.4 (ranks past the list take its last value).", parse=_parse_floats)  # fmt: skip
_PROPENSITY_CLIP = Option("--propensity-clip", "propensity_clip", float,
                          "--unbiased ipw (trees), --loss ipw (networks): propensities below it count as it "
                          "(inverse weights at most 1 / clip).")  # fmt: skip
_TREE_OPTIONS = (
    *_TREE_GROWTH,
    _UNBIASED,
    _PROPENSITY,
    _PROPENSITY_CLIP,
    _SIGMA,
    Option("--objective", "objective", str, "Tree objective: lambdarank, ranknet, squared_error or xendcg."),
)
_TREE_DEMO = dict(n_estimators=150, learning_rate=0.1, num_leaves=15, min_samples_leaf=10,
                  early_stopping_rounds=20, random_state=0)  # fmt: skip
_LAMBDA_NORM = Option("--lambda-norm", "lambda_normalization", str,
                      "Each query's lambdas times log2(1+S)/S (lightgbm), or divided by its documents or pairs.",
                      choices=("docs", "lightgbm", "none", "pairs"))  # fmt: skip
_NEURAL_OPTIONS = (
    _LEARNING_RATE,
    _METRIC,
    _EARLY,
    _THREADS,
    _SEED,
    _SIGMA,
    Option("--hidden", "hidden", str, "Hidden layer sizes, e.g. 64,32 (empty: linear).", parse=_parse_hidden),
    Option("--networks", "n_networks", int, "Networks trained side by side and averaged."),
    Option("--optimizer", "optimizer", str, "Optimizer.", choices=("adam", "sgd")),
    Option("--batch-queries", "batch_queries", int, "Queries per update."),
    Option("--dropout", "dropout", float, "Dropout after each hidden layer."),
    _LAMBDA_NORM,
    Option("--device", "device", str, "torch device: cpu, cuda or cuda:N."),
    Option("--loss", "loss", str, "Loss of the network (ipw, dla, regression_em: from clicks, with --position-file; "
           "ipw weighs the model's own loss by --propensity, dla and regression_em learn the propensities).",
           choices=("ranknet", "lambdarank", "listnet", "listmle", "approxndcg", "neuralndcg", "ipw", "dla",
                    "regression_em")),
    _PROPENSITY,
    _PROPENSITY_CLIP,
)  # fmt: skip
_L2 = Option("--l2", "l2_regularization", float,
             "L2 penalty lambda * sum(w^2) on leaf values (trees) or on the weights (linear: X'X's diagonal).")
_TOLERANCE = Option("--tolerance", "tolerance", float,
                    "Least gain of a sweep (coordinate-ascent) or round (adarank) that goes on.")  # fmt: skip
_NEURAL_DEMO = dict(hidden=(32,), n_estimators=20, learning_rate=3e-3, early_stopping_rounds=10, random_state=0)
#: the formats that hold a model's trees summed (every tree engine), its linear weights (RankLib's
#: own linear rankers are one more), or its network
_TREE_EXPORTS = ("xgboost", "xgboost-dump", "elasticsearch", "opensearch", "solr", "vespa", "treelite")
_LAMBDAMART_EXPORTS = ("ranklib", "lightgbm", *_TREE_EXPORTS)
_LINEAR_EXPORTS = ("elasticsearch", "opensearch", "solr")
_TREE_TEST = dict(n_estimators=5, min_samples_leaf=1, random_state=0)
_NEURAL_TEST = dict(n_estimators=2, hidden=(4,), n_networks=1, random_state=0)
_TREES = dict(structure="trees", exports=_LAMBDAMART_EXPORTS, contributions=True, positions=True, warmup="trees",
              test=_TREE_TEST)  # fmt: skip
_NETWORK = dict(structure="network", exports=("onnx",), contributions=True, positions=True, warmup="rest",
                test=_NEURAL_TEST)  # fmt: skip

register(
    ModelSpec(
        "lambdamart",
        "ranklearn.models.lambdamart:LambdaMART",
        "Gradient-boosted trees on LambdaRank gradients, Newton leaves, best-first growth.",
        _TREE_OPTIONS,
        # 3: unbiased= and its parameters, position_bias (files of versions 1 and 2 load unchanged);
        # 4: issue 30's vocabulary (early_stopping_rounds="auto" means max(20, n_estimators // 10))
        payload_version=4,
        demo=_TREE_DEMO,
        ranklib=6,
        **_TREES,
        served="trees",
    )
)  # fmt: skip
register(
    ModelSpec(
        "mart",
        "ranklearn.models.mart:MART",
        "Gradient-boosted regression trees fitted to the labels by squared error (pointwise).",
        _TREE_OPTIONS,
        payload_version=4,  # as LambdaMART's 4
        demo=_TREE_DEMO,
        ranklib=0,
        **_TREES,
        served="trees",
    )
)
register(
    ModelSpec(
        "ranknet",
        "ranklearn.models.ranknet:RankNet",
        "Neural scorer trained on pairwise cross-entropy, factorized per query.",
        _NEURAL_OPTIONS,
        payload_version=5,  # 5: n_estimators (was epochs)
        demo=_NEURAL_DEMO,
        extra="neural",
        ranklib=1,
        **_NETWORK,
    )
)
register(
    ModelSpec(
        "lambdarank",
        "ranklearn.models.lambdarank:LambdaRank",
        "RankNet with each pair's gradient scaled by the NDCG change of swapping it.",
        _NEURAL_OPTIONS,
        payload_version=4,  # 4: n_estimators (was epochs)
        demo=_NEURAL_DEMO,
        extra="neural",
        **_NETWORK,
    )
)
register(
    ModelSpec(
        "listnet",
        "ranklearn.models.listnet:ListNet",
        "Neural scorer trained on each query's top-one probability cross-entropy (listwise).",
        _NEURAL_OPTIONS,
        payload_version=4,  # 4: n_estimators (was epochs)
        demo=_NEURAL_DEMO,
        extra="neural",
        ranklib=7,
        **_NETWORK,
    )
)
register(
    ModelSpec(
        "linear",
        "ranklearn.models.linear:LinearRegression",
        "Linear regression on the labels: least squares with an L2 penalty, closed form.",
        (_L2, _METRIC, _THREADS, _SEED),
        payload_version=2,  # 2: random_state
        demo=dict(),
        ranklib=9,
        structure="linear",
        exports=("ranklib", *_LINEAR_EXPORTS),
        contributions=True,
        warmup="rest",
        served="linear",
    )
)
register(
    ModelSpec(
        "coordinate-ascent",
        "ranklearn.models.coordinate_ascent:CoordinateAscent",
        "Linear weights searched feature by feature for the metric, random restarts, L1-normalized.",
        (_TOLERANCE, _METRIC, _EARLY, _THREADS, _SEED),
        payload_version=2,  # 2: n_estimators, line_search_steps (were n_restarts, max_iterations)
        demo=dict(n_estimators=2, line_search_steps=15, random_state=0),
        ranklib=4,
        structure="linear",
        exports=("ranklib", *_LINEAR_EXPORTS),
        contributions=True,
        warmup="rest",
        test=dict(n_estimators=1, line_search_steps=2, random_state=0),
        served="linear",
    )
)
register(
    ModelSpec(
        "adarank",
        "ranklearn.models.adarank:AdaRank",
        "Boosting single features by the query-level metric, RankLib's safeguards.",
        (_TOLERANCE, _METRIC, _EARLY, _THREADS, _SEED),
        payload_version=2,  # 2: random_state; early_stopping_rounds=None (was "auto")
        demo=dict(n_estimators=100),
        ranklib=3,
        structure="linear",
        exports=_LINEAR_EXPORTS,
        contributions=True,
        warmup="rest",
        test=dict(n_estimators=5),
        served="linear",
    )
)
register(
    ModelSpec(
        "rankboost",
        "ranklearn.models.rankboost:RankBoost",
        "Boosting feature thresholds on the document pairs of each query.",
        (Option("--thresholds", "n_thresholds", int, "Candidate thresholds per feature."), _METRIC, _EARLY, _THREADS, _SEED),
        payload_version=2,  # 2: random_state; early_stopping_rounds=None (was "auto")
        demo=dict(n_estimators=100),
        ranklib=2,
        warmup="rest",
        test=dict(n_estimators=5),
    )
)
register(
    ModelSpec(
        "random-forest",
        "ranklearn.models.random_forest:RandomForest",
        "Bags of boosted trees over queries drawn with replacement and a fraction of the features.",
        _TREE_GROWTH,
        payload_version=2,  # 2: n_estimators = bags, trees_per_bag (were n_bags, n_estimators)
        demo=dict(n_estimators=50, random_state=0),
        ranklib=8,
        structure="forest",
        exports=_TREE_EXPORTS,
        contributions=True,
        warmup="trees",
        test=dict(n_estimators=3, num_leaves=4, random_state=0),
        served="bags",
    )
)
