"""Pointwise squared error: gradients by hand, and the Newton leaf is the mean residual."""

from __future__ import annotations

import numpy as np

from ranklearn.objectives.squared_error import SquaredErrorObjective


def test_gradients_by_hand():
    scores = np.array([0.5, -1.0, 2.0, 0.0])
    y = np.array([1.0, 0.0, 2.0, 3.0])
    g, h = SquaredErrorObjective().gradients(scores, y, np.array([0, 2, 4]))
    np.testing.assert_array_equal(g, [-0.5, -1.0, 0.0, -3.0])
    np.testing.assert_array_equal(h, [1.0, 1.0, 1.0, 1.0])


def test_fills_given_arrays_and_its_newton_step_is_the_mean_residual():
    rng = np.random.default_rng(0)
    scores, y = rng.normal(size=20), rng.integers(0, 5, 20).astype(float)
    grad, hess = np.full(20, np.nan), np.full(20, np.nan)
    out = SquaredErrorObjective().gradients(scores, y, np.array([0, 20]), grad, hess)
    assert out[0] is grad and out[1] is hess
    # one leaf holding every document moves each score by -G/H = mean(y - s)
    assert np.isclose(-grad.sum() / hess.sum(), np.mean(y - scores), rtol=1e-14)
