"""Per-leaf gradient/hessian/count histograms, and the subtraction trick.

A histogram is a float64 array (n_features, 256, 3): for every feature and bin the sums of
gradients, hessians and the number of samples. Only the smaller child of a split is built
from the data; the larger one is its parent minus the smaller.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ranklearn.tree.binning import N_HIST_BINS


def new_histogram(n_features: int) -> np.ndarray:
    """An uninitialised histogram for ``n_features`` features."""
    return np.empty((n_features, N_HIST_BINS, 3), dtype=np.float64)


@njit(parallel=True, cache=True)
def build_histogram(
    binned: np.ndarray,
    samples: np.ndarray,
    grad: np.ndarray,
    hess: np.ndarray,
    features: np.ndarray,
    hist: np.ndarray,
) -> None:
    """Fill ``hist`` for the given features from the rows in ``samples``.

    Parameters
    ----------
    binned : uint8 (n_features, n_samples), feature-major
    samples : int32 rows of the leaf (sorted: reads stay close together)
    grad, hess : float64 per row
    features : int64 features to build (the tree's feature subsample)
    hist : float64 (n_features, 256, 3), written for ``features`` only
    """
    m = samples.shape[0]
    # Gather once so the per-feature loops stream through contiguous memory.
    g = np.empty(m)
    h = np.empty(m)
    for r in range(m):
        i = samples[r]
        g[r] = grad[i]
        h[r] = hess[i]
    for fi in prange(features.shape[0]):
        f = features[fi]
        hf = hist[f]
        hf[:, :] = 0.0
        col = binned[f]
        for r in range(m):
            b = col[samples[r]]
            hf[b, 0] += g[r]
            hf[b, 1] += h[r]
            hf[b, 2] += 1.0


@njit(parallel=True, cache=True)
def subtract_histogram(parent: np.ndarray, child: np.ndarray, features: np.ndarray, out: np.ndarray) -> None:
    """``out = parent - child`` for the given features (``out`` may be ``parent``)."""
    for fi in prange(features.shape[0]):
        f = features[fi]
        for b in range(parent.shape[1]):
            for c in range(3):
                out[f, b, c] = parent[f, b, c] - child[f, b, c]
