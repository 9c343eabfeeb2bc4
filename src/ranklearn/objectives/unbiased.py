"""Position-debiased lambda objectives: learning to rank from biased clicks with trees.

Each wraps a :class:`~ranklearn.objectives.lambdas.LambdaObjective` (its pairs, |ΔZ| and
normalization), reads the rows' display positions (``side["position"]``, 1-based) and puts
each position ``p`` in bucket ``min(p, max_rank) - 1``: positions past ``max_rank`` share the
last bucket (they are debiased with the deepest tracked rank's bias, never dropped).

``"pairwise"`` -- Unbiased LambdaMART (Hu, Wang, Peng, Li, "Unbiased LambdaMART: An Unbiased
Pairwise Learning-to-Rank Algorithm", WWW 2019). Position-bias ratios ``t+`` (clicked, the more
relevant document of a pair) and ``t-`` (unclicked) per rank, ``t(1) = 1``, estimated jointly
with the trees. A pair ``(i, j)`` with ``y_i > y_j`` gets the lambda and hessian of LambdaRank
divided by ``t+[b_i] t-[b_j]``; after every iteration, from that iteration's pair costs
``C_ij = log(1 + exp(-sigma (s_i - s_j))) |ΔZ_ij|`` summed over all rows (eqs. 30-31)::

    t+[k] = (sum_{pairs, b_i = k} C_ij / t-[b_j]  /  the same sum for k = 1) ^ (1 / (1 + p))
    t-[k] = (sum_{pairs, b_j = k} C_ij / t+[b_i]  /  the same sum for k = 1) ^ (1 / (1 + p))

where ``p`` is the L_p regularization of the ratios (XGBoost's ``lambdarank_bias_norm``, 2 by
default). A rank without pairs keeps its ratio. XGBoost's ``lambdarank_unbiased`` sums another
cost into the same ratios: ``log(1 + exp(s_i - s_j)) |ΔZ_ij|``, the loss of the reversed
pair, large when the pair is already well ordered (its ``log(1 / (1 - sigmoid(s_i - s_j)))``; the
ratios it saves are reproduced from its own scores in
``tests/test_objectives_unbiased.py``). Its ratios therefore differ from these on the same scores.

The learned ratios and factors are rounded to multiples of 2^-36 after each update, so that the
same sums added in another order (a distributed fit's) give the same bias bit for bit.

``"position_factors"`` -- LightGBM's position-bias factors (``lambdarank_position_bias_regularization``):
training scores are ``f(x) + g[b]``; after every iteration one regularized Newton step on each
``g[k]`` from the sums of its rows' (weighted) gradients ``G_k``, hessians ``H_k`` and counts
``N_k``: ``g[k] -= lr (G_k + r N_k g[k]) / (H_k + r N_k + 0.001)``, ``r`` the L2 regularization,
``lr`` the boosting learning rate. ``predict`` returns ``f`` alone.

``"ipw"`` -- inverse propensity weighting (Wang, Bendersky, Metzler, Najork, SIGIR 2016; Joachims,
Swaminathan, Schnabel, WSDM 2017): a pair's lambda and hessian are divided by the propensity of
the more relevant (clicked) document's rank, ``max(propensity[k], clip)`` (given per rank, e.g.
:func:`ranklearn.clicks.estimate_propensity`'s ``.propensity``; fixed during training).

Sample weights multiply the gradients, the position factors' sums and counts (``N_k`` is the
weighted count), and the pair costs of ``"pairwise"``'s ratios (a pair's cost counts with the
weight of the row whose rank it is summed under: the clicked row's for ``t+``, the other's for
``t-``), so that a row of weight ``w`` acts as ``w`` copies of it (e.g. ``w`` identical sessions,
:meth:`ranklearn.clicks.ClickTrainingSet.per_pattern`). The per-iteration statistics of ``"pairwise"`` and ``"position_factors"`` are sums over rows
(:meth:`~ranklearn.objectives.base.Objective.bias_statistics`): a distributed fit adds them over
its processes and reaches the bias of one machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ranklearn.objectives.base import Objective, output_arrays
from ranklearn.objectives.lambdas import LambdaObjective

#: The estimators of ``LambdaMART(unbiased=...)``.
UNBIASED_METHODS = ("pairwise", "position_factors", "ipw")

#: LightGBM's guard on the position factors' Newton step
_NEWTON_EPS = 0.001
#: the learned bias is kept on a grid of 2^-36: sums over rows added in another order (the Dask
#: peers') differ in their last bits, and would tip ties between equal splits the other way
_GRID = 2.0**36


def _on_grid(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to the nearest multiple of 2^-36 (about 1.5e-11)."""
    return np.round(values * _GRID) / _GRID


