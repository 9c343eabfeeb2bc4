"""LambdaRank: labels its gain-weighted lambdas cannot use."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from _helpers import _one_torch_thread  # noqa: E402, F401 (autouse: one torch thread)


def test_lambdarank_refuses_labels_that_overflow_its_gain():
    from ranklearn.models import LambdaRank, RankNet

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 3, 60).astype(float)
    y[5] = 2000.0
    qid = np.repeat(np.arange(6), 10)
    with pytest.raises(ValueError, match="overflows"):
        LambdaRank(hidden=(4,), n_estimators=2, random_state=0).fit(X, y, qid=qid)
    # RankNet only compares labels: it trains and predicts finite scores
    assert np.isfinite(RankNet(hidden=(4,), n_estimators=2, random_state=0).fit(X, y, qid=qid).predict(X)).all()


def test_lambdarank_gains_fit_float32_and_err_takes_the_training_grades():
    from ranklearn.models import LambdaRank

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)).astype(np.float32)
    y = rng.integers(0, 3, 60).astype(float)
    qid = np.repeat(np.arange(10), 6)
    # float32 gains: labels 128-1000 passed the check and diverged in the first epoch, and three
    # documents of grade 127 summed to an infinite ideal DCG (their query gave no gradient)
    for loss in ("lambdarank", "approxndcg", "neuralndcg"):
        with pytest.raises(ValueError, match="float32: labels up to 100"):
            LambdaRank(hidden=(4,), n_estimators=1, loss=loss, random_state=0).fit(X, np.where(y > 1, 127.0, y), qid=qid)
        top = LambdaRank(hidden=(4,), n_estimators=2, loss=loss, random_state=0).fit(X, np.where(y > 1, 100.0, y), qid=qid)
        assert np.isfinite(top.train_loss_).all() and top.train_loss_[0] != 0
    # ERR's top grade of the lambdas is the training labels': an evaluation set's higher grade
    # (which max_grade_, the metric's, takes) does not change the model
    Xv, qv = rng.normal(size=(12, 4)).astype(np.float32), np.repeat(np.arange(2), 6)
    yv = np.array([4.0, 1, 2, 0, 1, 2] * 2)
    kw = dict(hidden=(8,), n_estimators=3, lambda_metric="err", random_state=0, n_networks=1, early_stopping_rounds=None)
    with_vali = LambdaRank(**kw).fit(X, y, qid=qid, eval_set=[(Xv, yv, qv)])
    alone = LambdaRank(**{**kw, "n_estimators": with_vali.best_iteration_}).fit(X, y, qid=qid)  # the epochs it kept
    assert with_vali.max_grade_ == 4.0 and alone.max_grade_ == 2.0
    np.testing.assert_array_equal(with_vali.predict(X), alone.predict(X))
