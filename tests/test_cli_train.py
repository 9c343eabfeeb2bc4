"""ranklearn train: bad options and inputs refused before training; Ctrl-C keeps the best model."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import typer

from ranklearn.data import from_arrays, load_svmlight, save_svmlight
from ranklearn.io import load_model
from ranklearn.models import LambdaMART
from ranklearn.registry import REGISTRY
from _helpers import NEURAL, RANKLEARN, assert_one_line_error, needs_torch, ranker_class, run
from test_cli import small_files  # noqa: F401  (fixture)


@pytest.mark.parametrize(
    "model,options,fragments",
    [
        ("lambdamart", ["--n-estimators", "0"], ["--n-estimators must be", "got 0"]),
        ("lambdamart", ["--n-estimators", "-1"], ["--n-estimators must be"]),
        ("lambdamart", ["--leaves", "1"], ["--leaves must be"]),
        ("lambdamart", ["--learning-rate", "nan"], ["--learning-rate must be"]),
        ("lambdamart", ["--metric", "bogus"], ["unknown metric"]),
        ("lambdamart", ["--metric", "ndcg@0"], [">= 1"]),
        ("lambdamart", ["--max-bins", "1000"], ["--max-bins must be"]),
        ("lambdamart", ["--threads", "0"], ["--threads must be"]),
        ("lambdamart", ["--early-stopping", "5"], ["--validate"]),
        ("lambdamart", ["--hidden", "3"], ["--hidden does not apply"]),
        ("ranknet", ["--n-estimators", "0"], ["--n-estimators must be", "got 0"]),
        ("ranknet", ["--hidden", "0"], ["--hidden"]),
        ("ranknet", ["--dropout", "2"], ["dropout"]),
        ("ranknet", ["--leaves", "3"], ["--leaves does not apply"]),
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
        ("ok", ["--validate", "three_features"], ["three_features.txt:1:", "feature 3 is beyond", "(2)"]),
        ("ok", ["--validate", "negative_label"], ["negative_label.txt", ">= 0"]),
        ("ok", ["--save-dir"], ["a_directory", "directory"]),
        ("ok", ["--save-nowhere"], ["no such directory"]),
    ],
)
def test_cli_train_bad_inputs(capsys, files, tmp_path, monkeypatch, train, extra, fragments):
    # bad input must be refused before any tree is grown
    monkeypatch.setattr(LambdaMART, "_begin_fit", lambda *a, **k: pytest.fail("training started on bad input"))
    args = ["train", "--train", files[train], "--model", "lambdamart", "--n-estimators", "2"]
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
    code, _, err = run(capsys, "train", "--train", files["nan_feature"], "--model", "ranknet", "--n-estimators", "1")
    assert_one_line_error(code, err, "nan_feature.txt:2: feature 1 is NaN", "lambdamart")


def test_cli_train_lambdamart_accepts_nan_and_degenerate_data(capsys, files, tmp_path):
    for name in ("nan_feature", "one_doc_queries", "no_relevant", "huge_qid"):
        code, _, err = run(capsys, "train", "--train", files[name], "--model", "lambdamart", "--n-estimators", "2",
                           "--save", tmp_path / f"{name}.json")  # fmt: skip
        assert code == 0, (name, err)


# --- Ctrl-C during training --------------------------------------------------------------------
def _interrupt_training(
    tmp_path: Path, data: Path, model: str, options: list[str], *, delay: float = 0.0, process_group: bool = False
) -> tuple[int, str, Path]:
    """Run ``ranklearn train`` with stderr on a pseudo-terminal (so the progress bar draws as
    for a user), send SIGINT ``delay`` seconds after it shows the first finished iteration (to
    its whole process group with ``process_group``, as a terminal's Ctrl-C), and return
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
        preexec_fn=lambda: (process_group and os.setsid(), signal.signal(signal.SIGINT, signal.SIG_DFL)),
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
        time.sleep(delay)
        if process_group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
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
        ("lambdamart", ["--n-estimators", "2000"]),
        pytest.param("ranknet", ["--n-estimators", "2000", "--hidden", "16"], marks=needs_torch),
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


def test_ctrl_c_anywhere_else_is_one_line_and_status_130(capsys, files, monkeypatch):
    # typer turns a KeyboardInterrupt no command handles into a silent exit 130 (it happened
    # while a command set itself up, before its data were read)
    import ranklearn.cli._train as train_cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_cli, "model_class", interrupted)
    code, out, err = run(capsys, "train", "--train", files["ok"], "--model", "lambdamart")
    assert (code, out, err) == (130, "", "ranklearn: interrupted\n")


def test_ctrl_c_while_the_command_line_loads_is_one_line(capsys, monkeypatch):
    # the console script imported ranklearn.cli.main (numba: half a second) where nothing
    # could catch a Ctrl-C: Python printed the import's traceback
    import importlib.abc

    from ranklearn.cli import run as entry_point

    class Interrupting(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "ranklearn.cli.main":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "ranklearn.cli.main")
    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    with pytest.raises(SystemExit) as info:
        entry_point()
    assert info.value.code == 130
    assert capsys.readouterr().err == "ranklearn: interrupted\n"


def test_ctrl_c_after_the_command_ended_leaves_its_status(monkeypatch):
    # a Ctrl-C while Python shut down, after the command's table (a Dask cluster's threads), made
    # the status -2 (killed by SIGINT) with no line: once main has returned it is ignored
    import ranklearn.cli.main as cli_main
    from ranklearn.cli import run as entry_point

    def ended():
        sys.exit(0)

    monkeypatch.setattr(cli_main, "main", ended)
    monkeypatch.setattr(signal, "signal", lambda signum, handler: calls.append((signum, handler)))
    calls = []
    with pytest.raises(SystemExit):
        entry_point()
    assert calls == [(signal.SIGINT, signal.SIG_IGN)]


# --- options from the registry, exports ---------------------------------------------------------
def test_objective_option_trains_the_chosen_objective(capsys, tmp_path, small_files):
    model = tmp_path / "mart.json"
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--n-estimators", "5",
                         "--objective", "squared_error", "--save", model)  # fmt: skip
    assert code == 0, err
    saved = load_model(model)
    assert saved.objective == "squared_error" and saved.objective_["name"] == "squared_error"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--objective", "nope")
    assert code == 2 and "objective" in err and "squared_error" in err


def test_train_help_is_readable_at_80_columns(capsys, monkeypatch):
    # rich's four columns left train's help a word a line at 80 (its option names are long)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "train", "--help")
    assert code == 0
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80 and "\\[" not in out
    model = next(i for i, line in enumerate(lines) if line.lstrip().startswith("--model"))
    assert "Which ranker to train. One of: lambdamart," in lines[model]
    assert "random-forest" in " ".join(lines[model : model + 4])
    described = [line for line in lines if len(line) > 40 and not line[:34].strip()]  # help column continuations
    words = sorted(len(line.split()) for line in described)
    assert words[len(words) // 2] >= 5, described[:5]  # not a word or two a line


def test_a_metric_named_in_capitals_is_one_column(capsys, small_files):
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--n-estimators", "2",
                         "--metric", "NDCG@10")  # fmt: skip
    assert code == 0, err
    header = next(line for line in out.splitlines() if "@10" in line.lower())
    assert header.lower().count("ndcg@10") == 1, out  # it was "ndcg@10 ┃ NDCG@10"


