"""The neural rankers (RankNet, and LambdaRank through it): the seed's worked update, training,
input checks, persistence, CUDA."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from ranklearn.exceptions import ModelFormatError, TrainingDivergedError  # noqa: E402
from ranklearn.models import LambdaMART, LambdaRank, ListNet, RankNet  # noqa: E402
from ranklearn.neural.lambdas import compute_lambdas  # noqa: E402
from _helpers import NEURAL, make_queries, needs_cuda, needs_torch, small_data  # noqa: E402
from _helpers import _one_torch_thread  # noqa: E402, F401 (autouse: one torch thread)


@needs_torch
@pytest.mark.parametrize("cls", NEURAL, ids=lambda c: c.__name__)
def test_neural_models_reject_nan_clearly(cls):
    X, y, qid = small_data()
    bad = X.copy()
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN at row 4 \(from 0\), feature 3 \(from 1.*LambdaMART"):
        cls(hidden=(4,), n_estimators=1).fit(bad, y, qid=qid)
    model = cls(hidden=(4,), n_estimators=1, random_state=0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"NaN at row 4 \(from 0\), feature 3 \(from 1"):
        model.predict(bad)


@needs_torch
@pytest.mark.parametrize("cls", NEURAL, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"n_estimators": -1}, "n_estimators"),
        ({"batch_queries": 0}, "batch_queries"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"sigma": 0.0}, "sigma"),
        ({"dropout": 1.5}, "dropout"),
        ({"hidden": (0,)}, "hidden"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"n_networks": 0}, "n_networks"),
        ({"n_networks": 2.5}, "n_networks"),
        ({"n_networks": True}, "n_networks"),
        ({"n_networks": 3, "mode": "pairwise"}, "n_networks=1"),
    ],
)
def test_neural_bad_parameters(cls, params, fragment):
    X, y, qid = small_data()
    with pytest.raises(ValueError, match=fragment):
        cls(**{"hidden": (4,), "n_estimators": 1, **params}).fit(X, y, qid=qid)


"""Tests of the neural rankers (RankNet, LambdaRank): lambdas, training, persistence, API."""


def test_fit_on_queries_without_pairs_does_not_move_or_nan():
    X = np.random.default_rng(0).normal(size=(7, 3)).astype(np.float32)
    y = np.array([1, 0, 0, 0, 2, 2, 2], dtype=float)
    qid = np.array([0, 1, 1, 1, 2, 2, 2])  # one document; all zero; a single label
    for cls in (RankNet, LambdaRank):
        m = cls(hidden=(4,), n_estimators=3, random_state=0, warm_start=True).fit(X, y, qid)
        before = {k: v.clone() for k, v in m.model_.state_dict().items()}
        m.fit(X, y, qid)
        for key, val in m.model_.state_dict().items():
            assert torch.equal(val, before[key])
        assert np.isfinite(m.predict(X)).all()
        assert all(np.isfinite(v) for v in m.train_loss_)


# --------------------------------------------------------------------------- the seed's worked update
SEED_X = np.array([[5.0, 4.5], [4.0, 3.7], [2.0, 1.8]], dtype=np.float32)


SEED_Y = np.array([2.0, 1.0, 0.0])  # target order 1 > 2 > 3


SEED_QID = np.zeros(3, dtype=int)


def _linear_at(m, w0, w):
    lin = m.model_.members[0][0]
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([w], dtype=torch.float32))
        lin.bias.fill_(w0)
    return lin


def _seed_update(lambda_normalization):
    """One factorized SGD update of the seed's linear scorer from w = (0, -1, 1); returns (dw, model)."""
    m = RankNet(
        hidden=(), n_networks=1, standardize=False, optimizer="sgd", learning_rate=0.1, sigma=0.1, n_estimators=1,
        batch_queries=1, early_stopping_rounds=None, warm_start=True, random_state=0,
        lambda_normalization=lambda_normalization,
    )
    m.fit(SEED_X, SEED_Y, SEED_QID)
    lin = _linear_at(m, 0.0, [-1.0, 1.0])
    np.testing.assert_allclose(m.predict(SEED_X), [-0.5, -0.3, -0.2], atol=1e-6)
    m.fit(SEED_X, SEED_Y, SEED_QID)  # one epoch = one query = one factorized update
    dw = np.array([lin.bias.item(), *lin.weight[0].tolist()], dtype=np.float64) - [0.0, -1.0, 1.0]
    return dw, m


