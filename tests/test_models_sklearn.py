"""scikit-learn conformance of every registered ranker, through a thin adapter supplying query ids.

``check_estimator`` calls ``fit(X, y)`` and ``score(X, y)``; a ranker needs queries, so the
adapters below make every 10 consecutive rows a query. Every check passes; none is listed as
an expected failure.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ranklearn.registry import REGISTRY


def _qid(X) -> np.ndarray:
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    return np.arange(n) // 10


class QueriesOfTen:
    """Mixin: fit and score with every 10 consecutive rows as one query."""

    def fit(self, X, y, **kwargs):
        return super().fit(X, y, qid=_qid(X), **kwargs)

    def score(self, X, y, sample_weight=None):
        return super().score(X, y, sample_weight, qid=_qid(X))


#: small settings of each registered ranker (a new ranker must be added here)
SMALL = {
    "lambdamart": dict(n_estimators=5, min_samples_leaf=1, random_state=0),
    "ranknet": dict(epochs=2, hidden=(4,), n_networks=1, random_state=0),
    "lambdarank": dict(epochs=2, hidden=(4,), n_networks=1, random_state=0),
    "listnet": dict(epochs=2, hidden=(4,), n_networks=1, random_state=0),
}


def _adapted():
    out = []
    for name, params in SMALL.items():
        try:
            cls = REGISTRY[name].load_class()
        except ImportError:  # torch missing: the neural rankers are not checked
            continue
        adapted = type(f"Adapted{cls.__name__}", (QueriesOfTen, cls), {"__module__": __name__})
        globals()[adapted.__name__] = adapted  # picklable by name
        out.append(adapted(**params))
    return out


def test_every_registered_ranker_is_checked():
    assert set(SMALL) >= set(REGISTRY) - {"toy"}


@parametrize_with_checks(_adapted())
def test_check_estimator(estimator, check):
    check(estimator)
