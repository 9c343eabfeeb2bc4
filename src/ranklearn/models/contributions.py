"""Feature contributions of a ranker's scores: ``predict_contributions`` (and, for trees,
``predict_interactions``), one mixin per family of rankers.

Every ``predict_contributions(X)`` returns ``(n, F + 1)`` float64: the contribution of each
feature to each row's raw score (what ``predict`` returns), the expected value last; a row
sums to its score.

- Trees (:class:`TreeContributions`: LambdaMART, MART, the random forest): exact
  path-dependent TreeSHAP (:mod:`ranklearn.tree.treeshap`), on the training cover kept in
  every tree (:attr:`ranklearn.tree.tree.Tree.count`).
- Linear rankers (:class:`LinearContributions`): ``coef_[j] * (x[j] - mean[j])``, the exact
  Shapley values of a linear function with independent features; ``mean`` is that of a
  background sample (by default the rows explained).
- Neural rankers (:class:`NeuralContributions`): an *approximation*, expected gradients
  (Erion et al., "Improving performance of deep learning models with axiomatic attribution
  priors and expected gradients", Nature Machine Intelligence 3 (2021)): integrated gradients
  (Sundararajan, Taly, Yan, ICML 2017) averaged over background rows, the path integral taken
  by Gauss-Legendre quadrature with torch autograd. Rows sum to their score only up to the
  quadrature's error: ``additivity_error`` says how far.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ranklearn._threads import thread_limit
from ranklearn.tree.treeshap import TreeExplainer, node_counts

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ranklearn.tree.tree import Tree

__all__ = ["LinearContributions", "NeuralContributions", "TreeContributions", "additivity_error"]


def additivity_error(model, X: ArrayLike, contributions: np.ndarray) -> np.ndarray:
    """Per row, ``contributions.sum() - model.predict(X)``: 0 up to rounding for trees and
    linear rankers, the approximation's error for the neural ones."""
    return contributions.sum(axis=1) - model.predict(X)


class TreeContributions:
    """TreeSHAP for a tree ensemble whose :meth:`_importance_trees` are its trees and whose
    score is their sum times :meth:`_contribution_scale`."""

    def _contribution_scale(self) -> float:
        return 1.0

    def _explainer(self) -> TreeExplainer:
        return TreeExplainer(self._importance_trees(), self.n_features_in_, self._contribution_scale())

    def predict_contributions(self, X: ArrayLike) -> np.ndarray:
        """Exact TreeSHAP values of the raw scores (Lundberg, Erion, Lee 2018, Algorithm 2).

        Parameters
        ----------
        X : array-like (n_samples, n_features)
            Rows as for ``predict`` (missing values follow each split's learned direction).

        Returns
        -------
        ndarray (n_samples, n_features + 1)
            ``phi[:, j]``: feature ``j``'s contribution; ``phi[:, -1]``: the expected score
            over the training data (the trees' covers). Each row sums to ``predict``.

        Raises
        ------
        ValueError
            If the trees keep no cover (a RankLib import): call :meth:`set_cover` first.
        """
        Xc = self._checked_features(X)
        explainer = self._explainer()
        with thread_limit(self._predict_threads(Xc.shape[0])):
            return explainer.contributions(Xc)

    def predict_interactions(self, X: ArrayLike) -> np.ndarray:
        """TreeSHAP interaction values (Lundberg et al. 2020): ``(n, F + 1, F + 1)``, symmetric,
        ``[r, i, j]`` half the interaction of features ``i`` and ``j`` for row ``r``, the main
        effects on the diagonal, ``[r, F, F]`` the expected value; ``out[r, i].sum()`` is
        ``predict_contributions(X)[r, i]``. Cost: contributions times twice the features each
        tree uses.
        """
        Xc = self._checked_features(X)
        explainer = self._explainer()
        with thread_limit(self._predict_threads(Xc.shape[0])):
            return explainer.interactions(Xc)

    def set_cover(self, X: ArrayLike) -> None:
        """Recompute every tree's cover as the number of rows of ``X`` reaching each node.

        For models whose files keep no training counts (RankLib's): give rows like the
        training data (TreeSHAP's expected values are over them). Replaces any cover; saved
        with the model.
        """
        Xc = self._checked_features(X)
        if Xc.shape[0] == 0:
            raise ValueError("set_cover needs at least one row of X")
        trees: list[Tree] = self._importance_trees()
        for tree, count in zip(trees, node_counts(trees, Xc)):
            tree.count = count