def test_seed_worked_update_factorized():
    lam = compute_lambdas(torch.tensor([-0.5, -0.3, -0.2], dtype=torch.float64), torch.tensor(SEED_Y), sigma=0.1)
    np.testing.assert_allclose(lam.numpy(), [-0.10125, 0.00025, 0.101], atol=5e-6)

    dw, m = _seed_update("none")  # the plain summed pair cost of the seed
    assert abs(dw[0]) < 1e-7
    assert round(dw[1], 6) == 0.030325
    assert round(dw[2], 5) == 0.02729
    np.testing.assert_allclose(m.predict(SEED_X), [-0.2256, -0.0777, -0.0902], atol=5e-5)


@pytest.mark.parametrize("norm,divisor", [("docs", 3.0), ("pairs", 3.0)])
def test_lambda_normalization_divides_the_query_update(norm, divisor):
    # the seed's query has 3 documents and 3 pairs: the update is the seed's divided by 3
    plain, _ = _seed_update("none")
    dw, _ = _seed_update(norm)
    np.testing.assert_allclose(dw, plain / divisor, rtol=1e-5, atol=1e-7)


def test_lightgbm_normalization_scales_the_query_update():
    # the seed's scores (-0.5, -0.3, -0.2), labels (2, 1, 0), sigma 0.1: S = sum of the 3 pairs' 2 |lambda_ij|
    s, sigma = np.array([-0.5, -0.3, -0.2]), 0.1
    S = sum(2 * sigma / (1 + np.exp(sigma * (s[i] - s[j]))) for i, j in ((0, 1), (0, 2), (1, 2)))
    plain, _ = _seed_update("none")
    dw, _ = _seed_update("lightgbm")
    np.testing.assert_allclose(dw, plain * np.log2(1 + S) / S, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("model,params,match", [
    (ListNet, {}, "loss 'listnet' has no pair lambdas"),
    (RankNet, {"loss": "approxndcg"}, "loss 'approxndcg' has no pair lambdas"),
    (RankNet, {"mode": "pairwise", "n_networks": 1}, "mode='pairwise' updates one pair at a time"),
])  # fmt: skip
def test_lightgbm_normalization_is_refused_where_there_are_no_query_pair_lambdas(model, params, match):
    with pytest.raises(ValueError, match=match):
        model(lambda_normalization="lightgbm", n_estimators=1, **params).fit(SEED_X, SEED_Y, SEED_QID)


def test_pairwise_mode_is_one_update_per_pair():
    # one pair: per-pair SGD and the factorized update coincide
    X, y, q = SEED_X[:2], SEED_Y[:2], SEED_QID[:2]
    preds = []
    for mode in ("pairwise", "factorized"):
        m = RankNet(hidden=(), n_networks=1, standardize=False, optimizer="sgd", learning_rate=0.1, sigma=0.1, n_estimators=1,
                    mode=mode, early_stopping_rounds=None, warm_start=True, random_state=0, lambda_normalization="none")
        m.fit(X, y, q)
        _linear_at(m, 0.0, [-1.0, 1.0])
        m.fit(X, y, q)
        preds.append(m.predict(SEED_X))
    np.testing.assert_allclose(preds[0], preds[1], atol=1e-6)
    # three pairs: three sequential updates, each from the pair's own gradient
    m = RankNet(hidden=(), n_networks=1, standardize=False, optimizer="sgd", learning_rate=0.1, sigma=0.1, n_estimators=1,
                mode="pairwise", early_stopping_rounds=None, warm_start=True, random_state=0, lambda_normalization="none")
    m.fit(SEED_X, SEED_Y, SEED_QID)
    lin = _linear_at(m, 0.0, [-1.0, 1.0])
    m.fit(SEED_X, SEED_Y, SEED_QID)
    w = np.array([0.0, -1.0, 1.0])
    # replay: all orders of the three pairs end near the factorized result but not at it exactly
    got = np.array([lin.bias.item(), *lin.weight[0].tolist()])
    assert not np.allclose(got, [0.0, -0.969675, 1.02729], atol=1e-6)
    assert np.allclose(got, [0.0, -0.969675, 1.02729], atol=2e-3)
    assert abs(got[0] - w[0]) < 1e-6  # each pair update leaves the bias alone


# --------------------------------------------------------------------------- training behaviour
def test_training_learns_and_lambdarank_runs():
    X, y, q = make_queries(n_queries=40, seed=1)
    Xv, yv, qv = make_queries(n_queries=20, seed=2)
    for m in (RankNet(n_estimators=15, random_state=0), LambdaRank(n_estimators=15, random_state=0, lambda_metric="err@5", truncation_level=5)):
        m.fit(X, y, q, eval_set=[(Xv, yv, qv)])
        assert m.score(Xv, yv, qid=qv) > 0.8
        assert m.train_loss_[-1] < m.train_loss_[0]
        assert m.n_features_in_ == 5
        assert list(m.evals_result_) == ["valid_0"]


def test_determinism_for_fixed_seed():
    X, y, q = make_queries(seed=4)
    kw = dict(hidden=(8, 4), dropout=0.2, n_estimators=4, random_state=11)
    a = LambdaRank(**kw).fit(X, y, q).predict(X)
    b = LambdaRank(**kw).fit(X, y, q).predict(X)
    c = LambdaRank(**{**kw, "random_state": 12}).fit(X, y, q).predict(X)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_fit_leaves_global_torch_rng_alone():
    X, y, q = make_queries(n_queries=5, seed=4)
    state = torch.random.get_rng_state()
    RankNet(n_estimators=1, random_state=0).fit(X, y, q)
    assert torch.equal(state, torch.random.get_rng_state())


def test_fit_trains_on_one_thread_unless_n_jobs_says_otherwise():
    """n_jobs=None: one torch (and numba) thread inside the fit; an explicit n_jobs is kept; the caller's count is restored."""
    import numba

    from ranklearn._threads import resolve_n_jobs

    X, y, q = make_queries(n_queries=8, seed=4)
    torch.set_num_threads(2)  # the autouse fixture restores the count it found
    for n_jobs, expected in ((None, 1), (2, resolve_n_jobs(2))):
        seen = []
        record = lambda *_: seen.append((torch.get_num_threads(), numba.get_num_threads()))  # noqa: E731
        RankNet(hidden=(4,), n_estimators=2, n_networks=1, n_jobs=n_jobs, random_state=0).fit(
            X, y, q, eval_set=[(X, y, q)], callbacks=[record]
        )
        assert set(seen) == {(expected, expected)}
        assert torch.get_num_threads() == 2


def test_predict_uses_every_cpu_unless_n_jobs_says_otherwise(monkeypatch):
    """n_jobs=None trains on one thread but predicts on every CPU (a large batch is worth sharing)."""
    from ranklearn._threads import resolve_n_jobs

    X, y, q = make_queries(n_queries=8, seed=4)
    for n_jobs in (None, 1):
        model = RankNet(hidden=(4,), n_estimators=1, n_networks=1, n_jobs=n_jobs, random_state=0).fit(X, y, q)
        seen, predict_raw = [], model._predict_raw
        monkeypatch.setattr(model, "_predict_raw", lambda Xc: (seen.append(torch.get_num_threads()), predict_raw(Xc))[1])
        model.predict(X)
        assert seen == [resolve_n_jobs(n_jobs)]


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_fused_adam_gives_the_per_parameter_loop_s_weights(monkeypatch, weight_decay):
    """Adam (AdamW) steps all the parameters in one fused kernel: the weights of one parameter at a time."""
    X, y, q = make_queries(n_queries=12, seed=4)
    kw = dict(hidden=(8, 4), n_networks=3, n_estimators=3, weight_decay=weight_decay, random_state=0)
    fast = RankNet(**kw).fit(X, y, q)
    for name in ("Adam", "AdamW"):
        cls = getattr(torch.optim, name)
        monkeypatch.setattr(torch.optim, name, lambda params, _cls=cls, **opts: _cls(params, **{**opts, "fused": False}))
    slow = RankNet(**kw).fit(X, y, q)
    for a, b in zip(fast.model_.parameters(), slow.model_.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def _retrain(cls, kw, n_epochs, X, y, q):
    return cls(**{**kw, "n_estimators": n_epochs, "early_stopping_rounds": None}).fit(X, y, q).predict(X)


def test_early_stopping_restores_best_epoch():
    X, y, q = make_queries(n_queries=30, seed=5)
    Xv, yv, qv = make_queries(n_queries=20, seed=6, flip=True)  # validation prefers the opposite order
    kw = dict(hidden=(8,), learning_rate=0.01, n_estimators=40, early_stopping_rounds=3, random_state=0)
    seen = []
    m = RankNet(**kw).fit(X, y, q, eval_set=[(Xv, yv, qv)], eval_names=["vali"],
                          callbacks=[lambda it, total, res: seen.append((it, total, res))])
    hist = m.evals_result_["vali"]["ndcg@10"]
    best = m.best_iteration_  # epochs of the best model, 1-based
    assert m.n_epochs_ < 40 and len(hist) == m.n_epochs_
    assert m.n_epochs_ == best + 3
    assert hist[best - 1] == max(hist) and hist[-1] < max(hist)
    assert m.score(Xv, yv, qid=qv) == pytest.approx(hist[best - 1], abs=1e-12)
    assert np.array_equal(m.predict(X), _retrain(RankNet, kw, best, X, y, q))
    assert [s[0] for s in seen] == list(range(1, m.n_epochs_ + 1)) and all(s[1] == 40 for s in seen)
    assert seen[-1][2] == {"vali": {"ndcg@10": hist[-1]}}


def test_without_early_stopping_the_best_epoch_is_kept_too():
    # one rule for every ranker: a watched set chooses the model, with or without early stopping
    X, y, q = make_queries(n_queries=30, seed=5)
    Xv, yv, qv = make_queries(n_queries=20, seed=6, flip=True)
    kw = dict(hidden=(8,), learning_rate=0.01, n_estimators=6, early_stopping_rounds=None, random_state=0)
    m = RankNet(**kw).fit(X, y, q, eval_set=[(Xv, yv, qv)])
    hist = m.evals_result_["valid_0"]["ndcg@10"]
    assert m.n_epochs_ == 6 and hist[m.best_iteration_ - 1] == max(hist) and m.best_iteration_ < 6
    assert m.score(Xv, yv, qid=qv) == pytest.approx(max(hist), abs=1e-12)
    assert RankNet(**kw).fit(X, y, q).best_iteration_ is None


def test_keyboard_interrupt_keeps_best_so_far():
    X, y, q = make_queries(n_queries=30, seed=5)
    Xv, yv, qv = make_queries(n_queries=20, seed=6, flip=True)
    kw = dict(hidden=(8,), learning_rate=0.01, n_estimators=40, early_stopping_rounds=30, random_state=0)

    def stop_at_5(it, total, res):
        if it == 5:
            raise KeyboardInterrupt

    m = RankNet(**kw)
    with pytest.raises(KeyboardInterrupt):
        m.fit(X, y, q, eval_set=[(Xv, yv, qv)], callbacks=[stop_at_5])
    assert m.interrupted_ is True
    hist = m.evals_result_["valid_0"]["ndcg@10"]
    assert len(hist) == 5 and hist[m.best_iteration_ - 1] == max(hist)
    assert np.array_equal(m.predict(X), _retrain(RankNet, kw, m.best_iteration_, X, y, q))
    assert np.isfinite(m.predict(Xv)).all()


@pytest.mark.parametrize("mode", ["factorized", "pairwise"])
def test_sample_weight_scales_lambdas(mode):
    X, y, q = make_queries(n_queries=6, seed=8)
    kw = dict(hidden=(), n_networks=1, standardize=False, optimizer="sgd", n_estimators=1, batch_queries=6, random_state=0,
              mode=mode)
    a = RankNet(learning_rate=0.02, **kw).fit(X, y, q, sample_weight=np.full(len(y), 2.0)).predict(X)
    b = RankNet(learning_rate=0.04, **kw).fit(X, y, q).predict(X)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # zero weight on every document of the last two queries = training without them
    w = (q < 4).astype(float)
    c = RankNet(learning_rate=0.04, **{**kw, "batch_queries": 100}).fit(X, y, q, sample_weight=w).predict(X)
    keep = q < 4
    d = RankNet(learning_rate=0.04, **{**kw, "batch_queries": 100}).fit(X[keep], y[keep], q[keep]).predict(X)
    np.testing.assert_allclose(c, d, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="sample_weight"):
        RankNet(**kw).fit(X, y, q, sample_weight=-np.ones(len(y)))


# --------------------------------------------------------------------------- API and inputs
def test_predict_numpy_in_numpy_out_and_input_checks():
    import scipy.sparse as sp

    X, y, q = make_queries(n_queries=8, seed=9)
    m = RankNet(hidden=(4,), n_estimators=2, random_state=0).fit(X.tolist(), list(y), list(q))
    p = m.predict(X)
    assert isinstance(p, np.ndarray) and p.dtype == np.float64 and p.shape == (len(y),)
    assert np.array_equal(m.predict(X.tolist()), p)
    assert np.array_equal(m.predict(sp.csr_matrix(X)), p)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RankNet(n_estimators=1).fit(Xn, y, q)
    with pytest.raises(ValueError, match="NaN"):
        m.predict(Xn)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :3])
    with pytest.raises(ValueError, match="qid"):
        RankNet().fit(X, y)
    with pytest.raises(ValueError, match="mode"):
        RankNet(mode="listwise").fit(X, y, q)
    with pytest.raises(ValueError, match="weight_decay"):
        RankNet(weight_decay=-1.0).fit(X, y, q)
    with pytest.raises(ValueError, match="lambda_metric"):
        LambdaRank(lambda_metric="map").fit(X, y, q)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            RankNet(device="cuda").fit(X, y, q)
    with pytest.raises(ValueError, match="device"):
        RankNet(device="tpu9").fit(X, y, q)
    with pytest.raises(ValueError, match="CUDA"):  # not available, or no 100th device
        RankNet(device="cuda:99").fit(X, y, q)
    # other torch devices: refused with a line when this build or machine has none (they raised
    # torch's RuntimeError, AssertionError or NotImplementedError at the first tensor moved)
    with pytest.raises(ValueError, match="holds no data to train on"):
        RankNet(device="meta").fit(X, y, q)
    if not (hasattr(torch, "xpu") and torch.xpu.is_available()):
        with pytest.raises(ValueError, match=r"^device='xpu' is not available here \(.*\); use device='cpu'$"):
            RankNet(device="xpu").fit(X, y, q)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        RankNet().predict(X)


