"""Scoring with a saved model without building its estimator (``ranklearn predict``'s path).

Building an estimator imports scikit-learn (and SciPy through it): about a second of CPU, most
of a short ``predict``. Scoring needs only what the model file holds: a tree model's trees
(LambdaMART, MART), a forest's bags of trees, a linear model's weights. A ranker says which it
is in its :class:`ranklearn.registry.ModelSpec` (``served``); :func:`scorer_from_payload` reads
the payload with the functions the rankers' own loaders use (:func:`trees_from_payload`,
:func:`forest_predictor`, :func:`linear_weights`, :func:`linear_scores`), so a :class:`SavedScorer`
gives the estimator's ``predict`` scores bit for bit. What it does not read: the training
parameters (they do not change a score) and the training history.
"""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from typing import Any

import numpy as np

from ranklearn._compilation import interprets_small_inputs, kernel, prange
from ranklearn._threads import thread_limit
from ranklearn.exceptions import ModelFormatError
from ranklearn.io.payload_schema import check_fields, check_shared
from ranklearn.models.checks import as_dense_features, check_feature_values
from ranklearn.tree.predictor import TreePredictor
from ranklearn.tree.tree import Tree, bags_mean

__all__ = ["SERVED", "TREE_PAYLOAD_FIELDS", "SavedScorer", "check_tree_payload", "forest_predictor", "linear_scores", "linear_weights", "load_scorer",
           "scorer_from_payload", "trees_from_payload"]  # fmt: skip

#: Feature values up to which a process that has not imported numba scores a linear model with
#: :func:`linear_scores` interpreted (about 1 us a value: 0.2 s, against about 0.5 s for numba)
INTERPRETED_VALUES = 200_000


@kernel(cache=True, parallel=True)
def linear_scores(X: np.ndarray, coef: np.ndarray, intercept: float) -> np.ndarray:
    """``intercept + X @ coef`` summed left to right per row (RankLib's order, not BLAS's)."""
    n, m = X.shape
    out = np.empty(n)
    for i in prange(n):
        s = intercept
        for j in range(m):
            s += coef[j] * np.float64(X[i, j])
        out[i] = s
    return out


def trees_from_payload(items: list[Any], n_features: int) -> list[Tree]:
    """Trees of a payload, each checked against the model's feature count.

    Raises
    ------
    ModelFormatError
        A tree that does not hold together (``Tree.validate``).
    """
    trees = [Tree.from_dict(t) for t in items]
    for tree in trees:
        tree.validate(n_features)
    return trees


#: the JSON types of a tree model's own payload fields (LambdaMART, MART); objective and bin
#: mapper are null for a model imported from another tool's file
TREE_PAYLOAD_FIELDS: dict[str, tuple[str, ...]] = {
    "objective": ("dict", "null"), "bin_mapper": ("dict", "null"), "trained_with_missing": ("bool",), "trees": ("list",),
}  # fmt: skip


def check_tree_payload(payload: dict[str, Any], model_type: str) -> None:
    """The tree model's own fields (:data:`TREE_PAYLOAD_FIELDS`), and an objective wherever the
    model was trained by ranklearn (it has a bin mapper): a file that lost it was edited.

    Raises
    ------
    ModelFormatError
        Naming the field.
    """
    check_fields(payload, TREE_PAYLOAD_FIELDS, model_type)
    if payload.get("bin_mapper") is not None and "objective" in payload and payload["objective"] is None:
        raise ModelFormatError(
            f"{model_type} payload field 'objective' is null, but the model was trained by ranklearn "
            "(it has a bin mapper): only a model imported from another tool's file has no objective"
        )


def forest_predictor(bags: list[list[Tree]]) -> TreePredictor:
    """The predictor of a forest: the mean over the bags, as one ensemble of trees whose leaf
    values are divided by the number of bags."""
    return TreePredictor(bags_mean(bags))


def linear_weights(payload: dict[str, Any], n_features: int, model_type: str) -> tuple[np.ndarray, float]:
    """``coef`` (float64, one per feature) and ``intercept`` of a linear model's payload.

    Raises
    ------
    ModelFormatError
        Weights missing, not numbers, not finite, or not one per feature.
    """
    try:
        coef = np.asarray(payload["coef"], dtype=np.float64)
        intercept = float(payload["intercept"])
    except (KeyError, TypeError, ValueError):
        raise ModelFormatError(f"{model_type} payload needs numeric 'coef' and 'intercept'") from None
    if coef.shape != (n_features,) or not np.all(np.isfinite(coef)) or not np.isfinite(intercept):
        raise ModelFormatError(f"{model_type} payload needs {n_features} finite weights")
    return coef, intercept


