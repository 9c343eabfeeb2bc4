"""estimate_propensity recovers a simulated PBM's theta_k / theta_1 at ranks 1-10 (swap, RandPair, EM, regression
EM, harvesting) within 5 bootstrap standard errors, themselves bounded by the binomial error of the clicks per rank."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.clicks import PBM, ClickLog, ClickTrainingSet, estimate_propensity, simulate
from ranklearn.clicks.models import theta_base
from ranklearn.data import from_arrays

THETA = theta_base(10) / theta_base(10)[0]


@pytest.fixture(scope="module")
def data():
    """20 queries of 10 documents (many impressions per query-document: EM's relevances are then
    well estimated), labels 0-2, and four logging rankers (noisy labels)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200).astype(float)
    ds = from_arrays(rng.normal(size=(200, 2)), y, np.repeat(np.arange(20), 10))
    return ds, np.stack([y + rng.normal(size=200) for _ in range(4)])


def binomial_se(log, pivot=1):
    """Standard error of a click-rate ratio of rank k to rank 1 from the clicks at each rank; through a
    RandPair pivot P, (p_k / p_P) / (p_1 / p_P) adds the pivot's clicks twice."""
    clicks = np.bincount(log.position, weights=log.click, minlength=11)[1:11]
    return THETA * np.sqrt(1 / clicks + 1 / clicks[0] + (2 / clicks[pivot - 1] if pivot > 1 else 0))


def check_recovers_theta(p, log, pivot=1):
    assert p.propensity[0] == 1.0 and p.propensity.shape == (10,) and p.interval.shape == (10, 2)
    bound = binomial_se(log, pivot)
    assert np.all(p.stderr[1:] <= 5 * bound[1:]), (p.stderr, bound)  # the bootstrap is not blown up
    assert np.all(np.abs(p.propensity - THETA) <= 5 * p.stderr + 1e-12), (p.propensity, THETA, p.stderr)
    assert np.all((p.interval[:, 0] <= p.propensity + 1e-12) & (p.propensity <= p.interval[:, 1] + 1e-12))
    assert np.all(np.abs(p.propensity - THETA) / THETA < 0.2)  # and close in plain terms at this size


def test_swap_interventions_recover_theta(data):
    ds, scores = data
    log = simulate(ds, scores[0], PBM(), n_sessions=30_000, seed=1, intervention="swap")
    check_recovers_theta(estimate_propensity(log, "swap", n_bootstrap=50), log)


@pytest.mark.parametrize("pivot", [3, 6])
def test_randpair_recovers_theta(data, pivot):
    """RandPair (Wang et al. 2018): the pivot trades places with a uniform rank; p_k / p_pivot from each
    swap, divided by p_1 / p_pivot."""
    ds, scores = data
    log = simulate(ds, scores[0], PBM(), n_sessions=40_000, seed=4, intervention="randpair", pivot=pivot)
    check_recovers_theta(estimate_propensity(log, "swap", n_bootstrap=50), log, pivot)


def test_randpair_estimate_by_hand():
    # pivot 2; controls 0, 1 (clicks 1 1 0 and 0 1 1); sessions 2, 3 swap ranks 2 and 1 (clicks 1 0 0, 1 0 1);
    # sessions 4, 5 swap ranks 2 and 3 (clicks 0 0 1, 0 1 0). p_1 / p_2 = (2/2 + 1/2) / (2/2 + 0/2) = 1.5,
    # p_3 / p_2 = (1/2 + 1/2) / (2/2 + 1/2) = 2/3; relative to rank 1: 1, 1 / 1.5, (2/3) / 1.5
    clicks = [1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0]
    log = ClickLog.from_arrays(
        query=[0] * 18, session=np.repeat(np.arange(6), 3), document=[0, 1, 2] * 6, position=[1, 2, 3] * 6,
        click=clicks, swap=np.repeat([2, 2, 1, 1, 3, 3], 3), pivot=[2] * 18,
    )  # fmt: skip
    p = estimate_propensity(log, "swap", n_bootstrap=0)
    np.testing.assert_allclose(p.propensity, [1.0, 1 / 1.5, (2 / 3) / 1.5], rtol=1e-12)
    mixed = ClickLog.from_arrays(query=[0] * 4, session=[0, 0, 1, 1], document=[0, 1] * 2, position=[1, 2] * 2,
                                 click=[0] * 4, swap=[1, 1, 2, 2], pivot=[1, 1, 2, 2])  # fmt: skip
    with pytest.raises(ValueError, match=r"reads one pivot rank per log; this log holds pivots \[1, 2\]"):
        estimate_propensity(mixed, "swap")


def test_em_recovers_theta_from_plackett_luce_logging(data):
    ds, scores = data
    log = simulate(ds, scores[0], PBM(), n_sessions=30_000, seed=2, temperature=1.0)
    check_recovers_theta(estimate_propensity(log, "em", n_bootstrap=30), log)


