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
    "Option", "ModelSpec", "REGISTRY", "register", "unregister", "get_spec", "get_model_class", "model_names",
    "markdown_table",
]  # fmt: skip


@dataclass(frozen=True)
class Option:
    """A command-line option of ``ranklearn train`` and the estimator parameter it sets.

    Parameters
    ----------
    flag : str
        The option as typed, e.g. ``"--trees"``.
    param : str
        The estimator parameter, e.g. ``"n_estimators"``.
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


def names_markdown_table() -> str:
    """The README's table of other tools' names (:mod:`ranklearn.foreign_names`) for every ranker
    parameter (imports the rankers; a ranker whose extra is missing is left out) and fit argument."""
    import inspect

    from ranklearn.foreign_names import markdown_table as names_table

    parameters: dict[str, str] = {}
    for spec in REGISTRY.values():
        for option in spec.options:
            parameters.setdefault(option.param, option.flag)
    for spec in REGISTRY.values():
        try:
            cls = spec.load_class()
        except ImportError:
            continue
        for name in cls._get_param_names():
            parameters.setdefault(name, "")
        fit = [p for p in inspect.signature(cls.fit).parameters if p not in ("self", "X", "y")]
    for name in fit:
        parameters.setdefault(f"fit({name}=)", "")
    return names_table(parameters)


# ------------------------------------------------------------------------------ the rankers
def _parse_hidden(value: str) -> tuple[int, ...]:
    """``"64,32"`` -> ``(64, 32)``; an empty string gives a linear scorer ``()``."""
    text = str(value).strip()
    parts = [p.strip() for p in text.split(",")] if text else []
    if not all(p.isascii() and p.isdigit() and int(p) > 0 for p in parts):  # "64,,32" is a typo, not (64, 32)
        raise ValueError(f"--hidden must be comma-separated positive layer sizes such as 64,32; got {value!r}")
    return tuple(int(p) for p in parts)


# Options several models share are defined once.
_LEARNING_RATE = Option("--learning-rate", "learning_rate", float, "Shrinkage (trees) or step size (neural).")
_METRIC = Option("--metric", "metric", str, "Metric watched on --validate, e.g. ndcg@10, err@10, map.")
_EARLY = Option("--early-stopping", "early_stopping_rounds", int, "Stop after this many rounds without improvement on --validate.")
_SEED = Option("--seed", "random_state", int, "Random seed.")
_SIGMA = Option("--sigma", "sigma", float, "Steepness of the pairwise sigmoid.")
_THREADS = Option(
    "--threads",
    "n_jobs",
    int,
    "Threads (default: every CPU this process may use; the neural rankers train on one and predict on every CPU).",
)
_TREES = Option("--trees", "n_estimators", int, "Number of trees (at most).")
_LEAVES = Option("--leaves", "num_leaves", int, "Leaves per tree.")
_MIN_LEAF = Option("--min-leaf-samples", "min_samples_leaf", int, "Minimum documents per leaf.")
_MAX_BINS = Option("--max-bins", "max_bins", int, "Histogram bins per feature.")
_LEAF_ORDER = Option("--leaf-order", "leaf_order", str,
                     "Which leaf is split next: the best split's gain (LightGBM) or the leaf's deviance (RankLib).",
                     choices=("gain", "deviance"))  # fmt: skip
#: what every ranker of boosted trees takes
_TREE_GROWTH = (_TREES, _LEAVES, _LEARNING_RATE, _MIN_LEAF, _LEAF_ORDER, _MAX_BINS, _METRIC, _EARLY, _THREADS, _SEED)
_UNBIASED = Option(
    "--unbiased", "unbiased", str,
    "Learn from clicks: debias by the rows' positions (--position-file or the FILE.position sidecar); "
    "lambdarank/ranknet objectives.",
    choices=("pairwise", "position_factors"),
)  # fmt: skip
_TREE_OPTIONS = (
    *_TREE_GROWTH,
    _UNBIASED,
    _SIGMA,
    Option("--objective", "objective", str, "Tree objective: lambdarank, ranknet, squared_error or xendcg."),
)
_TREE_DEMO = dict(n_estimators=150, learning_rate=0.1, num_leaves=15, min_samples_leaf=10,
                  early_stopping_rounds=20, random_state=0)  # fmt: skip
_NEURAL_OPTIONS = (
    _LEARNING_RATE,
    _METRIC,
    _EARLY,
    _THREADS,
    _SEED,
    _SIGMA,
    Option("--hidden", "hidden", str, "Hidden layer sizes, e.g. 64,32 (empty: linear).", parse=_parse_hidden),
    Option("--networks", "n_networks", int, "Networks trained side by side and averaged."),
    Option("--epochs", "epochs", int, "Epochs (at most)."),
    Option("--optimizer", "optimizer", str, "Optimizer.", choices=("adam", "sgd")),
    Option("--batch-queries", "batch_queries", int, "Queries per update."),
    Option("--dropout", "dropout", float, "Dropout after each hidden layer."),
    Option("--lambda-norm", "lambda_normalization", str, "Divide each query's lambdas by its documents or pairs.",
           choices=("docs", "pairs", "none")),
    Option("--device", "device", str, "torch device: cpu, cuda or cuda:N."),
    Option("--loss", "loss", str, "Loss of the network.",
           choices=("ranknet", "lambdarank", "listnet", "listmle", "approxndcg", "neuralndcg")),
)  # fmt: skip
_TOLERANCE = Option("--tolerance", "tolerance", float,
                    "Least gain of a sweep (coordinate-ascent) or round (adarank) that goes on.")  # fmt: skip
_NEURAL_DEMO = dict(hidden=(32,), epochs=20, learning_rate=3e-3, early_stopping_rounds=10, random_state=0)

register(
    ModelSpec(
        "lambdamart",
        "ranklearn.models.lambdamart:LambdaMART",
        "Gradient-boosted trees on LambdaRank gradients, Newton leaves, best-first growth.",
        _TREE_OPTIONS,
        # 3: unbiased= and its parameters, position_bias (files of versions 1 and 2 load unchanged)
        payload_version=3,
        demo=_TREE_DEMO,
        ranklib=6,
        served="trees",
    )
)  # fmt: skip
register(
    ModelSpec(
        "mart",
        "ranklearn.models.mart:MART",
        "Gradient-boosted regression trees fitted to the labels by squared error (pointwise).",
        _TREE_OPTIONS,
        payload_version=3,  # as LambdaMART's 3
        demo=_TREE_DEMO,
        ranklib=0,
        served="trees",
    )
)
register(
    ModelSpec(
        "ranknet",
        "ranklearn.models.ranknet:RankNet",
        "Neural scorer trained on pairwise cross-entropy, factorized per query.",
        _NEURAL_OPTIONS,
        payload_version=4,
        demo=_NEURAL_DEMO,
        extra="neural",
        ranklib=1,
    )
)
register(
    ModelSpec(
        "lambdarank",
        "ranklearn.models.lambdarank:LambdaRank",
        "RankNet with each pair's gradient scaled by the NDCG change of swapping it.",
        _NEURAL_OPTIONS,
        payload_version=3,
        demo=_NEURAL_DEMO,
        extra="neural",
    )
)
register(
    ModelSpec(
        "listnet",
        "ranklearn.models.listnet:ListNet",
        "Neural scorer trained on each query's top-one probability cross-entropy (listwise).",
        _NEURAL_OPTIONS,
        payload_version=3,
        demo=_NEURAL_DEMO,
        extra="neural",
        ranklib=7,
    )
)
register(
    ModelSpec(
        "linear",
        "ranklearn.models.linear:LinearRegression",
        "Linear regression on the labels: least squares with an L2 penalty, closed form.",
        (Option("--l2", "l2_regularization", float, "L2 penalty added to X'X's diagonal."), _METRIC, _THREADS),
        demo=dict(),
        ranklib=9,
        served="linear",
    )
)
register(
    ModelSpec(
        "coordinate-ascent",
        "ranklearn.models.coordinate_ascent:CoordinateAscent",
        "Linear weights searched feature by feature for the metric, random restarts, L1-normalized.",
        (
            Option("--restarts", "n_restarts", int, "Random restarts (each is one iteration)."),
            Option("--iterations", "max_iterations", int, "Line-search steps per direction."),
            _TOLERANCE,
            _METRIC,
            _EARLY,
            _THREADS,
            _SEED,
        ),
        demo=dict(n_restarts=2, max_iterations=15, random_state=0),
        ranklib=4,
        served="linear",
    )
)
register(
    ModelSpec(
        "adarank",
        "ranklearn.models.adarank:AdaRank",
        "Boosting single features by the query-level metric, RankLib's safeguards.",
        (
            Option("--rounds", "n_estimators", int, "Boosting rounds (at most)."),
            _TOLERANCE,
            _METRIC,
            _EARLY,
            _THREADS,
        ),
        demo=dict(n_estimators=100),
        ranklib=3,
        served="linear",
    )
)
register(
    ModelSpec(
        "rankboost",
        "ranklearn.models.rankboost:RankBoost",
        "Boosting feature thresholds on the document pairs of each query.",
        (
            Option("--rounds", "n_estimators", int, "Boosting rounds (at most)."),
            Option("--thresholds", "n_thresholds", int, "Candidate thresholds per feature."),
            _METRIC,
            _EARLY,
            _THREADS,
        ),
        demo=dict(n_estimators=100),
        ranklib=2,
    )
)
register(
    ModelSpec(
        "random-forest",
        "ranklearn.models.random_forest:RandomForest",
        "Bags of boosted trees over queries drawn with replacement and a fraction of the features.",
        (
            Option("--bags", "n_bags", int, "Bags (each one iteration)."),
            *_TREE_GROWTH,
        ),
        demo=dict(n_bags=50, random_state=0),
        ranklib=8,
        served="bags",
    )
)
