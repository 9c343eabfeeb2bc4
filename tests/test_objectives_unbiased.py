"""Debiased LambdaMART (objectives.unbiased): the bias of a simulated PBM log recovered, better
rankings than the naive model on true labels, the kernel's pair weights against a brute force,
save/load, the plot and the errors."""

from __future__ import annotations

import re

import warnings

import numpy as np
import pytest

from ranklearn.clicks import PBM, ClickTrainingSet, estimate_propensity, simulate
from ranklearn.clicks.models import theta_base
from ranklearn.data import from_arrays
from ranklearn.io import load_model
from ranklearn.metrics import get_metric
from ranklearn.models.lambdamart import LambdaMART
from ranklearn.objectives import get_objective, make_unbiased

NDCG10 = get_metric("ndcg@10")
TRUTH = theta_base(10) / theta_base(10)[0]  # the simulated examination, relative to rank 1
SESSIONS = 10_000


def _letor(n_queries: int, seed: int):
    """10 documents a query; the label follows feature 0; feature 1 is the logging score (no
    relation to relevance), feature 2 noise. A naive model learns feature 1 from the clicks
    (documents shown high are clicked more), a debiased one should not."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * 10, 3))
    y = np.clip(np.round(X[:, 0] * 1.2 + 1.5), 0, 4)
    return from_arrays(X.astype(np.float32), y, qid=np.repeat(np.arange(n_queries), 10))


@pytest.fixture(scope="module")
def clicks():
    train, test = _letor(300, 0), _letor(300, 1)
    # Plackett-Luce logging (temperature 1): documents are seen at several ranks (EM needs it)
    log = simulate(train, train.X[:, 1], PBM(eta=1.0), n_sessions=SESSIONS, seed=0, temperature=1.0)
    rows = ClickTrainingSet.per_session(log, train)
    clicks_at = np.bincount(rows.position[rows.y > 0], minlength=11)[1:]
    # Tolerance: a ratio to rank 1 of click counts has relative standard error about
    # sqrt(1/c_k + 1/c_1) (Poisson counts c_k of clicks at rank k); 4 of those, plus 0.05 for the
    # model's own error in separating relevance from position on a finite log.
    tolerance = 4 * TRUTH * np.sqrt(1 / clicks_at + 1 / clicks_at[0]) + 0.05
    return train, test, log, rows, tolerance


def _fit(rows, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the naive model ignores position= (it warns so)
        return LambdaMART(**(dict(n_estimators=50, num_leaves=7, random_state=0) | params)).fit(
            rows.X, rows.y, qid=rows.qid, position=rows.position
        )


@pytest.fixture(scope="module")
def naive_ndcg(clicks):
    train, test, _, rows, _ = clicks
    return NDCG10.mean(test.y, _fit(rows).predict(test.X), test.ptr)


@pytest.mark.parametrize(
    "method, recovered",
    [
        # Hu et al.'s ratios are regularized to (cost ratio)^(1/(1+p)): t+^(1+p) estimates theta_k/theta_1
        ("pairwise", lambda m: m.position_bias_["t_plus"] ** (1 + m.position_bias_norm)),
        # the additive term on the pair logits: exp(g_k - g_1) estimates theta_k / theta_1
        ("position_factors", lambda m: np.exp(m.position_bias_["factor"] - m.position_bias_["factor"][0])),
    ],
)
def test_learned_bias_recovers_the_simulated_pbm_and_beats_the_naive_model(clicks, naive_ndcg, method, recovered):
    """At the peers' defaults, XGBoost's p=2 and LightGBM's r=0 (unregularized factors). ranklearn's
    defaults, chosen on validation clicks, regularize more (p=4, r=1): r=1 shrinks the factors toward
    0 (test_regularization_shrinks_the_position_factors)."""
    train, test, _, rows, tolerance = clicks
    peers_default = {"pairwise": {"position_bias_norm": 2.0}, "position_factors": {"position_bias_regularization": 0.0}}
    model = _fit(rows, unbiased=method, **peers_default[method])
    est = recovered(model)
    assert est[0] == pytest.approx(1.0)
    np.testing.assert_array_less(np.abs(est - TRUTH), tolerance)
    assert NDCG10.mean(test.y, model.predict(test.X), test.ptr) > naive_ndcg + 0.005


def test_regularization_shrinks_the_position_factors(clicks):
    """r * (rows at the rank) is added to the factors' Newton denominator and pulls them to 0: with
    r = 0, 0.1, 1 the estimated bias at every rank moves toward 1 (no bias)."""
    _, _, _, rows, _ = clicks
    ratios = []
    for r in (0.0, 0.1, 1.0):
        f = _fit(rows, unbiased="position_factors", position_bias_regularization=r).position_bias_["factor"]
        ratios.append(np.exp(f - f[0]))
    assert LambdaMART().position_bias_regularization == 1.0
    assert np.all(np.diff(np.stack(ratios), axis=0)[:, 1:] > 0)


def test_ipw_with_em_propensities_recovers_the_bias_and_beats_the_naive_model(clicks, naive_ndcg):
    train, test, log, rows, tolerance = clicks
    estimated = estimate_propensity(log, "em", n_bootstrap=0)
    model = _fit(rows, unbiased="ipw", propensity=estimated, propensity_clip=0.05)
    np.testing.assert_array_less(np.abs(model.position_bias_["propensity"] - TRUTH), tolerance)
    assert NDCG10.mean(test.y, model.predict(test.X), test.ptr) > naive_ndcg + 0.005


@pytest.mark.parametrize(
    "s",
    [
        np.random.default_rng(3).normal(size=7),
        # ties, as a document shown at several positions: a pair's loss is reused along a run of
        # equal scores, and must be recomputed where the more relevant side changes
        np.array([0.3, 0.3, -1.2, 0.3, 0.5, -1.2, 0.5]),
    ],
    ids=["distinct", "ties"],
)
def test_pair_weights_against_a_brute_force(s):
    """One query: every pair's lambda divided by t+ of the more relevant document's rank and t-
    of the other's, and the pair costs per row, against a loop over the pairs."""
    n = 7
    y = np.array([2.0, 0, 0, 2, 1, 1, 0])
    bucket = np.array([0, 1, 2, 3, 4, 2, 1])
    t_plus, t_minus = np.array([1.0, 0.8, 0.5, 0.4, 0.3]), np.array([1.0, 1.2, 1.5, 1.1, 0.9])
    lam = get_objective("ranknet", lambda_normalization="none")
    grad, hess = np.empty(n), np.empty(n)
    costs = np.full((2, n), np.nan)  # every entry is set, not added to
    lam.pair_gradients(s, y, np.array([0, n]), grad, hess, bucket, t_plus, t_minus, costs)
    g, h, c = np.zeros(n), np.zeros(n), np.zeros((2, n))
    for i in range(n):
        for j in range(n):
            if y[i] > y[j]:
                rho = 1 / (1 + np.exp(s[i] - s[j]))
                w = 1 / (t_plus[bucket[i]] * t_minus[bucket[j]])
                g[i] -= rho * w
                g[j] += rho * w
                h[i] += rho * (1 - rho) * w
                h[j] += rho * (1 - rho) * w
                cost = np.log1p(np.exp(-(s[i] - s[j])))
                c[0, i] += cost / t_minus[bucket[j]]
                c[1, j] += cost / t_plus[bucket[i]]
    np.testing.assert_allclose(grad, g, rtol=1e-12)
    np.testing.assert_allclose(hess, h, rtol=1e-12)
    np.testing.assert_allclose(costs, c, rtol=1e-12)


