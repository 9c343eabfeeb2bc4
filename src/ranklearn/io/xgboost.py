"""XGBoost's formats: the JSON model (``Booster.save_model``, export and import) and the JSON
tree dump (``Booster.get_dump(dump_format="json")``, export; read by Vespa's ``xgboost()`` and
the Elasticsearch/OpenSearch LTR plugin's ``model/xgboost+json``).

XGBoost's rules (``src/tree/tree_model.cc`` and the predictor in ``src/predictor/``): features
are float32, a row goes left ("yes") when ``x < split_condition``, a float32; a missing value
(NaN) goes left when ``default_left``; the score is ``base_score`` plus the float32 sum of the
leaf values (for ``rank:*`` objectives the raw margin is the prediction). ranklearn goes left
when ``float32(x) <= t``: the export writes ``split_condition`` as the next float32 above ``t``
(:func:`ranklearn.io._trees.float32_up`), so every float32 goes the same way, and ``base_score``
0. Scores then equal ranklearn's to float32 round-off (XGBoost sums float32 leaf values).

The JSON model schema is XGBoost's ``doc/model.schema``: ``learner.gradient_booster.model.trees[]``
with per-node arrays (``left_children``, ``right_children``, ``parents``, ``split_indices``,
``split_conditions`` (the leaf value at a leaf), ``default_left``, ``base_weights``,
``loss_changes``, ``sum_hessian``), written here as XGBoost 2 writes it, which XGBoost 2 and 3 read.
"""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from ranklearn._files import write_output
from ranklearn.exceptions import ModelFormatError
from ranklearn.io._trees import breadth_first, float32_up, model_trees, nested, resolve_feature_names
from ranklearn.tree.tree import Tree

_NO_PARENT = 2147483647  # XGBoost's parent of a root
#: objectives whose prediction is the raw margin (base_score is then a margin too)
_MARGIN_OBJECTIVES = ("rank:ndcg", "rank:pairwise", "rank:map", "reg:squarederror")


def _tree_json(tree: Tree, tree_id: int, n_features: int) -> dict[str, Any]:
    tree = breadth_first(tree)  # XGBoost's predictor reads the right child as left + 1
    n = tree.feature.shape[0]
    internal = tree.feature >= 0
    parents = np.full(n, _NO_PARENT, dtype=np.int64)
    idx = np.flatnonzero(internal)
    parents[tree.left[idx]] = idx
    parents[tree.right[idx]] = idx
    conditions = tree.value.astype(np.float64).copy()  # a leaf's value is its split_condition
    if idx.shape[0]:
        conditions[idx] = float32_up(tree.threshold[idx])
    return {
        "base_weights": np.where(internal, 0.0, tree.value).tolist(),
        "categories": [],
        "categories_nodes": [],
        "categories_segments": [],
        "categories_sizes": [],
        "default_left": (tree.missing_left & internal).astype(int).tolist(),
        "id": tree_id,
        "left_children": np.where(internal, tree.left, -1).astype(int).tolist(),
        "loss_changes": np.where(internal, tree.gain, 0.0).tolist(),
        "parents": parents.tolist(),
        "right_children": np.where(internal, tree.right, -1).astype(int).tolist(),
        "split_conditions": conditions.tolist(),
        "split_indices": np.where(internal, tree.feature, 0).astype(int).tolist(),
        "split_type": [0] * n,
        "sum_hessian": tree.count.astype(np.float64).tolist(),
        "tree_param": {
            "num_deleted": "0",
            "num_feature": str(n_features),
            "num_nodes": str(n),
            "size_leaf_vector": "1",
        },
    }


def xgboost_model_json(model: Any, feature_names: list[str] | None = None) -> dict[str, Any]:
    """A fitted tree model (LambdaMART, MART, RandomForest, a RankLib import) as XGBoost's JSON model.

    Parameters
    ----------
    model
        The fitted model.
    feature_names : list of str, optional
        The names XGBoost checks the data's against (default: the model's; none when it has none).

    Raises
    ------
    ValueError
        For a model that is not a fitted tree model.
    """
    trees = model_trees(model, "XGBoost")
    n = model.n_features_in_
    named = feature_names is not None or getattr(model, "feature_names_in_", None) is not None
    # unnamed features stay unnamed, as XGBoost saves them: it then scores arrays without names
    names = resolve_feature_names(model, feature_names) if named else []
    k = len(trees)
    return {
        "learner": {
            "attributes": {},
            "feature_names": names,
            "feature_types": ["float"] * len(names),
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(k)},
                    "iteration_indptr": list(range(k + 1)),
                    "tree_info": [0] * k,
                    "trees": [_tree_json(t, i, n) for i, t in enumerate(trees)],
                },
                "name": "gbtree",
            },
            "learner_model_param": {
                "base_score": "0",
                "boost_from_average": "0",
                "num_class": "0",
                "num_feature": str(n),
                "num_target": "1",
            },
            "objective": {
                "name": "rank:ndcg",
                "lambdarank_param": {
                    "lambdarank_num_pair_per_sample": "1",
                    "lambdarank_pair_method": "topk",
                    "lambdarank_unbiased": "0",
                    "ndcg_exp_gain": "1",
                },
            },
        },
        "version": [2, 1, 0],
    }


