"""Display positions: the rank at which each logged document was shown, and their sidecar file.

A position is 1-based (1 = shown first), one per row, as click models and debiased rankers use
it. On disk it follows LightGBM's convention for ``Dataset(position=...)``: a file named like
the data file plus ``.position`` (``train.txt.position``), one whole number per line, one line
per data row in the data file's order. :func:`ranklearn.data.load_svmlight` reads that sidecar
when it exists (and says so), :func:`ranklearn.data.save_svmlight` writes it.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from ranklearn.data.source import read_lines
from ranklearn.exceptions import DataFormatError

#: the sidecar's suffix, appended to the data file's name (LightGBM's convention)
SUFFIX = ".position"


def sidecar_path(data_path: str | PathLike[str]) -> Path:
    """The position file that belongs to a data file: ``<data_path>.position``."""
    return Path(f"{data_path}{SUFFIX}")


def read_position_file(
    path: str | PathLike[str], n_rows: int | None = None, data_name: str = "the data file"
) -> np.ndarray:
    """Positions of a position file, one per line, in file order, as int64.

    Parameters
    ----------
    path : str or PathLike
        Plain or gzip-compressed text, LF or CRLF line ends; trailing blank lines are allowed.
    n_rows : int, optional
        The data file's row count; the file must have exactly that many positions.
    data_name : str
        How the count error names the data file.

    Raises
    ------
    DataFormatError
        Naming the file and 1-based line: a line that is not one whole number >= 1 (a blank
        line among the positions included: it would shift every later row), or a count other
        than ``n_rows``.
    """
    lines, name = read_lines(path)
    out = np.empty(len(lines), dtype=np.int64)
    for i, line in enumerate(lines):
        text = line.strip().decode("utf-8", errors="backslashreplace")
        # ASCII digits only (no sign, no decimal point): a display rank is a whole number
        if not (text.isascii() and text.isdigit()) or int(text) == 0:
            raise DataFormatError(
                "bad position: expected one whole number >= 1 per line (the 1-based rank the row was shown at)",
                path=name,
                line=i + 1,
                token=text,
            )
        out[i] = int(text)
    if n_rows is not None and out.shape[0] != n_rows:
        raise DataFormatError(f"{out.shape[0]} positions for the {n_rows} rows of {data_name}", path=name)
    return out


def format_positions(position: np.ndarray) -> bytes:
    """The text of a position file: one whole number per line."""
    return ("\n".join(map(str, np.asarray(position, dtype=np.int64).tolist())) + "\n").encode("ascii")


def check_position(position: ArrayLike | None, n: int, order: np.ndarray | None = None, what: str = "position") -> np.ndarray | None:
    """Per-row 1-based display ranks as int64, reordered like the rows (``order``), or None.

    A position is the rank at which the document was shown in its logged result list (1 =
    top): what click models and the debiased estimators need. Models never need it to score.

    Raises
    ------
    ValueError
        If the length differs from the rows', or a value is NaN, infinite, not a whole number
        or below 1 (naming the first such row, from 0).
    """
    if position is None:
        return None
    p = np.asarray(position)
    if p.ndim == 2 and 1 in p.shape:
        p = p.ravel()
    if p.ndim != 1:
        raise ValueError(f"{what} must be one value per row, got shape {p.shape}")
    if p.shape[0] != n:
        raise ValueError(f"{what} has {p.shape[0]} values for {n} rows")
    if p.dtype.kind == "b" or p.dtype.kind not in "iuf":
        raise ValueError(f"{what} must hold whole numbers >= 1 (1 = shown first), got dtype {p.dtype}")
    if p.dtype.kind == "f":
        bad = ~np.isfinite(p) | (p != np.floor(np.where(np.isfinite(p), p, 0)))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{what} must hold whole numbers >= 1 (1 = shown first): {p[row].item()!r} at row {row} (from 0)")
    low = p < 1
    if low.any():
        row = int(np.flatnonzero(low)[0])
        raise ValueError(f"{what} must be >= 1 (1 = shown first): {p[row].item()!r} at row {row} (from 0)")
    p = p.astype(np.int64)
    return p if order is None else p[order]