def test_loss_option_trains_a_listwise_loss(capsys, tmp_path, small_files):
    pytest.importorskip("torch")
    model = tmp_path / "nn.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                       "--model", "ranknet", "--loss", "listmle", "--n-estimators", "2", "--hidden", "4", "--networks", "1",
                       "--seed", "0", "--save", model)  # fmt: skip
    assert code == 0, err
    saved = load_model(model)
    assert saved.loss == "listmle"
    # the bar says where it stopped and which epoch was kept (early stopping "auto" keeps the best)
    assert f"ranknet: ran all 2 epochs; kept epoch {saved.best_iteration_} (best: validate ndcg@10=" in err
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "ranknet", "--loss", "hinge")
    assert_one_line_error(code, err, "Invalid value for '--loss': 'hinge' is not one of 'ranknet', 'lambdarank', ")


@pytest.mark.parametrize("fmt", ["lightgbm", "ranklib", "onnx"])
def test_export_formats(capsys, tmp_path, small_files, fmt):
    name = "ranknet" if fmt == "onnx" else "lambdamart"
    if fmt == "onnx":
        pytest.importorskip("onnxruntime")
        options = ["--n-estimators", "2", "--hidden", "4", "--networks", "1", "--seed", "0"]
    else:
        pytest.importorskip("lightgbm")
        options = ["--n-estimators", "5", "--seed", "0"]
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


def test_export_refuses_the_wrong_kind_of_model_in_one_line(capsys, tmp_path, small_files):
    pytest.importorskip("onnxscript")
    model = tmp_path / "m.json"
    assert run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--n-estimators", "2", "--save", model)[0] == 0
    code, _, err = run(capsys, "export", "--model", model, "--format", "onnx", "--out", tmp_path / "m.onnx")
    assert code == 2 and err.count("\n") == 1 and "neural rankers" in err
    assert not (tmp_path / "m.onnx").exists()


def test_export_names_the_formats_and_extras_in_one_line(capsys, tmp_path, small_files, monkeypatch):
    pytest.importorskip("torch")
    model = tmp_path / "m.json"
    assert run(capsys, "train", "--train", small_files["train"], "--model", "adarank", "--save", model)[0] == 0
    code, _, err = run(capsys, "export", "--model", model, "--format", "ranklib", "--out", tmp_path / "m.txt")
    assert_one_line_error(code, err, "RankLib's format holds lambdamart, mart, linear, coordinate-ascent", "adarank")
    neural = tmp_path / "n.json"
    assert run(capsys, "train", "--train", small_files["train"], "--model", "listnet", "--n-estimators", "1",
               "--save", neural)[0] == 0  # fmt: skip
    monkeypatch.setitem(sys.modules, "onnx", None)  # as without the onnx extra: `import onnx` fails
    code, _, err = run(capsys, "export", "--model", neural, "--format", "onnx", "--out", tmp_path / "n.onnx")
    assert_one_line_error(code, err, "ONNX export needs the 'onnx' package")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "n.json"]


def test_ctrl_c_before_the_first_epoch_saves_nothing(capsys, tmp_path, small_files, monkeypatch):
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


def test_save_to_stdout_keeps_stdout_for_the_model(capsys, tmp_path, small_files):
    import json

    code, out, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--n-estimators", "3",
                         "--save", "-")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["model_type"] == "lambdamart"  # the whole of stdout is the model file
    assert "metrics on each set" in err


def test_no_regroup_refuses_a_reappearing_qid(capsys, tmp_path, small_files):
    lines = small_files["train"].read_text().splitlines(keepends=True)
    first = lines[0].split()[1]
    rest = [ln for ln in lines if ln.split()[1] != first]
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("".join(lines[:1] + rest + lines[1:2]))  # the first qid comes back at the end
    assert lines[1].split()[1] == first
    code, _, err = run(capsys, "train", "--train", mixed, "--model", "lambdamart", "--n-estimators", "2", "--no-regroup")
    assert code == 2 and "mixed.txt" in err and "reappears" in err
    code, _, err = run(capsys, "train", "--train", mixed, "--model", "lambdamart", "--n-estimators", "2")
    assert code == 0 and "warning" in err and "merged" in err


