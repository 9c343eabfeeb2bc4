"""Training from the command line (``train``) and the demo (``demo``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ranklearn.cli import _common as C

if TYPE_CHECKING:
    from ranklearn.data import RankingDataset

TREE = ("lambdamart",)
NEURAL = ("ranknet", "lambdarank")
ALL = TREE + NEURAL

#: command-line option -> (estimator parameter, the models it applies to)
TRAIN_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "trees": ("n_estimators", TREE),
    "leaves": ("num_leaves", TREE),
    "learning_rate": ("learning_rate", ALL),
    "min_leaf_samples": ("min_samples_leaf", TREE),
    "max_bins": ("max_bins", TREE),
    "metric": ("metric", ALL),
    "early_stopping": ("early_stopping_rounds", ALL),
    "threads": ("n_jobs", TREE),
    "seed": ("random_state", ALL),
    "sigma": ("sigma", ALL),
    "hidden": ("hidden", NEURAL),
    "networks": ("n_networks", NEURAL),
    "epochs": ("epochs", NEURAL),
    "optimizer": ("optimizer", NEURAL),
    "batch_queries": ("batch_queries", NEURAL),
    "dropout": ("dropout", NEURAL),
    "lambda_norm": ("lambda_normalization", NEURAL),
    "device": ("device", NEURAL),
}

#: what the final tables report (besides the training metric)
REPORT_METRIC = "ndcg@10"


def estimator_params(model: str, options: dict[str, Any]) -> dict[str, Any]:
    """Estimator keyword arguments from the options the user gave (None = not given).

    Options left out are not passed, so every model keeps its own defaults.

    Raises
    ------
    ValueError
        If a given option does not apply to ``model``.
    """
    params = {}
    for option, value in options.items():
        if value is None:
            continue
        param, models = TRAIN_OPTIONS[option]
        if model not in models:
            raise ValueError(
                f"--{option.replace('_', '-')} does not apply to {model} (it applies to {', '.join(models)})"
            )
        params[param] = value
    return params


def parse_hidden(text: str) -> tuple[int, ...]:
    """``"64,32"`` -> ``(64, 32)``; an empty string gives a linear scorer ``()``."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"--hidden must be comma-separated positive layer sizes such as 64,32; got {text!r}")
    return tuple(int(p) for p in parts)


def model_class(name: str) -> type:
    """The estimator class, or a one-line error when its module or torch is missing."""
    from ranklearn.models import get_model_class

    try:
        return get_model_class(name)
    except ImportError as exc:
        raise ValueError(f"model {name} is not available here ({exc}); install ranklearn[neural] for torch") from None


def evaluate_sets(estimator: Any, sets: dict[str, RankingDataset], metric_names: list[str]) -> dict[str, dict[str, float]]:
    """Mean of each metric (default conventions) of the estimator's predictions on each set."""
    from ranklearn.metrics import get_metric

    metrics = [get_metric(m) for m in metric_names]
    return {
        name: {m.name: m.mean(ds.y, estimator.predict(ds.X), ds.ptr) for m in metrics} for name, ds in sets.items()
    }


def check_labels_for_metrics(ds: RankingDataset, path: Path) -> None:
    """``train`` reports metrics on every set: refuse labels they cannot take before training.

    Raises
    ------
    DataFormatError
        Naming the file and row of a negative label, or of a label too large for the gain
        2^rel-1 (the estimators themselves train on any finite labels; from Python).
    """
    import numpy as np

    from ranklearn.exceptions import DataFormatError
    from ranklearn.metrics._api import MAX_EXP2_LABEL

    if (ds.y < 0).any():
        row = int(np.flatnonzero(ds.y < 0)[0])
        raise DataFormatError(
            f"labels must be >= 0 for the metrics that train reports (row {row} has {ds.y[row]:g}); "
            "shift the labels",
            path=path,
        )
    if ds.y.max() > MAX_EXP2_LABEL:
        raise DataFormatError(
            f"labels above {MAX_EXP2_LABEL} overflow the gain 2^rel-1 of the reported NDCG (largest {ds.y.max():g})",
            path=path,
        )


def _total(estimator: Any) -> int | None:
    """Planned iterations (trees) or epochs, for the progress bar."""
    params = estimator.get_params()
    return params.get("n_estimators", params.get("epochs"))


