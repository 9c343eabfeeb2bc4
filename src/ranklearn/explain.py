"""Ranking explanations from feature contributions: why one document is above another, and what
ordered a query's list.

Built on any ranker's ``predict_contributions`` (exact TreeSHAP for the tree rankers, exact for
the linear ones, expected gradients, an approximation, for the neural ones; see
:mod:`ranklearn.models.contributions`). Scores are additive in the contributions, so:

- :func:`pair`: ``phi(a) - phi(b)`` splits ``s_a - s_b`` among the features (the expected value
  cancels); for the trees and linear rankers it sums to the difference exactly.
- :func:`query`: each document's contributions minus the query's mean document's split
  ``s_d - mean(s)`` (what moved it up or down in its list); each adjacent pair of the ranking
  is a :func:`pair` (what decided their order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["PairExplanation", "QueryExplanation", "document_ids", "feature_names", "method", "pair", "query", "shares_text"]


def feature_names(model: Any, n_features: int | None = None) -> list[str]:
    """The model's ``feature_names_in_``, or ``f1``, ``f2``... (1-based, as svmlight files number them)."""
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    return [f"f{j + 1}" for j in range(model.n_features_in_ if n_features is None else n_features)]


def method(model: Any) -> str:
    """What the model's contributions are, in words."""
    from ranklearn.models.contributions import LinearContributions, NeuralContributions

    if isinstance(model, NeuralContributions):
        return "expected gradients (an approximation: contributions sum to the score only up to a residual)"
    if isinstance(model, LinearContributions):
        return "exact Shapley values of a linear score: coef * (x - the mean of the rows explained)"
    return "exact Shapley values (path-dependent TreeSHAP on the training cover)"


def document_ids(ds: Any, rows: slice, docid_field: str = "docid") -> list[str]:
    """The ids of the documents of ``rows`` of a :class:`ranklearn.data.RankingDataset`: their
    ``# <docid_field> = ...`` comments when every row has one, else their line numbers in the file
    (``line 12``), else their rows (``row 1``: a dataset made from arrays)."""
    from ranklearn.exceptions import DataFormatError
    from ranklearn.io.trec import docids_from_comments

    if ds.comments is not None:
        try:
            return [str(d) for d in docids_from_comments(ds.comments[rows], docid_field)]
        except DataFormatError:
            pass  # not every row names its document: lines, which always exist
    if ds.lines is None:
        return [f"row {i + 1}" for i in range(rows.stop - rows.start)]
    return [f"line {int(n)}" for n in ds.lines[rows]]


def shares_text(items: list[tuple[str, float]]) -> str:
    """``[("bm25", 0.51), ("pagerank", -0.2)]`` -> ``"bm25 +0.51, pagerank -0.2"`` (the tables' cells)."""
    return ", ".join(f"{k} {v:+.3g}" for k, v in items)


def _largest(values: np.ndarray, names: list[str], n: int) -> list[tuple[str, float]]:
    """The ``n`` features of largest absolute value, largest first (ties: column order)."""
    order = np.argsort(-np.abs(values), kind="stable")[:n]
    return [(names[j], float(values[j])) for j in order]


@dataclass
class PairExplanation:
    """Why document ``a`` scores above (or below) document ``b``.

    ``contributions[j]``: feature ``j``'s share of ``score_a - score_b``; ``residual``: the
    difference minus their sum (0 up to rounding, except for an approximate explainer).
    """

    score_a: float
    score_b: float
    contributions: np.ndarray
    names: list[str]

    @property
    def difference(self) -> float:
        return self.score_a - self.score_b

    @property
    def residual(self) -> float:
        return self.difference - float(self.contributions.sum())

    def top(self, n: int = 5) -> list[tuple[str, float]]:
        """The ``n`` features that mattered most, as (name, contribution), largest magnitude first."""
        return _largest(self.contributions, self.names, n)

    def to_dict(self, n: int | None = None) -> dict[str, Any]:
        return {
            "score_a": self.score_a,
            "score_b": self.score_b,
            "difference": self.difference,
            "residual": self.residual,
            "features": [{"feature": k, "contribution": v} for k, v in self.top(n or len(self.names))],
        }


def _contributions(model: Any, X: np.ndarray, **options: Any) -> np.ndarray:
    if not hasattr(model, "predict_contributions"):
        raise TypeError(f"{type(model).__name__} has no predict_contributions: it cannot be explained")
    return model.predict_contributions(X, **options)


