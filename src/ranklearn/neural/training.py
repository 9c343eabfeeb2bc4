"""Training epochs for RankNet / LambdaRank: factorized (per batch of queries) and per pair.

* :func:`factorized_epoch` -- the factorization of Burges et al.: score a batch of queries
  in one forward pass, compute every document's dC/ds_i with a
  :class:`~ranklearn.neural.losses.Loss` (for RankNet / LambdaRank the lambdas, from the
  query's pair matrix, vectorized and chunked), and back-propagate once with them as the
  upstream gradient (``s.backward(grad)``): one weight update per batch of queries.
* the original per-pair training lives apart, in :mod:`ranklearn.neural.pairwise`.

Queries are batched as a padded ``[B, Lmax]`` layout: the network scores only the real
rows (a flat gather), and the scores are scattered into the padded tensor for the loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from ranklearn.data.groups import QUERY_NORMALIZATIONS, pairs_per_query, query_normalization_weights
from ranklearn.neural.losses import Loss


@dataclass
class Batch:
    rows: torch.Tensor  # long [n_rows]: rows of X in padded row-major order
    mask: torch.Tensor  # bool [B, Lmax]
    labels: torch.Tensor  # [B, Lmax] (0 at padding)
    groups: list[tuple[int, int, int]]  # (first query, end query, width): see length_groups
    weights: torch.Tensor | None = None  # [B, Lmax] QuerySet.scale (0 at padding); None: all 1
    side: dict[str, torch.Tensor] | None = None  # [B, Lmax] each, QuerySet.side (0 at padding)


def length_groups(sizes: np.ndarray, max_waste: float = 2.0, min_elements: int = 1 << 14) -> list[tuple[int, int, int]]:
    """Cut a batch of queries, longest first, into runs that are padded to their own longest.

    The pair work of a padded run of n queries of width w is n w^2; a run is closed when
    that would exceed ``max_waste`` times the work of the real pairs (sum of L^2), unless the
    run is still small (``min_elements``), where one more call would cost more than the
    padding. A batch of 16 MQ2008 queries (5 to 120 documents) does several times fewer
    pair terms than with one common width; the lambdas are the same.

    Returns
    -------
    list of (start, end, width) over the positions of ``sizes`` (sorted in descending order).
    """
    groups = []
    start, real = 0, 0
    for b, n in enumerate(int(v) for v in sizes):
        width = int(sizes[start])
        padded = (b - start + 1) * width * width
        if b > start and padded > max_waste * (real + n * n) and padded >= min_elements:
            groups.append((start, b, width))
            start, real = b, n * n
        else:
            real += n * n
    groups.append((start, len(sizes), int(sizes[start])))
    return groups


def check_lambda_normalization(value: str) -> str:
    """Return ``value`` if it is a row-weight normalization ("none" or one of
    :data:`~ranklearn.data.groups.QUERY_NORMALIZATIONS`), else raise ValueError ("lightgbm" is
    the loss's: it scales each query's lambdas by their own pair sum, ``LambdaLoss(normalize=True)``)."""
    allowed = ("none", *QUERY_NORMALIZATIONS)
    if value not in allowed:
        raise ValueError(
            f"a QuerySet's lambda_normalization is one of {allowed}, got {value!r}"
            + (" ('lightgbm' is the loss's: LambdaLoss(normalize=True))" if value == "lightgbm" else "")
        )
    return value


class QuerySet:
    """Training data held on the device, addressed by query boundaries ``ptr``.

    Every document's lambda is multiplied by ``scale``: its ``sample_weight`` (optional)
    times its query's ``lambda_normalization`` factor, 1 / (documents in the query) for
    ``"docs"``, 1 / (pairs with different labels in the query) for ``"pairs"``, 1 for ``"none"``
    (the rankers' ``"lightgbm"`` is not a row weight: the loss applies it,
    :class:`~ranklearn.neural.losses.LambdaLoss` ``normalize``).
    The summed pair cost weighs a query by its number of pairs, which grows with the square
    of its length; ``"pairs"`` makes every query count the same, ``"docs"`` lies between.
    ``side`` holds the fit's per-row side data (``FitData.side()``: positions) for the losses
    that read it, padded like the labels in every batch.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        ptr: np.ndarray,
        device: torch.device,
        sample_weight: np.ndarray | None = None,
        lambda_normalization: str = "none",
        side: dict[str, np.ndarray] | None = None,
    ) -> None:
        check_lambda_normalization(lambda_normalization)
        self.device = torch.device(device)
        self.X = torch.as_tensor(np.ascontiguousarray(X, dtype=np.float32)).to(self.device)
        self.y_np = np.asarray(y, dtype=np.float64)
        self.y = torch.as_tensor(self.y_np, dtype=torch.float32).to(self.device)
        self.ptr = np.asarray(ptr, dtype=np.int64)
        self.sizes = np.diff(self.ptr)
        scale = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        if lambda_normalization != "none":
            per_row = query_normalization_weights(self.y_np, self.ptr, lambda_normalization)
            scale = per_row if scale is None else scale * per_row
        self.scale_np = scale
        self.scale = None if scale is None else torch.as_tensor(scale, dtype=torch.float32).to(self.device)
        self.side = {k: torch.as_tensor(np.asarray(v)).to(self.device) for k, v in (side or {}).items()}

    @property
    def n_queries(self) -> int:
        return int(self.sizes.shape[0])

    def trainable_queries(self, every_list: bool = False) -> np.ndarray:
        """Queries with at least one pair (two different labels; any query with ``every_list``,
        for a loss that learns from lists of equal labels too) and some nonzero weight."""
        if self.n_queries == 0:
            return np.zeros(0, dtype=np.int64)
        starts = self.ptr[:-1]
        ok = np.ones(self.n_queries, dtype=bool)
        if not every_list:
            ok = np.maximum.reduceat(self.y_np, starts) > np.minimum.reduceat(self.y_np, starts)
        if self.scale_np is not None:
            ok &= np.maximum.reduceat(self.scale_np, starts) > 0
        return np.flatnonzero(ok)

    @cached_property
    def pairs_per_query(self) -> np.ndarray:
        """Number of document pairs with different labels, per query (int64)."""
        return pairs_per_query(self.y_np, self.ptr)

    def n_pairs(self, queries: np.ndarray | None = None) -> int:
        """Number of pairs with different labels in ``queries`` (default: all)."""
        per_query = self.pairs_per_query
        return int(per_query.sum() if queries is None else per_query[np.asarray(queries, dtype=np.int64)].sum())

    def batch(self, queries: np.ndarray) -> Batch:
        """Padded [B, Lmax] layout of the given queries, longest first (see :func:`length_groups`)."""
        queries = np.asarray(queries, dtype=np.int64)
        queries = queries[np.argsort(-self.sizes[queries], kind="stable")]
        starts = self.ptr[queries]
        sizes = self.sizes[queries]
        offs = np.arange(int(sizes.max()), dtype=np.int64)
        mask = offs[None, :] < sizes[:, None]
        rows = (starts[:, None] + offs[None, :])[mask]
        labels = np.zeros(mask.shape, dtype=np.float32)
        labels[mask] = self.y_np[rows]
        dev = self.device
        rows_t, mask_t = torch.as_tensor(rows).to(dev), torch.as_tensor(mask).to(dev)
        weights = None if self.scale is None else _padded(self.scale, rows_t, mask_t)
        return Batch(
            rows=rows_t,
            mask=mask_t,
            labels=torch.as_tensor(labels).to(dev),
            groups=length_groups(sizes),
            weights=weights,
            side={k: _padded(v, rows_t, mask_t) for k, v in self.side.items()} or None,
        )