def test_values_the_model_cannot_take_are_named_by_file_and_row(capsys, tmp_path, monkeypatch):
    import io

    pytest.importorskip("torch")
    data = tmp_path / "nan.txt"
    data.write_text("# a comment line\n1 qid:1 1:0.5 2:0.1\n0 qid:2 1:0.1 2:0.2\n1 qid:1 1:0.3 2:nan\n")
    code, _, err = run(capsys, "train", "--train", data, "--model", "ranknet", "--n-estimators", "1")
    # qid 1 reappears and is regrouped; the line is still the file's fourth
    assert err.strip().splitlines()[-1].startswith(f"ranklearn: error: {data}:4: feature 2 is NaN (missing)"), err
    assert code == 2 and "ranknet does not accept missing values" in err
    gap = tmp_path / "gap.txt"  # predict with a model that takes no NaN: the line of the bad row
    gap.write_text("1 qid:1 1:0.5 2:0.1\n\n0 qid:1 1:0.1 2:nan\n")
    from ranklearn.models import LinearRegression

    LinearRegression().fit(np.array([[0.0, 1.0], [1.0, 0.0]]), [0, 1], qid=[1, 1]).save(tmp_path / "lin.json")
    code, _, err = run(capsys, "predict", "--model", tmp_path / "lin.json", "--data", gap, "--out", tmp_path / "s.txt")
    assert_one_line_error(code, err, f"{gap}:3: feature 2 is NaN (missing); linear does not accept missing values")
    negative = tmp_path / "negative.txt"
    negative.write_text("1 qid:1 1:0.5\n-1 qid:1 1:0.1\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(negative.read_bytes())))
    code, _, err = run(capsys, "train", "--train", "-", "--model", "lambdamart", "--n-estimators", "1")  # standard input is <stdin>
    assert_one_line_error(code, err, "<stdin>:2: labels must be >= 0", "got -1")
    code, _, err = run(capsys, "train", "--train", data, "--model", "lambdamart", "--n-estimators", "1")
    assert code == 0, err  # LambdaMART learns where NaN goes


def test_parameter_names_in_messages_become_the_options_as_typed():
    from ranklearn.cli._train import option_message

    assert (option_message("device='cuda' but CUDA is not available here; use device='cpu'", "ranknet")
            == "--device 'cuda' but CUDA is not available here; use --device 'cpu'")  # fmt: skip
    assert option_message("early_stopping_rounds=5 needs an evaluation set", "lambdamart") == (
        "--early-stopping 5 needs an evaluation set"
    )
    assert option_message("The 'n_estimators' parameter of MART must be an int in the range [1, inf). Got 0 instead.",
                          "mart") == "--n-estimators must be an int in the range [1, inf); got 0"  # fmt: skip
    assert option_message("x_device=1 is not a parameter name", "ranknet") == "x_device=1 is not a parameter name"
    assert option_message("sigma must be > 0 with device='cpu'", "ranknet") == "--sigma must be > 0 with --device 'cpu'"
    assert option_message("pass it again as sigma= to train", "ranknet") == "pass it again as sigma= to train"
    # scikit-learn's constraints list Python objects no option value can be: only the values one can type
    for message, expected in [
        ("The 'n_jobs' parameter of LambdaMART must be an int in the range [1, inf), a int among {-1} or None. Got 0 "
         "instead.", "--threads must be an int in the range [1, inf) or -1; got 0"),
        ("The 'random_state' parameter of LambdaMART must be an int in the range [0, 4294967295], an instance of "
         "'numpy.random.mtrand.RandomState' or None. Got -1 instead.",
         "--seed must be an int in the range [0, 4294967295]; got -1"),
        ("The 'objective' parameter of LambdaMART must be a str among {'xendcg', 'ranknet', 'lambdarank'}, an object "
         "implementing 'gradients' or None. Got 'x' instead.",
         "--objective must be one of 'lambdarank', 'ranknet', 'xendcg'; got 'x'"),
    ]:  # fmt: skip
        assert option_message(message, "lambdamart") == expected
    # --early-stopping takes whole numbers and 'auto' (every ranker takes both)
    assert option_message("The 'early_stopping_rounds' parameter of MART must be an int in the range [1, inf), a str "
                          "among {'auto'} or None. Got 0 instead.", "mart") == (
        "--early-stopping must be an int in the range [1, inf) or 'auto'; got 0")  # fmt: skip


def test_a_librarys_warning_is_one_line(capsys, tmp_path):
    # RankLib export of a model that learned where NaN goes: Python printed "file:line: UserWarning"
    # and the source line
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    X[rng.random(300) < 0.3, 0] = np.nan
    y = (np.nan_to_num(X[:, 0], nan=2.0) > 0).astype(float) + (X[:, 1] > 0)
    LambdaMART(n_estimators=5, min_samples_leaf=5).fit(X, y, qid=np.repeat(np.arange(30), 10)).save(tmp_path / "m.json")
    code, out, err = run(capsys, "export", "--model", tmp_path / "m.json", "--format", "ranklib", "--out", tmp_path / "m.rl")
    assert code == 0 and "wrote" in out
    assert err.startswith("ranklearn: warning: the model was trained with missing values") and err.count("\n") == 1, err


@pytest.mark.parametrize("model, options", [("mart", ["--n-estimators", "3"]), ("linear", []), ("ranknet", ["--n-estimators", "1"])])
def test_rankers_that_take_any_label_train_on_negative_labels(capsys, tmp_path, model, options):
    # the metric decides what it can score, not the command: the ranker trains, NDCG is n/a on that set only
    if model == "ranknet" and not NEURAL:
        pytest.skip("torch not installed")
    train = tmp_path / "train.txt"
    train.write_text("2 qid:1 1:0.9\n-1 qid:1 1:0.1\n0 qid:1 1:0.5\n1 qid:2 1:0.7\n-1 qid:2 1:0.2\n")
    test = tmp_path / "test.txt"
    test.write_text("1 qid:7 1:0.8\n0 qid:7 1:0.3\n")
    code, out, err = run(capsys, "train", "--train", train, "--test", test, "--model", model, "--save",
                         tmp_path / "m.json", *options)  # fmt: skip
    assert code == 0, err
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.splitlines() if line.count("│") == 3}
    assert rows["train"] == "n/a" and 0 <= float(rows["test"]) <= 1, out  # the test set's labels suit NDCG
    # the file's line as the user looks it up (it said "row 1", 0-based)
    assert f"ndcg@10 not computed on train: labels must be finite and >= 0; {train} line 2 has -1" in out
    assert load_model(tmp_path / "m.json").n_iter_ >= 1


def test_predict_and_export_with_part_of_the_model(capsys, tmp_path, small_files):  # noqa: F811
    lightgbm = pytest.importorskip("lightgbm")
    save = tmp_path / "m.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                       "--model", "lambdamart", "--n-estimators", "30", "--learning-rate", "0.5", "--leaves", "15",
                       "--seed", "0", "--save", save)  # fmt: skip
    assert code == 0, err
    model = load_model(save)
    # the progress line says what the model keeps, and it is best_iteration_
    assert f"kept tree {model.best_iteration_} (best: validate ndcg@10=" in err
    assert len(model.trees_) == model.best_iteration_ < model.n_iter_ == 30  # ran all 30, kept the best
    X = load_svmlight(small_files["test"], n_features=model.n_features_in_).X
    outs = {}
    for name, extra in {"default": [], "best": ["--best"], "first3": ["--iterations", "3"]}.items():
        outs[name] = tmp_path / f"{name}.scores"
        code, _, err = run(capsys, "predict", "--model", save, "--data", small_files["test"], "--out", outs[name], *extra)
        assert code == 0, err
    read = {name: np.loadtxt(path) for name, path in outs.items()}
    np.testing.assert_array_equal(read["default"], model.predict(X))
    np.testing.assert_array_equal(read["best"], read["default"])
    np.testing.assert_array_equal(read["first3"], model.predict(X, iteration_range=(0, 3)))
    code, _, err = run(capsys, "export", "--model", save, "--format", "lightgbm", "--out", tmp_path / "lgb.txt",
                       "--iterations", "3")  # fmt: skip
    assert code == 0, err
    booster = lightgbm.Booster(model_file=str(tmp_path / "lgb.txt"))
    assert booster.num_trees() == 3
    np.testing.assert_allclose(booster.predict(X), read["first3"], rtol=0, atol=1e-12)
    code, _, err = run(capsys, "predict", "--model", save, "--data", small_files["test"], "--out", tmp_path / "x",
                       "--iterations", "500")  # fmt: skip
    assert_one_line_error(code, err, f"--iterations 500: {save}:", f"this model's {model.best_iteration_} trees")
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--n-estimators", "2",
                       "--save", tmp_path / "plain.json")  # fmt: skip
    code, _, err = run(capsys, "predict", "--model", tmp_path / "plain.json", "--data", small_files["test"],
                       "--out", tmp_path / "x", "--best")  # fmt: skip
    assert_one_line_error(code, err, "--best:", "has no best iteration", "all its 2 trees")


def test_validation_split_carves_seeded_validation_queries_from_the_training_file(capsys, tmp_path, small_files):  # noqa: F811
    from ranklearn.cli._train import carve_validation

    ds = load_svmlight(small_files["train"])
    train, vali, kept = carve_validation(ds, 0.8, 3, small_files["train"])
    assert kept.sum() == train.n_samples and np.array_equal(ds.X[kept], train.X)
    assert (train.n_queries, vali.n_queries) == (round(0.8 * ds.n_queries), ds.n_queries - round(0.8 * ds.n_queries))
    assert sorted([*train.query_ids, *vali.query_ids]) == sorted(ds.query_ids)  # every query once, none twice
    again, _, _ = carve_validation(ds, 0.8, 3, small_files["train"])
    other, _, _ = carve_validation(ds, 0.8, 4, small_files["train"])
    assert list(again.query_ids) == list(train.query_ids) != list(other.query_ids)  # seeded
    save = tmp_path / "m.json"
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--validation-split", "0.8", "--split-seed", "3",
                         "--model", "lambdamart", "--n-estimators", "5", "--seed", "0", "--save", save)  # fmt: skip
    assert code == 0, err
    model = load_model(save)
    expected = LambdaMART(n_estimators=5, random_state=0).fit(
        train.X, train.y, qid=train.qid, eval_set=[(vali.X, vali.y, vali.qid)], eval_names=["validate"]
    )
    assert model.evals_result_ == expected.evals_result_ and model.best_iteration_ == expected.best_iteration_
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                       "--validation-split", "0.8", "--model", "lambdamart")  # fmt: skip
    assert_one_line_error(code, err, "give --validate or --validation-split, not both")
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--validation-split", "1", "--model", "lambdamart")
    assert_one_line_error(code, err, "--validation-split must be a fraction between 0 and 1")


