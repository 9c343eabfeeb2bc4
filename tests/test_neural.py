"""Tests of the neural rankers (RankNet, LambdaRank): lambdas, training, persistence, API."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

import ranklearn.metrics  # noqa: E402
from ranklearn.exceptions import ModelFormatError, TrainingDivergedError  # noqa: E402
from ranklearn.models import LambdaMART, LambdaRank, RankNet  # noqa: E402
from ranklearn.neural.lambdas import compute_lambdas, pair_weight_matrix  # noqa: E402


# --------------------------------------------------------------------------- helpers
def _ref_dcg(y, s, k):
    order = np.argsort(-np.asarray(s, dtype=np.float64), kind="stable")
    g = 2.0 ** np.asarray(y, dtype=np.float64)[order] - 1.0
    d = 1.0 / np.log2(np.arange(len(g)) + 2.0)
    k = len(g) if k is None else k
    return float((g[:k] * d[:k]).sum())


class _LocalNDCG:
    """Stand-in for ranklearn.metrics.get_metric("ndcg@k") (gain 2^rel-1, empty=0, stable ties)
    while the metrics module is not there yet."""

    def __init__(self, spec: str) -> None:
        self.name = spec
        name, _, k = spec.partition("@")
        assert name == "ndcg"
        self.k = int(k) if k else None

    def per_query(self, y, scores, ptr):
        y, scores = np.asarray(y, float), np.asarray(scores, float)
        out = []
        for a, b in zip(ptr[:-1], ptr[1:]):
            ideal = _ref_dcg(y[a:b], y[a:b], self.k)
            out.append(0.0 if ideal == 0 else _ref_dcg(y[a:b], scores[a:b], self.k) / ideal)
        return np.asarray(out)

    def mean(self, y, scores, ptr):
        return float(self.per_query(y, scores, ptr).mean())


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # small models on a shared machine: one intra-op thread avoids OpenMP oversubscription
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _metrics(monkeypatch):
    if not hasattr(ranklearn.metrics, "get_metric"):
        monkeypatch.setattr(ranklearn.metrics, "get_metric", lambda spec, **kw: _LocalNDCG(spec), raising=False)
    yield


def make_queries(n_queries=30, docs=(3, 12), n_features=5, seed=0, flip=False, max_label=3):
    """Synthetic queries: graded labels from a noisy linear function (anti-correlated if flip)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(docs[0], docs[1] + 1, size=n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    w = np.linspace(1.0, -0.5, n_features)
    u = X @ w * (-1 if flip else 1) + 0.3 * rng.normal(size=n)
    y = np.clip(np.floor(u + 1.0), 0, max_label)
    qid = np.repeat(np.arange(n_queries), sizes)
    return X, y, qid


def ref_lambdas(s, y, sigma, metric=None, k=None, trunc=None, max_grade=None):
    """Brute force: for every pair i > j, swap i and j in the current ranking and recompute Z."""
    s = np.asarray(s, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(s)
    order = sorted(range(n), key=lambda i: -s[i])  # stable: ties keep input order
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(n)
    top = float(y.max()) if max_grade is None else max_grade
    cut = n if k is None else k

    def Z(rk):
        docs = np.empty(n, dtype=int)
        docs[rk] = np.arange(n)
        if metric == "ndcg":
            ideal = np.sort(2.0**y - 1.0)[::-1]
            idcg = sum(ideal[p] / math.log2(p + 2) for p in range(min(cut, n)))
            dcg = sum((2.0 ** y[docs[p]] - 1.0) / math.log2(p + 2) for p in range(min(cut, n)))
            return 0.0 if idcg == 0 else dcg / idcg
        err, reach = 0.0, 1.0
        for p in range(min(cut, n)):
            R = (2.0 ** y[docs[p]] - 1.0) / 2.0**top
            err += reach * R / (p + 1)
            reach *= 1.0 - R
        return err

    base = Z(rank) if metric else None
    lam = np.zeros(n)
    for i in range(n):
        for j in range(n):
            if y[i] <= y[j]:
                continue
            if trunc is not None and min(rank[i], rank[j]) >= trunc:
                continue
            dz = 1.0
            if metric:
                sw = rank.copy()
                sw[i], sw[j] = rank[j], rank[i]
                dz = abs(Z(sw) - base)
            lij = -sigma / (1.0 + math.exp(sigma * (s[i] - s[j]))) * dz
            lam[i] += lij
            lam[j] -= lij
    return lam


def padded(queries):
    """List of (scores, labels) -> padded float64 tensors and mask."""
    L = max(len(s) for s, _ in queries)
    S = torch.zeros(len(queries), L, dtype=torch.float64)
    Y = torch.zeros(len(queries), L, dtype=torch.float64)
    M = torch.zeros(len(queries), L, dtype=torch.bool)
    for b, (s, y) in enumerate(queries):
        S[b, : len(s)] = torch.as_tensor(s, dtype=torch.float64)
        Y[b, : len(y)] = torch.as_tensor(y, dtype=torch.float64)
        M[b, : len(s)] = True
    return S, Y, M


def random_queries(rng, n_queries=6, max_len=9, ties=True):
    out = []
    for _ in range(n_queries):
        n = int(rng.integers(1, max_len + 1))
        if ties:
            s = rng.integers(-2, 3, size=n).astype(float) * 0.7  # score ties
        else:
            s = rng.normal(size=n) * 2
        y = rng.integers(0, 4, size=n).astype(float)  # label ties
        out.append((s, y))
    return out


# --------------------------------------------------------------------------- lambdas
@pytest.mark.parametrize("sigma", [1.0, 0.5, 2.5])
@pytest.mark.parametrize("seed", range(4))
def test_factorized_lambdas_equal_autograd_of_summed_pairwise_loss(seed, sigma):
    rng = np.random.default_rng(seed)
    queries = random_queries(rng, ties=bool(seed % 2))
    S, Y, M = padded(queries)
    lam, loss = compute_lambdas(S, Y, M, sigma=sigma, return_loss=True)
    for b, (s, y) in enumerate(queries):
        st = torch.tensor(s, dtype=torch.float64, requires_grad=True)
        yt = torch.tensor(y, dtype=torch.float64)
        wins = yt[:, None] > yt[None, :]
        diff = st[:, None] - st[None, :]
        C = torch.nn.functional.softplus(-sigma * diff)[wins].sum()  # sum of C_ij over pairs i > j
        (grad,) = torch.autograd.grad(C, st) if wins.any() else (torch.zeros_like(st),)
        np.testing.assert_allclose(lam[b, : len(s)].numpy(), grad.numpy(), rtol=0, atol=1e-6)
        assert abs(float(loss[b]) - C.item()) < 1e-6
        assert torch.all(lam[b, len(s) :] == 0)


@pytest.mark.parametrize("metric,k", [("ndcg", None), ("ndcg", 3), ("err", None), ("err", 4)])
@pytest.mark.parametrize("trunc", [None, 2])
@pytest.mark.parametrize("seed", range(3))
def test_lambdarank_lambdas_equal_bruteforce(metric, k, trunc, seed):
    rng = np.random.default_rng(100 + seed)
    queries = random_queries(rng, n_queries=5, max_len=8, ties=bool(seed % 2))
    S, Y, M = padded(queries)
    sigma = 1.3
    lam = compute_lambdas(S, Y, M, sigma=sigma, metric=metric, k=k, truncation_level=trunc, max_grade=3.0)
    for b, (s, y) in enumerate(queries):
        ref = ref_lambdas(s, y, sigma, metric, k, trunc, max_grade=3.0)
        np.testing.assert_allclose(lam[b, : len(s)].numpy(), ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("z,k,trunc", [("none", None, None), ("ndcg", None, None), ("ndcg", 5, None),
                                      ("err", None, 3), ("err", 4, None), ("ndcg", 10, 2)])
def test_lambdas_agree_with_lambdamart_objective(z, k, trunc):
    from ranklearn.objectives.lambdas import LambdaObjective

    rng = np.random.default_rng(21)
    queries = random_queries(rng, n_queries=8, max_len=15, ties=True)
    S, Y, M = padded(queries)
    obj = LambdaObjective(z=z, k=k, sigma=1.7, truncation=trunc, normalize=False)
    y_all = np.concatenate([y for _, y in queries])
    obj.prepare(y_all)
    ptr = np.concatenate([[0], np.cumsum([len(s) for s, _ in queries])])
    grad, _ = obj.gradients(np.concatenate([s for s, _ in queries]), y_all, ptr)
    metric = None if z == "none" else z
    # the objective's default truncation is k; for NDCG@k / ERR@k nothing outside is lost
    lam = compute_lambdas(S, Y, M, sigma=1.7, metric=metric, k=k, truncation_level=trunc, max_grade=obj.max_grade)
    np.testing.assert_allclose(lam[M].numpy(), grad, rtol=0, atol=1e-10)


def test_ranknet_truncation_equals_bruteforce():
    rng = np.random.default_rng(7)
    s, y = rng.normal(size=10), rng.integers(0, 3, size=10).astype(float)
    lam = compute_lambdas(torch.tensor(s), torch.tensor(y), sigma=1.0, truncation_level=3)
    np.testing.assert_allclose(lam.numpy(), ref_lambdas(s, y, 1.0, None, None, 3), atol=1e-12)


def test_ranklib_walkthrough_lambdas():
    # NOTES.md worked example 1: query 1830, all scores 0, sigma 1; RankLib's sign is the negation.
    y = torch.tensor([0, 0, 0, 1, 1, 0, 1, 1, 0, 0], dtype=torch.float64)
    lam = compute_lambdas(torch.zeros(10, dtype=torch.float64), y, sigma=1.0, metric="ndcg")
    ranklib = [-0.495, -0.206, -0.104, 0.231, 0.231, -0.033, 0.240, 0.247, -0.051, -0.061]
    np.testing.assert_allclose(-lam.numpy(), ranklib, atol=1.5e-3)
    w = pair_weight_matrix(torch.zeros(10, dtype=torch.float64), y, metric="ndcg")
    for (i, j), v in {(1, 4): 0.222, (1, 5): 0.239, (1, 7): 0.260, (1, 8): 0.267}.items():
        assert abs(float(w[i - 1, j - 1]) - v) < 1.5e-3


@pytest.mark.parametrize("metric,k,trunc", [(None, None, None), ("ndcg", 10, None), ("err", None, 5), ("ndcg", None, 7)])
def test_chunked_equals_unchunked(metric, k, trunc):
    rng = np.random.default_rng(3)
    queries = [(rng.normal(size=n), rng.integers(0, 5, size=n).astype(float)) for n in (300, 37, 120)]
    S, Y, M = padded(queries)
    kw = dict(sigma=0.8, metric=metric, k=k, truncation_level=trunc, return_loss=True)
    full, loss_full = compute_lambdas(S, Y, M, max_elements=10**9, **kw)
    chunked, loss_chunked = compute_lambdas(S, Y, M, max_elements=3_000, **kw)  # 3 rows a block
    np.testing.assert_allclose(chunked.numpy(), full.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(loss_chunked.numpy(), loss_full.numpy(), rtol=1e-12)


def test_long_query_memory_is_bounded():
    # RankNet on a 10,000-document query: 5 * 10^7 pairs, formed in row blocks within
    # max_elements (4 MB temporaries); the whole pair matrix would be 400 MB per temporary
    code = """
import resource, sys, torch
torch.set_num_threads(1)
from ranklearn.neural.lambdas import compute_lambdas
g = torch.Generator().manual_seed(0)
s = torch.randn(10_000, generator=g)
y = torch.randint(0, 3, (10_000,), generator=g).float()
compute_lambdas(s[:50], y[:50])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
lam = compute_lambdas(s, y, sigma=1.0)
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
print(grown, float(lam.sum()), bool(torch.isfinite(lam).all()), float(lam.abs().sum()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    grown_mb, total, finite, size = out.stdout.split()
    assert float(grown_mb) < 150 and finite == "True"
    assert abs(float(total)) < 1e-2 and float(size) > 0  # the two lambdas of a pair cancel


def test_long_query_truncated_lambdarank():
    # with NDCG@10 / truncation only the top rows are visited: 10^4 * 10 pair terms
    n = 10_000
    g = torch.Generator().manual_seed(0)
    s = torch.randn(n, generator=g)
    y = torch.randint(0, 3, (n,), generator=g).float()
    lam = compute_lambdas(s, y, sigma=1.0, metric="ndcg", k=10, truncation_level=20, max_elements=1 << 20)
    assert lam.shape == (n,) and torch.isfinite(lam).all()
    assert abs(float(lam.sum())) < 1e-3  # lambdas of a pair cancel
    assert float(lam.abs().sum()) > 0


@pytest.mark.parametrize("metric,trunc", [(None, None), ("ndcg", None), ("err", None), ("ndcg", 1), ("err", 3)])
def test_single_document_and_single_label_queries_give_zero(metric, trunc):
    queries = [
        (np.array([0.3]), np.array([2.0])),  # one document
        (np.array([0.1, 0.5, -0.2, 0.5]), np.zeros(4)),  # all-zero labels (ideal DCG 0)
        (np.array([1.0, 1.0, 2.0]), np.full(3, 2.0)),  # one label only
        (np.array([0.0, 0.0]), np.array([0.0, 1.0])),  # a real pair, for contrast
    ]
    S, Y, M = padded(queries)
    lam, loss = compute_lambdas(S, Y, M, sigma=1.0, metric=metric, truncation_level=trunc, return_loss=True)
    assert torch.isfinite(lam).all() and torch.isfinite(loss).all()
    assert torch.all(lam[:3] == 0) and torch.all(loss[:3] == 0)
    assert lam[3, 1] < 0 < lam[3, 0]  # the relevant document is pushed up (negative lambda)


def test_fit_on_queries_without_pairs_does_not_move_or_nan():
    X = np.random.default_rng(0).normal(size=(7, 3)).astype(np.float32)
    y = np.array([1, 0, 0, 0, 2, 2, 2], dtype=float)
    qid = np.array([0, 1, 1, 1, 2, 2, 2])  # one document; all zero; a single label
    for cls in (RankNet, LambdaRank):
        m = cls(hidden=(4,), epochs=3, random_state=0, warm_start=True).fit(X, y, qid)
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
        hidden=(), n_networks=1, standardize=False, optimizer="sgd", learning_rate=0.1, sigma=0.1, epochs=1,
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


def test_lambda_normalization_weighs_each_query_by_its_count():
    """Factorized lambdas with normalization == the plain lambdas divided per query (docs or pairs)."""
    from ranklearn.data.groups import group_ptr
    from ranklearn.neural.scorer import MLPScorer
    from ranklearn.neural.losses import LambdaLoss
    from ranklearn.neural.training import QuerySet, batch_lambdas

    X, y, q = make_queries(n_queries=7, docs=(2, 15), seed=40)
    ptr = group_ptr(q)
    torch.manual_seed(0)
    model = MLPScorer(X.shape[1], (4,))
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    cfg = LambdaLoss(sigma=1.0)
    plain = QuerySet(X, y, ptr, torch.device("cpu"))
    queries = np.arange(len(ptr) - 1)
    batch = plain.batch(queries)
    rows = batch.rows.numpy()
    lam0 = batch_lambdas(model, plain, batch, cfg)[1][:, 0].detach().numpy()
    sizes = np.diff(ptr)
    qrow = np.repeat(queries, sizes)[rows]
    for norm in ("docs", "pairs"):
        data = QuerySet(X, y, ptr, torch.device("cpu"), w, lambda_normalization=norm)
        lam = batch_lambdas(model, data, data.batch(queries), cfg)[1][:, 0].detach().numpy()
        pairs = np.array([
            sum(1 for i in range(a, b) for j in range(a, b) if y[i] > y[j]) for a, b in zip(ptr[:-1], ptr[1:])
        ])  # fmt: skip
        count = sizes if norm == "docs" else np.maximum(pairs, 1)
        np.testing.assert_allclose(lam, lam0 * w[rows] / count[qrow], rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="lambda_normalization"):
        RankNet(lambda_normalization="query").fit(X, y, q)


def test_pairwise_mode_is_one_update_per_pair():
    # one pair: per-pair SGD and the factorized update coincide
    X, y, q = SEED_X[:2], SEED_Y[:2], SEED_QID[:2]
    preds = []
    for mode in ("pairwise", "factorized"):
        m = RankNet(hidden=(), n_networks=1, standardize=False, optimizer="sgd", learning_rate=0.1, sigma=0.1, epochs=1,
                    mode=mode, early_stopping_rounds=None, warm_start=True, random_state=0, lambda_normalization="none")
        m.fit(X, y, q)
        _linear_at(m, 0.0, [-1.0, 1.0])
        m.fit(X, y, q)
        preds.append(m.predict(SEED_X))
    np.testing.assert_allclose(preds[0], preds[1], atol=1e-6)
    # three pairs: three sequential updates, each from the pair's own gradient
    m = RankNet(hidden=(), n_networks=1, standardize=False, optimizer="sgd", learning_rate=0.1, sigma=0.1, epochs=1,
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
    for m in (RankNet(epochs=15, random_state=0), LambdaRank(epochs=15, random_state=0, lambda_metric="err@5", truncation_level=5)):
        m.fit(X, y, q, eval_set=[(Xv, yv, qv)])
        assert m.score(Xv, yv, qid=qv) > 0.8
        assert m.train_loss_[-1] < m.train_loss_[0]
        assert m.n_features_in_ == 5
        assert list(m.evals_result_) == ["valid_0"]


def test_determinism_for_fixed_seed():
    X, y, q = make_queries(seed=4)
    kw = dict(hidden=(8, 4), dropout=0.2, epochs=4, random_state=11)
    a = LambdaRank(**kw).fit(X, y, q).predict(X)
    b = LambdaRank(**kw).fit(X, y, q).predict(X)
    c = LambdaRank(**{**kw, "random_state": 12}).fit(X, y, q).predict(X)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_fit_leaves_global_torch_rng_alone():
    X, y, q = make_queries(n_queries=5, seed=4)
    state = torch.random.get_rng_state()
    RankNet(epochs=1, random_state=0).fit(X, y, q)
    assert torch.equal(state, torch.random.get_rng_state())


def _retrain(cls, kw, n_epochs, X, y, q):
    return cls(**{**kw, "epochs": n_epochs, "early_stopping_rounds": None}).fit(X, y, q).predict(X)


def test_early_stopping_restores_best_epoch():
    X, y, q = make_queries(n_queries=30, seed=5)
    Xv, yv, qv = make_queries(n_queries=20, seed=6, flip=True)  # validation prefers the opposite order
    kw = dict(hidden=(8,), learning_rate=0.01, epochs=40, early_stopping_rounds=3, random_state=0)
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


def test_without_early_stopping_the_last_epoch_is_kept():
    X, y, q = make_queries(n_queries=30, seed=5)
    Xv, yv, qv = make_queries(n_queries=20, seed=6, flip=True)
    kw = dict(hidden=(8,), learning_rate=0.01, epochs=6, early_stopping_rounds=None, random_state=0)
    m = RankNet(**kw).fit(X, y, q, eval_set=[(Xv, yv, qv)])
    hist = m.evals_result_["valid_0"]["ndcg@10"]
    assert m.n_epochs_ == 6 and hist[m.best_iteration_ - 1] == max(hist)
    assert m.score(Xv, yv, qid=qv) == pytest.approx(hist[-1], abs=1e-12)
    assert RankNet(**kw).fit(X, y, q).best_iteration_ is None


def test_keyboard_interrupt_keeps_best_so_far():
    X, y, q = make_queries(n_queries=30, seed=5)
    Xv, yv, qv = make_queries(n_queries=20, seed=6, flip=True)
    kw = dict(hidden=(8,), learning_rate=0.01, epochs=40, early_stopping_rounds=30, random_state=0)

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
    kw = dict(hidden=(), n_networks=1, standardize=False, optimizer="sgd", epochs=1, batch_queries=6, random_state=0,
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
    m = RankNet(hidden=(4,), epochs=2, random_state=0).fit(X.tolist(), list(y), list(q))
    p = m.predict(X)
    assert isinstance(p, np.ndarray) and p.dtype == np.float64 and p.shape == (len(y),)
    assert np.array_equal(m.predict(X.tolist()), p)
    assert np.array_equal(m.predict(sp.csr_matrix(X)), p)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RankNet(epochs=1).fit(Xn, y, q)
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
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        RankNet().predict(X)


@pytest.mark.parametrize("cls, mode", [(RankNet, "factorized"), (RankNet, "pairwise"), (LambdaRank, "factorized")])
def test_divergence_is_a_clear_error(cls, mode):
    X, y, q = make_queries(n_queries=20, seed=0)
    model = cls(optimizer="sgd", learning_rate=1e8, epochs=5, mode=mode, hidden=(8,), n_networks=1, random_state=0)
    # before the check, the NaN weights surfaced as "scores contain NaN" from the evaluation
    with pytest.raises(TrainingDivergedError, match=r"diverged in epoch \d.*learning_rate=100000000\.0"):
        model.fit(X, y, q, eval_set=[(X, y, q)])


def test_unsorted_qids_are_regrouped():
    X, y, q = make_queries(n_queries=6, seed=10)
    perm = np.random.default_rng(0).permutation(len(y))
    kw = dict(hidden=(), epochs=2, random_state=0, batch_queries=100)
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
    RankNet(epochs=2, verbose=1, random_state=0).fit(X, y, q, eval_set=[(X, y, q)])
    out, err = capfd.readouterr()
    assert "RankNet" in err and "ndcg@10" in err and out == ""


# --------------------------------------------------------------------------- several networks
@pytest.mark.parametrize("metric,k", [(None, None), ("ndcg", 5), ("err", None)])
def test_networks_of_an_ensemble_train_as_independent_rankers(metric, k):
    """Each network of an n_networks scorer gets exactly the update it would get alone."""
    from ranklearn.data.groups import group_ptr
    from ranklearn.neural.scorer import MLPScorer
    from ranklearn.neural.losses import LambdaLoss
    from ranklearn.neural.training import QuerySet, factorized_epoch

    X, y, q = make_queries(n_queries=14, seed=21)
    data = QuerySet(X, y, group_ptr(q), torch.device("cpu"))
    cfg = LambdaLoss(sigma=1.0, metric=metric, k=k, max_grade=3.0)
    torch.manual_seed(0)
    ens = MLPScorer(5, (6,), "tanh", 0.0, n_networks=3)
    mean, scale = X.mean(0), X.std(0)
    ens.set_standardization(mean, scale)
    singles = []
    for member in ens.members:
        one = MLPScorer(5, (6,), "tanh", 0.0)
        one.members[0].load_state_dict(member.state_dict())
        one.set_standardization(mean, scale)
        singles.append(one)
    assert not torch.equal(ens.members[0][0].weight, ens.members[1][0].weight)  # own initializations
    # SGD: Adam would turn the round-off-sized gradient of the output bias (lambdas sum to
    # zero per query) into full steps, hiding the comparison in noise
    opt = torch.optim.SGD(ens.parameters(), lr=0.05)
    opts = [torch.optim.SGD(one.parameters(), lr=0.05) for one in singles]
    order = np.random.default_rng(0).permutation(data.trainable_queries())
    for _ in range(3):
        cost = factorized_epoch(ens, opt, data, order, 4, cfg)
        costs = [factorized_epoch(one, o, data, order, 4, cfg) for one, o in zip(singles, opts)]
        assert cost == pytest.approx(np.mean(costs), rel=1e-5)
    for member, one in zip(ens.members, singles):
        for a, b in zip(member.parameters(), one.parameters()):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    Xt = torch.as_tensor(X)
    torch.testing.assert_close(ens(Xt), torch.stack([one(Xt) for one in singles], 1).mean(1), rtol=1e-5, atol=1e-6)


def test_batch_lambdas_of_mixed_lengths_equal_per_query_lambdas():
    """Batches are cut into runs of similar length (length_groups): same lambdas as one query at a time."""
    from ranklearn.data.groups import group_ptr
    from ranklearn.neural.scorer import MLPScorer
    from ranklearn.neural.losses import LambdaLoss
    from ranklearn.neural.training import QuerySet, batch_lambdas, length_groups

    rng = np.random.default_rng(3)
    sizes = np.array([150, 3, 90, 7, 2, 60, 130, 11, 40, 5])
    q = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(len(q), 5)).astype(np.float32)
    y = rng.integers(0, 4, size=len(q)).astype(float)
    data = QuerySet(X, y, group_ptr(q), torch.device("cpu"))
    torch.manual_seed(0)
    model = MLPScorer(5, (6,), "relu", 0.0, n_networks=2)
    cfg = LambdaLoss(metric="ndcg", k=10, max_grade=3.0)
    batch = data.batch(np.arange(len(sizes)))
    assert len(batch.groups) > 1  # the mixed lengths were cut into runs
    assert [g[2] for g in batch.groups] == [max(sizes[np.argsort(-sizes, kind="stable")][a:b]) for a, b, _ in batch.groups]
    s, lam, loss = batch_lambdas(model, data, batch, cfg)
    rows = batch.rows.numpy()
    for qq in range(len(sizes)):
        one = data.batch(np.array([qq]))
        s1, lam1, loss1 = batch_lambdas(model, data, one, cfg)
        sel = np.flatnonzero(np.isin(rows, one.rows.numpy()))
        torch.testing.assert_close(lam[sel], lam1, rtol=1e-5, atol=1e-7)
    assert length_groups(np.array([8, 8, 8])) == [(0, 3, 8)]  # small runs are not cut
    assert length_groups(np.array([400, 20, 10])) == [(0, 2, 400), (2, 3, 10)]  # 2 x 400^2 <= 2 x real work


def test_ensemble_scores_are_the_mean_of_its_networks():
    X, y, q = make_queries(n_queries=20, seed=22)
    m = LambdaRank(hidden=(8,), n_networks=4, epochs=3, random_state=0).fit(X, y, q)
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
    m = RankNet(hidden=(6,), n_networks=1, epochs=2, random_state=0).fit(X, y, q)
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


# --------------------------------------------------------------------------- persistence
@pytest.mark.parametrize("cls,kw", [(RankNet, {}), (LambdaRank, {"lambda_metric": "ndcg@5", "truncation_level": 8}),
                                    (RankNet, {"hidden": (), "standardize": False})])
def test_save_load_identical_scores(tmp_path, cls, kw):
    from ranklearn.io.model_file import read_model_file

    X, y, q = make_queries(n_queries=12, seed=12)
    m = cls(epochs=3, random_state=0, **kw).fit(X, y, q, eval_set=[(X, y, q)], eval_names=["train"])
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
    assert np.array_equal(cls._from_payload(payload).predict(X), m.predict(X))
    assert np.array_equal(RankNet.load(path).predict(X), m.predict(X))  # the base class loads both


def test_load_rejects_bad_files(tmp_path):
    import json

    X, y, q = make_queries(n_queries=5, seed=12)
    m = RankNet(epochs=1, random_state=0).fit(X, y, q)
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
        RankNet._from_payload({**env["payload"], "weights": {"format": "safetensors", "encoding": "base64", "data": "AAAA"}})
    with pytest.raises(ModelFormatError):
        LambdaMART._from_payload(env["payload"])  # a RankNet payload is no LambdaMART


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
        "m = RankNet(epochs=1)\n"
        "try:\n"
        "    m.fit([[0.0], [1.0]], [0, 1], [1, 1])\n"
        "except ImportError as e:\n"
        "    print('IMPORTERROR', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "IMPORTERROR" in out.stdout and "pip install 'ranklearn[neural]'" in out.stdout


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


def test_predict_refuses_giant_sparse_input():
    import scipy.sparse as sp

    from ranklearn.models import RankNet

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    model = RankNet(hidden=(4,), epochs=1, random_state=0).fit(X, rng.integers(0, 2, 40), qid=np.repeat(np.arange(4), 10))
    giant = sp.csr_matrix((np.ones(3), ([0, 1, 2], [0, 1, 2])), shape=(40, 10**9))
    with pytest.raises(ValueError, match="columns"):
        model.predict(giant)


# --------------------------------------------------------------------------- CUDA
# CI has no GPU: these run where one exists (they were run on an H100 lent to a session).
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@needs_cuda
@pytest.mark.parametrize("metric,k,trunc", [(None, None, None), ("ndcg", None, None), ("ndcg", 5, 8), ("err", 4, None)])
def test_cuda_lambdas_equal_cpu_lambdas(metric, k, trunc):
    rng = np.random.default_rng(30)
    queries = random_queries(rng, ties=True)
    S, Y, M = padded(queries)
    kw = dict(sigma=1.5, metric=metric, k=k, truncation_level=trunc, max_grade=3.0, return_loss=True)
    lam_cpu, loss_cpu = compute_lambdas(S, Y, M, **kw)
    lam_gpu, loss_gpu = compute_lambdas(S.cuda(), Y.cuda(), M.cuda(), **kw)
    assert lam_gpu.device.type == "cuda"
    np.testing.assert_allclose(lam_gpu.cpu().numpy(), lam_cpu.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(loss_gpu.cpu().numpy(), loss_cpu.numpy(), rtol=1e-9, atol=1e-12)


@needs_cuda
@pytest.mark.parametrize(
    "cls,kw",
    [(RankNet, {}), (LambdaRank, {"lambda_metric": "err@5", "truncation_level": 6, "dropout": 0.2}),
     (RankNet, {"mode": "pairwise", "n_networks": 1, "hidden": (4,), "epochs": 1})],
)
def test_cuda_fit_predict_save_load(tmp_path, cls, kw):
    X, y, q = make_queries(n_queries=30, seed=31)
    Xv, yv, qv = make_queries(n_queries=10, seed=32)
    params = {"epochs": 5, "random_state": 0, **kw}
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
    kw = dict(hidden=(8,), n_networks=2, epochs=3, batch_queries=4, random_state=5)
    cpu = cls(device="cpu", **kw).fit(X, y, q).predict(X)
    gpu = cls(device="cuda", **kw).fit(X, y, q).predict(X)
    np.testing.assert_allclose(gpu - gpu.mean(), cpu - cpu.mean(), rtol=0, atol=1e-4)