class LinearContributions:
    """Exact contributions of a linear ranker, ``coef_[j] * (x[j] - mean[j])``."""

    def predict_contributions(self, X: ArrayLike, *, background: ArrayLike | None = None) -> np.ndarray:
        """Exact Shapley values of ``intercept_ + coef_ @ x`` (features independent).

        Parameters
        ----------
        X : array-like (n_samples, n_features)
        background : array-like (m, n_features), optional
            Rows whose mean is the reference; by default the rows of ``X``.

        Returns
        -------
        ndarray (n_samples, n_features + 1)
            ``coef_ * (X - mean)`` and, last, the expected value ``intercept_ + coef_ @ mean``;
            each row sums to ``predict`` (up to rounding).
        """
        Xc = self._checked_features(X).astype(np.float64)
        ref = Xc if background is None else self._checked_features(background).astype(np.float64)
        if ref.shape[0] == 0:
            raise ValueError("background has no rows")
        mean = ref.mean(axis=0)
        out = np.empty((Xc.shape[0], Xc.shape[1] + 1))
        out[:, :-1] = self.coef_ * (Xc - mean)
        out[:, -1] = self.intercept_ + float(self.coef_ @ mean)
        return out


class NeuralContributions:
    """Expected gradients of a neural ranker's score (an approximation; see the module)."""

    def predict_contributions(
        self, X: ArrayLike, *, background: ArrayLike | None = None, n_background: int = 64, n_steps: int = 16,
        random_state: int = 0,
    ) -> np.ndarray:  # fmt: skip
        """Expected gradients: ``phi_j = mean_b integral_0^1 (x_j - b_j) df/dx_j(b + a (x - b)) da``.

        An approximation of the Shapley values (exact only for linear scorers): rows sum to
        ``predict(X)`` minus the quadrature's error, which :func:`additivity_error` measures.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
        background : array-like (m, n_features), optional
            Reference rows (by default those of ``X``); ``n_background`` of them are drawn
            (all if fewer) with ``random_state``.
        n_steps : int
            Gauss-Legendre points on each path (exact for polynomials of degree < 2 n_steps).

        Returns
        -------
        ndarray (n_samples, n_features + 1)
            The contributions and, last, the mean score of the drawn background rows.
        """
        import torch

        if n_background < 1 or n_steps < 1:
            raise ValueError(f"n_background and n_steps must be >= 1, got {n_background} and {n_steps}")
        Xc = self._checked_features(X)
        ref = Xc if background is None else self._checked_features(background)
        if ref.shape[0] == 0:
            raise ValueError("background has no rows")
        if ref.shape[0] > n_background:
            ref = ref[np.random.default_rng(random_state).choice(ref.shape[0], n_background, replace=False)]
        nodes, weights = np.polynomial.legendre.leggauss(n_steps)
        alphas = (nodes + 1.0) / 2.0
        weights = weights / 2.0
        net = self.model_
        device = next(net.parameters()).device
        b = torch.as_tensor(ref, dtype=torch.float32, device=device)
        out = np.zeros((Xc.shape[0], Xc.shape[1] + 1))
        was_training = net.training
        net.eval()  # no dropout: the function explained is predict's
        try:
            with thread_limit(self._predict_threads(Xc.shape[0] * b.shape[0] * n_steps)):
                for r in range(Xc.shape[0]):
                    x = torch.as_tensor(Xc[r], dtype=torch.float32, device=device)
                    diff = x - b  # (m, F)
                    a = torch.as_tensor(alphas, dtype=torch.float32, device=device)
                    points = (b[None] + a[:, None, None] * diff[None]).reshape(-1, x.shape[0]).requires_grad_(True)
                    (grad,) = torch.autograd.grad(net(points).sum(), points)
                    grad = grad.reshape(n_steps, b.shape[0], -1).double().cpu().numpy()
                    out[r, :-1] = np.einsum("s,smf,mf->f", weights, grad, diff.double().cpu().numpy()) / b.shape[0]
        finally:
            net.train(was_training)
        out[:, -1] = self._predict_raw(ref).mean()
        return out
