"""Training from the command line (``train``) and the demo (``demo``)."""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from enum import Enum
from numbers import Integral
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ranklearn._files import is_stdio, writes_stdout
from ranklearn.cli import _common as C
from ranklearn.registry import Option

if TYPE_CHECKING:
    import numpy as np

    from ranklearn.data import RankingDataset

#: options of ``train`` that are not model parameters
_FIXED = (
    "train", "validate", "test", "model", "save", "no_regroup", "position_file", "weight_file", "scheduler", "workers", "spark",
    "worker_timeout", "validation_split", "split_seed", "normalize", "features",
)  # fmt: skip


def _position_reader(params: dict[str, Any]) -> str | None:
    """The option that reads the training rows' positions (``--unbiased X``, or a click loss's
    ``--loss X``), None when none does."""
    if params.get("unbiased") is not None:
        return f"--unbiased {params['unbiased']}"
    if isinstance(params.get("loss"), str):
        from ranklearn.neural.losses import CLICK_LOSSES

        if params["loss"] in CLICK_LOSSES:
            return f"--loss {params['loss']}"
    return None


def _docstring_line(cls: type, param: str) -> str:
    """The first sentence of ``param``'s entry in the numpy-style docstring of ``cls`` (or of a base)."""
    for klass in cls.__mro__:
        match = re.search(rf"^    {re.escape(param)} : .*\n((?:        .*\n?)+)", klass.__doc__ or "", re.M)
        if match:
            text = re.sub(r":\w+:`~?([^`]+)`", r"\1", " ".join(match.group(1).split())).replace("``", "")
            return re.split(r"(?<=\.)\s", text, maxsplit=1)[0].rstrip(".") + "."
    return param.replace("_", " ").capitalize() + "."


def _derived_option(cls: type, param: str, flag: str, given: Option | None) -> Option:
    """The option of ``param`` typed from the ranker's ``parameter_constraints()``: an interval is an
    int or float, ``StrOptions`` give the choices, ``"boolean"`` a ``--x/--no-x`` flag, a number
    or a word (``"auto"``) a string parsed by :func:`~ranklearn.registry.parse_auto_or_count`;
    ``given`` (the registry's) keeps its help and parse, and types what the constraints cannot
    (``hidden``: array-like)."""
    from sklearn.utils._param_validation import Hidden, Interval, Options, StrOptions

    from ranklearn.registry import parse_auto_or_count

    if given is not None and given.parse is not None:  # the registry's parse types it (hidden: array-like)
        return given
    numbers: set[type] = set()
    choices: set[str] = set()
    words = boolean = False
    for c in cls.parameter_constraints()[param]:
        if isinstance(c, Hidden):
            continue
        if c == "boolean":
            boolean = True
        elif c == "random_state":
            numbers.add(int)
        elif isinstance(c, Interval):
            numbers.add(int if c.type is Integral else float)
        elif isinstance(c, StrOptions):
            choices |= set(c.options)
        elif isinstance(c, Options) and c.type is Integral:
            numbers.add(int)
        elif c is str:
            words = True
    help_ = given.help if given is not None else _docstring_line(cls, param)
    if boolean:
        return Option(flag, param, bool, help_)
    if numbers and (choices or words):  # "auto" or a count: typed as a word, parsed into a number
        return Option(flag, param, str, help_, parse=parse_auto_or_count)
    if numbers:
        return Option(flag, param, float if float in numbers else int, help_)
    if choices and not words:
        return Option(flag, param, str, help_, choices=tuple(sorted(choices)))
    return Option(flag, param, str, help_, choices=given.choices if given is not None else None)


def model_options(model: str) -> dict[str, Option]:
    """Every option of ``model`` by parameter: one for each parameter in its ``parameter_constraints()``
    (but :data:`~ranklearn.registry.NOT_OPTIONS`), flagged by :func:`~ranklearn.registry.option_flag`."""
    from ranklearn.registry import get_spec, option_flag

    spec = get_spec(model)
    cls = spec.load_class()
    given = {o.param: o for s in _specs() for o in s.options}
    options = {}
    for param in cls.parameter_constraints():
        flag = option_flag(param)
        if flag is not None:
            options[param] = _derived_option(cls, param, flag, given.get(param))
    return options


def _specs() -> list[Any]:
    from ranklearn.registry import REGISTRY

    return list(REGISTRY.values())


