"""The scoring network: an MLP (or, with ``hidden=()``, a linear scorer) f(x) -> s, or
the mean of several such networks trained independently side by side.

The input standardization ``(x - mean) / scale`` is part of the module (as
non-persistent buffers), so training, prediction and a reloaded model apply exactly the
same transform. The statistics are saved in the model file's JSON config, the weights
in its safetensors blob.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
    "gelu": nn.GELU,
    "elu": nn.ELU,
    "leaky_relu": nn.LeakyReLU,
    "selu": nn.SELU,
}


def check_architecture(hidden: Sequence[int] | int, activation: str, dropout: float) -> tuple[int, ...]:
    """Validate the architecture parameters; return ``hidden`` as a tuple of ints."""
    if isinstance(hidden, (int, np.integer)) and not isinstance(hidden, bool):
        hidden = (int(hidden),)
    try:
        sizes = tuple(int(h) for h in hidden)
    except (TypeError, ValueError):
        raise ValueError(f"hidden must be a sequence of positive layer sizes, got {hidden!r}") from None
    if any(h <= 0 for h in sizes) or any(float(h) != float(o) for h, o in zip(sizes, hidden)):
        raise ValueError(f"hidden must be a sequence of positive layer sizes, got {hidden!r}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    if not (isinstance(dropout, (int, float)) and 0.0 <= float(dropout) < 1.0):
        raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
    return sizes


class MLPScorer(nn.Module):
    """Feed-forward scorer: standardize, then Linear -> activation [-> dropout] ... -> Linear(1).

    With ``n_networks > 1`` it holds that many independently initialized networks of the
    same shape; the score is their mean. Each network is trained on the lambdas of its own
    scores (:meth:`member_scores`), so they are independent rankers averaged at the end.

    Parameters
    ----------
    n_features : int
    hidden : sequence of int
        Hidden layer sizes; ``()`` gives the linear scorer ``w0 + w . x``.
    activation : str
        One of :data:`ACTIVATIONS`.
    dropout : float
        Dropout after every hidden activation (training mode only).
    n_networks : int
        Networks averaged into the score.
    """

    def __init__(
        self,
        n_features: int,
        hidden: Sequence[int] = (),
        activation: str = "relu",
        dropout: float = 0.0,
        n_networks: int = 1,
    ) -> None:
        super().__init__()
        sizes = check_architecture(hidden, activation, dropout)
        if isinstance(n_networks, bool) or not isinstance(n_networks, (int, np.integer)) or n_networks < 1:
            raise ValueError(f"n_networks must be a positive integer, got {n_networks!r}")
        self.members = nn.ModuleList(
            _mlp(int(n_features), sizes, activation, float(dropout)) for _ in range(int(n_networks))
        )
        self.n_features = int(n_features)
        self.register_buffer("mean", None, persistent=False)
        self.register_buffer("scale", None, persistent=False)

    @property
    def n_networks(self) -> int:
        return len(self.members)

    def set_standardization(self, mean: np.ndarray | None, scale: np.ndarray | None) -> None:
        """Install (or, with ``None``, remove) the input standardization ``(x - mean) / scale``."""
        device = self.members[0][0].weight.device
        if mean is None or scale is None:
            self.mean = None
            self.scale = None
            return
        self.mean = torch.as_tensor(np.asarray(mean, dtype=np.float32), device=device)
        self.scale = torch.as_tensor(np.asarray(scale, dtype=np.float32), device=device)

    def on_columns(self, columns: np.ndarray, n_features: int) -> None:
        """Take whole rows of ``n_features`` columns, having been trained on ``x[:, columns]`` (in
        place): the first layer's weights of the other columns are 0 and their standardization
        the identity, so they never change a score."""
        first = self.members[0][0].weight
        cols = torch.as_tensor(np.asarray(columns), device=first.device)
        with torch.no_grad():
            for net in self.members:
                layer = net[0]
                wide = torch.zeros(layer.out_features, n_features, dtype=layer.weight.dtype, device=layer.weight.device)
                wide[:, cols] = layer.weight
                layer.weight = nn.Parameter(wide)
                layer.in_features = n_features
            if self.mean is not None:
                mean = torch.zeros(n_features, dtype=self.mean.dtype, device=self.mean.device)
                scale = torch.ones(n_features, dtype=self.scale.dtype, device=self.scale.device)
                mean[cols], scale[cols] = self.mean, self.scale
                self.mean, self.scale = mean, scale
        self.n_features = int(n_features)

    def member_scores(self, x: torch.Tensor) -> torch.Tensor:
        """Scores of every network for the rows of ``x`` (n, n_features) -> (n, n_networks)."""
        if self.mean is not None:
            x = (x - self.mean) / self.scale
        return torch.cat([net(x) for net in self.members], dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Scores (the networks' mean) of the rows of ``x`` (n, n_features) -> (n,)."""
        s = self.member_scores(x)
        return s[:, 0] if s.shape[1] == 1 else s.mean(dim=1)


def _mlp(n_features: int, sizes: tuple[int, ...], activation: str, dropout: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    width = n_features
    for h in sizes:
        layers.append(nn.Linear(width, h))
        layers.append(ACTIVATIONS[activation]())
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
        width = h
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers)


def standardization_stats(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature mean and scale (standard deviation; 1 for constant features), float64.

    A feature is constant when its deviation is rounding noise relative to its mean (or 0, or
    below float32's smallest normal number): the test is relative, so a feature of values
    around 1e-13 is standardized like any other (an absolute floor left it unscaled, and the
    network could not use it).
    """
    X64 = np.asarray(X, dtype=np.float64)
    mean = X64.mean(axis=0)
    std = X64.std(axis=0)
    varies = (std > 1e-12 * np.abs(mean)) & (std > np.finfo(np.float32).tiny)
    scale = np.where(varies, std, 1.0)
    return mean, scale