def test_train_unbiased_reads_positions_from_a_position_file_or_the_sidecar(capsys, small_files, tmp_path):
    """--unbiased pairwise with --position-file: the model of LambdaMART(unbiased='pairwise') fitted
    on those positions; the sidecar serves alike; without positions one line, exit 2, before training."""
    train = load_svmlight(small_files["train"])
    position = np.concatenate([np.arange(1, b - a + 1) for a, b in zip(train.ptr[:-1], train.ptr[1:])])
    pos_file = tmp_path / "shown.txt"
    pos_file.write_text("".join(f"{p}\n" for p in position))
    opts = ["--n-estimators", "3", "--leaves", "4", "--min-leaf-samples", "2", "--seed", "0", "--threads", "1"]
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", small_files["train"], "--unbiased",
                       "pairwise", "--position-file", pos_file, "--save", tmp_path / "m.json", *opts)  # fmt: skip
    assert code == 0, err
    saved = load_model(tmp_path / "m.json")
    ref = LambdaMART(n_estimators=3, num_leaves=4, min_samples_leaf=2, random_state=0, n_jobs=1, unbiased="pairwise")
    ref.fit(train.X, train.y, qid=train.qid, position=position)
    np.testing.assert_array_equal(saved.predict(train.X), ref.predict(train.X))
    np.testing.assert_array_equal(saved.position_bias_["t_plus"], ref.position_bias_["t_plus"])
    # the sidecar of the training file
    sidecar_train = tmp_path / "clicks.txt"
    sidecar_train.write_bytes(Path(small_files["train"]).read_bytes())
    (tmp_path / "clicks.txt.position").write_text(pos_file.read_text())
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", sidecar_train, "--unbiased",
                       "position_factors", *opts)  # fmt: skip
    assert code == 0 and "positions from" in err, err
    # the export says the bias stays behind
    code, _, err = run(capsys, "export", "--model", tmp_path / "m.json", "--format", "lightgbm", "--out", tmp_path / "m.txt")
    assert code == 0 and "position bias (--unbiased) is not exported" in err, err
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", small_files["train"], "--unbiased",
                       "pairwise", *opts)  # fmt: skip
    assert_one_line_error(code, err, "--unbiased pairwise needs the training rows' positions", "--position-file")
    code, _, err = run(capsys, "train", "--model", "mart", "--train", small_files["train"], "--unbiased",
                       "pairwise", "--position-file", pos_file, *opts)  # fmt: skip
    assert_one_line_error(code, err, "debiases the pair objectives 'lambdarank' and 'ranknet', not 'squared_error'")
    # "ipw" with its propensities, reachable now that every parameter is an option
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", small_files["train"], "--unbiased", "ipw",
                       "--propensity", "1,0.6,0.4", "--position-file", pos_file, "--save", tmp_path / "ipw.json", *opts)
    assert code == 0, err
    ref = LambdaMART(n_estimators=3, num_leaves=4, min_samples_leaf=2, random_state=0, n_jobs=1, unbiased="ipw",
                     propensity=[1, 0.6, 0.4]).fit(train.X, train.y, qid=train.qid, position=position)  # fmt: skip
    np.testing.assert_array_equal(load_model(tmp_path / "ipw.json").predict(train.X), ref.predict(train.X))
    # its errors in the options' words
    for extra, message in ((["--propensity", "1,0,-1"], "--propensity must be positive finite numbers, one per rank "
                             "from 1 (got [1, 0, -1])"), ([], "--propensity is required by --unbiased 'ipw'")):  # fmt: skip
        code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", small_files["train"], "--unbiased",
                           "ipw", "--position-file", pos_file, *extra, *opts)  # fmt: skip
        assert_one_line_error(code, err, message)


@needs_torch
@pytest.mark.parametrize("loss", ["dla", "regression_em"])
def test_train_neural_click_losses_by_name(capsys, small_files, tmp_path, loss):
    """--loss dla / regression_em with the positions: ListNet(loss=...) fitted on them, its learned
    propensities saved; without positions one line, exit 2, before training."""
    from ranklearn.models import ListNet

    train = load_svmlight(small_files["train"])
    position = np.concatenate([np.arange(1, b - a + 1) for a, b in zip(train.ptr[:-1], train.ptr[1:])])
    pos_file = tmp_path / "shown.txt"
    pos_file.write_text("".join(f"{p}\n" for p in position))
    clicks = (train.y > 0).astype(np.float64)
    clicked = tmp_path / "clicks.txt"
    save_svmlight(from_arrays(train.X, clicks, train.qid), clicked)
    opts = ["--n-estimators", "2", "--hidden", "4", "--networks", "1", "--seed", "0"]
    code, _, err = run(capsys, "train", "--model", "listnet", "--train", clicked, "--loss", loss, "--position-file",
                       pos_file, "--save", tmp_path / "m.json", *opts)  # fmt: skip
    assert code == 0, err
    saved = load_model(tmp_path / "m.json")
    ref = ListNet(n_estimators=2, hidden=(4,), n_networks=1, random_state=0, loss=loss)
    ref.fit(train.X, clicks, qid=train.qid, position=position)
    np.testing.assert_allclose(saved.predict(train.X), ref.predict(train.X), rtol=1e-6)
    assert saved.loss == loss and saved.position_bias_["propensity"][0] == 1.0
    np.testing.assert_allclose(saved.position_bias_["propensity"], ref.position_bias_["propensity"])
    # the export says the bias stays behind, in a network's words
    pytest.importorskip("onnx")
    code, _, err = run(capsys, "export", "--model", tmp_path / "m.json", "--format", "onnx", "--out", tmp_path / "m.onnx")
    assert code == 0 and "position bias (--loss) is not exported: the file holds the network f" in err, err
    assert "trees" not in err and "--unbiased" not in err, err
    code, _, err = run(capsys, "train", "--model", "listnet", "--train", clicked, "--loss", loss, *opts)
    assert_one_line_error(code, err, f"--loss {loss} needs the training rows' positions", "--position-file")


@pytest.fixture(scope="module")
def click_file(tmp_path_factory, small_files):  # noqa: F811
    """PBM clicks simulated on the small training file, one list per session: the svmlight file of
    the clicks, its positions file, and the rows."""
    from ranklearn.clicks import PBM, ClickTrainingSet, simulate

    train = load_svmlight(small_files["train"])
    rows = ClickTrainingSet.per_session(simulate(train, train.X[:, 0], PBM(eta=1.0), n_sessions=300, seed=0), train)
    root = tmp_path_factory.mktemp("clicks")
    save_svmlight(from_arrays(rows.X, rows.y, rows.qid), root / "clicks.txt")
    (root / "shown.txt").write_text("".join(f"{p}\n" for p in rows.position))
    return root / "clicks.txt", root / "shown.txt", rows


