"""The ranklearn command line, run in-process through its console-script entry point."""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ranklearn.registry import model_names
from test_metrics import DATA, MQ_TEST, _mq2008_labels_and_groups, brute_ndcg
from _helpers import RANKLEARN, assert_one_line_error, run

COMMANDS = ["info", "evaluate", "convert", "train", "predict", "export", "demo"]


def write_scores(path: Path, scores) -> Path:
    path.write_text("".join(f"{s}\n" for s in scores))
    return path


@pytest.fixture(scope="module")
def mq2008():
    if not MQ_TEST.exists():
        pytest.skip(f"shared data not found at {MQ_TEST}")
    return _mq2008_labels_and_groups()


@pytest.fixture(scope="module")
def small_files(tmp_path_factory):
    """Small synthetic train/validation files written in the qid layout."""
    from ranklearn.data import save_svmlight
    from ranklearn.datasets import make_ranking_splits

    root = tmp_path_factory.mktemp("small")
    splits = make_ranking_splits((40, 15, 15), n_features=6, n_informative=4, random_state=3)
    paths = {}
    for name, ds in zip(("train", "vali", "test"), splits):
        paths[name] = root / f"{name}.txt"
        save_svmlight(ds, paths[name])
    return paths


# --- help ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help(capsys, command):
    code, out, _ = run(capsys, *([command] if command else []), "--help")
    assert code == 0 and "Usage" in out


@pytest.mark.parametrize(
    "command, texts",
    [("train", ["[lambdamart, mart, random-forest] Leaves per tree", "[ranknet, lambdarank, listnet] Hidden layer sizes", "--lambda-norm"]),
     ("evaluate", ["map[@k], p@k, recall[@k], f1[@k], rr[@k] (or mrr[@k])"])],
)
def test_help_keeps_bracketed_text(capsys, monkeypatch, command, texts):
    # rich reads "[...]" in help texts as markup and drops it unless it is escaped
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    for text in texts:
        assert text in out, text


