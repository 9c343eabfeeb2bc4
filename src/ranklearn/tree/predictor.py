"""Prediction with an ensemble of trees: raw feature values or binned data, in parallel over rows."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ranklearn.tree.binning import MISSING_BIN
from ranklearn.tree.tree import Tree


@njit(parallel=True, cache=True)
def _predict_raw(X, feature, threshold, missing_left, left, right, value, roots, out):
    for i in prange(X.shape[0]):
        s = 0.0
        for t in range(roots.shape[0]):
            node = roots[t]
            while feature[node] >= 0:
                x = X[i, feature[node]]
                if np.isnan(x):
                    go_left = missing_left[node]
                else:
                    go_left = x <= threshold[node]
                node = left[node] if go_left else right[node]
            s += value[node]
        out[i] += s


@njit(parallel=True, cache=True)
def _predict_binned(binned, feature, bin_threshold, missing_left, left, right, value, roots, out):
    for i in prange(binned.shape[1]):
        s = 0.0
        for t in range(roots.shape[0]):
            node = roots[t]
            while feature[node] >= 0:
                b = binned[feature[node], i]
                if b == MISSING_BIN:
                    go_left = missing_left[node]
                else:
                    go_left = b <= bin_threshold[node]
                node = left[node] if go_left else right[node]
            s += value[node]
        out[i] += s


class TreePredictor:
    """The trees of an ensemble packed into flat arrays, child indices made global."""

    def __init__(self, trees: list[Tree]) -> None:
        sizes = [t.feature.shape[0] for t in trees]
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64) if trees else np.zeros(0, np.int64)
        self.roots = offsets

        def cat(name: str, dtype) -> np.ndarray:
            if not trees:
                return np.zeros(0, dtype=dtype)
            return np.concatenate([getattr(t, name) for t in trees]).astype(dtype)

        self.feature = cat("feature", np.int32)
        self.threshold = cat("threshold", np.float64)
        self.bin_threshold = cat("bin_threshold", np.int32)
        self.missing_left = cat("missing_left", np.bool_)
        self.value = cat("value", np.float64)
        shift = np.repeat(offsets, sizes) if trees else np.zeros(0, np.int64)
        self.left = np.where(cat("left", np.int64) >= 0, cat("left", np.int64) + shift, -1)
        self.right = np.where(cat("right", np.int64) >= 0, cat("right", np.int64) + shift, -1)

    def predict(self, X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Sum of the trees' outputs for raw float32 rows ``X`` (n, n_features), added to ``out``."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        out = np.zeros(X.shape[0]) if out is None else out
        _predict_raw(
            X, self.feature, self.threshold, self.missing_left, self.left, self.right, self.value, self.roots, out
        )
        return out

    def predict_binned(self, binned: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Same on feature-major binned data (n_features, n), added to ``out``."""
        out = np.zeros(binned.shape[1]) if out is None else out
        _predict_binned(
            binned,
            self.feature,
            self.bin_threshold,
            self.missing_left,
            self.left,
            self.right,
            self.value,
            self.roots,
            out,
        )
        return out