@pytest.mark.parametrize("method", ["pairwise", "position_factors", None])
def test_merged_sessions_weighted_by_their_count_fit_the_same_model_as_one_row_per_session(method):
    """A row of weight w acts as w copies: the pair costs of the ratios and the position factors'
    counts are weighted like the gradients. Features on a grid of 0.1 (fewer values than bins), so
    that the bins, made from the rows, are the same for both."""
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(600, 3)), 1).astype(np.float32)
    train = from_arrays(X, np.clip(np.round(X[:, 0] * 1.2 + 1.5), 0, 4), qid=np.repeat(np.arange(60), 10))
    log = simulate(train, train.X[:, 1], PBM(eta=1.0), n_sessions=3000, seed=0)
    each, merged = (log.training_set(train, per=per) for per in ("session", "pattern"))
    assert merged.y.size < each.y.size / 3
    params = dict(n_estimators=20, num_leaves=7, min_samples_leaf=1, random_state=0, unbiased=method)
    if method == "position_factors":
        params["position_bias_regularization"] = 1.0  # the counts enter through the regularization
    a = LambdaMART(**params).fit(each.X, each.y, qid=each.qid, position=each.position if method else None)
    b = LambdaMART(**params).fit(merged.X, merged.y, qid=merged.qid, sample_weight=merged.sample_weight,
                                 position=merged.position if method else None)  # fmt: skip
    for key, value in a.position_bias_.items() if method else ():
        np.testing.assert_allclose(b.position_bias_[key], value, rtol=1e-9)
    np.testing.assert_allclose(b.predict(train.X), a.predict(train.X), atol=1e-9)


