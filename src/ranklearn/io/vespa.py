"""Export to Vespa's tree rank features: ``lightgbm("file.json")`` (LightGBM's
``Booster.dump_model()`` JSON) and ``xgboost("file.json")`` (XGBoost's JSON dump).

Vespa turns each tree into a ranking expression evaluated in doubles
(``model-integration/.../importer/lightgbm/LightGBMParser.java``,
``.../importer/xgboost/AbstractXGBoostParser.java``):

* ``lightgbm()``: a split is ``if (x < threshold, left, right)``, or ``if (!(x >= threshold),
  left, right)`` when ``default_left`` (NaN goes left; otherwise right), ``threshold`` the
  double of the JSON; the leaf values are doubles and the objective ``lambdarank`` adds no
  transform. The export writes each threshold as the smallest double ``T`` with ``x < T``
  exactly when ``float32(x) <= t`` for every double ``x`` (the double after
  :func:`ranklearn.io.lightgbm.double_thresholds`), so float32 and float64 feature values go
  where ``predict`` sends them, and the exact leaf values: Vespa's scores are ranklearn's to
  double round-off. This is the export to prefer.
* ``xgboost()``: ``split_condition`` is cast to float32 and compared with ``<`` in doubles
  (NaN to ``missing``); :func:`ranklearn.io.xgboost.xgboost_dump` is exact for float32 feature
  values, while a double between ranklearn's threshold and the next float32 goes the other way.

Neural rankers go to Vespa as ONNX (``ranklearn export --format onnx``) in the schema's
``onnx-model`` block.
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Any

import numpy as np

from ranklearn._files import write_output
from ranklearn.io._trees import model_trees, nested, resolve_feature_names
from ranklearn.io.lightgbm import double_thresholds
from ranklearn.io.xgboost import xgboost_dump

FLAVORS = ("lightgbm", "xgboost")


def vespa_thresholds(threshold: np.ndarray) -> np.ndarray:
    """For Vespa's ``x < T`` on doubles: ``T`` with ``x < T`` exactly when ranklearn's
    ``float32(x) <= t`` (the double after the largest double that rounds to a float32 ``<= t``)."""
    return np.nextafter(double_thresholds(threshold), np.inf)


def lightgbm_dump(model: Any, feature_names: list[str] | None = None) -> dict[str, Any]:
    """A fitted tree model as LightGBM's ``dump_model()`` JSON, thresholds set for Vespa's ``<``.

    Raises
    ------
    ValueError
        For a model that is not a fitted tree model.
    """
    trees = model_trees(model, "Vespa")
    names = resolve_feature_names(model, feature_names)
    info = []
    for i, tree in enumerate(trees):
        internal = np.flatnonzero(tree.feature >= 0)
        leaves = np.flatnonzero(tree.feature < 0)
        split_index = {int(node): k for k, node in enumerate(internal)}
        leaf_index = {int(node): k for k, node in enumerate(leaves)}
        thresholds = vespa_thresholds(tree.threshold)

        def split(node, left, right, tree=tree, split_index=split_index, thresholds=thresholds):
            return {
                "split_index": split_index[node],
                "split_feature": int(tree.feature[node]),
                "split_gain": float(tree.gain[node]),
                "threshold": float(thresholds[node]),
                "decision_type": "<=",
                "default_left": bool(tree.missing_left[node]),
                "missing_type": "NaN",
                "internal_count": int(tree.count[node]),
                "left_child": left,
                "right_child": right,
            }

        def leaf(node, tree=tree, leaf_index=leaf_index):
            return {"leaf_index": leaf_index[node], "leaf_value": float(tree.value[node]), "leaf_count": int(tree.count[node])}

        info.append(
            {"tree_index": i, "num_leaves": leaves.shape[0], "num_cat": 0, "shrinkage": 1, "tree_structure": nested(tree, split, leaf)}
        )
    return {
        "name": "tree",
        "version": "v4",
        "num_class": 1,
        "num_tree_per_iteration": 1,
        "label_index": 0,
        "max_feature_idx": model.n_features_in_ - 1,
        "objective": "lambdarank",
        "average_output": False,
        "feature_names": names,
        "monotone_constraints": [],
        "feature_infos": {},
        "tree_info": info,
        "feature_importances": {},
        "pandas_categorical": None,  # Vespa's parser reads it: it must be present
    }


def export_vespa(
    model: Any, path: str | PathLike[str], *, flavor: str = "lightgbm", feature_names: list[str] | None = None
) -> None:
    """Write a fitted tree model for Vespa's ``lightgbm()`` (default) or ``xgboost()`` rank feature
    (atomically). ``feature_names`` are the rank features the trees read (e.g.
    ``attribute(price)``; default: the model's names, else ``f1``, ``f2``, ...).

    Raises
    ------
    ValueError
        For a model that is not a fitted tree model, or another flavor.
    """
    if flavor not in FLAVORS:
        raise ValueError(f"flavor must be one of {', '.join(FLAVORS)}, got {flavor!r}")
    doc = lightgbm_dump(model, feature_names) if flavor == "lightgbm" else xgboost_dump(model, feature_names)
    write_output(path, json.dumps(doc, indent=1).encode())
