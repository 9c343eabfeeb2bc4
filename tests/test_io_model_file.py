"""Model files: corrupt, foreign or newer files raise ModelFormatError naming the file; exact round trips."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

from ranklearn.exceptions import ModelFormatError
from ranklearn.io import load_model
from ranklearn.io import model_file as MF
from ranklearn.models import LambdaMART
from ranklearn.registry import REGISTRY
from _helpers import NEURAL, assert_one_line_error, fitted_with_test_settings, run, small_data


def _corrupt(path: Path, target: Path, how: str) -> Path:
    raw = path.read_bytes()
    if how == "truncated":
        data = raw[: len(raw) // 2]
    elif how == "empty":
        data = b""
    elif how == "flipped_digit":
        text = raw.decode()
        i = text.index('"value":[') + len('"value":[')
        while not text[i].isdigit():
            i += 1
        data = (text[:i] + ("1" if text[i] != "1" else "2") + text[i + 1 :]).encode()
    elif how == "foreign_json":
        data = json.dumps({"learner": "lightgbm", "trees": []}).encode()
    elif how == "json_list":
        data = b"[1, 2, 3]"
    elif how == "binary":
        data = bytes(range(256))
    elif how == "newer_version":
        env = json.loads(raw)
        env["format_version"] = MF.FORMAT_VERSION + 1
        data = json.dumps(env).encode()
    elif how == "bad_version":
        env = json.loads(raw)
        env["format_version"] = "one"
        data = json.dumps(env).encode()
    elif how == "no_payload":
        env = json.loads(raw)
        del env["payload"]
        data = json.dumps(env).encode()
    elif how == "infinite_number":
        data = raw.replace(b'"payload":{', b'"payload":{"x":1e999,', 1)
    elif how == "nan_literal":
        data = raw.replace(b'"payload":{', b'"payload":{"x":NaN,', 1)
    elif how == "huge_integer":
        data = raw.replace(b'"payload":{', b'"payload":{"x":' + b"9" * 5000 + b",", 1)
    elif how == "deep_nesting":
        data = b"[" * 100_000 + b"]" * 100_000
    elif how in ("unknown_model_type", "relabelled_model_type"):
        env = json.loads(raw)
        env["model_type"] = "gbdt-9000" if how == "unknown_model_type" else "mart"  # mart reads these trees too
        if how == "unknown_model_type":  # a consistent file of a type this ranklearn does not know
            env["sha256"] = hashlib.sha256(MF._canonical(env["model_type"], env["payload"])).hexdigest()
        data = json.dumps(env).encode()
    else:
        raise AssertionError(how)
    target.write_bytes(data)
    return target


CORRUPTIONS = {
    "truncated": "not valid JSON",
    "empty": "not valid JSON",
    "flipped_digit": "checksum mismatch",
    "foreign_json": "not a ranklearn model file",
    "json_list": "not a ranklearn model file",
    "binary": "not a ranklearn model file",
    "newer_version": "newer than this ranklearn supports",
    "bad_version": "format_version",
    "no_payload": "payload",
    "infinite_number": "corrupted",
    "nan_literal": "not valid JSON",
    "huge_integer": "not valid JSON",
    "deep_nesting": "not valid JSON",
    "unknown_model_type": "unknown model type",
    "relabelled_model_type": "checksum mismatch",
}


@pytest.mark.parametrize("how", sorted(CORRUPTIONS))
def test_bad_model_files_raise_model_format_error_naming_the_file(model_path, tmp_path, how, capsys):
    bad = _corrupt(model_path, tmp_path / f"{how}.json", how)
    with pytest.raises(ModelFormatError, match=re.escape(CORRUPTIONS[how])) as info:
        load_model(bad)
    assert info.value.path == str(bad) and str(bad) in str(info.value)
    with pytest.raises(ModelFormatError):
        LambdaMART.load(bad)
    data = model_path.with_name("data.txt")
    code, _, err = run(capsys, "predict", "--model", bad, "--data", data, "--out", tmp_path / "s.txt")
    assert_one_line_error(code, err, str(bad))


def test_format_version_1_files_are_still_read(model_path, tmp_path):
    """Version 1's checksum covered the payload alone."""
    env = json.loads(model_path.read_bytes())
    assert env["format_version"] == 2
    env["format_version"] = 1
    env["sha256"] = hashlib.sha256(
        json.dumps(env["payload"], sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    old = tmp_path / "v1.json"
    old.write_text(json.dumps(env))
    X, _, _ = small_data(n_queries=4, docs=5)
    np.testing.assert_array_equal(load_model(old).predict(X), load_model(model_path).predict(X))
    env["model_type"] = "mart"  # version 1 could not see this
    old.write_text(json.dumps(env))
    assert type(load_model(old)).__name__ == "MART"


def test_model_file_of_another_type(model_path, tmp_path):
    if not NEURAL:
        pytest.skip("torch not installed")
    with pytest.raises(ModelFormatError, match="model_type 'lambdamart'"):
        NEURAL[0].load(model_path)


def test_save_and_load_round_trip_is_exact(model_path, tmp_path):
    X, _, _ = small_data(n_queries=10, docs=12)
    model = LambdaMART.load(model_path)
    model.save(tmp_path / "again.json")
    np.testing.assert_array_equal(load_model(tmp_path / "again.json").predict(X), model.predict(X))


@pytest.mark.parametrize(
    "field, value, words",
    [("n_features", "46", ["'n_features' must be int", "str '46'"]),
     ("n_features", True, ["'n_features' must be int", "bool"]),
     ("objective", "lambdarank", ["'objective' must be dict or null", "str 'lambdarank'"]),
     ("objective", None, ["'objective' is null", "trained by ranklearn", "imported"]),
     ("bin_mapper", [], ["'bin_mapper' must be dict or null", "list"]),
     ("n_iter", 3.5, ["'n_iter' must be int"]),
     ("best_score", "0.5", ["'best_score' must be number or null"]),
     ("interrupted", 0, ["'interrupted' must be bool"]),
     ("trees", {}, ["'trees' must be list"])],
)  # fmt: skip
def test_payload_fields_of_the_wrong_type_are_refused_under_a_valid_checksum(model_path, tmp_path, field, value, words):
    # a file edited by hand (or by another program) and checksummed again is checked field by field
    env = json.loads(model_path.read_bytes())
    env["payload"][field] = value
    bad = tmp_path / "edited.json"
    MF.write_model_file(bad, env["model_type"], env["payload"])
    with pytest.raises(ModelFormatError) as info:
        load_model(bad)
    for word in words:
        assert word in str(info.value), str(info.value)
    assert str(bad) in str(info.value)


def test_model_file_bytes_are_the_file_and_load_from_bytes(tmp_path):
    from ranklearn.io import model_from_bytes

    rng = np.random.default_rng(0)
    X, y, q = rng.normal(size=(60, 3)), rng.integers(0, 3, 60), np.repeat(np.arange(6), 10)
    model = LambdaMART(n_estimators=2, num_leaves=3, min_samples_leaf=2).fit(X, y, q)
    model.save(tmp_path / "m.json")
    raw = MF.model_file_bytes(model._model_name, model._to_payload())
    written = json.loads((tmp_path / "m.json").read_bytes())
    assert json.loads(raw) == written  # the same envelope, checksum included
    back = model_from_bytes(raw, "store/model")
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    with pytest.raises(ModelFormatError, match="^store/model: checksum mismatch"):
        model_from_bytes(raw.replace(b'"n_iter":2', b'"n_iter":1'), "store/model")


def check_save_and_load(spec, tmp_path) -> None:
    """``spec``'s ranker, fitted with its test settings, comes back from its file as the same class
    with the same parameters and the same scores bit for bit; the file says its type, and the
    file cut short is refused naming it."""
    model, X, y, qid = fitted_with_test_settings(spec)
    path = tmp_path / f"{spec.name}.json"
    model.save(path)
    assert json.loads(path.read_bytes())["model_type"] == spec.name
    back = load_model(path)
    assert type(back) is type(model) and back.get_params() == model.get_params()
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert back.score(X, y, qid=qid) == model.score(X, y, qid=qid)
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(ModelFormatError, match=re.escape(str(path))):
        load_model(path)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_registered_ranker_saves_and_loads_exactly(name, tmp_path):
    check_save_and_load(REGISTRY[name], tmp_path)
