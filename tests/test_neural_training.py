"""ranklearn.neural.training: batch lambdas, per-query normalization, networks of an ensemble."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from ranklearn.models import RankNet  # noqa: E402
from _helpers import make_queries  # noqa: E402
from _helpers import _one_torch_thread  # noqa: E402, F401 (autouse: one torch thread)


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


def test_standardization_scales_tiny_features_and_leaves_constant_ones():
    from ranklearn.neural.scorer import standardization_stats

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=50) * 1e-13, np.full(50, 3.0), np.zeros(50), rng.normal(size=50) * 1e6 + 1e9])
    mean, scale = standardization_stats(X.astype(np.float32))
    assert scale[0] == pytest.approx(np.std(X[:, 0].astype(np.float32).astype(np.float64)))  # it stayed 1: unusable
    assert scale[1] == scale[2] == 1.0
    assert scale[3] == pytest.approx(np.std(X[:, 3].astype(np.float32).astype(np.float64)))