def test_console_script_reports_errors_in_one_line(tmp_path):
    exe = Path(sys.executable).with_name("ranklearn")
    proc = subprocess.run([exe, "info", tmp_path / "missing.txt"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"ranklearn: error: {tmp_path / 'missing.txt'}: No such file or directory\n"


# --- evaluate -------------------------------------------------------------------------------------
@pytest.mark.parametrize("empty", ["zero", "one", "skip"])
def test_evaluate_json_matches_independent_ndcg(capsys, tmp_path, mq2008, empty):
    y, ptr = mq2008
    # integer scores 0..4: plenty of ties, resolved in file order
    s = np.random.default_rng(5).integers(0, 5, len(y))
    scores = write_scores(tmp_path / "scores.txt", s)
    code, out, err = run(capsys, "evaluate", "--data", MQ_TEST, "--scores", scores, "--metric", "ndcg@10",
                         "--empty", empty, "--json")  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert list(result) == ["ndcg@10"]
    expected = [v for v in brute_ndcg(y.tolist(), s.astype(float).tolist(), ptr.tolist(), 10, empty) if not math.isnan(v)]
    assert result["ndcg@10"] == pytest.approx(sum(expected) / len(expected), abs=1e-9)


def test_evaluate_conventions_move_mq2008(capsys, tmp_path, mq2008):
    y, _ = mq2008
    scores = write_scores(tmp_path / "s.txt", np.random.default_rng(0).random(len(y)))
    means = {}
    for empty in ("zero", "one"):
        code, out, _ = run(capsys, "evaluate", "--data", MQ_TEST, "--scores", scores, "--empty", empty, "--json")
        means[empty] = json.loads(out)["ndcg@10"]
    # 51 of 156 test queries have no relevant document: the convention alone moves NDCG@10 by 51/156
    assert means["one"] - means["zero"] == pytest.approx(51 / 156, abs=1e-9)


def test_evaluate_per_query_json(capsys, tmp_path, mq2008):
    y, ptr = mq2008
    scores = write_scores(tmp_path / "s.txt", np.random.default_rng(1).random(len(y)))
    code, out, _ = run(capsys, "evaluate", "--data", MQ_TEST, "--scores", scores, "--metric", "ndcg@10",
                       "--metric", "err@10", "--empty", "skip", "--per-query", "--json")  # fmt: skip
    assert code == 0
    result = json.loads(out)
    assert list(result) == ["ndcg@10", "err@10", "per_query"]
    rows = result["per_query"]
    assert len(rows) == len(ptr) - 1 and rows[0]["qid"] == 18219
    kept = [r["ndcg@10"] for r in rows if r["ndcg@10"] is not None]
    assert len(kept) == 156 - 51
    assert result["ndcg@10"] == pytest.approx(sum(kept) / len(kept), abs=1e-12)


def test_evaluate_table_states_conventions(capsys, tmp_path, mq2008):
    y, _ = mq2008
    scores = write_scores(tmp_path / "s.txt", np.zeros(len(y)))
    code, out, _ = run(capsys, "evaluate", "--data", MQ_TEST, "--scores", scores, "--metric", "map",
                       "--ties", "pessimistic", "--gain", "linear", "--per-query")  # fmt: skip
    assert code == 0
    assert "conventions: relevant=label>0, empty queries=0, ties=pessimistic" in out
    assert "18219" in out and "mean over 156 of 156 queries" in out


def test_evaluate_bad_scores(capsys, tmp_path, mq2008):
    short = write_scores(tmp_path / "short.txt", [1, 2, 3])
    assert_one_line_error(*run(capsys, "evaluate", "--data", MQ_TEST, "--scores", short)[::2], "3 scores", "2874 rows")
    bad = tmp_path / "bad.txt"
    bad.write_text("0.5\n1e3\nhigh\n")
    assert_one_line_error(*run(capsys, "evaluate", "--data", MQ_TEST, "--scores", bad)[::2], f"{bad}:3:", "'high'")
    nan = write_scores(tmp_path / "nan.txt", ["1", "nan"])
    assert_one_line_error(*run(capsys, "evaluate", "--data", MQ_TEST, "--scores", nan)[::2], f"{nan}:2:")
    underscore = write_scores(tmp_path / "underscore.txt", ["1", "1_0"])  # float() alone would read 10
    assert_one_line_error(*run(capsys, "evaluate", "--data", MQ_TEST, "--scores", underscore)[::2], ":2:", "'1_0'")
    plain = tmp_path / "plain.txt"
    plain.write_text("".join(f"{i % 7}\n" for i in range(2874)))
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())  # as some editors save
    results = [run(capsys, "evaluate", "--data", MQ_TEST, "--scores", f, "--json")[1] for f in (plain, tmp_path / "bom.txt")]
    assert json.loads(results[0]) == json.loads(results[1])
    good = write_scores(tmp_path / "good.txt", np.zeros(2874))
    for grade, fragments in (("-1", ["--max-grade must be a finite number > 0"]), ("1", ["exceeds --max-grade 1", "give --max-grade"])):
        code, _, err = run(capsys, "evaluate", "--data", MQ_TEST, "--scores", good, "--metric", "err@10",
                           "--max-grade", grade)  # MQ2008's labels go up to 2  # fmt: skip
        assert_one_line_error(code, err, *fragments)
    code, out, err = run(capsys, "evaluate", "--data", MQ_TEST, "--scores", good, "--metric", "ndcg@0")
    assert_one_line_error(code, err, "ndcg@0")
    assert out == ""
    assert_one_line_error(*run(capsys, "evaluate", "--data", tmp_path, "--scores", good)[::2], "directory")
    assert_one_line_error(*run(capsys, "evaluate", "--data", MQ_TEST, "--scores", tmp_path)[::2], "directory")


# --- info -------------------------------------------------------------------------------------------
def test_info_mq2008(capsys, mq2008):
    code, out, _ = run(capsys, "info", MQ_TEST)
    assert code == 0
    for fragment in ("2,874", "156", "46", "0: 2,319", "min 6", "max 119", "51 (32.7%)"):
        assert fragment in out, fragment


@pytest.mark.parametrize(
    "relative, fragments",
    [
        ("MSLR-sample/msn1.fold1.train.5k.txt", ["5,000", "136"]),  # CRLF + trailing spaces
        ("lightgbm-example/rank.test", ["768", "50", "300"]),  # groups from rank.test.query
        ("MQ2008-crlf/vali.txt", ["46"]),
    ],
)
def test_info_other_layouts(capsys, relative, fragments):
    path = DATA / relative
    if not path.exists():
        pytest.skip(f"{path} not found")
    code, out, err = run(capsys, "info", path)
    assert code == 0, err
    for fragment in fragments:
        assert fragment in out


MALFORMED = {
    "null_value": (b"1 qid:1 1:0.5 2:0.1\n0 qid:1 1:0.2 2:NULL\n", ":2:"),
    "missing_qid": (b"1 qid:1 1:0.5\n0 1:0.2\n", ":2:"),
    "fid_zero": (b"1 qid:1 1:0.5\n0 qid:1 0:0.2\n", ":2:"),
    "fid_negative": (b"1 qid:1 1:0.5\n0 qid:1 -3:0.2\n", ":2:"),
    "duplicate_fid": (b"1 qid:1 1:0.5\n0 qid:1 2:0.2 2:0.3\n", ":2:"),
    "bad_label": (b"1 qid:1 1:0.5\nhigh qid:1 1:0.2\n", ":2:"),
    "empty_file": (b"", "empty"),
    "binary_garbage": (bytes(range(256)) * 4, ": not UTF-8 text: a binary file"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_info_malformed(capsys, tmp_path, case):
    content, fragment = MALFORMED[case]
    path = tmp_path / f"{case}.txt"
    path.write_bytes(content)
    code, out, err = run(capsys, "info", path)
    assert_one_line_error(code, err, str(path), fragment)
    assert out == ""


# --- convert ------------------------------------------------------------------------------------------
def test_convert_round_trip(capsys, tmp_path, small_files):
    from ranklearn.data import load_svmlight

    lgb_file, back = tmp_path / "train.lgb", tmp_path / "back.txt"
    assert run(capsys, "convert", small_files["train"], lgb_file, "--to", "lightgbm")[0] == 0
    assert b"qid:" not in lgb_file.read_bytes()
    assert run(capsys, "convert", lgb_file, back, "--to", "qid")[0] == 0
    original, via_lgb, again = (load_svmlight(p) for p in (small_files["train"], lgb_file, back))
    np.testing.assert_array_equal(via_lgb.query_sizes, original.query_sizes)
    assert (tmp_path / "train.lgb.query").read_text().split() == [str(n) for n in original.query_sizes]
    for ds in (via_lgb, again):
        np.testing.assert_array_equal(ds.X, original.X)
        np.testing.assert_array_equal(ds.y, original.y)
        np.testing.assert_array_equal(ds.ptr, original.ptr)


def test_convert_lightgbm_example(capsys, tmp_path):
    src = DATA / "lightgbm-example" / "rank.test"
    if not src.exists():
        pytest.skip(f"{src} not found")
    mid, out = tmp_path / "rank.qid", tmp_path / "rank.lgb"
    assert run(capsys, "convert", src, mid, "--to", "qid")[0] == 0
    assert run(capsys, "convert", mid, out, "--to", "lightgbm")[0] == 0
    sizes = lambda p: [int(v) for v in Path(f"{p}.query").read_text().split()]  # noqa: E731
    assert sizes(out) == sizes(src)


# --- train / predict / export ------------------------------------------------------------------------
def test_train_predict_export(capsys, tmp_path, small_files):
    from ranklearn.data import load_svmlight
    from ranklearn.io import load_model

    model = tmp_path / "m.json"
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                         "--test", small_files["test"], "--model", "lambdamart", "--n-estimators", 5, "--leaves", 4,
                         "--min-leaf-samples", 5, "--metric", "err@5", "--early-stopping", 3, "--seed", 1,
                         "--save", model)  # fmt: skip
    assert code == 0, err
    for fragment in ("train", "validate", "test", "ndcg@10", "err@5", "conventions:"):
        assert fragment in out
    scores = tmp_path / "scores.txt"
    code, _, err = run(capsys, "predict", "--model", model, "--data", small_files["test"], "--out", scores)
    assert code == 0, err
    written = [float(line) for line in scores.read_text().splitlines()]
    expected = load_model(model).predict(load_svmlight(small_files["test"]).X)
    assert written == expected.tolist()  # repr round-trips exactly
    exported = tmp_path / "m.ranklib"
    code, _, err = run(capsys, "export", "--model", model, "--format", "ranklib", "--out", exported)
    assert code == 0, err
    assert exported.stat().st_size > 0


def test_train_neural(capsys, tmp_path, small_files):
    pytest.importorskip("torch")
    model = tmp_path / "rn.json"
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                         "--model", "ranknet", "--hidden", "8", "--networks", 3, "--n-estimators", 2, "--optimizer", "sgd",
                         "--batch-queries", 4, "--lambda-norm", "pairs", "--seed", 0, "--save", model)  # fmt: skip
    assert code == 0, err
    assert model.exists() and "validate" in out
    from ranklearn.io import load_model

    loaded = load_model(model)
    assert loaded.n_networks == 3 and loaded.hidden == (8,) and loaded.optimizer == "sgd"
    assert loaded.lambda_normalization == "pairs"


@pytest.mark.parametrize(
    "model, option, fragment",
    [
        ("lambdamart", ["--hidden", "3"], "--hidden does not apply to lambdamart"),
        ("lambdamart", ["--hidden", "8"], "--hidden does not apply to lambdamart"),
        ("listnet", ["--lambda-norm", "lightgbm"], "--lambda-norm 'lightgbm' multiplies each query's pair lambdas by log2(1 + S) / S"),
        ("lambdamart", ["--networks", "3"], "--networks does not apply to lambdamart"),
        ("ranknet", ["--networks", "0"], "--networks must be"),
        ("ranknet", ["--leaves", "3"], "--leaves does not apply to ranknet"),
        ("lambdarank", ["--hidden", "8,x"], "--hidden"),
        ("ranknet", ["--hidden", "64,,32"], "--hidden must be comma-separated"),  # a typo, not (64, 32)
        ("lambdamart", ["--early-stopping", "3"], "--validate"),
        ("lambdamart", ["--learning-rate", "-1"], "--learning-rate must be"),
        ("lambdamart", ["--device", "cpu"], "--device does not apply to lambdamart"),
        ("ranknet", ["--device", "tpu9"], "not a torch device"),
        ("lambdarank", ["--device", "cuda:99"], "CUDA"),  # no CUDA here, or fewer than 100 GPUs
        ("ranknet", ["--optimizer", "sgd", "--learning-rate", "1e8", "--hidden", "8"], "diverged"),
    ],
)
def test_train_bad_options(capsys, tmp_path, small_files, model, option, fragment):
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--model", model, *option,
                         "--save", tmp_path / "m.json")  # fmt: skip
    assert_one_line_error(code, err, fragment)
    assert not (tmp_path / "m.json").exists()