@pytest.mark.parametrize("cls, mode", [(RankNet, "factorized"), (RankNet, "pairwise"), (LambdaRank, "factorized")])
def test_divergence_is_a_clear_error(cls, mode):
    X, y, q = make_queries(n_queries=20, seed=0)
    model = cls(optimizer="sgd", learning_rate=1e8, n_estimators=5, mode=mode, hidden=(8,), n_networks=1, random_state=0)
    # before the check, the NaN weights surfaced as "scores contain NaN" from the evaluation
    with pytest.raises(TrainingDivergedError, match=r"diverged in epoch \d.*learning_rate=100000000\.0"):
        model.fit(X, y, q, eval_set=[(X, y, q)])


def test_unsorted_qids_are_regrouped():
    X, y, q = make_queries(n_queries=6, seed=10)
    perm = np.random.default_rng(0).permutation(len(y))
    kw = dict(hidden=(), n_estimators=2, random_state=0, batch_queries=100)
    a = RankNet(**kw).fit(X, y, q)
    b = RankNet(**kw).fit(X[perm], y[perm], q[perm])
    # same queries (same pairs); only the order of rows inside a query differs
    pa, pb = a.predict(X), b.predict(X)
    # up to the output bias, whose gradient is 0 up to rounding (pair lambdas cancel) and which
    # Adam moves by the sign of that rounding noise: it does not change any ranking
    np.testing.assert_allclose(pa - pa.mean(), pb - pb.mean(), atol=1e-5)