def _padded(per_row: torch.Tensor, rows: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """A per-row tensor laid out like a batch's labels: [B, Lmax], 0 at padding."""
    out = torch.zeros(mask.shape, dtype=per_row.dtype, device=per_row.device)
    out[mask] = per_row[rows]
    return out


def batch_lambdas(
    model: torch.nn.Module, data: QuerySet, batch: Batch, loss: Loss
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Forward the batch; return (scores with graph, upstream gradients, per-query loss).

    Scores and gradients (the lambdas of a lambda loss) are [n_rows, n_networks]: every
    network of the scorer gets the gradient of its own ranking (its scores are lists of their
    own in the loss), so the networks train as independent rankers. The gradients are
    weighted by ``data.scale`` (sample weight and normalization); the per-query loss,
    [n_networks * n_queries], is not.
    """
    s = model.member_scores(data.X[batch.rows])
    n_nets = s.shape[1]
    B, L = batch.mask.shape
    padded = torch.zeros((n_nets, B, L), dtype=s.dtype, device=s.device)
    padded[:, batch.mask] = s.detach().T
    grad = torch.zeros_like(padded)
    losses = []
    for b0, b1, width in batch.groups:  # runs of similar length, each padded to its own width
        part = (slice(b0, b1), slice(None, width))
        weights = None if batch.weights is None else batch.weights[part]
        side = None if batch.side is None else {k: v[part] for k, v in batch.side.items()}
        grad_g, loss_g = loss(padded[:, b0:b1, :width], batch.labels[part], batch.mask[part], weights, side)
        grad[:, b0:b1, :width] = grad_g
        losses.append(loss_g.reshape(-1))
    return s, grad[:, batch.mask].T, torch.cat(losses)


def factorized_epoch(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    data: QuerySet,
    order: np.ndarray,
    batch_queries: int,
    loss: Loss,
) -> float:
    """One epoch of factorized training over the queries in ``order``, on ``loss``.

    Returns the summed query loss (per network: the sum over networks divided by their number).
    """
    model.train()
    total = torch.zeros((), dtype=torch.float64, device=data.device)
    for b0 in range(0, len(order), batch_queries):
        batch = data.batch(order[b0 : b0 + batch_queries])
        s, grad, query_loss = batch_lambdas(model, data, batch, loss)
        optimizer.zero_grad(set_to_none=True)
        s.backward(grad)  # dC/dw = sum_i dC/ds_i ds_i/dw: one backward pass, one update
        optimizer.step()
        total += query_loss.sum().to(torch.float64)
    return float(total.cpu()) / model.n_networks


def predict_scores(
    model: torch.nn.Module, X: torch.Tensor | np.ndarray, device: torch.device, batch_rows: int = 65536
) -> np.ndarray:
    """Scores (float64 numpy) of the rows of X, in eval mode, in blocks of ``batch_rows``."""
    was_training = model.training
    model.eval()
    n = X.shape[0]
    out = np.empty(n, dtype=np.float64)
    with torch.no_grad():
        for r0 in range(0, n, batch_rows):
            xb = X[r0 : r0 + batch_rows]
            if not isinstance(xb, torch.Tensor):
                xb = torch.as_tensor(np.ascontiguousarray(xb, dtype=np.float32))
            out[r0 : r0 + batch_rows] = model(xb.to(device)).detach().cpu().numpy()
    model.train(was_training)
    return out
