"""Body of ``ranklearn cv``: k-fold cross-validation on one file, or over LETOR FoldN folders.

Model options are the ``train`` command's (every ranker parameter), given after the cv
options as ``--n-estimators 100 --leaves 15 ...``; each value takes the option's type, and
a flag (``--standardize``, ``--no-standardize``) takes none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ranklearn.cli import _common as C
from ranklearn.cli._train import (
    check_features_for_model,
    check_labels_for_metrics,
    checked_estimator,
    checked_normalize,
    estimator_params,
    merged_options,
    model_class,
)


def parse_model_options(model: str, args: Sequence[str], train_metric: str | None = None) -> dict[str, Any]:
    """``["--n-estimators", "100", "--hidden", "64,32"]`` -> estimator parameters for ``model``;
    ``--normalize METHOD`` (train's, RankLib's ``-norm``) gives every ranker's ``normalize``, and
    ``train_metric`` (cv's ``--train-metric``) sets the ranker's ``metric``.

    Raises
    ------
    ValueError
        An option that ``train`` does not have, one without a value, a value of the wrong
        type or outside the parameter's range (named by its option), or an option of another
        model.
    """
    merged = merged_options()
    given: dict[str, Any] = {}
    normalize = None
    items = list(args)
    flags = {f"--no-{flag[2:]}": flag for flag, (opt, _) in merged.items() if opt.type is bool}
    while items:
        flag = items.pop(0)
        if flag in flags or (flag in merged and merged[flag][0].type is bool):
            given[flags.get(flag, flag)] = flag not in flags
            continue
        if flag not in merged and flag != "--normalize":
            raise ValueError(f"unknown option {flag!r} (model options: {', '.join([*merged, '--normalize'])})")
        if not items:
            raise ValueError(f"option {flag} needs a value")
        if flag == "--normalize":
            normalize = checked_normalize(items.pop(0))
        else:
            given[flag] = _coerce(flag, items.pop(0), merged[flag][0].type)
    if train_metric is not None:
        given["--metric"] = train_metric
    params = estimator_params(model, given)
    if normalize is not None:
        params["normalize"] = normalize
    checked_estimator(model_class(model)(**params), model)  # before any data is read
    return params


def _coerce(flag: str, text: str, kind: type) -> Any:
    try:
        if kind is int:
            return int(text)
        if kind is float:
            value = float(text)
            if not math.isfinite(value):
                raise ValueError
            return value
    except ValueError:
        raise ValueError(f"option {flag} takes a {'whole ' if kind is int else ''}number, got {text!r}") from None
    return text


def _letor_folds(root: Path) -> list[int]:
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(20, "is a file; --letor-folds takes the folder holding Fold1, Fold2, ...", str(root))
    if not root.is_dir():
        raise FileNotFoundError(2, "no such directory", str(root))
    numbers = sorted(int(p.name[4:]) for p in root.glob("Fold*") if p.name[4:].isdigit() and p.is_dir())
    if not numbers:
        raise FileNotFoundError(2, "has no Fold1, Fold2, ... folders", str(root))
    return numbers


def _check(ds: Any, path: Path, estimator: Any, *, scored: bool = True) -> None:
    # by the file's line (a fold's arrays know only their own rows), before the data is fitted;
    # labels only where cv scores them (a training file may hold labels the ranker takes)
    if scored:
        check_labels_for_metrics(ds, path, "cv")
    check_features_for_model(ds, path, estimator)


def run_cv(
    model: str,
    params: dict[str, Any],
    metrics: Sequence[str],
    *,
    data: Path | None,
    folds: int,
    split_seed: int,
    letor_folds: Path | None,
    as_json: bool,
    save_models: Path | None = None,
) -> dict[str, Any]:
    """Cross-validate and print each fold's metrics, then their mean and standard deviation;
    with ``save_models`` (a folder, made if missing) save each fold's model as ``fold-N.json``
    (RankLib's ``-kcvmd``)."""
    from ranklearn.metrics import get_metric

    if save_models is not None:
        if save_models.exists() and not save_models.is_dir():
            raise NotADirectoryError(20, "is a file; --save-models takes a folder for fold-N.json", str(save_models))
        if not save_models.parent.is_dir():
            raise FileNotFoundError(2, "no such folder to make --save-models in", str(save_models.parent))

    scorers = [get_metric(m) for m in metrics]
    estimator = model_class(model)(**params)
    rows: dict[str, dict[str, float]] = {}
    fitted_models: dict[int, Any] = {}  # fold number -> its model, for --save-models
    if (data is None) == (letor_folds is None):
        raise ValueError("give --data (with --folds) or --letor-folds")
    # --data folds have no validation file: --early-stopping carves one from each training part
    carve = 0.8 if data is not None and params.get("early_stopping_rounds") is not None else None
    if data is not None:
        from ranklearn.model_selection import cross_validate

        ds, order = C.load_data(data, return_order=True, weights_read=True)
        weights_from = C.weight_sidecar(data)  # LightGBM's weight file: each fold's training rows' weights
        weight = None if weights_from is None else C.read_weights(weights_from, ds.n_samples, data, order)
        if folds > ds.n_queries:
            raise ValueError(f"--folds {folds} is more than the {ds.n_queries} queries of {C.shown(data)}")
        _check(ds, data, estimator)
        result = cross_validate(
            estimator, ds.X, ds.y, qid=ds.qid, cv=folds, metrics=metrics, random_state=split_seed, progress=True,
            position=ds.position, return_estimator=save_models is not None, validation_fraction=carve,
            sample_weight=weight,
        )  # fmt: skip
        for i in range(folds):
            rows[f"fold {i + 1}"] = {m.name: float(result[f"test_{m.name}"][i]) for m in scorers}
            if save_models is not None:
                fitted_models[i + 1] = result["estimator"][i]
    else:
        from sklearn.base import clone

        from ranklearn.datasets import load_letor_fold
        from ranklearn.datasets import SPLIT_FILES
        from ranklearn.model_selection import fit_with_progress

        from ranklearn.data.weights import weight_path

        for n in _letor_folds(letor_folds):
            train, vali, test = load_letor_fold(letor_folds, n, warn_weight_file=False)  # said here instead
            for name in SPLIT_FILES:
                if (weights := weight_path(letor_folds / f"Fold{n}" / name)).exists():
                    C.note(f"{weights} not read: cv --letor-folds reads no weight files")
            for part, name in zip((train, vali, test), SPLIT_FILES, strict=True):  # before this fold is fitted
                _check(part, letor_folds / f"Fold{n}" / name, estimator, scored=part is not train)
            try:
                fitted = fit_with_progress(
                    clone(estimator), f"fold {n}", train.X, train.y, qid=train.qid, position=train.position,
                    eval_set=[(vali.X, vali.y, vali.qid)], eval_names=["vali"],
                )  # fmt: skip
            except ValueError as exc:  # e.g. training labels the ranker refuses: say which fold
                raise ValueError(f"{C.shown(letor_folds / f'Fold{n}')}: {exc}") from None
            scores = fitted.predict(test.X, qid=test.qid)
            rows[f"fold {n}"] = {m.name: m.mean(test.y, scores, test.ptr) for m in scorers}
            fitted_models[n] = fitted
    if save_models is not None:
        save_models.mkdir(exist_ok=True)
        for n, fitted in fitted_models.items():
            fitted.save(save_models / f"fold-{n}.json")
        # on stderr with --json, whose stdout is the JSON alone
        (C.err_console if as_json else C.console).print(f"saved {len(fitted_models)} fold models as {save_models}/fold-N.json")
    values = {m.name: np.array([r[m.name] for r in rows.values()]) for m in scorers}
    mean = {name: float(v.mean()) for name, v in values.items()}
    std = {name: float(v.std(ddof=1)) if v.size > 1 else 0.0 for name, v in values.items()}
    summary = {"folds": rows, "mean": mean, "std": std, "model": model, "params": params}
    if as_json:
        C.print_json({"folds": {k: {m: C.json_number(v) for m, v in r.items()} for k, r in rows.items()},
                      "mean": {m: C.json_number(v) for m, v in mean.items()},
                      "std": {m: C.json_number(v) for m, v in std.items()},
                      "model": model, "params": {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}})  # fmt: skip
        return summary
    table = C.results_table(rows, list(values))
    table.add_section()
    table.add_row("mean ± std", *(f"{mean[m]:.4f} ± {std[m]:.4f}" for m in values))
    C.console.print(table)
    C.console.print(C.conventions_line(scorers))
    return summary
