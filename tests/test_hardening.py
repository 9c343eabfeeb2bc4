"""Issue 5: malformed data, corrupt models and hostile input never crash ranklearn or lose work.

Every public entry point answers bad input with a specific exception (DataFormatError,
ModelFormatError, or a ValueError naming the problem); the command line turns each one
into exit status 2 and a single line on stderr, never a traceback. Model files are
written atomically, and Ctrl-C during ``ranklearn train --save`` keeps the best model.

Label policy, per component (tested below):

* loader and ``RankingDataset``: any finite real label (a file format question);
* estimators (LambdaMART, RankNet, LambdaRank) train on any finite real labels;
* metrics need labels >= 0 (a negative gain breaks NDCG's [0, 1] range and ERR's stop
  probabilities), so evaluation sets, ``score`` and ``ranklearn evaluate`` reject
  negative labels with a ValueError naming the row (and the file, on the command line);
* labels above 1000 overflow the gain 2^rel-1: DCG/NDCG with ``gain="exp2"`` refuse them.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp

from ranklearn.cli.main import main
from ranklearn.data import RankingDataset, from_arrays, load_svmlight, save_svmlight
from ranklearn.exceptions import DataFormatError, ModelFormatError
from ranklearn.io import load_model
from ranklearn import _files as F
from ranklearn.io import model_file as MF
from ranklearn.metrics import get_metric, ndcg_score
from ranklearn.models import LambdaMART

RANKLEARN = Path(sys.executable).with_name("ranklearn")
TINY_TREES = dict(n_estimators=3, num_leaves=4, min_samples_leaf=2, random_state=0, n_jobs=1)


def _torch_models():
    try:
        import safetensors  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return []
    from ranklearn.models import LambdaRank, RankNet

    return [RankNet, LambdaRank]


NEURAL = _torch_models()
needs_torch = pytest.mark.skipif(not NEURAL, reason="torch / safetensors not installed")


def small_data(n_queries=6, docs=8, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    X = rng.normal(size=(n, n_features))
    y = rng.integers(0, 3, n).astype(float)
    qid = np.repeat(np.arange(n_queries), docs)
    return X, y, qid


def all_models():
    """(name, factory) of every estimator with tiny settings."""
    models = [("lambdamart", lambda: LambdaMART(**TINY_TREES))]
    for cls in NEURAL:
        models.append((cls.__name__.lower(), lambda cls=cls: cls(hidden=(4,), epochs=2, random_state=0)))
    return models


MODELS = all_models()
MODEL_IDS = [name for name, _ in MODELS]


# ============================================================================ Python API
@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
@pytest.mark.parametrize(
    "case,fragment",
    [
        ("inf_feature", "inf"),
        ("inf_label", "finite"),
        ("nan_label", "finite"),
        ("text_label", "labels"),
        ("y_short", "lengths differ"),
        ("qid_short", "lengths differ"),
        ("empty", "empty"),
        ("no_features", "no features"),
        ("nan_qid", "qid"),
        ("none_qid", "qid"),
        ("mixed_qid", "comparable"),
        ("no_qid", "qid is required"),
        ("three_d", "2-D"),
    ],
)
def test_estimators_reject_bad_training_data(name, make, case, fragment):
    X, y, qid = small_data()
    kwargs = {}
    if case == "inf_feature":
        X[3, 1] = np.inf
    elif case == "inf_label":
        y[2] = np.inf
    elif case == "nan_label":
        y[2] = np.nan
    elif case == "text_label":
        y = np.array(["1"] * (len(y) - 1) + ["high"], dtype=object)
    elif case == "y_short":
        y = y[:-1]
    elif case == "qid_short":
        qid = qid[:-1]
    elif case == "empty":
        X, y, qid = np.empty((0, 4)), np.empty(0), np.empty(0)
    elif case == "no_features":
        X = np.empty((len(y), 0))
    elif case == "nan_qid":
        qid = qid.astype(float)
        qid[5] = np.nan
    elif case == "none_qid":
        qid = qid.astype(object)
        qid[0] = None
    elif case == "mixed_qid":
        qid = qid.astype(object)
        qid[: len(qid) // 2] = "a"
    elif case == "no_qid":
        qid = None
    elif case == "three_d":
        X = X.reshape(len(y), 2, 2)
    with pytest.raises(ValueError, match=fragment):
        make().fit(X, y, qid=qid, **kwargs)


def test_lambdamart_nan_means_missing():
    X, y, qid = small_data()
    X[::3, 0] = np.nan
    model = LambdaMART(**TINY_TREES).fit(X, y, qid=qid)
    scores = model.predict(X)
    assert np.isfinite(scores).all()
    assert model.trained_with_missing_


@needs_torch
@pytest.mark.parametrize("cls", NEURAL, ids=lambda c: c.__name__)
def test_neural_models_reject_nan_clearly(cls):
    X, y, qid = small_data()
    bad = X.copy()
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN at row 4 \(from 0\), feature 3 \(from 1.*LambdaMART"):
        cls(hidden=(4,), epochs=1).fit(bad, y, qid=qid)
    model = cls(hidden=(4,), epochs=1, random_state=0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"NaN at row 4 \(from 0\), feature 3 \(from 1"):
        model.predict(bad)


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
def test_feature_count_at_predict_time(name, make):
    X, y, qid = small_data()
    model = make().fit(X, y, qid=qid)
    for wrong in (X[:, :3], np.hstack([X, X[:, :1]]), X[0]):
        with pytest.raises(ValueError, match="features"):
            model.predict(wrong)


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
def test_degenerate_queries_train_and_predict(name, make):
    """Queries of one document, and data where no query has a relevant document."""
    X, y, qid = small_data()
    for labels, groups in ((y, np.arange(len(y))), (np.zeros_like(y), qid)):
        model = make().fit(X, labels, qid=groups)
        assert np.isfinite(model.predict(X)).all()


@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
@pytest.mark.parametrize(
    "param,value,fragment",
    [("metric", "bogus@3", "unknown metric"), ("metric", "ndcg@0", "k must be >= 1"), ("metric", "ndcg@-2", ">= 1")],
)
def test_bad_metric_parameter(name, make, param, value, fragment):
    X, y, qid = small_data()
    model = make().set_params(**{param: value})
    with pytest.raises(ValueError, match=re.escape(fragment)):
        model.fit(X, y, qid=qid)


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"n_estimators": -3}, "n_estimators"),
        ({"num_leaves": 1}, "num_leaves"),
        ({"learning_rate": float("nan")}, "learning_rate"),
        ({"learning_rate": 0}, "learning_rate"),
        ({"max_bins": 1}, "max_bins"),
        ({"min_samples_leaf": 0}, "min_samples_leaf"),
        ({"n_jobs": 0}, "n_jobs"),
        ({"sigma": -1.0}, "sigma"),
        ({"lambda_metric": "precision"}, "lambda_metric"),
        ({"lambda_metric": "ndcg@0"}, "positive"),
    ],
)
def test_lambdamart_bad_parameters(params, fragment):
    X, y, qid = small_data()
    with pytest.raises(ValueError, match=fragment):
        LambdaMART(**{**TINY_TREES, **params}).fit(X, y, qid=qid)


@needs_torch
@pytest.mark.parametrize("cls", NEURAL, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"epochs": 0}, "epochs"),
        ({"epochs": -1}, "epochs"),
        ({"batch_queries": 0}, "batch_queries"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"sigma": 0.0}, "sigma"),
        ({"dropout": 1.5}, "dropout"),
        ({"hidden": (0,)}, "hidden"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"n_networks": 0}, "n_networks"),
        ({"n_networks": 2.5}, "n_networks"),
        ({"n_networks": True}, "n_networks"),
        ({"n_networks": 3, "mode": "pairwise"}, "n_networks=1"),
    ],
)
def test_neural_bad_parameters(cls, params, fragment):
    X, y, qid = small_data()
    with pytest.raises(ValueError, match=fragment):
        cls(**{"hidden": (4,), "epochs": 1, **params}).fit(X, y, qid=qid)


def test_unfitted_models_say_so():
    from sklearn.exceptions import NotFittedError

    for _, make in MODELS:
        with pytest.raises(NotFittedError):
            make().predict(np.zeros((2, 4)))


# ------------------------------------------------------------------------ negative labels
@pytest.mark.parametrize("name,make", MODELS, ids=MODEL_IDS)
def test_negative_labels_train_but_do_not_evaluate(name, make):
    """Estimators train on any real labels their lambdas can use; metrics (eval sets, score)
    need labels >= 0. LambdaMART's gain-based lambdas (the default) refuse negative labels,
    its RankNet lambdas only compare them."""
    X, y, qid = small_data()
    if name == "lambdamart":
        with pytest.raises(ValueError, match="labels must be >= 0 for ndcg lambdas"):
            make().fit(X, y - 1.0, qid=qid)
        make = partial(LambdaMART, **TINY_TREES, lambda_metric="none")
    model = make().fit(X, y - 1.0, qid=qid)
    assert np.isfinite(model.predict(X)).all()
    with pytest.raises(ValueError, match=r"labels must be finite and >= 0; row \d+ has -1"):
        model.score(X, y - 1.0, qid=qid)
    with pytest.raises(ValueError, match=r">= 0"):
        make().fit(X, y, qid=qid, eval_set=[(X, y - 1.0, qid)])


def test_loader_accepts_any_finite_label(tmp_path):
    path = tmp_path / "neg.txt"
    path.write_text("-2.5 qid:1 1:1\n0 qid:1 1:2\n1e-3 qid:2 1:1\n")
    np.testing.assert_array_equal(load_svmlight(path).y, [-2.5, 0, 1e-3])


# ------------------------------------------------------------------------------- metrics
@pytest.mark.parametrize(
    "y,scores,ptr,fragment",
    [
        ([-1, 0, 1], [1, 2, 3], [0, 3], "labels must be finite and >= 0; row 0 has -1"),
        ([np.nan, 0, 1], [1, 2, 3], [0, 3], "labels must be finite"),
        ([np.inf, 0, 1], [1, 2, 3], [0, 3], "labels must be finite"),
        (["a", "b"], [1, 2], [0, 2], "numeric"),
        ([0, 1, 1], [1, 2], [0, 2], "y has 3 values but scores has 2"),
        ([0, 1], [np.nan, 2], [0, 2], "scores contain NaN"),
        ([0, 1], [1, 2], [0, 3], "ptr must rise"),
        ([0, 1], [1, 2], [1, 2], "ptr must rise"),
        ([0, 1], [1, 2], [0.0, 1.5, 2.0], "integer"),
        ([0, 1], [1, 2], [], "ptr must rise"),
        ([2000, 0, 1], [1, 2, 3], [0, 3], "gain='linear'"),
    ],
)
def test_metrics_reject_bad_input(y, scores, ptr, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        get_metric("ndcg@10").per_query(y, scores, ptr)


@pytest.mark.parametrize("spec", ["foo", "ndcg@0", "ndcg@-1", "map@x", "", "ndcg@", None, 10])
def test_unknown_metrics_and_bad_k(spec):
    with pytest.raises(ValueError, match=re.escape(repr(spec))):
        get_metric(spec)


def test_metric_edge_values():
    m = get_metric("ndcg@10")
    assert m.per_query([], [], [0]).shape == (0,)
    assert np.isnan(m.mean([], [], [0]))  # no query: NaN mean, not an error
    assert m.per_query([0, 0], [1, 2], [0, 2])[0] == 0.0  # no relevant document: 0 by default
    assert m.per_query([3], [0.5], [0, 1])[0] == 1.0  # one document
    assert get_metric("ndcg@10", gain="linear").mean([2000, 0, 1], [1, 2, 3], [0, 3]) > 0
    assert 0 < get_metric("err@10", max_grade=2000).mean([2000, 0, 1], [1, 2, 3], [0, 3]) <= 1  # ERR works in 2^(g - max)


@pytest.mark.parametrize("empty,expected", [("zero", 0.0), ("one", 1.0), ("skip", None)])
def test_ndcg_with_gains_that_underflow_is_an_empty_query(empty, expected):
    """Found by hypothesis: label 1.6e-243 > 0 has gain 2^rel - 1 == 0, so the ideal DCG is 0
    (it used to raise ZeroDivisionError from the kernel)."""
    value = get_metric("ndcg", empty=empty).per_query([1.5753194e-243, 0.0], [-1.0, 0.0], [0, 2])[0]
    assert np.isnan(value) if expected is None else value == expected


def test_metric_shortcuts_check_qid():
    with pytest.raises(ValueError, match="lengths differ"):
        ndcg_score([0, 1], [1, 2, 3], qid=[1, 1])
    with pytest.raises(ValueError, match="exactly one of qid"):
        ndcg_score([0, 1], [1, 2])
    with pytest.raises(DataFormatError, match="missing"):
        ndcg_score([0, 1], [1, 2], qid=[1.0, np.nan])


# ------------------------------------------------------------------ huge ids, huge query
def test_huge_qid_is_kept_as_text(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("1 qid:99999999999999999999 1:1\n0 qid:99999999999999999999 1:2\n2 qid:7 1:0\n")
    ds = load_svmlight(path)
    assert ds.query_ids.tolist() == ["99999999999999999999", "7"]
    np.testing.assert_array_equal(ds.ptr, [0, 2, 3])
    model = LambdaMART(**TINY_TREES).fit(ds.X, ds.y, qid=ds.qid)
    assert model.predict(ds.X).shape == (3,)


def test_huge_feature_id_is_a_clear_error_dense_and_fine_sparse(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("1 qid:1 1:0.5 2:1\n0 qid:1 1:0.25 1000000000:1\n1 qid:2 2:3\n")
    with pytest.raises(DataFormatError, match=r"f\.txt:2: feature id 1,000,000,000 .*GiB.*sparse=True"):
        load_svmlight(path)
    with pytest.raises(DataFormatError, match=r"n_features=2,000,000,000"):
        load_svmlight(path, n_features=2_000_000_000)
    ds = load_svmlight(path, sparse=True)
    assert ds.X.shape == (3, 10**9) and ds.X.nnz == 5
    # the models need dense features: a giant, almost empty sparse X is refused, not densified
    with pytest.raises(ValueError, match="sparse with 1,000,000,000 columns"):
        LambdaMART(**TINY_TREES).fit(ds.X, ds.y, qid=ds.qid)
    # sparse X of a normal size still trains
    X, y, qid = small_data()
    LambdaMART(**TINY_TREES).fit(sp.csr_matrix(X), y, qid=qid)


def test_feature_id_beyond_int32_is_an_error(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("1 qid:1 2147483648:1\n")
    with pytest.raises(DataFormatError, match="feature id too large"):
        load_svmlight(path, sparse=True)


def test_ten_thousand_document_query():
    rng = np.random.default_rng(0)
    n = 10_000
    X = rng.normal(size=(n, 5)).astype(np.float32)
    y = rng.integers(0, 5, n).astype(float)
    ptr = np.array([0, n])
    start = time.perf_counter()
    for spec in ("ndcg@10", "ndcg", "err", "map", "p@10", "rr"):
        for ties in ("stable", "average"):
            assert np.isfinite(get_metric(spec, ties=ties).mean(y, np.round(X[:, 0], 1), ptr))
    metrics_time = time.perf_counter() - start
    start = time.perf_counter()
    model = LambdaMART(n_estimators=5, num_leaves=8, random_state=0).fit(X, y, qid=np.zeros(n))
    assert np.isfinite(model.predict(X)).all()
    fit_time = time.perf_counter() - start
    assert metrics_time < 10 and fit_time < 30, (metrics_time, fit_time)


# ================================================================================ loaders
def test_loader_file_errors(tmp_path, monkeypatch):
    import ranklearn.data.svmlight as svmlight_module

    with pytest.raises(FileNotFoundError):
        load_svmlight(tmp_path / "missing.txt")
    with pytest.raises(IsADirectoryError):
        load_svmlight(tmp_path)
    (tmp_path / "file").write_text("1 qid:1 1:1\n")
    with pytest.raises(NotADirectoryError):
        load_svmlight(tmp_path / "file" / "below")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(args[0]))

    monkeypatch.setattr(svmlight_module, "open", refuse, raising=False)
    with pytest.raises(PermissionError):
        load_svmlight(tmp_path / "file")


def test_dataset_constructors_reject_bad_arrays():
    X, y, qid = small_data()
    with pytest.raises(DataFormatError, match="finite"):
        RankingDataset(X, np.where(np.arange(len(y)) == 2, np.nan, y), [0, len(y)])
    with pytest.raises(DataFormatError, match="ptr"):
        RankingDataset(X, y, [0, 5])
    with pytest.raises(DataFormatError, match="qid must have shape"):
        from_arrays(X, y, qid[:-1])
    with pytest.raises(DataFormatError, match="reappears"):
        from_arrays(X, y, np.r_[qid[8:], qid[:8]] % 2)


# ============================================================================ command line
def run(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
    out = capsys.readouterr()
    code = info.value.code
    return (0 if code is None else code), out.out, out.err


def assert_one_line_error(code, err, *fragments):
    assert code == 2, err
    assert err.startswith("ranklearn: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("hardening")
    content = {
        "ok": "1 qid:1 1:1 2:1\n0 qid:1 1:2 2:0\n2 qid:2 1:3 2:1\n0 qid:2 1:2 2:1\n1 qid:3 1:1 2:1\n0 qid:3 1:2 2:0\n",
        "three_features": "1 qid:1 1:1 2:1 3:1\n0 qid:1 1:2 2:0\n",
        "nan_feature": "1 qid:1 1:1 2:1\n0 qid:1 1:nan 2:1\n2 qid:2 1:3 2:1\n0 qid:2 1:2 2:1\n",
        "inf_feature": "1 qid:1 1:1 2:1\n0 qid:1 1:inf 2:1\n",
        "inf_label": "1 qid:1 1:1\ninf qid:1 1:2\n",
        "nan_label": "1 qid:1 1:1\nnan qid:1 1:2\n",
        "negative_label": "-1 qid:1 1:1 2:0\n0 qid:1 1:2 2:1\n",
        "text_label": "1 qid:1 1:1\nhigh qid:1 1:2\n",
        "empty": "",
        "comments_only": "# nothing here\n\n",
        "one_doc_queries": "1 qid:1 1:1 2:0\n0 qid:2 1:2 2:1\n2 qid:3 1:0 2:1\n",
        "no_relevant": "0 qid:1 1:1 2:0\n0 qid:1 1:2 2:1\n0 qid:2 1:0 2:1\n0 qid:2 1:3 2:1\n",
        "huge_qid": "1 qid:99999999999999999999 1:1 2:0\n0 qid:99999999999999999999 1:2 2:1\n",
        "huge_fid": "1 qid:1 1:1 1000000000:2\n0 qid:1 1:2\n",
        "reappearing": "1 qid:1 1:1\n0 qid:2 1:2\n0 qid:1 1:3\n",
        "binary": "\x00\x01\x02garbage\xff",
        "scores2": "0.1\n0.2\n",
        "scores6": "0.1\n0.2\n0.3\n0.4\n0.5\n0.6\n",
        "scores_bad": "0.1\nnan\n0.3\n0.4\n0.5\n0.6\n",
    }
    paths = {}
    for name, text in content.items():
        paths[name] = root / f"{name}.txt"
        paths[name].write_bytes(text.encode("latin-1"))
    paths["dir"] = root / "a_directory"
    paths["dir"].mkdir()
    paths["missing"] = root / "missing.txt"
    paths["root"] = root
    code = main_ok(["train", "--train", paths["ok"], "--model", "lambdamart", "--trees", "2", "--save", root / "m.json"])
    assert code == 0
    paths["model"] = root / "m.json"
    return paths


def main_ok(args) -> int:
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        return 0 if exc.code is None else exc.code
    return 0


@pytest.mark.parametrize(
    "name,fragments",
    [
        ("inf_feature", ["inf_feature.txt:2:", "infinite feature value"]),
        ("inf_label", ["inf_label.txt:2:", "label is not finite"]),
        ("nan_label", ["nan_label.txt:2:", "label is not finite"]),
        ("text_label", ["text_label.txt:2:", "bad label"]),
        ("empty", ["empty.txt", "no data lines"]),
        ("comments_only", ["comments_only.txt", "no data lines"]),
        ("binary", ["binary.txt:1:"]),
        ("missing", ["missing.txt", "No such file"]),
        ("dir", ["a_directory", "directory"]),
    ],
)
def test_cli_info_bad_files(capsys, files, name, fragments):
    assert_one_line_error(*run(capsys, "info", files[name])[::2], *fragments)


@pytest.mark.parametrize("name", ["nan_feature", "negative_label", "one_doc_queries", "no_relevant", "huge_qid", "huge_fid", "reappearing"])
def test_cli_info_accepts_odd_but_valid_files(capsys, files, name):
    code, out, err = run(capsys, "info", files[name])
    assert code == 0, err
    if name == "huge_fid":
        assert "1,000,000,000" in out  # read sparse: no giant matrix


def test_cli_info_unreadable_file(capsys, files, monkeypatch):
    import ranklearn.data.svmlight as svmlight_module

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(args[0]))

    monkeypatch.setattr(svmlight_module, "open", refuse, raising=False)
    assert_one_line_error(*run(capsys, "info", files["ok"])[::2], "ok.txt", "Permission denied")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_cli_info_unreadable_file_for_real(capsys, tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text("1 qid:1 1:1\n")
    path.chmod(0)
    assert_one_line_error(*run(capsys, "info", path)[::2], "secret.txt", "Permission denied")


@pytest.mark.parametrize(
    "data,scores,options,fragments",
    [
        ("negative_label", "scores2", [], ["negative_label.txt", ">= 0", "row 0"]),
        ("ok", "scores6", ["--metric", "foo"], ["unknown metric 'foo'"]),
        ("ok", "scores6", ["--metric", "ndcg@0"], ["ndcg@0", ">= 1"]),
        ("ok", "scores6", ["--metric", "ndcg@-3"], ["ndcg@-3"]),
        ("ok", "scores2", [], ["scores2.txt", "2 scores for 6 rows"]),
        ("ok", "scores_bad", [], ["scores_bad.txt:2:", "finite number"]),
        ("ok", "dir", [], ["a_directory", "directory"]),
        ("ok", "missing", [], ["missing.txt", "No such file"]),
        ("dir", "scores6", [], ["a_directory", "directory"]),
        ("reappearing", "scores6", ["--no-regroup"], ["reappearing.txt:3:", "reappears", "leave out --no-regroup"]),
        ("empty", "scores6", [], ["empty.txt", "no data lines"]),
    ],
)
def test_cli_evaluate_errors(capsys, files, data, scores, options, fragments):
    code, _, err = run(capsys, "evaluate", "--data", files[data], "--scores", files[scores], *options)
    assert_one_line_error(code, err, *fragments)


@pytest.mark.parametrize(
    "model,options,fragments",
    [
        ("lambdamart", ["--trees", "0"], ["--trees must be", "got 0"]),
        ("lambdamart", ["--trees", "-1"], ["--trees must be"]),
        ("lambdamart", ["--leaves", "1"], ["--leaves must be"]),
        ("lambdamart", ["--learning-rate", "nan"], ["--learning-rate must be"]),
        ("lambdamart", ["--metric", "bogus"], ["unknown metric"]),
        ("lambdamart", ["--metric", "ndcg@0"], [">= 1"]),
        ("lambdamart", ["--max-bins", "1000"], ["--max-bins must be"]),
        ("lambdamart", ["--threads", "0"], ["--threads must be"]),
        ("lambdamart", ["--early-stopping", "5"], ["--validate"]),
        ("lambdamart", ["--epochs", "3"], ["--epochs does not apply"]),
        ("ranknet", ["--epochs", "0"], ["epochs", "got 0"]),
        ("ranknet", ["--hidden", "0"], ["--hidden"]),
        ("ranknet", ["--dropout", "2"], ["dropout"]),
        ("ranknet", ["--trees", "3"], ["--trees does not apply"]),
    ],
)
def test_cli_train_bad_options(capsys, files, tmp_path, model, options, fragments):
    if model != "lambdamart" and not NEURAL:
        pytest.skip("torch not installed")
    save = tmp_path / "m.json"
    code, _, err = run(capsys, "train", "--train", files["ok"], "--model", model, "--save", save, *options)
    assert_one_line_error(code, err, *fragments)
    assert not save.exists()


@pytest.mark.parametrize(
    "train,extra,fragments",
    [
        ("inf_feature", [], ["inf_feature.txt:2:"]),
        ("empty", [], ["empty.txt"]),
        ("missing", [], ["missing.txt"]),
        ("dir", [], ["a_directory"]),
        ("huge_fid", [], ["huge_fid.txt:1:", "feature id 1,000,000,000"]),
        ("ok", ["--validate", "three_features"], ["3 features", "2"]),
        ("ok", ["--validate", "negative_label"], ["negative_label.txt", ">= 0"]),
        ("negative_label", [], ["negative_label.txt", ">= 0", "row 0"]),
        ("ok", ["--save-dir"], ["a_directory", "directory"]),
        ("ok", ["--save-nowhere"], ["no such directory"]),
    ],
)
def test_cli_train_bad_inputs(capsys, files, tmp_path, monkeypatch, train, extra, fragments):
    # bad input must be refused before any tree is grown
    monkeypatch.setattr(LambdaMART, "_begin_fit", lambda *a, **k: pytest.fail("training started on bad input"))
    args = ["train", "--train", files[train], "--model", "lambdamart", "--trees", "2"]
    if extra[:1] == ["--validate"]:
        args += ["--validate", files[extra[1]]]
    if extra == ["--save-dir"]:
        args += ["--save", files["dir"]]
    elif extra == ["--save-nowhere"]:
        args += ["--save", tmp_path / "no" / "such" / "m.json"]
    else:
        args += ["--save", tmp_path / "m.json"]
    code, _, err = run(capsys, *args)
    assert_one_line_error(code, err, *fragments)  # one line: also no progress bar
    assert not any(p.name.endswith(".tmp") for p in files["root"].iterdir())


@needs_torch
def test_cli_train_neural_rejects_nan(capsys, files, tmp_path):
    code, _, err = run(capsys, "train", "--train", files["nan_feature"], "--model", "ranknet", "--epochs", "1")
    assert_one_line_error(code, err, "NaN", "LambdaMART")


def test_cli_train_lambdamart_accepts_nan_and_degenerate_data(capsys, files, tmp_path):
    for name in ("nan_feature", "one_doc_queries", "no_relevant", "huge_qid"):
        code, _, err = run(capsys, "train", "--train", files[name], "--model", "lambdamart", "--trees", "2",
                           "--save", tmp_path / f"{name}.json")  # fmt: skip
        assert code == 0, (name, err)


@pytest.mark.parametrize(
    "model,data,out,fragments",
    [
        ("model", "three_features", "out", ["three_features.txt:1:", "feature 3 is beyond", "trained on 2"]),
        ("model", "inf_feature", "out", ["inf_feature.txt:2:"]),
        ("model", "missing", "out", ["missing.txt"]),
        ("model", "ok", "dir", ["a_directory", "directory"]),
        ("model", "ok", "nowhere", ["no such directory"]),
        ("ok", "ok", "out", ["ok.txt", "not a ranklearn model file"]),
        ("binary", "ok", "out", ["binary.txt", "not a ranklearn model file"]),
        ("missing", "ok", "out", ["missing.txt", "No such file"]),
        ("dir", "ok", "out", ["a_directory", "directory"]),
    ],
)
def test_cli_predict_errors(capsys, files, tmp_path, model, data, out, fragments):
    target = {"out": tmp_path / "s.txt", "dir": files["dir"], "nowhere": tmp_path / "no" / "s.txt"}[out]
    code, _, err = run(capsys, "predict", "--model", files[model], "--data", files[data], "--out", target)
    assert_one_line_error(code, err, *fragments)
    assert not (tmp_path / "s.txt").exists()


def test_cli_export_to_a_directory(capsys, files):
    code, _, err = run(capsys, "export", "--model", files["model"], "--format", "ranklib", "--out", files["dir"])
    assert_one_line_error(code, err, "a_directory", "directory")


def test_cli_out_of_memory_is_one_line(capsys, files, monkeypatch):
    import ranklearn.cli._common as common

    def boom(*args, **kwargs):
        raise MemoryError("Unable to allocate 373. GiB for an array with shape (100, 1000000000)")

    monkeypatch.setattr(common, "load_data", boom)
    assert_one_line_error(*run(capsys, "info", files["ok"])[::2], "out of memory", "373. GiB")


def test_console_script_never_prints_a_traceback(files):
    """The real entry point, in a subprocess: a few representative failures."""
    cases = [
        ["info", files["huge_fid"].parent / "nope.txt"],
        ["train", "--train", files["huge_fid"], "--model", "lambdamart", "--trees", "1"],
        ["evaluate", "--data", files["negative_label"], "--scores", files["scores2"]],
    ]
    for args in cases:
        proc = subprocess.run([RANKLEARN, *map(str, args)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("ranklearn: error: "), proc.stderr
        assert "Traceback" not in proc.stderr


# ============================================================================ model files
@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    X, y, qid = small_data(n_queries=10, docs=12)
    path = tmp_path_factory.mktemp("model") / "model.json"
    save_svmlight(from_arrays(X, y, qid), path.with_name("data.txt"))
    LambdaMART(n_estimators=4, num_leaves=4, min_samples_leaf=3, random_state=0).fit(X, y, qid=qid).save(path)
    return path


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
    elif how == "unknown_model_type":
        env = json.loads(raw)
        env["model_type"] = "gbdt-9000"
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


def test_model_file_of_another_type(model_path, tmp_path):
    if not NEURAL:
        pytest.skip("torch not installed")
    with pytest.raises(ModelFormatError, match="model_type 'lambdamart'"):
        NEURAL[0].load(model_path)


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_crash_during_write_keeps_the_previous_file(model_path, tmp_path, monkeypatch, where):
    target = tmp_path / "model.json"
    target.write_bytes(model_path.read_bytes())
    before = target.read_bytes()
    model = LambdaMART.load(model_path)
    model.trees_ = model.trees_[:1]  # a different model, so a half-written file would show

    class Crash(RuntimeError):
        pass

    def crash(*args, **kwargs):
        raise Crash(where)

    if where == "replace":
        monkeypatch.setattr(F.os, "replace", crash)
    elif where == "fsync":
        monkeypatch.setattr(F.os, "fsync", crash)
    else:
        real_fdopen = os.fdopen

        class HalfWriter:
            def __init__(self, fh):
                self.fh = fh

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()

            def write(self, data):
                self.fh.write(data[: len(data) // 2])
                raise Crash("disk full")

            def __getattr__(self, name):
                return getattr(self.fh, name)

        monkeypatch.setattr(F.os, "fdopen", lambda fd, mode: HalfWriter(real_fdopen(fd, mode)))
    with pytest.raises(Crash):
        model.save(target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json"], "a temporary file was left behind"
    assert len(load_model(target).trees_) == 4


def test_keyboard_interrupt_during_write_leaves_no_temp_file(model_path, tmp_path, monkeypatch):
    target = tmp_path / "model.json"

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(F.os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        LambdaMART.load(model_path).save(target)
    assert list(tmp_path.iterdir()) == []


def test_write_errors_name_the_target_not_the_temp_file(model_path, tmp_path):
    model = LambdaMART.load(model_path)
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        model.save(tmp_path / "d")
    assert info.value.filename == str(tmp_path / "d")
    with pytest.raises(FileNotFoundError) as info:
        model.save(tmp_path / "nowhere" / "m.json")
    assert info.value.filename == str(tmp_path / "nowhere" / "m.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_save_and_load_round_trip_is_exact(model_path, tmp_path):
    X, _, _ = small_data(n_queries=10, docs=12)
    model = LambdaMART.load(model_path)
    model.save(tmp_path / "again.json")
    np.testing.assert_array_equal(load_model(tmp_path / "again.json").predict(X), model.predict(X))


# ================================================================== Ctrl-C during training
def _interrupt_training(tmp_path: Path, data: Path, model: str, options: list[str]) -> tuple[int, str, Path]:
    """Run ``ranklearn train`` with stderr on a pseudo-terminal (so the progress bar draws as
    for a user), send SIGINT once it shows the first finished iteration, and return
    (exit status, everything printed on stderr, the --save path)."""
    import pty
    import select

    save = tmp_path / f"{model}.json"
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [RANKLEARN, "train", "--train", data, "--model", model, "--save", save, *options],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env={**os.environ, "COLUMNS": "200"},
        # A runner started in the background may ignore SIGINT, and children inherit that
        # (Python then installs no KeyboardInterrupt handler): give the child the default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                seen += os.read(master, 65536)
            if re.search(rb"\b[1-9]\d*/\d+", seen):  # "1/2000": a first iteration is done
                break
        assert proc.poll() is None, f"training ended before the interrupt: {seen[-500:]!r}"
        proc.send_signal(signal.SIGINT)
        # Keep draining the terminal while the child shuts down: a full pty buffer would
        # block its last writes (progress bar, message) and deadlock the test.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the other side is closed
                    chunk = b""
                seen += chunk
                if chunk:
                    continue
            if proc.poll() is not None and not ready:
                break
            if proc.poll() is not None and ready and not chunk:
                break
        proc.stdout.read()
        proc.wait(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return proc.returncode, seen.decode("utf-8", "replace"), save


@pytest.fixture(scope="module")
def slow_training_file(tmp_path_factory):
    """Enough data that 2000 trees or epochs take minutes, so training is surely interrupted."""
    from ranklearn.datasets import make_ranking

    path = tmp_path_factory.mktemp("sigint") / "train.txt"
    save_svmlight(make_ranking(n_queries=150, n_features=10, docs_per_query=(40, 40), random_state=0), path)
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal and SIGINT")
@pytest.mark.parametrize(
    "model,options",
    [
        ("lambdamart", ["--trees", "2000"]),
        pytest.param("ranknet", ["--epochs", "2000", "--hidden", "16"], marks=needs_torch),
    ],
)
def test_ctrl_c_saves_the_best_model_so_far(tmp_path, slow_training_file, model, options):
    code, stderr, save = _interrupt_training(tmp_path, slow_training_file, model, [*options, "--validate", slow_training_file])
    assert code == 130, stderr[-1000:]
    assert f"ranklearn: interrupted; saved the best model so far to {save}" in stderr
    assert "Traceback" not in stderr
    estimator = load_model(save)
    assert estimator.best_iteration_ is not None and estimator.best_iteration_ >= 1
    ds = load_svmlight(slow_training_file)
    assert np.isfinite(estimator.predict(ds.X)).all()
    assert [p.name for p in tmp_path.iterdir()] == [save.name], "a temporary file was left behind"


def test_ctrl_c_while_loading_data_says_so(capsys, files, monkeypatch, tmp_path):
    import ranklearn.cli._common as common

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(common, "load_data", interrupted)
    code, _, err = run(capsys, "train", "--train", files["ok"], "--model", "lambdamart", "--save", tmp_path / "m.json")
    assert code == 130
    assert err == "ranklearn: interrupted while loading data; nothing trained, nothing saved\n"
    assert list(tmp_path.iterdir()) == []
