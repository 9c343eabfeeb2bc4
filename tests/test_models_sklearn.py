"""scikit-learn conformance of every registered ranker, through a thin adapter supplying query ids.

``check_estimator`` calls ``fit(X, y)`` and ``score(X, y)``; a ranker needs queries, so the
adapters below put row i in query i % 10. Every check passes; none is listed as
an expected failure.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ranklearn.registry import REGISTRY


def _qid(X) -> np.ndarray:
    # row i in query i % 10: the checks' data often has its classes in blocks, and a query
    # needs different labels to hold a pair
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    return np.arange(n) % 10


class QueriesOfTen:
    """Mixin: fit and score with row i in query i % 10."""

    def fit(self, X, y, **kwargs):
        return super().fit(X, y, qid=_qid(X), **kwargs)

    def score(self, X, y, sample_weight=None):
        return super().score(X, y, sample_weight, qid=_qid(X))


def adapted(spec):
    """An instance of ``spec``'s ranker with its test settings (``ModelSpec.test``), fitting and
    scoring row i in query i % 10; None when its extra (torch) is missing."""
    try:
        cls = spec.load_class()
    except ImportError:  # torch missing: the neural rankers are not checked
        return None
    adapted_class = type(f"Adapted{cls.__name__}", (QueriesOfTen, cls), {"__module__": __name__})
    globals()[adapted_class.__name__] = adapted_class  # picklable by name
    return adapted_class(**spec.test)


def _adapted():
    # every ranker registered when the tests are collected; a ranker registered by a test is
    # checked there (test_registry.py)
    return [estimator for estimator in map(adapted, REGISTRY.values()) if estimator is not None]


@parametrize_with_checks(_adapted())
def test_check_estimator(estimator, check):
    check(estimator)


def test_grid_search_and_pipeline_with_query_groups_as_in_the_readme():
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ranklearn.datasets import make_ranking
    from ranklearn.models import LambdaMART

    X, y, qid = make_ranking(n_queries=40, n_features=5, n_informative=3, random_state=0, return_X_y=True)
    small = dict(n_estimators=5, num_leaves=4, min_samples_leaf=2, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        est = LambdaMART(**small).set_fit_request(qid=True).set_score_request(qid=True)
        search = GridSearchCV(est, {"num_leaves": [3, 4]}, cv=GroupKFold(3)).fit(X, y, qid=qid, groups=qid)
        assert search.best_params_["num_leaves"] in (3, 4)
        # each fold's score is the model's own metric on whole test queries
        train, test = next(GroupKFold(3).split(X, y, groups=qid))
        fold = LambdaMART(**{**small, "num_leaves": 3}).fit(X[train], y[train], qid=qid[train])
        assert search.cv_results_["split0_test_score"][0] == fold.score(X[test], y[test], qid=qid[test])
        pipe = make_pipeline(StandardScaler(), LambdaMART(**small).set_fit_request(qid=True).set_score_request(qid=True))
        scores = cross_validate(pipe, X, y, cv=GroupKFold(3), params={"qid": qid, "groups": qid})["test_score"]
        assert scores.shape == (3,) and np.all((0 <= scores) & (scores <= 1))
        search = GridSearchCV(pipe, {"lambdamart__num_leaves": [3, 4]}, cv=GroupKFold(3)).fit(X, y, qid=qid, groups=qid)
        assert search.best_params_["lambdamart__num_leaves"] in (3, 4)


def test_model_selection_needs_no_request_calls_and_says_the_recipe_without_routing():
    import warnings

    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold, RandomizedSearchCV, cross_val_score

    from ranklearn.datasets import make_ranking
    from ranklearn.models import LambdaMART
    from ranklearn.models.base import ROUTING_RECIPE

    X, y, qid = make_ranking(n_queries=30, n_features=5, n_informative=3, random_state=1, return_X_y=True)
    small = dict(n_estimators=4, min_samples_leaf=2, random_state=0)
    grid = {"num_leaves": [3, 5]}
    # without routing the folds' scores cannot have their queries: nan, and the warning says what to do
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search = GridSearchCV(LambdaMART(**small), grid, cv=GroupKFold(3)).fit(X, y, qid=qid, groups=qid)
    assert np.isnan(search.best_score_)
    assert any(ROUTING_RECIPE in str(w.message) for w in caught)
    with pytest.raises(ValueError, match=r"enable_metadata_routing=True"):
        GridSearchCV(LambdaMART(**small), grid, cv=GroupKFold(3), error_score="raise").fit(X, y, qid=qid, groups=qid)
    # with routing, qid goes to fit and score by default (no set_fit_request/set_score_request)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(LambdaMART(**small), grid, cv=GroupKFold(3)).fit(X, y, qid=qid, groups=qid)
        train, test = next(GroupKFold(3).split(X, y, groups=qid))
        fold = LambdaMART(**small, num_leaves=3).fit(X[train], y[train], qid=qid[train])
        assert search.cv_results_["split0_test_score"][0] == fold.score(X[test], y[test], qid=qid[test])
        randomized = RandomizedSearchCV(LambdaMART(**small), grid, n_iter=2, cv=GroupKFold(3), random_state=0)
        assert not np.isnan(randomized.fit(X, y, qid=qid, groups=qid).best_score_)
        scores = cross_val_score(LambdaMART(**small), X, y, cv=GroupKFold(3), params={"qid": qid, "groups": qid})
        assert scores[0] == LambdaMART(**small).fit(X[train], y[train], qid=qid[train]).score(X[test], y[test], qid=qid[test])
