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
    model = NEURAL[0](hidden=(8,), n_estimators=2, random_state=0).fit(X, y, qid)
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


# ------------------------------------------------------------------ models fitted with normalize=
def _normalized_data(seed=0):
    X, y, qid = small_data(n_queries=10, docs=12, seed=seed)
    return X * [1.0, 40.0, 1e3, 0.01] + [0.0, 200.0, -5e3, 3.0], y, qid  # scales a normalizer changes


@pytest.fixture(scope="module", params=["zscore", "sum", "linear"])
def normalized_model(request):
    from ranklearn import LambdaMART

    X, y, qid = _normalized_data()
    return LambdaMART(n_estimators=6, num_leaves=4, min_samples_leaf=3, random_state=0, normalize=request.param).fit(X, y, qid), X


@pytest.mark.parametrize("fmt", ["xgboost", "treelite", "lightgbm"])
def test_a_global_normalizer_is_folded_into_the_thresholds(normalized_model, tmp_path, fmt):
    """Raw rows on every folded threshold, just below and above, and new rows: the reader's
    scores are the model's, which normalizes first."""
    from ranklearn.io._trees import model_trees

    model, X = normalized_model
    path = tmp_path / f"m.{fmt}"
    export_model(model, path, fmt)
    raw = model_trees(model, "the test")
    assert not np.array_equal(raw[0].threshold, model.trees_[0].threshold)  # the splits moved to raw values
    rows = np.vstack([X, threshold_rows(raw, X), _normalized_data(seed=1)[0]])
    result = check_export(model, path, fmt, rows)
    assert result.passed, result


def test_a_global_normalizer_in_ranklib_and_linear_exports(normalized_model, tmp_path):
    from ranklearn.io._trees import model_trees
    from ranklearn.io.ranklib import import_ranklib
    from ranklearn.models.linear import LinearRegression

    model, X = normalized_model
    export_model(model, tmp_path / "m.txt", "ranklib")
    back = import_ranklib(tmp_path / "m.txt", n_features=X.shape[1])
    rows = np.vstack([X, threshold_rows(model_trees(model, "the test"), X)])
    rows = rows[~np.isnan(rows).any(axis=1)]  # RankLib sends NaN right, whatever the model learned
    np.testing.assert_array_equal(back.predict(rows), model.predict(rows))  # our importer is exact
    X, y, qid = _normalized_data()
    linear = LinearRegression(normalize=model.normalize).fit(X, y, qid)
    export_model(linear, tmp_path / "l.txt", "ranklib")
    back = import_ranklib(tmp_path / "l.txt", n_features=X.shape[1])
    # predict rounds the normalized features to float32 (as every model holds features); the
    # folded weights read the raw values: the same scores up to that rounding
    z = linear.normalizer_.transform(X.astype(np.float32)).astype(np.float64)
    bound = 2 * np.finfo(np.float32).eps * (np.abs(z) @ np.abs(linear.coef_))
    assert np.all(np.abs(back.predict(X) - linear.predict(X)) <= bound)


def test_every_format_writes_a_global_normalized_model_and_refuses_a_per_query_one(tmp_path):
    from ranklearn import LambdaMART

    X, y, qid = _normalized_data()
    for spec in ("zscore", "query-zscore"):
        model = LambdaMART(n_estimators=3, num_leaves=4, min_samples_leaf=3, random_state=0, normalize=spec).fit(X, y, qid)
        for fmt in FORMATS:
            path = tmp_path / f"{spec}.{fmt.replace('-', '_')}"
            options = {"missing_as": 0.0} if fmt == "solr" else {}
            if fmt == "onnx":
                continue  # a tree model: refused as any (test_every_format_writes_or_refuses_in_one_line)
            if spec == "zscore":
                export_model(model, path, fmt, **options)
                assert path.stat().st_size > 0
            else:
                with pytest.raises(ValueError, match=r"scores each document alone, but this model normalizes each "
                                   r"query's features within the query \(normalize='query-zscore'\); train it with "
                                   r"normalize='zscore'") as info:  # fmt: skip
                    export_model(model, path, fmt, **options)
                assert "\n" not in str(info.value) and not path.exists()


@needs_torch
def test_onnx_holds_the_normalizer(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    X, y, qid = _normalized_data()
    model = NEURAL[0](hidden=(8,), n_estimators=2, random_state=0, normalize="zscore").fit(X, y, qid)
    export_model(model, tmp_path / "m.onnx", "onnx")
    assert check_export(model, tmp_path / "m.onnx", "onnx", np.vstack([X, _normalized_data(seed=1)[0]])).passed
    per_query = NEURAL[0](hidden=(8,), n_estimators=1, random_state=0, normalize="query-sum").fit(X, y, qid)
    with pytest.raises(ValueError, match="ONNX scores each document alone"):
        export_model(per_query, tmp_path / "q.onnx", "onnx")
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
