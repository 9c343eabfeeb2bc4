"""Exceptions raised by ranklearn.

Every malformed input surfaces as one of these (or a ``ValueError`` naming the
parameter), so the command line can turn it into a one-line message and exit 2.
"""

from __future__ import annotations

from os import PathLike

from ranklearn._text import shown_token


class RanklearnError(Exception):
    """Base class of ranklearn's own errors."""


class DataFormatError(RanklearnError, ValueError):
    """A data file or array is malformed.

    Parameters
    ----------
    message : str
        What is wrong and what was expected.
    path : str or PathLike, optional
        The file the problem is in.
    line : int, optional
        1-based line number in ``path``.
    token : str, optional
        The offending token, quoted in the message (cut to ``MAX_TOKEN_SHOWN`` characters
        there: a binary file's "token" can be kilobytes of escapes).
    """

    MAX_TOKEN_SHOWN = 40

    def __init__(
        self,
        message: str,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
        token: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        # lone surrogates (bytes that are not UTF-8, ranklearn._text.token_text) as printable \\xNN text
        self.token = None if token is None else token.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        self.reason = message
        where = ""
        if self.path is not None:
            where = self.path
            if line is not None:
                where += f":{line}"
        elif line is not None:
            where = f"line {line}"
        shown = token
        if token is not None and len(self.token) > self.MAX_TOKEN_SHOWN:
            # cut by the width shown: an undecodable byte is four characters (\xNN), as in self.token
            width, cut = 0, 0
            while cut < len(token) and width + (4 if "\udc80" <= token[cut] <= "\udcff" else 1) <= self.MAX_TOKEN_SHOWN:
                width += 4 if "\udc80" <= token[cut] <= "\udcff" else 1
                cut += 1
            shown = token[:cut] + "..."
        text = message if shown is None else f"{message} (got {shown_token(shown)})"
        super().__init__(f"{where}: {text}" if where else text)


class ModelFormatError(RanklearnError, ValueError):
    """A model file is truncated, corrupted, foreign or from a newer format version."""

    def __init__(self, message: str, *, path: str | PathLike[str] | None = None) -> None:
        self.path = None if path is None else str(path)
        self.reason = message
        super().__init__(f"{self.path}: {message}" if self.path else message)


class TrainingDivergedError(RanklearnError, FloatingPointError):
    """Training produced non-finite losses or weights (usually a learning rate that is too high)."""


class FeatureValueError(RanklearnError, ValueError):
    """A value a model cannot take: ``row`` and ``feature`` (both 0-based) of the first one, and
    ``kind``, "inf" or "NaN"."""

    def __init__(self, message: str, row: int, feature: int, kind: str) -> None:
        super().__init__(message)
        self.row = row
        self.feature = feature
        self.kind = kind

    def __reduce__(self) -> tuple:  # pickled across processes (joblib, Dask) with its fields
        return type(self), (str(self), self.row, self.feature, self.kind)