@needs_torch
@pytest.mark.parametrize("model", ["listnet", "ranknet", "lambdarank"])
def test_train_neural_ipw_weighs_the_models_own_loss(capsys, click_file, tmp_path, model):
    """--loss ipw --propensity P [--propensity-clip C]: the ranker's own loss weighted by the given
    propensities, the model of ``Ranker(loss=IPWLoss(P, base=its loss, clip=C))``; its saved file
    holds loss "ipw" and the propensities, and fits the same again."""
    from ranklearn.neural.losses import IPWLoss

    clicked, shown, rows = click_file
    opts = ["--n-estimators", "2", "--hidden", "4", "--networks", "1", "--seed", "0"]
    code, _, err = run(capsys, "train", "--model", model, "--train", clicked, "--loss", "ipw", "--propensity",
                       "1,0.6,0.4", "--propensity-clip", "0.5", "--position-file", shown, "--save",
                       tmp_path / "m.json", *opts)  # fmt: skip
    assert code == 0, err
    saved = load_model(tmp_path / "m.json")
    settings = dict(n_estimators=2, hidden=(4,), n_networks=1, random_state=0)
    loss = IPWLoss(propensity=(1, 0.6, 0.4), base=model, clip=0.5)
    ref = ranker_class(REGISTRY[model])(**settings, loss=loss).fit(rows.X, rows.y, qid=rows.qid, position=rows.position)
    np.testing.assert_allclose(saved.predict(rows.X), ref.predict(rows.X), rtol=1e-6)
    assert (saved.loss, saved.propensity, saved.propensity_clip) == ("ipw", [1.0, 0.6, 0.4], 0.5)
    np.testing.assert_allclose(saved.position_bias_["propensity"], [1.0, 0.6, 0.5])  # clipped
    again = ranker_class(REGISTRY[model])(**saved.get_params()).fit(rows.X, rows.y, qid=rows.qid, position=rows.position)
    np.testing.assert_array_equal(again.predict(rows.X), saved.predict(rows.X))


@needs_torch
def test_train_neural_ipw_errors_name_the_options(capsys, click_file):
    """One line, exit 2, before training: --loss ipw without --propensity or positions, a bad
    --propensity (the trees' check), and --propensity or --propensity-clip with another loss."""
    clicked, shown, _ = click_file
    opts = ["--n-estimators", "1", "--hidden", "4", "--networks", "1"]
    for extra, fragments in (
        (["--loss", "ipw", "--position-file", shown], ["--propensity is required by --loss 'ipw'"]),
        (["--loss", "ipw", "--propensity", "1,0,-1", "--position-file", shown],
         ["--propensity must be positive finite numbers, one per rank from 1 (got [1, 0, -1])"]),
        (["--loss", "dla", "--propensity", "1,0.5", "--position-file", shown],
         ["--propensity is read by --loss 'ipw' only, not --loss 'dla'"]),
        (["--propensity-clip", "0.1"], ["--propensity-clip is read by --loss 'ipw' only, not --loss 'listnet'"]),
        (["--loss", "ipw", "--propensity", "1,0.5"], ["--loss ipw needs the training rows' positions", "--position-file"]),
    ):  # fmt: skip
        code, _, err = run(capsys, "train", "--model", "listnet", "--train", clicked, *extra, *opts)
        assert_one_line_error(code, err, *fragments)


def test_train_propensity_without_unbiased_ipw_is_said_in_the_options_words(capsys, small_files):  # noqa: F811
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", small_files["train"], "--propensity",
                       "1,0.5", "--n-estimators", "1")  # fmt: skip
    assert_one_line_error(code, err, "--propensity is read by --unbiased 'ipw' only")
    assert "=" not in err and "None" not in err, err


def test_every_parameter_of_every_ranker_is_an_option_of_train():
    """Generated from the rankers' constraints (docs/DESIGN.md "Vocabulary"): each parameter but
    verbose and warm_start has one flag, offered for every ranker that takes it."""
    from ranklearn.cli._train import merged_options
    from ranklearn.registry import NOT_OPTIONS, REGISTRY, option_flag

    from ranklearn.cli._train import build_train_command
    from ranklearn.models.base import SHARED_PARAMS

    merged = merged_options()
    # the parameters every ranker shares are train's own options (--features takes a file of ids)
    train = typer.Typer()
    train.command(name="train")(build_train_command())
    train_flags = {o for p in typer.main.get_command(train).params for o in p.opts}
    assert {option_flag(p) for p in SHARED_PARAMS} <= train_flags
    for spec in REGISTRY.values():
        try:
            cls = spec.load_class()
        except ImportError:
            continue
        for param in set(cls._get_param_names()) - set(NOT_OPTIONS) - set(SHARED_PARAMS):
            option, models = merged[option_flag(param)]
            assert option.param == param and spec.name in models, (spec.name, param)


def test_generated_options_reach_the_ranker_with_the_python_sides_errors(capsys, small_files, tmp_path):  # noqa: F811
    from ranklearn.cli._train import option_message

    model = tmp_path / "m.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                       "--model", "lambdamart", "--n-estimators", "3", "--bagging-fraction", "0.5",
                       "--lambda-norm", "pairs", "--early-stopping", "auto", "--lambda-distance-weight",
                       "--seed", "0", "--save", model)  # fmt: skip
    assert code == 0, err
    params = load_model(model).get_params()
    assert (params["bagging_fraction"], params["lambda_normalization"], params["early_stopping_rounds"],
            params["lambda_distance_weight"]) == (0.5, "pairs", "auto", True)  # fmt: skip
    with pytest.raises(ValueError) as python_side:
        LambdaMART(bagging_fraction=2.0).check_params()
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--bagging-fraction", "2")
    assert err == f"ranklearn: error: {option_message(str(python_side.value), 'lambdamart')}\n"
    assert "--bagging-fraction must be a float in the range (0.0, 1.0]; got 2.0" in err


def test_train_normalize_saves_the_normalizer_that_predict_and_export_apply(capsys, tmp_path, small_files):  # noqa: F811
    """--normalize zscore: the model is a plain one trained on the normalized file; predict and an
    export checked by its reader give its scores on the raw file."""
    from ranklearn.data import Normalizer

    save = tmp_path / "z.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--n-estimators", "5",
                       "--seed", "0", "--normalize", "zscore", "--save", save)  # fmt: skip
    assert code == 0, err
    model = load_model(save)
    train = load_svmlight(small_files["train"])
    norm = Normalizer("zscore", per_query=False).fit(train.X.astype(np.float32))
    plain = LambdaMART(n_estimators=5, random_state=0).fit(norm.transform(train.X.astype(np.float32)), train.y, train.qid)
    test = load_svmlight(small_files["test"], n_features=model.n_features_in_)
    np.testing.assert_array_equal(model.predict(test.X), plain.predict(norm.transform(test.X.astype(np.float32))))
    code, _, err = run(capsys, "predict", "--model", save, "--data", small_files["test"], "--out", tmp_path / "s")
    assert code == 0, err
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "s"), model.predict(test.X))
    code, out, err = run(capsys, "export", "--model", save, "--format", "xgboost", "--out", tmp_path / "m.json",
                         "--check", small_files["test"])  # fmt: skip
    assert code == 0 and "within float32 round-off" in " ".join(out.split()), err


