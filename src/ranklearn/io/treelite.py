"""Export to Treelite (https://treelite.readthedocs.io), to compile a tree model into a shared
library for low-latency serving (``tl2cgen``) or to score it with Treelite's GTIL.

The model is built with Treelite's own builder (``treelite.model_builder.ModelBuilder``) and
written as Treelite's checkpoint (``Model.serialize_bytes``; read back by
``treelite.Model.deserialize(path)``). Treelite compares a row's value, converted to the
threshold type, with ``<=`` as ranklearn does, and sends NaN to the split's default child
(``default_left``, the direction ranklearn learned). Thresholds and leaf values are float64:
each threshold is :func:`ranklearn.io.lightgbm.double_thresholds` of ranklearn's, so that a
float32 row and a float64 one (LETOR's decimals read as doubles) go where ``predict`` sends
them, and the leaf values are summed in float64 as ranklearn sums them.
"""

from __future__ import annotations

from os import PathLike
from typing import Any

import numpy as np

from ranklearn._files import write_output
from ranklearn.io._trees import model_trees
from ranklearn.io.lightgbm import double_thresholds


def treelite_model(model: Any) -> Any:
    """A fitted tree model (LambdaMART, MART, RandomForest, a RankLib import) as a ``treelite.Model``.

    Raises
    ------
    ValueError
        For a model that is not a fitted tree model.
    ImportError
        If treelite is not installed.
    """
    trees = model_trees(model, "Treelite")
    import treelite.model_builder as mb

    builder = mb.ModelBuilder(
        threshold_type="float64",
        leaf_output_type="float64",
        metadata=mb.Metadata(
            num_feature=model.n_features_in_,
            task_type="kRegressor",
            average_tree_output=False,
            num_target=1,
            num_class=[1],
            leaf_vector_shape=(1, 1),
        ),
        tree_annotation=mb.TreeAnnotation(num_tree=len(trees), target_id=[0] * len(trees), class_id=[0] * len(trees)),
        postprocessor=mb.PostProcessorFunc(name="identity"),
        base_scores=[0.0],
    )
    for tree in trees:
        thresholds = double_thresholds(tree.threshold)
        builder.start_tree()
        for node in range(tree.feature.shape[0]):
            builder.start_node(node)
            if tree.feature[node] < 0:
                builder.leaf(float(tree.value[node]))
            else:
                builder.numerical_test(
                    int(tree.feature[node]),
                    float(thresholds[node]),
                    default_left=bool(tree.missing_left[node]),
                    opname="<=",
                    left_child_key=int(tree.left[node]),
                    right_child_key=int(tree.right[node]),
                )
            builder.end_node()
        builder.end_tree()
    return builder.commit()


def export_treelite(model: Any, path: str | PathLike[str]) -> None:
    """Write a fitted tree model as a Treelite checkpoint (atomically; needs ``treelite``).

    ``treelite.gtil.predict(treelite.Model.deserialize(path), X)`` then equals ``model.predict(X)``;
    raises as :func:`treelite_model`.
    """
    write_output(path, treelite_model(model).serialize_bytes())


def score_treelite(path: str | PathLike[str], X: np.ndarray) -> np.ndarray:
    """Scores of ``X`` by Treelite's GTIL on the exported file (needs ``treelite``)."""
    import treelite

    loaded = treelite.Model.deserialize(str(path))
    return np.asarray(treelite.gtil.predict(loaded, np.ascontiguousarray(X)), dtype=np.float64).reshape(-1)
