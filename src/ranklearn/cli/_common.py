"""What the commands share: loading inputs, reading score files, and printing results."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from rich.console import Console
from rich.table import Table

from ranklearn.exceptions import DataFormatError

if TYPE_CHECKING:  # importing the metrics loads numba; keep `--help` fast
    from ranklearn.data import RankingDataset
    from ranklearn.metrics import Metric

console = Console()

# "<label> qid:<q>" at the start of a line (save_svmlight writes exactly one space between)
_QID_TOKEN = re.compile(rb"^(\S+) qid:\S+", re.MULTILINE)


def load_data(path: Path, *, regroup: bool = False, sparse: bool = False) -> RankingDataset:
    """Load a ranking file (qid layout, or LightGBM layout with ``<path>.query``).

    ``regroup=False`` keeps the file's row order (needed where rows line up with a score
    file); a qid that reappears after another query is then an error naming the line.
    ``sparse=True`` keeps ``X`` sparse (for commands that do not need dense features).
    """
    from ranklearn.data import load_svmlight

    if path.is_dir():
        raise IsADirectoryError(21, "is a directory, not a data file", str(path))
    return load_svmlight(path, regroup=regroup, sparse=sparse)


def check_output_path(path: Path) -> None:
    """Fail early, before any long work, when ``path`` cannot be written as a file.

    Raises
    ------
    OSError
        If ``path`` is a directory, or its folder does not exist or is not a folder.
    """
    import errno

    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(path))
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"cannot write here (no such directory: {folder})", str(path))


def read_scores(path: Path, n_rows: int, data_path: Path) -> np.ndarray:
    """One finite number per line, exactly ``n_rows`` of them (a final newline is optional).

    Raises
    ------
    DataFormatError
        Naming the line of a token that is not a finite number, or both counts when the
        number of scores differs from the number of data rows.
    """
    if path.is_dir():
        raise IsADirectoryError(21, "is a directory, not a scores file", str(path))
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    scores = np.empty(len(lines))
    for i, raw in enumerate(lines):
        token = raw.strip()
        try:
            value = float(token.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            value = math.nan
        if not math.isfinite(value):
            raise DataFormatError(
                "expected one finite number per line",
                path=path,
                line=i + 1,
                token=token.decode("utf-8", errors="backslashreplace"),
            )
        scores[i] = value
    if scores.shape[0] != n_rows:
        raise DataFormatError(
            f"{scores.shape[0]} scores for {n_rows} rows in {data_path}; need one score per row, "
            "in the row order of the data file",
            path=path,
        )
    return scores


def conventions_line(metrics: Sequence[Metric]) -> str:
    """One line stating the conventions of every metric, grouping metrics that share them."""
    groups: dict[str, list[str]] = {}
    for m in metrics:
        groups.setdefault(m.conventions, []).append(m.name)
    if len(groups) == 1:
        return f"conventions: {next(iter(groups))}"
    return "conventions: " + "; ".join(f"{', '.join(names)}: {text}" for text, names in groups.items())


def results_table(rows: dict[str, dict[str, float]], metric_names: Sequence[str]) -> Table:
    """Table with one row per query/set/model and one column per metric (4 decimals)."""
    table = Table()
    table.add_column("", style="bold")
    for name in metric_names:
        table.add_column(name, justify="right")
    for label, values in rows.items():
        table.add_row(label, *(_fmt(values[name]) for name in metric_names))
    return table


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
    """Write text lines atomically (readers see the old file or the complete new one)."""
    from ranklearn.io.model_file import atomic_write_bytes

    atomic_write_bytes(path, "".join(f"{line}\n" for line in lines).encode())


def strip_qid_column(path: Path) -> None:
    """Rewrite a qid-layout file without its ``qid:<q>`` tokens (LightGBM's layout)."""
    from ranklearn.io.model_file import atomic_write_bytes

    atomic_write_bytes(path, _QID_TOKEN.sub(rb"\1", path.read_bytes()))
