"""The ranklearn model file: a versioned, checksummed JSON envelope, written safely (``ranklearn._files``).

Layout (one JSON object)::

    {"format": "ranklearn-model", "format_version": 2, "model_type": "lambdamart",
     "ranklearn_version": "0.1.0", "sha256": "<hex of the canonical model_type and payload>", "payload": {...}}

The checksum covers the canonical JSON text of ``{"model_type": ..., "payload": ...}``, so a
truncated or edited file, a relabelled model type included, is detected before any of it is
used. Files of format version 1 (the checksum covered ``payload`` alone) are still read.
"""

from __future__ import annotations

import hashlib
import json
from os import PathLike
from pathlib import Path
from typing import Any

from ranklearn._files import write_output
from ranklearn._version import __version__
from ranklearn.exceptions import ModelFormatError

FORMAT_NAME = "ranklearn-model"
FORMAT_VERSION = 2


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid in a model file")


def _canonical(model_type: str, payload: dict[str, Any], version: int = FORMAT_VERSION) -> bytes:
    """The bytes the checksum covers: version 1 the payload alone, later ones the model type too."""
    covered = payload if version == 1 else {"model_type": model_type, "payload": payload}
    return json.dumps(covered, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def write_model_file(path: str | PathLike[str], model_type: str, payload: dict[str, Any]) -> None:
    """Write a model payload (JSON-serializable, no NaN/inf) atomically with version and checksum."""
    write_output(path, model_file_bytes(model_type, payload))


def model_file_bytes(model_type: str, payload: dict[str, Any]) -> bytes:
    """The model file's contents (what :func:`write_model_file` writes), for stores that are
    not local files (a Spark model's folder)."""
    body = _canonical(model_type, payload)
    envelope = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "model_type": model_type,
        "ranklearn_version": __version__,
        "sha256": hashlib.sha256(body).hexdigest(),
        "payload": payload,
    }
    return json.dumps(envelope, separators=(",", ":"), allow_nan=False).encode()


def read_model_file(path: str | PathLike[str]) -> tuple[str, dict[str, Any]]:
    """Read and verify a model file.

    Returns
    -------
    model_type, payload

    Raises
    ------
    ModelFormatError
        If the file is missing, unreadable, not a ranklearn model, from a newer
        format version, or fails its checksum.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except IsADirectoryError:
        raise ModelFormatError("is a directory, not a model file", path=p) from None
    except OSError as exc:
        raise ModelFormatError(f"cannot read model file: {exc.strerror or exc}", path=p) from None
    return parse_model_file(raw, p)


def parse_model_file(raw: bytes, path: str | PathLike[str]) -> tuple[str, dict[str, Any]]:
    """Verify a model file's contents (read from ``path``, which errors name): as
    :func:`read_model_file`.

    Raises
    ------
    ModelFormatError
    """
    try:
        envelope = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, huge integers
        raise ModelFormatError(
            "not a ranklearn model file (not valid JSON; truncated or corrupted?)", path=path
        ) from None
    if not isinstance(envelope, dict) or envelope.get("format") != FORMAT_NAME:
        raise ModelFormatError("not a ranklearn model file (no 'ranklearn-model' header)", path=path)
    version = envelope.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ModelFormatError(f"model file has no valid format_version (got {version!r})", path=path)
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"model format version {version} is newer than this ranklearn supports "
            f"({FORMAT_VERSION}); upgrade ranklearn",
            path=path,
        )
    payload = envelope.get("payload")
    model_type = envelope.get("model_type")
    if not isinstance(payload, dict) or not isinstance(model_type, str):
        raise ModelFormatError("model file lacks a model_type or payload", path=path)
    try:
        body = _canonical(model_type, payload, version)
    except (ValueError, RecursionError):  # non-finite numbers (1e999) cannot have been written by us
        raise ModelFormatError("model payload holds non-finite numbers: the model file is corrupted", path=path) from None
    if hashlib.sha256(body).hexdigest() != envelope.get("sha256"):
        raise ModelFormatError("checksum mismatch: the model file is corrupted", path=path)
    return model_type, payload
