"""The model registry: a ranker registered inside this test runs through the whole library.

A new ranker is one module and one registry entry: ``ToyRanker`` below is defined and
registered here, and fit, predict, save, load, ``ranklearn train`` and ``ranklearn predict``
work for it without any other file knowing about it; it passes the shared tests every
registered ranker passes (scikit-learn's checks, the command line, model files, the exports it
declares, the warm-up), run here on it since they are parametrized before this test registers it.
"""

from __future__ import annotations

import dataclasses
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import pytest
from sklearn.utils._param_validation import Interval

from ranklearn.cli.main import main
from ranklearn.exceptions import ModelFormatError
from ranklearn.io import load_model
from ranklearn.models.base import EARLY_STOPPING, BaseRanker
from ranklearn.registry import (
    REGISTRY, ModelSpec, Option, get_model_class, get_spec, markdown_table, model_names, register, spec_of,
    unregister,
)  # fmt: skip


class ToyRanker(BaseRanker):
    """Linear scores fitted to the labels by gradient steps on the squared error (one step an iteration)."""

    _model_name = "toy"
    _display_name = "Toy"
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, np.inf, closed="neither")],
        "metric": [str],
        "early_stopping_rounds": EARLY_STOPPING,
        "n_jobs": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    def __init__(self, n_estimators=20, learning_rate=0.1, metric="ndcg@10", early_stopping_rounds=None, n_jobs=None,
                 verbose=0):  # fmt: skip
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.metric = metric
        self.early_stopping_rounds = early_stopping_rounds
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _begin_fit(self, data, evals):
        self._X, self._y = data.X.astype(np.float64), data.y
        self.coef_ = np.zeros(data.X.shape[1])
        self._evals = [e.X.astype(np.float64) for e in evals]

    def _fit_step(self, iteration):
        residual = self._X @ self.coef_ - self._y
        self.coef_ = self.coef_ - self.learning_rate * self._X.T @ residual / len(self._y)

    def _eval_scores(self, index):
        return self._evals[index] @ self.coef_

    def _snapshot(self):
        return self.coef_.copy()

    def _restore(self, snapshot):
        self.coef_ = snapshot

    def _end_fit(self):
        del self._X, self._y, self._evals

    def _predict_raw(self, X):
        return X.astype(np.float64) @ self.coef_

    def _state_to_payload(self) -> dict[str, Any]:
        return {"coef": self.coef_.tolist()}

    def _state_from_payload(self, payload, version):
        self.coef_ = np.asarray(payload["coef"], dtype=np.float64)


TOY = ModelSpec(
    "toy",
    f"{__name__}:ToyRanker",
    "A linear toy, registered by a test.",
    (),  # every parameter is an option of train, generated from the constraints
    payload_version=1,
    demo=dict(n_estimators=5),
    warmup="rest",
    test=dict(n_estimators=5, learning_rate=0.05),
)  # fmt: skip


@pytest.fixture
def toy():
    register(TOY)
    yield TOY
    unregister("toy")


def run(capsys, *args):
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return info.value.code or 0, out.out, out.err


@pytest.fixture
def files(tmp_path):
    from ranklearn.data import save_svmlight
    from ranklearn.datasets import make_ranking_splits

    paths = {}
    for name, ds in zip(("train", "vali", "test"), make_ranking_splits(n_queries=(60, 20, 20), n_features=6, n_informative=4, random_state=3)):
        paths[name] = tmp_path / f"{name}.txt"
        save_svmlight(ds, paths[name])
    return paths


def test_toy_model_through_python_api(toy, tmp_path):
    from ranklearn.datasets import make_ranking_splits

    tr, va, te = make_ranking_splits(n_queries=(60, 20, 20), n_features=6, n_informative=4, random_state=3)
    assert get_model_class("toy") is ToyRanker
    m = ToyRanker(n_estimators=30, early_stopping_rounds=5).fit(tr.X, tr.y, qid=tr.qid, eval_set=[(va.X, va.y, va.qid)])
    assert 1 <= m.best_iteration_ <= m.n_iter_ <= 30
    assert m.best_score_ == max(m.evals_result_["valid_0"]["ndcg@10"])
    m.save(tmp_path / "toy.json")
    back = load_model(tmp_path / "toy.json")
    assert isinstance(back, ToyRanker) and back.get_params() == m.get_params()
    np.testing.assert_array_equal(back.predict(te.X), m.predict(te.X))
    assert back.score(te.X, te.y, qid=te.qid) == m.score(te.X, te.y, qid=te.qid)


def test_toy_model_through_the_command_line(toy, capsys, files, tmp_path):
    model, scores = tmp_path / "toy.json", tmp_path / "toy.scores"
    code, out, err = run(capsys, "train", "--train", files["train"], "--validate", files["vali"], "--model", "toy",
                         "--n-estimators", "7", "--save", model)  # fmt: skip
    assert code == 0, err
    assert "toy: saved to" in out
    code, _, err = run(capsys, "predict", "--model", model, "--data", files["test"], "--out", scores)
    assert code == 0, err
    from ranklearn.data import load_svmlight

    expected = load_model(model).predict(load_svmlight(files["test"]).X)
    np.testing.assert_array_equal(np.loadtxt(scores), expected)
    # its own option is checked in its own words, others' options are refused
    code, _, err = run(capsys, "train", "--train", files["train"], "--model", "toy", "--n-estimators", "0")
    assert code == 2 and "--n-estimators must be" in err
    code, _, err = run(capsys, "train", "--train", files["train"], "--model", "toy", "--leaves", "3")
    assert code == 2 and "--leaves does not apply to toy" in err