def merged_options() -> dict[str, tuple[Option, list[str]]]:
    """Every option of every available model by flag, with the models it applies to (the choices of
    a flag several models share are all of theirs; each ranker checks its own)."""
    merged: dict[str, tuple[Option, list[str]]] = {}
    for spec in _specs():
        try:
            options = model_options(spec.name)
        except ImportError:  # a model whose module cannot load has no options
            continue
        for opt in options.values():
            if opt.flag in merged:
                first, models = merged[opt.flag]
                if (first.param, first.type) != (opt.param, opt.type):
                    raise TypeError(f"{opt.flag}: {spec.name}'s {opt.param} ({opt.type.__name__}) differs from "
                                    f"{models[0]}'s {first.param} ({first.type.__name__})")  # fmt: skip
                if first.choices and opt.choices:
                    first = dataclasses.replace(first, choices=tuple(dict.fromkeys((*first.choices, *opt.choices))))
                merged[opt.flag] = (first, [*models, spec.name])
            else:
                merged[opt.flag] = (opt, [spec.name])
    return merged


def estimator_params(model: str, options: dict[str, Any]) -> dict[str, Any]:
    """Estimator keyword arguments from the options the user gave (``{flag: value}``, None = not given).

    Options left out are not passed, so every model keeps its own defaults.

    Raises
    ------
    ValueError
        If a given option does not apply to ``model``, or its value does not parse.
    """
    merged = merged_options()
    params = {}
    for flag, value in options.items():
        if value is None:
            continue
        opt, models = merged[flag]
        if model not in models:
            raise ValueError(f"{flag} does not apply to {model} (it applies to {', '.join(models)})")
        params[opt.param] = opt.parse(value) if opt.parse is not None else value
    return params


def build_train_command() -> Callable[..., None]:
    """The ``train`` command, its options and ``--model`` choices read from the registry."""
    import typer

    from ranklearn.registry import REGISTRY

    merged = merged_options()
    model_enum = Enum("ModelName", [(name, name) for name in REGISTRY], type=str)  # type: ignore[misc]
    fixed = [
        ("train", Path, typer.Option(..., "--train", help="Training file.")),
        ("validate", Path | None, typer.Option(None, "--validate", help="Validation file, shown as training goes. Every ranker keeps its best iteration on it (as RankLib does), also when it runs all its iterations or is interrupted; --early-stopping N also stops after N without a gain.")),
        ("test", Path | None, typer.Option(None, "--test", help="Test file: reported at the end only.")),
        ("model", model_enum, typer.Option(..., "--model", help="Which ranker to train.")),
        ("save", Path | None, typer.Option(None, "--save", parser=C.output_path, help="Where to write the model file (- = stdout).")),
        ("no_regroup", bool, typer.Option(False, "--no-regroup", help="Refuse a file where a qid reappears after "
                                          "other queries (by default its rows are merged, with a warning).")),
        ("position_file", Path | None, typer.Option(None, "--position-file", help="The training rows' display positions (one whole number >= 1 a line), instead of the --train file's .position sidecar.")),
        ("weight_file", Path | None, typer.Option(None, "--weight-file", help="The training rows' weights (one number >= 0 a line, LightGBM's weight file), instead of the --train file's .weight sidecar; passed to fit as sample_weight.")),
        ("scheduler", str | None, typer.Option(None, "--scheduler", help="Train on this Dask cluster (tcp://HOST:PORT): lambdamart on every worker, listnet/ranknet/lambdarank on one; --train and --validate may be globs of files the workers read.")),
        ("workers", int | None, typer.Option(None, "--workers", help="Train on a local Dask cluster of this many worker processes (1 thread each): lambdamart on every worker, listnet/ranknet/lambdarank on one.")),
        ("spark", str | None, typer.Option(None, "--spark", metavar="MASTER", help="Train lambdamart on Spark (a master URL: local[2], spark://HOST:7077); the files are read here and their rows sent to the tasks.")),
        ("worker_timeout", float | None, typer.Option(None, "--worker-timeout", metavar="SECONDS", help="With --scheduler/--workers/--spark: stop when a worker (a Spark task) has not answered in this many seconds (default 600).")),
        ("validation_split", float | None, typer.Option(None, "--validation-split", metavar="FRACTION", help="Train on this fraction of the --train queries and validate on the others (RankLib's -tvs), drawn with --split-seed; instead of --validate.")),
        ("split_seed", int, typer.Option(0, "--split-seed", help="Seed of the queries --validation-split draws.")),
        ("normalize", str | None, typer.Option(None, "--normalize", metavar="METHOD", help="Normalize the features (RankLib's -norm), saved in the model and applied by predict and every export: zscore, sum or linear fit one map per feature on the training rows; query-zscore, query-sum or query-linear normalize each query within itself as RankLib does (scoring then needs the queries; exports refuse it).")),
        ("features", Path | None, typer.Option(None, "--features", metavar="FILE", help="Train on these features only (RankLib's -feature): one feature id a line, '#' lines are comments; the model still takes whole rows and ignores the others.")),
    ]
    params, annotations, flags = [], {}, {}
    for name, annotation, default in fixed:
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        annotations[name] = annotation
    for flag, (opt, models) in merged.items():
        name = flag.lstrip("-").replace("-", "_")
        flags[name] = flag
        kind: Any = opt.type
        if opt.choices:
            kind = Enum(name.title().replace("_", ""), [(c, c) for c in opt.choices], type=str)  # type: ignore[misc]
        tag = "" if len(models) == len(REGISTRY) else f"\\[{', '.join(models)}] "
        metavar = flag.lstrip("-").upper().replace("-", "_") if opt.type is str and not opt.choices else None
        names = (f"{flag}/--no-{flag[2:]}",) if opt.type is bool else (flag,)
        default = typer.Option(None, *names, help=tag + opt.help, metavar=metavar)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind | None))
        annotations[name] = kind | None

    def train(**kwargs: Any) -> None:
        model = kwargs.pop("model").value
        fixed_values = {k: kwargs.pop(k) for k in _FIXED if k != "model"}
        given = {flags[k]: (v.value if isinstance(v, Enum) else v) for k, v in kwargs.items()}
        run_train(model, estimator_params(model, given), **fixed_values)

    train.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    train.__annotations__ = annotations
    train.__doc__ = TRAIN_HELP
    return train


