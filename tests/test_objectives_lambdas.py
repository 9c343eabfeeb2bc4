"""LambdaObjective: lambda gradients against a brute-force O(n^2) reference and the seed's RankLib
table; lambda_metric parsing; labels the swap change cannot weigh."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ranklearn.objectives.lambdas import LambdaObjective, parse_lambda_metric


# ---- independent reference: recompute Z on the swapped ranking for every pair -------------
def _ndcg(labels_in_rank_order, k, linear=False):
    def dcg(ls):
        return sum((l if linear else 2.0**l - 1) / math.log2(r + 2) for r, l in enumerate(ls[:k]))

    ideal = dcg(sorted(labels_in_rank_order, reverse=True))
    return dcg(labels_in_rank_order) / ideal if ideal > 0 else 0.0


def _err(labels_in_rank_order, k, max_grade):
    p, out = 1.0, 0.0
    for r, l in enumerate(labels_in_rank_order[:k]):
        rel = (2.0**l - 1) / 2.0**max_grade
        out += p * rel / (r + 1)
        p *= 1 - rel
    return out


def _ap(labels_in_rank_order):
    n_rel = sum(1 for l in labels_in_rank_order if l > 0)
    if n_rel == 0:
        return 0.0
    hits, s = 0, 0.0
    for r, l in enumerate(labels_in_rank_order):
        if l > 0:
            hits += 1
            s += hits / (r + 1)
    return s / n_rel


def brute_force(scores, labels, z, k, sigma, truncation, max_grade, linear=False):
    n = len(scores)
    order = sorted(range(n), key=lambda i: -scores[i])  # Python's sort is stable: ties in input order
    pos = {d: r for r, d in enumerate(order)}
    kk = n if k is None else k

    def z_of(rank):
        ls = [labels[d] for d in rank]
        if z == "ndcg":
            return _ndcg(ls, kk, linear)
        if z == "err":
            return _err(ls, kk, max_grade)
        if z == "map":
            return _ap(ls)
        return 0.0

    base = z_of(order)
    g = np.zeros(n)
    h = np.zeros(n)
    for i in range(n):
        for j in range(n):
            if labels[i] <= labels[j]:
                continue
            if truncation is not None and min(pos[i], pos[j]) >= truncation:
                continue
            if z == "none":
                delta = 1.0
            else:
                swapped = list(order)
                swapped[pos[i]], swapped[pos[j]] = j, i
                delta = abs(z_of(swapped) - base)
            rho = 1.0 / (1.0 + math.exp(sigma * (scores[i] - scores[j])))
            lam = -sigma * rho * delta
            g[i] += lam
            g[j] -= lam
            h[i] += sigma * sigma * rho * (1 - rho) * delta
            h[j] += sigma * sigma * rho * (1 - rho) * delta
    return g, h


CASES = [
    ("ndcg", 10, None),
    ("ndcg", 3, None),
    ("ndcg", None, None),
    ("ndcg", None, 4),
    ("err", 10, None),
    ("err", 4, None),
    ("err", None, 3),
    ("map", None, None),
    ("map", None, 5),
    ("none", None, None),
    ("none", None, 2),
]


@pytest.mark.parametrize("z,k,trunc", CASES)
def test_gradients_match_brute_force(z, k, trunc):
    rng = np.random.default_rng(7)
    for trial in range(25):
        n = int(rng.integers(2, 14))
        labels = rng.integers(0, 5, n).astype(float)
        # coarse scores give ties, which both sides must break in input order
        scores = np.round(rng.normal(size=n), 1 if trial % 2 else 3)
        sigma = float(rng.choice([0.5, 1.0, 2.0]))
        obj = LambdaObjective(z=z, k=k, sigma=sigma, truncation=trunc, max_grade=4.0)
        g, h = obj.gradients(scores, labels, np.array([0, n]))
        rg, rh = brute_force(list(scores), list(labels), z, k, sigma, trunc, 4.0)
        np.testing.assert_allclose(g, rg, atol=1e-12, rtol=1e-9)
        np.testing.assert_allclose(h, rh, atol=1e-12, rtol=1e-9)


def test_seed_ranklib_lambda_table():
    """Seed 001, query 1830: all scores 0, sigma 1; RankLib prints -g (its sign: positive = up)."""
    labels = np.array([0, 0, 0, 1, 1, 0, 1, 1, 0, 0], dtype=float)
    g, h = LambdaObjective("ndcg", k=10).gradients(np.zeros(10), labels, np.array([0, 10]))
    expected = [-0.495, -0.206, -0.104, 0.231, 0.231, -0.033, 0.240, 0.247, -0.051, -0.061]
    np.testing.assert_allclose(-g, expected, atol=5e-4)
    # with all scores equal rho = 1/2, so every hessian term is |ΔNDCG| / 4 = |lambda_ij| / 2
    assert np.all(h > 0)


def test_many_queries_in_parallel_equal_one_by_one():
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 30, 40)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    labels = rng.integers(0, 3, ptr[-1]).astype(float)
    scores = rng.normal(size=ptr[-1])
    obj = LambdaObjective("ndcg", k=10)
    g, h = obj.gradients(scores, labels, ptr)
    for q in range(len(sizes)):
        s, e = ptr[q], ptr[q + 1]
        gq, hq = obj.gradients(scores[s:e], labels[s:e], np.array([0, e - s]))
        np.testing.assert_array_equal(g[s:e], gq)
        np.testing.assert_array_equal(h[s:e], hq)


@pytest.mark.parametrize("z", ["ndcg", "err", "map", "none"])
def test_degenerate_queries_give_zero_not_nan(z):
    # one document; a single label; no relevant document; huge score gaps
    labels = np.array([2.0, 1, 1, 1, 0, 0, 0, 3, 0])
    ptr = np.array([0, 1, 4, 7, 9])
    scores = np.array([0.0, 1, 2, 3, 4, 5, 6, 1e6, -1e6])
    g, h = LambdaObjective(z=z, k=10, max_grade=3).gradients(scores, labels, ptr)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
    np.testing.assert_array_equal(g[:7], 0.0)
    np.testing.assert_array_equal(h[:7], 0.0)


@pytest.mark.parametrize("z", ["ndcg", "err", "map", "none"])
def test_unweighted_lambdas_sum_to_zero_per_query(z):
    rng = np.random.default_rng(11)
    ptr = np.array([0, 7, 20, 45])
    labels = rng.integers(0, 5, 45).astype(float)
    g, _ = LambdaObjective(z=z, k=5, max_grade=4).gradients(rng.normal(size=45), labels, ptr)
    for q in range(3):
        assert abs(g[ptr[q] : ptr[q + 1]].sum()) < 1e-12


def test_continuous_and_many_level_labels():
    rng = np.random.default_rng(5)
    labels = rng.uniform(0, 60, 12)  # > 31 levels, continuous
    scores = rng.normal(size=12)
    for gain, linear in (("linear", True), ("exp2", False)):
        g, h = LambdaObjective("ndcg", k=None, gain=gain).gradients(scores, labels, np.array([0, 12]))
        rg, rh = brute_force(list(scores), list(labels), "ndcg", None, 1.0, None, 1.0, linear)
        np.testing.assert_allclose(g, rg, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(h, rh, rtol=1e-9, atol=1e-300)


def _lightgbm_normalized_reference(scores, labels):
    """LightGBM's lambdarank_norm written out pair by pair (one query, NDCG over the whole list)."""
    n = len(labels)
    ideal = sum((2.0**l - 1) / math.log2(r + 2) for r, l in enumerate(sorted(labels, reverse=True)))
    order = list(np.argsort(-scores, kind="stable"))
    by_distance = scores.max() != scores.min()
    g, h, total = np.zeros(n), np.zeros(n), 0.0
    for a in range(n):
        for b in range(a + 1, n):
            i, j = order[a], order[b]
            if labels[i] == labels[j]:
                continue
            hi, lo = (i, j) if labels[i] > labels[j] else (j, i)
            delta = abs((2.0 ** labels[i] - 2.0 ** labels[j]) * (1 / math.log2(a + 2) - 1 / math.log2(b + 2))) / ideal
            if by_distance:
                delta /= 0.01 + abs(scores[i] - scores[j])
            rho = 1 / (1 + math.exp(scores[hi] - scores[lo]))
            g[hi] -= rho * delta
            g[lo] += rho * delta
            h[hi] += rho * (1 - rho) * delta
            h[lo] += rho * (1 - rho) * delta
            total += 2 * rho * delta
    factor = math.log2(1 + total) / total
    return g * factor, h * factor


