"""export_model (every format through one call, its options checked) and check_export (the
exported file scored by its real reader)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _helpers import NEURAL, fitted_with_test_settings, nan_tree_model, needs_torch, small_data, threshold_rows

from ranklearn.io import check_export, export_model
from ranklearn.io.export import CHECKED_FORMATS, FORMATS, format_options
from ranklearn.registry import REGISTRY

pytest.importorskip("xgboost")
pytest.importorskip("treelite")
pytest.importorskip("lightgbm")


@pytest.fixture(scope="module")
def nan_model():
    return nan_tree_model(n_estimators=10)


@pytest.mark.parametrize("fmt", ["xgboost", "treelite", "lightgbm"])
def test_check_passes_on_every_threshold(nan_model, tmp_path, fmt):
    model, X = nan_model
    path = tmp_path / f"m.{fmt}"
    export_model(model, path, fmt)
    rows = np.vstack([X, threshold_rows(model.trees_, X), threshold_rows(model.trees_, X, dtype=np.float64)])
    result = check_export(model, path, fmt, rows)
    assert result.passed and result.n_rows == rows.shape[0] and result.reader == fmt
    assert result.max_difference <= result.tolerance


def test_check_fails_when_the_file_scores_otherwise(nan_model, tmp_path):
    """A file of another model (one tree less) is caught."""
    from ranklearn import LambdaMART

    model, X = nan_model
    fewer = LambdaMART.from_trees(model.trees_[:-1], model.n_features_in_)
    export_model(fewer, tmp_path / "m.json", "xgboost")
    result = check_export(model, tmp_path / "m.json", "xgboost", X)
    assert not result.passed and result.max_difference > result.tolerance


def test_every_format_writes_or_refuses_in_one_line(nan_model, tmp_path):
    model, _ = nan_model
    refused = {"onnx": "neural rankers", "solr": "--missing-as"}
    for fmt in FORMATS:
        path = tmp_path / f"m.{fmt.replace('-', '_')}"
        if fmt in refused:
            with pytest.raises(ValueError, match=refused[fmt]):
                export_model(model, path, fmt)
            assert not path.exists()
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                export_model(model, path, fmt)
            # only RankLib, which sends NaN right, warns about the model's missing-value branch
            assert [str(w.message)[:40] for w in caught] == (["the model was trained with missing value"] if fmt == "ranklib" else [])
            assert path.stat().st_size > 0


def test_options_are_the_formats_own(nan_model, tmp_path):
    model, _ = nan_model
    assert format_options("solr") == ("name", "store", "feature_names", "missing_as")
    assert format_options("treelite") == ()
    with pytest.raises(ValueError, match="takes no options; got feature_names"):
        export_model(model, tmp_path / "m", "treelite", feature_names=["a"])
    with pytest.raises(ValueError, match="takes name, store, feature_names, missing_as; got flavor"):
        export_model(model, tmp_path / "m", "solr", flavor="x")
    with pytest.raises(ValueError, match="unknown export format 'pmml'"):
        export_model(model, tmp_path / "m", "pmml")
    with pytest.raises(ValueError, match="feature names given"):
        export_model(model, tmp_path / "m", "xgboost", feature_names=["a", "b"])


def test_check_refuses_formats_without_a_reader(nan_model, tmp_path):
    model, X = nan_model
    assert set(CHECKED_FORMATS) == {"xgboost", "treelite", "lightgbm", "onnx"}
    export_model(model, tmp_path / "m.json", "vespa")
    with pytest.raises(ValueError, match="no reader of 'vespa' runs here"):
        check_export(model, tmp_path / "m.json", "vespa", X)


@needs_torch
def test_onnx_check(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    X, y, qid = small_data()
    model = NEURAL[0](hidden=(8,), epochs=2, random_state=0).fit(X, y, qid)
    export_model(model, tmp_path / "m.onnx", "onnx")
    assert check_export(model, tmp_path / "m.onnx", "onnx", X).passed


def test_an_unfitted_model_is_refused(tmp_path):
    from ranklearn import LambdaMART
    from ranklearn.models.coordinate_ascent import CoordinateAscent

    with pytest.raises(ValueError, match="needs a fitted model"):
        export_model(LambdaMART(), tmp_path / "m.json", "xgboost")
    with pytest.raises(ValueError, match="needs a fitted model"):
        export_model(CoordinateAscent(), tmp_path / "m.json", "solr")
    assert not (tmp_path / "m.json").exists()


def check_declared_exports(spec, tmp_path) -> None:
    """``spec``'s ranker, fitted with its test settings, exports to every format its spec declares
    (``ModelSpec.exports``) and is refused, writing nothing, by every other one (Solr may refuse a
    linear model's nonzero intercept, not its kind)."""
    model, *_ = fitted_with_test_settings(spec)
    for fmt in FORMATS:
        path = tmp_path / f"{spec.name}.{fmt}"
        if fmt in spec.exports:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # e.g. RankLib sends NaN right
                    export_model(model, path, fmt)
            except ImportError:  # the onnx extra
                continue
            except ValueError as exc:  # Solr's linear model has no constant: linear regression's intercept
                assert fmt == "solr" and "intercept" in str(exc), (fmt, exc)
                continue
            assert path.stat().st_size > 0, fmt
        else:
            with pytest.raises((TypeError, ValueError)):
                export_model(model, path, fmt)
            assert not path.exists(), fmt


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_registered_ranker_exports_to_the_formats_it_declares_and_no_other(name, tmp_path):
    check_declared_exports(REGISTRY[name], tmp_path)