def _interrupted_at(iteration: int):
    """LambdaMART whose fit is interrupted (Ctrl-C) while growing tree ``iteration``."""
    from ranklearn.models import LambdaMART

    class Interrupted(LambdaMART):
        def _fit_step(self, it):
            if it == iteration:
                raise KeyboardInterrupt
            super()._fit_step(it)

    return Interrupted


def test_train_interrupt_saves_best_model(capsys, tmp_path, small_files, monkeypatch):
    import ranklearn.cli._train as train_cli
    from ranklearn.io import load_model

    monkeypatch.setattr(train_cli, "model_class", lambda name: _interrupted_at(3))
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--save", model)
    assert code == 130
    assert err.strip().splitlines()[-1] == f"ranklearn: interrupted; saved the best model so far to {model}"
    saved = load_model(model)
    assert len(saved.trees_) == 2 and saved.n_iter_ == 2
    assert saved.interrupted_  # stored in the file


def test_train_interrupt_before_first_iteration_saves_nothing(capsys, tmp_path, small_files, monkeypatch):
    import ranklearn.cli._train as train_cli

    monkeypatch.setattr(train_cli, "model_class", lambda name: _interrupted_at(1))
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", "--save", model)
    assert code == 130
    assert err.strip().splitlines()[-1] == (
        "ranklearn: interrupted before the first iteration finished; nothing trained, nothing saved"
    )
    assert not model.exists()


