"""The body of ``ranklearn simulate-clicks``: a click log simulated on a ranking file's true labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ranklearn._files import is_special, write_outputs
from ranklearn.cli import _common as C
from ranklearn.exceptions import DataFormatError

#: Which options each click model takes (the others are refused, not silently ignored).
MODEL_OPTIONS = {
    "pbm": {"eta", "epsilon"},
    "cascade": {"epsilon"},
    "dcm": {"epsilon", "continuation"},
    "ubm": {"eta", "epsilon"},
    "trust": {"eta"},
}


def click_model(name: str, options: dict[str, float | None]) -> Any:
    """The click model ``name`` with the options given (None: not given).

    Raises
    ------
    ValueError
        For an option the model does not take, or a bad value (named).
    """
    from ranklearn.clicks.models import CLICK_MODELS

    given = {k: v for k, v in options.items() if v is not None}
    extra = sorted(set(given) - MODEL_OPTIONS[name])
    if extra:
        flags = ", ".join(f"--{k}" for k in extra)
        takes = ", ".join(f"--{k}" for k in sorted(MODEL_OPTIONS[name]))
        raise ValueError(f"--click-model {name} takes {takes}, not {flags}")
    return CLICK_MODELS[name](**given)


def aggregated_files(log: Any, ds: Any, out: Path, per_session: bool = False) -> dict[Path, bytes]:
    """OUT (clicks as labels, one row per query, document and position), OUT.position and
    OUT.weight (impressions, LightGBM's weight file); ``per_session``: one group per distinct
    session instead (clicked 0/1, the weight how many sessions it stands for)."""
    from ranklearn.clicks import ClickTrainingSet
    from ranklearn.data import format_svmlight
    from ranklearn.data.positions import format_positions, sidecar_path
    from ranklearn.data.weights import weight_path

    training = ClickTrainingSet.per_pattern(log, ds) if per_session else log.training_set(ds)
    rows = training.to_dataset()
    weights = training.sample_weight
    return {
        out: format_svmlight(rows),
        sidecar_path(out): format_positions(rows.position),
        weight_path(out): ("\n".join(str(int(w)) for w in weights) + "\n").encode("ascii"),
    }


def run_simulate_clicks(
    *,
    data: Path,
    logging_models: list[Path],
    model_name: str,
    options: dict[str, float | None],
    sessions: int,
    top_k: int,
    temperature: float | None,
    swap: bool,
    randpair: int | None,
    seed: int,
    out: Path,
    aggregate: bool,
    per_session: bool = False,
) -> None:
    """Load, check, simulate, write (the log, or with ``aggregate`` the three training files, per
    query, document and position or, ``per_session``, per distinct session)."""
    from ranklearn.clicks import simulate
    from ranklearn.data.positions import sidecar_path
    from ranklearn.data.weights import weight_path
    from ranklearn.io import load_model

    model = click_model(model_name, options)  # options first: before any file is read
    if swap and randpair is not None:
        raise ValueError("--swap and --randpair are two interventions: give one (--swap is --randpair 1)")
    if randpair is not None and not 1 <= randpair <= top_k:
        raise ValueError(f"--randpair must be a rank from 1 to --top-k ({top_k}), got {randpair}")
    outputs = [out, sidecar_path(out), weight_path(out)] if aggregate else [out]
    if per_session and not aggregate:
        raise ValueError("--per-session shapes the rows of --aggregate: give --aggregate too")
    if aggregate and out.suffix.lower() in (".parquet", ".pq"):
        raise ValueError(f"--aggregate writes SVMlight text: OUT cannot be a Parquet file ({out})")
    if aggregate and is_special(out):
        raise ValueError(f"--aggregate writes OUT, OUT.position and OUT.weight together: OUT cannot be standard output or a device ({out})")
    for path in outputs:
        C.check_output_path(path, data, *logging_models)
    ds = C.load_data(data, positions_unused="the simulation ranks by the logging models")
    C.check_labels_nonnegative(ds, data, " (the click models' relevance is (2^label - 1) / (2^max - 1))")
    ids = np.asarray(ds.query_ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise DataFormatError("click logs name queries by integer ids; this file's qids are not all integers",
                              path=C.shown(data))  # fmt: skip
    scores = []
    for path in logging_models:
        estimator = load_model(path)
        n = estimator.n_features_in_
        wide = ds if ds.X.shape[1] == n else C.load_data_as_wide(
            data, n, f"the features of {path} ({n})", positions_unused="")  # noted at the first read
        scores.append(estimator.predict(wide.X, qid=wide.qid))
    log = simulate(ds, np.stack(scores), model, n_sessions=sessions, top_k=top_k, seed=seed,
                   temperature=temperature, intervention="swap" if swap else None if randpair is None else "randpair",
                   pivot=1 if randpair is None else randpair)  # fmt: skip
    clicks = int(log.click.sum())
    if aggregate:
        files = aggregated_files(log, ds, out, per_session)
        write_outputs(files)
        n_rows = files[out].count(b"\n")
        rows = "rows in groups of distinct sessions" if per_session else "rows (query, document, position)"
        C.report(f"wrote {out}, {outputs[1]} and {outputs[2]}: {n_rows:,} {rows} "
                 f"from {sessions:,} sessions, {clicks:,} clicks", out)  # fmt: skip
        return
    log.write(out)
    C.report(f"wrote {out}: {len(log):,} impressions of {sessions:,} sessions, {clicks:,} clicks", out)
