"""Per-row weights of a ranking file: LightGBM's weight file, the data file's ``.weight`` sidecar.

A file named like the data file plus ``.weight`` (``train.txt.weight``), one number >= 0 per
line, one line per data row in the data file's order, as LightGBM reads it beside its data
and ``ranklearn simulate-clicks --aggregate`` writes it (each merged row's count of sessions).
A :class:`~ranklearn.data.RankingDataset` holds no weights: ``ranklearn train`` and
:func:`ranklearn.dask.read_svmlight` read the sidecar and give it to ``fit(sample_weight=)``.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import numpy as np

from ranklearn.data.source import PathOrFile, read_numbers
from ranklearn.exceptions import DataFormatError

#: the sidecar's suffix, appended to the data file's name (LightGBM's convention)
SUFFIX = ".weight"


def weight_path(data_path: str | PathLike[str]) -> Path:
    """The weight file that belongs to a data file: ``<data_path>.weight`` (LightGBM's)."""
    return Path(f"{data_path}{SUFFIX}")


def read_weight_file(source: PathOrFile, n_rows: int | None = None, data_name: str = "the data file") -> np.ndarray:
    """The weights of a weight file, one per line, in file order, as float64.

    Parameters
    ----------
    source : str, PathLike or binary file object
        Plain or gzip-compressed text, LF or CRLF line ends; trailing blank lines are allowed.
    n_rows : int, optional
        The data file's row count; the file must have exactly that many weights.
    data_name : str
        How the count error names the data file.

    Raises
    ------
    DataFormatError
        Naming the file and 1-based line: a line that is not one finite number (a blank line
        among the weights included: it would shift every later row), a negative weight, or a
        count other than ``n_rows``.
    """
    weight, name = read_numbers(source, n_rows, data_name, "weight")
    negative = np.flatnonzero(weight < 0)
    if negative.size:
        raise DataFormatError("a weight must be >= 0", path=name, line=int(negative[0]) + 1, token=f"{weight[negative[0]]:g}")
    return weight
