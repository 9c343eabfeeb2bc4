"""``get_objective``: names, defaults and user objects."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.objectives import OBJECTIVE_NAMES, CustomObjective, SquaredErrorObjective, XENDCGObjective, get_objective
from ranklearn.objectives.lambdas import LambdaObjective


def test_names_resolve_to_their_objectives_with_the_settings():
    lr = get_objective("lambdarank", metric="err@5", sigma=2.0, truncation_level=8, gain="linear")
    assert (lr.name, lr.z, lr.k, lr.sigma, lr.truncation, lr.gain) == ("lambdarank", "err", 5, 2.0, 8, "linear")
    assert lr.normalize and not lr.distance_weight  # LambdaMART's defaults
    rn = get_objective("ranknet", lambda_normalization="none")
    assert (rn.name, rn.z, rn.normalize) == ("ranknet", "none", False)
    assert isinstance(get_objective("squared_error"), SquaredErrorObjective)
    xe = get_objective("xendcg", random_state=3)
    assert isinstance(xe, XENDCGObjective) and xe.random_state == 3
    assert [get_objective(n).name for n in OBJECTIVE_NAMES] == list(OBJECTIVE_NAMES)


def test_default_objective_gives_lambdamarts_lambdas():
    rng = np.random.default_rng(0)
    ptr = np.array([0, 7, 15])
    y = rng.integers(0, 4, 15).astype(float)
    s = rng.normal(size=15)
    g, h = get_objective(metric="ndcg@5").gradients(s, y, ptr)
    rg, rh = LambdaObjective("ndcg", k=5, normalize=True).gradients(s, y, ptr)
    np.testing.assert_array_equal(g, rg)
    np.testing.assert_array_equal(h, rh)


def test_unknown_objective_lists_the_names():
    with pytest.raises(ValueError, match="lambdarank, ranknet, squared_error, xendcg") as exc:
        get_objective("lambdamart")
    assert "'lambdamart'" in str(exc.value)
    with pytest.raises(ValueError, match="'ranknet' has no"):
        get_objective("ranknet", lambda_metric="ndcg@10")
    with pytest.raises(TypeError, match="no gradients"):
        get_objective(42)


def test_objects_are_wrapped_and_builtins_kept():
    class Mine:
        def gradients(self, scores, y, ptr):
            return scores - y, np.ones_like(scores)

    wrapped = get_objective(Mine())
    assert isinstance(wrapped, CustomObjective) and wrapped.name == "Mine"
    xe = XENDCGObjective(random_state=1)
    assert get_objective(xe) is xe


def test_saved_description_records_the_objective_and_what_prepare_fixed():
    obj = get_objective("lambdarank", metric="err@10")
    assert obj.get_params()["max_grade"] is None
    obj.prepare(np.array([0.0, 3.0, 1.0]), np.array([0, 3]))
    params = obj.get_params()
    assert params["name"] == "lambdarank" and params["lambda_metric"] == "err" and params["max_grade"] == 3.0
    assert get_objective("squared_error").get_params() == {"name": "squared_error"}
