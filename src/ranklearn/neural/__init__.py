"""ranklearn.neural: the torch side of RankNet and LambdaRank.

Nothing here is imported by ``import ranklearn``; the estimators in
:mod:`ranklearn.models._neural` import these modules lazily, so ranklearn works
without torch until a neural model is fitted or loaded.

Modules
-------
``scorer``
    :class:`~ranklearn.neural.scorer.MLPScorer`, the scoring network (an MLP, or a
    linear scorer with ``hidden=()``) with the input standardization built in.
``lambdas``
    :func:`~ranklearn.neural.lambdas.compute_lambdas`: RankNet and LambdaRank lambdas
    (lambda_i = dC/ds_i, negative = push up) for a padded batch of queries, chunked over
    the pair matrix so memory stays bounded for long lists.
``losses``
    :class:`~ranklearn.neural.losses.Loss` and :func:`~ranklearn.neural.losses.get_loss`:
    the upstream gradient of the scores of a padded batch, for the lambda losses (RankNet,
    LambdaRank) and the differentiable listwise ones (ListNet, ListMLE, ApproxNDCG, NeuralNDCG).
``training``
    The factorized training epoch (one update per batch of queries), batching and prediction.
``pairwise``
    The original per-pair SGD (one update per pair), kept to measure the factorization.
"""

from __future__ import annotations

INSTALL_HINT = "pip install 'ranklearn[neural]'"


def require_torch():
    """Import and return torch, or raise ImportError saying how to install it."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
        raise ImportError(
            f"RankNet, LambdaRank and ListNet need PyTorch and safetensors: {INSTALL_HINT}"
        ) from exc
    try:
        import safetensors.torch  # noqa: F401
    except ImportError as exc:  # pragma: no cover
        raise ImportError(
            f"RankNet, LambdaRank and ListNet need PyTorch and safetensors: {INSTALL_HINT}"
        ) from exc
    return torch
