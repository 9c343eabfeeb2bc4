"""Export RankNet and LambdaRank to ONNX, for serving without Python or torch.

The graph holds the whole scorer of the fitted model: the input standardization
``(x - mean) / scale`` and, with ``n_networks > 1``, the mean of the networks' scores.
Input ``features``: float32 ``[n_rows, n_features]``, any number of rows; output ``scores``:
float32 ``[n_rows]``, the scores of ``model.predict`` (which computes in float32 too and
returns them as float64). A model fitted with a global ``normalize=`` has its normalizer in the
graph too, first: ``(x - offset) * scale`` per feature (:meth:`ranklearn.data.Normalizer.affine`);
one fitted with a per-query ``normalize`` is refused. The export uses torch's exporter (``torch.onnx.export``, built on
``torch.export``), which needs the ``onnx`` and ``onnxscript`` packages:
``pip install 'ranklearn[onnx]'``.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import warnings
from collections.abc import Iterator
from os import PathLike
from typing import Any

import numpy as np

from ranklearn._files import write_output

__all__ = ["export_onnx", "INPUT_NAME", "OUTPUT_NAME"]

INPUT_NAME = "features"
OUTPUT_NAME = "scores"
INSTALL_HINT = "pip install 'ranklearn[onnx]'"


def export_onnx(model: Any, path: str | PathLike[str], *, opset_version: int | None = None) -> None:
    """Write a fitted RankNet or LambdaRank as an ONNX model, atomically, to ``path``.

    Parameters
    ----------
    model : RankNet or LambdaRank
        A fitted neural ranker; it is not changed (a CPU copy of its scorer is exported).
    path : str or PathLike
        The ``.onnx`` file to write (replaced whole, or left as it was on an error).
    opset_version : int, optional
        ONNX opset of the graph (default: the exporter's recommended one).

    Raises
    ------
    TypeError
        If ``model`` is not a RankNet or LambdaRank.
    ValueError
        If it normalizes each query within itself (``normalize="query-..."``).
    sklearn.exceptions.NotFittedError
        If it is not fitted.
    ImportError
        If torch, onnx or onnxscript is missing (the message says what to install).
    """
    from ranklearn.registry import REGISTRY, spec_of

    spec = spec_of(model)
    if spec is None or "onnx" not in spec.exports:
        held = ", ".join(name for name, other in REGISTRY.items() if "onnx" in other.exports)
        raise TypeError(f"ONNX export supports the neural rankers ({held}), not {type(model).__name__}")
    if not model.__sklearn_is_fitted__():
        from sklearn.exceptions import NotFittedError  # not at import: ranklearn.io stays light

        raise NotFittedError(f"this {type(model).__name__} is not fitted yet; call fit first")
    from ranklearn.io._trees import raw_input_normalizer

    norm = raw_input_normalizer(model, "ONNX")
    torch = _require_exporter()
    scorer = copy.deepcopy(model.model_).to("cpu").float().eval()  # eval: no dropout in the graph
    if norm is not None:
        scorer = _normalized(torch, scorer, *norm.affine())
    example = torch.zeros(2, scorer.n_features)  # 2 rows: a size the exporter does not specialize on
    with _quiet_exporter():
        program = torch.onnx.export(
            scorer,
            (example,),
            input_names=[INPUT_NAME],
            output_names=[OUTPUT_NAME],
            dynamic_shapes={"x": {0: torch.export.Dim("n_rows")}},
            opset_version=opset_version,
            external_data=False,
            verbose=False,
            dynamo=True,
        )
    proto = program.model_proto
    proto.doc_string = f"ranklearn {spec.name}: {OUTPUT_NAME}[n_rows] from {INPUT_NAME}[n_rows, {scorer.n_features}]"
    for key, value in (("ranklearn_model_type", spec.name), ("n_features", str(scorer.n_features))):
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    write_output(path, proto.SerializeToString())


def _normalized(torch: Any, scorer: Any, offset: np.ndarray, scale: np.ndarray) -> Any:
    """``scorer`` behind the affine map of a global normalizer, as one module (its graph's first node)."""

    class Normalized(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scorer = scorer
            self.n_features = scorer.n_features
            self.register_buffer("offset", torch.as_tensor(offset, dtype=torch.float32))
            self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float32))

        def forward(self, x: Any) -> Any:
            return self.scorer((x - self.offset) * self.scale)

    return Normalized().eval()


def _require_exporter() -> Any:
    """torch, once onnx and onnxscript (which torch's exporter needs) are known to import."""
    from ranklearn.neural import require_torch

    torch = require_torch()
    for package in ("onnx", "onnxscript"):
        try:
            __import__(package)
        except ImportError as exc:
            raise ImportError(f"ONNX export needs the {package!r} package: {INSTALL_HINT}") from exc
    return torch


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    """Silence the exporter's log lines and deprecation warnings about its own internals
    (e.g. that torchvision's operators are not registered), which say nothing about the model."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    finally:
        logger.setLevel(level)


def score_onnx(path: str | PathLike[str], X: np.ndarray) -> np.ndarray:
    """Scores of ``X`` by onnxruntime on the exported file (needs ``onnxruntime``)."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (scores,) = session.run([OUTPUT_NAME], {INPUT_NAME: np.ascontiguousarray(X, dtype=np.float32)})
    return np.asarray(scores, dtype=np.float64).reshape(-1)