def pair(model: Any, x_a: ArrayLike, x_b: ArrayLike, **options: Any) -> PairExplanation:
    """Per-feature contributions to ``s_a - s_b`` for two documents' feature vectors.

    Parameters
    ----------
    model : a fitted ranker with ``predict_contributions``
    x_a, x_b : array-like (n_features,)
        The two documents.
    **options
        Passed to ``predict_contributions`` (e.g. a neural ranker's ``background``).

    Returns
    -------
    PairExplanation
        ``contributions = phi(x_a) - phi(x_b)`` (expected value dropped: it cancels).
    """
    X = np.vstack([np.asarray(x_a, dtype=np.float64).ravel(), np.asarray(x_b, dtype=np.float64).ravel()])
    phi = _contributions(model, X, **options)
    scores = model.predict(X)
    return PairExplanation(float(scores[0]), float(scores[1]), phi[0, :-1] - phi[1, :-1], feature_names(model))


@dataclass
class QueryExplanation:
    """One query's list explained.

    ``order``: the documents (row numbers of ``X_q``) by decreasing score (ties: row order);
    ``relative[i, j]``: feature ``j``'s share of ``scores[i] - scores.mean()`` (the document's
    contributions minus the query's mean document's); ``pairs[p]``: the :class:`PairExplanation`
    of the documents at ranks ``p`` and ``p + 1`` (0-based), for the ``top`` leading ones.
    """

    scores: np.ndarray
    order: np.ndarray
    relative: np.ndarray
    pairs: list[PairExplanation]
    names: list[str]
    doc_ids: list[str]

    @property
    def residual(self) -> float:
        """The largest ``|scores[i] - mean - relative[i].sum()|``: 0 up to rounding, except for an
        approximate explainer (the neural rankers' expected gradients)."""
        return float(np.abs(self.scores - self.scores.mean() - self.relative.sum(axis=1)).max())

    def document(self, i: int, n: int = 5) -> list[tuple[str, float]]:
        """Row ``i``'s ``n`` features that moved it most, up (> 0) or down, against the query's mean."""
        return _largest(self.relative[i], self.names, n)

    def to_dict(self, n: int = 5) -> dict[str, Any]:
        mean = float(self.scores.mean())
        docs = []
        for rank, i in enumerate(self.order[: len(self.pairs) + 1]):
            docs.append({
                "rank": rank + 1,
                "doc": self.doc_ids[i],
                "score": float(self.scores[i]),
                "vs_query_mean": float(self.scores[i]) - mean,
                "features": [{"feature": k, "contribution": v} for k, v in self.document(int(i), n)],
            })  # fmt: skip
        pairs = [
            {"above": self.doc_ids[self.order[p]], "below": self.doc_ids[self.order[p + 1]], **pe.to_dict(n)}
            for p, pe in enumerate(self.pairs)
        ]
        return {"query_mean_score": mean, "residual": self.residual, "documents": docs, "adjacent_pairs": pairs}


def query(model: Any, X_q: ArrayLike, top: int = 10, *, doc_ids: list[str] | None = None,
          **options: Any) -> QueryExplanation:  # fmt: skip
    """Explain one query's ranked list.

    Parameters
    ----------
    model : a fitted ranker with ``predict_contributions``
    X_q : array-like (n_docs, n_features)
        The query's documents.
    top : int
        Adjacent pairs explained: those among the ``top`` leading documents.
    doc_ids : list of str, optional
        Names of the documents (default: their 0-based row numbers).
    **options
        Passed to ``predict_contributions``.
    """
    X = np.asarray(X_q, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X_q must be a 2-D array with at least one document, got shape {X.shape}")
    if top < 1:
        raise ValueError(f"top must be >= 1, got {top}")
    ids = [str(i) for i in range(X.shape[0])] if doc_ids is None else [str(d) for d in doc_ids]
    if len(ids) != X.shape[0]:
        raise ValueError(f"doc_ids has {len(ids)} names for {X.shape[0]} documents")
    phi = _contributions(model, X, **options)[:, :-1]
    scores = model.predict(X)
    order = np.argsort(-scores, kind="stable")
    names = feature_names(model)
    pairs = [
        PairExplanation(float(scores[a]), float(scores[b]), phi[a] - phi[b], names)
        for a, b in zip(order[: top - 1], order[1:top])
    ]
    return QueryExplanation(scores, order, phi - phi.mean(axis=0), pairs, names, ids)