def run_train(
    model: str,
    params: dict[str, Any],
    train: Path,
    validate: Path | None,
    test: Path | None,
    save: Path | None,
) -> None:
    """Fit ``model`` on ``train`` (early stopping on ``validate``), save it, and print a metrics table.

    On Ctrl-C the estimator keeps its best model so far; that one is saved (with ``save``)
    and the command exits with status 130.
    """
    import typer

    from ranklearn._progress import TrainingProgress

    if params.get("early_stopping_rounds") is not None and validate is None:
        raise ValueError("--early-stopping needs a --validate set to watch")
    if save is not None:
        C.check_output_path(save)  # before training, not after hours of it
    estimator = model_class(model)(**params)
    try:
        sets = {"train": C.load_data(train, regroup=True)}
        if validate is not None:
            sets["validate"] = C.load_data(validate, regroup=True)
        if test is not None:
            sets["test"] = C.load_data(test, regroup=True)
    except KeyboardInterrupt:
        typer.echo("ranklearn: interrupted while loading data; nothing trained, nothing saved", err=True)
        raise typer.Exit(130) from None
    paths = {"train": train, "validate": validate, "test": test}
    for name, ds in sets.items():
        check_labels_for_metrics(ds, paths[name])
    tr = sets["train"]
    eval_set = [(sets["validate"].X, sets["validate"].y, sets["validate"].qid)] if validate is not None else None
    try:
        with TrainingProgress(_total(estimator), description=model) as progress:
            estimator.fit(
                tr.X, tr.y, qid=tr.qid, eval_set=eval_set,
                eval_names=["validate"] if eval_set else None, callbacks=[progress],
            )  # fmt: skip
    except KeyboardInterrupt:
        _save_interrupted(estimator, save)
        raise typer.Exit(130) from None
    if save is not None:
        estimator.save(save)
    metric_names = list(dict.fromkeys([REPORT_METRIC, estimator.get_params()["metric"]]))
    saved = f"saved to {save}" if save is not None else "not saved (no --save)"
    _print_results(f"{model}: {saved}; metrics on each set", evaluate_sets(estimator, sets, metric_names), metric_names)


def _save_interrupted(estimator: Any, save: Path | None) -> None:
    import typer

    if save is None:
        typer.echo("ranklearn: interrupted; nothing saved (no --save given)", err=True)
        return
    try:
        estimator.save(save)
    except Exception as exc:  # e.g. interrupted before the first iteration: nothing to save
        typer.echo(f"ranklearn: interrupted before a model could be saved ({C.one_line(exc)})", err=True)
        return
    typer.echo(f"ranklearn: interrupted; saved the best model so far to {save}", err=True)


def _print_results(title: str, rows: dict[str, dict[str, float]], metric_names: list[str]) -> None:
    from ranklearn.metrics import get_metric

    C.console.print(title)
    C.console.print(C.results_table(rows, metric_names))
    C.console.print(C.conventions_line([get_metric(m) for m in metric_names]))


# ------------------------------------------------------------------------------------- demo
#: Settings that train each model on the demo data in well under a minute on 2 cores.
DEMO_SETTINGS: dict[str, dict[str, Any]] = {
    "lambdamart": dict(n_estimators=150, learning_rate=0.1, num_leaves=15, min_samples_leaf=10,
                       early_stopping_rounds=20, random_state=0),
    "ranknet": dict(hidden=(32,), epochs=20, learning_rate=3e-3, early_stopping_rounds=10, random_state=0),
    "lambdarank": dict(hidden=(32,), epochs=20, learning_rate=3e-3, early_stopping_rounds=10, random_state=0),
}  # fmt: skip
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
    for name, params in DEMO_SETTINGS.items():
        try:
            cls = model_class(name)
        except ValueError as exc:
            out.print(f"skipping {name}: {C.one_line(exc)}")
            continue
        estimator = cls(**params)
        start = time.perf_counter()
        with TrainingProgress(_total(estimator), description=name) as progress:
            estimator.fit(
                train.X, train.y, qid=train.qid, eval_set=[(valid.X, valid.y, valid.qid)],
                eval_names=["validation"], callbacks=[progress],
            )  # fmt: skip
        out.print(f"{name}: trained in {time.perf_counter() - start:.1f}s")
        results[name] = evaluate_sets(estimator, {"test": test}, DEMO_METRICS)["test"]
    if results:
        _print_results("test set, every model:", results, DEMO_METRICS)
    return results
