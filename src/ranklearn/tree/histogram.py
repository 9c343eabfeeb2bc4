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


_FEATURE_CHUNKS = 16  # parallel tasks; fixed so results never depend on the thread count


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

    Each feature's bins are summed by one task in row order, so the sums are the same
    whatever the number of threads.
    """
    m = samples.shape[0]
    # Gather once, interleaved, so every feature pass streams one array.
    gh = np.empty((m, 2))
    for r in range(m):
        i = samples[r]
        gh[r, 0] = grad[i]
        gh[r, 1] = hess[i]
    nf = features.shape[0]
    n_chunks = min(nf, _FEATURE_CHUNKS)
    for c in prange(n_chunks):
        # A task-local accumulator padded to 32 bytes a bin: aligned, and hot in L1.
        acc = np.empty((N_HIST_BINS, 4))
        for fi in range(c * nf // n_chunks, (c + 1) * nf // n_chunks):
            f = features[fi]
            col = binned[f]
            acc[:, :] = 0.0
            for r in range(m):
                b = col[samples[r]]
                acc[b, 0] += gh[r, 0]
                acc[b, 1] += gh[r, 1]
                acc[b, 2] += 1.0
            hf = hist[f]
            for b in range(N_HIST_BINS):
                hf[b, 0] = acc[b, 0]
                hf[b, 1] = acc[b, 1]
                hf[b, 2] = acc[b, 2]


@njit(cache=True)
def subtract_histogram(parent: np.ndarray, child: np.ndarray, features: np.ndarray, out: np.ndarray) -> None:
    """``out = parent - child`` for the given features (``out`` may be ``parent``); serial: it is tiny."""
    for fi in range(features.shape[0]):
        f = features[fi]
        for b in range(parent.shape[1]):
            for c in range(3):
                out[f, b, c] = parent[f, b, c] - child[f, b, c]
