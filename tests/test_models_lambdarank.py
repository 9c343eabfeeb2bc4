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
        LambdaRank(hidden=(4,), epochs=2, random_state=0).fit(X, y, qid=qid)
    # RankNet only compares labels: it trains and predicts finite scores
    assert np.isfinite(RankNet(hidden=(4,), epochs=2, random_state=0).fit(X, y, qid=qid).predict(X)).all()