def position_buckets(side: Mapping[str, np.ndarray] | None, n_buckets: int, who: str) -> np.ndarray:
    """0-based bucket of every row's position: ``min(position, n_buckets) - 1``.

    Raises
    ------
    ValueError
        When ``side`` has no positions (naming ``who``).
    """
    if side is None or side.get("position") is None:
        raise ValueError(f"{who} needs the rows' display positions: fit(..., position=...)")
    return np.minimum(np.asarray(side["position"], dtype=np.int64), n_buckets) - 1


class DebiasedObjective(Objective):
    """A lambda objective whose pairs are corrected for position bias (the base of the three).

    Parameters
    ----------
    lambdas : LambdaObjective
        The pairs, their |ΔZ| and normalization.
    max_rank : int
        Ranks tracked; deeper positions share the last one's bias.
    """

    method: str
    side_keys = ("position",)

    def __init__(self, lambdas: LambdaObjective, max_rank: int) -> None:
        if not isinstance(lambdas, LambdaObjective):
            raise ValueError(
                f"unbiased={self.method!r} debiases the pair objectives 'lambdarank' and 'ranknet', "
                f"not {getattr(lambdas, 'name', type(lambdas).__name__)!r}"
            )
        if max_rank < 1:
            raise ValueError(f"the maximum tracked rank must be >= 1, got {max_rank}")
        self.lambdas = lambdas
        self.max_rank = int(max_rank)
        self._positions: np.ndarray | None = None  # the positions _bucket_rows were computed from
        self._bucket_rows = np.zeros(0, np.int64)

    @property
    def name(self) -> str:
        return self.lambdas.name

    def prepare(self, y: np.ndarray, ptr: np.ndarray) -> None:
        self.lambdas.prepare(y, ptr)
        self._positions = None  # a new fit: its positions' buckets are computed again

    def row_weights(self, y: np.ndarray, ptr: np.ndarray) -> np.ndarray | None:
        return self.lambdas.row_weights(y, ptr)

    def position_bias(self) -> dict[str, np.ndarray]:
        """The bias per tracked rank (from rank 1), by name."""
        raise NotImplementedError

    def get_params(self) -> dict[str, Any]:
        return {
            **self.lambdas.get_params(),
            "unbiased": self.method,
            "max_rank": self.max_rank,
            "position_bias": {k: v.tolist() for k, v in self.position_bias().items()},
        }

    def _bucket(self, side: Mapping[str, np.ndarray] | None) -> np.ndarray:
        # the boosting loop passes the same positions every iteration: computed once per fit
        positions = None if side is None else side.get("position")
        if positions is None or positions is not self._positions:
            self._bucket_rows = position_buckets(side, self.max_rank, f"unbiased={self.method!r}")
            self._positions = positions
        return self._bucket_rows


