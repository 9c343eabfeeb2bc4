"""RankNet: a neural scorer trained on the pairwise cross-entropy of RankNet, factorized per query.

Burges, Shaked, Renshaw, Lazier, Deeds, Hamilton, Hullender, "Learning to Rank using Gradient
Descent", ICML 2005; the factorization: Burges, "From RankNet to LambdaRank to LambdaMART: An
Overview", MSR-TR-2010-82, section 2.1. For a pair i more relevant than j the cost is
C_ij = log(1 + exp(-sigma (s_i - s_j))) and lambda_ij = dC_ij/ds_i = -sigma / (1 + exp(sigma (s_i - s_j)));
each document's lambda_i sums its pairs' lambdas (with the sign of the pair), and one backward
pass per batch of queries applies them.
"""

from __future__ import annotations

from ranklearn.models._neural import NeuralRanker

__all__ = ["RankNet"]


class RankNet(NeuralRanker):
    __doc__ = (
        "RankNet: a neural scorer trained on pairwise cross-entropy, factorized per query.\n"
        + NeuralRanker.__doc__.split("\n", 1)[1]
    )

    _model_name = "ranknet"
    _vocabulary_since = 5  # payload 5: n_estimators (was epochs)
    _display_name = "RankNet"
    # 3 networks beat 5 on the validation data of all four datasets, in 3/5 of the time
    # (benchmarks/neural_defaults.md); payload versions before 4 trained 5 for "auto"
    _auto_networks = 3
    _auto_networks_since = 4
