"""Messages of ranklearn's exceptions."""

from __future__ import annotations

from ranklearn.exceptions import DataFormatError


def test_data_format_error_names_file_line_and_token():
    exc = DataFormatError("bad label", path="train.txt", line=3, token="high")
    assert str(exc) == "train.txt:3: bad label (got 'high')"
    assert (exc.path, exc.line, exc.token, exc.reason) == ("train.txt", 3, "high", "bad label")


def test_long_tokens_are_cut_in_the_message_but_kept_whole():
    token = "\\x80" * 400  # a binary file's first "token", escaped: 1,600 characters
    exc = DataFormatError("expected a number", path="s.bin", line=1, token=token)
    shown = token[: DataFormatError.MAX_TOKEN_SHOWN] + "..."
    assert str(exc) == f"s.bin:1: expected a number (got {shown!r})"
    assert exc.token == token
    edge = "x" * DataFormatError.MAX_TOKEN_SHOWN
    assert str(DataFormatError("m", token=edge)) == f"m (got {edge!r})"
