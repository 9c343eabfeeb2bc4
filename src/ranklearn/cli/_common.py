"""What the commands share: loading inputs, reading score files, and printing results."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from ranklearn._files import check_writable, is_stdio, reads_stdin, same_file, write_output, writes_stdout
from ranklearn.exceptions import DataFormatError

if TYPE_CHECKING:  # importing the metrics loads numba, numpy and rich's tables cost too: keep `--help` fast
    import numpy as np
    from rich.table import Table

    from ranklearn.data import RankingDataset
    from ranklearn.metrics import Metric
    from ranklearn.exceptions import FeatureValueError

# soft_wrap: a message is one line whatever the width (off a terminal rich assumes 80 columns, and logs are grepped)
console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


def load_data(
    path: Path,
    *,
    regroup: bool = True,
    sparse: bool = False,
    n_features: int | None = None,
    return_order: bool = False,
    warn_regroup: bool = True,
    dtype: type | str = "float32",
    require_groups: bool = True,
    position_file: Path | None = None,
    positions_unused: str | None = None,
    weights_read: bool = False,
) -> RankingDataset | tuple[RankingDataset, np.ndarray | None]:
    """Load a ranking file (qid layout, or LightGBM layout with ``<path>.query``; ``-`` = stdin).

    ``regroup=True`` gathers the rows of a qid that reappears after other queries into one
    query (stable) and says so in one warning line on stderr, since two different queries
    sharing an id is how concatenated files go wrong; ``regroup=False`` (``--no-regroup``)
    makes that an error naming the line. ``return_order=True`` also returns the row order
    applied (see :func:`ranklearn.data.load_svmlight`), to line up per-row files such as
    scores (``warn_regroup=False`` where groups do not matter). ``sparse=True`` keeps ``X``
    sparse; ``n_features`` pads a file whose trailing features are all zero (omitted) up to a
    model's feature count. ``dtype=np.float64`` keeps every value as written (``convert``);
    the models train on float32. ``require_groups=False``: lines without qid and no query
    file are one query (``predict``, which needs no groups). ``position_file``: the rows'
    display positions from that file instead of the ``<path>.position`` sidecar.
    ``positions_unused``: the command does not use positions here, and this is why: the sidecar
    is not read (a bad one is no error), and a note on stderr says so when there is one (``""``:
    no note, for a file read again). The ``<path>.weight`` sidecar (LightGBM's weights) is read
    by ``train`` alone, for its training file (``weights_read=True``: the caller reads it); any
    other command notes that it did not read one, for ``positions_unused``'s reason if given.
    """
    from ranklearn.data import load_svmlight
    from ranklearn.data.positions import sidecar_path
    from ranklearn.data.weights import weight_path

    if not is_stdio(path) and path.is_dir():
        raise IsADirectoryError(21, "is a directory, not a data file", str(path))
    source = sys.stdin.buffer if is_stdio(path) else path
    try:
        ds, order = load_svmlight(
            source, regroup=regroup, sparse=sparse, n_features=n_features, return_order=True, dtype=dtype,
            require_groups=require_groups, position_file=position_file if positions_unused is None else False,
            warn_weight_file=False,  # said below, in the command's words
        )
    except DataFormatError as exc:
        if regroup or "regroup=True" not in exc.reason:
            raise
        raise reworded(exc, exc.reason.replace("(regroup=True gathers them)", "(leave out --no-regroup to gather them)")) from None
    if order is not None and warn_regroup:
        _warn_regrouped(path, ds, order)
    if ds.position is not None and position_file is None:  # read from a sidecar the user did not name: say so
        note(f"positions from {ds.position_file}")
    if positions_unused and not is_stdio(path) and sidecar_path(path).exists():
        note(f"{sidecar_path(path)} not read: {positions_unused}")
    if not weights_read and positions_unused != "" and not is_stdio(path) and weight_path(path).exists():
        note(f"{weight_path(path)} not read: {positions_unused or WEIGHTS_READER}")
    return (ds, order) if return_order else ds


#: why a command other than ``train`` (on its training file) does not read a ``.weight`` sidecar
WEIGHTS_READER = "weights are read by ranklearn train (its --train file, or --weight-file) and cv (its --data file)"


def load_data_as_wide(
    path: Path, n_features: int, beyond: str, **kwargs: Any
) -> RankingDataset | tuple[RankingDataset, np.ndarray | None]:
    """:func:`load_data` padded to ``n_features`` columns (trailing all-zero features may be left
    out of a file); a feature id past them is an error saying it is beyond ``beyond``."""
    try:
        return load_data(path, n_features=n_features, **kwargs)
    except DataFormatError as exc:
        raise beyond_width(exc, beyond) from None


def reworded(exc: DataFormatError, reason: str) -> DataFormatError:
    """The same data error (file, line, token) with the reason in the command line's words."""
    return DataFormatError(reason, path=exc.path, line=exc.line, token=exc.token)


def beyond_width(exc: DataFormatError, beyond: str) -> DataFormatError:
    """A loader's "feature id exceeds n_features" (the local or the Dask one) as "feature F is
    beyond ``beyond``"; any other error as it is."""
    if not exc.reason.startswith("feature id exceeds n_features"):
        return exc
    return reworded(exc, f"feature {(exc.token or '').split(':', 1)[0]} is beyond {beyond}")


def shown(path: Path) -> str:
    """A data path as errors name it: ``<stdin>`` for ``-``."""
    return "<stdin>" if is_stdio(path) else str(path)


def line_of(ds: RankingDataset, row: int) -> int | None:
    """The file line of a dataset row (None when the data was not read from a file)."""
    return None if ds.lines is None else int(ds.lines[row])


def check_labels_nonnegative(ds: RankingDataset, path: Path, why: str = "") -> None:
    """Refuse a negative label (the gains of the metrics take none), naming the file's line.

    Raises
    ------
    DataFormatError
    """
    import numpy as np

    if (ds.y < 0).any():
        row = int(np.flatnonzero(ds.y < 0)[0])
        raise DataFormatError(
            f"labels must be >= 0{why} (this one is {ds.y[row]:g})", path=shown(path), line=line_of(ds, row)
        )


def feature_value_error(exc: FeatureValueError, ds: RankingDataset, path: Path, estimator: Any) -> DataFormatError:
    """A value ``estimator`` cannot take, named by the file's line and the feature id."""
    from ranklearn.registry import spec_of

    spec = spec_of(estimator)
    # a served model (SavedScorer) is no registered class: it names its model type
    model = spec.name if spec is not None else getattr(estimator, "model_type", type(estimator).__name__)
    if exc.kind == "inf":
        reason = f"feature {exc.feature + 1} is infinite; no model takes inf (a missing value is NaN)"
    else:
        reason = (f"feature {exc.feature + 1} is NaN (missing); {model} does not accept missing values "
                  "(impute them, or use lambdamart, which learns where NaN goes)")  # fmt: skip
    return DataFormatError(reason, path=shown(path), line=line_of(ds, exc.row))


def _warn_regrouped(path: Path, ds: RankingDataset, order: np.ndarray) -> None:
    """One stderr line: how many queries had their separated rows gathered, and the first one."""
    import numpy as np

    from ranklearn.data.groups import block_ptr

    file_qid = np.empty_like(ds.qid)
    file_qid[order] = ds.qid
    heads = file_qid[block_ptr(file_qid)[:-1]]
    _, first, counts = np.unique(heads, return_index=True, return_counts=True)
    split = first[counts > 1]
    example = heads[split.min() : split.min() + 1].tolist()[0]
    name = shown(path)
    if split.shape[0] == 1:
        what = f"1 qid reappears after other queries (qid:{example}); its rows were"
    else:
        what = f"{split.shape[0]:,} qids reappear after other queries (first qid:{example}); the rows of each were"
    warn(f"{name}: {what} merged into one query, keeping file order (--no-regroup refuses such files)")


class Interrupted(Exception):
    """Ctrl-C that a command handled: the message says what was kept (``main`` prints it and
    exits with status 130)."""


def warn(text: str) -> None:
    """One warning line on stderr."""
    print(f"ranklearn: warning: {' '.join(text.split())}", file=sys.stderr)


def note(text: str) -> None:
    """One informational line on stderr (what a command used that the user did not name)."""
    print(f"ranklearn: {' '.join(text.split())}", file=sys.stderr)


def output_path(value: str) -> Path:
    """An output option's value as a Path (typer's ``parser``), refusing a name that ends in ``/``
    before ``Path`` drops the slash: ``out/`` names a folder, never the file ``out``."""
    import typer

    if value.endswith("/") and not Path(value).is_dir():
        raise typer.BadParameter(f"{value!r} ends with / but is not a folder; a file's name has none")
    return Path(value)


def check_output_path(path: Path, *inputs: Path) -> None:
    """Fail early, before any long work, when ``path`` cannot be written as a file or would
    destroy an input.

    Raises
    ------
    OSError
        Where writing ``path`` would fail (:func:`ranklearn._files.check_writable`).
    ValueError
        If ``path`` is the same file as one of ``inputs`` (for ``-``, the file standard input
        reads) or as an input's LightGBM query file ``<input>.query`` (through symlinks or
        another spelling of the path).
    """
    check_writable(path)
    for source in inputs:
        if is_stdio(source):  # "-": the file standard input reads, if any (< FILE)
            if reads_stdin(path):
                raise ValueError(
                    f"{path}: is the file standard input reads (the input given as -); writing it would destroy the input"
                )
            continue
        for read in (source, Path(f"{source}.query")):
            if same_file(path, read):
                raise ValueError(f"{path}: is the input file {read}; writing it would destroy the input")


#: ``--iterations N`` of predict and export (see :func:`model_part`)
ITERATIONS_OPT = typer.Option(
    None, "--iterations", metavar="N", min=1,
    help="Use the first N iterations of the model (trees, bags, rounds) instead of all it keeps.",
)  # fmt: skip


def model_part(estimator: Any, iterations: int | None, best: bool, path: Path) -> Any:
    """The loaded model, or its first ``iterations`` iterations (``--iterations N``); ``best``
    (``--best``) checks that it has a best iteration, which is what it keeps.

    Raises
    ------
    ValueError
        In the options' words: no best iteration, both options, or a range the model lacks.
    """
    if best and iterations is not None:
        raise ValueError("give --best or --iterations, not both")
    if best and estimator.best_iteration_ is None:
        raise ValueError(
            f"--best: {path} has no best iteration (trained without a validation set); "
            f"it scores with all its {estimator.n_kept_iterations()} {estimator.iteration_unit}s"
        )
    if iterations is None:
        return estimator  # the kept model: its best iteration when it has one
    try:
        return estimator.iterations(0, iterations)
    except ValueError as exc:
        raise ValueError(f"--iterations {iterations}: {path}: {exc}") from None


def read_scores(path: Path, n_rows: int, data_path: Path, what: str = "score") -> np.ndarray:
    """One finite number per line (``-``: standard input), exactly ``n_rows`` of them (trailing
    blank lines are allowed); ``what`` each number is, as errors name it.

    Raises
    ------
    DataFormatError
        Naming the line of a token that is not a finite number, or both counts when the
        number of scores differs from the number of data rows
        (:func:`ranklearn.data.source.read_numbers`).
    """
    from ranklearn.data.source import read_numbers

    if not is_stdio(path) and path.is_dir():
        raise IsADirectoryError(21, f"is a directory, not a {what}s file", str(path))
    return read_numbers(sys.stdin.buffer if is_stdio(path) else path, n_rows, shown(data_path), what)[0]


def weight_sidecar(train: Path) -> Path | None:
    """``<train>.weight`` (LightGBM's weight file, as ``simulate-clicks --aggregate`` writes it) when it exists."""
    from ranklearn.data.weights import weight_path

    path = None if is_stdio(train) else weight_path(train)
    return path if path is not None and path.exists() else None


def read_weights(path: Path, n_rows: int, train: Path, order: np.ndarray | None) -> np.ndarray:
    """The training rows' weights from ``path`` (:func:`ranklearn.data.weights.read_weight_file`;
    ``-``: standard input), one per row of ``train`` in file order, put in the rows' order after
    regrouping (``order``); noted on stderr.

    Raises
    ------
    DataFormatError
        The reader's, naming the file and line.
    ValueError
        When every weight is 0.
    """
    from ranklearn.data.weights import read_weight_file

    if not is_stdio(path) and path.is_dir():
        raise IsADirectoryError(21, "is a directory, not a weights file", str(path))
    weight = read_weight_file(sys.stdin.buffer if is_stdio(path) else path, n_rows, shown(train))
    if not weight.any():
        raise ValueError(f"every weight in {shown(path)} is 0: nothing to train on")
    note(f"weights from {path} (sample_weight)")
    return weight if order is None else weight[order]


def conventions_line(metrics: Sequence[Metric]) -> str:
    """:func:`ranklearn.metrics.conventions_line` (imported when the metrics are)."""
    from ranklearn.metrics import conventions_line as line

    return line(metrics)


def results_table(rows: dict[str, dict[str, float]], metric_names: Sequence[str | Metric]) -> Table:
    """Table with one row per query/set/model and one column per metric (4 decimals)."""
    from rich.table import Table

    table = Table()
    table.add_column("", style="bold")
    metric_names = [getattr(m, "name", m) for m in metric_names]
    for name in metric_names:
        table.add_column(name, justify="right")
    for label, values in rows.items():
        table.add_row(label, *(_fmt(values[name]) for name in metric_names))
    return table


#: what the final tables of ``train`` (local or on a cluster) and ``demo`` report, besides the training metric
REPORT_METRIC = "ndcg@10"


def table_metrics(estimator: Any) -> list[Metric]:
    """The final table's metrics: :data:`REPORT_METRIC` and the model's own, one column each;
    the model's with its gain (``--gain linear``), so that where they share a name (``ndcg@10``)
    the table and the watched metric are one figure. Other conventions are the defaults, as
    ``evaluate``'s (ERR's top grade is 4, not the training labels' largest)."""
    from ranklearn.metrics import get_metric

    spec = estimator.get_params()["metric"]
    own = get_metric(spec, gain=estimator.evaluation_metric().gain) if isinstance(spec, str) else spec
    return [own] if own.name.lower() == REPORT_METRIC else [get_metric(REPORT_METRIC), own]


def print_results(
    title: str, rows: dict[str, dict[str, float]], metric_names: Sequence[str | Metric], console: Console
) -> None:
    """``title``, the table of ``rows`` (set -> metric -> value) and the metrics' conventions."""
    console.print(title)
    console.print(results_table(rows, metric_names))
    console.print(conventions_line(as_metrics(metric_names)))


def score_set(
    metrics: list[Any], y: np.ndarray, scores: np.ndarray, ptr: np.ndarray, name: str, notes: list[str] | None,
    ds: RankingDataset | None = None, path: Path | None = None,
) -> dict[str, float]:
    """Each metric's mean on one set; NaN where the metric refuses the labels, its reason in
    ``notes`` (naming ``path``'s line of the first bad label when the set ``ds`` came from it)."""
    import numpy as np

    row: dict[str, float] = {}
    for m in metrics:
        try:
            row[m.name] = m.mean(y, scores, ptr)
        except ValueError as exc:  # the labels: the scores are the model's own, finite
            row[m.name] = math.nan
            if notes is None:
                continue
            said = one_line(exc)
            bad = np.flatnonzero(~(np.isfinite(y) & (y >= 0)))
            if ds is not None and path is not None and bad.size and line_of(ds, int(bad[0])) is not None:
                said = re.sub(r"\brow \d+ has", f"{shown(path)} line {line_of(ds, int(bad[0]))} has", said)
            notes.append(f"{m.name} not computed on {name}: {said}")
    return row


def as_metrics(metrics: Sequence[str | Metric]) -> list[Metric]:
    """Metric names (default conventions) and Metrics, as Metrics."""
    from ranklearn.metrics import Metric, get_metric

    return [m if isinstance(m, Metric) else get_metric(m) for m in metrics]


def planned_iterations(estimator: Any) -> int | None:
    """Planned iterations (trees, epochs...), for the progress bar."""
    return estimator.get_params().get("n_estimators")


def save_interrupted(estimator: Any, save: Path | None) -> str:
    """Save the best model so far of an interrupted fit (with ``save``); what was kept, in words."""
    if not estimator.__sklearn_is_fitted__():
        return "interrupted before the first iteration finished; nothing trained, nothing saved"
    if save is None:
        return "interrupted; nothing saved (no --save given)"
    estimator.save(save)
    return f"interrupted; saved the best model so far to {save}"


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.4f}"


def json_number(value: float) -> float | None:
    """JSON has no NaN: a metric with no scored query becomes null."""
    return None if math.isnan(value) else float(value)


def print_json(obj: object) -> None:
    """Print one JSON object on stdout, unstyled."""
    print(json.dumps(obj, allow_nan=False))


def one_line(exc: BaseException) -> str:
    """A user error as one line: ``<file>[:<line>]: <what>`` where a file is known."""
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.filename}: {exc.strerror or exc}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def write_lines(path: Path, lines: Iterable[str]) -> None:
    """Write text lines by the output rules of :mod:`ranklearn._files` (``-`` = stdout)."""
    write_output(path, "".join(f"{line}\n" for line in lines).encode())


def report(text: str, *outputs: Path) -> None:
    """Print a status line: on stdout, or on stderr when an output goes to standard output."""
    to_stdout = any(writes_stdout(p) for p in outputs)
    (err_console if to_stdout else console).print(text)
