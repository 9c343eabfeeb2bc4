"""Precision at fixed cutoffs and at multiples of R: ``P_k``, ``relative_P_k``, ``success_k``,
``Rprec`` and ``Rprec_mult_x``.

With rel_i = 1 when the document at rank i has grade >= rl and R the judged relevant
documents of the query:

* P@k = (1/k) sum_{i<=k} rel_i (divided by k even when fewer than k were retrieved);
* relative_P@k = sum_{i<=k} rel_i / min(k, R) (0 when R = 0);
* success@k = 1 if some rel_i = 1 with i <= k, else 0;
* Rprec = P@R (0 when nothing is retrieved or R = 0; divided by R even when fewer than R
  documents were retrieved);
* Rprec_mult_x = P@floor(x R + 0.9) (precision after x times R documents).

References: C. Buckley and E. Voorhees, "Retrieval System Evaluation", TREC: Experiment and
Evaluation in Information Retrieval, MIT Press 2005 (P, R-precision); success@k as in the
TREC question-answering and web tracks.
"""

from __future__ import annotations

import numpy as np

from ranklearn._compilation import kernel
from ranklearn.metrics.trec.recall import fraction_cutoffs

@kernel(cache=True)
def r_precision(rels: np.ndarray, n_rel: int, rl: int) -> float:
    """Precision after R documents (divided by R)."""
    look = min(rels.shape[0], n_rel)
    found = 0
    for i in range(look):
        if rels[i] >= rl:
            found += 1
    return found / n_rel if look else 0.0


@kernel(cache=True)
def r_precision_multiples(rels: np.ndarray, n_rel: int, n_rel_ret: int, rl: int, multiples: np.ndarray,
                          out: np.ndarray) -> None:  # fmt: skip
    """Precision after floor(x R + 0.9) documents for each increasing multiple x of R."""
    n_ret = rels.shape[0]
    cutoffs = fraction_cutoffs(multiples, n_rel)
    c = multiples.shape[0] - 1
    while c >= 0 and cutoffs[c] > n_ret:  # past the end: the retrieved relevant / the cutoff
        out[c] = n_rel_ret / cutoffs[c]
        c -= 1
    found = n_rel_ret
    i = n_ret
    while i > 0 and found > 0:
        while c >= 0 and i == cutoffs[c]:
            out[c] = found / i
            c -= 1
        if rels[i - 1] >= rl:
            found -= 1
        i -= 1