def test_pairwise_update_is_the_regularized_cost_ratio_and_positions_past_max_rank_share_the_last():
    obj = make_unbiased("pairwise", get_objective("lambdarank"), max_rank=3, norm=2.0)
    obj.update_bias(np.array([4.0, 2.0, 0.0, 8.0, 1.0, 0.5]))
    np.testing.assert_allclose(obj.t_plus, [1.0, 0.5 ** (1 / 3), 1.0])  # rank 3 without pairs keeps its ratio
    np.testing.assert_allclose(obj.t_minus, [1.0, (1 / 8) ** (1 / 3), (0.5 / 8) ** (1 / 3)])
    np.testing.assert_array_equal(obj._bucket({"position": np.array([1, 3, 4, 99])}), [0, 2, 2, 2])


def test_position_factors_take_one_regularized_newton_step():
    obj = make_unbiased("position_factors", get_objective("lambdarank"), max_rank=2, regularization=0.5, learning_rate=0.1)
    obj.factors[:] = [0.2, -0.4]
    obj.update_bias(np.array([1.0, -2.0, 4.0, 3.0, 10.0, 0.0]))  # G, H, counts per rank
    step0 = (1.0 + 0.5 * 10 * 0.2) / (4.0 + 0.5 * 10 + 0.001)
    np.testing.assert_allclose(obj.factors, [0.2 - 0.1 * step0, -0.4])  # rank 2 had no rows


def test_save_load_keeps_the_bias_and_old_files_still_load(clicks, tmp_path):
    _, test, _, rows, _ = clicks
    model = LambdaMART(n_estimators=3, num_leaves=3, unbiased="ipw", propensity=TRUTH, propensity_clip=0.1)
    model.fit(rows.X[:2000], rows.y[:2000], qid=rows.qid[:2000], position=rows.position[:2000])
    model.save(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict(test.X), model.predict(test.X))
    np.testing.assert_array_equal(back.position_bias_["propensity"], np.maximum(TRUTH, 0.1))
    assert back.get_params()["unbiased"] == "ipw" and back.propensity == TRUTH.tolist()
    # a payload of version 2 (before unbiased=): loads, with no position bias
    plain = LambdaMART(n_estimators=2, num_leaves=3).fit(rows.X[:500], rows.y[:500], qid=rows.qid[:500])
    payload = plain._to_payload()
    for key in ("unbiased", "position_bias_max_rank", "position_bias_norm", "position_bias_regularization",
                "propensity", "propensity_clip"):  # fmt: skip
        del payload["params"][key]
    del payload["position_bias"]
    payload["payload_version"] = 2
    old = LambdaMART.from_payload(payload)
    assert old.position_bias_ is None and old.unbiased is None
    np.testing.assert_array_equal(old.predict(test.X), plain.predict(test.X))


def test_plot_position_bias(clicks):
    pytest.importorskip("matplotlib")
    from ranklearn.plot import position_bias

    rows = clicks[3]
    model = _fit(rows, unbiased="pairwise", n_estimators=2)
    fig = position_bias(model, truth=TRUTH)
    labels = [line.get_label() for line in fig.axes[0].lines]
    assert labels == ["t+ (clicked), ratio to rank 1", "t- (unclicked), ratio to rank 1", "truth, ratio to rank 1"]
    with pytest.raises(ValueError, match="no position bias"):
        position_bias(LambdaMART(n_estimators=1).fit(rows.X[:300], rows.y[:300], qid=rows.qid[:300]))