TRAIN_HELP = """Train a ranker, save it, and print NDCG@10 and the watched metric on every given set.

    Only the options you give are passed on, so each model keeps its own defaults; an
    option of another model is an error. Ctrl-C keeps the best model so far, saves it
    (with --save) and exits with status 130.
    """


_SKLEARN_MESSAGE = re.compile(r"The '(\w+)' parameter of \w+ must be (.*)\. Got (.*) instead\.$", re.S)


#: scikit-learn's constraints that no command-line value can meet (a Python object, None)
_UNTYPABLE = re.compile(r"^(None|an instance of .*|an object implementing .*)$")
_AMONG = re.compile(r"^an? \w+ among \{(.*)\}$")


def _constraint_items(text: str) -> list[str]:
    """scikit-learn's "A, B or C" list of constraints, split outside brackets ("[1, inf)")."""
    items, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text[i] in "[({":
            depth += 1
        elif text[i] in "])}":
            depth -= 1
        elif depth == 0 and (sep := next((t for t in (", ", " or ") if text.startswith(t, i)), None)):
            items.append(text[start:i])
            i = start = i + len(sep)
            continue
        i += 1
    return [*items, text[start:]]


def _typable(constraints: str, kind: type | None) -> str:
    """The constraints a value of the option's ``kind`` (int, float, str; None: a number or a
    word) can meet, in the command line's words ("-1", "one of 'a', 'b'"): no Python objects,
    no 'auto' for a number."""
    quoted = None if kind is None else kind is str  # a str option takes the quoted values of a set, a number option the others
    kept = []
    for item in _constraint_items(constraints):
        if _UNTYPABLE.match(item) or (quoted is True and item.startswith(("an int ", "a float "))):
            continue
        among = _AMONG.match(item)
        if among:  # a set: sorted, so that the message does not change from run to run
            values = sorted(v for v in among.group(1).split(", ") if quoted is None or v.startswith("'") == quoted)
            if not values:
                continue
            item = values[0] if len(values) == 1 else f"one of {', '.join(values)}"
        kept.append(item)
    return " or ".join(kept) if kept else constraints


