"""ListNet: a neural scorer trained on the top-one probability cross-entropy of each query.

Cao, Qin, Liu, Tsai, Li, "Learning to Rank: From Pairwise Approach to Listwise Approach",
ICML 2007. With phi = exp, P_s(i) = exp(s_i) / sum_j exp(s_j) over the documents of a query,
and the loss is -sum_i P_y(i) log P_s(i) (P_y from the labels); its gradient is P_s - P_y.
RankLib's ``-ranker 7``.
"""

from __future__ import annotations

from ranklearn.models._neural import NeuralRanker

__all__ = ["ListNet"]


class ListNet(NeuralRanker):
    __doc__ = (
        "ListNet: a neural scorer trained on the top-one probability cross-entropy of each query.\n"
        "\n    ``loss=None`` is \"listnet\" and ``lambda_normalization=None`` is \"none\" (one\n"
        "    cross-entropy per query); otherwise the parameters are RankNet's.\n"
        + NeuralRanker.__doc__.split("\n", 1)[1]
    )

    _model_name = "listnet"
    _vocabulary_since = 4  # payload 4: n_estimators (was epochs)
    _display_name = "ListNet"
    _default_loss = "listnet"
    _default_normalization = "none"
