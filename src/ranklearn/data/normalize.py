"""Feature normalization as in RankLib (``-norm sum|zscore|linear``).

RankLib normalizes each query's feature vectors within the query (``per_query=True``,
its behaviour). The global mode (``per_query=False``) learns one set of per-feature
parameters on the training rows; a model stores them with :meth:`Normalizer.to_dict`
and applies them at predict time.

Formulas, per feature over the rows of a query (or all training rows):

* ``sum``: ``x / sum(|x|)``; left unchanged when the sum is 0.
* ``zscore``: ``(x - mean) / std`` with the sample standard deviation (n - 1, as
  RankLib); left unchanged when std is 0 or undefined (a single row), as RankLib does.
* ``linear``: ``(x - min) / (max - min)``; 0 when max == min (RankLib sets 0 too;
  unlike RankLib, whose running max starts at ``Float.MIN_VALUE``, all-negative
  features are handled correctly).

A global normalizer is an affine map of each feature, ``(x - offset) * scale``
(:meth:`Normalizer.affine`), which exports fold into tree thresholds, linear weights or a
graph node. A ranker's ``normalize=`` parameter names one by a spec (:data:`SPECS`): the
method (global, fitted on the training rows) or ``query-`` + the method (per query).

NaN (missing) values are ignored by the statistics and stay NaN. Computation is in
float64; the output keeps the input dtype when it is floating (float64 otherwise).
Sparse input is densified: centred or shifted features are dense in general.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ranklearn._compilation import kernel
from ranklearn.data.dataset import issparse

SUM = 0
ZSCORE = 1
LINEAR = 2
METHODS = {"sum": SUM, "zscore": ZSCORE, "linear": LINEAR}
#: the prefix of a spec that normalizes each query within itself (RankLib's ``-norm``)
PER_QUERY_PREFIX = "query-"
#: a ranker's ``normalize=`` values: ``"zscore"`` (global), ``"query-zscore"`` (per query), ...
SPECS = (*METHODS, *(PER_QUERY_PREFIX + m for m in METHODS))
# Names of the two fitted parameter vectors of each method, as stored by to_dict.
_PARAM_NAMES = {SUM: ("scale", None), ZSCORE: ("mean", "std"), LINEAR: ("min", "max")}


@kernel(cache=True)
def _stats(X, ptr, method):
    """Per-(query, feature) parameters ``a``, ``b`` of the method (see module docstring).

    Loops run row by row (X is row-major) so that large matrices stream through the cache.
    """
    n_queries = ptr.shape[0] - 1
    n_features = X.shape[1]
    a = np.zeros((n_queries, n_features))
    b = np.zeros((n_queries, n_features))
    count = np.zeros(n_features, dtype=np.int64)
    for q in range(n_queries):
        lo = ptr[q]
        hi = ptr[q + 1]
        if method == SUM:
            for r in range(lo, hi):
                for j in range(n_features):
                    x = X[r, j]
                    if not np.isnan(x):
                        a[q, j] += abs(x)
        elif method == ZSCORE:
            count[:] = 0
            for r in range(lo, hi):
                for j in range(n_features):
                    x = X[r, j]
                    if not np.isnan(x):
                        a[q, j] += x
                        count[j] += 1
            for j in range(n_features):
                if count[j] > 0:
                    a[q, j] /= count[j]
            for r in range(lo, hi):
                for j in range(n_features):
                    x = X[r, j]
                    if not np.isnan(x):
                        b[q, j] += (x - a[q, j]) * (x - a[q, j])
            for j in range(n_features):
                # sample std; 0 (feature left unchanged) when undefined for < 2 values
                b[q, j] = np.sqrt(b[q, j] / (count[j] - 1)) if count[j] > 1 else 0.0
        else:
            a[q, :] = np.inf
            b[q, :] = -np.inf
            for r in range(lo, hi):
                for j in range(n_features):
                    x = X[r, j]
                    if not np.isnan(x):
                        a[q, j] = min(a[q, j], x)
                        b[q, j] = max(b[q, j], x)
            for j in range(n_features):
                if a[q, j] > b[q, j]:  # no non-NaN value
                    a[q, j] = 0.0
                    b[q, j] = 0.0
    return a, b


@kernel(cache=True)
def _apply(X, row_query, a, b, method, out):
    """Normalize row ``r`` with the parameters of its query ``row_query[r]`` into ``out``."""
    for r in range(X.shape[0]):
        q = row_query[r]
        for j in range(X.shape[1]):
            x = X[r, j]
            if np.isnan(x):
                out[r, j] = x
            elif method == SUM:
                out[r, j] = x / a[q, j] if a[q, j] > 0 else x
            elif method == ZSCORE:
                out[r, j] = (x - a[q, j]) / b[q, j] if b[q, j] > 0 else x
            else:
                span = b[q, j] - a[q, j]
                out[r, j] = (x - a[q, j]) / span if span > 0 else 0.0


def _as_dense(X: Any) -> np.ndarray:
    X = X.toarray() if issparse(X) else np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    return X if X.dtype.kind == "f" else X.astype(np.float64)


def _check_ptr(ptr: ArrayLike | None, n: int) -> np.ndarray:
    if ptr is None:
        raise ValueError("per-query normalization needs the query boundaries ptr")
    p = np.asarray(ptr, dtype=np.int64)
    if p.ndim != 1 or p.shape[0] < 1 or p[0] != 0 or p[-1] != n or (np.diff(p) < 0).any():
        raise ValueError(f"ptr must be non-decreasing boundaries from 0 to n_samples={n}")
    return p


class Normalizer:
    """RankLib-style feature normalization.

    Parameters
    ----------
    method : {"sum", "zscore", "linear"}
    per_query : bool, default True
        Normalize each query within itself (RankLib's behaviour; nothing is learned by
        ``fit``), or learn global per-feature parameters in ``fit``.

    Attributes
    ----------
    params_ : dict of str to ndarray
        Global mode only, after fit: ``scale`` (sum), ``mean``/``std`` (zscore) or
        ``min``/``max`` (linear), one value per feature.
    n_features_in_ : int
        Number of features seen by ``fit``.
    """

    def __init__(self, method: str = "sum", per_query: bool = True) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
        self.method = method
        self.per_query = bool(per_query)

    @classmethod
    def from_spec(cls, spec: str) -> Normalizer:
        """The normalizer a spec of :data:`SPECS` names: ``"zscore"`` is ``Normalizer("zscore",
        per_query=False)``, ``"query-zscore"`` is ``Normalizer("zscore", per_query=True)``.

        Raises
        ------
        ValueError
            For another string, listing the specs.
        """
        if spec not in SPECS:
            raise ValueError(f"normalize must be one of {', '.join(SPECS)}, got {spec!r}")
        per_query = spec.startswith(PER_QUERY_PREFIX)
        return cls(spec.removeprefix(PER_QUERY_PREFIX), per_query=per_query)

    @property
    def spec(self) -> str:
        """This normalizer as a spec of :data:`SPECS` (the inverse of :meth:`from_spec`)."""
        return (PER_QUERY_PREFIX if self.per_query else "") + self.method

    def fit(self, X: Any, ptr: ArrayLike | None = None) -> Normalizer:
        """Learn the global parameters (per-query mode: only record ``n_features_in_``).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_samples, n_features)
        ptr : array-like of int, optional
            Query boundaries; unused by the global mode.
        """
        X = _as_dense(X)
        self.n_features_in_ = X.shape[1]
        if not self.per_query:
            code = METHODS[self.method]
            a, b = _stats(X, np.array([0, X.shape[0]], dtype=np.int64), code)
            first, second = _PARAM_NAMES[code]
            self.params_ = {first: a[0]} if second is None else {first: a[0], second: b[0]}
        return self

    def transform(self, X: Any, ptr: ArrayLike | None = None) -> np.ndarray:
        """Normalized copy of ``X`` (dense).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_samples, n_features)
        ptr : array-like of int, shape (n_queries + 1,)
            Query boundaries; required when ``per_query``.
        """
        X = _as_dense(X)
        code = METHODS[self.method]
        n = X.shape[0]
        if self.per_query:
            p = _check_ptr(ptr, n)
            a, b = _stats(X, p, code)
            row_query = np.repeat(np.arange(p.shape[0] - 1), np.diff(p))
        else:
            if not hasattr(self, "params_"):
                from sklearn.exceptions import NotFittedError  # lazy: importing sklearn takes seconds

                raise NotFittedError("this global Normalizer is not fitted; call fit first")
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, the normalizer was fitted on {self.n_features_in_}")
            first, second = _PARAM_NAMES[code]
            a = self.params_[first][None, :]
            b = a if second is None else self.params_[second][None, :]
            row_query = np.zeros(n, dtype=np.int64)
        out = np.empty_like(X)
        _apply(X, row_query, a, b, code, out)
        return out

    def fit_transform(self, X: Any, ptr: ArrayLike | None = None) -> np.ndarray:
        """``fit(X, ptr).transform(X, ptr)``."""
        return self.fit(X, ptr).transform(X, ptr)

    def affine(self) -> tuple[np.ndarray, np.ndarray]:
        """``(offset, scale)``, float64 per feature, with ``transform(X) == (X - offset) * scale``
        for finite values (up to rounding: ``transform`` divides) and NaN kept: a feature left
        unchanged has offset 0 and scale 1, a constant one under ``linear`` scale 0.

        Raises
        ------
        ValueError
            For a per-query normalizer (it is no map of one row) or one not fitted.
        """
        if self.per_query:
            raise ValueError("a per-query Normalizer is no map of one row: it has no affine form")
        if not hasattr(self, "params_"):
            raise ValueError("this global Normalizer is not fitted; call fit first")
        p = self.params_
        if self.method == "sum":
            a, used = np.zeros_like(p["scale"]), p["scale"] > 0
            return a, np.where(used, 1.0 / np.where(used, p["scale"], 1.0), 1.0)
        if self.method == "zscore":
            used = p["std"] > 0
            return np.where(used, p["mean"], 0.0), np.where(used, 1.0 / np.where(used, p["std"], 1.0), 1.0)
        span = p["max"] - p["min"]
        return p["min"].copy(), np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 0.0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable description (with the fitted parameters in global mode)."""
        d: dict[str, Any] = {"method": self.method, "per_query": self.per_query}
        if hasattr(self, "n_features_in_"):
            d["n_features_in"] = self.n_features_in_
        if hasattr(self, "params_"):
            d["params"] = {k: v.tolist() for k, v in self.params_.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Normalizer:
        """Rebuild a normalizer saved by :meth:`to_dict`."""
        norm = cls(d["method"], d["per_query"])
        if "n_features_in" in d:
            norm.n_features_in_ = int(d["n_features_in"])
        if "params" in d:
            expected = {n for n in _PARAM_NAMES[METHODS[norm.method]] if n is not None}
            if set(d["params"]) != expected:
                raise ValueError(f"{norm.method} parameters must be {sorted(expected)}, got {sorted(d['params'])}")
            norm.params_ = {k: np.asarray(v, dtype=np.float64) for k, v in d["params"].items()}
        return norm

    def __repr__(self) -> str:
        return f"Normalizer(method={self.method!r}, per_query={self.per_query})"