def test_sklearn_estimator_protocol():
    from sklearn.base import clone

    m = LambdaRank(hidden=(3,), lambda_metric="err@5", truncation_level=10, random_state=1)
    params = m.get_params()
    assert params["lambda_metric"] == "err@5" and params["truncation_level"] == 10 and params["hidden"] == (3,)
    c = clone(m)
    assert c.get_params() == params and not hasattr(c, "model_")
    assert set(RankNet().get_params()) | {"lambda_metric", "truncation_level"} == set(params)


def test_verbose_progress_bar(capfd):
    X, y, q = make_queries(n_queries=5, seed=4)
    RankNet(n_estimators=2, verbose=1, random_state=0).fit(X, y, q, eval_set=[(X, y, q)])
    out, err = capfd.readouterr()
    assert "RankNet" in err and "ndcg@10" in err and out == ""


def test_ensemble_scores_are_the_mean_of_its_networks():
    X, y, q = make_queries(n_queries=20, seed=22)
    m = LambdaRank(hidden=(8,), n_networks=4, n_estimators=3, random_state=0).fit(X, y, q)
    with torch.no_grad():
        per_net = m.model_.member_scores(torch.as_tensor(X)).numpy()
    assert per_net.shape == (len(y), 4)
    assert np.unique(per_net.round(6), axis=1).shape[1] == 4  # four different networks
    np.testing.assert_allclose(m.predict(X), per_net.mean(1), rtol=1e-6, atol=1e-6)