def option_message(message: str, model: str) -> str:
    """A parameter error in the words of the command line: ``--leaves must be ...; got 0``."""
    from ranklearn.registry import get_spec, parse_auto_or_count

    options = model_options(get_spec(model).name)
    flags = {param: opt.flag for param, opt in options.items()}
    match = _SKLEARN_MESSAGE.match(message)
    if match and match.group(1) in flags:
        option = options[match.group(1)]
        kind = None if option.parse is parse_auto_or_count else option.type
        return f"{option.flag} must be {_typable(match.group(2), kind)}; got {match.group(3)}"
    for param, flag in flags.items():
        if message.startswith(f"{param} "):  # our own messages name the parameter first
            message = flag + message[len(param) :]
        # "device='cuda' ...; use device='cpu'": the options as typed (a value must follow)
        message = re.sub(rf"(?<![\w.-]){re.escape(param)}=(?=\S)", f"{flag} ", message)
    return message


def checked_estimator(estimator: Any, model: str) -> Any:
    """``estimator`` once its parameters pass ``check_params``; a bad one is a ValueError in the
    words of ``model``'s command-line options (:func:`option_message`)."""
    try:
        estimator.check_params()
    except ValueError as exc:
        raise ValueError(option_message(str(exc), model)) from None
    return estimator


def model_class(name: str) -> type:
    """The estimator class, or a one-line error when its module or a dependency (torch) is missing."""
    from ranklearn.registry import get_model_class

    try:
        return get_model_class(name)
    except ImportError as exc:
        raise ValueError(f"model {name} is not available here ({exc})") from None


def evaluate_sets(
    estimator: Any, sets: dict[str, RankingDataset], metric_names: list[Any], notes: list[str] | None = None,
    paths: dict[str, Path] | None = None,
) -> dict[str, dict[str, float]]:
    """Mean of each metric (a name: default conventions; or a Metric) of the estimator's
    predictions on each set.

    A metric that cannot take a set's labels (a negative label for a gain) is NaN there ("n/a"
    in the table), with the metric's reason appended to ``notes``: the decision is the metric's,
    not the command's, so a ranker that trains on any label (mart, ranknet) still trains. With the
    sets' ``paths``, the note names the file and line of the first such label, not its row.
    """
    metrics = C.as_metrics(metric_names)
    rows: dict[str, dict[str, float]] = {}
    for name, ds in sets.items():
        scores = estimator.predict(ds.X, qid=ds.qid)  # the queries: for a per-query normalizer
        path = None if paths is None else paths.get(name)
        rows[name] = C.score_set(metrics, ds.y, scores, ds.ptr, name, notes, ds, path)
    return rows


def check_labels_for_metrics(ds: RankingDataset, path: Path, command: str = "train") -> None:
    """``train`` and ``cv`` report metrics on every set: refuse labels they cannot take before
    training. ``command`` names the command in the message.

    Raises
    ------
    DataFormatError
        Naming the file and line of a negative label, or of a label too large for the gain
        2^rel-1 (the estimators themselves train on any finite labels; from Python).
    """
    import numpy as np

    from ranklearn.exceptions import DataFormatError
    from ranklearn.metrics import MAX_EXP2_LABEL

    C.check_labels_nonnegative(ds, path, f" for the metrics that {command} reports")
    if ds.y.max() > MAX_EXP2_LABEL:
        row = int(np.argmax(ds.y))
        raise DataFormatError(
            f"labels above {MAX_EXP2_LABEL} overflow the gain 2^rel-1 of the reported NDCG (this one is {ds.y[row]:g})",
            path=C.shown(path), line=C.line_of(ds, row),
        )  # fmt: skip


def check_features_for_model(ds: RankingDataset, path: Path, estimator: Any) -> None:
    """Refuse, before training, values the model cannot take (NaN for most rankers), naming the
    file, the line and the feature.

    Raises
    ------
    DataFormatError
    """
    from sklearn.utils import get_tags

    from ranklearn.exceptions import FeatureValueError
    from ranklearn.models.checks import check_feature_values

    try:
        check_feature_values(ds.X, allow_nan=get_tags(estimator).input_tags.allow_nan)
    except FeatureValueError as exc:
        raise C.feature_value_error(exc, ds, path, estimator) from None


