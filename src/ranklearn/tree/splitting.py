"""Split finding: the best threshold of every feature of a leaf, from its histogram.

Gain of a split with left/right sums (G_L, H_L), (G_R, H_R) and L2 regularization lambda::

    gain = G_L^2 / (H_L + lambda) + G_R^2 / (H_R + lambda) - G^2 / (H + lambda)

(twice the decrease of the second-order loss; leaf value -G / (H + lambda)). Where the leaf
has missing values both directions are tried; otherwise missing values are sent to the
child with more samples, for prediction time.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ranklearn.tree.binning import MISSING_BIN, N_HIST_BINS
from ranklearn.tree.histogram import FEATURE_CHUNKS, GROUP, build_feature_group, gather_gradients, subtract_feature


_TIE = 1e-10  # relative gain difference below which two features' splits tie


@njit(cache=True, inline="always")
def _score(g: float, h: float, l2: float) -> float:
    d = h + l2
    return g * g / d if d > 0.0 else 0.0


@njit(cache=True, inline="always")
def _threshold_gain(
    gL: float, hL: float, cL: float, sum_g: float, sum_h: float, count: float, parent: float,
    l2: float, min_samples_leaf: int, min_sum_hessian: float,
) -> float:  # fmt: skip
    """Gain of sending (gL, hL, cL) left and the rest right; -inf where the limits forbid it.
    Without a branch, so that a loop over thresholds is vectorized."""
    gR = sum_g - gL
    hR = sum_h - hL
    cR = count - cL
    gain = _score(gL, hL, l2) + _score(gR, hR, l2) - parent
    too_few = (cL < min_samples_leaf) | (cR < min_samples_leaf)
    too_light = (hL < min_sum_hessian) | (hR < min_sum_hessian)
    return -np.inf if too_few | too_light else gain


@njit(cache=True, inline="always")
def _best_of_feature(
    hf: np.ndarray, nb: int, sum_g: float, sum_h: float, count: float, parent: float,
    l2: float, min_samples_leaf: int, min_sum_hessian: float, work: np.ndarray,
) -> tuple[float, int, bool]:  # fmt: skip
    """Best threshold of one feature from its histogram ``hf`` (256, 3):
    ``(gain, bin_threshold, missing_left)``, gain -inf when no threshold is allowed.
    ``work`` is (5, 256) scratch memory.

    The running sums first (in bin order), then every threshold's gain in a loop without
    branches (vectorized: its divisions were most of the search), then the first best in
    the order the thresholds are tried: at each bin, missing values right then left.
    """
    mg = hf[MISSING_BIN, 0]
    mh = hf[MISSING_BIN, 1]
    mc = hf[MISSING_BIN, 2]
    has_missing = mc > 0.0
    # the last value bin can be a threshold only to split missing from the rest
    last = nb if has_missing else nb - 1
    gl = work[0]
    hl = work[1]
    cl = work[2]
    gain_right = work[3]  # missing values go right
    gain_left = work[4]  # missing values go left
    g = 0.0
    h = 0.0
    c = 0.0
    for t in range(last):
        g += hf[t, 0]
        h += hf[t, 1]
        c += hf[t, 2]
        gl[t] = g
        hl[t] = h
        cl[t] = c
    # A threshold at a bin without rows of this leaf cuts its rows as the one below it does: the
    # two gains are equal but for rounding residues of the histogram subtraction (an empty bin's
    # parent - sibling sums), which differ with the summation order (a distributed fit's), so
    # such thresholds are not tried and every fit keeps the lowest threshold of a cut. The counts
    # are whole numbers, exact in any order.
    for t in range(last):
        gain = _threshold_gain(gl[t], hl[t], cl[t], sum_g, sum_h, count, parent, l2, min_samples_leaf, min_sum_hessian)
        gain_right[t] = gain if hf[t, 2] > 0.0 else -np.inf
    if has_missing:
        for t in range(last):
            gain = _threshold_gain(
                gl[t] + mg, hl[t] + mh, cl[t] + mc, sum_g, sum_h, count, parent, l2, min_samples_leaf,
                min_sum_hessian,
            )  # fmt: skip
            gain_left[t] = gain if hf[t, 2] > 0.0 else -np.inf
        gain_left[nb - 1] = -np.inf  # everything left: no split
    best_gain = -np.inf
    best_bin = 0
    best_mleft = False
    for t in range(last):
        if gain_right[t] > best_gain:
            best_gain = gain_right[t]
            best_bin = t
            best_mleft = False if has_missing else cl[t] >= count - cl[t]
        if has_missing and gain_left[t] > best_gain:
            best_gain = gain_left[t]
            best_bin = t
            best_mleft = True
    return best_gain, best_bin, best_mleft


@njit(cache=True, inline="always")
def _first_best(
    best_gain: np.ndarray, best_bin: np.ndarray, best_mleft: np.ndarray, features: np.ndarray,
    parent: float, min_gain: float,
) -> tuple[float, int, int, bool]:  # fmt: skip
    # First best feature in feature order. A gain within rounding of zero is no gain: such a
    # split would only spend a leaf. Two features that cut the leaf's rows the same way have
    # the same gain up to rounding, which depends on the order the histograms were summed
    # in: a later feature wins only by more than rounding (relative _TIE), so that a
    # distributed fit (other summation order) picks the same feature as one machine.
    win = -1
    win_gain = min_gain + 1e-12 * abs(parent) + 1e-15
    for fi in range(features.shape[0]):
        if best_gain[fi] > win_gain + (_TIE * abs(win_gain) if win >= 0 else 0.0):
            win_gain = best_gain[fi]
            win = fi
    if win < 0:
        return 0.0, -1, 0, False
    return win_gain, int(features[win]), int(best_bin[win]), bool(best_mleft[win])


@njit(cache=True)
def find_best_split(
    hist: np.ndarray,
    features: np.ndarray,
    n_bins: np.ndarray,
    sum_g: float,
    sum_h: float,
    count: float,
    l2: float,
    min_samples_leaf: int,
    min_sum_hessian: float,
    min_gain: float,
) -> tuple[float, int, int, bool]:
    """Best split of one leaf over ``features``.

    Returns
    -------
    gain, feature, bin_threshold, missing_left
        ``feature == -1`` when no split satisfies the constraints with gain > ``min_gain``.
    """
    nf = features.shape[0]
    best_gain = np.empty(nf)
    best_bin = np.empty(nf, dtype=np.int64)
    best_mleft = np.empty(nf, dtype=np.bool_)
    parent = _score(sum_g, sum_h, l2)
    work = np.empty((5, N_HIST_BINS))
    for fi in range(nf):
        f = features[fi]
        best_gain[fi], best_bin[fi], best_mleft[fi] = _best_of_feature(
            hist[f], n_bins[f], sum_g, sum_h, count, parent, l2, min_samples_leaf, min_sum_hessian, work
        )
    return _first_best(best_gain, best_bin, best_mleft, features, parent, min_gain)


@njit(parallel=True, cache=True)
def children_histograms_splits(
    binned: np.ndarray,
    samples: np.ndarray,
    grad: np.ndarray,
    hess: np.ndarray,
    features: np.ndarray,
    n_bins: np.ndarray,
    parent: np.ndarray,
    small: np.ndarray,
    sums: np.ndarray,
    find: np.ndarray,
    l2: float,
    min_samples_leaf: int,
    min_sum_hessian: float,
    min_gain: float,
) -> tuple[float, int, int, bool, float, int, int, bool]:
    """After a split: the smaller child's histogram from its rows, the larger child's as the
    parent's minus it, and the best split of each child, in one parallel pass over the features.

    The same results as :func:`~ranklearn.tree.histogram.build_histogram` into ``small``,
    :func:`~ranklearn.tree.histogram.subtract_histogram` into ``parent`` and
    :func:`find_best_split` on each child (each is per feature, and each feature is done by one
    task in the same order), with one parallel region instead of two and no serial split
    search: on small nodes the time of a tree goes to starting parallel regions and to the
    serial parts between them.

    Parameters
    ----------
    binned, samples, grad, hess, features
        As :func:`~ranklearn.tree.histogram.build_histogram`, for the smaller child's rows.
    n_bins : int64 (n_features,)
    parent : float64 (n_features, 256, 3)
        The parent's histogram; overwritten with the larger child's (``features`` only).
    small : float64 (n_features, 256, 3)
        Written with the smaller child's histogram (``features`` only).
    sums : float64 (2, 3)
        ``(sum_g, sum_h, count)`` of the smaller child, then of the larger.
    find : bool (2,)
        Which of (smaller, larger) to search a split for (a child that may not be split: no).
    l2, min_samples_leaf, min_sum_hessian, min_gain
        As :func:`find_best_split`.

    Returns
    -------
    gain, feature, bin_threshold, missing_left of the smaller child, then of the larger
        ``feature == -1``: no split (or not searched).
    """
    nf = features.shape[0]
    best_gain = np.full((2, nf), -np.inf)
    best_bin = np.zeros((2, nf), dtype=np.int64)
    best_mleft = np.zeros((2, nf), dtype=np.bool_)
    scores = np.empty(2)
    for k in range(2):
        scores[k] = _score(sums[k, 0], sums[k, 1], l2)
    gh, lo, contiguous = gather_gradients(samples, grad, hess)
    n_groups = (nf + GROUP - 1) // GROUP
    n_chunks = min(n_groups, FEATURE_CHUNKS)
    for c in prange(n_chunks):
        acc = np.empty((GROUP, N_HIST_BINS, 4))
        work = np.empty((5, N_HIST_BINS))
        for gi in range(c * n_groups // n_chunks, (c + 1) * n_groups // n_chunks):
            f0 = gi * GROUP
            build_feature_group(binned, samples, gh, lo, contiguous, features, n_bins, f0, acc, small)
            for fi in range(f0, min(f0 + GROUP, nf)):
                f = features[fi]
                pf = parent[f]
                sf = small[f]
                subtract_feature(pf, sf, n_bins[f], pf)
                for k in range(2):
                    if find[k]:
                        best_gain[k, fi], best_bin[k, fi], best_mleft[k, fi] = _best_of_feature(
                            sf if k == 0 else pf, n_bins[f], sums[k, 0], sums[k, 1], sums[k, 2], scores[k],
                            l2, min_samples_leaf, min_sum_hessian, work,
                        )  # fmt: skip
    g0, f0_, b0, m0 = _first_best(best_gain[0], best_bin[0], best_mleft[0], features, scores[0], min_gain)
    g1, f1_, b1, m1 = _first_best(best_gain[1], best_bin[1], best_mleft[1], features, scores[1], min_gain)
    return g0, f0_, b0, m0, g1, f1_, b1, m1