def test_version_1_model_files_still_load(tmp_path):
    """Files written before n_networks existed (one network, weights named net.*) load as n_networks=1."""
    import base64

    from safetensors.torch import load as st_load
    from safetensors.torch import save as st_save

    from ranklearn.io.model_file import read_model_file, write_model_file

    X, y, q = make_queries(n_queries=10, seed=23)
    m = RankNet(hidden=(6,), n_networks=1, n_estimators=2, random_state=0).fit(X, y, q)
    m.save(tmp_path / "v2.json")
    model_type, payload = read_model_file(tmp_path / "v2.json")
    state = st_load(base64.b64decode(payload["weights"]["data"]))
    old = {k.replace("members.0.", "net.", 1): v for k, v in state.items()}
    payload["weights"]["data"] = base64.b64encode(st_save(old)).decode("ascii")
    payload["payload_version"] = 1
    del payload["params"]["n_networks"]
    write_model_file(tmp_path / "v1.json", model_type, payload)
    r = RankNet.load(tmp_path / "v1.json")
    assert r.n_networks == 1
    assert np.array_equal(r.predict(X), m.predict(X))


@pytest.mark.parametrize("cls,kw,expected", [(RankNet, {}, 3), (LambdaRank, {}, 5), (ListNet, {}, 5),
                                               (RankNet, {"mode": "pairwise"}, 1)])  # fmt: skip
