"""Significance tests: scipy's p-values, exact enumeration, Holm by hand, compare's bookkeeping."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from ranklearn.stats import (
    bootstrap_interval,
    compare,
    holm_bonferroni,
    paired_t_test,
    randomization_test,
    wilcoxon_test,
)


def pair(n, seed=0, shift=0.05):
    rng = np.random.default_rng(seed)
    b = rng.random(n)
    return np.clip(b + shift + rng.normal(0, 0.2, n), 0, 1), b


def brute_force_p(a, b):
    d = np.asarray(a) - np.asarray(b)
    observed = abs(d.sum())
    flips = [abs((np.array(signs) * d).sum()) >= observed - 1e-12 for signs in itertools.product([1, -1], repeat=d.size)]
    return sum(flips) / len(flips)


def test_t_and_wilcoxon_equal_scipy():
    a, b = pair(60)
    assert paired_t_test(a, b) == sps.ttest_rel(a, b).pvalue
    assert wilcoxon_test(a, b) == sps.wilcoxon(a, b).pvalue
    # no difference at all: scipy has no p-value (NaN / error); no evidence means p = 1
    assert paired_t_test(a, a) == 1.0 and wilcoxon_test(a, a) == 1.0


@pytest.mark.parametrize("n", [1, 5, 9, 12])
def test_randomization_is_exact_enumeration_on_small_inputs(n):
    a, b = pair(n, seed=n, shift=0.1)
    a[0] = b[0]  # a zero difference, and (n = 12) ties among |differences| below
    if n == 12:
        a[1:4] = b[1:4] + 0.25
    assert randomization_test(a, b) == pytest.approx(brute_force_p(a, b), abs=1e-15)


def test_randomization_sampled_is_seeded_and_close_to_exact():
    a, b = pair(18, seed=3, shift=0.08)  # 2^18 > 10,000: sampled
    exact = brute_force_p(a, b)
    p = randomization_test(a, b, n_permutations=10_000, seed=7)
    assert p == randomization_test(a, b, n_permutations=10_000, seed=7)
    assert p != randomization_test(a, b, n_permutations=10_000, seed=8)
    assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / 10_000)


def test_a_sampled_randomization_p_counts_the_observed_assignment():
    # 40 queries all improved: no random flip of 100 reaches the sum, yet p is 1/101, not 0
    a, b = pair(40, seed=5, shift=5.0)
    assert np.all(a > b)
    assert randomization_test(a, b, n_permutations=100, seed=0) == pytest.approx(1 / 101, abs=1e-15)
    c = compare({"m": {"b": b, "a": a}}, n_permutations=100, n_resamples=100)
    assert c.results[0].randomization_p == pytest.approx(1 / 101, abs=1e-15) and not c.randomization_exact
    assert compare({"m": {"b": b[:6], "a": a[:6]}}, n_permutations=100, n_resamples=100).randomization_exact


def test_one_query_has_no_t_test_and_no_interval(recwarn):
    assert np.isnan(paired_t_test([0.5], [0.2]))
    assert np.isnan(paired_t_test([0.5, 0.7], [0.0, 0.2]))  # one nonzero difference twice: no variance either
    assert np.isnan(bootstrap_interval([0.5], [0.2])).all()
    (r,) = compare({"m": {"b": [0.2], "a": [0.5]}}).results
    assert np.isnan(r.t_p) and np.isnan(r.ci_low) and np.isnan(r.ci_high) and r.randomization_p == 1.0
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]  # scipy's divide by zero


def test_bootstrap_interval_agrees_with_scipy_percentile():
    a, b = pair(300, seed=4)
    low, high = bootstrap_interval(a, b, confidence=0.9, n_resamples=20_000, seed=1)
    ref = sps.bootstrap((a - b,), np.mean, confidence_level=0.9, n_resamples=20_000, method="percentile",
                        random_state=np.random.default_rng(2)).confidence_interval  # fmt: skip
    width = ref.high - ref.low
    assert low == pytest.approx(ref.low, abs=0.03 * width) and high == pytest.approx(ref.high, abs=0.03 * width)
    assert low < (a - b).mean() < high
    assert bootstrap_interval(a, b, seed=1) == bootstrap_interval(a, b, seed=1)


def test_holm_bonferroni_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01, max(0.03, 2 x 0.03), max(0.06, 1 x 0.04)
    assert holm_bonferroni([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm_bonferroni([0.6, 0.5]) == pytest.approx([1.0, 1.0])


def test_compare_reports_every_test_and_counts():
    base = np.array([0.5, 0.2, 0.9, 0.4, 0.0, 0.7])
    better = np.array([0.6, 0.2, 1.0, 0.3, 0.1, 0.9])
    worse = np.array([0.1, 0.2, 0.5, 0.4, 0.0, 0.3])
    per_query = {"ndcg@10": {"base": base, "better": better, "worse": worse},
                 "map": {"base": base, "better": base, "worse": worse}}  # fmt: skip
    c = compare(per_query, n_resamples=2000)
    assert c.systems == ["base", "better", "worse"] and c.baseline == "base"
    got = {(r.metric, r.system): r for r in c.results}
    r = got["ndcg@10", "better"]
    assert (r.wins, r.ties, r.losses) == (4, 1, 1)
    assert r.difference == pytest.approx((better - base).mean())
    assert r.t_p == paired_t_test(better, base) and r.wilcoxon_p == wilcoxon_test(better, base)
    assert r.randomization_p == pytest.approx(brute_force_p(better, base))  # 2^6 flips: exact
    # two comparisons per metric: Holm-adjusted p-values of that metric
    pair_p = [got["ndcg@10", s].t_p for s in ("better", "worse")]
    assert [got["ndcg@10", s].t_p_holm for s in ("better", "worse")] == pytest.approx(holm_bonferroni(pair_p))
    same = got["map", "better"]
    assert (same.wins, same.ties, same.losses, same.t_p, same.randomization_p) == (0, 6, 0, 1.0, 1.0)
    assert c.means["map"] == pytest.approx({"base": base.mean(), "better": base.mean(), "worse": worse.mean()})
    assert set(c.to_dict()) == {"systems", "baseline", "confidence", "permutations", "randomization_exact", "means", "tests"}


def test_compare_two_systems_equals_the_single_tests_and_drops_skipped_queries():
    a, b = pair(40, seed=5)
    a_nan = np.append(a, np.nan)
    b_nan = np.append(b, 0.3)
    c = compare({"m": {"b": b_nan, "a": a_nan}}, n_permutations=5000, seed=3, n_resamples=1000)
    (r,) = c.results
    assert r.n_queries == 40
    # a query no metric compares is no row of the flips: the same draws as without it
    assert r.randomization_p == randomization_test(a, b, n_permutations=5000, seed=3)
    # nor is it of this metric's test when another metric compares it
    two = compare({"m": {"b": b_nan, "a": a_nan}, "n": {"b": np.append(b, 0.1), "a": np.append(a, 0.2)}},
                  n_permutations=5000, seed=3, n_resamples=1000)  # fmt: skip
    assert two.results[0].randomization_p == r.randomization_p
    assert two.results[1].randomization_p == randomization_test(np.append(a, 0.2), np.append(b, 0.1),
                                                                n_permutations=5000, seed=3)  # fmt: skip
    (r2,) = compare({"m": {"b": b, "a": a}}, n_permutations=5000, seed=3, n_resamples=1000).results
    assert r2.randomization_p == randomization_test(a, b, n_permutations=5000, seed=3)
    assert r.randomization_p_holm == r.randomization_p  # one comparison: nothing to adjust
    assert (r.ci_low, r.ci_high) == bootstrap_interval(a, b, n_resamples=1000, seed=3)


def test_compare_rejects_bad_input():
    with pytest.raises(ValueError, match="at least two"):
        compare({"m": {"a": [1.0]}})
    with pytest.raises(ValueError, match="baseline 'c'"):
        compare({"m": {"a": [1.0], "b": [0.0]}}, baseline="c")
    with pytest.raises(ValueError, match="same length"):
        paired_t_test([1.0, 2.0], [1.0])


def test_mismatched_inputs_are_named():
    with pytest.raises(ValueError, match=r"metric 'm': the systems have values for different numbers of queries \{'b': 12, 'a': 11\}"):
        compare({"m": {"b": np.zeros(12), "a": np.zeros(11)}})
    with pytest.raises(ValueError, match="n_resamples must be >= 1, got 0"):
        bootstrap_interval([0.1, 0.2], [0.0, 0.1], n_resamples=0)


def test_queries_no_metric_compares_do_not_make_the_test_sampled():
    # 5 compared queries and 9 a run lacks (NaN everywhere): 2^5 assignments, exact, as without the 9
    a, b = pair(5, seed=2, shift=0.2)
    padded = {"m": {"b": np.append(b, [np.nan] * 9), "a": np.append(a, [np.nan] * 9)}}
    c = compare(padded, n_permutations=100)
    assert c.randomization_exact and c.results[0].n_queries == 5
    assert c.results[0].randomization_p == compare({"m": {"b": b, "a": a}}, n_permutations=100).results[0].randomization_p
    assert c.results[0].randomization_p == pytest.approx(brute_force_p(a, b), abs=1e-15)
    # and a metric comparing more queries (sampled) leaves this one exact
    more_a, more_b = pair(14, seed=4, shift=0.1)
    both = compare({**padded, "all": {"b": more_b, "a": more_a}}, n_permutations=100)
    skip, every = both.results
    assert skip.randomization_exact and skip.randomization_p == c.results[0].randomization_p
    assert not every.randomization_exact and not both.randomization_exact