class PairwiseDebiasedObjective(DebiasedObjective):
    """Unbiased LambdaMART (Hu et al., WWW 2019): see the module's docstring.

    Parameters
    ----------
    lambdas, max_rank
        As :class:`DebiasedObjective`.
    norm : float
        ``p`` of the L_p regularization of the ratios (exponent ``1 / (1 + p)``), > 0.
    """

    method = "pairwise"

    def __init__(self, lambdas: LambdaObjective, max_rank: int = 10, norm: float = 2.0) -> None:
        super().__init__(lambdas, max_rank)
        if not norm > 0:
            raise ValueError(f"the L_p norm of the position-bias ratios must be > 0, got {norm}")
        self.norm = float(norm)
        self.t_plus = np.ones(self.max_rank)
        self.t_minus = np.ones(self.max_rank)
        self._row_costs = np.zeros((2, 0))

    def gradients(self, scores, y, ptr, grad=None, hess=None, *, side=None):
        grad, hess = output_arrays(scores.shape[0], grad, hess)
        if self._row_costs.shape[1] != scores.shape[0]:
            self._row_costs = np.empty((2, scores.shape[0]))
        self.lambdas.pair_gradients(
            scores, y, ptr, grad, hess, self._bucket(side), self.t_plus, self.t_minus, self._row_costs
        )
        return grad, hess

    def bias_statistics(self, grad: np.ndarray, hess: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
        costs = self._row_costs if weight is None else self._row_costs * weight
        return np.concatenate([np.bincount(self._bucket_rows, row, self.max_rank) for row in costs])

    def update_bias(self, totals: np.ndarray) -> None:
        costs = np.asarray(totals, dtype=np.float64).reshape(2, self.max_rank)
        for row, ratios in zip(costs, (self.t_plus, self.t_minus)):
            if row[0] > 0:  # rank 1 anchors the ratios; a rank without pairs keeps its ratio
                seen = row > 0
                ratios[seen] = _on_grid((row[seen] / row[0]) ** (1.0 / (1.0 + self.norm)))

    def position_bias(self) -> dict[str, np.ndarray]:
        return {"t_plus": self.t_plus.copy(), "t_minus": self.t_minus.copy()}

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "norm": self.norm}


class PositionFactorObjective(DebiasedObjective):
    """LightGBM's additive position-bias factors: see the module's docstring.

    Parameters
    ----------
    lambdas, max_rank
        As :class:`DebiasedObjective`.
    regularization : float
        L2 regularization ``r`` of the factors (LightGBM's ``lambdarank_position_bias_regularization``).
    learning_rate : float
        Step size of the factors' Newton step (the boosting learning rate, as LightGBM).
    """

    method = "position_factors"

    def __init__(
        self, lambdas: LambdaObjective, max_rank: int = 10, regularization: float = 0.0, learning_rate: float = 0.1
    ) -> None:
        super().__init__(lambdas, max_rank)
        if regularization < 0:
            raise ValueError(f"the position factors' regularization must be >= 0, got {regularization}")
        self.regularization = float(regularization)
        self.learning_rate = float(learning_rate)
        self.factors = np.zeros(self.max_rank)

    def gradients(self, scores, y, ptr, grad=None, hess=None, *, side=None):
        grad, hess = output_arrays(scores.shape[0], grad, hess)
        self.lambdas.pair_gradients(scores + self.factors[self._bucket(side)], y, ptr, grad, hess)
        return grad, hess

    def bias_statistics(self, grad: np.ndarray, hess: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
        b, k = self._bucket_rows, self.max_rank
        counts = np.bincount(b, minlength=k).astype(np.float64) if weight is None else np.bincount(b, weight, k)
        return np.concatenate([np.bincount(b, grad, k), np.bincount(b, hess, k), counts])

    def update_bias(self, totals: np.ndarray) -> None:
        g_sum, h_sum, count = np.asarray(totals, dtype=np.float64).reshape(3, self.max_rank)
        r = self.regularization
        step = (g_sum + r * count * self.factors) / (h_sum + r * count + _NEWTON_EPS)
        self.factors[:] = _on_grid(self.factors - self.learning_rate * np.where(count > 0, step, 0.0))

    def position_bias(self) -> dict[str, np.ndarray]:
        return {"factor": self.factors.copy()}

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "regularization": self.regularization}


class IPWObjective(DebiasedObjective):
    """Inverse propensity weighting of the lambdas: see the module's docstring.

    Parameters
    ----------
    lambdas : LambdaObjective
    propensity : float64 (K,)
        Examination propensity of ranks ``1..K`` (any scale; deeper positions take rank K's), > 0.
    clip : float or None
        Propensities below ``clip`` count as ``clip`` (weights at most ``1 / clip``).
    """

    method = "ipw"

    def __init__(self, lambdas: LambdaObjective, propensity: Any, clip: float | None = None) -> None:
        p = propensity_per_rank(propensity)
        clip = checked_clip(clip, "propensity_clip")
        super().__init__(lambdas, p.size)
        self.clip = clip
        self.propensity = p if clip is None else np.maximum(p, clip)
        self._ones = np.ones(p.size)

    def gradients(self, scores, y, ptr, grad=None, hess=None, *, side=None):
        grad, hess = output_arrays(scores.shape[0], grad, hess)
        self.lambdas.pair_gradients(scores, y, ptr, grad, hess, self._bucket(side), self.propensity, self._ones)
        return grad, hess

    def position_bias(self) -> dict[str, np.ndarray]:
        return {"propensity": self.propensity.copy()}

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "clip": self.clip}


