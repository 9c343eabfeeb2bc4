"""The fitted Tree: its dict form round-trips, and validate() refuses every malformed structure."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ranklearn.tree.tree import Tree


def _stump_of_stumps() -> Tree:
    """Node 0 splits into 1 and 2; node 2 splits into 3 and 4."""
    return Tree(
        feature=np.array([0, -1, 2, -1, -1], dtype=np.int32),
        bin_threshold=np.array([3, 0, 7, 0, 0], dtype=np.int32),
        threshold=np.array([0.5, 0.0, -1.25, 0.0, 0.0]),
        missing_left=np.array([True, False, False, False, False]),
        left=np.array([1, -1, 3, -1, -1], dtype=np.int32),
        right=np.array([2, -1, 4, -1, -1], dtype=np.int32),
        value=np.array([0.0, 0.1, 0.0, -0.2, 0.3]),
        gain=np.array([4.0, 0.0, 1.5, 0.0, 0.0]),
        count=np.array([100, 40, 60, 25, 35], dtype=np.int64),
    )


def test_round_trip_through_json_keeps_values_and_dtypes():
    tree = _stump_of_stumps()
    back = Tree.from_dict(json.loads(json.dumps(tree.to_dict())))
    for name in Tree.__dataclass_fields__:
        a, b = getattr(tree, name), getattr(back, name)
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    assert back.n_leaves == 3
    back.validate(n_features=3)


def _broken(**changes):
    d = _stump_of_stumps().to_dict()
    d.update(changes)
    return Tree.from_dict(d)


@pytest.mark.parametrize(
    "changes,n_features,match",
    [
        ({"value": [0.0, 0.1]}, 3, "differ in length"),
        ({"feature": [0, -2, 2, -1, -1]}, 3, "leaf must have feature -1"),
        ({}, 2, "uses feature 2, the model has 2"),
        ({"left": [1, -1, 0, -1, -1]}, 3, "points backwards"),  # a cycle back to the root
        ({"right": [2, -1, 9, -1, -1]}, 3, "outside the tree"),
        ({"right": [2, -1, 3, -1, -1]}, 3, "two parents"),
        ({"value": [0.0, np.inf, 0.0, 0.0, 0.0]}, 3, "non-finite"),
        ({"threshold": [np.nan, 0.0, 0.0, 0.0, 0.0]}, 3, "non-finite"),
    ],
)
def test_validate_refuses_malformed_trees(changes, n_features, match):
    with pytest.raises(ValueError, match=match):
        _broken(**changes).validate(n_features)