def test_train_normalize_per_query_as_ranklib(capsys, tmp_path, small_files):  # noqa: F811
    """--normalize query-sum: predict reads the file's queries; an export refuses in one line."""
    from ranklearn.data import Normalizer

    save = tmp_path / "q.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "linear", "--normalize", "query-sum",
                       "--save", save)  # fmt: skip
    assert code == 0, err
    model = load_model(save)
    test = load_svmlight(small_files["test"], n_features=model.n_features_in_)
    code, _, err = run(capsys, "predict", "--model", save, "--data", small_files["test"], "--out", tmp_path / "s")
    assert code == 0, err
    z = Normalizer("sum").fit_transform(test.X.astype(np.float32), test.ptr)
    np.testing.assert_allclose(np.loadtxt(tmp_path / "s"), z.astype(np.float64) @ model.coef_ + model.intercept_, rtol=1e-12)
    code, _, err = run(capsys, "export", "--model", save, "--format", "ranklib", "--out", tmp_path / "m.txt")
    assert_one_line_error(code, err, "RankLib scores each document alone", "normalize='query-sum'", "normalize='sum'")
    no_qid = tmp_path / "noqid.txt"
    no_qid.write_text("1 1:1 2:3\n0 1:2 2:1\n")
    code, _, err = run(capsys, "predict", "--model", save, "--data", no_qid, "--out", tmp_path / "x")
    assert code == 2 and "qid" in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "extra,fragments",
    [
        (["--normalize", "minmax"], ["--normalize takes sum, zscore, linear, query-sum, query-zscore, query-linear; got 'minmax'"]),
        (["--normalize", "zscore", "--workers", "2"], ["--normalize applies to a fit on this machine"]),
    ],
)
def test_train_normalize_refusals_are_one_line(capsys, tmp_path, small_files, extra, fragments):  # noqa: F811
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", *extra)
    assert_one_line_error(code, err, *fragments)


def test_train_features_file_trains_on_those_columns(capsys, tmp_path, small_files):  # noqa: F811
    """--features FILE (RankLib's -feature): the model is the one trained on the listed columns,
    takes whole rows, and the other columns never change its scores (predict, export)."""
    listed = tmp_path / "features.txt"
    listed.write_text("# RankLib's layout: an id a line, text after a tab\n5\tbm25\n\n2\n# 3\n1 # tf\n")
    save = tmp_path / "f.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--n-estimators", "5",
                       "--seed", "0", "--features", listed, "--save", save)  # fmt: skip
    assert code == 0, err
    model = load_model(save)
    train = load_svmlight(small_files["train"])
    assert model.n_features_in_ == train.n_features == 6 and model.features == [4, 1, 0]
    plain = LambdaMART(n_estimators=5, random_state=0).fit(train.X[:, [4, 1, 0]], train.y, train.qid)
    test = load_svmlight(small_files["test"], n_features=6)
    np.testing.assert_array_equal(model.predict(test.X), plain.predict(test.X[:, [4, 1, 0]]))
    other = test.X.copy()
    other[:, [2, 3, 5]] = -7.5
    changed = tmp_path / "other.txt"
    save_svmlight(from_arrays(other, test.y, test.qid), changed)
    for data, out in ((small_files["test"], tmp_path / "a"), (changed, tmp_path / "b")):
        code, _, err = run(capsys, "predict", "--model", save, "--data", data, "--out", out)
        assert code == 0, err
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "a"), np.loadtxt(tmp_path / "b"))
    code, out, err = run(capsys, "export", "--model", save, "--format", "lightgbm", "--out", tmp_path / "m.txt",
                         "--check", changed)  # fmt: skip
    assert code == 0 and "within float32 round-off" in " ".join(out.split()), err


@pytest.mark.parametrize(
    "content,fragments",
    [
        ("7\n", ["features.txt:1: feature 7 is beyond the 6 features of"]),
        ("# a comment\n2\n0\n", ["features.txt:3: a feature id is a whole number >= 1 (got '0')"]),
        ("f3\n", ["features.txt:1: a feature id is a whole number >= 1 (got 'f3')"]),
        ("1\n4\n1\n", ["features.txt:3: feature 1 is listed twice (first on line 1)"]),
        ("# nothing\n\n", ["features.txt: the feature list names no feature"]),
        ("", ["features.txt: the feature list names no feature"]),
    ],
)
def test_train_features_file_errors_name_the_file_and_line(capsys, tmp_path, small_files, content, fragments):  # noqa: F811
    listed = tmp_path / "features.txt"
    listed.write_text(content)
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "linear", "--features", listed)
    assert_one_line_error(code, err, *fragments)


def test_train_features_and_normalize_refused_for_a_cluster_fit(capsys, tmp_path, small_files):  # noqa: F811
    listed = tmp_path / "features.txt"
    listed.write_text("1\n")
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--features", listed,
                       "--scheduler", "tcp://127.0.0.1:1")  # fmt: skip
    assert_one_line_error(code, err, "--features applies to a fit on this machine")


# --- every registered ranker --------------------------------------------------------------------------
def cli_options(spec) -> list[str]:
    """``spec.test`` (its test settings) as ``ranklearn train`` options, by the spec's own options."""
    from ranklearn.registry import option_flag

    args = []
    for param, value in spec.test.items():
        flag = option_flag(param)
        assert flag is not None, f"{spec.name}'s test setting {param} has no train option"
        if isinstance(value, bool):
            args.append(flag if value else f"--no-{flag[2:]}")
        else:
            args += [flag, ",".join(map(str, value)) if isinstance(value, tuple) else str(value)]
    return args


def check_train_and_predict(spec, capsys, files, tmp_path) -> None:
    """``train`` with ``spec``'s test settings, early stopping watched on a validation file, saves a
    model equal to the Python fit of the same settings; ``predict`` writes its scores."""
    cls = ranker_class(spec)
    model, scores = tmp_path / f"{spec.name}.json", tmp_path / f"{spec.name}.scores"
    code, out, err = run(capsys, "train", "--train", files["train"], "--validate", files["vali"], "--model", spec.name,
                         *cli_options(spec), "--save", model)  # fmt: skip
    assert code == 0, err
    assert f"{spec.name}: saved to {model}" in out
    train, vali, test = (load_svmlight(files[name]) for name in ("train", "vali", "test"))
    saved = load_model(model)
    assert type(saved) is cls and saved.get_params() == {**saved.get_params(), **spec.test}
    reference = cls(**spec.test).fit(train.X, train.y, qid=train.qid, eval_set=[(vali.X, vali.y, vali.qid)])
    np.testing.assert_array_equal(saved.predict(test.X), reference.predict(test.X))
    code, _, err = run(capsys, "predict", "--model", model, "--data", files["test"], "--out", scores)
    assert code == 0, err
    np.testing.assert_array_equal(np.loadtxt(scores), saved.predict(test.X))


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_registered_ranker_trains_and_predicts_from_the_command_line(name, capsys, small_files, tmp_path):
    check_train_and_predict(REGISTRY[name], capsys, small_files, tmp_path)