def test_bad_model_files(capsys, tmp_path, small_files):
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00\x01 not a model")
    out = tmp_path / "s.txt"
    assert_one_line_error(*run(capsys, "predict", "--model", garbage, "--data", small_files["test"], "--out", out)[::2],
                          str(garbage))  # fmt: skip
    assert_one_line_error(*run(capsys, "predict", "--model", tmp_path, "--data", small_files["test"], "--out", out)[::2],
                          "directory")  # fmt: skip
    assert not out.exists()


def test_export_missing_model(capsys, tmp_path):
    out = tmp_path / "m.ranklib"
    code, _, err = run(capsys, "export", "--model", tmp_path / "none.json", "--format", "ranklib", "--out", out)
    assert_one_line_error(code, err, "none.json")
    assert not out.exists()


# --- demo -----------------------------------------------------------------------------------------------
def test_demo_trains_every_model(capsys, monkeypatch):
    import dataclasses

    from ranklearn.registry import REGISTRY

    # the real settings take about a minute per model; the wiring is the same with each one's test settings
    for name, spec in list(REGISTRY.items()):
        monkeypatch.setitem(REGISTRY, name, dataclasses.replace(spec, demo=spec.test))
    code, out, err = run(capsys, "demo")
    assert code == 0, err
    for fragment in (*REGISTRY, "ndcg@1", "ndcg@5", "err@10", "map", "conventions:"):
        assert fragment in out


def test_train_and_predict_neural_on_cuda(capsys, tmp_path, small_files):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    model = tmp_path / "lr.json"
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                         "--model", "lambdarank", "--hidden", "8", "--n-estimators", 3, "--device", "cuda",
                         "--seed", 0, "--save", model)  # fmt: skip
    assert code == 0, err
    scores = tmp_path / "scores.txt"
    code, _, err = run(capsys, "predict", "--model", model, "--data", small_files["vali"], "--out", scores)
    assert code == 0, err
    assert len(scores.read_text().split()) > 0


# --- issue 16: usage errors, help, version ------------------------------------------------------------
@pytest.mark.parametrize(
    "args, fragments",
    [
        (["evaluate", "--data", "d", "--scores", "s", "--empty", "maybe"],
         ["'--empty'", "'maybe'", "'zero', 'one', 'skip'", "(see 'ranklearn evaluate --help')"]),
        (["train", "--train", "t", "--model", "lambdamart", "--n-estimators", "abc"],
         ["'--n-estimators'", "integer", "(got 'abc')", "(see 'ranklearn train --help')"]),
        (["train", "--train", "t", "--model", "lambdamart", "--learning-rate=fast"], ["'--learning-rate'", "'fast'"]),
        (["train", "--train", "t", "--model", "xgboost"],
         ["'--model'", "'xgboost'", ", ".join(map(repr, model_names())), "ranklearn train --help"]),
        (["evaluate", "--data", "d"], ["--data needs --scores"]),
        (["predict", "--model", "m", "--data", "d", "--out", "o", "--bogus"], ["--bogus", "ranklearn predict --help"]),
        (["info"], ["Missing argument", "ranklearn info --help"]),
        (["frobnicate"], ["frobnicate", "(see 'ranklearn --help')"]),
    ],
)
def test_usage_errors_are_one_line(capsys, args, fragments):
    code, out, err = run(capsys, *args)
    assert_one_line_error(code, err, *fragments)
    assert out == "" and "╭" not in err


def test_version_and_short_help(capsys):
    from ranklearn import __version__

    assert run(capsys, "--version")[:2] == (0, f"ranklearn {__version__}\n")
    code, out, _ = run(capsys, "predict", "-h")
    assert code == 0 and "Usage: ranklearn predict" in out
    code, out, _ = run(capsys)  # no arguments: the help, as before
    assert code == 0 and "Usage: ranklearn" in out


