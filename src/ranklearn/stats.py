"""Significance tests for comparing ranking systems query by query.

Every test is paired: two systems scored on the same queries. For each system against a
baseline :func:`compare` reports the mean difference, a bootstrap confidence interval, the
two-sided paired t-test and Wilcoxon signed-rank p-values (scipy.stats, unchanged), Fisher's
randomization test, win/tie/loss counts, and with more than one comparison the Holm-Bonferroni
adjusted p-values — what RankLib's Analyzer and ranx's ``compare`` report, plus per-query detail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as sps

__all__ = [
    "Comparison",
    "PairedResult",
    "bootstrap_interval",
    "compare",
    "holm_bonferroni",
    "paired_t_test",
    "randomization_test",
    "wilcoxon_test",
]

#: Sign flips drawn per block: bounds the memory of the randomization test (block x queries floats).
_BLOCK = 2048


def _differences(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired samples must have the same length, got {x.size} and {y.size}")
    if x.size == 0:
        raise ValueError("paired samples are empty")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("paired samples must be finite (drop skipped queries first)")
    return x - y


def paired_t_test(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided paired t-test p-value (``scipy.stats.ttest_rel``).

    Returns 1.0 where every difference is 0 (scipy gives NaN: no evidence), and NaN where the
    differences have no variance otherwise (one query, or the same nonzero difference on every
    query: the t statistic is undefined; scipy warns and returns a p-value of rounding noise).
    """
    d = _differences(a, b)
    if np.all(d == 0):
        return 1.0
    scale = max(np.abs(np.asarray(a, dtype=np.float64)).max(), np.abs(np.asarray(b, dtype=np.float64)).max())
    if np.ptp(d) <= 8 * np.finfo(np.float64).eps * scale:  # equal up to the rounding of a - b
        return float("nan")
    return float(sps.ttest_rel(a, b).pvalue)