def test_train_passes_the_weight_file_to_fit_in_the_rows_order(capsys, tmp_path):
    """``<train>.weight`` (LightGBM's weight file, as ``simulate-clicks --aggregate`` writes it) or
    ``--weight-file`` reach fit as sample_weight, regrouped with their rows; the loader's "not
    read" warning is not shown for the file that is read."""
    rng = np.random.default_rng(0)
    X, y = rng.random((60, 3)), rng.integers(0, 3, 60).astype(float)
    qid = np.tile(np.repeat(np.arange(6), 5), 2)  # every qid reappears: the rows are regrouped
    weight = rng.integers(1, 9, 60).astype(float)
    data = tmp_path / "clicks.txt"
    data.write_text("".join(f"{int(label)} qid:{q} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row)) + "\n"
                            for label, q, row in zip(y, qid, X)))  # fmt: skip
    X = np.round(X, 6).astype(np.float32)
    Path(f"{data}.weight").write_text("".join(f"{w:g}\n" for w in weight))
    opts = ["--model", "lambdamart", "--n-estimators", "3", "--leaves", "4", "--min-leaf-samples", "2", "--seed", "0"]
    code, _, err = run(capsys, "train", "--train", data, "--save", tmp_path / "m.json", *opts)
    assert code == 0, err
    assert f"ranklearn: weights from {data}.weight (sample_weight)" in err and "is not read" not in err
    order = np.argsort(qid, kind="stable")
    ref = LambdaMART(n_estimators=3, num_leaves=4, min_samples_leaf=2, random_state=0)
    ref.fit(X[order], y[order], qid=qid[order], sample_weight=weight[order])
    unweighted = LambdaMART(n_estimators=3, num_leaves=4, min_samples_leaf=2, random_state=0)
    unweighted.fit(X[order], y[order], qid=qid[order])
    saved = load_model(tmp_path / "m.json").predict(X)
    np.testing.assert_allclose(saved, ref.predict(X), rtol=1e-6)
    assert not np.allclose(saved, unweighted.predict(X))  # the weights change the model
    # --weight-file instead of the sidecar (all 1: the unweighted model)
    ones = tmp_path / "ones"
    ones.write_text("1\n" * 60)
    code, _, err = run(capsys, "train", "--train", data, "--weight-file", ones, "--save", tmp_path / "m1.json", *opts)
    assert code == 0 and f"weights from {ones}" in err, err
    # a set that is only scored: its sidecar is not read, and one note says so (the Python advice is not shown)
    code, _, err = run(capsys, "train", "--train", data, "--validate", data, *opts)
    assert code == 0, err
    assert err.count(f"weights from {data}.weight") == 1
    assert f"ranklearn: {data}.weight not read: --validate is scored on its labels" in err
    assert "sample_weight=numpy" not in err
    np.testing.assert_allclose(load_model(tmp_path / "m1.json").predict(X), unweighted.predict(X), rtol=1e-6)
    # --validation-split keeps the weights of the rows trained on
    code, _, err = run(capsys, "train", "--train", data, "--validation-split", "0.5", "--save", tmp_path / "m2.json",
                       *opts)  # fmt: skip
    assert code == 0, err
    from ranklearn.cli._train import carve_validation

    with pytest.warns(UserWarning, match="is not read"):  # Python's loader holds no weights: it says so
        ds = load_svmlight(data, regroup=True)
    part, vali, kept = carve_validation(ds, 0.5, 0, data)
    ref = LambdaMART(n_estimators=3, num_leaves=4, min_samples_leaf=2, random_state=0)
    ref.fit(part.X, part.y, qid=part.qid, sample_weight=weight[order][kept], eval_set=[(vali.X, vali.y, vali.qid)])
    np.testing.assert_allclose(load_model(tmp_path / "m2.json").predict(X), ref.predict(X), rtol=1e-6)


@pytest.mark.parametrize(
    "text, options, fragments",
    [
        ("1\n-2\n" + "1\n" * 4, [], ["clicks.txt.weight:2", "a weight must be >= 0", "'-2'"]),
        ("1\n" * 5, [], ["5 weights for 6 rows in", "need one weight per row"]),
        ("1\nx\n" + "1\n" * 4, [], ["clicks.txt.weight:2", "expected one finite number per line"]),
        ("0\n" * 6, [], ["every weight in", "is 0: nothing to train on"]),
        ("1\n" * 6, ["--weight-file", "missing"], ["missing", "no such weight file"]),
        ("1\n" * 6, ["--weight-file", "."], [".", "is a directory, not a weights file"]),
        ("1\n" * 6, ["--weight-file", "-", "--train", "-"], ["--train and --weight-file cannot both read standard input"]),
        ("1\n" * 6, ["--workers", "2"], None),
    ],
)
def test_train_refuses_a_bad_weight_file_in_one_line(capsys, tmp_path, text, options, fragments):
    data = tmp_path / "clicks.txt"
    data.write_text("2 qid:1 1:0.5\n0 qid:1 1:0.1\n1 qid:2 1:0.3\n0 qid:2 1:0.2\n1 qid:2 1:0.9\n0 qid:2 1:0.4\n")
    weights = Path(f"{data}.weight")
    weights.write_text(text)
    if fragments is None:  # a Dask fit reads the files' sidecars on the workers: --weight-file is refused
        code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", data, "--weight-file", weights, *options)
        assert_one_line_error(code, err, "--weight-file applies to a fit on this machine or on Spark",
                              "a Dask fit reads each --train file's .weight sidecar")  # fmt: skip
        return
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", data, "--n-estimators", "2", *options)
    assert_one_line_error(code, err, *fragments)


def test_commands_other_than_train_say_they_did_not_read_a_weight_file(capsys, tmp_path, small_files):  # noqa: F811
    data = tmp_path / "d.txt"
    data.write_bytes(Path(small_files["train"]).read_bytes())
    Path(f"{data}.weight").write_text("not read\n")  # never parsed
    code, _, err = run(capsys, "train", "--model", "linear", "--train", small_files["train"], "--save", tmp_path / "m.json")
    assert code == 0, err
    code, _, err = run(capsys, "predict", "--model", tmp_path / "m.json", "--data", data, "--out", tmp_path / "s")
    assert code == 0 and err.strip() == f"ranklearn: {data}.weight not read: predict scores the documents without them"
    code, _, err = run(capsys, "evaluate", "--data", data, "--scores", tmp_path / "s")
    assert code == 0, err
    assert f"ranklearn: {data}.weight not read: the scores are evaluated on the file's labels" in err
    code, _, err = run(capsys, "info", data)
    assert code == 0 and f"ranklearn: {data}.weight not read: weights are read by ranklearn train" in err, err


