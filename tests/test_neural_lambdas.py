"""ranklearn.neural.lambdas: factorized RankNet / LambdaRank lambdas against autograd, a brute-force
reference, RankLib's walkthrough and LambdaMART's objective; chunking, long queries, CUDA."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from ranklearn.neural.lambdas import compute_lambdas, pair_weight_matrix  # noqa: E402
from _helpers import needs_cuda  # noqa: E402
from _helpers import _one_torch_thread  # noqa: E402, F401 (autouse: one torch thread)


def ref_lambdas(s, y, sigma, metric=None, k=None, trunc=None, max_grade=None, lightgbm=False):
    """Brute force: for every pair i > j, swap i and j in the current ranking and recompute Z.
    ``lightgbm``: then times LightGBM's lambdarank_norm, log2(1 + S) / S with S = sum of 2 |lambda_ij|."""
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
    pair_sum = 0.0
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
            pair_sum += 2.0 * abs(lij)
    if lightgbm and pair_sum > 0:
        lam *= math.log2(1.0 + pair_sum) / pair_sum
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


@pytest.mark.parametrize("metric,k,trunc", [(None, None, None), (None, None, 3), ("ndcg", None, None), ("ndcg", 3, 2),
                                           ("err", 4, None)])
@pytest.mark.parametrize("seed", range(2))
def test_lightgbm_normalized_lambdas_equal_bruteforce(metric, k, trunc, seed):
    """normalize=True (lambda_normalization="lightgbm") on every path: RankNet's CPU pair loop
    (no truncation) and the pair matrices (the others), against the pairs written out."""
    rng = np.random.default_rng(300 + seed)
    queries = random_queries(rng, n_queries=6, max_len=9, ties=bool(seed % 2))
    S, Y, M = padded(queries)
    lam, loss = compute_lambdas(S, Y, M, sigma=1.3, metric=metric, k=k, truncation_level=trunc, max_grade=3.0,
                                return_loss=True, normalize=True)  # fmt: skip
    _, plain_loss = compute_lambdas(S, Y, M, sigma=1.3, metric=metric, k=k, truncation_level=trunc, max_grade=3.0,
                                    return_loss=True)  # fmt: skip
    scaled = 0
    for b, (s, y) in enumerate(queries):
        ref = ref_lambdas(s, y, 1.3, metric, k, trunc, max_grade=3.0, lightgbm=True)
        np.testing.assert_allclose(lam[b, : len(s)].numpy(), ref, rtol=0, atol=1e-10)
        plain = ref_lambdas(s, y, 1.3, metric, k, trunc, max_grade=3.0)
        scaled += not np.allclose(ref, plain, atol=1e-6)
    assert scaled > 0  # the factor is not 1 on these queries
    torch.testing.assert_close(loss, plain_loss)  # the reported loss is not scaled


@pytest.mark.parametrize("z,k", [("none", None), ("ndcg", 5), ("err", None)])
def test_lightgbm_normalization_is_the_trees_rule(z, k):
    """The networks' "lightgbm" lambdas are LambdaMART's objective's (normalize=True), through the
    one function that holds the rule."""
    from ranklearn.neural import lambdas as neural_lambdas
    from ranklearn.objectives import lambdas as tree_lambdas

    assert neural_lambdas.lambdarank_norm_factors is tree_lambdas.lambdarank_norm_factors
    rng = np.random.default_rng(22)
    queries = random_queries(rng, n_queries=8, max_len=15, ties=True)
    S, Y, M = padded(queries)
    obj = tree_lambdas.LambdaObjective(z=z, k=k, sigma=0.8, normalize=True)
    y_all = np.concatenate([y for _, y in queries])
    obj.prepare(y_all)
    ptr = np.concatenate([[0], np.cumsum([len(s) for s, _ in queries])])
    grad, _ = obj.gradients(np.concatenate([s for s, _ in queries]), y_all, ptr)
    lam = compute_lambdas(S, Y, M, sigma=0.8, metric=None if z == "none" else z, k=k, max_grade=obj.max_grade,
                          normalize=True)  # fmt: skip
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


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("sigma", [1.0, 0.6])
def test_cpu_ranknet_pair_loop_equals_the_pair_matrices(dtype, sigma):
    """RankNet on the CPU (numba loop over pairs) == the torch pair matrices (which a truncation
    level as long as the lists selects, keeping every pair): lambdas and loss, padding anywhere."""
    rng = np.random.default_rng(8)
    B, L = 9, 40
    S = torch.as_tensor(rng.normal(size=(B, L)) * 3, dtype=dtype)
    S[0, :5] = torch.as_tensor([60.0, -60.0, 0.0, 0.0, 80.0], dtype=dtype)  # exp(sigma |s_i - s_j|) overflows
    Y = torch.as_tensor(rng.integers(0, 4, size=(B, L)), dtype=dtype)
    M = torch.as_tensor(rng.random((B, L)) < 0.8)  # padding also between real documents
    M[1] = False  # an empty row
    lam, loss = compute_lambdas(S, Y, M, sigma=sigma, return_loss=True)
    ref, ref_loss = compute_lambdas(S, Y, M, sigma=sigma, truncation_level=L, return_loss=True)
    assert lam.dtype == dtype and loss.dtype == dtype
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lam.numpy(), ref.numpy(), **tol)
    np.testing.assert_allclose(loss.numpy(), ref_loss.numpy(), **tol)
    assert torch.all(lam[~M] == 0) and torch.all(lam[1] == 0) and loss[1] == 0
    assert float(loss[0]) > 100  # the misordered pairs far apart cost about sigma * their distance


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
exact = compute_lambdas(s.double(), y.double(), sigma=1.0)
# summed in float64: a float32 sum of 10^4 lambdas of up to ~5000 adds round-off of its own
print(grown, float(lam.double().sum()), bool(torch.isfinite(lam).all()), float(lam.abs().sum()),
      float((lam.double() - exact).abs().max()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    grown_mb, total, finite, size, error = out.stdout.split()
    assert float(grown_mb) < 150 and finite == "True"
    assert abs(float(total)) < 1e-2 and float(size) > 0  # the two lambdas of a pair cancel
    assert float(error) < 1e-3  # float32 lambdas of 10^4 pairs each, within round-off of the float64 ones


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


@needs_cuda
@pytest.mark.parametrize("metric,k,trunc", [(None, None, None), ("ndcg", None, None), ("ndcg", 5, 8), ("err", 4, None)])
@pytest.mark.parametrize("normalize", [False, True])
def test_cuda_lambdas_equal_cpu_lambdas(metric, k, trunc, normalize):
    rng = np.random.default_rng(30)
    queries = random_queries(rng, ties=True)
    S, Y, M = padded(queries)
    kw = dict(sigma=1.5, metric=metric, k=k, truncation_level=trunc, max_grade=3.0, return_loss=True, normalize=normalize)
    lam_cpu, loss_cpu = compute_lambdas(S, Y, M, **kw)
    lam_gpu, loss_gpu = compute_lambdas(S.cuda(), Y.cuda(), M.cuda(), **kw)
    assert lam_gpu.device.type == "cuda"
    np.testing.assert_allclose(lam_gpu.cpu().numpy(), lam_cpu.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(loss_gpu.cpu().numpy(), loss_cpu.numpy(), rtol=1e-9, atol=1e-12)