@pytest.mark.parametrize(
    "params, fit_position, match",
    [
        (dict(unbiased="pairwise"), False, r"LambdaMART\(unbiased='pairwise'\) needs position="),
        (dict(unbiased="ipw"), True, "propensity is required by unbiased='ipw'"),
        (dict(unbiased="pairwise", propensity=[1.0]), True, "propensity is read by unbiased='ipw' only, not unbiased='pairwise'"),
        (dict(unbiased="ipw", propensity=[1.0, np.nan]), True, r"positive finite numbers, one per rank from 1 "
                                                                r"\(got \[1, nan\]\)"),
        (dict(unbiased="ipw", propensity=[[1.0], [0.5]]), True, r"1-d\), got an array of shape \(2, 1\)"),
        (dict(unbiased="pairwise", objective="squared_error"), True, "not 'squared_error'"),
        (dict(unbiased="bogus"), True, "unbiased"),
        (dict(propensity=[1.0, 0.5]), True, "^propensity is read by unbiased='ipw' only$"),
        (dict(unbiased="position_factors", propensity_clip=0.1), True, "propensity_clip is read by unbiased='ipw' only"),
    ],
)
def test_bad_combinations_are_one_error_before_training(params, fit_position, match):
    X, y, q = np.zeros((4, 1)), np.array([1.0, 0, 1, 0]), np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match=match):
        LambdaMART(**params).fit(X, y, qid=q, position=np.array([1, 2, 1, 2]) if fit_position else None)


@pytest.mark.parametrize("clip", [0.0, -1, True, np.inf, np.nan, "0.1"])
def test_the_trees_the_click_dcg_and_the_neural_losses_refuse_a_bad_clip_alike(clip):
    """One check of the clip serves the three places propensities are clipped."""
    from ranklearn.clicks import ipw_labels
    from ranklearn.neural.losses import DLALoss, IPWLoss

    message = f"must be a positive number or None, got {clip!r}"
    with pytest.raises(ValueError, match="propensity_clip " + re.escape(message)):
        make_unbiased("ipw", get_objective("ranknet"), propensity=[1.0, 0.5], clip=clip)
    with pytest.raises(ValueError, match="clip " + re.escape(message)):
        ipw_labels([1, 0], [1, 2], [1.0, 0.5], clip=clip)
    for loss in (lambda: IPWLoss(propensity=(1.0, 0.5), clip=clip), lambda: DLALoss(clip=clip)):
        with pytest.raises(ValueError, match="clip " + re.escape(message)):
            loss()


def test_positions_are_read_again_after_prepare_even_when_changed_in_place():
    """The buckets are computed once per fit (the boosting loop passes the same positions every
    tree); a new fit (``prepare``) reads the positions again, even the same array changed in place."""
    y, ptr = np.array([1.0, 0, 0, 1]), np.array([0, 4])
    scores = np.array([0.5, 0.1, -0.2, 0.3])
    pos = np.array([1, 2, 3, 4])
    objective = make_unbiased("ipw", get_objective("ranknet"), propensity=[1.0, 0.5, 0.25, 0.125])
    objective.prepare(y, ptr)
    first = objective.gradients(scores, y, ptr, side={"position": pos})[0].copy()
    pos[:] = [4, 3, 2, 1]
    objective.prepare(y, ptr)
    again = objective.gradients(scores, y, ptr, side={"position": pos})[0]
    fresh = make_unbiased("ipw", get_objective("ranknet"), propensity=[1.0, 0.5, 0.25, 0.125])
    fresh.prepare(y, ptr)
    np.testing.assert_array_equal(again, fresh.gradients(scores, y, ptr, side={"position": pos.copy()})[0])
    assert not np.array_equal(again, first)


def _pair_cost_sums(s, y, qid, t_plus, t_minus, reversed_pair):
    """Unbiased LambdaMART's per-rank sums (eqs. 30-31) by brute force, with XGBoost's |ΔZ| (ΔNDCG
    over the scores' ranks, divided by |s_i - s_j| + 0.01 unless all the query's scores tie):
    ``reversed_pair`` sums log(1 + exp(s_i - s_j)) for the pair (i more relevant than j) instead of
    the paper's log(1 + exp(-(s_i - s_j)))."""
    k = t_plus.size
    li, lj = np.zeros(k), np.zeros(k)
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    for a, b in zip(starts, np.r_[starts[1:], qid.size]):
        sc, lab, n = s[a:b], y[a:b], b - a
        rank = np.empty(n, dtype=int)
        rank[np.argsort(-sc, kind="stable")] = np.arange(n)
        gains, disc = 2.0**lab - 1, 1 / np.log2(np.arange(n) + 2)
        idcg = np.sum(np.sort(gains)[::-1] * disc)
        for i in range(n):
            for j in range(n):
                if lab[i] > lab[j] and i < k and j < k:
                    delta = abs((gains[i] - gains[j]) * (disc[rank[i]] - disc[rank[j]])) / idcg
                    if sc.max() != sc.min():
                        delta /= abs(sc[i] - sc[j]) + 0.01
                    cost = np.log1p(np.exp((1 if reversed_pair else -1) * (sc[i] - sc[j]))) * delta
                    li[i] += cost / t_minus[j]
                    lj[j] += cost / t_plus[i]
    return li, lj


