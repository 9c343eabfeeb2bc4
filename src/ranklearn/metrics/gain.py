"""Gain and discount shared by the metrics and the lambda objectives.

Kept in one place so that an NDCG reported by :mod:`ranklearn.metrics` and the
|ΔNDCG| used by the LambdaMART / LambdaRank gradients can never disagree.
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel

GAIN_EXP2 = 0  #: gain = 2**rel - 1 (Burges et al., RankLib, LightGBM, XGBoost default)
GAIN_LINEAR = 1  #: gain = rel

GAIN_KINDS = {"exp2": GAIN_EXP2, "linear": GAIN_LINEAR}


def gain_code(gain: str) -> int:
    """Numeric code of a gain name, with a clear error for unknown names."""
    try:
        return GAIN_KINDS[gain]
    except KeyError:
        raise ValueError(f"gain must be one of {sorted(GAIN_KINDS)}, got {gain!r}") from None


@kernel(cache=True, inline="always")
def gain(label: float, kind: int) -> float:
    """Gain of one relevance label."""
    if kind == GAIN_EXP2:
        return 2.0**label - 1.0
    return label


@kernel(cache=True, inline="always")
def discount(position: int) -> float:
    """Discount of a 0-based rank position: 1 / log2(position + 2)."""
    return 1.0 / np.log2(position + 2.0)
