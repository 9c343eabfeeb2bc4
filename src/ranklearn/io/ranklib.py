"""RankLib's model text formats: export (for the Elasticsearch, OpenSearch and Solr LTR
plugins, and RankLib itself) and import of the tree models and the linear ones.

The linear models (Coordinate Ascent, linear regression) are ``## <name>`` header lines and
one line of ``fid:weight`` pairs, 1-based feature ids; linear regression's intercept is
feature 0 (RankLib reads it as the constant term; RankLib's own writer puts the first
weight there, a RankLib bug ranklearn does not copy)::

    ## Coordinate Ascent
    1:0.25 2:-0.5 3:0.25

RankLib scores ``intercept + sum(w_i * x_i)`` left to right in doubles on float features;
weights are written as the shortest text of the exact double, so the exported model scores
every document exactly as ``predict``.

The format is a few ``## key = value`` header lines and an XML ensemble::

    <ensemble>
        <tree id="1" weight="0.1">
            <split>
                <feature> 3 </feature>           (1-based)
                <threshold> 0.25 </threshold>    (x <= threshold goes left)
                <split pos="left"> <output> -0.5 </output> </split>
                <split pos="right"> ... </split>
            </split>
        </tree>
    </ensemble>

A document's score is ``sum(weight * output)``. ranklearn's thresholds are float32 values seen
in the training data, so RankLib's float comparison sends every document down the same branch
as ranklearn's. Leaf outputs are written with tree weight 1 and the exact (shrunk) value;
RankLib parses them as 32-bit floats, so its scores equal ranklearn's to float32 precision.
RankLib has no missing values: NaN compares false and goes right. On data without NaN the
export is exact; for a model trained on data with NaN, whose splits may send missing values
left, export warns that the exported model routes NaN differently.
"""

from __future__ import annotations

import math
import re
import warnings
import xml.etree.ElementTree as ET
from decimal import Decimal, InvalidOperation
from os import PathLike
from pathlib import Path

import numpy as np

from ranklearn._files import write_output
from ranklearn._text import plain_float
from ranklearn.exceptions import ModelFormatError
from ranklearn.io._trees import learned_missing_branch, linear_weights, model_kind, model_trees, require_fitted_lambdamart


def _fmt32(x: float) -> str:
    """Shortest text that parses back to the same float32 (thresholds are float32 values)."""
    return repr(float(np.float32(x))) if np.float32(x) == x else repr(float(x))


#: RankLib's names of its rankers by ``-ranker`` number (the header it dispatches on when loading): tree
#: ensembles, linear models
_TREES = {0: "MART", 6: "LambdaMART"}
_LINEAR = {4: "Coordinate Ascent", 9: "Linear Regression"}
#: RankLib's linear regression: the one model whose file holds a constant (feature 0)
_REGRESSION = 9


def _ranklib_spec(model):
    """The spec of a model RankLib's format holds (``"ranklib"`` among its exports), else None."""
    from ranklearn.registry import spec_of

    spec = spec_of(model)
    return spec if spec is not None and "ranklib" in spec.exports else None


def _spec_of_ranker(number: int):
    """The registered model RankLib's ranker ``number`` is imported as."""
    from ranklearn.registry import REGISTRY

    return next(spec for spec in REGISTRY.values() if spec.ranklib == number and "ranklib" in spec.exports)


def export_ranklib(model, path: str | PathLike[str]) -> None:
    """Write a fitted model in RankLib's format (safely: ``ranklearn._files``).

    LambdaMART and MART as RankLib's tree ensemble; Coordinate Ascent and linear regression
    as RankLib's linear model line.

    A model trained on clicks with ``unbiased=`` exports its trees ``f`` only: its position bias
    (``position_bias_``) served training, and ``predict`` scores with ``f`` alone too.

    Raises
    ------
    ValueError
        If the model is not one of those, or not fitted.
    """
    write_output(path, ranklib_model_text(model).encode())


def ranklib_model_text(model) -> str:
    """The text :func:`export_ranklib` writes (the ``model/ranklib`` definition of the LTR plugins).

    Raises
    ------
    ValueError
        If the model is not one RankLib's format holds, or not fitted.
    """
    spec = _ranklib_spec(model)
    if spec is None:
        from ranklearn.registry import REGISTRY

        kinds = ", ".join(name for name, other in REGISTRY.items() if "ranklib" in other.exports)
        raise ValueError(f"RankLib's format holds {kinds} models; this model is {model_kind(model)}")
    if spec.structure == "linear":
        return _linear_text(model, spec.ranklib)
    require_fitted_lambdamart(model, "RankLib")
    trees = model_trees(model, "RankLib")  # a global normalizer folded in
    if learned_missing_branch(model, trees):
        warnings.warn(
            "the model was trained with missing values and some splits send them left; RankLib sends "
            "NaN right, so exported scores differ from ranklearn's on rows with missing values",
            stacklevel=2,
        )
    stop = model.early_stopping_rounds
    if stop == "auto":  # what it meant for this fit: the rounds "auto" stands for if it watched a set
        stop = model.early_stopping_patience(1) if getattr(model, "evals_result_", None) else None
    lines = [
        f"## {_TREES[spec.ranklib]}",  # RankLib picks the ranker by this name
        f"## No. of trees = {len(trees)}",
        f"## No. of leaves = {model.num_leaves}",
        f"## No. of threshold candidates = {model.max_bins}",
        f"## Learning rate = {model.learning_rate}",
        f"## Stop early = {stop or 0}",
        "## Exported by ranklearn: leaf outputs include the learning rate, tree weights are 1.",
        "",
        "<ensemble>",
    ]
    for t_id, tree in enumerate(trees, start=1):
        lines.append(f'\t<tree id="{t_id}" weight="1.0">')
        _write_node(tree, 0, 2, lines)
        lines.append("\t</tree>")
    lines.append("</ensemble>")
    return "\n".join(lines) + "\n"