def wilcoxon_test(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided Wilcoxon signed-rank p-value (``scipy.stats.wilcoxon``, zero differences dropped).

    Returns 1.0 where every difference is 0 (scipy refuses the input).
    """
    d = _differences(a, b)
    if np.all(d == 0):
        return 1.0
    return float(sps.wilcoxon(a, b).pvalue)


def is_exact(n_queries: int, n_permutations: int) -> bool:
    """Whether the randomization test of ``n_queries`` enumerates all 2^n sign assignments
    (at most ``n_permutations`` of them) instead of drawing ``n_permutations``."""
    return n_queries < 63 and 2**n_queries <= n_permutations


def _randomization_p(d: np.ndarray, n_permutations: int, seed: int) -> np.ndarray:
    """Two-sided randomization p-value of every column of ``d`` (queries x tests).

    All 2^n sign assignments when there are at most ``n_permutations`` of them (the exact
    p-value), else ``n_permutations`` random ones from ``seed`` (the same ones for every
    column), whose p-value is (b + 1) / (N + 1) for b of N reaching the observed sum: the
    observed assignment counts as one, so a sampled p-value is never 0 (Phipson and Smyth,
    "Permutation p-values should never be zero", Stat. Appl. Genet. Mol. Biol. 9 (2010)).
    A zero difference never changes a sum, so a query dropped from one column can be a 0 there.
    """
    counts, total = _flip_counts(d, n_permutations, seed)
    if is_exact(d.shape[0], n_permutations):
        return counts / total
    return (counts + 1) / (total + 1)


def _flip_counts(d: np.ndarray, n_permutations: int, seed: int) -> tuple[np.ndarray, int]:
    """For every column of ``d`` (queries x tests): sign assignments whose |sum| reaches the
    observed one, and how many were tried (see :func:`_randomization_p`)."""
    n = d.shape[0]
    total_sum = d.sum(axis=0)
    # A flipped sum equal to the observed one up to rounding counts as reaching it.
    observed = np.abs(total_sum) - 1e-9 * np.abs(d).sum(axis=0)
    exact = is_exact(n, n_permutations)
    total = 2**n if exact else n_permutations
    rng = np.random.default_rng(seed)
    counts = np.zeros(d.shape[1], dtype=np.int64)
    for start in range(0, total, _BLOCK):
        size = min(_BLOCK, total - start)
        if exact:  # row i holds the bits of start + i: every assignment once
            codes = np.arange(start, start + size, dtype=np.int64)[:, None]
            flipped = ((codes >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)
        else:  # random bits, 8 per byte
            raw = np.frombuffer(rng.bytes((size * n + 7) // 8), dtype=np.uint8)
            flipped = np.unpackbits(raw, count=size * n).reshape(size, n).astype(np.float64)
        # Flipping the signs of a set F turns the sum into sum - 2 * sum over F.
        counts += (np.abs(total_sum - 2.0 * (flipped @ d)) >= observed).sum(axis=0)
    return counts, total


def randomization_test(a: ArrayLike, b: ArrayLike, n_permutations: int = 10_000, seed: int = 0) -> float:
    """Fisher's paired randomization test, two-sided: p = P(|mean of sign-flipped differences| >= observed).

    With n queries and 2^n <= ``n_permutations`` every sign assignment is enumerated (the
    exact p-value); otherwise ``n_permutations`` random assignments from ``seed`` estimate it
    as (b + 1) / (N + 1), never 0.
    """
    d = _differences(a, b)
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be >= 1, got {n_permutations}")
    return float(_randomization_p(d[:, None], n_permutations, seed)[0])


def _bootstrap_intervals(d: np.ndarray, confidence: float, n_resamples: int, seed: int) -> np.ndarray:
    """Percentile bootstrap intervals of the column means of ``d`` (queries x tests), shape (2, tests).

    Every column is resampled with the same query draws (a paired design across systems):
    one matrix product of resample counts with ``d``. NaN for fewer than two queries (every
    resample is the one query: an interval of width 0 would claim a certainty there is none).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    n = d.shape[0]
    if n < 2:
        return np.full((2, d.shape[1]), np.nan)
    rng = np.random.default_rng([seed, 1])  # a stream of its own: the randomization test uses seed
    means = np.empty((n_resamples, d.shape[1]))
    step = max(1, _BLOCK * 64 // n)
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        draws = rng.integers(0, n, size=(size, n)) + n * np.arange(size)[:, None]
        counts = np.bincount(draws.ravel(), minlength=size * n).reshape(size, n)
        means[start : start + size] = counts @ d / n
    tail = (1.0 - confidence) / 2.0
    return np.quantile(means, [tail, 1.0 - tail], axis=0)


def bootstrap_interval(
    a: ArrayLike, b: ArrayLike, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean paired difference ``a - b``.

    The same interval as ``scipy.stats.bootstrap(..., method="percentile")`` up to resampling
    noise; computed for many systems at once by :func:`compare`.
    """
    low, high = _bootstrap_intervals(_differences(a, b)[:, None], confidence, n_resamples, seed)[:, 0]
    return float(low), float(high)


def holm_bonferroni(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (step-down; reject where adjusted p <= alpha)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted


@dataclass(frozen=True)
class PairedResult:
    """One system against the baseline on one metric (p-values two-sided)."""

    metric: str
    system: str
    baseline: str
    n_queries: int
    mean: float
    baseline_mean: float
    difference: float
    ci_low: float
    ci_high: float
    t_p: float
    wilcoxon_p: float
    randomization_p: float
    t_p_holm: float
    wilcoxon_p_holm: float
    randomization_p_holm: float
    wins: int
    ties: int
    losses: int
    #: the randomization test enumerated every sign assignment (exact) instead of drawing them
    randomization_exact: bool = False


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare`: means per metric and system, and the paired tests."""

    systems: list[str]
    baseline: str
    means: dict[str, dict[str, float]]
    results: list[PairedResult]
    confidence: float
    n_permutations: int
    #: every metric's randomization test enumerated every sign assignment (few queries)
    randomization_exact: bool = False

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready form."""
        return {
            "systems": self.systems,
            "baseline": self.baseline,
            "confidence": self.confidence,
            "permutations": self.n_permutations,
            "randomization_exact": self.randomization_exact,
            "means": self.means,
            "tests": [asdict(r) for r in self.results],
        }

    def table(self, metric: str) -> tuple[list[str], list[list[str]]]:
        """The cells of the table of one metric (``ranklearn compare``'s, the report's): (column names,
        rows), the baseline first.

        With several systems the p-values are the Holm-Bonferroni adjusted ones.
        """
        rows = [r for r in self.results if r.metric == metric]
        holm = len(rows) > 1
        level = f"{100 * self.confidence:g}%"
        columns = ["system", "mean", "diff", f"{level} CI", "p(t)", "p(W)", "p(rand)", "W/T/L"]
        cells = [[f"{self.baseline} (base)", f"{self.means[metric][self.baseline]:.4f}", *[""] * 6]]
        for r in rows:
            p = (r.t_p_holm, r.wilcoxon_p_holm, r.randomization_p_holm) if holm else (r.t_p, r.wilcoxon_p, r.randomization_p)
            cells.append([
                r.system, f"{r.mean:.4f}", f"{r.difference:+.4f}",
                "n/a" if math.isnan(r.ci_low) else f"{r.ci_low:+.3f},{r.ci_high:+.3f}",
                *(_p(v) for v in p), f"{r.wins}/{r.ties}/{r.losses}",
            ])  # fmt: skip
        return columns, cells

    def title(self, metric: str, n_queries: int) -> str:
        """Title of one metric's table: the metric and how many queries its tests used."""
        n_used = next(r.n_queries for r in self.results if r.metric == metric)
        return f"{metric} ({n_used} of {n_queries} queries)"

    def note(self, seed: int) -> str:
        """The line under ``compare``'s tables saying what each column is."""
        holm = "; p-values Holm-Bonferroni adjusted over each metric's comparisons" if len(self.systems) > 2 else ""
        sampled = f"{self.n_permutations:,} random sign flips, seed {seed}, p = (b+1)/(N+1)"
        exact = sorted({r.metric for r in self.results if r.randomization_exact})
        if self.randomization_exact:
            flips = "every sign assignment, exact"
        elif exact:  # metrics comparing few queries are exact, the others sampled
            flips = f"every sign assignment, exact, for {', '.join(exact)}; {sampled} for the others"
        else:
            flips = sampled
        return (
            f"two-sided paired tests against {self.baseline}: t = paired t-test, W = Wilcoxon signed-rank "
            f"(zero differences dropped), rand = randomization ({flips}); CI = percentile bootstrap "
            f"of the difference (n/a below 2 queries); W/T/L = queries won/tied/lost{holm}"
        )


def compare(
    per_query: Mapping[str, Mapping[str, ArrayLike]],
    *,
    baseline: str | None = None,
    n_permutations: int = 10_000,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Comparison:
    """Compare two or more systems query by query on one or more metrics.

    Parameters
    ----------
    per_query : mapping
        ``per_query[metric][system]``: the metric's value on every query, the same queries
        in the same order for every system. NaN (a query skipped under ``empty="skip"``)
        drops that query from the metric's comparisons.
    baseline : str, optional
        The system the others are compared against (default: the first).
    n_permutations : int
        Sign assignments of the randomization test (exact enumeration when 2^n is smaller).
    n_resamples : int
        Bootstrap resamples.
    confidence : float
        Level of the bootstrap interval.
    seed : int
        Seeds the randomization test and the bootstrap: the same call gives the same p-values.

    Returns
    -------
    Comparison
        With more than two systems the p-values are also Holm-Bonferroni adjusted over the
        comparisons of each metric (``*_holm``); with two they equal the raw ones.

    Raises
    ------
    ValueError
        Fewer than two systems, differing systems or query counts across metrics, an
        unknown baseline, or no query left.
    """
    if not per_query:
        raise ValueError("no metric to compare")
    systems = list(next(iter(per_query.values())))
    if len(systems) < 2:
        raise ValueError(f"need at least two systems to compare, got {systems}")
    base = systems[0] if baseline is None else baseline
    if base not in systems:
        raise ValueError(f"baseline {base!r} is not one of the systems {systems}")
    others = [s for s in systems if s != base]
    means: dict[str, dict[str, float]] = {}
    kept_by_metric: dict[str, np.ndarray] = {}
    columns = []  # one column of differences per (metric, system); dropped queries are 0
    for metric, values in per_query.items():
        if list(values) != systems:
            raise ValueError(f"metric {metric!r} has systems {list(values)}, expected {systems}")
        arrays = [np.asarray(values[s], dtype=np.float64).ravel() for s in systems]
        lengths = {s: a.size for s, a in zip(systems, arrays)}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"metric {metric!r}: the systems have values for different numbers of queries {lengths}")
        table = np.column_stack(arrays)
        kept = ~np.isnan(table).any(axis=1)
        if not kept.any():
            raise ValueError(f"metric {metric!r}: no query has a value for every system")
        if columns and table.shape[0] != columns[0].shape[0]:
            raise ValueError(f"metric {metric!r} has {table.shape[0]} queries, the first metric {columns[0].shape[0]}")
        means[metric] = {s: float(table[kept, i].mean()) for i, s in enumerate(systems)}
        kept_by_metric[metric] = kept
        base_values = table[:, systems.index(base)]
        for s in others:
            columns.append(np.where(kept, table[:, systems.index(s)] - base_values, 0.0))
    # Each metric's test runs on the queries it compares (the others are no rows of it: they
    # could turn an exact enumeration into a sampled one); metrics comparing the same queries
    # share one matrix product per block of sign flips, for every system at once.
    diffs = np.column_stack(columns)
    randomization = np.empty(diffs.shape[1])
    exact_by_metric: dict[str, bool] = {}
    metrics = list(kept_by_metric)
    for rows in {kept.tobytes(): kept for kept in kept_by_metric.values()}.values():
        group = [m for m, metric in enumerate(metrics) if np.array_equal(kept_by_metric[metric], rows)]
        cols = np.concatenate([np.arange(m * len(others), (m + 1) * len(others)) for m in group])
        randomization[cols] = _randomization_p(diffs[rows][:, cols], n_permutations, seed)
        for m in group:
            exact_by_metric[metrics[m]] = is_exact(int(rows.sum()), n_permutations)
    results: list[PairedResult] = []
    for m, (metric, kept) in enumerate(kept_by_metric.items()):
        block = slice(m * len(others), (m + 1) * len(others))
        d = diffs[kept, block]
        base_values = np.asarray(per_query[metric][base], dtype=np.float64).ravel()[kept]
        raw = {
            "t": [paired_t_test(base_values + d[:, j], base_values) for j in range(len(others))],
            "wilcoxon": [wilcoxon_test(base_values + d[:, j], base_values) for j in range(len(others))],
            "randomization": randomization[block],
        }
        adjusted = {name: holm_bonferroni(p) for name, p in raw.items()}
        low, high = _bootstrap_intervals(d, confidence, n_resamples, seed)
        for j, s in enumerate(others):
            results.append(
                PairedResult(
                    metric=metric, system=s, baseline=base, n_queries=int(d.shape[0]),
                    mean=means[metric][s], baseline_mean=means[metric][base], difference=float(d[:, j].mean()),
                    ci_low=float(low[j]), ci_high=float(high[j]),
                    t_p=raw["t"][j], wilcoxon_p=raw["wilcoxon"][j], randomization_p=float(raw["randomization"][j]),
                    t_p_holm=float(adjusted["t"][j]), wilcoxon_p_holm=float(adjusted["wilcoxon"][j]),
                    randomization_p_holm=float(adjusted["randomization"][j]),
                    wins=int((d[:, j] > 0).sum()), ties=int((d[:, j] == 0).sum()), losses=int((d[:, j] < 0).sum()),
                    randomization_exact=exact_by_metric[metric],
                )
            )  # fmt: skip
    return Comparison(systems, base, means, results, confidence, n_permutations, all(exact_by_metric.values()))


def _p(value: float) -> str:
    """A p-value as the tables show it."""
    return "n/a" if math.isnan(value) else ("<0.001" if value < 1e-3 else f"{value:.3f}")
