"""TreeSHAP kernels against the definitions: Shapley values and Shapley interaction values computed
over every feature subset, on random small trees (up to 6 features) with NaN and values exactly at
thresholds."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ranklearn.tree.tree import Tree
from ranklearn.tree.treeshap import TreeExplainer, node_counts


def _random_tree(rng, n_features, n_leaves):
    """Splits on random leaves; thresholds on the half-integer grid the rows are drawn from."""
    feature, thr, mleft, left, right = [-1], [0.0], [False], [-1], [-1]
    leaves = [0]
    while len(leaves) < n_leaves:
        node = leaves.pop(int(rng.integers(len(leaves))))
        feature[node] = int(rng.integers(n_features))
        thr[node] = float(rng.integers(-2, 3)) * 0.5
        mleft[node] = bool(rng.integers(2))
        for _ in range(2):
            feature.append(-1), thr.append(0.0), mleft.append(False), left.append(-1), right.append(-1)
            leaves.append(len(feature) - 1)
        left[node], right[node] = len(feature) - 2, len(feature) - 1
    n = len(feature)
    return Tree(
        feature=np.array(feature, np.int32), bin_threshold=np.zeros(n, np.int32), threshold=np.array(thr),
        missing_left=np.array(mleft), left=np.array(left, np.int32), right=np.array(right, np.int32),
        value=rng.normal(size=n), gain=np.zeros(n), count=np.zeros(n, np.int64),
    )  # fmt: skip


def _rows(rng, n, m, nan=0.15):
    X = rng.integers(-3, 4, size=(n, m)) * 0.5  # often exactly on a threshold
    X[rng.random(X.shape) < nan] = np.nan
    return X


def _expected(tree, x, subset, node=0):
    """E[f(x) | the features of ``subset`` known]: unknown splits take both sides by cover."""
    f = tree.feature[node]
    if f < 0:
        return tree.value[node]
    lc, rc = tree.left[node], tree.right[node]
    if f in subset:
        go_left = tree.missing_left[node] if np.isnan(x[f]) else x[f] <= tree.threshold[node]
        return _expected(tree, x, subset, lc if go_left else rc)
    both = tree.count[lc] * _expected(tree, x, subset, lc) + tree.count[rc] * _expected(tree, x, subset, rc)
    return both / tree.count[node]


def _brute_force(trees, x, m):
    """Shapley values and interaction values over all 2^m subsets (the definitions)."""
    v = {frozenset(s): sum(_expected(t, x, set(s)) for t in trees)
         for k in range(m + 1) for s in itertools.combinations(range(m), k)}  # fmt: skip
    phi = np.zeros(m + 1)
    inter = np.zeros((m + 1, m + 1))
    for i in range(m):
        rest = [j for j in range(m) if j != i]
        for k in range(m):
            for s in map(frozenset, itertools.combinations(rest, k)):
                phi[i] += math.factorial(k) * math.factorial(m - k - 1) / math.factorial(m) * (v[s | {i}] - v[s])
        for j in rest:
            others = [k for k in rest if k != j]
            for k in range(m - 1):
                w = math.factorial(k) * math.factorial(m - k - 2) / (2 * math.factorial(m - 1))
                for s in map(frozenset, itertools.combinations(others, k)):
                    inter[i, j] += w * (v[s | {i, j}] - v[s | {i}] - v[s | {j}] + v[s])
    phi[m] = inter[m, m] = v[frozenset()]
    for i in range(m):
        inter[i, i] = phi[i] - inter[i].sum()
    return phi, inter


def _ensembles(n_cases, seed=0):
    rng = np.random.default_rng(seed)
    made = 0
    while made < n_cases:
        m = int(rng.integers(1, 7))
        trees = [_random_tree(rng, m, int(rng.integers(1, 12))) for _ in range(int(rng.integers(1, 4)))]
        for tree, count in zip(trees, node_counts(trees, _rows(rng, 300, m))):
            tree.count = count
        if all(np.all(t.count[t.feature >= 0] > 0) for t in trees):  # no split without training rows
            made += 1
            yield trees, m, _rows(rng, 4, m, nan=0.25)


def test_contributions_and_interactions_are_the_shapley_values_of_the_definition():
    worst_phi = worst_inter = 0.0
    for trees, m, X in _ensembles(16):
        explainer = TreeExplainer(trees, m)
        phi, inter = explainer.contributions(X), explainer.interactions(X)
        for r in range(X.shape[0]):
            ref_phi, ref_inter = _brute_force(trees, X[r], m)
            worst_phi = max(worst_phi, np.abs(phi[r] - ref_phi).max())
            worst_inter = max(worst_inter, np.abs(inter[r] - ref_inter).max())
    assert worst_phi < 1e-12
    assert worst_inter < 1e-12


def test_rows_sum_to_the_trees_outputs_and_interactions_to_the_contributions():
    from ranklearn.tree.predictor import TreePredictor

    for trees, m, X in _ensembles(8, seed=1):
        explainer = TreeExplainer(trees, m, scale=0.25)
        phi = explainer.contributions(X)
        scores = TreePredictor(trees).predict(X) * 0.25
        np.testing.assert_allclose(phi.sum(axis=1), scores, rtol=1e-12, atol=1e-12)
        inter = explainer.interactions(X)
        np.testing.assert_allclose(inter.sum(axis=2), phi, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(inter, inter.transpose(0, 2, 1), atol=1e-12)


def test_node_counts_follow_predict_including_nan_and_ties():
    rng = np.random.default_rng(2)
    tree = _random_tree(rng, 3, 8)
    X = _rows(rng, 200, 3, nan=0.3)
    (count,) = node_counts([tree], X)
    assert count[0] == 200
    internal = tree.feature >= 0
    np.testing.assert_array_equal(count[tree.left[internal]] + count[tree.right[internal]], count[internal])
    # each leaf's count is the rows whose walk ends there
    for leaf in np.flatnonzero(~internal):
        tree1 = Tree.from_dict(tree.to_dict())
        tree1.value = (np.arange(tree.value.shape[0]) == leaf).astype(float)
        from ranklearn.tree.predictor import TreePredictor

        assert count[leaf] == TreePredictor([tree1]).predict(X).sum()


def test_missing_or_inconsistent_cover_is_refused():
    tree = _random_tree(np.random.default_rng(3), 2, 4)
    with pytest.raises(ValueError, match="tree 0 has no cover.*set_cover"):
        TreeExplainer([tree], 2)
    (tree.count,) = node_counts([tree], _rows(np.random.default_rng(4), 50, 2))
    tree.count[0] += 1
    with pytest.raises(ValueError, match="tree 0's cover is inconsistent"):
        TreeExplainer([tree], 2)


def test_a_single_leaf_tree_is_all_expected_value():
    tree = Tree(feature=np.array([-1], np.int32), bin_threshold=np.zeros(1, np.int32), threshold=np.zeros(1),
                missing_left=np.zeros(1, bool), left=np.array([-1], np.int32), right=np.array([-1], np.int32),
                value=np.array([2.5]), gain=np.zeros(1), count=np.zeros(1, np.int64))  # fmt: skip
    phi = TreeExplainer([tree], 3).contributions(np.ones((2, 3)))
    np.testing.assert_array_equal(phi, [[0, 0, 0, 2.5], [0, 0, 0, 2.5]])