def test_auto_network_count(cls, kw, expected):
    """n_networks="auto": RankNet 3, LambdaRank and ListNet 5 (benchmarks/neural_defaults.md), pairwise 1."""
    X, y, q = make_queries(n_queries=6, seed=24)
    m = cls(hidden=(4,), n_estimators=1, random_state=0, **kw).fit(X, y, q)
    assert m.n_networks == "auto" and m.model_.n_networks == expected
    with torch.no_grad():
        assert m.model_.member_scores(torch.as_tensor(X)).shape == (len(y), expected)


def _rewrite_payload(src, dst, version: int, **params) -> None:
    from ranklearn.io.model_file import read_model_file, write_model_file

    model_type, payload = read_model_file(src)
    payload["payload_version"] = version
    payload["params"].update(params)
    write_model_file(dst, model_type, payload)


def test_version_3_ranknet_files_load_the_five_networks_auto_trained_then(tmp_path):
    """Before payload version 4 RankNet's "auto" meant 5 networks: such a file loads as n_networks=5."""
    X, y, q = make_queries(n_queries=10, seed=25)
    m = RankNet(hidden=(6,), n_networks=5, n_estimators=2, random_state=0).fit(X, y, q)
    m.save(tmp_path / "five.json")
    _rewrite_payload(tmp_path / "five.json", tmp_path / "v3.json", 3, n_networks="auto")
    r = RankNet.load(tmp_path / "v3.json")
    assert r.n_networks == 5 and r.model_.n_networks == 5
    assert np.array_equal(r.predict(X), m.predict(X))
    # a pairwise "auto" was one network, as today; LambdaRank's "auto" is still 5
    p = RankNet(hidden=(6,), mode="pairwise", n_estimators=1, random_state=0).fit(X, y, q)
    p.save(tmp_path / "pairwise.json")
    _rewrite_payload(tmp_path / "pairwise.json", tmp_path / "pairwise3.json", 3)
    assert RankNet.load(tmp_path / "pairwise3.json").n_networks == "auto"
    lr = LambdaRank(hidden=(6,), n_estimators=1, random_state=0).fit(X, y, q)
    lr.save(tmp_path / "lr.json")
    loaded = LambdaRank.load(tmp_path / "lr.json")
    assert loaded.n_networks == "auto" and loaded.model_.n_networks == 5
    # today's RankNet file with "auto" holds and loads 3 networks
    d = RankNet(hidden=(6,), n_estimators=1, random_state=0).fit(X, y, q)
    d.save(tmp_path / "auto.json")
    loaded = RankNet.load(tmp_path / "auto.json")
    assert loaded.n_networks == "auto" and loaded.model_.n_networks == 3
    assert np.array_equal(loaded.predict(X), d.predict(X))