def test_help_shows_flags_plainly(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(capsys, "evaluate", "--help")
    assert code == 0
    assert "<bool>" not in out and "<list[str]>" not in out
    assert "--metric" in out and "METRIC" in out
    assert "<zero|one|skip>" in out  # choices still shown


def test_huge_metric_cutoff_is_one_line(capsys, tmp_path, small_files):
    scores = write_scores(tmp_path / "s.txt", np.zeros(len(small_files["test"].read_text().splitlines())))
    code, _, err = run(capsys, "evaluate", "--data", small_files["test"], "--scores", scores,
                       "--metric", "ndcg@99999999999999999999")  # fmt: skip
    assert_one_line_error(code, err, "ndcg@99999999999999999999", "at most")


def test_binary_scores_file_is_cut_in_the_message(capsys, tmp_path, small_files):
    binary = tmp_path / "scores.bin"
    binary.write_bytes(bytes(range(128, 256)) * 8)  # no newline: one 1 KiB "token"
    code, _, err = run(capsys, "evaluate", "--data", small_files["test"], "--scores", binary)
    assert_one_line_error(code, err, f"{binary}:1:", "...")
    assert len(err) < 300, err


# --- issue 16: outputs ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_file(tmp_path_factory, small_files):
    from ranklearn.data import load_svmlight
    from ranklearn.models import LambdaMART

    ds = load_svmlight(small_files["train"])
    path = tmp_path_factory.mktemp("model") / "m.json"
    LambdaMART(n_estimators=3, num_leaves=4, min_samples_leaf=5, random_state=0).fit(ds.X, ds.y, qid=ds.qid).save(path)
    return path


def expected_scores(model_file, data) -> str:
    from ranklearn.data import load_svmlight
    from ranklearn.io import load_model

    return "".join(f"{v!r}\n" for v in load_model(model_file).predict(load_svmlight(data).X).tolist())


def test_predict_to_dash_writes_stdout(capsys, tmp_path, small_files, model_file, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "predict", "--model", model_file, "--data", small_files["test"], "--out", "-")
    assert code == 0, err
    assert out == expected_scores(model_file, small_files["test"])
    assert "wrote" in err and not (tmp_path / "-").exists()


def test_predict_into_a_closed_pipe_exits_quietly(tmp_path, model_file):
    data = tmp_path / "many.txt"
    data.write_text("0 qid:1 1:0.25 3:1\n" * 20_000)  # 400 kB of scores: more than a pipe holds
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ranklearn.cli.main import main; main()", "predict", "--model", str(model_file),
         "--data", str(data), "--out", "-"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    proc.stdout.close()  # the reader has gone, as with `| head -0`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert err == "", err


def test_predict_through_a_symlink_and_into_a_fifo(capsys, tmp_path, small_files, model_file):
    import threading

    real, link = tmp_path / "real.scores", tmp_path / "link.scores"
    real.write_text("old\n")
    link.symlink_to(real)
    assert run(capsys, "predict", "--model", model_file, "--data", small_files["test"], "--out", link)[0] == 0
    assert link.is_symlink() and real.read_text() == expected_scores(model_file, small_files["test"])
    fifo = tmp_path / "scores.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    assert run(capsys, "predict", "--model", model_file, "--data", small_files["test"], "--out", fifo)[0] == 0
    reader.join(timeout=30)
    assert received == [expected_scores(model_file, small_files["test"])]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("command", ["predict", "export", "save"])
def test_outputs_to_dev_null_leave_it_a_device(capsys, tmp_path, small_files, model_file, command):
    before = os.lstat("/dev/null")
    args = {
        "predict": ["predict", "--model", model_file, "--data", small_files["test"], "--out", "/dev/null"],
        "export": ["export", "--model", model_file, "--format", "ranklib", "--out", "/dev/null"],
        "save": ["train", "--train", small_files["train"], "--model", "lambdamart", "--n-estimators", 1, "--save", "/dev/null"],
    }[command]
    code, _, err = run(capsys, *args)
    assert code == 0, err
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)


def test_predict_to_dev_stdout_on_a_terminal(tmp_path, small_files, model_file):
    """/dev/stdout is a symlink to the terminal here: the scores reach the terminal, the link stays."""
    import pty

    link_before = os.readlink("/dev/stdout")
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "from ranklearn.cli.main import main; main()", "predict", "--model", str(model_file),
             "--data", str(small_files["test"]), "--out", "/dev/stdout"],
            stdout=slave, stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
    finally:
        os.close(slave)
    received = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the terminal's other end is closed and drained
            break
        if not chunk:
            break
        received += chunk
    os.close(master)
    assert proc.returncode == 0, proc.stderr
    assert received.decode().replace("\r\n", "\n") == expected_scores(model_file, small_files["test"])
    assert "wrote" in proc.stderr
    assert os.path.islink("/dev/stdout") and os.readlink("/dev/stdout") == link_before


