"""What every ranker inherits from BaseRanker: input checks, parameter and metric checks,
degenerate data, unfitted models, and the label policy.

Label policy, per component (tested here and in test_data_svmlight.py, test_metrics.py,
test_cli_evaluate.py):

* loader and ``RankingDataset``: any finite real label (a file format question);
* estimators (LambdaMART, RankNet, LambdaRank) train on any finite real labels;
* metrics need labels >= 0 (a negative gain breaks NDCG's [0, 1] range and ERR's stop
  probabilities), so evaluation sets, ``score`` and ``ranklearn evaluate`` reject
  negative labels with a ValueError naming the row (and the file, on the command line);
* labels above 1000 overflow the gain 2^rel-1: DCG/NDCG with ``gain="exp2"`` refuse them.
"""

from __future__ import annotations

import re
from functools import partial

import numpy as np
import pytest

from ranklearn.models import LambdaMART
from _helpers import MODEL_IDS, MODELS, TINY_TREES, small_data


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
@pytest.mark.parametrize(
    "case,fragment",
    [
        ("inf_feature", "inf"),
        ("inf_label", "finite"),
        ("nan_label", "finite"),
        ("text_label", "labels"),
        ("y_short", "lengths differ"),
        ("qid_short", "lengths differ"),
        ("empty", "empty"),
        ("no_features", "no features"),
        ("nan_qid", "qid"),
        ("none_qid", "qid"),
        ("mixed_qid", "comparable"),
        ("no_qid", "qid is required"),
        ("three_d", "2-D"),
    ],
)
def test_estimators_reject_bad_training_data(name, make, case, fragment):
    X, y, qid = small_data()
    kwargs = {}
    if case == "inf_feature":
        X[3, 1] = np.inf
    elif case == "inf_label":
        y[2] = np.inf
    elif case == "nan_label":
        y[2] = np.nan
    elif case == "text_label":
        y = np.array(["1"] * (len(y) - 1) + ["high"], dtype=object)
    elif case == "y_short":
        y = y[:-1]
    elif case == "qid_short":
        qid = qid[:-1]
    elif case == "empty":
        X, y, qid = np.empty((0, 4)), np.empty(0), np.empty(0)
    elif case == "no_features":
        X = np.empty((len(y), 0))
    elif case == "nan_qid":
        qid = qid.astype(float)
        qid[5] = np.nan
    elif case == "none_qid":
        qid = qid.astype(object)
        qid[0] = None
    elif case == "mixed_qid":
        qid = qid.astype(object)
        qid[: len(qid) // 2] = "a"
    elif case == "no_qid":
        qid = None
    elif case == "three_d":
        X = X.reshape(len(y), 2, 2)
    with pytest.raises(ValueError, match=fragment):
        make().fit(X, y, qid=qid, **kwargs)


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
def test_feature_count_at_predict_time(name, make):
    X, y, qid = small_data()
    model = make().fit(X, y, qid=qid)
    for wrong in (X[:, :3], np.hstack([X, X[:, :1]]), X[0]):
        with pytest.raises(ValueError, match="features"):
            model.predict(wrong)


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
def test_degenerate_queries_train_and_predict(name, make):
    """Queries of one document, and data where no query has a relevant document."""
    X, y, qid = small_data()
    for labels, groups in ((y, np.arange(len(y))), (np.zeros_like(y), qid)):
        model = make().fit(X, labels, qid=groups)
        assert np.isfinite(model.predict(X)).all()


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
@pytest.mark.parametrize(
    "param,value,fragment",
    [("metric", "bogus@3", "unknown metric"), ("metric", "ndcg@0", "k must be >= 1"), ("metric", "ndcg@-2", ">= 1")],
)
def test_bad_metric_parameter(name, make, param, value, fragment):
    X, y, qid = small_data()
    model = make().set_params(**{param: value})
    with pytest.raises(ValueError, match=re.escape(fragment)):
        model.fit(X, y, qid=qid)


def test_unfitted_models_say_so():
    from sklearn.exceptions import NotFittedError

    for _, make in MODELS:
        with pytest.raises(NotFittedError):
            make().predict(np.zeros((2, 4)))


# ------------------------------------------------------------------------ negative labels
@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
def test_negative_labels_train_but_do_not_evaluate(name, make):
    """Estimators train on any real labels their lambdas can use; metrics (eval sets, score)
    need labels >= 0. LambdaMART's gain-based lambdas (the default) refuse negative labels,
    its RankNet lambdas only compare them."""
    X, y, qid = small_data()
    if name == "lambdamart":
        with pytest.raises(ValueError, match="labels must be >= 0 for ndcg lambdas"):
            make().fit(X, y - 1.0, qid=qid)
        make = partial(LambdaMART, **TINY_TREES, lambda_metric="none")
    model = make().fit(X, y - 1.0, qid=qid)
    assert np.isfinite(model.predict(X)).all()
    with pytest.raises(ValueError, match=r"labels must be finite and >= 0; row \d+ has -1"):
        model.score(X, y - 1.0, qid=qid)
    with pytest.raises(ValueError, match=r">= 0"):
        make().fit(X, y, qid=qid, eval_set=[(X, y - 1.0, qid)])