@pytest.mark.parametrize("scores", [[0.3, 0.1, -0.2, 0.5, 0.0], [0.0] * 5, [2.0, -1.0, 0.5, 0.5, 7.0]])
def test_normalization_follows_lightgbm(scores):
    labels = np.array([0, 1, 2, 0, 3.0])
    scores = np.array(scores)
    g, h = LambdaObjective("ndcg", k=None, normalize=True, distance_weight=True).gradients(
        scores, labels, np.array([0, 5])
    )
    rg, rh = _lightgbm_normalized_reference(scores, labels)
    np.testing.assert_allclose(g, rg, rtol=1e-12)
    np.testing.assert_allclose(h, rh, rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [{"z": "ndcgx"}, {"k": 0}, {"sigma": 0}, {"truncation": 0}, {"gain": "cubic"}],
)
def test_bad_parameters_are_named(kwargs):
    with pytest.raises(ValueError):
        LambdaObjective(**kwargs)


@pytest.mark.parametrize(
    "lambda_metric,metric,expected",
    [
        (None, "ndcg@10", ("ndcg", 10)),
        (None, "err@5", ("err", 5)),
        (None, "map", ("map", None)),
        (None, "p@5", ("ndcg", 5)),  # P@k has no swap change: NDCG at the same depth
        (None, "rr@3", ("ndcg", 3)),
        ("ERR@7", "ndcg@10", ("err", 7)),
        ("none", "ndcg@10", ("none", None)),
    ],
)
def test_lambda_metric_defaults_to_the_evaluation_metric(lambda_metric, metric, expected):
    assert parse_lambda_metric(lambda_metric, metric) == expected


