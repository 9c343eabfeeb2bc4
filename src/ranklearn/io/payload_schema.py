"""The JSON types of a model-file payload's fields, checked before a ranker reads them.

A file whose checksum is valid may still have been written by hand or by another program:
``"n_features": "46"`` or ``"objective": "lambdarank"`` (a dict of the objective's settings is
saved) must be refused by name, not read as 46 or trusted. :data:`SHARED_FIELDS` are the fields every ranker's payload has
(``BaseRanker._to_payload``); a ranker declares its own state fields the same way.
"""

from __future__ import annotations

from typing import Any

from ranklearn.exceptions import ModelFormatError

__all__ = ["SHARED_FIELDS", "check_fields", "check_shared"]

#: JSON type names: what Python's json module reads each as
_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "number": (int, float),
    "bool": (bool,),
    "str": (str,),
    "list": (list,),
    "dict": (dict,),
    "null": (type(None),),
}

#: field -> the JSON types it may hold (every payload; a missing optional field is checked by its reader)
SHARED_FIELDS: dict[str, tuple[str, ...]] = {
    "payload_version": ("int",),
    "params": ("dict",),
    "n_features": ("int",),
    "feature_names": ("list", "null"),
    "max_grade": ("number", "null"),
    "evals_result": ("dict",),
    "best_iteration": ("int", "null"),
    "best_score": ("number", "null"),
    "n_iter": ("int",),
    "interrupted": ("bool",),
    "normalizer": ("dict", "null"),
}


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind != "bool":  # JSON true is not the number 1
        return False
    return isinstance(value, _TYPES[kind])


def check_fields(payload: dict[str, Any], fields: dict[str, tuple[str, ...]], model_type: str) -> None:
    """Refuse a present field of ``payload`` whose JSON type is not one ``fields`` allows.

    Raises
    ------
    ModelFormatError
        Naming the field, the types allowed and the value found.
    """
    for name, kinds in fields.items():
        if name in payload and not any(_is(payload[name], k) for k in kinds):
            found = "null" if payload[name] is None else type(payload[name]).__name__
            raise ModelFormatError(
                f"{model_type} payload field {name!r} must be {' or '.join(kinds)}, got {found} {payload[name]!r:.40}"
            )


def check_shared(payload: dict[str, Any], model_type: str, newest: int) -> tuple[int, int]:
    """The shared fields' checks of every loader (the estimator's and ``predict``'s served one):
    their JSON types, the payload version (``newest``: the one this ranklearn writes) and the
    feature count. Returns ``(payload_version, n_features)``.

    Raises
    ------
    ModelFormatError
        A field of the wrong type, no valid or a newer payload version, under one feature.
    """
    check_fields(payload, SHARED_FIELDS, model_type)
    version = payload.get("payload_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ModelFormatError(f"{model_type} payload has no valid payload_version (got {version!r})")
    if version > newest:
        raise ModelFormatError(
            f"{model_type} payload version {version} is newer than this ranklearn reads ({newest}); upgrade ranklearn"
        )
    n_features = int(payload["n_features"])
    if n_features < 1:
        raise ModelFormatError("n_features must be at least 1")
    return version, n_features
