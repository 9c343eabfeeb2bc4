"""Split finding: the best threshold of every feature of a leaf, from its histogram.

Gain of a split with left/right sums (G_L, H_L), (G_R, H_R) and L2 regularization lambda::

    gain = G_L^2 / (H_L + lambda) + G_R^2 / (H_R + lambda) - G^2 / (H + lambda)

(twice the decrease of the second-order loss; leaf value -G / (H + lambda)). Where the leaf
has missing values both directions are tried; otherwise missing values are sent to the
child with more samples, for prediction time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ranklearn.tree.binning import MISSING_BIN


_TIE = 1e-10  # relative gain difference below which two features' splits tie


@njit(cache=True, inline="always")
def _score(g: float, h: float, l2: float) -> float:
    d = h + l2
    return g * g / d if d > 0.0 else 0.0


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
    best_gain = np.full(nf, -np.inf)
    best_bin = np.zeros(nf, dtype=np.int64)
    best_mleft = np.zeros(nf, dtype=np.bool_)
    parent = _score(sum_g, sum_h, l2)
    # Serial on purpose: ~65k cheap bin visits, less than a parallel region costs to start.
    for fi in range(nf):
        f = features[fi]
        hf = hist[f]
        nb = n_bins[f]
        mg = hf[MISSING_BIN, 0]
        mh = hf[MISSING_BIN, 1]
        mc = hf[MISSING_BIN, 2]
        has_missing = mc > 0.0
        gl = 0.0
        hl = 0.0
        cl = 0.0
        # the last value bin can be a threshold only to split missing from the rest
        last = nb if has_missing else nb - 1
        for t in range(last):
            gl += hf[t, 0]
            hl += hf[t, 1]
            cl += hf[t, 2]
            for side in range(2 if has_missing else 1):
                if side == 0:  # missing values go right
                    gL, hL, cL = gl, hl, cl
                else:  # missing values go left
                    if t == nb - 1:
                        continue  # everything left: no split
                    gL, hL, cL = gl + mg, hl + mh, cl + mc
                gR = sum_g - gL
                hR = sum_h - hL
                cR = count - cL
                if cL < min_samples_leaf or cR < min_samples_leaf:
                    continue
                if hL < min_sum_hessian or hR < min_sum_hessian:
                    continue
                gain = _score(gL, hL, l2) + _score(gR, hR, l2) - parent
                if gain > best_gain[fi]:
                    best_gain[fi] = gain
                    best_bin[fi] = t
                    if has_missing:
                        best_mleft[fi] = side == 1
                    else:
                        best_mleft[fi] = cL >= cR
    # First best feature in feature order. A gain within rounding of zero is no gain: such a
    # split would only spend a leaf. Two features that cut the leaf's rows the same way have
    # the same gain up to rounding, which depends on the order the histograms were summed
    # in: a later feature wins only by more than rounding (relative _TIE), so that a
    # distributed fit (other summation order) picks the same feature as one machine.
    win = -1
    win_gain = min_gain + 1e-12 * abs(parent) + 1e-15
    for fi in range(nf):
        if best_gain[fi] > win_gain + (_TIE * abs(win_gain) if win >= 0 else 0.0):
            win_gain = best_gain[fi]
            win = fi
    if win < 0:
        return 0.0, -1, 0, False
    return win_gain, int(features[win]), int(best_bin[win]), bool(best_mleft[win])
