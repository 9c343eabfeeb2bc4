"""Reciprocal rank ``recip_rank``: 1 / the rank of the first retrieved document with grade
>= rl, 0 if none (the mean over queries is MRR; E. Voorhees, "The TREC-8 Question Answering
Track Report", TREC 1999)."""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel


@kernel(cache=True)
def reciprocal_rank(rels: np.ndarray, rl: int) -> float:
    """1 / rank of the first relevant retrieved document (0 if none)."""
    for i in range(rels.shape[0]):
        if rels[i] >= rl:
            return 1.0 / (i + 1.0)
    return 0.0
