"""``ranklearn train`` built from the registry: objectives, losses, exports, Ctrl-C on any ranker."""

from __future__ import annotations

import numpy as np
import pytest
from test_cli import run, small_files  # noqa: F401  (fixture)

from ranklearn.data import load_svmlight
from ranklearn.io import load_model


def test_objective_option_trains_the_chosen_objective(capsys, tmp_path, small_files):  # noqa: F811
    model = tmp_path / "mart.json"
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--trees", "5",
                         "--objective", "squared_error", "--save", model)  # fmt: skip
    assert code == 0, err
    saved = load_model(model)
    assert saved.objective == "squared_error" and saved.objective_["name"] == "squared_error"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--objective", "nope")
    assert code == 2 and "objective" in err and "squared_error" in err


def test_loss_option_trains_a_listwise_loss(capsys, tmp_path, small_files):  # noqa: F811
    pytest.importorskip("torch")
    model = tmp_path / "nn.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                       "--model", "ranknet", "--loss", "listmle", "--epochs", "2", "--hidden", "4", "--networks", "1",
                       "--seed", "0", "--save", model)  # fmt: skip
    assert code == 0, err
    saved = load_model(model)
    assert saved.loss == "listmle"
    # the bar says where it stopped and which epoch was kept (early stopping "auto" keeps the best)
    assert f"ranknet: ran all 2 epochs; kept epoch {saved.best_iteration_} (best: validate ndcg@10=" in err
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "ranknet", "--loss", "hinge")
    assert code == 2 and "--loss must be one of" in err


@pytest.mark.parametrize("fmt", ["lightgbm", "ranklib", "onnx"])
def test_export_formats(capsys, tmp_path, small_files, fmt):  # noqa: F811
    name = "ranknet" if fmt == "onnx" else "lambdamart"
    if fmt == "onnx":
        pytest.importorskip("onnxruntime")
        options = ["--epochs", "2", "--hidden", "4", "--networks", "1", "--seed", "0"]
    else:
        pytest.importorskip("lightgbm")
        options = ["--trees", "5", "--seed", "0"]
    model, out = tmp_path / "m.json", tmp_path / f"m.{fmt}"
    assert run(capsys, "train", "--train", small_files["train"], "--model", name, *options, "--save", model)[0] == 0
    code, _, err = run(capsys, "export", "--model", model, "--format", fmt, "--out", out)
    assert code == 0, err
    X = load_svmlight(small_files["test"]).X
    expected = load_model(model).predict(X)
    if fmt == "lightgbm":
        import lightgbm

        np.testing.assert_allclose(lightgbm.Booster(model_file=str(out)).predict(X), expected, rtol=0, atol=1e-6)
    elif fmt == "onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
        got = session.run(None, {"features": X.astype(np.float32)})[0]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    else:
        assert out.read_text().startswith("## LambdaMART")


def test_export_refuses_the_wrong_kind_of_model_in_one_line(capsys, tmp_path, small_files):  # noqa: F811
    pytest.importorskip("onnxscript")
    model = tmp_path / "m.json"
    assert run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--trees", "2", "--save", model)[0] == 0
    code, _, err = run(capsys, "export", "--model", model, "--format", "onnx", "--out", tmp_path / "m.onnx")
    assert code == 2 and err.count("\n") == 1 and "neural rankers" in err
    assert not (tmp_path / "m.onnx").exists()


def test_ctrl_c_before_the_first_epoch_saves_nothing(capsys, tmp_path, small_files, monkeypatch):  # noqa: F811
    pytest.importorskip("torch")
    import ranklearn.cli._train as train_cli
    from ranklearn.models import RankNet

    class Interrupted(RankNet):
        def _fit_step(self, iteration):
            raise KeyboardInterrupt

    monkeypatch.setattr(train_cli, "model_class", lambda name: Interrupted)
    model = tmp_path / "nn.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "ranknet", "--save", model)
    assert code == 130
    assert err.strip().splitlines()[-1] == (
        "ranklearn: interrupted before the first iteration finished; nothing trained, nothing saved"
    )
    assert not model.exists()
