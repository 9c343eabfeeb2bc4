"""``predict``'s served scorer: the scores of the estimator, bit for bit, for every ranker whose spec says how
it is served, and the estimator's refusals of a model file it cannot trust."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import small_data

from ranklearn.exceptions import ModelFormatError
from ranklearn.io import load_model
from ranklearn.exceptions import FeatureValueError
from ranklearn.models.serving import SavedScorer, load_scorer
from ranklearn.registry import REGISTRY

SERVED = [name for name, spec in REGISTRY.items() if spec.served is not None]


def _fitted(name: str, tmp_path, *, nan: bool = False):
    X, y, qid = small_data(n_queries=12, docs=10, n_features=5)
    X = X.astype(np.float32)
    if nan:
        X[::7, 2] = np.nan
    model = REGISTRY[name].load_class()(**REGISTRY[name].test).fit(X, y, qid)  # its small test settings
    path = tmp_path / f"{name}.json"
    model.save(path)
    return model, path, X


def test_the_served_rankers_are_the_tree_forest_and_linear_ones():
    assert set(SERVED) == {"lambdamart", "mart", "random-forest", "linear", "coordinate-ascent", "adarank"}
    assert all(REGISTRY[n].served in ("trees", "bags", "linear") for n in SERVED)


@pytest.mark.parametrize("name", SERVED)
def test_served_scores_are_the_estimators_bit_for_bit(name, tmp_path):
    model, path, X = _fitted(name, tmp_path, nan=REGISTRY[name].served != "linear")
    scorer = load_scorer(path)
    assert isinstance(scorer, SavedScorer) and scorer.n_features_in_ == X.shape[1]
    rows = np.random.default_rng(1).normal(size=(700, X.shape[1])).astype(np.float32)  # past the serial limit
    if REGISTRY[name].served != "linear":
        rows[::5, 1] = np.nan
    for batch in (X, rows, rows[:3]):
        np.testing.assert_array_equal(scorer.predict(batch), model.predict(batch))
        np.testing.assert_array_equal(scorer.predict(batch), load_model(path).predict(batch))


@pytest.mark.parametrize("name", SERVED)
def test_small_inputs_without_numba_get_the_compiled_scores_bit_for_bit(name, tmp_path, monkeypatch):
    """A process that has not imported numba scores few rows in numpy (trees) or with the linear
    kernel interpreted (ranklearn._compilation): the scores of the compiled kernels, bit for bit."""
    from ranklearn import _compilation

    model, path, X = _fitted(name, tmp_path, nan=REGISTRY[name].served != "linear")
    rows = np.random.default_rng(2).normal(size=(700, X.shape[1])).astype(np.float32)
    if REGISTRY[name].served != "linear":
        rows[::5, 1] = np.nan
    monkeypatch.setattr(_compilation, "SMALL_INPUTS", "compiled")
    expected = [model.predict(batch) for batch in (X, rows, rows[:3])]
    monkeypatch.setattr(_compilation, "SMALL_INPUTS", "interpreted")
    scorer = load_scorer(path)
    for batch, want in zip((X, rows, rows[:3]), expected):
        assert scorer.predict(batch).tobytes() == want.tobytes()


def test_a_ranker_without_a_served_form_loads_its_estimator(tmp_path):
    name = next(n for n, spec in REGISTRY.items() if spec.served is None and spec.extra is None)  # rankboost
    model, path, X = _fitted(name, tmp_path)
    loaded = load_scorer(path)
    assert type(loaded) is type(model)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_linear_refuses_nan_and_every_model_inf_as_the_estimator_does(tmp_path):
    _, path, X = _fitted("linear", tmp_path)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(FeatureValueError) as info:
        load_scorer(path).predict(bad)
    assert (info.value.row, info.value.feature, info.value.kind) == (3, 1, "NaN")
    _, path, X = _fitted("lambdamart", tmp_path)
    bad = X.copy()
    bad[4, 0] = np.inf
    with pytest.raises(FeatureValueError, match="inf"):
        load_scorer(path).predict(bad)
    with pytest.raises(ValueError, match="3 features, but lambdamart is expecting 5"):
        load_scorer(path).predict(X[:, :3])


def _rewritten(path, change) -> None:
    """The model file with its payload changed and its checksum made right again (a file written by hand)."""
    from ranklearn.io import read_model_file, write_model_file

    model_type, payload = read_model_file(path)
    change(payload)
    write_model_file(path, model_type, payload)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.update(payload_version=99), "payload version 99 is newer than this ranklearn reads"),
        (lambda p: p.update(n_features="5"), "payload field 'n_features' must be int"),
        (lambda p: p["trees"][0].update(feature=[7 if f >= 0 else -1 for f in p["trees"][0]["feature"]]),
         "a split uses feature 7, the model has 5"),
        (lambda p: p.update(trees={}), "payload field 'trees' must be list"),
    ],
    ids=["newer", "n_features_text", "feature_past_width", "trees_not_list"],
)
def test_a_file_the_estimator_refuses_the_scorer_refuses_naming_it(change, message, tmp_path):
    _, path, _ = _fitted("lambdamart", tmp_path)
    _rewritten(path, change)
    with pytest.raises(ModelFormatError) as estimator:
        load_model(path)
    with pytest.raises(ModelFormatError) as served:
        load_scorer(path)
    assert str(path) in str(served.value) and message in str(served.value)
    assert str(served.value) == str(estimator.value)


def test_linear_weights_are_checked(tmp_path):
    _, path, _ = _fitted("linear", tmp_path)
    _rewritten(path, lambda p: p.update(coef=p["coef"][:-1]))
    with pytest.raises(ModelFormatError, match="linear payload needs 5 finite weights") as info:
        load_scorer(path)
    assert str(path) in str(info.value)
    assert json.loads(path.read_text())["model_type"] == "linear"


def test_a_model_with_a_normalizer_predicts_through_its_estimator(tmp_path, monkeypatch):
    """A saved input normalizer (``train --normalize``) is the estimator's to apply: such a file is not served."""
    _, path, X = _fitted("linear", tmp_path)
    _rewritten(path, lambda p: p.update(normalizer={"spec": "zscore"}))
    built = []
    cls = REGISTRY["linear"].load_class()
    monkeypatch.setattr(cls, "from_payload", classmethod(lambda c, payload, **kw: built.append(payload) or "estimator"))
    assert load_scorer(path) == "estimator" and built[0]["normalizer"] == {"spec": "zscore"}


def test_the_rows_queries_do_not_change_a_served_models_scores(tmp_path):
    model, path, X = _fitted("lambdamart", tmp_path)
    qid = np.repeat(np.arange(12), 10)
    np.testing.assert_array_equal(load_scorer(path).predict(X, qid=qid), model.predict(X))