def test_new_outputs_follow_the_umask_and_existing_ones_keep_their_mode(capsys, tmp_path, small_files, model_file):
    old = os.umask(0o022)
    try:
        fresh, shared = tmp_path / "fresh.ranklib", tmp_path / "shared.ranklib"
        shared.write_text("old")
        shared.chmod(0o664)
        for out in (fresh, shared):
            assert run(capsys, "export", "--model", model_file, "--format", "ranklib", "--out", out)[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
    assert stat.S_IMODE(shared.stat().st_mode) == 0o664 and shared.read_text().startswith("## LambdaMART")


def test_convert_refuses_to_overwrite_its_input(capsys, tmp_path, small_files):
    src = tmp_path / "in.txt"
    src.write_bytes(small_files["train"].read_bytes())
    before = src.read_bytes()
    (tmp_path / "alias.txt").symlink_to(src)
    for target in (src, tmp_path / "alias.txt", f"{tmp_path}/../{tmp_path.name}/./in.txt"):
        for layout in ("qid", "lightgbm"):
            code, _, err = run(capsys, "convert", src, target, "--to", layout)
            assert_one_line_error(code, err, "is the input file")
    assert src.read_bytes() == before


@pytest.mark.parametrize("command", ["train --save TRAIN", "train --save VALI", "train --save TRAIN.query",
                                     "predict --out MODEL", "predict --out TEST.query", "report --out TEST.query"])
def test_no_output_overwrites_an_input_or_its_query_file(capsys, tmp_path, small_files, model_file, command):
    files = {"MODEL": tmp_path / "m.json"}
    files["MODEL"].write_bytes(model_file.read_bytes())
    for name, key in (("train", "TRAIN"), ("vali", "VALI"), ("test", "TEST")):  # LightGBM's layout: X + X.query
        files[key] = tmp_path / f"{name}.lgb"
        assert run(capsys, "convert", small_files[name], files[key], "--to", "lightgbm")[0] == 0
        files[f"{key}.query"] = Path(f"{files[key]}.query")
    before = {k: p.read_bytes() for k, p in files.items()}
    verb, opt, target = command.split()
    args = {
        "train": ["--train", files["TRAIN"], "--validate", files["VALI"], "--model", "linear"],
        "predict": ["--model", files["MODEL"], "--data", files["TEST"]],
        "report": ["--model", files["MODEL"], "--data", files["TEST"]],
    }[verb]
    code, _, err = run(capsys, verb, *args, opt, files[target])
    assert_one_line_error(code, err, "is the input file", "destroy the input")
    assert {k: p.read_bytes() for k, p in files.items()} == before


@pytest.mark.parametrize("command", ["convert - OUT --to lightgbm", "convert - OUT --to qid", "predict --data - --out OUT"])
def test_no_output_overwrites_the_file_standard_input_reads(tmp_path, small_files, model_file, command):
    # "-" was never compared with an output: `convert - data.txt < data.txt` replaced the data
    from _helpers import RANKLEARN

    data = tmp_path / "data.txt"
    data.write_bytes(small_files["test"].read_bytes())
    before = data.read_bytes()
    args = [str(data) if a == "OUT" else a for a in command.split()]
    if args[0] == "predict":
        args += ["--model", str(model_file)]
    for spelling in (args, [("/dev/stdin" if a == str(data) else a) for a in args]):
        with data.open("rb") as stdin:
            out = subprocess.run([str(RANKLEARN), *spelling], stdin=stdin, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith("ranklearn: error: ") and out.stderr.count("\n") == 1, out.stderr
        assert "is the file standard input reads" in out.stderr
        assert data.read_bytes() == before


@pytest.mark.parametrize("out", ["new/", "exists.txt/"])
def test_an_output_ending_in_slash_is_refused(capsys, tmp_path, small_files, model_file, out, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exists.txt").write_text("old")
    for args in (["predict", "--model", model_file, "--data", small_files["test"], "--out", out],
                 ["train", "--train", small_files["train"], "--model", "linear", "--save", out],
                 ["convert", small_files["test"], out, "--to", "qid"]):  # fmt: skip
        code, _, err = run(capsys, *args)
        assert_one_line_error(code, err, repr(out), "ends with / but is not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exists.txt"] and (tmp_path / "exists.txt").read_text() == "old"


@pytest.mark.parametrize("target", ["/dev/stdout", "/proc/self/fd/1", "-", "/dev/null"])
def test_convert_to_lightgbm_refuses_standard_output(capsys, small_files, target):
    code, _, err = run(capsys, "convert", small_files["test"], target, "--to", "lightgbm")
    assert_one_line_error(code, err, "OUT cannot be standard output or a device")
    assert not os.path.exists(f"{target}.query")


def test_convert_to_lightgbm_into_dev_shm(capsys, small_files):
    """/dev/shm holds ordinary files (a tmpfs): OUT and OUT.query are made there."""
    import tempfile

    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm here")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as folder:
        target = Path(folder) / "x.lgb"
        code, _, err = run(capsys, "convert", small_files["test"], target, "--to", "lightgbm")
        assert code == 0, err
        assert target.is_file() and Path(f"{target}.query").is_file()


@pytest.mark.parametrize("name", ["/dev/stdout", "LINK"])
@pytest.mark.parametrize("into", ["file", "pipe"])
def test_train_save_to_dev_stdout_keeps_the_model_whole(tmp_path, small_files, name, into):
    """The table goes to stderr when the model goes to standard output under any of its names."""
    from ranklearn.io import load_model

    (tmp_path / "link").symlink_to("/dev/stdout")
    args = [RANKLEARN, "train", "--train", small_files["train"], "--model", "linear", "--save",
            {"LINK": tmp_path / "link"}.get(name, name)]  # fmt: skip
    out = tmp_path / "model.json"
    if into == "file":
        with open(out, "wb") as fh:
            proc = subprocess.run(args, stdout=fh, stderr=subprocess.PIPE, timeout=120)
    else:
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        out.write_bytes(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert b"conventions: gain=2^rel-1" in proc.stderr  # the table's last line, on stderr
    assert load_model(out).n_features_in_ == 6


def test_a_missing_option_value_points_to_its_commands_help(capsys, small_files):
    code, _, err = run(capsys, "train", "--train")
    assert_one_line_error(code, err, "'--train' requires an argument", "(see 'ranklearn train --help')")


def test_a_bad_run_tag_is_named_before_any_work(capsys, tmp_path):
    code, _, err = run(capsys, "predict", "--model", tmp_path / "missing.json", "--data", tmp_path / "missing.txt",
                       "--out", tmp_path / "run.txt", "--format", "trec", "--run-tag", "my run")  # fmt: skip
    assert_one_line_error(code, err, "--run-tag must be one word", "'my run'")


def test_convert_failing_part_way_writes_nothing(capsys, tmp_path, small_files):
    out = tmp_path / "out.lgb"
    Path(f"{out}.query").mkdir()
    code, _, err = run(capsys, "convert", small_files["train"], out, "--to", "lightgbm")
    assert_one_line_error(code, err, "out.lgb.query", "directory")
    assert not out.exists()


def test_convert_says_lightgbm_drops_qids_and_comments(capsys, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("2 qid:007 1:0.5 #docid = A\n0 qid:007 1:0.1 #docid = B\n1 qid:12 2:1 #docid = C\n")
    code, _, err = run(capsys, "convert", src, tmp_path / "out.lgb", "--to", "lightgbm")
    assert code == 0
    assert err.startswith("ranklearn: warning: LightGBM's layout has no qids or comments")
    assert "(first qid: 007)" in err and "numbers the queries 0 to 1" in err  # qids as written


def test_convert_to_dash_and_info_from_dash(capsys, tmp_path, small_files, monkeypatch):
    import io

    code, out, err = run(capsys, "convert", small_files["test"], "-", "--to", "qid")
    assert code == 0 and out.encode() == small_files["test"].read_bytes() and "wrote" in err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(small_files["test"].read_bytes())))
    code, out, err = run(capsys, "info", "-")
    assert code == 0, err
    assert "<stdin>" in out and "15" in out


def test_evaluate_scores_from_stdin(capsys, tmp_path, small_files, model_file, monkeypatch):
    import io

    scores = tmp_path / "s.txt"
    scores.write_text(expected_scores(model_file, small_files["test"]))
    code, from_file, _ = run(capsys, "evaluate", "--data", small_files["test"], "--scores", scores, "--json")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(scores.read_bytes())))
    code2, from_stdin, err = run(capsys, "evaluate", "--data", small_files["test"], "--scores", "-", "--json")
    assert code == code2 == 0, err
    assert json.loads(from_stdin) == json.loads(from_file)
    assert_one_line_error(*run(capsys, "evaluate", "--data", "-", "--scores", "-")[::2], "standard input")


# --- issue 16: sparse files and reappearing qids at predict/evaluate ------------------------------------
def test_predict_pads_a_file_without_trailing_features(capsys, tmp_path, small_files, model_file):
    from ranklearn.data import load_svmlight
    from ranklearn.io import load_model

    full = load_svmlight(small_files["test"])
    assert full.n_features == 6
    # the same rows with feature 6 left out wherever it is zero, and dropped entirely: ids up to 5 only
    lines = [" ".join(t for t in line.split() if not t.startswith("6:")) for line in small_files["test"].read_text().splitlines()]
    sparse = tmp_path / "sparse.txt"
    sparse.write_text("\n".join(lines) + "\n")
    out = tmp_path / "s.txt"
    code, _, err = run(capsys, "predict", "--model", model_file, "--data", sparse, "--out", out)
    assert code == 0, err
    X = full.X.copy()
    X[:, 5] = 0
    assert [float(v) for v in out.read_text().split()] == load_model(model_file).predict(X).tolist()
    wide = tmp_path / "wide.txt"
    wide.write_text("1 qid:1 1:0.5\n0 qid:1 2:0.5 7:1\n")
    code, _, err = run(capsys, "predict", "--model", model_file, "--data", wide, "--out", out)
    assert_one_line_error(code, err, f"{wide}:2:", "feature 7", "trained on 6", "'7:1'")


def test_predict_needs_no_groups(capsys, tmp_path, small_files, model_file, monkeypatch):
    """Scores need no queries: a file without qids and without a .query file, also from stdin."""
    import io

    from ranklearn.data import load_svmlight
    from ranklearn.io import load_model

    ds = load_svmlight(small_files["test"])
    bare = tmp_path / "bare.txt"  # LightGBM's layout with its .query file gone
    assert run(capsys, "convert", small_files["test"], bare, "--to", "lightgbm")[0] == 0
    Path(f"{bare}.query").unlink()
    expected = [float(v) for v in load_model(model_file).predict(ds.X)]
    out = tmp_path / "s.txt"
    code, _, err = run(capsys, "predict", "--model", model_file, "--data", bare, "--out", out)
    assert code == 0, err
    assert [float(v) for v in out.read_text().split()] == expected
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bare.read_bytes())))
    code, got, err = run(capsys, "predict", "--model", model_file, "--data", "-", "--out", "-")
    assert code == 0, err
    assert [float(v) for v in got.split()] == expected
    code, _, err = run(capsys, "predict", "--model", model_file, "--data", bare, "--out", out, "--format", "trec")
    assert_one_line_error(code, err, "missing qid")  # a run does need its queries


