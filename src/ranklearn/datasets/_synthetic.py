"""Seeded synthetic learning-to-rank data with a LETOR-like shape."""

from __future__ import annotations

from typing import Union

import numpy as np

from ranklearn.data.dataset import RankingDataset
from ranklearn.datasets._letor import LetorSplits

RandomState = Union[int, np.random.Generator, None]

# Label thresholds as quantiles of the relevance score: 55% of documents get 0, then
# 25% / 12% / 5% / 3% get 1..4 - skewed towards "not relevant" like web judgments.
_LABEL_QUANTILES = (0.55, 0.80, 0.92, 0.97)


def _relevance(X: np.ndarray, n_informative: int, rng: np.random.Generator) -> np.ndarray:
    """A random non-linear function of the informative features, scaled to unit variance.

    Most of the signal is in pairwise products, joint thresholds and even functions
    (|x|), which no linear model can express; a small linear part keeps linear models
    clearly above random.
    """
    k = n_informative
    g = np.zeros(X.shape[0])
    for i in range(k):
        a, b = i, (i + 1) % k  # every informative feature takes part in an interaction
        x_a, x_b = X[:, a], X[:, b]
        kind = i % 4
        if kind == 0:
            g += 1.2 * x_a * x_b
        elif kind == 1:
            t_a, t_b = rng.uniform(-0.5, 0.5, size=2)
            g += 2.0 * ((x_a > t_a) & (x_b > t_b))
        elif kind == 2:
            g -= 1.0 * np.abs(x_a)
        else:
            g += 1.0 * np.sin(2.0 * x_a) * (x_b > 0)
        g += 0.3 * rng.choice((-1.0, 1.0)) * x_a
    std = g.std()
    return g / std if std > 0 else g


def make_ranking(
    n_queries: int = 100,
    n_features: int = 20,
    *,
    n_informative: int = 8,
    docs_per_query: tuple[int, int] = (5, 60),
    noise: float = 0.5,
    no_relevant_fraction: float = 0.2,
    random_state: RandomState = None,
    return_X_y: bool = False,
) -> RankingDataset | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Generate a synthetic ranking dataset that looks like LETOR web data.

    Documents of query ``q`` have features ``x = z + u_q`` (``z`` standard normal, ``u_q``
    a per-query shift, as feature levels differ between queries), with one informative
    feature in three made heavy-tailed by ``exp`` (like counts or PageRank). The
    relevance score is a non-linear function of the first ``n_informative`` features
    with interactions (see ``_relevance``), plus a per-query offset and Gaussian noise;
    graded labels 0-4 are cut from it at global quantiles (55/25/12/5/3 %). Then
    ``no_relevant_fraction`` of the queries get only 0 labels, like the judged queries
    without a relevant document in LETOR (28% of MQ2008). The remaining features are
    pure noise. A tree ensemble clearly beats a linear model on this data.

    Parameters
    ----------
    n_queries : int, default 100
    n_features : int, default 20
        Total columns; the first ``n_informative`` carry signal, the rest are noise.
    n_informative : int, default 8
        1 <= n_informative <= n_features.
    docs_per_query : (int, int), default (5, 60)
        Inclusive range of list lengths, drawn uniformly per query.
    noise : float, default 0.5
        Standard deviation of the noise added to the unit-variance relevance score.
    no_relevant_fraction : float, default 0.2
        Probability that a query has no relevant document (all labels 0).
    random_state : int, Generator or None
        Seed; the same seed and parameters give the same data.
    return_X_y : bool, default False
        Return ``(X, y, qid)`` arrays instead of a dataset.

    Returns
    -------
    RankingDataset, or (X, y, qid)
        ``X`` float32, labels float64 in {0, ..., 4}, query ids ``0 .. n_queries - 1``.
    """
    lo, hi = docs_per_query
    if n_queries < 1:
        raise ValueError(f"n_queries must be >= 1, got {n_queries}")
    if not 1 <= n_informative <= n_features:
        raise ValueError(f"need 1 <= n_informative <= n_features, got {n_informative} and {n_features}")
    if not 1 <= lo <= hi:
        raise ValueError(f"docs_per_query must be (min, max) with 1 <= min <= max, got {docs_per_query}")
    if not 0.0 <= no_relevant_fraction <= 1.0:
        raise ValueError(f"no_relevant_fraction must be in [0, 1], got {no_relevant_fraction}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    rng = np.random.default_rng(random_state)
    sizes = rng.integers(lo, hi + 1, size=n_queries)
    n = int(sizes.sum())
    query_shift = rng.normal(0.0, 0.5, size=(n_queries, n_features))
    X = rng.standard_normal((n, n_features)) + np.repeat(query_shift, sizes, axis=0)
    score = _relevance(X[:, :n_informative], n_informative, rng)
    score += np.repeat(rng.normal(0.0, 0.5, size=n_queries), sizes) + noise * rng.standard_normal(n)
    y = np.searchsorted(np.quantile(score, _LABEL_QUANTILES), score, side="right").astype(np.float64)
    empty = rng.random(n_queries) < no_relevant_fraction
    y[np.repeat(empty, sizes)] = 0.0
    heavy = np.arange(2, n_informative, 3)  # monotone: trees do not care, linear models do
    X[:, heavy] = np.exp(X[:, heavy])
    X = X.astype(np.float32)
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    if return_X_y:
        return X, y, qid
    ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return RankingDataset(X, y, ptr)


def make_ranking_splits(
    n_queries: tuple[int, int, int] = (300, 100, 100), **kwargs: object
) -> LetorSplits:
    """Train, validation and test sets drawn from one :func:`make_ranking` distribution.

    The queries are generated together (same relevance function, thresholds and
    feature shifts) and split in order, so the three sets share the distribution but
    not queries; query ids stay distinct across the sets.

    Parameters
    ----------
    n_queries : (int, int, int), default (300, 100, 100)
        Queries in train, validation and test.
    **kwargs
        Other :func:`make_ranking` parameters (``random_state``, ``n_features``, ...).
    """
    if len(n_queries) != 3 or min(n_queries) < 1:
        raise ValueError(f"n_queries must be three positive counts (train, vali, test), got {n_queries}")
    if kwargs.get("return_X_y"):
        raise ValueError("make_ranking_splits returns datasets; return_X_y is not supported")
    full = make_ranking(sum(n_queries), **kwargs)
    bounds = np.cumsum((0, *n_queries))
    return LetorSplits(*(full.subset(np.arange(bounds[i], bounds[i + 1])) for i in range(3)))