# --------------------------------------------------------------------------- persistence
@pytest.mark.parametrize("cls,kw", [(RankNet, {}), (LambdaRank, {"lambda_metric": "ndcg@5", "truncation_level": 8}),
                                    (RankNet, {"hidden": (), "standardize": False})])
def test_save_load_identical_scores(tmp_path, cls, kw):
    from ranklearn.io.model_file import read_model_file

    X, y, q = make_queries(n_queries=12, seed=12)
    m = cls(n_estimators=3, random_state=0, **kw).fit(X, y, q, eval_set=[(X, y, q)], eval_names=["train"])
    path = tmp_path / "model.json"
    m.save(path)
    r = cls.load(path)
    assert type(r) is cls
    assert np.array_equal(r.predict(X), m.predict(X))  # bitwise
    assert r.get_params() == m.get_params()
    assert r.evals_result_ == m.evals_result_ and r.best_iteration_ == m.best_iteration_
    assert r.n_features_in_ == m.n_features_in_
    model_type, payload = read_model_file(path)
    assert model_type == cls._model_name
    assert payload["n_features"] == 5
    assert np.array_equal(cls.from_payload(payload).predict(X), m.predict(X))
    assert np.array_equal(RankNet.load(path).predict(X), m.predict(X))  # the base class loads both


def test_load_rejects_bad_files(tmp_path):
    import json

    X, y, q = make_queries(n_queries=5, seed=12)
    m = RankNet(n_estimators=1, random_state=0).fit(X, y, q)
    path = tmp_path / "m.json"
    m.save(path)
    with pytest.raises(ModelFormatError):
        LambdaRank.load(path)  # a RankNet file is not a LambdaRank
    env = json.loads(path.read_text())
    env["payload"]["weights"]["data"] = env["payload"]["weights"]["data"][:-40]
    path.write_text(json.dumps(env))
    with pytest.raises(ModelFormatError, match="checksum"):
        RankNet.load(path)
    with pytest.raises(ModelFormatError):
        RankNet.from_payload({**env["payload"], "weights": {"format": "safetensors", "encoding": "base64", "data": "AAAA"}})
    with pytest.raises(ModelFormatError):
        LambdaMART.from_payload(env["payload"])  # a RankNet payload is no LambdaMART


