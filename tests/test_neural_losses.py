"""Tests of ranklearn.neural.losses: values against brute force, padding, gradients, training."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ranklearn.neural.lambdas import compute_lambdas  # noqa: E402
from ranklearn.neural.losses import (  # noqa: E402
    ApproxNDCGLoss,
    AutogradLoss,
    LambdaLoss,
    ListMLELoss,
    ListNetLoss,
    DLALoss,
    Loss,
    IPWLoss,
    NeuralNDCGLoss,
    RegressionEMLoss,
    get_loss,
)


# --------------------------------------------------------------------------- brute-force references
def ref_listnet(s, y):
    """-sum_i P_y(i) log P_s(i) with top-one probabilities exp(v_i) / sum_j exp(v_j)."""
    py = np.exp(y) / np.exp(y).sum()
    ps = np.exp(s) / np.exp(s).sum()
    return float(-(py * np.log(ps)).sum())


def ref_plackett_luce(s, perm):
    """Probability of the permutation ``perm`` (document indices, first = top) under scores s."""
    p = 1.0
    for r in range(len(perm)):
        rest = [math.exp(s[d]) for d in perm[r:]]
        p *= math.exp(s[perm[r]]) / sum(rest)
    return p


def ref_approx_ndcg(s, y, t):
    n = len(s)
    rank = [1.0 + sum(1.0 / (1.0 + math.exp(-(s[j] - s[i]) / t)) for j in range(n) if j != i) for i in range(n)]
    gains = 2.0 ** np.asarray(y, dtype=np.float64) - 1.0
    ideal = np.sort(gains)[::-1]
    idcg = float((ideal / np.log2(np.arange(n) + 2.0)).sum())
    if idcg == 0:
        return 0.0
    return -float(sum(g / math.log2(1.0 + r) for g, r in zip(gains, rank))) / idcg


def ref_neural_ndcg(s, y, t, k, iterations):
    """NeuralSort's matrix P[r, j] = softmax_j(((n + 1 - 2r) s_j - sum_u |s_j - s_u|) / t), Sinkhorn, NDCG@k."""
    n = len(s)
    P = np.zeros((n, n))
    for r in range(1, n + 1):
        z = [((n + 1 - 2 * r) * s[j] - sum(abs(s[j] - s[u]) for u in range(n))) / t for j in range(n)]
        z = np.array(z) - max(z)
        P[r - 1] = np.exp(z) / np.exp(z).sum()
    for _ in range(iterations):
        P = P / np.maximum(P.sum(axis=0, keepdims=True), 1e-10)
        P = P / np.maximum(P.sum(axis=1, keepdims=True), 1e-10)
    gains = 2.0 ** np.asarray(y, dtype=np.float64) - 1.0
    disc = 1.0 / np.log2(np.arange(n) + 2.0)
    if k is not None:
        disc[k:] = 0.0
    idcg = float((np.sort(gains)[::-1] * disc).sum())
    return 0.0 if idcg == 0 else -float(((P @ gains) * disc).sum()) / idcg


def padded_batch(lengths, seed=0, n_nets=None, distinct=False, dtype=torch.float64):
    """Random queries of the given lengths as padded tensors; padding holds garbage values."""
    rng = np.random.default_rng(seed)
    B, L = len(lengths), max(lengths)
    lead = () if n_nets is None else (n_nets,)
    scores = rng.normal(size=(*lead, B, L)) * 2.0
    labels = rng.integers(0, 4, size=(B, L)).astype(np.float64)
    if distinct:
        labels = np.stack([rng.permutation(L) for _ in range(B)]).astype(np.float64)
    mask = np.arange(L)[None, :] < np.asarray(lengths)[:, None]
    scores[..., ~mask] = 1e3  # padding must change nothing
    labels[~mask] = 7.0
    return (
        torch.tensor(scores, dtype=dtype),
        torch.tensor(labels, dtype=dtype),
        torch.tensor(mask),
    )


LENGTHS = [7, 1, 4, 2, 5]


# --------------------------------------------------------------------------- values
def test_listnet_padded_batch_equals_brute_force_per_query():
    s, y, m = padded_batch(LENGTHS, seed=1, n_nets=2)
    grad, loss = ListNetLoss()(s, y, m)
    assert loss.shape == (2, len(LENGTHS)) and grad.shape == s.shape
    for net in range(2):
        for b, n in enumerate(LENGTHS):
            sq, yq = s[net, b, :n].numpy(), y[b, :n].numpy()
            assert loss[net, b].item() == pytest.approx(ref_listnet(sq, yq), rel=1e-12, abs=1e-12)
            # the gradient of the cross-entropy is P_s - P_y
            ps, py = np.exp(sq) / np.exp(sq).sum(), np.exp(yq) / np.exp(yq).sum()
            np.testing.assert_allclose(grad[net, b, :n].numpy(), ps - py, rtol=1e-10, atol=1e-12)
    assert torch.all(grad[..., ~m] == 0)
    assert loss[:, 1].abs().max() == 0  # one document: nothing to learn