def run_train(
    model: str,
    params: dict[str, Any],
    train: Path,
    validate: Path | None,
    test: Path | None,
    save: Path | None,
    *,
    no_regroup: bool = False,
    position_file: Path | None = None,
    weight_file: Path | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    spark: str | None = None,
    worker_timeout: float | None = None,
    validation_split: float | None = None,
    split_seed: int = 0,
    normalize: str | None = None,
    features: Path | None = None,
) -> None:
    """Fit ``model`` on ``train`` (early stopping on ``validate``), save it, and print a metrics table.

    On Ctrl-C the estimator keeps its best model so far; that one is saved (with ``save``)
    and the command exits with status 130. ``save`` "-" writes the model to stdout, and the
    table then goes to stderr. With ``scheduler`` or ``workers`` the fit runs on a Dask
    cluster (:func:`ranklearn.cli._dask.run_train_dask`), which stops when a worker has not
    answered in ``worker_timeout`` seconds (None: the estimator's default). With ``spark``
    (a master URL) the files are read here as for one machine and the fit runs on Spark
    (:func:`ranklearn.cli._spark.fit_on_spark`); the model and the table are those of one machine.
    ``position_file`` gives the training rows' positions (default: the ``train.position`` sidecar,
    when present); ``weight_file`` their weights, ``fit``'s ``sample_weight`` (default: the
    ``train.weight`` sidecar, when present; a fit on this machine only). ``normalize`` is the
    estimator's ``normalize`` parameter, ``features`` a file of the feature ids to train on
    (:func:`read_feature_ids`; the estimator's ``features``): a fit on this machine only.
    """
    from ranklearn._progress import TrainingProgress

    if validation_split is not None:
        if validate is not None:
            raise ValueError("give --validate or --validation-split, not both")
        if not 0 < validation_split < 1:
            raise ValueError(f"--validation-split must be a fraction between 0 and 1 (of the queries trained on), got {validation_split:g}")
        if scheduler is not None or workers is not None:
            raise ValueError("--validation-split applies to a local train: give a Dask train its --validate files")
    if normalize is not None:
        params = {**params, "normalize": checked_normalize(normalize)}
    if scheduler is not None or workers is not None or spark is not None:
        for flag, given in (("--normalize", normalize), ("--features", features)):
            if given is not None:
                raise ValueError(f"{flag} applies to a fit on this machine: a Dask or Spark fit takes the features as given")
    if weight_file is not None:  # before loading data
        if scheduler is not None or workers is not None:
            raise ValueError("--weight-file applies to a fit on this machine or on Spark: a Dask fit reads each "
                             "--train file's .weight sidecar")
        if is_stdio(weight_file) and is_stdio(train):
            raise ValueError("--train and --weight-file cannot both read standard input (-)")
        if not is_stdio(weight_file) and weight_file.is_dir():
            raise IsADirectoryError(21, "is a directory, not a weights file", str(weight_file))
        if not is_stdio(weight_file) and not weight_file.exists():
            raise FileNotFoundError(2, "no such weight file", str(weight_file))
    feature_ids = read_feature_ids(features) if features is not None else None  # before loading data
    if params.get("early_stopping_rounds") is not None and validate is None and validation_split is None:
        raise ValueError("--early-stopping needs a --validate set (or --validation-split) to watch")
    if save is not None:
        # before training, not after hours of it
        C.check_output_path(save, *(p for p in (train, validate, test, weight_file, position_file) if p is not None))
    if spark is not None and (scheduler is not None or workers is not None):
        raise ValueError("give --spark (a Spark master) or --scheduler/--workers (a Dask cluster), not both")
    if scheduler is not None or workers is not None:
        from ranklearn.cli._dask import dask_estimator, run_train_dask

        if position_file is not None:
            raise ValueError("--position-file applies to a local fit; a Dask fit reads each file's .position sidecar")
        estimator = checked_estimator(dask_estimator(model, params, scheduler, workers, worker_timeout), model)
        return run_train_dask(estimator, model, train, validate, test, save, scheduler, workers,
                              _position_reader(params))  # fmt: skip
    if worker_timeout is not None and spark is None:
        raise ValueError("--worker-timeout applies to a Dask or Spark fit only: give --scheduler, --workers or --spark")
    if spark is not None and model != "lambdamart":
        raise ValueError(f"--spark trains --model lambdamart only, not {model}")
    estimator = checked_estimator(model_class(model)(**params), model)  # before loading data
    try:
        paths = {"train": train, "validate": validate, "test": test}
        sets = {}
        sets["train"], order = C.load_data(train, regroup=not no_regroup, position_file=position_file,
                                           return_order=True, weights_read=True)  # fmt: skip
        weights_from = weight_file if weight_file is not None else C.weight_sidecar(train)
        weight = None if weights_from is None else C.read_weights(weights_from, sets["train"].n_samples, train, order)
        width = sets["train"].n_features  # the other sets padded to it: trailing zeros may be left out
        for name in ("validate", "test"):
            if paths[name] is not None:
                sets[name] = C.load_data_as_wide(
                    paths[name], width, f"the training file's features ({width}): the model could not use it",
                    regroup=not no_regroup, positions_unused=f"--{name} is scored on its labels",
                )  # fmt: skip
    except KeyboardInterrupt:
        raise C.Interrupted("interrupted while loading data; nothing trained, nothing saved") from None
    if validation_split is not None:
        sets["train"], sets["validate"], kept = carve_validation(sets["train"], validation_split, split_seed, train)
        weight = None if weight is None else weight[kept]
        sets = {name: sets[name] for name in ("train", "validate", "test") if name in sets}
        paths["validate"] = train
    if feature_ids is not None:
        estimator.set_params(features=feature_columns(feature_ids, features, sets["train"].n_features, train))
    if sets["train"].position is None:  # before training
        reader = _position_reader(params)
        if reader is not None:
            raise ValueError(
                f"{reader} needs the training rows' positions: give --position-file, "
                f"or put them in {C.shown(train)}.position"
            )
    for name, ds in sets.items():
        if name == "validate":  # scored during training by the model's metric; train and test only at the end
            check_labels_for_metrics(ds, paths[name])
        check_features_for_model(ds, paths[name], estimator)
    tr = sets["train"]
    eval_set = [(sets["validate"].X, sets["validate"].y, sets["validate"].qid)] if "validate" in sets else None
    try:
        with TrainingProgress(C.planned_iterations(estimator), description=model) as progress:
            if spark is None:
                estimator.fit(
                    tr.X, tr.y, qid=tr.qid, position=tr.position, eval_set=eval_set,
                    eval_names=["validate"] if eval_set else None, callbacks=[progress],
                    **({} if weight is None else {"sample_weight": weight}),
                )  # fmt: skip
            else:
                from ranklearn.cli._spark import fit_on_spark

                estimator = fit_on_spark(spark, params, tr, sets.get("validate"), [progress], worker_timeout, weight)
                model = f"{model} on spark"
    except KeyboardInterrupt:
        raise C.Interrupted(C.save_interrupted(estimator, save)) from None
    except ValueError as exc:  # labels this ranker cannot train on: name the line of the first one
        raise _training_label_error(exc, tr, train, model) from None
    if save is not None:
        estimator.save(save)
    metric_names = C.table_metrics(estimator)
    saved = f"saved to {save}" if save is not None else "not saved (no --save)"
    console = C.err_console if save is not None and writes_stdout(save) else C.console
    notes: list[str] = []
    rows = evaluate_sets(estimator, sets, metric_names, notes, paths)
    C.print_results(f"{model}: {saved}; metrics on each set", rows, metric_names, console)
    for note in notes:
        console.print(note, highlight=False, markup=False)


