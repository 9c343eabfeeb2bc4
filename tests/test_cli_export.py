"""``ranklearn export``: the serving formats, their options, and ``--check DATA``."""

from __future__ import annotations

import json

import pytest
from _helpers import assert_one_line_error, run

pytest.importorskip("xgboost")
pytest.importorskip("treelite")


@pytest.mark.parametrize("fmt", ["xgboost", "treelite", "lightgbm"])
def test_export_and_check(capsys, tmp_path, model_path, fmt):
    out = tmp_path / f"m.{fmt}"
    code, stdout, err = run(capsys, "export", "--model", model_path, "--format", fmt, "--out", out,
                            "--check", model_path.with_name("data.txt"))  # fmt: skip
    assert code == 0, err
    assert f"checked 120 rows of {model_path.with_name('data.txt')} with {fmt}" in " ".join(stdout.split())
    assert "within float32 round-off" in " ".join(stdout.split())


def test_check_exit_1_when_the_reader_disagrees(capsys, tmp_path, model_path, monkeypatch):
    """XGBoost's '<' on ranklearn's own thresholds (the bug the export avoids) is caught."""
    import ranklearn.io.xgboost as xgb_module
    from ranklearn.io._trees import float32_down

    monkeypatch.setattr(xgb_module, "float32_up", float32_down)
    code, stdout, _ = run(capsys, "export", "--model", model_path, "--format", "xgboost", "--out", tmp_path / "m.json",
                          "--check", model_path.with_name("data.txt"))  # fmt: skip
    assert code == 1
    assert "ABOVE float32 round-off" in " ".join(stdout.split())


def test_engine_options(capsys, tmp_path, model_path):
    names = tmp_path / "names.txt"
    names.write_text("title\nbody\nurl\nclicks\n")
    out = tmp_path / "es.json"
    code, stdout, err = run(capsys, "export", "--model", model_path, "--format", "opensearch", "--out", out,
                            "--featureset", "movies", "--feature-names", names, "--name", "m1")  # fmt: skip
    assert code == 0, err
    assert "POST _ltr/_featureset/movies/_createmodel" in stdout
    body = json.loads(out.read_text())
    assert body["model"]["name"] == "m1" and body["model"]["model"]["type"] == "model/xgboost+json"
    assert {t["split"] for t in body["model"]["model"]["definition"]["splits"] if "split" in t} <= {"title", "body", "url", "clicks"}
    out = tmp_path / "solr.json"
    code, _, err = run(capsys, "export", "--model", model_path, "--format", "solr", "--out", out, "--store", "letor")
    assert code == 0, err
    assert json.loads(out.read_text())["store"] == "letor"
    out = tmp_path / "vespa.json"
    code, _, err = run(capsys, "export", "--model", model_path, "--format", "vespa", "--out", out, "--vespa-flavor", "xgboost")
    assert code == 0, err
    assert isinstance(json.loads(out.read_text()), list)


def test_refusals_are_one_line(capsys, tmp_path, model_path):
    out = tmp_path / "x.json"
    code, _, err = run(capsys, "export", "--model", model_path, "--format", "solr", "--out", out, "--featureset", "fs")
    assert_one_line_error(code, err, "--featureset does not apply to --format solr")
    code, _, err = run(capsys, "export", "--model", model_path, "--format", "solr", "--out", out,
                       "--check", model_path.with_name("data.txt"))  # fmt: skip
    assert_one_line_error(code, err, "--check takes --format", "no reader of solr")
    code, _, err = run(capsys, "export", "--model", model_path, "--format", "treelite", "--out", out,
                       "--feature-names", model_path)  # fmt: skip
    assert_one_line_error(code, err, "--feature-names does not apply to --format treelite")
    names = tmp_path / "two.txt"
    names.write_text("a\nb\n")
    code, _, err = run(capsys, "export", "--model", model_path, "--format", "xgboost", "--out", out, "--feature-names", names)
    assert_one_line_error(code, err, "2 feature names given; the model has 4 features")
    assert not out.exists()


def test_es_normalizer_file(capsys, tmp_path, model_path):
    from ranklearn.data import Normalizer, load_svmlight

    ds = load_svmlight(model_path.with_name("data.txt"))
    norm = tmp_path / "norm.json"
    norm.write_text(json.dumps(Normalizer("zscore", per_query=False).fit(ds.X).to_dict()))
    out = tmp_path / "es.json"
    code, _, err = run(capsys, "export", "--model", model_path, "--format", "elasticsearch", "--out", out, "--normalizer", norm)
    assert code == 0, err
    assert "feature_normalizers" not in json.loads(out.read_text())["model"]["model"]  # trees: folded into the splits
    norm.write_text("{}")
    code, _, err = run(capsys, "export", "--model", model_path, "--format", "elasticsearch", "--out", out, "--normalizer", norm)
    assert_one_line_error(code, err, "not a Normalizer.to_dict() JSON")