@pytest.mark.parametrize("spec,match", [("p@5", "one of ndcg@k"), ("ndcg@x", "bad cut-off"), ("ndcg@0", "positive")])
def test_bad_lambda_metric_is_named(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_lambda_metric(spec, "ndcg@10")


@pytest.mark.parametrize(
    "z,gain,labels,match",
    [
        ("ndcg", "exp2", [0.0, -1.0], "labels must be >= 0 for ndcg lambdas"),
        ("map", "linear", [2.0, -0.5], "labels must be >= 0 for map lambdas"),
        ("ndcg", "exp2", [0.0, 1001.0], "label 1001 overflows"),
        ("err", "linear", [0.0, 1001.0], "label 1001 overflows"),
    ],
)
def test_prepare_refuses_labels_the_swap_change_cannot_weigh(z, gain, labels, match):
    with pytest.raises(ValueError, match=match):
        LambdaObjective(z, gain=gain).prepare(np.array(labels))


def test_prepare_accepts_what_the_objective_can_weigh():
    LambdaObjective("none").prepare(np.array([-3.0, 5000.0]))  # plain RankNet: any labels
    obj = LambdaObjective("ndcg", gain="linear")
    obj.prepare(np.array([0.0, 1001.0]))
    assert obj.max_grade == 1001.0