def test_listmle_is_minus_log_plackett_luce_probability():
    # hand example: labels order the documents 0, 2, 1
    s = torch.tensor([[1.0, 2.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([[2.0, 0.0, 1.0]], dtype=torch.float64)
    m = torch.ones_like(y, dtype=torch.bool)
    e = math.e
    p = (e**1 / (e**1 + e**2 + e**0)) * (e**0 / (e**0 + e**2)) * 1.0
    _, loss = ListMLELoss(random_state=0)(s, y, m)
    assert loss.item() == pytest.approx(-math.log(p), rel=1e-12)
    # padded batches of several lengths, distinct labels (one ground-truth order)
    s, y, m = padded_batch(LENGTHS, seed=2, n_nets=3, distinct=True)
    _, loss = ListMLELoss(random_state=0)(s, y, m)
    for net, (b, n) in itertools.product(range(3), enumerate(LENGTHS)):
        perm = np.argsort(-y[b, :n].numpy(), kind="stable")
        expected = -math.log(ref_plackett_luce(s[net, b, :n].numpy(), perm))
        assert loss[net, b].item() == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_listmle_breaks_ties_at_random_seeded_and_anew_per_call():
    y = torch.tensor([[2.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
    m = torch.tensor([[True] * 6 + [False]])
    orders = [tuple(ListMLELoss(random_state=5).ground_truth_order(y, m)[0].tolist()) for _ in range(2)]
    assert orders[0] == orders[1]  # same seed, same order
    loss = ListMLELoss(random_state=5)
    seen = {tuple(loss.ground_truth_order(y, m)[0].tolist()) for _ in range(200)}
    for order in seen:
        assert order[0] == 0 and set(order[1:4]) == {1, 2, 3} and set(order[4:6]) == {4, 5}
        assert order[6] == 6  # padding last
    assert len(seen) == 3 * 2 * 2  # all 3! x 2! tie orders occur
    # the loss with ties is the probability of the order actually drawn
    s = torch.randn(1, 7, dtype=torch.float64)
    a, b = ListMLELoss(random_state=9), ListMLELoss(random_state=9)
    perm = b.ground_truth_order(y, m)[0, :6].tolist()
    _, value = a(s, y.double(), m)
    assert value.item() == pytest.approx(-math.log(ref_plackett_luce(s[0].numpy(), perm)), rel=1e-12)


def test_approx_ndcg_padded_batch_equals_brute_force_per_query():
    s, y, m = padded_batch(LENGTHS, seed=3, n_nets=2)
    y[2, :4] = 0.0  # no relevant document: loss 0
    for t in (1.0, 0.1):
        grad, loss = ApproxNDCGLoss(temperature=t)(s, y, m)
        for net, (b, n) in itertools.product(range(2), enumerate(LENGTHS)):
            expected = ref_approx_ndcg(s[net, b, :n].numpy(), y[b, :n].numpy(), t)
            assert loss[net, b].item() == pytest.approx(expected, rel=1e-10, abs=1e-12)
        assert torch.all(grad[..., ~m] == 0)
        assert torch.all(grad[:, 2] == 0)
    # with a low temperature the smooth ranks approach the true ones: -loss -> NDCG
    s1 = torch.tensor([[3.0, 1.0, 2.0]], dtype=torch.float64)
    y1 = torch.tensor([[1.0, 2.0, 0.0]], dtype=torch.float64)
    _, loss = ApproxNDCGLoss(temperature=1e-3)(s1, y1, torch.ones_like(y1, dtype=torch.bool))
    dcg = 1.0 / 1.0 + 3.0 / 2.0  # ranks: doc0 1st, doc2 2nd, doc1 3rd
    idcg = 3.0 + 1.0 / math.log2(3.0)
    assert -loss.item() == pytest.approx(dcg / idcg, rel=1e-9)
    with pytest.raises(ValueError, match="temperature"):
        ApproxNDCGLoss(temperature=0.0)


def test_neural_ndcg_padded_batch_equals_brute_force_per_query():
    s, y, m = padded_batch(LENGTHS, seed=10, n_nets=2)
    y[2, :4] = 0.0  # no relevant document: loss 0
    for t, k, it in ((1.0, None, 50), (0.5, 3, 5), (2.0, 10, 0)):
        grad, loss = NeuralNDCGLoss(temperature=t, k=k, sinkhorn_iterations=it)(s, y, m)
        for net, (b, n) in itertools.product(range(2), enumerate(LENGTHS)):
            expected = ref_neural_ndcg(s[net, b, :n].numpy(), y[b, :n].numpy(), t, k, it)
            assert loss[net, b].item() == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert torch.all(grad[..., ~m] == 0) and torch.all(grad[:, 2] == 0)
        assert torch.isfinite(grad).all()


def test_neural_ndcg_tends_to_ndcg_and_its_matrix_to_the_sorting_permutation():
    from ranklearn.metrics import get_metric

    s, y, m = padded_batch([6, 4], seed=11, n_nets=1)
    loss = NeuralNDCGLoss(temperature=1e-3, k=3)
    P = loss.soft_permutation(s, m)
    for b, n in enumerate([6, 4]):
        order = np.argsort(-s[0, b, :n].numpy())
        np.testing.assert_allclose(P[0, b, :n, :n].numpy(), np.eye(n)[order], atol=1e-9)
        assert torch.all(P[0, b, n:] == 0) and torch.all(P[0, b, :, n:] == 0)
        ndcg = get_metric("ndcg@3").mean(y[b, :n].numpy(), s[0, b, :n].numpy(), np.array([0, n]))
        assert -loss(s, y, m)[1][0, b].item() == pytest.approx(ndcg, rel=1e-9)
    with pytest.raises(ValueError, match="temperature"):
        NeuralNDCGLoss(temperature=-1.0)
    with pytest.raises(ValueError, match="k must be"):
        NeuralNDCGLoss(k=0)
    with pytest.raises(ValueError, match="sinkhorn_iterations"):
        NeuralNDCGLoss(sinkhorn_iterations=1.5)


@pytest.mark.parametrize(
    "make", [ListNetLoss, lambda: ListMLELoss(random_state=0), ApproxNDCGLoss, lambda: NeuralNDCGLoss(k=3)]
)
def test_padded_batch_equals_each_query_alone(make):
    s, y, m = padded_batch(LENGTHS, seed=4, n_nets=2, distinct=True)
    grad, loss = make()(s, y, m)
    assert torch.isfinite(grad).all() and torch.all(grad[..., ~m] == 0)
    for b, n in enumerate(LENGTHS):
        g1, l1 = make()(s[:, b : b + 1, :n], y[b : b + 1, :n], m[b : b + 1, :n])
        torch.testing.assert_close(loss[:, b : b + 1], l1, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(grad[:, b : b + 1, :n], g1, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- gradients
@pytest.mark.parametrize(
    "make",
    [ListNetLoss, lambda: ListMLELoss(random_state=0), lambda: ApproxNDCGLoss(0.5), lambda: NeuralNDCGLoss(0.5, 4, 10)],
)
def test_autograd_losses_pass_gradcheck(make):
    s, y, m = padded_batch([5, 3, 1], seed=5, n_nets=2, distinct=True)  # distinct: ListMLE's order is fixed
    loss = make()
    s = s.masked_fill(~m, 0.0).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda v: loss.query_loss(v, y, m), (s,), eps=1e-6, atol=1e-7)
    grad, _ = loss(s, y, m)
    (auto,) = torch.autograd.grad(loss.query_loss(s, y, m).sum(), s)
    torch.testing.assert_close(grad, auto.masked_fill(~m, 0.0))


def test_weights_multiply_the_gradient_not_the_loss():
    s, y, m = padded_batch(LENGTHS, seed=6, n_nets=2)
    w = torch.rand(y.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for loss in (ListNetLoss(), LambdaLoss(metric="ndcg", k=3)):
        g0, l0 = loss(s, y, m)
        g1, l1 = loss(s, y, m, weight=w)
        torch.testing.assert_close(g1, g0 * w)
        torch.testing.assert_close(l1, l0)


def test_lambda_loss_is_compute_lambdas_per_network():
    s, y, m = padded_batch(LENGTHS, seed=7, n_nets=3)
    loss = get_loss("lambdarank", metric="err@4", sigma=2.0, max_grade=3.0)
    assert isinstance(loss, LambdaLoss) and (loss.metric, loss.k, loss.sigma) == ("err", 4, 2.0)
    grad, value = loss(s, y, m)
    for net in range(3):
        lam, cost = compute_lambdas(s[net], y, m, sigma=2.0, metric="err", k=4, max_grade=3.0, return_loss=True)
        torch.testing.assert_close(grad[net], lam)
        torch.testing.assert_close(value[net], cost)


# --------------------------------------------------------------------------- resolver
def test_get_loss_resolves_names_and_rejects_bad_ones():
    assert get_loss("RankNet", sigma=0.5) == LambdaLoss(sigma=0.5)
    assert get_loss("lambdarank") == LambdaLoss(metric="ndcg")
    assert get_loss("lambdarank", metric="ndcg@10", truncation_level=20) == LambdaLoss(
        metric="ndcg", k=10, truncation_level=20
    )
    assert isinstance(get_loss("listnet"), ListNetLoss)
    assert get_loss("approxndcg", temperature=0.3).temperature == 0.3
    mle = ListMLELoss(random_state=1)
    assert get_loss(mle) is mle
    assert get_loss("neuralndcg", k=5).k == 5
    names = ("ranknet", "lambdarank", "listnet", "listmle", "approxndcg", "neuralndcg")
    assert tuple(get_loss(n).name for n in names) == names
    with pytest.raises(ValueError, match="loss must be one of .*'listmle'.* got 'listwise'"):
        get_loss("listwise")
    with pytest.raises(ValueError, match="loss 'listnet' has no parameter sigma"):
        get_loss("listnet", sigma=1.0)
    with pytest.raises(ValueError, match="loss 'ranknet' has no parameter metric"):
        get_loss("ranknet", metric="ndcg")
    with pytest.raises(ValueError, match="lambda_metric must be"):
        get_loss("lambdarank", metric="map")
    with pytest.raises(ValueError, match="not a LambdaRank metric"):
        get_loss("lambdarank", metric=None)
    for bad, match in (
        ({"sigma": 0.0}, "sigma must be"),
        ({"sigma": float("inf")}, "sigma must be"),
        ({"truncation_level": 0}, "truncation_level must be"),
        ({"max_grade": -1.0}, "max_grade must be"),
    ):
        with pytest.raises(ValueError, match=match):
            get_loss("lambdarank", **bad)
    with pytest.raises(ValueError, match="metric must be None"):
        LambdaLoss(metric="map")
    with pytest.raises(ValueError, match="parameters cannot be given"):
        get_loss(mle, random_state=2)


# --------------------------------------------------------------------------- training
@pytest.mark.parametrize("name", ["listnet", "listmle", "approxndcg", "neuralndcg"])
def test_factorized_epochs_on_a_listwise_loss_learn_the_ranking(name):
    """A few epochs on the loss raise NDCG@10 well above the untrained network's, and lower the loss."""
    from ranklearn.data.groups import group_ptr
    from ranklearn.datasets import make_ranking
    from ranklearn.metrics import get_metric
    from ranklearn.neural.scorer import MLPScorer, standardization_stats
    from ranklearn.neural.training import QuerySet, factorized_epoch, predict_scores

    X, y, q = make_ranking(n_queries=60, n_features=8, n_informative=4, random_state=0, return_X_y=True)
    ptr = group_ptr(q)
    data = QuerySet(X, y, ptr, torch.device("cpu"))
    torch.manual_seed(0)
    model = MLPScorer(X.shape[1], (), n_networks=2)
    model.set_standardization(*standardization_stats(X))
    ndcg = get_metric("ndcg@10")
    before = ndcg.mean(y, predict_scores(model, X, torch.device("cpu")), ptr)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    loss = get_loss(name, **({"random_state": 0} if name == "listmle" else {}))
    rng = np.random.default_rng(0)
    costs = [factorized_epoch(model, opt, data, rng.permutation(data.trainable_queries()), 8, loss) for _ in range(8)]
    after = ndcg.mean(y, predict_scores(model, X, torch.device("cpu")), ptr)
    assert after > before + 0.1
    assert costs[-1] < costs[0]


def test_a_new_loss_is_one_subclass():
    class Hinge(Loss):  # pointwise: push every score towards its label
        name = "toy"

        def gradient(self, scores, labels, mask):
            g = torch.where(mask, scores - labels, torch.zeros((), dtype=scores.dtype))
            return g, 0.5 * (g**2).sum(-1)

    s, y, m = padded_batch([3, 2], seed=8, n_nets=1)
    grad, loss = get_loss(Hinge())(s, y, m)
    assert torch.all(grad[..., ~m] == 0) and loss.shape == (1, 2)


def test_the_command_lines_loss_choices_are_the_losses():
    # --loss took any text and the error offered "or a Loss object", which no option value is
    from ranklearn.neural.losses import CLICK_LOSSES, LOSSES
    from ranklearn.registry import get_spec

    for model in ("ranknet", "lambdarank", "listnet"):
        (option,) = [o for o in get_spec(model).options if o.flag == "--loss"]
        assert sorted(option.choices) == sorted(LOSSES | CLICK_LOSSES)


# --------------------------------------------------------------------------- IPW on clicks
def _ipw_batch():
    g = torch.Generator().manual_seed(4)
    scores = torch.randn(2, 3, 5, generator=g, dtype=torch.float64)  # 2 networks, 3 lists of up to 5
    clicks = torch.tensor([[1.0, 0, 0, 1, 0], [0, 1, 0, 0, 0], [1, 0, 2, 0, 0]], dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0]], dtype=torch.bool)
    position = torch.tensor([[1, 2, 3, 4, 12], [3, 1, 2, 0, 0], [5, 4, 3, 2, 0]])
    return scores, clicks, mask, position


@pytest.mark.parametrize("base", ["listnet", "ranknet"])
def test_ipw_loss_is_the_propensity_weighted_loss_of_a_brute_force(base):
    """Per query and network, a loop over the documents (pairs) with weights 1 / max(p_k, clip),
    ranks past the propensities' end taking the last one; the gradient is that loss's autograd."""
    scores, clicks, mask, position = _ipw_batch()
    propensity = (1.0, 0.6, 0.4, 0.2, 0.1)
    loss = IPWLoss(propensity=propensity, base=base, clip=0.15, sigma=1.5)
    grad, value = loss(scores, clicks, mask, side={"position": position})

    def brute(s, c, ranks):
        w = [1 / max(propensity[min(k, 5) - 1], 0.15) for k in ranks]
        if base == "listnet":
            logp = torch.log_softmax(s, dim=0)
            return -sum(c[i] * w[i] * logp[i] for i in range(len(s)))
        total = s.new_zeros(())
        for i, j in itertools.permutations(range(len(s)), 2):
            if c[i] > c[j]:
                total = total + w[i] * torch.nn.functional.softplus(-1.5 * (s[i] - s[j]))
        return total

    for net in range(2):
        for q in range(3):
            n = int(mask[q].sum())
            s = scores[net, q, :n].clone().requires_grad_(True)
            ref = brute(s, clicks[q, :n], position[q, :n].tolist())
            (ref_grad,) = torch.autograd.grad(ref, s)
            assert value[net, q].item() == pytest.approx(ref.item(), rel=1e-12)
            torch.testing.assert_close(grad[net, q, :n], ref_grad, rtol=1e-12, atol=1e-12)
            assert torch.all(grad[net, q, n:] == 0)


def _weights(position, propensity=(1.0, 0.6, 0.4, 0.2, 0.1), clip=0.15):
    return [1 / max(propensity[min(k, 5) - 1], clip) for k in position]


@pytest.mark.parametrize("k", [None, 2])
def test_ipw_lambdarank_weighs_each_pair_by_its_clicked_documents_weight_and_delta_ndcg(k):
    """Brute force: pair_weight_matrix's |dNDCG@k| (the per-pair mode's reference) times w_i."""
    from ranklearn.neural.lambdas import pair_weight_matrix

    scores, clicks, mask, position = _ipw_batch()
    loss = IPWLoss(propensity=(1.0, 0.6, 0.4, 0.2, 0.1), base=get_loss("lambdarank", metric="ndcg" if k is None else f"ndcg@{k}"),
                   clip=0.15)  # fmt: skip

    def brute(s, c, w):
        dz = pair_weight_matrix(s.detach(), c, metric="ndcg", k=k)
        pairs = [(i, j) for i, j in itertools.permutations(range(len(s)), 2) if c[i] > c[j]]
        return sum(w[i] * dz[i, j] * torch.nn.functional.softplus(-(s[i] - s[j])) for i, j in pairs)

    check_ipw_against_brute_force(loss, scores, clicks, mask, position, brute)


def check_ipw_against_brute_force(loss, scores, clicks, mask, position, brute):
    """Every network's and list's loss and gradient against ``brute(s, clicks, weights)`` and its autograd."""
    grad, value = loss(scores, clicks, mask, side={"position": position})
    for net in range(scores.shape[0]):
        for q in range(scores.shape[1]):
            n = int(mask[q].sum())
            s = scores[net, q, :n].clone().requires_grad_(True)
            ref = brute(s, clicks[q, :n], _weights(position[q, :n].tolist()))
            (ref_grad,) = torch.autograd.grad(ref, s)
            assert value[net, q].item() == pytest.approx(ref.item(), rel=1e-12)
            torch.testing.assert_close(grad[net, q, :n], ref_grad, rtol=1e-12, atol=1e-12)
            assert torch.all(grad[net, q, n:] == 0)


def test_ipw_listmle_weighs_the_clicked_documents_terms():
    """Brute force with distinct positive labels: each one's term w_i [log sum over it and the
    less relevant documents of exp(s) - s_i]; the unclicked documents have no term of their own."""
    scores, clicks, mask, position = _ipw_batch()
    clicks[0, 0] = 2.0  # positive labels distinct in every list: one ground-truth order of them
    loss = IPWLoss(propensity=(1.0, 0.6, 0.4, 0.2, 0.1), base="listmle", clip=0.15)

    def brute(s, c, w):
        return sum(w[i] * (torch.logsumexp(torch.cat([s[i : i + 1], s[c < c[i]]]), 0) - s[i]) for i in range(len(s)) if c[i] > 0)

    check_ipw_against_brute_force(loss, scores, clicks, mask, position, brute)


def _ideal_dcg(gains, k):
    """Ideal DCG@k (None: the whole list) of every list of ``gains`` [B, L]."""
    disc = 1 / torch.log2(torch.arange(gains.shape[-1], dtype=gains.dtype) + 2)
    if k is not None:
        disc[k:] = 0
    return (torch.sort(gains, dim=-1, descending=True).values * disc).sum(dim=-1)


@pytest.mark.parametrize("make, k", [(lambda: ApproxNDCGLoss(0.5), None),
                                     (lambda: NeuralNDCGLoss(0.5, k=3, sinkhorn_iterations=5), 3)])  # fmt: skip
def test_ipw_ndcg_losses_weigh_the_dcgs_gains_not_the_ideal_dcgs(make, k):
    """The weighted gains (2^c - 1) w are the gains of labels log2(1 + (2^c - 1) w), and the ideal
    DCG the one of the unweighted gains: the unweighted loss on those labels times the ratio of the
    two ideal DCGs. A list's only click then counts its weight: with the weighted gains' ideal DCG
    the weight cancelled, and the loss was the naive one at any rank."""
    scores, clicks, mask, position = _ipw_batch()
    clicks[1] = torch.tensor([1.0, 0, 0, 0, 0])  # the second list's only click, at rank 3 (propensity 0.4)
    w = torch.tensor([_weights(row) for row in position.tolist()], dtype=torch.float64).masked_fill(~mask, 0.0)
    grad, value = IPWLoss(propensity=(1.0, 0.6, 0.4, 0.2, 0.1), base=make(), clip=0.15)(
        scores, clicks, mask, side={"position": position}
    )
    weighted = torch.log2(1 + (torch.exp2(clicks) - 1) * w)
    ref_grad, ref_value = make()(scores, weighted, mask)
    gains = (torch.exp2(clicks) - 1).masked_fill(~mask, 0.0)
    ratio = _ideal_dcg(gains * w, k) / _ideal_dcg(gains, k)
    torch.testing.assert_close(value, ref_value * ratio, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad, ref_grad * ratio[..., None], rtol=1e-12, atol=1e-12)
    # its weight 1 / 0.4 times the naive loss
    naive_grad, naive_value = make()(scores, clicks, mask)
    torch.testing.assert_close(value[:, 1], 2.5 * naive_value[:, 1], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad[:, 1], 2.5 * naive_grad[:, 1], rtol=1e-12, atol=1e-12)


def test_ipw_loss_checks_its_settings_and_needs_positions():
    with pytest.raises(ValueError, match="propensity must be positive"):
        IPWLoss(propensity=(1.0, 0.0))
    with pytest.raises(ValueError, match="base must be"):
        IPWLoss(propensity=(1.0,), base="nope")
    with pytest.raises(ValueError, match="clip must be"):
        IPWLoss(propensity=(1.0,), clip=-1)

    class Plain(AutogradLoss):
        def query_loss(self, scores, labels, mask):
            return scores.sum(dim=-1)

    with pytest.raises(ValueError, match="has no propensity-weighted form"):
        IPWLoss(propensity=(1.0,), base=Plain())
    with pytest.raises(ValueError, match="has no propensity-weighted form"):
        IPWLoss(propensity=(1.0,), base=get_loss("lambdarank", metric="err"))
    from ranklearn.clicks import Propensity  # an estimate is accepted as it is

    estimate = Propensity("em", np.array([1.0, 0.5]), np.zeros((2, 2)), np.zeros(2), 0.95, 10)
    assert IPWLoss(propensity=estimate).propensity == (1.0, 0.5)
    with pytest.raises(ValueError, match="max_rank must be"):
        DLALoss(max_rank=0)
    with pytest.raises(ValueError, match="theta_learning_rate must be"):
        RegressionEMLoss(theta_learning_rate=2.0)
    scores, clicks, mask, _ = _ipw_batch()
    with pytest.raises(ValueError, match="needs position"):
        IPWLoss(propensity=(1.0,))(scores, clicks, mask)


def test_ipw_neural_rankers_beat_the_naive_ones_on_true_labels():
    """PBM clicks of a logging ranker that sorts by feature 1 (unrelated to relevance, which
    follows feature 0): clicks as labels teach a linear scorer feature 1; IPW with the simulated
    propensities does not, and ranks the test queries' true labels better."""
    from ranklearn.clicks import PBM, ClickTrainingSet, simulate
    from ranklearn.clicks.models import theta_base
    from ranklearn.data import from_arrays
    from ranklearn.metrics import get_metric
    from ranklearn.models import ListNet, RankNet

    def letor(n_queries, seed):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n_queries * 10, 3)).astype(np.float32)
        return from_arrays(X, np.clip(np.round(X[:, 0] * 1.2 + 1.5), 0, 4), qid=np.repeat(np.arange(n_queries), 10))

    train, test = letor(200, 0), letor(200, 1)
    rows = ClickTrainingSet.per_session(
        simulate(train, train.X[:, 1], PBM(eta=1.0), n_sessions=1500, seed=0, temperature=1.0), train
    )
    ndcg = get_metric("ndcg@10")
    propensity = tuple(theta_base(10))
    for cls, base in ((ListNet, "listnet"), (RankNet, "ranknet")):
        settings = dict(hidden=(), n_estimators=5, random_state=0)
        with pytest.warns(UserWarning, match="ignores position="):
            naive = cls(**settings).fit(rows.X, rows.y, qid=rows.qid, position=rows.position)
        ipw = cls(**settings, loss=IPWLoss(propensity=propensity, base=base))
        ipw.fit(rows.X, rows.y, qid=rows.qid, position=rows.position)
        naive_ndcg = ndcg.mean(test.y, naive.predict(test.X), test.ptr)
        assert ndcg.mean(test.y, ipw.predict(test.X), test.ptr) > naive_ndcg + 0.02, cls.__name__
        with pytest.raises(ValueError, match=r"loss='ipw'\) needs position="):
            cls(**settings, loss=IPWLoss(propensity=propensity, base=base)).fit(rows.X, rows.y, qid=rows.qid)


#: the neural ranker classes every click estimator is shown on
CLICK_RANKERS = ("ListNet", "RankNet", "LambdaRank")


@pytest.fixture(scope="module")
def click_data():
    """PBM clicks (eta 1) of a Plackett-Luce logging ranker that sorts by feature 1, unrelated to
    relevance (feature 0): the letor data of the test above, with a test set, and the test NDCG@10
    of each naive ranker class (clicks as labels)."""
    from ranklearn import models
    from ranklearn.metrics import get_metric

    rows, test = _click_rows()
    naive_ndcg = {}
    for name in CLICK_RANKERS:
        with pytest.warns(UserWarning, match="ignores position="):
            naive = getattr(models, name)(**CLICK_FIT).fit(rows.X, rows.y, qid=rows.qid, position=rows.position)
        assert naive.position_bias_ is None
        naive_ndcg[name] = get_metric("ndcg@10").mean(test.y, naive.predict(test.X), test.ptr)
    return rows, test, naive_ndcg


CLICK_FIT = dict(hidden=(), n_estimators=8, random_state=0)


def _click_rows(n_sessions=4000):
    from ranklearn.clicks import PBM, ClickTrainingSet, simulate
    from ranklearn.data import from_arrays

    def letor(n_queries, seed):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n_queries * 10, 3)).astype(np.float32)
        return from_arrays(X, np.clip(np.round(X[:, 0] * 1.2 + 1.5), 0, 4), qid=np.repeat(np.arange(n_queries), 10))

    train, test = letor(200, 0), letor(200, 1)
    log = simulate(train, train.X[:, 1], PBM(eta=1.0), n_sessions=n_sessions, seed=0, temperature=1.0)
    return ClickTrainingSet.per_session(log, train), test


def _estimated(rows):
    from ranklearn.clicks import estimate_propensity

    return estimate_propensity(rows, "regression_em", n_bootstrap=0)


@pytest.mark.parametrize("ranker", CLICK_RANKERS)
@pytest.mark.parametrize(
    "make",
    [lambda rows: dict(loss=DLALoss()), lambda rows: dict(loss=DLALoss(base="ranknet")),
     lambda rows: dict(loss=RegressionEMLoss()), lambda rows: dict(loss=IPWLoss(_estimated(rows))),
     lambda rows: dict(loss="ipw", propensity=_estimated(rows))],
    ids=["dla", "dla-ranknet", "regression-em", "ipw-regression-em-propensities", "ipw-by-name"],
)  # fmt: skip
def test_click_losses_learn_the_propensities_and_beat_the_naive_ranker(make, ranker, click_data, tmp_path):
    """On each neural ranker class: the learned (or, for IPW, estimated) propensities relative to
    rank 1 are within 25% plus 3 binomial standard errors of the simulated theta_k / theta_1 at ranks
    1-10 (the error of the click rates' ratio at each rank, sqrt(1/clicks_k + 1/clicks_1), times
    theta_k / theta_1: a few percent here, while the online estimates keep some bias of their step
    sizes), and the ranker beats the naive one of its class on the test queries' true labels
    (``loss="ipw"``: IPW over the class's own loss); position_bias_ survives save and load, and its
    plot says whether the propensities were given or learned."""
    from ranklearn import models
    from ranklearn.clicks.models import theta_base
    from ranklearn.metrics import get_metric
    from ranklearn.plot import position_bias

    rows, test, naive_ndcg = click_data
    cls = getattr(models, ranker)
    truth = theta_base(10) / theta_base(10)[0]
    clicks = np.bincount(rows.position, weights=rows.y, minlength=11)[1:11]
    tolerance = truth * (0.25 + 3 * np.sqrt(1 / clicks + 1 / clicks[0]))
    model = cls(**CLICK_FIT, **make(rows)).fit(rows.X, rows.y, qid=rows.qid, position=rows.position)
    learned = model.position_bias_["propensity"]
    assert learned.shape == (10,) and learned[0] == 1.0
    assert np.all(np.abs(learned - truth) <= tolerance), (learned, truth, tolerance)
    assert get_metric("ndcg@10").mean(test.y, model.predict(test.X), test.ptr) > naive_ndcg[ranker] + 0.02
    model.save(tmp_path / "m.json")
    again = cls.load(tmp_path / "m.json")
    np.testing.assert_array_equal(again.position_bias_["propensity"], learned)
    assert len(position_bias(again, truth=theta_base(10)).axes[0].lines) == 2  # learned, and the truth
    given = "ipw" in (model.loss if isinstance(model.loss, str) else model.loss.name)
    label = "propensity (given, clipped)" if given else "propensity (learned), ratio to rank 1"
    assert position_bias(model).axes[0].lines[0].get_label() == label


@pytest.mark.parametrize("base", ["approxndcg", "neuralndcg"])
def test_ipw_over_the_ndcg_losses_beats_their_naive_models(base, click_data):
    """IPW over ApproxNDCG and NeuralNDCG (the simulated propensities) beats the naive ListNet of
    the same loss on true labels by 0.04 or more (0.064 and 0.070 measured); before the DCG's
    gains alone were weighted, a list's only click counted 1 at any rank and IPW was about the
    naive model (+0.003 and +0.011)."""
    from ranklearn.clicks.models import theta_base
    from ranklearn.metrics import get_metric
    from ranklearn.models import ListNet

    rows, test, _ = click_data
    ndcg = get_metric("ndcg@10")
    with pytest.warns(UserWarning, match="ignores position="):
        naive = ListNet(**CLICK_FIT, loss=base).fit(rows.X, rows.y, qid=rows.qid, position=rows.position)
    ipw = ListNet(**CLICK_FIT, loss=IPWLoss(tuple(theta_base(10)), base=base))
    ipw.fit(rows.X, rows.y, qid=rows.qid, position=rows.position)
    assert ndcg.mean(test.y, ipw.predict(test.X), test.ptr) > ndcg.mean(test.y, naive.predict(test.X), test.ptr) + 0.04


@pytest.mark.parametrize("make", [DLALoss, RegressionEMLoss], ids=["dla", "regression-em"])
def test_a_list_weighted_twice_is_the_list_twice_for_the_click_models_too(make):
    """Sessions merged with their count (``sample_weight``) train as the sessions themselves: one
    call on the lists (a, a, b) unweighted and on (a, b) weighted (2, 1) gives the same gradient
    per session and the same step of the loss's own propensity model (DLA's logits, regression
    EM's theta). Weights the model ignored would step it as if a were shown once."""
    rng = np.random.default_rng(3)
    scores = torch.tensor(rng.normal(size=(2, 5)), dtype=torch.float32)
    clicks = torch.tensor([[1, 0, 1, 0, 0], [0, 1, 0, 0, 1]], dtype=torch.float32)
    position = torch.tensor([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]])
    mask = torch.ones((2, 5), dtype=torch.bool)
    twice, weighted, ignored = make(max_rank=5), make(max_rank=5), make(max_rank=5)
    if make is DLALoss:  # Adam's first step is the gradient's sign: plain steps show its size too
        for loss in (twice, weighted, ignored):
            loss.optimizer = torch.optim.SGD([loss.logits], lr=0.5)
    rows = [0, 0, 1]
    g_twice, _ = twice(scores[rows], clicks[rows], mask[rows], None, {"position": position[rows]})
    w = torch.tensor([[2.0] * 5, [1.0] * 5])
    g_weighted, _ = weighted(scores, clicks, mask, w, {"position": position})
    ignored(scores, clicks, mask, None, {"position": position})
    np.testing.assert_allclose(g_weighted[0].numpy(), (g_twice[0] + g_twice[1]).numpy(), rtol=1e-6)
    np.testing.assert_allclose(g_weighted[1].numpy(), g_twice[2].numpy(), rtol=1e-6)
    bias = twice.position_bias()["propensity"]
    np.testing.assert_allclose(weighted.position_bias()["propensity"], bias, rtol=1e-9)
    assert np.max(np.abs(ignored.position_bias()["propensity"] - bias)) > 1e-3


def test_the_ipw_name_is_taken_in_any_case_and_a_loss_object_carries_its_own_propensities():
    from ranklearn.models import ListNet
    from ranklearn.plot import bias_source

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), np.tile([1.0, 0.0], 10)
    q, pos = np.repeat(np.arange(4), 5), np.tile(np.arange(1, 6), 4)
    upper = ListNet(loss="IPW", propensity=[1, 0.5, 0.3], hidden=(), n_estimators=1, random_state=0)
    lower = ListNet(loss="ipw", propensity=[1, 0.5, 0.3], hidden=(), n_estimators=1, random_state=0)
    for m in (upper, lower):
        m.fit(X, y, q, position=pos)
    np.testing.assert_array_equal(upper.predict(X), lower.predict(X))
    assert bias_source(upper) == bias_source(lower) == "given"
    with pytest.raises(ValueError, match=r"a Loss object carries its own settings \(IPWLoss\(propensity"):
        ListNet(loss=IPWLoss((1.0, 0.5)), propensity=[1, 0.5], hidden=(), n_estimators=1).fit(X, y, q, position=pos)
