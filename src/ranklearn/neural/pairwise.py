"""The original RankNet training: one forward pass, backward pass and weight update per document pair.

Burges et al., "Learning to Rank using Gradient Descent", ICML 2005. ``mode="pairwise"`` of the
neural rankers; kept for fidelity with the paper and to measure what the factorization of
:mod:`ranklearn.neural.training` saves (``benchmarks/bench_neural.py --part speed``), not for
everyday training: it is hundreds of times slower.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

from ranklearn.neural.lambdas import pair_weight_matrix
from ranklearn.neural.losses import LambdaLoss
from ranklearn.neural.training import QuerySet


def pairwise_epoch(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    data: QuerySet,
    order: np.ndarray,
    cfg: LambdaLoss,
    rng: np.random.Generator,
    max_pairs: int | None = None,
) -> tuple[float, int]:
    """Per-pair SGD (the original RankNet): a forward pass, backward pass and update per pair.

    For the pair (i, j), i more relevant, the two scores are computed and back-propagated
    with the upstream gradient (lambda_ij, -lambda_ij) = (dC_ij/ds_i, dC_ij/ds_j). Pairs of a
    query are visited in random order. For LambdaRank the pair weights |dZ_ij| (and the
    truncation) are fixed from the ranking at the start of each query.

    Returns the summed pair cost and the number of pairs (updates) done; stops after
    ``max_pairs`` updates when given (for timing).
    """
    model.train()
    total = 0.0
    done = 0
    sigma = float(cfg.sigma)
    for q in order:
        lo, hi = int(data.ptr[q]), int(data.ptr[q + 1])
        yq = data.y_np[lo:hi]
        wins = yq[:, None] > yq[None, :]
        dz = None
        if cfg.metric is not None or cfg.truncation_level is not None:
            model.eval()
            with torch.no_grad():
                sq = model(data.X[lo:hi])
            model.train()
            dz = (
                pair_weight_matrix(
                    sq, data.y[lo:hi], metric=cfg.metric, k=cfg.k,
                    truncation_level=cfg.truncation_level, max_grade=cfg.max_grade,
                )
                .cpu()
                .numpy()
                .astype(np.float64)
            )
            wins &= dz > 0
        pi, pj = np.nonzero(wins)
        perm = rng.permutation(pi.shape[0])
        pi, pj = pi[perm], pj[perm]
        # upstream gradient of (s_i, s_j) per unit of lambda_ij: (w_i, -w_j) |dZ_ij|
        coef = np.ones((pi.shape[0], 2))
        coef[:, 1] = -1.0
        if dz is not None:
            coef *= dz[pi, pj][:, None]
        cost_w = np.abs(coef[:, 0]).copy()
        if data.scale_np is not None:
            coef[:, 0] *= data.scale_np[pi + lo]
            coef[:, 1] *= data.scale_np[pj + lo]
        pair_rows = torch.as_tensor(np.stack([pi + lo, pj + lo], axis=1)).to(data.device)
        pair_coef = torch.as_tensor(coef, dtype=torch.float32).to(data.device)
        for p in range(pi.shape[0]):
            if max_pairs is not None and done >= max_pairs:
                return total, done
            s = model(data.X[pair_rows[p]])
            with torch.no_grad():
                diff = sigma * (s[0] - s[1])
                lam = -sigma * torch.sigmoid(-diff)  # lambda_ij = dC_ij/ds_i
                total += float(F.softplus(-diff)) * cost_w[p]
            optimizer.zero_grad(set_to_none=True)
            s.backward(lam * pair_coef[p])
            optimizer.step()
            done += 1
    return total, done
