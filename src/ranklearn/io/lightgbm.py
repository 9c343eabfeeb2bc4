"""Export a fitted LambdaMART to LightGBM's text model format.

The file is what ``lightgbm.Booster.save_model`` writes (format ``version=v4``): a header,
one ``Tree=i`` block per tree, ``end of trees``, the split-count feature importances and a
``parameters:`` section. Any reader of LightGBM models (``lightgbm.Booster(model_file=...)``,
lleaves, treelite, Vespa) then scores rows as ranklearn does:

* LightGBM's internal nodes and leaves are numbered separately; a child ``c < 0`` is leaf
  ``~c``. Internal nodes are numbered in ranklearn's node order, so the root is node 0.
* Every split has missing type NaN (``decision_type`` bit values ``8``, plus ``2`` when NaN
  goes left), the direction ranklearn learned. Zero is an ordinary value.
* LightGBM sends ``x`` left when ``double(x) <= threshold``; ranklearn holds features as
  float32 and sends ``x`` left when ``float32(x) <= t``, ``t`` a float32 value. The file's
  threshold is therefore the largest double that rounds to a float32 ``<= t`` (the midpoint
  between ``t`` and the next float32, or the double below it when a tie would round up), so
  that a float64 input (``0.7`` in a LETOR file, read as a double by LightGBM or Vespa) goes
  the same way as in ``predict``, and a float32 input too, since no float32 lies between ``t``
  and that threshold. Written with 17 significant digits, it parses back to the same double.
* Leaf values already include the learning rate (as in LightGBM's own files, where
  ``shrinkage`` is informational) and are summed in tree order, as ranklearn does.

One difference cannot be written into the file: LightGBM's dense prediction treats values
with ``|x| <= 1e-35`` as 0, so a row holding such a value where a split's threshold lies
between it and 0 is scored differently. LightGBM's own training has the same rule.
"""

from __future__ import annotations

from os import PathLike

import numpy as np

from ranklearn._files import write_output
from ranklearn.io._trees import model_trees, require_fitted_lambdamart
from ranklearn.tree.tree import Tree

_MISSING_NAN = 2 << 2  # LightGBM's MissingType::NaN in bits 2-3 of decision_type
_DEFAULT_LEFT = 2  # LightGBM's kDefaultLeftMask
_JSON_SPECIAL = set('",:[]{}')  # characters LightGBM refuses in a feature name


def _g17(x: float) -> str:
    """A double as LightGBM writes it (``%.17g``): parses back to the same double."""
    return f"{float(x):.17g}"


