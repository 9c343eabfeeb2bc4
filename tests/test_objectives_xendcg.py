"""XE-NDCG: LightGBM's gradients against a brute-force reference with the same draws, the
paper's loss by finite differences, the seeding, and tree quality next to LightGBM's rank_xendcg."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp, softmax

from ranklearn.objectives.xendcg import XENDCGObjective, xendcg_gradients


def _reference(scores, labels, gammas):
    """One query, loops written out: rho, phi, and LightGBM's three terms with explicit j != i sums."""
    n = len(scores)
    rho = softmax(scores)
    phi = 2.0**labels - gammas
    t = rho - phi / phi.sum()
    second = np.array([rho[i] * sum(t[j] / (1 - rho[j]) for j in range(n) if j != i) for i in range(n)])
    third = np.array([rho[i] * sum(second[j] / (1 - rho[j]) for j in range(n) if j != i) for i in range(n)])
    return t + second + third, rho * (1 - rho)


def _queries(seed, n_queries=30):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 25, n_queries)
    ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, 5, ptr[-1]).astype(float)
    s = rng.normal(scale=2.0, size=ptr[-1])
    return s, y, ptr


def test_gradients_match_the_reference_with_the_same_draws():
    s, y, ptr = _queries(0)
    obj = XENDCGObjective(random_state=42)
    obj.prepare(y, ptr)
    g, h = obj.gradients(s, y, ptr)
    # the draws: one generator seeded once per fit, every row's gamma in row order
    gammas = np.random.default_rng(obj.seed_).random(len(s))
    for q in range(len(ptr) - 1):
        a, b = ptr[q], ptr[q + 1]
        if b - a == 1:
            assert g[a] == 0.0 and h[a] == 0.0  # a lone document has nothing to be ranked against
            continue
        rg, rh = _reference(s[a:b], y[a:b], gammas[a:b])
        np.testing.assert_allclose(g[a:b], rg, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(h[a:b], rh, rtol=1e-12, atol=1e-15)


def test_first_term_and_hessian_are_the_papers_loss_derivatives():
    rng = np.random.default_rng(1)
    s, y, gam = rng.normal(size=8), rng.integers(0, 4, 8).astype(float), rng.random(8)
    phi = 2.0**y - gam

    def loss(x):  # -sum_i phi_i / sum phi * log softmax(x)_i
        return -np.sum(phi / phi.sum() * (x - logsumexp(x)))

    eps = 1e-5
    num_g = np.array([(loss(s + eps * e) - loss(s - eps * e)) / (2 * eps) for e in np.eye(8)])
    num_h = np.array([(loss(s + eps * e) - 2 * loss(s) + loss(s - eps * e)) / eps**2 for e in np.eye(8)])
    rho = softmax(s)
    np.testing.assert_allclose(rho - phi / phi.sum(), num_g, atol=1e-8)
    g, h = np.empty(8), np.empty(8)
    xendcg_gradients(s, y, np.array([0, 8]), gam, g, h)
    np.testing.assert_allclose(h, num_h, atol=1e-4)


def test_a_document_with_all_the_probability_gives_finite_values():
    g, h = np.empty(3), np.empty(3)
    xendcg_gradients(np.array([1000.0, 0.0, -5.0]), np.array([0.0, 2.0, 1.0]), np.array([0, 3]), np.full(3, 0.5), g, h)
    # the limit as rho_0 -> 1: t_0 (1 - rho_0) -> 0 for the top document; t_j = -phi_j / sum phi for the rest
    np.testing.assert_allclose(g, [0.0, -3.5 / 5.5, -1.5 / 5.5], atol=1e-12)
    np.testing.assert_array_equal(h, [0.0, 0.0, 0.0])


def test_draws_are_seeded_per_fit_and_fresh_every_iteration():
    s, y, ptr = _queries(2)
    a, b = XENDCGObjective(random_state=7), XENDCGObjective(random_state=7)
    a.prepare(y, ptr)
    b.prepare(y, ptr)
    g1, _ = a.gradients(s, y, ptr)
    np.testing.assert_array_equal(g1, b.gradients(s, y, ptr)[0])
    g2, _ = a.gradients(s, y, ptr)
    assert not np.array_equal(g1, g2)  # a new iteration draws new gammas
    a.prepare(y, ptr)  # a new fit starts the same draws again
    np.testing.assert_array_equal(a.gradients(s, y, ptr)[0], g1)
    c = XENDCGObjective(random_state=8)
    c.prepare(y, ptr)
    assert not np.array_equal(c.gradients(s, y, ptr)[0], g1)
    assert a.get_params() == {"name": "xendcg", "seed": a.seed_}


@pytest.mark.parametrize("bad", [-1.0, 1001.0])
def test_labels_outside_the_gain_range_are_refused(bad):
    with pytest.raises(ValueError, match=r"'xendcg'.*got " + f"{bad:g}"):
        XENDCGObjective().prepare(np.array([0.0, bad]), np.array([0, 2]))


def _boost(objective, binned, n_bins, y, ptr, n_trees, lr):
    """A plain boosting loop on TreeGrower (not LambdaMART): scores += lr * tree."""
    from ranklearn.tree.grower import TreeGrower
    from ranklearn.tree.predictor import TreePredictor

    objective.prepare(y, ptr)
    scores = np.zeros(len(y))
    trees = []
    for _ in range(n_trees):
        g, h = objective.gradients(scores, y, ptr)
        tree, _, _ = TreeGrower(binned, n_bins, g, h, num_leaves=31, min_samples_leaf=20).grow()
        tree.value *= lr
        TreePredictor([tree]).predict_binned(binned, scores)
        trees.append(tree)
    return TreePredictor(trees)


@pytest.mark.slow
def test_trees_on_xendcg_rank_as_well_as_lightgbm_rank_xendcg():
    lgb = pytest.importorskip("lightgbm")
    from ranklearn.datasets import make_ranking_splits
    from ranklearn.metrics import get_metric
    from ranklearn.tree.binning import BinMapper

    train, _, test = make_ranking_splits((300, 10, 200), n_features=20, random_state=0)
    mapper = BinMapper(255).fit(train.X)
    model = _boost(
        XENDCGObjective(random_state=0), mapper.transform(train.X), mapper.n_bins_, train.y, train.ptr, 60, 0.1
    )
    ndcg = get_metric("ndcg@10")
    ours = ndcg.mean(test.y, model.predict_binned(mapper.transform(test.X)), test.ptr)
    ranker = lgb.LGBMRanker(
        objective="rank_xendcg", n_estimators=60, learning_rate=0.1, num_leaves=31, min_child_samples=20,
        min_child_weight=1e-3, reg_lambda=0.0, max_bin=255, random_state=0, n_jobs=1, verbose=-1,
    )
    ranker.fit(train.X, train.y, group=np.diff(train.ptr))
    theirs = ndcg.mean(test.y, ranker.predict(test.X), test.ptr)
    print(f"test NDCG@10: ranklearn xendcg {ours:.4f}, LightGBM rank_xendcg {theirs:.4f}")
    assert ours > theirs - 0.02
    assert ours > 0.6