def test_cv_gives_each_fold_the_weights_of_its_training_rows(capsys, tmp_path, small_files):  # noqa: F811
    from ranklearn.model_selection import cross_validate

    data = tmp_path / "d.txt"
    data.write_bytes(Path(small_files["train"]).read_bytes())
    ds = load_svmlight(data)
    weight = np.random.default_rng(0).integers(1, 9, ds.n_samples).astype(float)
    Path(f"{data}.weight").write_text("".join(f"{w:g}\n" for w in weight))
    code, out, err = run(capsys, "cv", "--model", "lambdamart", "--data", data, "--folds", "2", "--json",
                         "--n-estimators", "3", "--leaves", "4", "--seed", "0")  # fmt: skip
    assert code == 0 and f"weights from {data}.weight" in err, err
    import json

    folds = json.loads(out)["folds"]
    model = LambdaMART(n_estimators=3, num_leaves=4, random_state=0)
    weighted = cross_validate(model, ds.X, ds.y, qid=ds.qid, cv=2, sample_weight=weight)
    plain = cross_validate(model, ds.X, ds.y, qid=ds.qid, cv=2)
    got = [folds[f"fold {i}"]["ndcg@10"] for i in (1, 2)]
    np.testing.assert_allclose(got, weighted["test_ndcg@10"], rtol=1e-9)
    assert not np.allclose(weighted["test_ndcg@10"], plain["test_ndcg@10"])
    with pytest.raises(ValueError, match="sample_weight has 3 values for"):
        cross_validate(model, ds.X, ds.y, qid=ds.qid, cv=2, sample_weight=[1, 2, 3])
    from ranklearn.model_selection import query_folds

    (_, first_test), _ = list(query_folds(ds.qid, 2, random_state=0))
    only_first = np.zeros(ds.n_samples)
    only_first[first_test] = 1.0  # fold 1 trains on the other rows: all weigh 0
    with pytest.raises(ValueError, match="fold 1: every training row has weight 0"):
        cross_validate(model, ds.X, ds.y, qid=ds.qid, cv=2, sample_weight=only_first)


def test_a_dask_train_reads_the_weight_sidecars_and_fits_the_local_trees(capsys, tmp_path, small_files):  # noqa: F811
    """--workers: the --train file's .weight sidecar goes to fit(sample_weight=) as a local train's
    does (the same trees); a --validate file's sidecars are noted as not used."""
    pytest.importorskip("distributed")
    data = tmp_path / "d.txt"
    data.write_bytes(Path(small_files["train"]).read_bytes())
    n = len(data.read_bytes().splitlines())
    Path(f"{data}.weight").write_text("".join(f"{w}\n" for w in np.random.default_rng(0).integers(1, 5, n)))
    vali = tmp_path / "v.txt"
    vali.write_bytes(data.read_bytes())
    Path(f"{vali}.weight").write_text(Path(f"{data}.weight").read_text())
    opts = ["--model", "lambdamart", "--n-estimators", "3", "--leaves", "3", "--min-leaf-samples", "1", "--seed", "0"]
    code, _, err = run(capsys, "train", "--train", data, "--validate", vali, "--workers", "1", *opts,
                       "--save", tmp_path / "dask.json")  # fmt: skip
    assert code == 0, err
    assert f"ranklearn: weights from {data}.weight (sample_weight)" in err
    assert f"ranklearn: {vali}.weight not used: --validate is scored on its labels" in err
    code, _, err = run(capsys, "train", "--train", data, "--validate", vali, *opts, "--save", tmp_path / "local.json")
    assert code == 0, err
    Path(f"{data}.weight").unlink()
    code, _, err = run(capsys, "train", "--train", data, "--validate", vali, *opts, "--save", tmp_path / "plain.json")
    assert code == 0, err
    X = np.asarray(load_svmlight(data).X)
    ours, ref, plain = (load_model(tmp_path / f"{m}.json").predict(X) for m in ("dask", "local", "plain"))
    np.testing.assert_allclose(ours, ref, atol=1e-9)
    assert not np.allclose(ours, plain)  # the weights changed the model
    Path(f"{data}.weight").write_text("0\n" * n)
    code, _, err = run(capsys, "train", "--train", data, "--workers", "1", *opts)
    assert_one_line_error(code, err, f"every weight in {data}.weight is 0: nothing to train on")


def test_click_counts_too_large_for_the_exponential_gain_name_the_line_and_the_option(capsys, tmp_path):
    data = tmp_path / "counts.txt"
    data.write_text("1 qid:1 1:0.5\n2335 qid:1 1:0.1\n1 qid:2 1:0.3\n2335 qid:2 1:0.2\n")
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", data, "--n-estimators", "2")
    assert_one_line_error(code, err, f"{data}:2:", "label 2335 overflows the 2^rel-1 gain", "use --gain 'linear'")
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", data, "--n-estimators", "2", "--gain", "linear")
    assert code == 0, err


def test_the_table_scores_the_watched_metric_with_the_model_s_gain(capsys, tmp_path, small_files):  # noqa: F811
    """--gain linear: the table's ndcg@10 is the watched metric, with the linear gain (one figure,
    not the 2^rel-1 one under the same name)."""
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                         "--model", "lambdamart", "--n-estimators", "3", "--gain", "linear", "--save",
                         tmp_path / "m.json")  # fmt: skip
    assert code == 0, err
    model = load_model(tmp_path / "m.json")
    vali = load_svmlight(small_files["vali"])
    from ranklearn.metrics import get_metric

    linear = get_metric("ndcg@10", gain="linear").mean(vali.y, model.predict(vali.X), vali.ptr)
    row = next(line for line in out.splitlines() if "validate" in line)
    assert f"{linear:.4f}" in row and "conventions: gain=rel," in out
    assert max(model.evals_result_["validate"]["ndcg@10"]) == pytest.approx(linear)


def test_a_weight_file_may_end_in_blank_lines_as_a_position_file_may(capsys, tmp_path):
    data = tmp_path / "clicks.txt"
    data.write_text("2 qid:1 1:0.5\n0 qid:1 1:0.1\n1 qid:2 1:0.3\n0 qid:2 1:0.2\n")
    Path(f"{data}.weight").write_text("1\n2\n3\n4\n\n \n")
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", data, "--n-estimators", "1")
    assert code == 0 and f"weights from {data}.weight" in err, err
    Path(f"{data}.weight").write_text("1\n\n3\n4\n")  # a blank line inside is still an error
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", data, "--n-estimators", "1")
    assert_one_line_error(code, err, f"{data}.weight:2:", "expected one finite number per line")


def test_the_table_s_err_keeps_the_default_top_grade_whatever_the_training_labels(capsys, tmp_path):
    """The model's own metric in the table follows its gain only: ERR's top grade stays 4 (as
    evaluate's), so a test label above the training labels' largest is scored, not n/a."""
    train, test = tmp_path / "tr.txt", tmp_path / "te.txt"
    train.write_text("2 qid:1 1:0.9\n0 qid:1 1:0.1\n1 qid:2 1:0.5\n0 qid:2 1:0.2\n")
    test.write_text("4 qid:7 1:0.8\n0 qid:7 1:0.3\n1 qid:8 1:0.1\n3 qid:8 1:0.6\n")
    code, out, err = run(capsys, "train", "--model", "lambdamart", "--train", train, "--test", test,
                         "--metric", "err@10", "--n-estimators", "2", "--min-leaf-samples", "1")  # fmt: skip
    assert code == 0 and "not computed" not in out + err, out + err
    row = next(line for line in out.splitlines() if "test" in line)
    assert "n/a" not in row and "max_grade=4" in out