def test_import_without_torch():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError(f'No module named {name!r} (blocked)')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import ranklearn\n"
        "from ranklearn.models.ranknet import RankNet\n"
        "m = RankNet(n_estimators=1)\n"
        "try:\n"
        "    m.fit([[0.0], [1.0]], [0, 1], [1, 1])\n"
        "except ImportError as e:\n"
        "    print('IMPORTERROR', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "IMPORTERROR" in out.stdout and "pip install 'ranklearn[neural]'" in out.stdout


def test_predict_refuses_giant_sparse_input():
    import scipy.sparse as sp

    from ranklearn.models import RankNet

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    model = RankNet(hidden=(4,), n_estimators=1, random_state=0).fit(X, rng.integers(0, 2, 40), qid=np.repeat(np.arange(4), 10))
    giant = sp.csr_matrix((np.ones(3), ([0, 1, 2], [0, 1, 2])), shape=(40, 10**9))
    with pytest.raises(ValueError, match="columns"):
        model.predict(giant)


@needs_cuda
@pytest.mark.parametrize(
    "cls,kw",
    [(RankNet, {}), (LambdaRank, {"lambda_metric": "err@5", "truncation_level": 6, "dropout": 0.2}),
     (RankNet, {"mode": "pairwise", "n_networks": 1, "hidden": (4,), "n_estimators": 1})],
)
def test_cuda_fit_predict_save_load(tmp_path, cls, kw):
    X, y, q = make_queries(n_queries=30, seed=31)
    Xv, yv, qv = make_queries(n_queries=10, seed=32)
    params = {"n_estimators": 5, "random_state": 0, **kw}
    m = cls(device="cuda", **params).fit(X, y, q, eval_set=[(Xv, yv, qv)])
    assert all(p.device.type == "cuda" for p in m.model_.parameters())
    p = m.predict(X)
    assert isinstance(p, np.ndarray) and p.dtype == np.float64 and np.isfinite(p).all()
    assert m.score(Xv, yv, qid=qv) == pytest.approx(m.evals_result_["valid_0"]["ndcg@10"][m.best_iteration_ - 1], abs=1e-12)
    # a fixed seed gives the same model on the same device
    assert np.array_equal(cls(device="cuda", **params).fit(X, y, q, eval_set=[(Xv, yv, qv)]).predict(X), p)
    m.save(tmp_path / "m.json")
    on_gpu = cls.load(tmp_path / "m.json", device="cuda")
    assert next(on_gpu.model_.parameters()).device.type == "cuda"
    assert np.array_equal(on_gpu.predict(X), p)
    on_cpu = cls.load(tmp_path / "m.json", device="cpu")
    assert next(on_cpu.model_.parameters()).device.type == "cpu"
    np.testing.assert_allclose(on_cpu.predict(X), p, rtol=1e-5, atol=1e-5)


@needs_cuda
@pytest.mark.parametrize("cls", [RankNet, LambdaRank])
def test_cuda_training_follows_cpu_training(cls):
    """Same seed, no dropout: the GPU takes the same steps as the CPU, up to float32 rounding.

    Scores are compared up to a constant: the output bias gets a gradient of zero (the lambdas
    of a query sum to zero) plus rounding noise, which Adam turns into steps of about the
    learning rate in either direction, differently on each device. A shift of every score
    by one constant changes no ranking.
    """
    X, y, q = make_queries(n_queries=30, seed=33)
    kw = dict(hidden=(8,), n_networks=2, n_estimators=3, batch_queries=4, random_state=5)
    cpu = cls(device="cpu", **kw).fit(X, y, q).predict(X)
    gpu = cls(device="cuda", **kw).fit(X, y, q).predict(X)
    np.testing.assert_allclose(gpu - gpu.mean(), cpu - cpu.mean(), rtol=0, atol=1e-4)