def export_xgboost(model: Any, path: str | PathLike[str], *, feature_names: list[str] | None = None) -> None:
    """Write a fitted tree model as XGBoost's JSON model (atomically): what
    ``xgboost.Booster(model_file=path)`` and ``eland``'s XGBoost import read.

    Raises
    ------
    ValueError
        For a model that is not a fitted tree model.
    """
    text = json.dumps(xgboost_model_json(model, feature_names), separators=(",", ":"))
    write_output(path, text.encode())


def xgboost_dump(model: Any, feature_names: list[str] | None = None) -> list[dict[str, Any]]:
    """The trees as ``Booster.get_dump(dump_format="json")`` gives them, parsed: one nested
    object per tree, a split ``{nodeid, depth, split, split_condition, yes, no, missing,
    children: [yes, no]}`` (``split`` the feature's name, ``yes`` taken when ``x <
    split_condition``, ``missing`` the child NaN goes to), a leaf ``{nodeid, leaf}``.

    Leaf values are written as the exact doubles (XGBoost's own dump rounds them to 9 digits;
    Vespa reads doubles, the LTR plugin floats).

    Raises
    ------
    ValueError
        For a model that is not a fitted tree model.
    """
    trees = model_trees(model, "an XGBoost dump")
    names = resolve_feature_names(model, feature_names)
    dump = []
    for tree in map(breadth_first, trees):  # node ids as in the JSON model
        depth = np.zeros(tree.feature.shape[0], dtype=np.int64)
        for node in np.flatnonzero(tree.feature >= 0):  # children come after their parent
            depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1

        def split(node: int, left: dict, right: dict, tree: Tree = tree, depth: np.ndarray = depth) -> dict:
            yes, no = int(tree.left[node]), int(tree.right[node])
            return {
                "nodeid": node,
                "depth": int(depth[node]),
                "split": names[tree.feature[node]],
                "split_condition": _finite(float(float32_up(tree.threshold[node]))),
                "yes": yes,
                "no": no,
                "missing": yes if tree.missing_left[node] else no,
                "children": [left, right],
            }

        dump.append(nested(tree, split, lambda node, tree=tree: {"nodeid": node, "leaf": float(tree.value[node])}))
    return dump


def _finite(value: float) -> float:
    """JSON has no infinity: a split sending every finite value left gets 1e39, a double that
    float32 readers (the LTR plugin, Vespa's cast) round to inf."""
    return value if np.isfinite(value) else 1e39


def export_xgboost_dump(model: Any, path: str | PathLike[str], *, feature_names: list[str] | None = None) -> None:
    """Write :func:`xgboost_dump` as a JSON array (atomically): the file Vespa's
    ``xgboost("file.json")`` rank feature reads.

    Raises
    ------
    ValueError
        For a model that is not a fitted tree model.
    """
    write_output(path, json.dumps(xgboost_dump(model, feature_names), indent=1).encode())


def _float(text: Any) -> float:
    """XGBoost 2's ``"0.5"`` and XGBoost 3's ``"[5E-1]"`` for a scalar."""
    return float(str(text).strip("[]"))


