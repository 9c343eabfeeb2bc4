"""Export to Solr's Learning-To-Rank module: the JSON of a ``LinearModel`` or a
``MultipleAdditiveTreesModel``, uploaded to ``/solr/<collection>/schema/model-store``.

Solr's rules (``solr/modules/ltr/src/java/org/apache/solr/ltr/model/MultipleAdditiveTreesModel.java``
and ``LinearModel.java``): feature values are float32; a tree node's ``threshold`` string is
parsed with ``Float.parseFloat`` and ``NODE_SPLIT_SLACK = 1e-6f`` is added to it in float32; a
row goes left when ``x <= threshold``; a tree scores ``weight * value`` and the model sums the
trees in float32. There is no missing-value branch and no base score: a document without a
value for a feature gets the feature's default (0 unless the feature store says otherwise),
never NaN. ``LinearModel`` scores ``sum(weight * x)`` in float32, without a constant term.

The export writes every threshold as the float32 ``s`` with ``float32(s + 1e-6f)`` equal to
ranklearn's float32 threshold, so that Solr's split is ranklearn's (where no ``s`` gives it,
as for a few small thresholds, the next float32 Solr reaches, with a warning: see
:func:`solr_threshold`); a model whose splits learned
a direction for missing values is refused unless ``missing_as`` states the value Solr's
documents will carry where a feature is missing (the scores are then ranklearn's for rows with
that value in place of NaN).
"""

from __future__ import annotations

import json
import warnings
from os import PathLike
from typing import Any

import numpy as np

from ranklearn._files import write_output
from ranklearn.io._trees import (
    float32_down,
    float32_text,
    learned_missing_branch,
    is_linear_model,
    linear_weights,
    model_trees,
    nested,
    require_fitted_tree_or_linear,
    resolve_feature_names,
)

#: Solr's ``RegressionTreeNode.NODE_SPLIT_SLACK``, added to every threshold as it is parsed
NODE_SPLIT_SLACK = np.float32(1e-6)
_TREES = "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
_LINEAR = "org.apache.solr.ltr.model.LinearModel"


def solr_threshold(threshold: float) -> tuple[np.float32, bool]:
    """The threshold text's float32 ``s`` for ranklearn's split at ``threshold``, and whether
    Solr then splits exactly there.

    Solr splits at ``float32(s + 1e-6f)``. When it equals ``float32_down(threshold)`` (the
    float32 ranklearn splits at), Solr's split is ranklearn's. For some thresholds no float32
    ``s`` gives it: the sum's rounding reaches only every other float32 (or fewer) there, as
    happens for about 7% of thresholds between 1e-6 and 1e-3 and most below 5e-7. Then ``s`` is
    the one splitting at the nearest reachable float32 above: every value ranklearn sends left
    goes left, and the values between (no more than a few float32 steps, values no training
    row held) go left in Solr too.
    """
    target = float32_down(threshold)[()]
    first = np.float32(target - NODE_SPLIT_SLACK)  # float32 arithmetic, as Java's
    candidates, down, up = [first], first, first
    with np.errstate(over="ignore"):  # next to the largest float32
        for _ in range(16):  # the rounded difference is within a few float32 steps of the answer
            down, up = np.nextafter(down, np.float32(-np.inf)), np.nextafter(up, np.float32(np.inf))
            candidates += [down, up]
        splits = [np.float32(c + NODE_SPLIT_SLACK) for c in candidates]
    above = [(split, c) for split, c in zip(splits, candidates) if split >= target]
    split, chosen = min(above, key=lambda pair: pair[0])
    return chosen, bool(split == target)


def solr_model(
    model: Any,
    *,
    name: str = "ranklearn",
    store: str | None = None,
    feature_names: list[str] | None = None,
    missing_as: float | None = None,
) -> dict[str, Any]:
    """A fitted model as Solr LTR's model JSON.

    Parameters
    ----------
    model
        LambdaMART, MART, RandomForest or a RankLib tree import (``MultipleAdditiveTreesModel``);
        linear, coordinate-ascent or AdaRank (``LinearModel``).
    name : str
        The model's name in Solr (``rq={!ltr model=NAME}``).
    store : str, optional
        The feature store holding the features (Solr's default store when omitted).
    feature_names : list of str, optional
        The features' names in that store (default: the model's, else ``f1``, ``f2``, ...).
    missing_as : float, optional
        The value Solr's documents carry where a feature is missing: required for a model that
        learned where missing values go, since Solr has no missing-value branch.

    Raises
    ------
    ValueError
        For another model, a tree model with a missing-value branch and no ``missing_as``,
        or a linear model with a constant term (Solr's ``LinearModel`` has none).
    """
    require_fitted_tree_or_linear(model, "Solr")
    names = resolve_feature_names(model, feature_names)
    body: dict[str, Any] = {"name": name, "features": [{"name": n} for n in names]}
    if store is not None:
        body["store"] = store
    if is_linear_model(model):
        coef, intercept = linear_weights(model, "Solr")
        if intercept != 0.0:
            raise ValueError(
                f"Solr's LinearModel has no constant term and this model's intercept is {intercept!r} "
                "(it shifts every score alike: rankings are the same without it)"
            )
        return {"class": _LINEAR, **body, "params": {"weights": {n: float(w) for n, w in zip(names, coef)}}}
    trees = model_trees(model, "Solr")
    if missing_as is None and learned_missing_branch(model, trees):
        raise ValueError(
            "the model learned where missing values go and Solr has no missing-value branch: "
            "give missing_as (--missing-as VALUE), the value Solr's documents carry for a missing feature"
        )

    inexact = 0

    def tree_json(tree):
        def split(node, left, right):
            nonlocal inexact
            t, exact = solr_threshold(tree.threshold[node])
            inexact += not exact
            return {"feature": names[tree.feature[node]], "threshold": float32_text(t), "left": left, "right": right}

        return {"weight": "1", "root": nested(tree, split, lambda node: {"value": repr(float(tree.value[node]))})}

    doc = {"class": _TREES, **body, "params": {"trees": [tree_json(t) for t in trees]}}
    if inexact:
        warnings.warn(
            f"{inexact} split(s) cannot be written exactly for Solr (it adds 1e-6 to thresholds in float32): "
            "they split at the next float32 Solr can reach, so a value a few float32 steps above such a "
            "threshold goes left in Solr and right in ranklearn",
            stacklevel=2,
        )
    return doc


def export_solr(
    model: Any,
    path: str | PathLike[str],
    *,
    name: str = "ranklearn",
    store: str | None = None,
    feature_names: list[str] | None = None,
    missing_as: float | None = None,
) -> None:
    """Write :func:`solr_model` (same options) as JSON, atomically.

    Raises
    ------
    ValueError
        As :func:`solr_model`.
    """
    body = solr_model(model, name=name, store=store, feature_names=feature_names, missing_as=missing_as)
    write_output(path, json.dumps(body, indent=1).encode())
