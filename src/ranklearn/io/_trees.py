"""What the model exports share: the fitted trees or linear weights of a model (checked without
importing the models), its feature names, ranklearn's split rule restated for engines that
compare otherwise, and the nested form of a tree.

ranklearn sends a row left at a split when ``float32(x) <= t`` (features are held as float32;
see :mod:`ranklearn.tree.predictor`), ``t`` rounded down to a float32, and a missing value (NaN)
the way the split learned (``missing_left``). The engines differ:

* ``x < T`` on float32 values (XGBoost, the LTR plugin's ``xgboost+json``): ``T`` the next
  float32 above ``float32_down(t)`` (:func:`float32_up`); no float32 lies between, so every
  float32 goes the same way.
* ``x <= T`` on float32 values after adding 1e-6 (Solr): see :mod:`ranklearn.io.solr`.
* ``x <= T`` on doubles (LightGBM, Treelite as exported): see
  :func:`ranklearn.io.lightgbm.double_thresholds`; ``x < T`` on doubles (Vespa): see
  :func:`ranklearn.io.vespa.vespa_thresholds`.

A model fitted with a global ``normalize=`` (``normalizer_``) is exported as the map of raw
rows it is: :func:`model_trees` folds the normalizer into the thresholds (:func:`fold_normalizer`),
:func:`linear_weights` into the weights; one fitted with a per-query ``normalize`` normalizes each
query within itself, which no engine that scores one document at a time can do: both refuse it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ranklearn.tree.tree import Tree, bags_mean

def _spec(model: Any) -> Any:
    from ranklearn.registry import spec_of

    return spec_of(model)


def _structure(model: Any) -> str | None:
    """What the model is made of (``ModelSpec.structure``: "trees", "forest", "linear", "network"), None if unregistered."""
    spec = _spec(model)
    return None if spec is None else spec.structure


def model_kind(model: Any) -> str:
    """The model's registry name, or its class's name when it is not a registered ranker (for messages)."""
    spec = _spec(model)
    return type(model).__name__ if spec is None else spec.name


def _holding(structures: tuple[str, ...]) -> str:
    """The registered models of ``structures``, for a message."""
    from ranklearn.registry import REGISTRY

    return ", ".join(name for name, spec in REGISTRY.items() if spec.structure in structures)


def _require_fitted(model: Any, target: str) -> None:
    if not model.__sklearn_is_fitted__():
        raise ValueError(f"export to {target} needs a fitted model; this {type(model).__name__} is not fitted")


def require_fitted_lambdamart(model: Any, target: str) -> None:
    """Refuse anything but a fitted model of summed trees (LambdaMART, MART) for an export to
    ``target`` (e.g. "RankLib").

    Raises
    ------
    ValueError
        Naming the target format.
    """
    if _structure(model) != "trees" or not model.__sklearn_is_fitted__():
        raise ValueError(f"export to {target} needs a fitted {_holding(('trees',)).replace(', ', ' or ')} model")


def is_tree_model(model: Any) -> bool:
    """True for the models :func:`model_trees` exports (structure "trees" or "forest")."""
    return _structure(model) in ("trees", "forest")


def is_linear_model(model: Any) -> bool:
    """True for the models :func:`linear_weights` exports (structure "linear")."""
    return _structure(model) == "linear"


def require_fitted_tree_or_linear(model: Any, target: str) -> None:
    """Refuse, naming ``target``, a model that is neither a tree model nor a linear one, or not fitted."""
    if not (is_tree_model(model) or is_linear_model(model)):
        raise ValueError(f"{target} holds {_holding(('trees', 'forest', 'linear'))} models; this model is {model_kind(model)}")
    _require_fitted(model, target)


def raw_input_normalizer(model: Any, target: str) -> Any:
    """The global normalizer ``model.predict`` applies to raw rows first (``normalizer_``), or None.

    Raises
    ------
    ValueError
        Naming ``target``, for a per-query normalizer: the model normalizes each query within
        itself, a document's score depends on the other documents, and ``target`` scores each alone.
    """
    norm = getattr(model, "normalizer_", None)
    if norm is not None and norm.per_query:
        raise ValueError(
            f"{target} scores each document alone, but this model normalizes each query's features within "
            f"the query (normalize={norm.spec!r}); train it with normalize={norm.method!r} (one map per "
            "feature, from the training rows) to export it"
        )
    return norm


def model_trees(model: Any, target: str) -> list[Tree]:
    """The trees whose leaf values summed in order are ``model.predict`` (LambdaMART, MART, a
    RankLib import, RandomForest), on raw rows: a model's global ``normalizer_`` folded into
    the thresholds.

    Raises
    ------
    ValueError
        Naming ``target``, for another model, one not fitted, or one with a per-query normalizer.
    """
    if not is_tree_model(model):
        raise ValueError(f"{target} holds tree models ({_holding(('trees', 'forest'))}); this model is {model_kind(model)}")
    _require_fitted(model, target)
    norm = raw_input_normalizer(model, target)
    trees = list(model.trees_) if _structure(model) == "trees" else bags_mean(model.bags_)
    return trees if norm is None else _fold_trees(trees, norm, model.n_features_in_, target)


def linear_weights(model: Any, target: str) -> tuple[np.ndarray, float]:
    """``(coef, intercept)`` of a fitted linear model (structure "linear"), on raw rows: a global
    ``normalizer_``'s ``(x - offset) * scale`` folded into them (``coef * scale``,
    ``intercept - sum(coef * scale * offset)``: the model's scores up to rounding).

    Raises
    ------
    ValueError
        Naming ``target``, for another model, one not fitted, or one with a per-query normalizer.
    """
    if not is_linear_model(model):
        raise ValueError(f"{target} holds linear models ({_holding(('linear',))}); this model is {model_kind(model)}")
    _require_fitted(model, target)
    coef, intercept = np.asarray(model.coef_, dtype=np.float64), float(model.intercept_)
    norm = raw_input_normalizer(model, target)
    if norm is None:
        return coef, intercept
    offset, scale = norm.affine()
    return coef * scale, intercept - float(np.sum(coef * scale * offset))


def learned_missing_branch(model: Any, trees: Sequence[Tree]) -> bool:
    """True when the model learned where missing values (NaN) go and some split sends them left.

    A model trained without missing values sends NaN to the larger child (a choice, not learned:
    data without NaN never takes it); a model that does not record it (``trained_with_missing_``)
    counts as trained with them.
    """
    if not getattr(model, "trained_with_missing_", True):
        return False
    return any(bool(np.any(t.missing_left[t.feature >= 0])) for t in trees)


def resolve_feature_names(model: Any, names: Sequence[str] | None = None) -> list[str]:
    """The names an engine knows the model's features by: ``names`` if given, else the model's
    own (``feature_names_in_``, from a frame), else ``f1``, ``f2``, ... (LETOR's 1-based ids).

    Raises
    ------
    ValueError
        If ``names`` has another length than the model's features, or repeats a name.
    """
    n = model.n_features_in_
    if names is None:
        own = getattr(model, "feature_names_in_", None)
        names = [str(v) for v in own] if own is not None else [f"f{j + 1}" for j in range(n)]
    names = [str(v) for v in names]
    if len(names) != n:
        raise ValueError(f"{len(names)} feature names given; the model has {n} features")
    if len(set(names)) != n:
        dup = next(v for v in names if names.count(v) > 1)
        raise ValueError(f"feature name {dup!r} is given twice")
    if any(not v for v in names):
        raise ValueError("a feature name is empty")
    return names


def float32_down(threshold: np.ndarray) -> np.ndarray:
    """The largest float32 ``<= t``: for float32 ``x``, ``x <= t`` exactly when ``x <= float32_down(t)``."""
    t = np.asarray(threshold, dtype=np.float64)
    with np.errstate(over="ignore"):
        t32 = t.astype(np.float32)
    above = t32.astype(np.float64) > t
    return np.where(above, np.nextafter(t32, np.float32(-np.inf)), t32)


def float32_up(threshold: np.ndarray) -> np.ndarray:
    """The next float32 above ``float32_down(t)``: for float32 ``x``, ``x < float32_up(t)``
    exactly when ranklearn's ``x <= t`` (XGBoost's and the LTR plugin's ``<``). A split at the
    largest float32 (every finite value left, NaN right) gets ``inf``: ``inf < inf`` is false and
    ranklearn sends ``inf`` right too."""
    with np.errstate(over="ignore"):
        return np.nextafter(float32_down(threshold), np.float32(np.inf))


def float32_text(value: float) -> str:
    """A float32 value as the shortest decimal that parses back to it, as a float32 (Java's
    ``Float.parseFloat``) or as a double (JSON readers that then cast to float)."""
    return repr(float(np.float32(value)))


def nested(tree: Tree, split: Callable[[int, Any, Any], Any], leaf: Callable[[int], Any], node: int = 0) -> Any:
    """A tree as nested objects: ``leaf(node)`` at a leaf, ``split(node, left, right)`` at a
    split, ``left``/``right`` its children's objects (the engines' JSON trees)."""
    if tree.feature[node] < 0:
        return leaf(node)
    left = nested(tree, split, leaf, int(tree.left[node]))
    right = nested(tree, split, leaf, int(tree.right[node]))
    return split(node, left, right)


def breadth_first(tree: Tree) -> Tree:
    """The same tree with its nodes numbered breadth first, a split's two children next to each
    other (left, then right): XGBoost's layout, whose predictor takes the right child as the
    left one plus one. RankLib imports number their nodes depth first."""
    order = [0]
    for node in order:  # grows as it goes
        if tree.feature[node] >= 0:
            order += [int(tree.left[node]), int(tree.right[node])]
    order = np.asarray(order, dtype=np.int64)
    new_id = np.empty_like(order)
    new_id[order] = np.arange(order.shape[0])
    fields = {name: getattr(tree, name)[order] for name in tree.__dataclass_fields__}
    internal = fields["feature"] >= 0
    for side in ("left", "right"):
        fields[side] = np.where(internal, new_id[np.where(internal, fields[side], 0)], fields[side]).astype(np.int32)
    return Tree(**fields)


def float32_sum_tolerance(trees: Sequence[Tree]) -> float:
    """A bound on the difference between ranklearn's float64 sum of leaf values and an engine's
    float32 one (leaves rounded to float32, sums rounded at each step):
    ``(n_trees + 1) * eps32 * sum over trees of the largest |leaf value|``."""
    eps = float(np.finfo(np.float32).eps)
    largest = sum(float(np.max(np.abs(t.value[t.feature < 0]), initial=0.0)) for t in trees)
    return (len(trees) + 1) * eps * max(largest, 1e-30)


def _ordered(bits: np.ndarray) -> np.ndarray:
    """float32 bit patterns (int64) as integers in the order of their values, and back (an involution)."""
    return np.where(bits < 0, bits ^ 0x7FFFFFFF, bits)


def fold_normalizer(model: Any, normalizer: Any, target: str) -> Any:
    """A tree model whose ``predict(X)`` is ``model.predict(normalizer.transform(X))``: each split
    ``float32(z) <= t`` on a normalized feature becomes ``x <= T`` on the raw float32 value, ``T``
    the largest float32 whose normalized value (as ``Normalizer.transform`` computes it, then
    rounded to float32 as ``predict`` does) is ``<= t``. A global normalizer is increasing in
    each feature (or the identity), so the split sends every raw value where the normalized one
    went, exactly; NaN stays NaN.

    Raises
    ------
    ValueError
        For a per-query normalizer, one of another width, or a split no raw value reaches.
    """
    from ranklearn.registry import get_model_class

    n = model.n_features_in_
    out = get_model_class("lambdamart").from_trees(_fold_trees(model_trees(model, target), normalizer, n, target), n)
    out.trained_with_missing_ = getattr(model, "trained_with_missing_", True)
    return out


def _fold_trees(trees: Sequence[Tree], normalizer: Any, n: int, target: str) -> list[Tree]:
    """The trees of :func:`fold_normalizer`: splits on raw values instead of normalized ones."""
    if normalizer.per_query:
        raise ValueError(f"{target} normalizes each document alone: a per-query Normalizer cannot be exported")
    if getattr(normalizer, "n_features_in_", n) != n:
        raise ValueError(f"the Normalizer has {normalizer.n_features_in_} features, the model {n}")
    folded = []
    for tree in trees:
        nodes = np.flatnonzero(tree.feature >= 0)
        target32 = float32_down(tree.threshold[nodes])
        big = np.float32(np.finfo(np.float32).max)
        lo = np.full(nodes.shape[0], _ordered(np.int64(np.float32(-big).view(np.int32))))
        hi = np.full(nodes.shape[0], _ordered(np.int64(big.view(np.int32))))
        rows = np.arange(nodes.shape[0])

        def normalized(keys: np.ndarray) -> np.ndarray:
            X = np.zeros((nodes.shape[0], n), dtype=np.float32)
            X[rows, tree.feature[nodes]] = _ordered(keys).astype(np.int32).view(np.float32)
            return normalizer.transform(X)[rows, tree.feature[nodes]]

        if np.any(normalized(lo) > target32):
            raise ValueError(f"a split of the normalized model lies below every raw value ({target} cannot hold it)")
        while np.any(lo < hi):  # the largest key whose normalized value is <= the threshold
            mid = (lo + hi + 1) // 2
            ok = normalized(mid) <= target32
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid - 1)
        raw = Tree.from_dict(tree.to_dict())
        raw.threshold[nodes] = _ordered(lo).astype(np.int32).view(np.float32)
        folded.append(raw)
    return folded