def _linear_text(model, ranker: int) -> str:
    if not model.__sklearn_is_fitted__():
        raise ValueError(f"export to RankLib needs a fitted model; this {type(model).__name__} is not fitted")
    lines = [f"## {_LINEAR[ranker]}"]
    if ranker == _REGRESSION:
        lines.append(f"## Lambda = {model.l2_regularization!r}")
    else:
        lines += [
            f"## Restart = {model.n_estimators}",
            f"## MaxIteration = {model.line_search_steps}",
            f"## StepBase = {model.step_base!r}",
            f"## StepScale = {model.step_scale!r}",
            f"## Tolerance = {model.tolerance!r}",
            f"## Regularized = {str(bool(model.regularized)).lower()}",
            f"## Slack = {model.slack!r}",
        ]
    coef, intercept = linear_weights(model, "RankLib")  # a global normalizer folded in
    pairs = [f"0:{intercept!r}"] if ranker == _REGRESSION else []
    pairs += [f"{j + 1}:{float(w)!r}" for j, w in enumerate(coef)]
    lines.append(" ".join(pairs))
    return "\n".join(lines) + "\n"


def _write_node(tree, node: int, depth: int, lines: list[str], pos: str | None = None) -> None:
    ind = "\t" * depth
    head = f'{ind}<split pos="{pos}">' if pos else f"{ind}<split>"
    if tree.feature[node] < 0:
        lines.append(f"{head}")
        lines.append(f"{ind}\t<output> {repr(float(tree.value[node]))} </output>")
        lines.append(f"{ind}</split>")
        return
    lines.append(head)
    lines.append(f"{ind}\t<feature> {int(tree.feature[node]) + 1} </feature>")
    lines.append(f"{ind}\t<threshold> {_fmt32(tree.threshold[node])} </threshold>")
    _write_node(tree, int(tree.left[node]), depth + 1, lines, "left")
    _write_node(tree, int(tree.right[node]), depth + 1, lines, "right")
    lines.append(f"{ind}</split>")


_HEADER = re.compile(r"^\s*##")


def import_ranklib(path: str | PathLike[str], n_features: int | None = None):
    """Read a RankLib model (RankLib's own or ranklearn's export): a tree ensemble (LambdaMART,
    MART) into a LambdaMART, a ``## Coordinate Ascent`` or ``## Linear Regression`` file into a
    CoordinateAscent or LinearRegression.

    Parameters
    ----------
    path : file path
    n_features : int, optional
        Width of the data the model will score (default: the largest feature id it uses).

    Returns
    -------
    LambdaMART, CoordinateAscent or LinearRegression
        Fitted for prediction, scoring every document as RankLib scores it with that file
        (trees: to float32 precision; linear: exactly when the features are listed by
        increasing id, as RankLib and ranklearn write them). A tree model has no bin mapper
        and cannot be trained further; features a linear file does not list weigh 0.

    Raises
    ------
    ModelFormatError
        If the file is unreadable, not a RankLib model, or malformed.
    """
    from ranklearn.registry import get_model_class
    from ranklearn.tree.tree import Tree

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFormatError(f"cannot read RankLib model: {exc}", path=p) from None
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    linear = {f"## {title}": number for number, title in _LINEAR.items()}.get(first)
    if linear is not None:
        return _import_linear(linear, text, n_features, p)
    body = "\n".join(line for line in text.splitlines() if not _HEADER.match(line))
    if "<!DOCTYPE" in body or "<!ENTITY" in body:
        raise ModelFormatError("RankLib models have no DOCTYPE/ENTITY declarations", path=p)
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise ModelFormatError(f"not a RankLib ensemble (XML error: {exc})", path=p) from None
    if root.tag != "ensemble":
        raise ModelFormatError(f"expected an <ensemble> element, found <{root.tag}>", path=p)
    trees = []
    max_feature = 0
    for t_el in root:
        if t_el.tag != "tree":
            raise ModelFormatError(f"unexpected <{t_el.tag}> inside <ensemble>", path=p)
        try:
            weight = float(t_el.get("weight", "1"))
        except ValueError:
            raise ModelFormatError(f"tree {t_el.get('id')!r} has a non-numeric weight", path=p) from None
        splits = [c for c in t_el if c.tag == "split"]
        if len(splits) != 1:
            raise ModelFormatError(f"tree {t_el.get('id')!r} must hold exactly one root <split>", path=p)
        nodes: list[list] = []  # feature, threshold, left, right, value
        try:
            _read_node(splits[0], weight, nodes, p)
        except RecursionError:
            raise ModelFormatError("a tree is nested too deeply to be a real model", path=p) from None
        arr = np.array(nodes, dtype=object).reshape(-1, 5)
        feature = arr[:, 0].astype(np.int32)
        max_feature = max(max_feature, int(feature.max()) + 1)
        n = len(nodes)
        trees.append(
            Tree(
                feature=feature,
                bin_threshold=np.zeros(n, dtype=np.int32),
                threshold=arr[:, 1].astype(np.float64),
                missing_left=np.zeros(n, dtype=np.bool_),
                left=arr[:, 2].astype(np.int32),
                right=arr[:, 3].astype(np.int32),
                value=arr[:, 4].astype(np.float64),
                gain=np.zeros(n),
                count=np.zeros(n, dtype=np.int64),
            )
        )
    if not trees:
        raise ModelFormatError("the ensemble holds no trees", path=p)
    if n_features is not None and n_features < max_feature:
        raise ValueError(f"n_features={n_features} but the model uses feature {max_feature}")
    return get_model_class("lambdamart").from_trees(trees, n_features or max_feature)