def test_train_pads_validation_and_test_files_to_the_training_width(capsys, tmp_path, small_files):
    from ranklearn.data import load_svmlight
    from ranklearn.io import load_model
    from ranklearn.metrics import get_metric

    narrow = tmp_path / "vali.txt"  # feature 6 left out of every line: the file is 5 features wide
    narrow.write_text("\n".join(" ".join(t for t in line.split() if not t.startswith("6:"))
                                 for line in small_files["vali"].read_text().splitlines()) + "\n")  # fmt: skip
    model = tmp_path / "m.json"
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--validate", narrow, "--test", narrow,
                         "--model", "linear", "--save", model)  # fmt: skip
    assert code == 0, err
    padded = load_svmlight(narrow, n_features=6)
    expected = get_metric("ndcg@10").mean(padded.y, load_model(model).predict(padded.X), padded.ptr)
    assert f"{expected:.4f}" in out
    wide = tmp_path / "wide.txt"
    wide.write_text("1 qid:1 1:0.5\n0 qid:1 2:0.5 7:1\n")
    for option in ("--validate", "--test"):  # named before any training
        code, _, err = run(capsys, "train", "--train", small_files["train"], option, wide, "--model", "linear",
                           "--save", tmp_path / "w.json")  # fmt: skip
        assert_one_line_error(code, err, f"{wide}:2:", "feature 7 is beyond the training file's features (6)")
        assert "solve" not in err and not (tmp_path / "w.json").exists()


