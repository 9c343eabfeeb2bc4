"""Model files saved before issue 30's vocabulary load under today's names and predict the same bits.

The files in tests/data/models_before_vocabulary were written by the code before the renames
(its README says how); ``data.npz`` holds the rows they were trained on and their predictions.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ranklearn.io import load_model
from ranklearn.registry import REGISTRY

OLD = Path(__file__).resolve().parent / "data" / "models_before_vocabulary"

#: what each file's parameters are under today's names (the old name -> the new)
EXPECTED = {
    "ranknet": {"n_estimators": 3, "early_stopping_rounds": "auto"},  # 20 = max(20, 3 // 10): "auto" unchanged
    "lambdarank": {"n_estimators": 3, "early_stopping_rounds": "auto"},
    "listnet": {"n_estimators": 3, "early_stopping_rounds": "auto"},
    "coordinate-ascent": {"n_estimators": 2, "line_search_steps": 5, "early_stopping_rounds": None},
    "random-forest": {"n_estimators": 3, "trees_per_bag": 2, "early_stopping_rounds": None},
    "adarank": {"n_estimators": 6, "early_stopping_rounds": None, "random_state": None},  # "auto" kept the best: None
    "rankboost": {"n_estimators": 6, "early_stopping_rounds": None, "random_state": None},
    "linear": {"random_state": None},
    "mart": {"n_estimators": 30, "early_stopping_rounds": 100},  # the old "auto" was 100, today's would be 20
}
GONE = {"epochs", "n_restarts", "max_iterations", "n_bags"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_file_saved_before_the_vocabulary_loads_renamed_and_predicts_the_same(name):
    if REGISTRY[name].extra == "neural":
        pytest.importorskip("torch", reason="the neural rankers need torch")
    saved = json.loads((OLD / f"{name}.json").read_text())
    assert saved["payload"]["payload_version"] < REGISTRY[name].payload_version  # a real upgrade
    model = load_model(OLD / f"{name}.json")
    params = model.get_params()
    assert {k: params[k] for k in EXPECTED[name]} == EXPECTED[name]
    assert not GONE & set(params)
    data = np.load(OLD / "data.npz")
    np.testing.assert_array_equal(model.predict(data["X"]), data[name.replace("-", "_")])


def test_an_upgraded_model_refits_as_the_old_one_trained():
    """The renamed parameters are the ones the old fit used: a random forest refitted from its
    upgraded parameters runs the same 3 bags of 2 trees, keeps the same best ones and predicts the same bits."""
    from ranklearn.datasets import make_ranking

    X, y, qid = make_ranking(24, 6, n_informative=4, docs_per_query=(8, 8), random_state=3, return_X_y=True)
    X = np.asarray(X, dtype=np.float64)
    old = load_model(OLD / "random-forest.json")
    again = type(old)(**old.get_params()).fit(X, y, qid=qid, eval_set=[(X[:64], y[:64], qid[:64])])
    assert again.n_iter_ == old.n_iter_ == 3 and again.best_iteration_ == old.best_iteration_
    assert {len(bag) for bag in again.bags_} == {2}
    np.testing.assert_array_equal(again.predict(X), np.load(OLD / "data.npz")["random_forest"])
