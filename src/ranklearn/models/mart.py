"""MART: gradient-boosted regression trees on the labels (RankLib's ``-ranker 0``).

Friedman, "Greedy function approximation: a gradient boosting machine", Annals of Statistics
29 (2001). LambdaMART's tree engine with the pointwise squared-error objective
(:class:`ranklearn.objectives.SquaredErrorObjective`: gradient s - y, hessian 1), so each
tree fits the residuals of the labels and each leaf value is their mean times the learning
rate.
"""

from __future__ import annotations

from ranklearn.models.lambdamart import LambdaMART

__all__ = ["MART"]


class MART(LambdaMART):
    __doc__ = (
        "MART: gradient-boosted regression trees fitted to the labels by squared error.\n"
        "\n    ``objective=None`` is \"squared_error\"; otherwise the parameters are LambdaMART's.\n"
        + LambdaMART.__doc__.split("\n", 1)[1]
    )

    _model_name = "mart"
    _display_name = "MART"
    _default_objective = "squared_error"