def test_convert_keeps_every_value_as_written(capsys, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("1 qid:1 1:0.123456789012345 2:16777217\n0 qid:1 1:0.03703703703703703 2:-1e-300\n")
    out = tmp_path / "out.txt"
    assert run(capsys, "convert", src, out, "--to", "qid")[0] == 0
    assert out.read_text() == src.read_text()  # float32 would write 0.12345679 and 16777216


def test_qids_keep_their_leading_zeros(capsys, tmp_path, model_file):
    """qid:007 stays 007: a qrels file made from the data file matches the run predict writes."""
    src = tmp_path / "in.txt"
    src.write_text("2 qid:007 1:0.5 #docid = A\n0 qid:007 1:0.1 #docid = B\n1 qid:12 2:1 #docid = C\n")
    out = tmp_path / "out.txt"
    assert run(capsys, "convert", src, out, "--to", "qid")[0] == 0
    assert out.read_text() == src.read_text()
    qrels = tmp_path / "qrels"
    qrels.write_text("007 0 A 2\n007 0 B 0\n")  # query 007 only: it must match the run's
    runfile = tmp_path / "run"
    assert run(capsys, "predict", "--model", model_file, "--data", src, "--out", runfile, "--format", "trec")[0] == 0
    assert sorted({line.split()[0] for line in runfile.read_text().splitlines()}) == ["007", "12"]
    code, got, err = run(capsys, "evaluate", "--qrels", qrels, "--run", runfile, "--metric", "p@1", "--json")
    assert code == 0, err  # with the run's 007 written 7 no query would match (exit 2)
    first = [line.split()[2] for line in runfile.read_text().splitlines() if line.split()[0] == "007"][0]
    assert json.loads(got)["p@1"] == (1.0 if first == "A" else 0.0)


def test_reappearing_qids_are_merged_with_a_warning(capsys, tmp_path, small_files, model_file):
    text = "2 qid:1 1:0.9\n0 qid:2 1:0.1\n1 qid:1 1:0.2\n1 qid:2 1:0.8\n0 qid:3 1:0.3\n"
    data = tmp_path / "cat.txt"
    data.write_text(text)
    code, out, err = run(capsys, "info", data)
    assert code == 0 and "3" in out
    assert err == f"ranklearn: warning: {data}: 2 qids reappear after other queries (first qid:1); the rows of " \
                  "each were merged into one query, keeping file order (--no-regroup refuses such files)\n"
    one = tmp_path / "one.txt"
    one.write_text("1 qid:a 1:1\n0 qid:b 1:2\n1 qid:a 1:3\n")
    assert run(capsys, "info", one)[2] == f"ranklearn: warning: {one}: 1 qid reappears after other queries " \
        "(qid:a); its rows were merged into one query, keeping file order (--no-regroup refuses such files)\n"
    code, _, err = run(capsys, "info", data, "--no-regroup")
    assert_one_line_error(code, err, f"{data}:3:", "qid:1 reappears", "leave out --no-regroup")
    # evaluate lines the scores up with the file's rows before regrouping: qid 1 gets 0.9, 0.2 (labels 2, 1),
    # qid 2 gets 0.1, 0.8 (labels 0, 1), qid 3 has no relevant document
    scores = write_scores(tmp_path / "s.txt", [0.9, 0.1, 0.2, 0.8, 0.3])
    code, out, err = run(capsys, "evaluate", "--data", data, "--scores", scores, "--metric", "ndcg", "--per-query", "--json")
    assert code == 0 and err.startswith("ranklearn: warning:")
    per_query = {row["qid"]: row["ndcg"] for row in json.loads(out)["per_query"]}
    assert per_query == {1: 1.0, 2: 1.0, 3: 0.0}
    # predict needs no groups: scores in the file's row order, no warning
    code, _, err = run(capsys, "predict", "--model", model_file, "--data", data, "--out", tmp_path / "p.txt")
    assert code == 0 and "warning" not in err
    from ranklearn.io import load_model

    X = np.zeros((5, 6), dtype=np.float32)
    X[:, 0] = [0.9, 0.1, 0.2, 0.8, 0.3]
    assert [float(v) for v in (tmp_path / "p.txt").read_text().split()] == load_model(model_file).predict(X).tolist()


# --- bad input: one line on stderr, exit status 2 (issue 5) ---------------------------------------
@pytest.mark.parametrize(
    "name,fragments",
    [
        ("inf_feature", ["inf_feature.txt:2:", "infinite feature value"]),
        ("inf_label", ["inf_label.txt:2:", "label is not finite"]),
        ("nan_label", ["nan_label.txt:2:", "label is not finite"]),
        ("text_label", ["text_label.txt:2:", "bad label"]),
        ("empty", ["empty.txt", "no data lines"]),
        ("comments_only", ["comments_only.txt", "no data lines"]),
        ("binary", ["binary.txt: not UTF-8 text: a binary file"]),
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
    import ranklearn.data.source as source_module

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(args[0]))

    monkeypatch.setattr(source_module, "open", refuse, raising=False)
    assert_one_line_error(*run(capsys, "info", files["ok"])[::2], "ok.txt", "Permission denied")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_cli_info_unreadable_file_for_real(capsys, tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text("1 qid:1 1:1\n")
    path.chmod(0)
    assert_one_line_error(*run(capsys, "info", path)[::2], "secret.txt", "Permission denied")


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
        ["train", "--train", files["huge_fid"], "--model", "lambdamart", "--n-estimators", "1"],
        ["evaluate", "--data", files["negative_label"], "--scores", files["scores2"]],
    ]
    for args in cases:
        proc = subprocess.run([RANKLEARN, *map(str, args)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("ranklearn: error: "), proc.stderr
        assert "Traceback" not in proc.stderr