def propensity_per_rank(propensity: Any) -> np.ndarray:
    """``propensity`` per rank from 1 (a sequence, or an object with ``.propensity`` such as
    :class:`ranklearn.clicks.Propensity`) as float64, checked.

    Raises
    ------
    ValueError
        Unless it is a non-empty 1-d sequence of positive finite numbers (the message shows at
        most its first 12 values, or the shape of an array of another dimension).
    """
    p = np.asarray(getattr(propensity, "propensity", propensity), dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"propensity must be one number per rank from 1 (1-d), got an array of shape {p.shape}")
    if p.size == 0 or not np.all(np.isfinite(p)) or np.any(p <= 0):
        shown = ", ".join(f"{v:.4g}" for v in p[:12]) + (", ..." if p.size > 12 else "")
        raise ValueError(f"propensity must be positive finite numbers, one per rank from 1 (got [{shown}])")
    return p


def checked_clip(clip: Any, name: str = "clip") -> float | None:
    """``clip`` (the smallest propensity a weight divides by) as a float, or None when not given.

    Raises
    ------
    ValueError
        Naming ``name``, unless ``clip`` is None or a positive finite number (not a bool).
    """
    if clip is None:
        return None
    if isinstance(clip, bool) or not isinstance(clip, (int, float, np.integer, np.floating)) or not 0 < clip < np.inf:
        raise ValueError(f"{name} must be a positive number or None, got {clip!r}")
    return float(clip)


def check_ipw_settings(setting: str, chosen: Any, propensity: Any, clip: Any) -> None:
    """Refuse ``propensity`` or its ``clip`` unless ``setting`` is ``"ipw"``, and ``"ipw"`` without ``propensity``.

    Parameters
    ----------
    setting : str
        The parameter that chooses the estimator, as errors name it: ``"unbiased"`` of the
        trees, ``"loss"`` of the networks.
    chosen : str or None
        Its value (``"ipw"``, another estimator's name, or None).
    propensity, clip : object or None
        The ``propensity`` and ``propensity_clip`` parameters given.

    Raises
    ------
    ValueError
        Naming the parameter given (``propensity`` or ``propensity_clip``) and the setting.
    """
    if chosen == "ipw":
        if propensity is None:
            raise ValueError(
                f"propensity is required by {setting}='ipw' (the examination propensity per rank from 1, e.g. from "
                "ranklearn.clicks.estimate_propensity)"
            )
        return
    for name, value in (("propensity", propensity), ("propensity_clip", clip)):
        if value is not None:
            raise ValueError(f"{name} is read by {setting}='ipw' only" + ("" if chosen is None else f", not {setting}={chosen!r}"))


def make_unbiased(
    method: str,
    lambdas: Objective,
    *,
    max_rank: int = 10,
    norm: float = 2.0,
    regularization: float = 0.0,
    learning_rate: float = 0.1,
    propensity: Any = None,
    clip: float | None = None,
) -> DebiasedObjective:
    """The debiased objective ``method`` (one of :data:`UNBIASED_METHODS`) around ``lambdas``.

    Raises
    ------
    ValueError
        On another method, an objective that is not a pair objective, ``"ipw"`` without
        ``propensity``, or ``propensity`` or ``clip`` with another method.
    """
    if method not in UNBIASED_METHODS:
        raise ValueError(f"unbiased must be one of {', '.join(UNBIASED_METHODS)} or None; got {method!r}")
    check_ipw_settings("unbiased", method, propensity, clip)
    if method == "pairwise":
        return PairwiseDebiasedObjective(lambdas, max_rank, norm)
    if method == "position_factors":
        return PositionFactorObjective(lambdas, max_rank, regularization, learning_rate)
    return IPWObjective(lambdas, propensity, clip)