def import_xgboost(path: str | PathLike[str]) -> Any:
    """Read XGBoost's JSON model (``Booster.save_model("m.json")`` or :func:`export_xgboost`) into
    a LambdaMART that scores rows as XGBoost does, to float32 round-off.

    Each split ``x < c`` (float32 ``c``) becomes ranklearn's ``x <= t`` with ``t`` the float32
    below ``c``; ``default_left`` becomes the missing-value direction; a ``base_score`` other than
    0 becomes a last tree of one leaf. Only single-output ``gbtree`` models of numerical splits
    whose prediction is the margin (``rank:*``, ``reg:squarederror``) are read.

    Returns
    -------
    LambdaMART
        Fitted for prediction (no bin mapper: it cannot be trained further), with XGBoost's
        feature names when the file has them.

    Raises
    ------
    ModelFormatError
        If the file is unreadable, not an XGBoost JSON model, or holds what ranklearn's trees
        cannot (categorical splits, several outputs, dart, gblinear, another objective).
    """
    from ranklearn.registry import get_model_class

    p = Path(path)
    try:
        doc = json.loads(p.read_bytes())
        learner = doc["learner"]
        booster = learner["gradient_booster"]
        params = learner["learner_model_param"]
        objective = learner["objective"]["name"]
    except OSError as exc:
        raise ModelFormatError(f"cannot read XGBoost model: {exc.strerror or exc}", path=p) from None
    except (ValueError, KeyError, TypeError):
        raise ModelFormatError("not an XGBoost JSON model (no learner.gradient_booster)", path=p) from None
    if booster.get("name") != "gbtree":
        raise ModelFormatError(f"only gbtree models are read; this one is {booster.get('name')!r}", path=p)
    if objective not in _MARGIN_OBJECTIVES:
        raise ModelFormatError(
            f"objective {objective!r} transforms the margin; ranklearn reads {', '.join(_MARGIN_OBJECTIVES)}", path=p
        )
    try:
        if int(params.get("num_class", "0")) > 1 or int(params.get("num_target", "1")) != 1:
            raise ModelFormatError("a model of several outputs cannot be read", path=p)
        n_features = int(params["num_feature"])
        base_score = _float(params["base_score"])
        trees = [_read_tree(t, n_features) for t in booster["model"]["trees"]]
    except ModelFormatError:
        raise
    except ValueError as exc:
        raise ModelFormatError(str(exc), path=p) from None
    except (KeyError, TypeError, IndexError) as exc:
        raise ModelFormatError(f"malformed XGBoost tree ({type(exc).__name__}: {exc})", path=p) from None
    if base_score != 0.0:
        trees.append(_leaf_tree(base_score))
    if not trees:
        raise ModelFormatError("the model holds no trees", path=p)
    model = get_model_class("lambdamart").from_trees(trees, n_features)
    # XGBoost learns a default direction at every split: count it as learned for missing values
    model.trained_with_missing_ = any(bool(np.any(t.missing_left)) for t in trees)
    names = learner.get("feature_names") or []
    if len(names) == n_features:
        model.feature_names_in_ = np.asarray(names, dtype=object)
    return model


def _read_tree(t: dict[str, Any], n_features: int) -> Tree:
    left = np.asarray(t["left_children"], dtype=np.int64)
    n = left.shape[0]
    if any(t.get(k) for k in ("categories_nodes", "categories")) or any(np.asarray(t.get("split_type", [0])) != 0):
        raise ValueError("categorical splits cannot be read")
    internal = left >= 0
    condition = np.asarray(t["split_conditions"], dtype=np.float64)
    threshold = np.zeros(n)
    with np.errstate(over="ignore"):
        c32 = condition[internal].astype(np.float32)
    threshold[internal] = np.nextafter(c32, np.float32(-np.inf))  # x < c  <=>  x <= float32 below c
    tree = Tree(
        feature=np.where(internal, np.asarray(t["split_indices"]), -1).astype(np.int32),
        bin_threshold=np.zeros(n, dtype=np.int32),
        threshold=threshold,
        missing_left=(np.asarray(t["default_left"]) != 0) & internal,
        left=np.where(internal, left, -1).astype(np.int32),
        right=np.where(internal, np.asarray(t["right_children"]), -1).astype(np.int32),
        value=np.where(internal, 0.0, condition),
        gain=np.zeros(n),
        count=np.zeros(n, dtype=np.int64),
    )
    tree.validate(n_features)
    return tree


def _leaf_tree(value: float) -> Tree:
    one = np.ones(1)
    return Tree(
        feature=np.array([-1], np.int32), bin_threshold=np.zeros(1, np.int32), threshold=np.zeros(1),
        missing_left=np.zeros(1, np.bool_), left=np.array([-1], np.int32), right=np.array([-1], np.int32),
        value=one * value, gain=np.zeros(1), count=np.zeros(1, np.int64),
    )  # fmt: skip


def score_xgboost(path: str | PathLike[str], X: np.ndarray) -> np.ndarray:
    """Scores of ``X`` by XGBoost itself on the exported file (needs ``xgboost``)."""
    import xgboost

    booster = xgboost.Booster(model_file=bytearray(Path(path).read_bytes()))  # JSON whatever the file's name
    booster.feature_names = None  # score by position: the data has no names
    return booster.predict(xgboost.DMatrix(X, missing=np.nan), output_margin=True).astype(np.float64)