def test_xgboost_sums_the_reversed_pairs_loss_into_its_ratios_where_ranklearn_sums_the_papers():
    """A documented difference from the peer (README, "Unbiased LambdaMART"): XGBoost's ratios after
    tree n are eqs. 30-31 on the scores of its first n - 1 trees with the cost of the *reversed*
    pair, log(1 + exp(s_i - s_j)) |ΔZ| (its LambdaGrad: log(1 / (1 - sigmoid(s_i - s_j)))), not the
    paper's pairwise loss. ranklearn's objective, from the same scores and the same earlier ratios,
    gives the paper's. Checked on XGBoost 3.2; another major version may change its internals."""
    xgb = pytest.importorskip("xgboost")
    import json

    major = int(xgb.__version__.split(".")[0])
    if not 2 <= major <= 3:
        pytest.skip(f"XGBoost {xgb.__version__}: its ratio update was read and checked on 3.x")
    train = _letor(60, 0)
    log = simulate(train, train.X[:, 1], PBM(eta=1.0), n_sessions=300, seed=0, temperature=1.0)
    rows = ClickTrainingSet.per_session(log, train)
    order = np.lexsort((rows.position, rows.qid))  # XGBoost reads the positions from the row order
    X, y, qid, position = rows.X[order], rows.y[order], rows.qid[order], rows.position[order]

    def fit(n_trees):
        model = xgb.XGBRanker(n_estimators=n_trees, max_leaves=63, grow_policy="lossguide", objective="rank:ndcg",
                              lambdarank_unbiased=True, lambdarank_bias_norm=2.0, tree_method="hist",
                              nthread=1)  # fmt: skip
        model.fit(X, y, qid=qid)
        config = json.loads(model.get_booster().save_config())["learner"]["objective"]
        return model, np.array(config["ti+"]), np.array(config["tj-"])

    _, t_plus, t_minus = fit(5)
    model, want_plus, want_minus = fit(6)
    scores = model.predict(X, output_margin=True, iteration_range=(0, 5)).astype(np.float64)
    sums = {rev: _pair_cost_sums(scores, y, qid, t_plus, t_minus, rev) for rev in (False, True)}
    got = {rev: [(s / s[0]) ** (1 / 3) for s in sums[rev]] for rev in sums}
    np.testing.assert_allclose(got[True][0], want_plus, rtol=1e-4, err_msg=f"XGBoost {xgb.__version__}")
    np.testing.assert_allclose(got[True][1], want_minus, rtol=1e-4, err_msg=f"XGBoost {xgb.__version__}")
    assert np.abs(got[False][1] - want_minus).max() > 0.01  # the paper's cost gives other ratios
    # ranklearn's update on the same scores from the same earlier ratios: the paper's
    ptr = np.r_[0, np.flatnonzero(qid[1:] != qid[:-1]) + 1, qid.size]
    assert all(scores[a:b].max() != scores[a:b].min() for a, b in zip(ptr[:-1], ptr[1:]))  # |Δs| + 0.01 everywhere
    ours = make_unbiased("pairwise", get_objective("lambdarank", lambda_distance_weight=True), max_rank=10, norm=2.0)
    ours.t_plus[:], ours.t_minus[:] = t_plus[:10], t_minus[:10]
    ours.prepare(y, ptr)
    grad, hess = ours.gradients(scores, y, ptr, side={"position": position})
    ours.update_bias(ours.bias_statistics(grad, hess))
    np.testing.assert_allclose(ours.t_plus, got[False][0][:10], rtol=1e-8)
    np.testing.assert_allclose(ours.t_minus, got[False][1][:10], rtol=1e-8)