def test_unknown_names_and_conflicting_options():
    with pytest.raises(ValueError, match="unknown model 'nope'; choose one of lambdamart"):
        get_spec("nope")
    with pytest.raises(ValueError, match="registered already"):
        register(REGISTRY["lambdamart"])
    clash = dataclasses.replace(TOY, name="clash", options=(Option("--leaves", "steps", int, "x"),))
    with pytest.raises(ValueError, match="--leaves of clash conflicts with lambdamart"):
        register(clash)
    assert "clash" not in REGISTRY


def test_model_file_of_an_unregistered_type(toy, tmp_path):
    from ranklearn.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=10, n_features=3, n_informative=2, random_state=0, return_X_y=True)
    ToyRanker(n_estimators=2).fit(X, y, qid=qid).save(tmp_path / "toy.json")
    unregister("toy")
    with pytest.raises(ModelFormatError, match="unknown model type 'toy'"):
        load_model(tmp_path / "toy.json")


def test_newer_payloads_and_unknown_parameters_are_refused(toy, tmp_path):
    import json

    from ranklearn.datasets import make_ranking
    from ranklearn.io.model_file import read_model_file, write_model_file

    X, y, qid = make_ranking(n_queries=10, n_features=3, n_informative=2, random_state=0, return_X_y=True)
    ToyRanker(n_estimators=2).fit(X, y, qid=qid).save(tmp_path / "toy.json")
    _, payload = read_model_file(tmp_path / "toy.json")
    write_model_file(tmp_path / "newer.json", "toy", {**payload, "payload_version": 2})
    with pytest.raises(ModelFormatError, match="payload version 2 is newer than this ranklearn reads"):
        load_model(tmp_path / "newer.json")
    write_model_file(tmp_path / "unknown.json", "toy", {**payload, "params": {**payload["params"], "warp": 9}})
    with pytest.raises(ModelFormatError, match="parameters this ranklearn does not know: warp"):
        load_model(tmp_path / "unknown.json")
    assert json.loads((tmp_path / "toy.json").read_text())["model_type"] == "toy"


def test_readme_table_comes_from_the_registry():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("<!-- models:start -->\n", 1)[1].split("\n<!-- models:end -->", 1)[0]
    assert block == markdown_table()  # regenerate: .venv/bin/python tools/readme_models.py
    for spec in REGISTRY.values():
        assert f"| `{spec.name}` |" in block


def test_every_registered_class_imports_from_ranklearn_models():
    import ranklearn.models as models

    for name in model_names():
        cls = get_model_class(name)
        assert getattr(models, cls.__name__) is cls and cls.__name__ in models.__all__


# --- the shared tests, on a ranker registered here ---------------------------------------------------
def test_the_toy_passes_scikit_learns_checks(toy):
    from sklearn.utils.estimator_checks import check_estimator
    from test_models_sklearn import adapted

    check_estimator(adapted(toy))


def test_the_toy_trains_and_predicts_from_the_command_line(toy, capsys, files, tmp_path):
    from test_cli_train import check_train_and_predict

    check_train_and_predict(toy, capsys, files, tmp_path)


def test_the_toy_saves_and_loads_exactly(toy, tmp_path):
    from test_io_model_file import check_save_and_load

    check_save_and_load(toy, tmp_path)


def test_the_toy_exports_to_no_format(toy, tmp_path):
    from test_io_export import check_declared_exports

    check_declared_exports(toy, tmp_path)


def test_the_toy_is_warmed_up(toy, monkeypatch):
    from test_warmup import check_warmed_up

    check_warmed_up(toy, monkeypatch)


def test_the_toys_declared_positions_hold(toy):
    from test_models_positions import check_declared_positions

    check_declared_positions(toy)  # positions=False: it warns that it ignores position=
    with pytest.raises(AssertionError, match="declares positions=True but takes no objective= or loss="):
        check_declared_positions(dataclasses.replace(toy, positions=True))  # a false declaration is caught


def test_declared_capabilities_match_the_classes():
    from ranklearn.registry import STRUCTURES

    for spec in REGISTRY.values():
        try:
            cls = spec.load_class()
        except ImportError:
            continue
        assert spec_of(cls) is spec and spec_of(cls()) is spec
        assert spec.contributions == hasattr(cls, "predict_contributions"), spec.name
        assert spec.structure in (*STRUCTURES, None)
        cls(**spec.test).check_params()  # the test settings are valid parameters
    assert spec_of(object()) is None and spec_of(ToyRanker) is None  # the toy is not registered here
    with pytest.raises(ValueError, match="structure of bad must be one of trees, forest, linear, network or None"):
        register(dataclasses.replace(TOY, name="bad", structure="graph"))
    with pytest.raises(ValueError, match="warmup of bad must be one of trees, rest or None"):
        register(dataclasses.replace(TOY, name="bad", warmup="later"))
    assert "bad" not in REGISTRY
