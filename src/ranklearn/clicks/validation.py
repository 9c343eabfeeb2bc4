"""Debiased validation on clicks: the IPW click DCG, for early stopping and model choice.

A model trained on biased clicks is early-stopped on held-out *clicks* (the true labels are
what no production system has). Scored with NDCG against the raw clicks, the validation
metric rewards what the clicks hold besides relevance: the logging ranker's order, which the
position bias copies into them, so that it keeps rising while the true relevance of the
ranking falls (benchmarks/RESULTS.md, "Why the debiased models do not beat naive by much").

The **IPW click DCG** removes the bias from the metric (Wang, Bendersky, Metzler, Najork, SIGIR
2016; Joachims, Swaminathan, Schnabel, WSDM 2017, Section 4): each click counts divided by the
examination propensity ``p(k)`` of the rank ``k`` it was *shown* at,

    IPW-DCG@K(session) = sum_{clicked d} 1 / p(k_d) * 1 / log2(1 + rank of d by the model),

over the documents the model ranks in its top ``K`` (ranks 1..). Under the position-based model
``P(click) = p(k) a(d)``, its expectation over sessions is the DCG@K of the model's ranking with
the gain ``a(d)`` (the attractiveness of ``d``): the mean over validation sessions is an unbiased
estimate of a DCG of relevance, whatever order the logging ranker showed (given true
propensities; documents never shown, or shown where ``p`` is 0, stay invisible to it).

The convention of the evaluation set: labels = ``click / p(position)`` (:func:`ipw_labels`),
scored by :func:`ipw_dcg` (``dcg@K`` with the linear gain, queries = sessions). It is a DCG, not
an NDCG: normalizing each session by its own ideal DCG would cancel the weight of a session's
single click (its IPW-NDCG is that of the raw click), and so remove the correction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ranklearn.clicks.aggregate import ClickTrainingSet

if TYPE_CHECKING:
    from ranklearn.metrics import Metric

__all__ = ["ipw_dcg", "ipw_eval_set", "ipw_labels"]


def _per_rank(propensity: Any, clip: float | None) -> np.ndarray:
    """``propensity`` (per rank from 1, or a ``Propensity``) as float64, clipped and checked."""
    # imported here: ranklearn.objectives loads scikit-learn, which `import ranklearn.clicks` does not
    from ranklearn.objectives.unbiased import checked_clip, propensity_per_rank

    p = propensity_per_rank(propensity)
    clip = checked_clip(clip)
    return p if clip is None else np.maximum(p, clip)


def ipw_labels(click: Any, position: Any, propensity: Any, *, clip: float | None = None) -> np.ndarray:
    """Clicks weighted by the inverse propensity of the rank each was shown at.

    Parameters
    ----------
    click : array-like (n,)
        Clicks (0/1, or counts) per shown document.
    position : array-like (n,) of int
        The 1-based rank each document was shown at; ranks past the end of ``propensity``
        take its last value (as ``LambdaMART(unbiased="ipw")`` does).
    propensity : array-like (K,) or Propensity
        Examination propensity per rank from 1 (any scale: only ratios between sessions'
        weights matter for a comparison of models), e.g.
        ``ranklearn.clicks.estimate_propensity(log)``.
    clip : float, optional
        Propensities below ``clip`` count as ``clip`` (weights at most ``1 / clip``: less
        variance, some bias back).

    Returns
    -------
    ndarray of float64 (n,)
        ``click / max(p[min(position, K) - 1], clip)``.

    Raises
    ------
    ValueError
        For propensities that are not positive and finite, a ``clip`` <= 0, positions below 1
        or not whole, or arrays of different lengths.
    """
    p = _per_rank(propensity, clip)
    c = np.asarray(click, dtype=np.float64).ravel()
    pos = np.asarray(position).ravel()
    if pos.shape != c.shape:
        raise ValueError(f"click and position must have one value per row, got {c.size} and {pos.size}")
    if pos.size and (pos.dtype.kind not in "iuf" or np.any(pos < 1) or np.any(pos != np.round(pos))):
        raise ValueError("position must hold whole numbers >= 1 (the 1-based ranks shown)")
    return c / p[np.minimum(pos.astype(np.int64), p.size) - 1]


def ipw_eval_set(
    clicks: ClickTrainingSet, propensity: Any, *, clip: float | None = None
) -> tuple[Any, np.ndarray, np.ndarray]:
    """Validation clicks as an evaluation set of the IPW click DCG: ``(X, ipw_labels, qid)``.

    ``clicks`` holds one row per shown document of every session (``ClickTrainingSet.per_session``;
    sessions are the queries); fit with ``eval_set=[ipw_eval_set(valid, p)]`` and
    ``metric=ipw_dcg(10)`` (a LambdaMART then also needs ``lambda_metric="ndcg@10"``: the metric
    of its lambdas is the training's, not the validation's). The rows of a session should not be
    in display order: DCG breaks score ties in row order, which would hand a model's ties the
    logged order.

    Raises
    ------
    ValueError
        For a training set without positions, or as :func:`ipw_labels`.
    """
    if clicks.position is None:
        raise ValueError("the IPW click DCG needs the rank each document was shown at: a ClickTrainingSet with positions")
    return clicks.X, ipw_labels(clicks.y, clicks.position, propensity, clip=clip), clicks.qid


def ipw_dcg(k: int = 10) -> Metric:
    """The metric of :func:`ipw_eval_set`'s labels: DCG@k with gain = label (the IPW-weighted
    click), ``1 / log2(1 + rank)``, sessions without a click 0, score ties in row order; the
    mean over sessions (ranklearn's ``get_metric(f"dcg@{k}", gain="linear")``)."""
    from ranklearn.metrics import get_metric  # the metrics' kernels load with the first use

    return get_metric(f"dcg@{int(k)}", gain="linear")