def checked_normalize(value: str) -> str:
    """The value of ``--normalize`` (``train``, ``cv``): a spec of :data:`ranklearn.data.normalize.SPECS`.

    Raises
    ------
    ValueError
        Naming the option and the values it takes.
    """
    from ranklearn.data.normalize import SPECS

    if value not in SPECS:
        raise ValueError(f"--normalize takes {', '.join(SPECS)}; got {value!r}")
    return value


def read_feature_ids(path: Path) -> list[tuple[int, int]]:
    """The feature ids of a RankLib ``-feature`` file, each with its line: one id a line, first
    on it (RankLib reads the text before a tab; a blank or ``#`` after the id is a comment too),
    blank lines and lines starting with ``#`` skipped.

    Raises
    ------
    DataFormatError
        Naming the file and the line: not readable UTF-8 text, an id that is not a whole
        number >= 1, one given twice, or no id at all.
    """
    from ranklearn.exceptions import DataFormatError

    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise DataFormatError(f"cannot read the feature list ({exc.strerror or exc})", path=C.shown(path)) from None
    except UnicodeDecodeError:
        raise DataFormatError("the feature list is not UTF-8 text", path=C.shown(path)) from None
    ids: list[tuple[int, int]] = []
    seen: dict[int, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.strip()
        if not content or content.startswith("#"):
            continue
        token = content.split()[0]
        if not re.fullmatch(r"\d+", token) or int(token) < 1:
            raise DataFormatError("a feature id is a whole number >= 1", path=C.shown(path), line=number, token=token)
        fid = int(token)
        if fid in seen:
            raise DataFormatError(f"feature {fid} is listed twice (first on line {seen[fid]})", path=C.shown(path), line=number)
        seen[fid] = number
        ids.append((number, fid))
    if not ids:
        raise DataFormatError("the feature list names no feature (one id a line)", path=C.shown(path))
    return ids


def feature_columns(ids: list[tuple[int, int]], path: Path, n_features: int, train: Path) -> list[int]:
    """The 0-based columns of :func:`read_feature_ids`'s ids, each checked against the training
    file's ``n_features``.

    Raises
    ------
    DataFormatError
        At the line of an id beyond the training file's features.
    """
    from ranklearn.exceptions import DataFormatError

    for number, fid in ids:
        if fid > n_features:
            raise DataFormatError(
                f"feature {fid} is beyond the {n_features} features of {C.shown(train)}", path=C.shown(path), line=number
            )
    return [fid - 1 for _, fid in ids]


def _training_label_error(exc: ValueError, ds: RankingDataset, path: Path, model: str) -> Exception:
    """The ranker's refusal of a training label (negative; too large for the 2^rel-1 gain, as click
    counts are) at the file's line of the first one, in the command line's words."""
    import numpy as np

    from ranklearn.exceptions import DataFormatError

    text = str(exc)
    if "label" in text and (ds.y < 0).any():
        row = int(np.flatnonzero(ds.y < 0)[0])
    elif "overflows the 2^rel-1 gain" in text and ds.y.size:
        row = int(np.argmax(ds.y))  # the first of the largest labels
    else:
        return exc
    return DataFormatError(option_message(C.one_line(exc), model), path=C.shown(path), line=C.line_of(ds, row))


def carve_validation(
    ds: RankingDataset, fraction: float, seed: int, path: Path
) -> tuple[RankingDataset, RankingDataset, np.ndarray]:
    """``(train, validation, kept)``: ``fraction`` of the queries of ``ds`` (rounded, at least one
    each side) drawn with ``seed`` to train on, the others to validate on, each in file order
    (RankLib's ``-tvs``, seeded); ``kept`` marks the rows of ``ds`` trained on.

    Raises
    ------
    ValueError
        A file of fewer than two queries.
    """
    import numpy as np

    from ranklearn.model_selection import carve_queries

    if ds.n_queries < 2:
        raise ValueError(f"--validation-split needs two queries or more; {C.shown(path)} has {ds.n_queries}")
    chosen = carve_queries(np.arange(ds.n_queries), fraction, seed)  # one "row" per query, in file order
    return ds.subset(chosen), ds.subset(~chosen), np.repeat(chosen, np.diff(ds.ptr))


# ------------------------------------------------------------------------------------- demo
DEMO_METRICS = ["ndcg@1", "ndcg@5", "ndcg@10", "err@10", "map"]


def run_demo(console: Console | None = None) -> dict[str, dict[str, float]]:
    """Generate synthetic train/validation/test data, train every available model, print test metrics.

    Returns
    -------
    dict
        Model name -> metric -> mean on the test set.
    """
    import time

    from ranklearn._progress import TrainingProgress
    from ranklearn.datasets import make_ranking_splits

    out = console or C.console
    train, valid, test = make_ranking_splits(random_state=0)
    out.print(
        f"synthetic data: {train.n_queries} train / {valid.n_queries} validation / {test.n_queries} test queries, "
        f"{train.n_features} features"
    )
    results: dict[str, dict[str, float]] = {}
    from ranklearn.registry import REGISTRY

    for name, spec in list(REGISTRY.items()):
        params = spec.demo
        try:
            cls = model_class(name)
        except ValueError as exc:
            out.print(f"skipping {name}: {C.one_line(exc)}")
            continue
        estimator = cls(**params)
        start = time.perf_counter()
        with TrainingProgress(C.planned_iterations(estimator), description=name) as progress:
            estimator.fit(
                train.X, train.y, qid=train.qid, eval_set=[(valid.X, valid.y, valid.qid)],
                eval_names=["validation"], callbacks=[progress],
            )  # fmt: skip
        out.print(f"{name}: trained in {time.perf_counter() - start:.1f}s")
        results[name] = evaluate_sets(estimator, {"test": test}, DEMO_METRICS)["test"]
    if results:
        C.print_results("test set, every model:", results, DEMO_METRICS, out)
    return results