class SavedScorer:
    """What ``predict`` needs of a saved model: its feature count and its scores.

    ``predict(X)`` checks ``X`` as the estimator's does (width, inf, NaN unless the model
    takes missing values) and returns the same float64 scores.
    """

    def __init__(self, model_type: str, n_features: int, score: Callable[[np.ndarray], np.ndarray],
                 allow_nan: bool) -> None:  # fmt: skip
        self._model_name = model_type
        self.model_type = model_type  # the registry name, for messages
        self.n_features_in_ = n_features
        self._score = score
        self._allow_nan = allow_nan

    def predict(self, X: Any, qid: Any = None, group: Any = None) -> np.ndarray:
        """Scores of the rows of ``X`` (float64), as the estimator's ``predict``. ``qid`` and
        ``group`` (the rows' queries, which a per-query normalizer needs) do not change the scores
        of a served model: one saved with a normalizer is not served (:func:`load_scorer`).

        Raises
        ------
        ValueError
            Another number of features, or a value the model cannot take
            (:class:`ranklearn.exceptions.FeatureValueError`).
        """
        Xc = as_dense_features(X)
        if Xc.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {Xc.shape[1]} features, but {self._model_name} is expecting {self.n_features_in_} features as input."
            )
        check_feature_values(Xc, allow_nan=self._allow_nan)
        return self._score(Xc)


def _tree_scorer(predictor: TreePredictor) -> Callable[[np.ndarray], np.ndarray]:
    def score(X: np.ndarray) -> np.ndarray:
        if predictor.runs_serially(X.shape[0]) or predictor.walks_in_numpy(X.shape[0]):
            return predictor.predict(X)
        with thread_limit(None):
            return predictor.predict(X)

    return score


def _served_trees(payload: dict[str, Any], n: int, model_type: str) -> SavedScorer:
    check_tree_payload(payload, model_type)
    return SavedScorer(model_type, n, _tree_scorer(TreePredictor(trees_from_payload(payload["trees"], n))), True)


def _served_bags(payload: dict[str, Any], n: int, model_type: str) -> SavedScorer:
    check_fields(payload, {"bags": ("list",)}, model_type)
    predictor = forest_predictor([trees_from_payload(bag, n) for bag in payload["bags"]])
    return SavedScorer(model_type, n, _tree_scorer(predictor), True)


def _served_linear(payload: dict[str, Any], n: int, model_type: str) -> SavedScorer:
    coef, intercept = linear_weights(payload, n, model_type)

    def score(X: np.ndarray) -> np.ndarray:
        if X.size <= INTERPRETED_VALUES and interprets_small_inputs():
            return linear_scores.run(X, coef, intercept, small=True)
        with thread_limit(None):
            return linear_scores(X, coef, intercept)

    return SavedScorer(model_type, n, score, False)


#: ``ModelSpec.served`` -> how a payload of that kind is scored
SERVED: dict[str, Callable[[dict[str, Any], int, str], SavedScorer]] = {
    "trees": _served_trees,
    "bags": _served_bags,
    "linear": _served_linear,
}


def scorer_from_payload(model_type: str, served: str, payload: dict[str, Any], payload_version: int) -> SavedScorer:
    """A :class:`SavedScorer` of a model file's payload (``served``: its ranker's ``ModelSpec.served``;
    ``payload_version``: the newest this ranklearn writes for it).

    Raises
    ------
    ModelFormatError
        As loading the estimator would for the fields it reads: wrong JSON types, a payload
        version newer than this ranklearn reads, a feature count below 1, malformed trees or
        weights.
    """
    _, n_features = check_shared(payload, model_type, payload_version)
    return SERVED[served](payload, n_features, model_type)


def load_scorer(path: str | PathLike[str]) -> Any:
    """What ``ranklearn predict`` scores with: a :class:`SavedScorer` of the model file when its
    ranker is served (``ModelSpec.served``) and the model has no input normalizer, else the
    estimator (:func:`ranklearn.io.load_model`).

    Raises
    ------
    ModelFormatError
        As :func:`ranklearn.io.load_model`, naming ``path``.
    """
    from ranklearn.io import load_model_with

    def build(spec: Any, payload: dict[str, Any]) -> Any:
        # a model that normalizes its input (train --normalize) predicts through the estimator
        if spec.served is None or payload.get("normalizer") is not None:
            return spec.load_class().from_payload(payload)
        return scorer_from_payload(spec.name, spec.served, payload, spec.payload_version)

    return load_model_with(path, build)
