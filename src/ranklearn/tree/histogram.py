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
_GROUP = 4  # features summed in one pass over the rows: four independent add chains, one row read


@njit(cache=True, inline="always")
def _add_row(acc, c0, c1, c2, c3, i, g, h):  # fmt: skip
    """Add row ``i`` (gradient ``g``, hessian ``h``) to the histograms of four feature columns."""
    b = c0[i]
    acc[0, b, 0] += g
    acc[0, b, 1] += h
    acc[0, b, 2] += 1.0
    b = c1[i]
    acc[1, b, 0] += g
    acc[1, b, 1] += h
    acc[1, b, 2] += 1.0
    b = c2[i]
    acc[2, b, 0] += g
    acc[2, b, 1] += h
    acc[2, b, 2] += 1.0
    b = c3[i]
    acc[3, b, 0] += g
    acc[3, b, 1] += h
    acc[3, b, 2] += 1.0


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
    samples : int32 rows of the leaf (sorted and distinct: reads stay close together)
    grad, hess : float64 per row
    features : int64 features to build (the tree's feature subsample)
    hist : float64 (n_features, 256, 3), written for ``features`` only

    Each feature's bins are summed by one task in row order, so the sums are the same
    whatever the number of threads.
    """
    m = samples.shape[0]
    # Sorted distinct rows spanning m values are a range (the root): read them without a gather.
    lo = samples[0] if m > 0 else 0
    contiguous = m > 0 and samples[m - 1] - lo == m - 1
    # Gather once, interleaved, so every pass streams one array.
    gh = np.empty((m, 2))
    for r in range(m):
        i = lo + r if contiguous else samples[r]
        gh[r, 0] = grad[i]
        gh[r, 1] = hess[i]
    nf = features.shape[0]
    n_groups = (nf + _GROUP - 1) // _GROUP
    n_chunks = min(n_groups, _FEATURE_CHUNKS)
    for c in prange(n_chunks):
        # Task-local accumulators padded to 32 bytes a bin: aligned, and hot in L1.
        acc = np.empty((_GROUP, N_HIST_BINS, 4))
        for gi in range(c * n_groups // n_chunks, (c + 1) * n_groups // n_chunks):
            f0 = gi * _GROUP
            # a short last group repeats its last feature; the repeats are not written out
            c0 = binned[features[f0]]
            c1 = binned[features[min(f0 + 1, nf - 1)]]
            c2 = binned[features[min(f0 + 2, nf - 1)]]
            c3 = binned[features[min(f0 + 3, nf - 1)]]
            acc[:, :, :] = 0.0
            if contiguous:
                for r in range(m):
                    _add_row(acc, c0, c1, c2, c3, lo + r, gh[r, 0], gh[r, 1])
            else:
                for r in range(m):
                    _add_row(acc, c0, c1, c2, c3, samples[r], gh[r, 0], gh[r, 1])
            for k in range(min(_GROUP, nf - f0)):
                hf = hist[features[f0 + k]]
                for b in range(N_HIST_BINS):
                    hf[b, 0] = acc[k, b, 0]
                    hf[b, 1] = acc[k, b, 1]
                    hf[b, 2] = acc[k, b, 2]


@njit(cache=True)
def subtract_histogram(parent: np.ndarray, child: np.ndarray, features: np.ndarray, out: np.ndarray) -> None:
    """``out = parent - child`` for the given features (``out`` may be ``parent``); serial: it is tiny."""
    for fi in range(features.shape[0]):
        f = features[fi]
        for b in range(parent.shape[1]):
            for c in range(3):
                out[f, b, c] = parent[f, b, c] - child[f, b, c]