def _import_linear(ranker: int, text: str, n_features: int | None, path: Path):
    """A linear model from its one line of ``fid:weight`` pairs (feature 0: linear regression's constant)."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not _HEADER.match(line)]
    if len(lines) != 1:
        raise ModelFormatError(f"a RankLib {_LINEAR[ranker]} model has one line of fid:weight pairs", path=path)
    weights: dict[int, float] = {}
    lowest = 0 if ranker == _REGRESSION else 1  # only linear regression has the constant, feature 0
    for token in lines[0].split():
        fid, sep, value = token.partition(":")
        fid_int = int(fid) if fid.isascii() and fid.isdigit() else -1
        weight = plain_float(value)
        if not sep or fid_int < lowest or not math.isfinite(weight):
            raise ModelFormatError(f"expected fid:weight with a feature id >= {lowest}, got {token!r}", path=path)
        if fid_int in weights:
            raise ModelFormatError(f"feature {fid_int} has two weights", path=path)
        weights[fid_int] = weight
    width = max(weights, default=0)
    if n_features is not None and n_features < width:
        raise ValueError(f"n_features={n_features} but the model uses feature {width}")
    coef = np.zeros(n_features or width)
    for fid_int, weight in weights.items():
        if fid_int > 0:
            coef[fid_int - 1] = weight
    return _spec_of_ranker(ranker).load_class().from_weights(coef, weights.get(0, 0.0))


def _float32(text: str) -> float:
    """The float32 nearest to a decimal, ties to even, as Java's ``Float.parseFloat`` rounds it
    (not through the nearest double, which can round a decimal next to a midpoint the other way)."""
    exact = Decimal(text.strip())
    near = np.float32(float(exact))
    with np.errstate(over="ignore"):
        candidates = [np.nextafter(near, np.float32(-np.inf)), near, np.nextafter(near, np.float32(np.inf))]
    finite = [c for c in candidates if np.isfinite(c)] or [near]
    # nearest; on a tie the even mantissa (last bit 0)
    best = min(finite, key=lambda c: (abs(Decimal(float(c)) - exact), int(np.float32(c).view(np.uint32)) & 1))
    return float(best)


def _read_node(el: ET.Element, weight: float, nodes: list[list], path: Path) -> int:
    me = len(nodes)
    nodes.append([-1, 0.0, -1, -1, 0.0])
    out = el.find("output")
    try:
        if out is not None:
            nodes[me][4] = weight * float(out.text)
            return me
        feat = int(el.find("feature").text)
        # RankLib (and the LTR plugins) parse thresholds as 32-bit floats and compare float
        # features: 0.602108 splits at float32(0.602108), as ranklearn's float32 features do
        thr = _float32(el.find("threshold").text)
    except (AttributeError, TypeError, ValueError, InvalidOperation):
        raise ModelFormatError("a <split> needs <output>, or <feature> and <threshold> numbers", path=path) from None
    if feat < 1:
        raise ModelFormatError(f"feature ids are 1-based, got {feat}", path=path)
    children = {c.get("pos"): c for c in el if c.tag == "split"}
    if set(children) != {"left", "right"}:
        raise ModelFormatError('a <split> with a feature needs pos="left" and pos="right" children', path=path)
    nodes[me][0] = feat - 1
    nodes[me][1] = thr
    nodes[me][2] = _read_node(children["left"], weight, nodes, path)
    nodes[me][3] = _read_node(children["right"], weight, nodes, path)
    return me
