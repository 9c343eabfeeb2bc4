"""Export to the Learning-to-Rank plugin of Elasticsearch (o19s/elasticsearch-learning-to-rank)
and OpenSearch (opensearch-project/opensearch-learning-to-rank-base, the same API): the body of
``POST _ltr/_featureset/<featureset>/_createmodel``.

The body is ``{"model": {"name", "model": {"type", "definition", "feature_normalizers"}}}``
(the plugin's ``StoredLtrModel.java`` and ``RestCreateModelFromSet.java``), the features named as
in the feature set. The model types and their rules:

* ``model/xgboost+json`` (trees; ``ranker/parser/XGBoostJsonParser.java``,
  ``ranker/dectree/NaiveAdditiveDecisionTree.java``): XGBoost's JSON dump (see
  :func:`ranklearn.io.xgboost.xgboost_dump`) under ``splits``, objective ``rank:ndcg`` (no
  transform). The plugin goes left when ``split_condition > x`` in float32, sends NaN to the
  ``missing`` child, and sums float32 leaf values. A feature whose query does not match a
  document is NaN there (the plugin's ``SparseFeatureVector``): it takes the missing branch.
* ``model/ranklib`` (trees or linear; see :mod:`ranklearn.io.ranklib`): RankLib's own scorer;
  NaN goes right at every split, and an unmatched feature is 0.
* ``model/linear`` (``ranker/parser/LinearRankerParser.java``): ``{feature: weight}``, scored
  as ``sum(weight * x)`` in float32 without a constant term; an unmatched feature is 0.

A model trained on features normalized by a global :class:`ranklearn.data.Normalizer` takes it
as ``normalizer``. A linear model gets the plugin's ``feature_normalizers``
(``feature/store/StoredFeatureNormalizers.java``): ``zscore`` as ``standard`` (``(x - mean) /
standard_deviation``), ``linear`` as ``min_max`` (``(x - minimum) / (maximum - minimum)``),
computed by the plugin in float32. A tree model's splits are moved onto the raw values instead
(:func:`ranklearn.io._trees.fold_normalizer`): the plugin's float32 normalization differs from
ranklearn's by a rounding step, enough to send a value lying on a threshold (thresholds are
training values) the other way.
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Any

import numpy as np

from ranklearn._files import write_output
from ranklearn.io._trees import (
    fold_normalizer,
    is_linear_model,
    is_tree_model,
    linear_weights,
    model_trees,
    require_fitted_tree_or_linear,
    resolve_feature_names,
)
from ranklearn.io.ranklib import ranklib_model_text
from ranklearn.io.xgboost import xgboost_dump

MODEL_TYPES = ("xgboost+json", "ranklib", "linear")


def feature_normalizers(normalizer: Any, names: list[str]) -> dict[str, Any]:
    """The plugin's ``feature_normalizers`` for a fitted global ranklearn ``Normalizer``.

    A ``zscore`` feature whose standard deviation is 0 (ranklearn leaves it unchanged) gets no
    normalizer, which leaves it unchanged in the plugin too.

    Raises
    ------
    ValueError
        For a per-query normalizer (the plugin normalizes each document alone), the ``sum``
        method (the plugin has none), one not fitted or of another width, or a ``linear``
        feature whose minimum equals its maximum (the plugin refuses such a ``min_max``).
    """
    if normalizer.per_query:
        raise ValueError("the LTR plugin normalizes each document alone: a per-query Normalizer cannot be exported")
    if normalizer.method not in ("zscore", "linear"):
        raise ValueError(f"the LTR plugin has standard (zscore) and min_max (linear) normalizers, not {normalizer.method!r}")
    params = getattr(normalizer, "params_", None)
    if params is None:
        raise ValueError("the Normalizer is not fitted")
    if normalizer.n_features_in_ != len(names):
        raise ValueError(f"the Normalizer has {normalizer.n_features_in_} features, the model {len(names)}")
    out: dict[str, Any] = {}
    for j, name in enumerate(names):
        if normalizer.method == "zscore":
            mean, std = float(params["mean"][j]), float(params["std"][j])
            if np.isfinite(std) and std > 0:
                out[name] = {"standard": {"mean": mean, "standard_deviation": std}}
        else:
            low, high = float(params["min"][j]), float(params["max"][j])
            if not low < high:
                raise ValueError(f"feature {name!r} has minimum {low!r} = maximum: the plugin's min_max refuses it")
            out[name] = {"min_max": {"minimum": low, "maximum": high}}
    return out


def ltr_plugin_model(
    model: Any,
    *,
    name: str = "ranklearn",
    model_type: str | None = None,
    feature_names: list[str] | None = None,
    normalizer: Any = None,
) -> dict[str, Any]:
    """The ``_createmodel`` body of a fitted model.

    Parameters
    ----------
    model
        A tree model (LambdaMART, MART, RandomForest, a RankLib import) or a linear one (linear,
        coordinate-ascent, AdaRank).
    name : str
        The model's name in the plugin (``"model": NAME`` of an ``sltr`` query).
    model_type : {"xgboost+json", "ranklib", "linear"}, optional
        Default: ``xgboost+json`` for trees (it has a missing-value branch); ``linear`` for a
        linear model without a constant term, else ``ranklib`` (RankLib's linear model has one).
    feature_names : list of str, optional
        The feature set's feature names, in the model's column order (default: the model's own,
        else ``f1``, ``f2``, ...). ``ranklib`` refers to features by position in the set.
    normalizer : ranklearn.data.Normalizer, optional
        A fitted global normalizer the training features went through: ``feature_normalizers``
        for a linear model, splits moved onto the raw values for a tree model.

    Raises
    ------
    ValueError
        For a model the type cannot hold, or a normalizer the plugin cannot apply.
    """
    require_fitted_tree_or_linear(model, "the LTR plugin")
    names = resolve_feature_names(model, feature_names)
    spec_normalizers = None
    if normalizer is not None and is_tree_model(model):
        # the plugin normalizes in float32, not as ranklearn does: a value on a threshold would go
        # either way; the splits are moved onto the raw values instead, exactly
        model = fold_normalizer(model, normalizer, "the LTR plugin")
    elif normalizer is not None:
        spec_normalizers = feature_normalizers(normalizer, names)
    if model_type is None:
        if is_linear_model(model):
            model_type = "linear" if linear_weights(model, "the LTR plugin")[1] == 0.0 else "ranklib"
        else:
            model_type = "xgboost+json"
    if model_type not in MODEL_TYPES:
        raise ValueError(f"model_type must be one of {', '.join(MODEL_TYPES)}, got {model_type!r}")
    definition: Any
    if model_type == "xgboost+json":
        model_trees(model, "the LTR plugin's xgboost+json")  # names the model when it is not a tree model
        definition = {"objective": "rank:ndcg", "splits": xgboost_dump(model, names)}
    elif model_type == "linear":
        coef, intercept = linear_weights(model, "the LTR plugin's model/linear")
        if intercept != 0.0:
            raise ValueError(f"model/linear has no constant term and this model's intercept is {intercept!r}: use ranklib")
        definition = {n: float(w) for n, w in zip(names, coef)}
    else:
        definition = ranklib_model_text(model)
    spec: dict[str, Any] = {"type": f"model/{model_type}", "definition": definition}
    if spec_normalizers is not None:
        spec["feature_normalizers"] = spec_normalizers
    return {"model": {"name": name, "model": spec}}


def export_elasticsearch(
    model: Any,
    path: str | PathLike[str],
    *,
    name: str = "ranklearn",
    model_type: str | None = None,
    feature_names: list[str] | None = None,
    normalizer: Any = None,
) -> None:
    """Write :func:`ltr_plugin_model` (same options) as JSON, atomically.

    Raises
    ------
    ValueError
        As :func:`ltr_plugin_model`.
    """
    body = ltr_plugin_model(model, name=name, model_type=model_type, feature_names=feature_names, normalizer=normalizer)
    write_output(path, json.dumps(body, indent=1).encode())
