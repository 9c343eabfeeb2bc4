"""Click models: how a simulated user examines a ranked list and clicks.

Every model sees a document's relevance as the probability ``r = (2^y - 1) / (2^ymax - 1)``
(``y`` its label, ``ymax`` the top grade). Models with ``epsilon`` click an examined document
with the attractiveness ``a = epsilon + (1 - epsilon) r`` (Chapelle et al. 2009's noisy clicks,
the unbiased-LTR literature's setting, e.g. ULTRA). Each model gives its closed-form
click probability per rank (:meth:`ClickModel.click_probabilities`) and the parameters of the
simulator's kernel (:mod:`ranklearn.clicks.simulation`).

The examination of the position-based models is ``theta_k = theta_base(k)^eta`` with the
literature's ``theta_base`` for ranks 1-10 (Joachims et al. 2017; Wang et al. 2018; ULTRA):
.68 .61 .48 .34 .28 .20 .11 .10 .08 .06, and past rank 10 ``theta_base(k) = 0.06 * 10 / k``
(the rank-10 value decaying as 1/k, as DCG's discount does; every value stays below rank 10's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

#: ``theta_base`` for ranks 1-10.
THETA_BASE_TOP10 = np.array([0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06])

# kernel codes (ranklearn.clicks.simulation)
PBM_CODE, CASCADE_CODE, DCM_CODE, UBM_CODE, TRUST_CODE = 0, 1, 2, 3, 4


def theta_base(top_k: int) -> np.ndarray:
    """``theta_base(k)`` for ranks ``1..top_k`` (the module docstring's values and extension)."""
    k = np.arange(1, top_k + 1)
    out = 0.06 * 10.0 / k
    n = min(top_k, 10)
    out[:n] = THETA_BASE_TOP10[:n]
    return out


def _check_probability(value: float, name: str) -> float:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def _check_eta(eta: float) -> float:
    if not (np.isfinite(eta) and eta >= 0):
        raise ValueError(f"eta must be a finite number >= 0, got {eta!r}")
    return float(eta)


def _per_rank(values: ArrayLike, top_k: int, name: str) -> np.ndarray:
    """A per-rank probability array of at least ``top_k`` entries (a scalar: the same at every rank)."""
    arr = np.asarray(values, dtype=np.float64)
    arr = np.full(top_k, float(arr)) if arr.ndim == 0 else arr
    if arr.ndim != 1 or len(arr) < top_k:
        raise ValueError(f"{name} needs a value for each of the {top_k} ranks, got shape {arr.shape}")
    if not ((arr >= 0) & (arr <= 1)).all():
        raise ValueError(f"{name} must hold probabilities in [0, 1]")
    return arr[:top_k].copy()


@dataclass(frozen=True)
class KernelParams:
    """What the simulator's kernel reads: the model code and per-rank arrays of ``top_k`` entries."""

    code: int
    epsilon: float
    examination: np.ndarray  # theta_k (PBM, trust bias)
    continuation: np.ndarray  # lambda_k (DCM)
    clicked_relevant: np.ndarray  # epsilon+_k (trust bias)
    clicked_nonrelevant: np.ndarray  # epsilon-_k (trust bias)
    ubm: np.ndarray  # gamma[rank - 1, distance - 1] (UBM), shape (top_k, top_k)


class ClickModel:
    """A click model (base class): ``click_probabilities`` and ``kernel_params`` of a ranked list."""

    name: ClassVar[str]

    def click_probabilities(self, relevance: ArrayLike) -> np.ndarray:
        """Closed-form probability of a click at each rank of a list whose documents, top first,
        have relevance probabilities ``relevance`` (``(2^y - 1) / (2^ymax - 1)``)."""
        raise NotImplementedError

    def kernel_params(self, top_k: int) -> KernelParams:
        """Parameters of the simulator's kernel for lists cut at ``top_k``."""
        raise NotImplementedError

    def _params(self, code: int, top_k: int, **arrays: np.ndarray) -> KernelParams:
        zeros = np.zeros(top_k)
        base = dict(examination=zeros, continuation=zeros, clicked_relevant=zeros, clicked_nonrelevant=zeros,
                    ubm=np.zeros((top_k, top_k)))  # fmt: skip
        base.update(arrays)
        return KernelParams(code=code, epsilon=getattr(self, "epsilon", 0.0), **base)

    def _attractiveness(self, relevance: ArrayLike) -> np.ndarray:
        return self.epsilon + (1.0 - self.epsilon) * np.asarray(relevance, dtype=np.float64)


@dataclass(frozen=True)
class PBM(ClickModel):
    """Position-based model: a document at rank ``k`` is examined with probability ``theta_k``
    independently of the rest of the list, and clicked when examined with probability
    ``epsilon + (1 - epsilon)(2^y - 1)/(2^ymax - 1)``, so ``P(click at k) = theta_k a``.

    Craswell et al., "An experimental comparison of click position-bias models", WSDM 2008 (the
    examination hypothesis); Joachims, Swaminathan and Schnabel, "Unbiased learning-to-rank with
    biased feedback", WSDM 2017 (``theta_k = theta_base(k)^eta``, the module docstring).

    Parameters
    ----------
    eta : float, default 1
        Severity of the position bias (0: none).
    epsilon : float, default 0.1
        Click probability of an examined non-relevant document.
    theta : array-like, optional
        Per-rank examination probabilities to use instead of ``theta_base^eta``.
    """

    eta: float = 1.0
    epsilon: float = 0.1
    theta: ArrayLike | None = field(default=None, compare=False)
    name: ClassVar[str] = "pbm"

    def __post_init__(self) -> None:
        _check_eta(self.eta)
        _check_probability(self.epsilon, "epsilon")

    def examination(self, top_k: int) -> np.ndarray:
        """``theta_k`` for ranks ``1..top_k``."""
        if self.theta is not None:
            return _per_rank(self.theta, top_k, "theta")
        return theta_base(top_k) ** self.eta

    def click_probabilities(self, relevance: ArrayLike) -> np.ndarray:
        a = self._attractiveness(relevance)
        return self.examination(len(a)) * a

    def kernel_params(self, top_k: int) -> KernelParams:
        return self._params(PBM_CODE, top_k, examination=self.examination(top_k))


@dataclass(frozen=True)
class Cascade(ClickModel):
    """Cascade model: the user reads from the top, clicks an examined document with probability
    ``a = epsilon + (1 - epsilon) r`` and stops at the first click:
    ``P(click at k) = a_k prod_{j<k} (1 - a_j)``; never a click below the first.

    Craswell, Zoeter, Taylor and Ramsey, "An experimental comparison of click position-bias
    models", WSDM 2008.
    """

    epsilon: float = 0.1
    name: ClassVar[str] = "cascade"

    def __post_init__(self) -> None:
        _check_probability(self.epsilon, "epsilon")

    def click_probabilities(self, relevance: ArrayLike) -> np.ndarray:
        a = self._attractiveness(relevance)
        reached = np.concatenate(([1.0], np.cumprod(1.0 - a)[:-1]))
        return reached * a

    def kernel_params(self, top_k: int) -> KernelParams:
        return self._params(CASCADE_CODE, top_k)


@dataclass(frozen=True)
class DCM(ClickModel):
    """Dependent click model: the cascade, except that after a click at rank ``k`` the user goes on
    reading with probability ``lambda_k`` (``continuation``); without a click always.
    ``E_1 = 1``, ``P(click at k) = E_k a_k``, ``E_{k+1} = E_k (1 - a_k + a_k lambda_k)``.

    Guo, Liu and Wang, "Efficient multiple-click models in web search", WSDM 2009.

    Parameters
    ----------
    continuation : float or array-like, default 0.5
        ``lambda_k``, the same at every rank or one per rank.
    epsilon : float, default 0.1
    """

    continuation: ArrayLike = 0.5
    epsilon: float = 0.1
    name: ClassVar[str] = "dcm"

    def __post_init__(self) -> None:
        _check_probability(self.epsilon, "epsilon")
        _per_rank(self.continuation, 1, "continuation")

    def click_probabilities(self, relevance: ArrayLike) -> np.ndarray:
        a = self._attractiveness(relevance)
        lam = _per_rank(self.continuation, len(a), "continuation")
        out = np.empty_like(a)
        e = 1.0
        for k in range(len(a)):
            out[k] = e * a[k]
            e *= 1.0 - a[k] + a[k] * lam[k]
        return out

    def kernel_params(self, top_k: int) -> KernelParams:
        return self._params(DCM_CODE, top_k, continuation=_per_rank(self.continuation, top_k, "continuation"))


@dataclass(frozen=True)
class UBM(ClickModel):
    """User browsing model: a document at rank ``k`` is examined with probability
    ``gamma(k, d)``, ``d`` the distance to the last clicked rank above it (``d = k`` without
    one); an examined document is clicked with probability ``a``.

    Dupret and Piwowarski, "A user browsing model to predict search engine click data from past
    observations", SIGIR 2008.

    Parameters
    ----------
    eta : float, default 1
    epsilon : float, default 0.1
    gamma : array-like of shape (top_k, top_k), optional
        ``gamma[k - 1, d - 1]``. By default ``theta_base(d)^eta``: after a click the user reads
        on as if the list started again below it (without clicks, the PBM's examination).
    """

    eta: float = 1.0
    epsilon: float = 0.1
    gamma: ArrayLike | None = field(default=None, compare=False)
    name: ClassVar[str] = "ubm"

    def __post_init__(self) -> None:
        _check_eta(self.eta)
        _check_probability(self.epsilon, "epsilon")

    def gamma_matrix(self, top_k: int) -> np.ndarray:
        """``gamma[k - 1, d - 1]`` for ranks and distances ``1..top_k``."""
        if self.gamma is None:
            return np.tile(theta_base(top_k) ** self.eta, (top_k, 1))
        g = np.asarray(self.gamma, dtype=np.float64)
        if g.ndim != 2 or g.shape[0] < top_k or g.shape[1] < top_k:
            raise ValueError(f"gamma must have shape ({top_k}, {top_k}) at least, got {g.shape}")
        if not ((g >= 0) & (g <= 1)).all():
            raise ValueError("gamma must hold probabilities in [0, 1]")
        return g[:top_k, :top_k].copy()

    def click_probabilities(self, relevance: ArrayLike) -> np.ndarray:
        a = self._attractiveness(relevance)
        n = len(a)
        g = self.gamma_matrix(n)
        last = np.zeros(n + 1)  # last[j]: probability that the last click so far is at rank j (0: none)
        last[0] = 1.0
        out = np.empty(n)
        for k in range(1, n + 1):
            click_given = g[k - 1, k - 1 - np.arange(k)] * a[k - 1]  # by the last click j = 0..k-1
            out[k - 1] = float(last[:k] @ click_given)
            last[:k] *= 1.0 - click_given
            last[k] = out[k - 1]
        return out

    def kernel_params(self, top_k: int) -> KernelParams:
        return self._params(UBM_CODE, top_k, ubm=self.gamma_matrix(top_k))


@dataclass(frozen=True)
class TrustBias(ClickModel):
    """Trust bias: an examined document (``theta_k`` as the PBM's) is clicked with probability
    ``epsilon+_k`` if relevant and ``epsilon-_k`` if not, relevant with probability ``r``:
    ``P(click at k) = theta_k (epsilon+_k r + epsilon-_k (1 - r))``.

    Agarwal, Zaitsev, Wang, Li, Najork and Joachims, "Addressing trust bias for unbiased
    learning-to-rank", WWW 2019.
    Default ``epsilon+_k = 1 - (min(k, 20) + 1) / 100`` and ``epsilon-_k = 0.65 / k``
    (Vardasbi, Oosterhuis and de Rijke, "When inverse propensity scoring does not work: affine
    corrections for unbiased learning to rank", CIKM 2020).

    Parameters
    ----------
    eta : float, default 1
    clicked_relevant, clicked_nonrelevant : float or array-like, optional
        ``epsilon+_k`` and ``epsilon-_k`` (scalars: the same at every rank).
    """

    eta: float = 1.0
    clicked_relevant: ArrayLike | None = field(default=None, compare=False)
    clicked_nonrelevant: ArrayLike | None = field(default=None, compare=False)
    name: ClassVar[str] = "trust"

    def __post_init__(self) -> None:
        _check_eta(self.eta)

    def click_given_examined(self, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(epsilon+_k, epsilon-_k)`` for ranks ``1..top_k``."""
        k = np.arange(1, top_k + 1)
        plus = 1.0 - (np.minimum(k, 20) + 1) / 100.0 if self.clicked_relevant is None else self.clicked_relevant
        minus = 0.65 / k if self.clicked_nonrelevant is None else self.clicked_nonrelevant
        return _per_rank(plus, top_k, "clicked_relevant"), _per_rank(minus, top_k, "clicked_nonrelevant")

    def click_probabilities(self, relevance: ArrayLike) -> np.ndarray:
        r = np.asarray(relevance, dtype=np.float64)
        plus, minus = self.click_given_examined(len(r))
        return theta_base(len(r)) ** self.eta * (plus * r + minus * (1.0 - r))

    def kernel_params(self, top_k: int) -> KernelParams:
        plus, minus = self.click_given_examined(top_k)
        return self._params(TRUST_CODE, top_k, examination=theta_base(top_k) ** self.eta,
                            clicked_relevant=plus, clicked_nonrelevant=minus)  # fmt: skip


#: The click models by name (the CLI's ``--click-model``).
CLICK_MODELS: dict[str, type[ClickModel]] = {m.name: m for m in (PBM, Cascade, DCM, UBM, TrustBias)}