def test_regression_em_recovers_theta_under_deterministic_logging():
    """One deterministic logging ranker: every query-document is shown at one rank, so EM with a
    relevance per query-document cannot tell rank from relevance (its estimate is far off), but
    relevance as a regression on features (here the grade's one-hot, beside two noise features)
    shares it across documents shown at different ranks and recovers theta."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 1000).astype(float)
    X = np.column_stack([np.eye(3)[y.astype(int)], rng.normal(size=(1000, 2))])
    ds = from_arrays(X, y, np.repeat(np.arange(100), 10))
    log = simulate(ds, y + rng.normal(size=1000), PBM(), n_sessions=30_000, seed=2)
    estimate = estimate_propensity(log, "regression_em", dataset=ds, n_bootstrap=10)
    check_recovers_theta(estimate, log)
    rows = ClickTrainingSet.per_session(log, ds)  # the protocol's training rows carry the features
    from_rows = estimate_propensity(rows, "regression_em", n_bootstrap=0).propensity
    np.testing.assert_allclose(from_rows, estimate.propensity, rtol=1e-6)
    # distinct sessions merged with their counts (the protocol's training rows) are those sessions
    merged = ClickTrainingSet.per_pattern(log, ds)
    assert merged.y.size < rows.y.size / 2
    from_merged = estimate_propensity(merged, "regression_em", n_bootstrap=0)
    np.testing.assert_allclose(from_merged.propensity, estimate.propensity, rtol=1e-4)
    assert from_merged.n_sessions == estimate.n_sessions == 30_000
    per_document = estimate_propensity(log, "em", n_bootstrap=0).propensity
    assert np.max(np.abs(per_document - THETA) / THETA) > 0.3
    with pytest.raises(ValueError, match="needs dataset="):
        estimate_propensity(log, "regression_em")
    # the boosted trees' M-step (Wang et al.'s) and a classifier of the user's recover it too
    from sklearn.linear_model import LogisticRegression

    for model in ("gbdt", LogisticRegression(C=10.0)):
        check_recovers_theta(estimate_propensity(log, "regression_em", dataset=ds, n_bootstrap=5,
                                                 relevance_model=model), log)  # fmt: skip
    for bad in ("trees", object()):
        with pytest.raises(ValueError, match="relevance_model must be one of"):
            estimate_propensity(log, "regression_em", dataset=ds, relevance_model=bad)


def test_harvesting_recovers_theta_across_logging_rankers(data):
    ds, scores = data
    log = simulate(ds, scores, PBM(), n_sessions=30_000, seed=3)
    check_recovers_theta(estimate_propensity(log, "harvest", n_bootstrap=30), log)


def test_swap_estimate_by_hand():
    # control sessions 0, 1 (clicks at ranks 1 and 2), sessions 2, 3 swapping ranks 1 and 2 (a click at rank 2):
    # (1/2 at rank 2 of the swaps + 1/2 at rank 2 of the controls) / (1/2 at rank 1 of the controls + 0)
    log = ClickLog.from_arrays(
        query=[0] * 8, session=[0, 0, 1, 1, 2, 2, 3, 3], document=[0, 1] * 4, position=[1, 2] * 4,
        click=[1, 0, 0, 1, 0, 1, 0, 0], swap=[1, 1, 1, 1, 2, 2, 2, 2],
    )  # fmt: skip
    p = estimate_propensity(log, "swap", n_bootstrap=0)
    assert p.propensity.tolist() == [1.0, 2.0] and np.isnan(p.interval).all() and p.n_sessions == 4


def test_bootstrap_is_seeded(data):
    ds, scores = data
    log = simulate(ds, scores[0], PBM(), n_sessions=2000, seed=1, intervention="swap")
    a = estimate_propensity(log, "swap", n_bootstrap=20, seed=5)
    b = estimate_propensity(log, "swap", n_bootstrap=20, seed=5)
    c = estimate_propensity(log, "swap", n_bootstrap=20, seed=6)
    assert np.array_equal(a.interval, b.interval) and not np.array_equal(a.interval, c.interval)
    narrow = estimate_propensity(log, "swap", n_bootstrap=20, seed=5, confidence=0.5)
    assert np.all(narrow.interval[1:, 1] - narrow.interval[1:, 0] <= a.interval[1:, 1] - a.interval[1:, 0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(method="ips"), "method must be one of"),
        (dict(method="swap"), "needs a log with swap interventions"),
        (dict(max_rank=0), "max_rank must be"),
        (dict(confidence=1.0), "confidence must be in"),
        (dict(n_bootstrap=-1), "n_bootstrap must be"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    log = ClickLog.from_arrays(query=[0, 0], session=[0, 0], document=[0, 1], position=[1, 2], click=[1, 0])
    with pytest.raises(ValueError, match=message):
        estimate_propensity(log, **kwargs)


def test_an_empty_log_is_refused():
    empty = ClickLog.from_arrays(query=[], session=[], document=[], position=[], click=[])
    with pytest.raises(ValueError, match="the click log is empty"):
        estimate_propensity(empty, "em")


def test_merged_sessions_bootstrap_as_the_sessions_they_stand_for(data):
    """A distinct session counted c times is resampled as c sessions (Poisson(c) draws): its
    bootstrap error is the per-session log's, not that of one session per pattern; a weight that
    differs between the rows of one session is refused."""
    ds, scores = data
    log = simulate(ds, scores[0], PBM(), n_sessions=20_000, seed=4)
    rows, merged = ClickTrainingSet.per_session(log, ds), ClickTrainingSet.per_pattern(log, ds)
    a = estimate_propensity(rows, "regression_em", n_bootstrap=30, seed=1)
    b = estimate_propensity(merged, "regression_em", n_bootstrap=30, seed=1)
    np.testing.assert_allclose(b.propensity, a.propensity, rtol=1e-4)
    assert np.all((b.stderr[1:] > a.stderr[1:] / 2) & (b.stderr[1:] < a.stderr[1:] * 2)), (a.stderr, b.stderr)
    w = merged.sample_weight.copy()
    w[1] += 1.0
    bad = ClickTrainingSet(merged.X, merged.y, merged.qid, w, merged.position, merged.document)
    with pytest.raises(ValueError, match=r"one count per session \(qid\).*on row 1 and"):
        estimate_propensity(bad, "regression_em", n_bootstrap=0)
