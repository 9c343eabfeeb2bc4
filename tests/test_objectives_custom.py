"""A user's own objective: duck-typed objects and Objective subclasses, checked on every call."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.objectives import get_objective
from ranklearn.objectives.base import Objective
from ranklearn.objectives.custom import CustomObjective

PTR = np.array([0, 3, 5])
Y = np.array([0.0, 1.0, 2.0, 1.0, 0.0])
S = np.array([0.1, -0.2, 0.3, 0.0, 0.5])


class Returns:
    """Returns whatever it was given, and records prepare()."""

    def __init__(self, out, name=None):
        self.out = out
        self.prepared = None
        if name:
            self.name = name

    def prepare(self, y, ptr):
        self.prepared = (y, ptr)

    def gradients(self, scores, y, ptr):
        return self.out


def test_a_duck_typed_object_is_prepared_and_copied_into_the_arrays():
    user = Returns((S - Y, [1, 2, 3, 4, 5]), name="mine")
    obj = get_objective(user)
    obj.prepare(Y, PTR)
    assert user.prepared[1] is PTR
    grad, hess = np.empty(5), np.empty(5)
    out = obj.gradients(S, Y, PTR, grad, hess)
    assert out[0] is grad and out[1] is hess
    np.testing.assert_array_equal(grad, S - Y)
    np.testing.assert_array_equal(hess, [1.0, 2.0, 3.0, 4.0, 5.0])
    assert obj.get_params() == {"name": "mine", "class": f"{__name__}.Returns"}


class Pointwise(Objective):
    name = "pointwise"

    def gradients(self, scores, y, ptr, grad=None, hess=None):
        return 2 * (scores - y), np.full(scores.shape, 2.0)


def test_a_subclass_of_the_interface_is_wrapped_too():
    obj = get_objective(Pointwise())
    assert isinstance(obj, CustomObjective) and obj.name == "pointwise"
    obj.prepare(Y, PTR)  # the interface's prepare does nothing by default
    g, h = obj.gradients(S, Y, PTR)
    np.testing.assert_array_equal(g, 2 * (S - Y))
    np.testing.assert_array_equal(h, np.full(5, 2.0))


@pytest.mark.parametrize(
    "out,match",
    [
        ((np.zeros(4), np.ones(5)), r"'Returns' returned gradients of shape \(4,\) for 5 documents"),
        ((np.zeros(5), np.ones((5, 1))), r"'Returns' returned hessians of shape \(5, 1\)"),
        ((np.array([0, np.nan, 0, 0, 0]), np.ones(5)), "'Returns' returned non-finite gradients"),
        ((np.zeros(5), np.array([1, 1, np.inf, 1, 1])), "'Returns' returned non-finite hessians"),
        ((np.zeros(5), np.array([1, 1, -0.5, 1, 1])), r"'Returns' returned negative hessians \(min -0.5\)"),
        (np.zeros(5), "'Returns' must return \\(grad, hess\\); got ndarray"),
        ((np.zeros(5),), "must return \\(grad, hess\\); got tuple"),
    ],
)
def test_bad_output_is_a_value_error_naming_the_objective(out, match):
    with pytest.raises(ValueError, match=match):
        get_objective(Returns(out)).gradients(S, Y, PTR)


def test_an_object_without_gradients_is_refused():
    with pytest.raises(TypeError, match="no gradients"):
        CustomObjective(object())


def test_an_unnamed_subclass_is_named_by_its_class():
    class Unnamed(Objective):
        def gradients(self, scores, y, ptr, grad=None, hess=None):
            return np.zeros_like(scores), -np.ones_like(scores)

    obj = get_objective(Unnamed())
    assert obj.get_params()["name"] == "Unnamed"
    with pytest.raises(ValueError, match="'Unnamed' returned negative hessians"):
        obj.gradients(S, Y, PTR)


def test_side_data_reaches_objectives_that_take_it_and_only_those():
    side = {"position": np.array([1, 2, 3, 1, 2])}
    seen = []

    class Keyword:
        def gradients(self, scores, y, ptr, *, side=None):
            seen.append(("keyword", side))
            return scores - y, np.ones(5)

    class Kwargs:
        def gradients(self, scores, y, ptr, **kwargs):
            seen.append(("kwargs", kwargs))
            return scores - y, np.ones(5)

    class Positional:  # side as a plain parameter, passed by keyword
        def gradients(self, scores, y, ptr, side=None):
            seen.append(("positional", side))
            return scores - y, np.ones(5)

    class Old:  # written before side data: a side= would be a TypeError
        def gradients(self, scores, y, ptr):
            seen.append(("old", None))
            return scores - y, np.ones(5)

    for obj in (Keyword(), Kwargs(), Positional(), Old()):
        grad, hess = get_objective(obj).gradients(S, Y, PTR, side=side)
        np.testing.assert_array_equal(grad, S - Y)
    assert seen == [("keyword", side), ("kwargs", {"side": side}), ("positional", side), ("old", None)]
    # what a fit warns about: side data its objective does not read
    assert [get_objective(o).side_keys for o in (Keyword(), Kwargs(), Old())] == [("position",), ("position",), ()]
    Keyword.side_keys = ()  # declared: it reads none
    assert get_objective(Keyword()).side_keys == ()


@pytest.mark.parametrize("name", ["lambdarank", "ranknet", "squared_error", "xendcg"])
def test_built_in_objectives_accept_and_ignore_side_data(name):
    plain = get_objective(name, random_state=0)
    with_side = get_objective(name, random_state=0)
    plain.prepare(Y, PTR)
    with_side.prepare(Y, PTR)
    a = plain.gradients(S, Y, PTR)
    b = with_side.gradients(S, Y, PTR, side={"position": np.array([1, 2, 3, 1, 2])})
    for x, z in zip(a, b):
        np.testing.assert_array_equal(x, z)