def double_thresholds(threshold: np.ndarray) -> np.ndarray:
    """For float32 comparisons ``float32(x) <= t``: the doubles ``T`` with ``x <= T`` exactly
    when ``float32(x) <= t``, for every double ``x`` (round to nearest, ties to even; beyond
    float32's range a double rounds to +-inf, which counts as +-2^128 here)."""
    t = np.asarray(threshold, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf
        t32 = t.astype(np.float32)
        t32 = np.where(t32.astype(np.float64) > t, np.nextafter(t32, np.float32(-np.inf)), t32)  # the float32 <= t
        up32 = np.nextafter(t32, np.float32(np.inf))
    edge = 2.0**128  # where float32's rounding turns to inf
    low = np.where(t32 == -np.inf, -edge, t32.astype(np.float64))
    up = np.where(up32 == np.inf, edge, up32.astype(np.float64))
    middle = (low + up) / 2.0  # exact: 24-bit mantissas in 53
    even = (t32.view(np.uint32) & 1) == 0  # a tie rounds to t only when t's last mantissa bit is 0
    out = np.where(even, middle, np.nextafter(middle, -np.inf))
    return np.where(np.isnan(t), t, np.where(t32 == np.inf, np.inf, out))


def _join(values, fmt=str) -> str:
    return " ".join(fmt(v) for v in values)


def _tree_block(tree: Tree, shrinkage: float) -> str:
    """One tree as LightGBM's ``Tree::ToString`` lays it out (without the ``Tree=i`` line)."""
    internal = np.flatnonzero(tree.feature >= 0)
    leaves = np.flatnonzero(tree.feature < 0)
    # ranklearn node -> LightGBM child code: internal index, or ~leaf index
    code = np.empty(tree.feature.shape[0], dtype=np.int64)
    code[internal] = np.arange(internal.shape[0])
    code[leaves] = ~np.arange(leaves.shape[0])
    decision = np.where(tree.missing_left[internal], _MISSING_NAN | _DEFAULT_LEFT, _MISSING_NAN)
    lines = [
        f"num_leaves={leaves.shape[0]}",
        "num_cat=0",
        f"split_feature={_join(tree.feature[internal])}",
        f"split_gain={_join(tree.gain[internal], _g17)}",
        f"threshold={_join(double_thresholds(tree.threshold[internal]), _g17)}",
        f"decision_type={_join(decision)}",
        f"left_child={_join(code[tree.left[internal]])}",
        f"right_child={_join(code[tree.right[internal]])}",
        f"leaf_value={_join(tree.value[leaves], _g17)}",
        f"leaf_count={_join(tree.count[leaves])}",
        f"internal_count={_join(tree.count[internal])}",
        "is_linear=0",
        f"shrinkage={shrinkage:g}",
    ]
    return "\n".join(lines) + "\n\n"


def _feature_infos(model) -> list[str]:
    """LightGBM's ``[min:max]`` per feature, from the bin edges (the data's own range is not
    kept); ``none`` for a feature with a single bin or when the model has no bin mapper."""
    mapper = getattr(model, "bin_mapper_", None)
    if mapper is None:
        return ["none"] * model.n_features_in_
    infos = []
    for f in range(model.n_features_in_):
        n = int(mapper.n_edges_[f])
        infos.append("none" if n == 0 else f"[{_g17(mapper.edges_[f, 0])}:{_g17(mapper.edges_[f, n - 1])}]")
    return infos


#: LightGBM's names of ranklearn's objectives (informational: they do not change how rows are
#: scored); RankNet lambdas and a user's objective have none, and keep "lambdarank"
_LIGHTGBM_OBJECTIVES = {"squared_error": "regression", "xendcg": "rank_xendcg"}


def _objective(model) -> str:
    objective = model.effective_objective()
    return _LIGHTGBM_OBJECTIVES.get(objective, "lambdarank") if isinstance(objective, str) else "lambdarank"


def _parameters(model) -> list[str]:
    """ranklearn's settings under the names of the LightGBM parameters they correspond to."""
    params = {
        "boosting": "gbdt",
        "objective": _objective(model),
        "num_iterations": len(model.trees_),
        "learning_rate": model.learning_rate,
        "num_leaves": model.num_leaves,
        "max_depth": -1 if model.max_depth is None else model.max_depth,
        "min_data_in_leaf": model.min_samples_leaf,
        "min_sum_hessian_in_leaf": model.min_sum_hessian,
        "lambda_l2": model.l2_regularization,
        "min_gain_to_split": model.min_gain_to_split,
        "feature_fraction": model.feature_fraction,
        "max_bin": model.max_bins,
        "sigmoid": model.sigma,
    }
    return [f"[{k}: {v}]" for k, v in params.items()]


def lightgbm_model_string(model) -> str:
    """The text of a fitted :class:`~ranklearn.LambdaMART` in LightGBM's model format.

    Parameters
    ----------
    model : LambdaMART
        A fitted (or loaded) model.

    Returns
    -------
    str
        What ``lightgbm.Booster(model_str=...)`` reads.

    Raises
    ------
    ValueError
        If the model is not a fitted LambdaMART.
    """
    require_fitted_lambdamart(model, "LightGBM")
    n_features = model.n_features_in_
    names = [f"Column_{f}" for f in range(n_features)]
    given = getattr(model, "feature_names_in_", None)
    if given is not None and all(str(n) and not any(c.isspace() or c in _JSON_SPECIAL for c in str(n)) for n in given):
        # a frame's column names, so that LightGBM's validate_features checks them (space-separated
        # in the file; LightGBM refuses JSON's special characters: such names keep its Column_i)
        names = [str(n) for n in given]
    trees = model_trees(model, "LightGBM")  # a global normalizer folded in
    blocks = [f"Tree={i}\n" + _tree_block(t, model.learning_rate) + "\n" for i, t in enumerate(trees)]
    header = [
        "tree",
        "version=v4",
        "num_class=1",
        "num_tree_per_iteration=1",
        "label_index=0",
        f"max_feature_idx={n_features - 1}",
        f"objective={_objective(model)}",
        f"feature_names={' '.join(names)}",
        f"feature_infos={' '.join(_feature_infos(model))}",
        # byte sizes of the tree blocks: LightGBM parses the trees in parallel from them
        f"tree_sizes={_join(len(b.encode()) for b in blocks)}",
        "",
        "",
    ]
    splits = model.feature_importance("split").astype(np.int64)
    order = np.argsort(-splits, kind="stable")  # most used first, ties by feature index
    importances = [f"{names[f]}={splits[f]}" for f in order if splits[f] > 0]
    footer = ["end of trees", "", "feature_importances:", *importances, "", "parameters:", *_parameters(model)]
    footer += ["", "end of parameters", "", "pandas_categorical:null", ""]
    return "\n".join(header) + "".join(blocks) + "\n".join(footer)


def export_lightgbm(model, path: str | PathLike[str]) -> None:
    """Write a fitted :class:`~ranklearn.LambdaMART` as a LightGBM text model (atomically).

    ``lightgbm.Booster(model_file=path).predict(X)`` then equals ``model.predict(X)``.

    A model trained on clicks with ``unbiased=`` exports its trees ``f`` only: its position bias
    (``position_bias_``) served training, and ``predict`` scores with ``f`` alone too.

    Raises
    ------
    ValueError
        If the model is not a fitted LambdaMART.
    """
    write_output(path, lightgbm_model_string(model).encode())


def score_lightgbm(path: str | PathLike[str], X: np.ndarray) -> np.ndarray:
    """Scores of ``X`` by LightGBM itself on the exported file (needs ``lightgbm``)."""
    import lightgbm

    return np.asarray(lightgbm.Booster(model_file=str(path)).predict(X), dtype=np.float64)
