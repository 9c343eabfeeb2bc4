"""Tests of ranklearn.io.onnx: exported RankNet / LambdaRank scored by onnxruntime equal predict."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
ort = pytest.importorskip("onnxruntime")

from sklearn.exceptions import NotFittedError  # noqa: E402

from ranklearn.datasets import make_ranking  # noqa: E402
from ranklearn.io.onnx import INPUT_NAME, OUTPUT_NAME, export_onnx  # noqa: E402
from ranklearn.models import LambdaRank, RankNet  # noqa: E402

CONFIGS = [
    (RankNet, (), 1),
    (LambdaRank, (), 5),
    (RankNet, (64, 32), 5),
    (LambdaRank, (64, 32), 1),
]


def queries(n_queries, n_features, seed):
    return make_ranking(n_queries, n_features, n_informative=4, random_state=seed, return_X_y=True)


def onnx_scores(path, X):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (out,) = sess.run([OUTPUT_NAME], {INPUT_NAME: np.ascontiguousarray(X, dtype=np.float32)})
    return out


def assert_same_scores(path, model, X):
    got = onnx_scores(path, X)
    assert got.dtype == np.float32 and got.shape == (X.shape[0],)
    np.testing.assert_allclose(got, model.predict(X), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cls,hidden,n_networks", CONFIGS)
def test_onnx_scores_equal_predict_on_synthetic_data(tmp_path, cls, hidden, n_networks):
    X, y, q = queries(40, 10, 1)
    model = cls(hidden=hidden, n_networks=n_networks, n_estimators=3, random_state=0).fit(X, y, q)
    path = tmp_path / "model.onnx"
    export_onnx(model, path)
    assert_same_scores(path, model, X)
    # any number of rows, and inputs far from the training data
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 1000):
        assert_same_scores(path, model, (rng.normal(size=(n, 10)) * 50).astype(np.float32))


def test_onnx_graph_has_a_dynamic_row_dimension_and_metadata(tmp_path):
    import onnx

    X, y, q = queries(20, 6, 2)
    model = LambdaRank(hidden=(8,), n_networks=2, n_estimators=1, random_state=0).fit(X, y, q)
    export_onnx(model, tmp_path / "m.onnx")
    proto = onnx.load(str(tmp_path / "m.onnx"))
    onnx.checker.check_model(proto)
    (inp,), (out,) = proto.graph.input, proto.graph.output
    dims = [d.dim_param or d.dim_value for d in inp.type.tensor_type.shape.dim]
    assert inp.name == INPUT_NAME and dims == ["n_rows", 6]
    assert out.name == OUTPUT_NAME and [d.dim_param for d in out.type.tensor_type.shape.dim] == ["n_rows"]
    assert {p.key: p.value for p in proto.metadata_props} == {"ranklearn_model_type": "lambdarank", "n_features": "6"}


def test_onnx_export_of_unstandardized_dropout_model_and_reloaded_model(tmp_path):
    """No standardization, dropout (off in the graph), and a model read back from its file."""
    X, y, q = queries(30, 7, 3)
    model = RankNet(hidden=(16,), n_networks=3, dropout=0.3, standardize=False, n_estimators=2, random_state=0)
    model.fit(X, y, q)
    export_onnx(model, tmp_path / "a.onnx")
    assert_same_scores(tmp_path / "a.onnx", model, X)
    model.save(tmp_path / "m.json")
    loaded = RankNet.load(tmp_path / "m.json")
    export_onnx(loaded, tmp_path / "b.onnx")
    assert_same_scores(tmp_path / "b.onnx", model, X)


def test_export_leaves_the_model_unchanged(tmp_path):
    X, y, q = queries(20, 5, 4)
    model = RankNet(hidden=(4,), n_networks=2, n_estimators=1, random_state=0).fit(X, y, q)
    before = model.predict(X)
    model.model_.train()  # a scorer left in training mode stays so; its copy is exported in eval mode
    export_onnx(model, tmp_path / "m.onnx")
    assert model.model_.training
    model.model_.eval()
    np.testing.assert_array_equal(model.predict(X), before)


def test_export_writes_atomically_and_names_a_bad_path(tmp_path):
    X, y, q = queries(20, 5, 5)
    model = RankNet(hidden=(), n_networks=1, n_estimators=1, random_state=0).fit(X, y, q)
    target = tmp_path / "m.onnx"
    target.write_bytes(b"old")
    export_onnx(model, target)
    assert target.read_bytes() != b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
    assert_same_scores(target, model, X)
    missing = tmp_path / "no-such-dir" / "m.onnx"
    with pytest.raises(FileNotFoundError, match="no-such-dir"):
        export_onnx(model, missing)
    with pytest.raises(IsADirectoryError):
        export_onnx(model, tmp_path)


def test_export_refuses_other_models_and_unfitted_ones(tmp_path):
    from ranklearn.models.lambdamart import LambdaMART

    with pytest.raises(TypeError, match=r"neural rankers \(ranknet, lambdarank, listnet\), not LambdaMART"):
        export_onnx(LambdaMART(), tmp_path / "m.onnx")
    with pytest.raises(NotFittedError, match="LambdaRank is not fitted"):
        export_onnx(LambdaRank(), tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()


@pytest.mark.parametrize("cls,hidden,n_networks", CONFIGS)
def test_onnx_scores_equal_predict_on_mq2008(shared_data, tmp_path, cls, hidden, n_networks):
    from ranklearn.data import load_svmlight

    fold = shared_data / "MQ2008" / "Fold1"
    train, test = load_svmlight(fold / "train.txt"), load_svmlight(fold / "test.txt")
    model = cls(hidden=hidden, n_networks=n_networks, n_estimators=1, batch_queries=64, random_state=0)
    model.fit(train.X, train.y, train.qid)
    export_onnx(model, tmp_path / "m.onnx")
    assert_same_scores(tmp_path / "m.onnx", model, test.X)
