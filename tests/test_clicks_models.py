"""Click models' closed forms against hand-computed values and a brute force over every click pattern."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ranklearn.clicks import DCM, PBM, UBM, Cascade, TrustBias
from ranklearn.clicks.models import theta_base

REL = np.array([1.0, 0.0, 1 / 3, 1.0, 0.0])  # (2^y - 1)/(2^2 - 1) for y = 2, 0, 1, 2, 0


def pattern_probability(model, relevance, clicks, k=0, last=0, reading=True):
    """P(this exact click vector from rank k + 1 on) by the model's definition, rank by rank (the
    reference): ``last`` is the last clicked rank, ``reading`` whether a cascade user reads on."""
    if k == len(relevance):
        return 1.0
    a = model.epsilon + (1 - model.epsilon) * relevance[k]
    if isinstance(model, UBM):
        p = model.gamma_matrix(len(relevance))[k, k - last] * a
    else:
        p = a if reading else 0.0
    if not clicks[k]:
        return (1 - p) * pattern_probability(model, relevance, clicks, k + 1, last, reading)
    if isinstance(model, UBM):
        return p * pattern_probability(model, relevance, clicks, k + 1, k + 1, True)
    lam = 0.0 if isinstance(model, Cascade) else np.broadcast_to(model.continuation, len(relevance))[k]
    return p * sum(w * pattern_probability(model, relevance, clicks, k + 1, k + 1, go)
                   for go, w in ((True, lam), (False, 1 - lam)))  # fmt: skip


def test_theta_base_is_the_literatures_and_decays_past_10():
    t = theta_base(12)
    assert t[:10].tolist() == [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06]
    assert t[10:] == pytest.approx([0.06 * 10 / 11, 0.06 * 10 / 12])
    assert PBM(eta=2).examination(3) == pytest.approx([0.68**2, 0.61**2, 0.48**2])


def test_pbm_closed_form_by_hand():
    got = PBM(eta=1, epsilon=0.1).click_probabilities(REL)
    a = 0.1 + 0.9 * REL
    assert got == pytest.approx([0.68 * a[0], 0.61 * a[1], 0.48 * a[2], 0.34 * a[3], 0.28 * a[4]])


def test_cascade_closed_form_by_hand():
    a = 0.1 + 0.9 * REL
    got = Cascade(epsilon=0.1).click_probabilities(REL)
    assert got[0] == pytest.approx(a[0]) and got[1] == pytest.approx((1 - a[0]) * a[1])
    assert got[2] == pytest.approx((1 - a[0]) * (1 - a[1]) * a[2])


def test_trust_bias_closed_form_by_hand():
    got = TrustBias(eta=1).click_probabilities(REL)
    k = np.arange(1, 6)
    plus, minus = 1 - (k + 1) / 100, 0.65 / k
    assert got == pytest.approx(theta_base(5) * (plus * REL + minus * (1 - REL)))


@pytest.mark.parametrize(
    "model",
    [Cascade(epsilon=0.2), DCM(continuation=[0.9, 0.5, 0.3, 0.7, 0.2], epsilon=0.1), DCM(continuation=0.0),
     UBM(eta=1, epsilon=0.1), UBM(eta=0.5, epsilon=0.3, gamma=np.random.default_rng(0).random((5, 5)))],
    ids=["cascade", "dcm", "dcm-no-continuation", "ubm", "ubm-gamma"],
)  # fmt: skip
def test_closed_forms_equal_the_sum_over_every_click_pattern(model):
    n = len(REL)
    marginal = np.zeros(n)
    total = 0.0
    for clicks in itertools.product([0, 1], repeat=n):
        p = pattern_probability(model, REL, clicks)
        total += p
        marginal += p * np.array(clicks)
    assert total == pytest.approx(1.0)
    assert model.click_probabilities(REL) == pytest.approx(marginal, abs=1e-12)


def test_dcm_without_continuation_is_the_cascade():
    assert DCM(continuation=0.0, epsilon=0.1).click_probabilities(REL) == pytest.approx(
        Cascade(epsilon=0.1).click_probabilities(REL)
    )


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: PBM(eta=-1), "eta must be"),
        (lambda: PBM(epsilon=1.5), "epsilon must be a probability"),
        (lambda: DCM(continuation=2.0), "continuation must hold probabilities"),
        (lambda: PBM(theta=[0.5, 0.4]).examination(3), "theta needs a value for each of the 3 ranks"),
        (lambda: UBM(gamma=np.ones((2, 2))).gamma_matrix(3), r"gamma must have shape \(3, 3\)"),
    ],
)
def test_bad_parameters_are_named(make, message):
    with pytest.raises(ValueError, match=message):
        make()
