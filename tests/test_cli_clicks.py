"""ranklearn simulate-clicks: the library's log, reproducible, --aggregate's three files, one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.clicks import DCM, PBM, ClickLog, simulate
from ranklearn.data import from_arrays, load_svmlight, save_svmlight
from ranklearn.models import LambdaMART
from _helpers import TINY_TREES, assert_one_line_error, run, small_data


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("clicks")
    X, y, qid = small_data(n_queries=8, docs=12)
    ds = from_arrays(X, y, qid)
    data = root / "train.txt"
    save_svmlight(ds, data)
    model = LambdaMART(**TINY_TREES).fit(X, y, qid=qid)
    model.save(root / "m.json")
    other = LambdaMART(**{**TINY_TREES, "n_estimators": 1}).fit(X, 2 - y, qid=qid)  # another ranking
    other.save(root / "m2.json")
    return root, load_svmlight(data), data, [model, other]


def test_the_log_is_the_librarys(capsys, setup):
    root, ds, data, (model, _) = setup
    out = root / "clicks.tsv"
    args = ["simulate-clicks", "--data", data, "--logging-model", root / "m.json", "--click-model", "pbm",
            "--sessions", 500, "--eta", 2, "--seed", 3, "--out", out]  # fmt: skip
    code, stdout, err = run(capsys, *args)
    assert code == 0, err
    assert "5,000 impressions of 500 sessions" in " ".join(stdout.split())
    expected = simulate(ds, model.predict(ds.X), PBM(eta=2.0), n_sessions=500, seed=3)
    got = ClickLog.read(out)
    for f in ("query", "session", "document", "position", "click"):
        assert np.array_equal(getattr(got, f), getattr(expected, f)), f
    first = out.read_bytes()
    code, _, err = run(capsys, *args)
    assert code == 0, err
    assert out.read_bytes() == first  # same seed, same file


def test_options_reach_the_model_and_the_simulator(capsys, setup):
    root, ds, data, models = setup
    out = root / "dcm.parquet"
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    code, _, err = run(capsys, "simulate-clicks", "--data", data, "--logging-model", root / "m.json",
                       "--logging-model", root / "m2.json", "--click-model", "dcm", "--continuation", 0.3,
                       "--epsilon", 0.2, "--sessions", 300, "--top-k", 5, "--temperature", 0.5, "--swap",
                       "--out", out)  # fmt: skip
    assert code == 0, err
    scores = np.stack([m.predict(ds.X) for m in models])
    expected = simulate(ds, scores, DCM(continuation=0.3, epsilon=0.2), n_sessions=300, top_k=5, temperature=0.5,
                        intervention="swap", seed=0)  # fmt: skip
    got = ClickLog.read(out)
    for f in ("query", "session", "document", "position", "click", "swap"):
        assert np.array_equal(getattr(got, f), getattr(expected, f)), f


def test_aggregate_writes_data_positions_and_weights(capsys, setup):
    root, ds, data, (model, _) = setup
    out = root / "agg.txt"
    code, stdout, err = run(capsys, "simulate-clicks", "--data", data, "--logging-model", root / "m.json",
                            "--sessions", 400, "--seed", 1, "--out", out, "--aggregate")  # fmt: skip
    assert code == 0, err
    log = simulate(ds, model.predict(ds.X), PBM(), n_sessions=400, seed=1)
    expected = log.training_set(ds)
    with pytest.warns(UserWarning, match=r"agg\.txt\.weight \(per-row weights, LightGBM's weight file\) is not read"):
        back = load_svmlight(out)  # reads agg.txt.position by itself, says it does not read agg.txt.weight
    assert np.array_equal(back.position, expected.position)
    assert np.array_equal(back.y, expected.y) and np.array_equal(back.qid, expected.qid)
    assert np.allclose(back.X, expected.X)
    weights = np.loadtxt(f"{out}.weight")
    assert np.array_equal(weights, expected.sample_weight) and weights.sum() == len(log)


def test_aggregate_per_session_is_the_protocol_s_training_set_and_trains_from_the_command_line(capsys, setup):
    """--per-session writes ClickTrainingSet.per_pattern (one group per distinct session, 0/1
    clicks, weights = sessions); ranklearn train on it with --unbiased is LambdaMART on those rows."""
    from ranklearn.clicks import ClickTrainingSet
    from ranklearn.io import load_model

    root, ds, data, (model, _) = setup
    out = root / "sessions.txt"
    code, said, err = run(capsys, "simulate-clicks", "--data", data, "--logging-model", root / "m.json",
                          "--sessions", 400, "--seed", 1, "--out", out, "--aggregate", "--per-session")  # fmt: skip
    assert code == 0 and "rows in groups of distinct sessions" in said + err, err
    expected = ClickTrainingSet.per_pattern(simulate(ds, model.predict(ds.X), PBM(), n_sessions=400, seed=1), ds)
    with pytest.warns(UserWarning, match="is not read"):
        back = load_svmlight(out)
    assert np.array_equal(back.y, expected.y) and set(np.unique(back.y)) <= {0.0, 1.0}
    assert np.array_equal(back.position, expected.position) and np.array_equal(back.qid, expected.qid)
    assert np.array_equal(np.loadtxt(f"{out}.weight"), expected.sample_weight) and expected.sample_weight.sum() > 400
    code, _, err = run(capsys, "train", "--model", "lambdamart", "--train", out, "--unbiased", "pairwise",
                       "--n-estimators", "3", "--leaves", "4", "--seed", "0", "--save", root / "u.json")  # fmt: skip
    assert code == 0 and "weights from" in err and "positions from" in err, err
    ref = LambdaMART(n_estimators=3, num_leaves=4, random_state=0, unbiased="pairwise")
    ref.fit(expected.X, expected.y, qid=expected.qid, sample_weight=expected.sample_weight, position=expected.position)
    np.testing.assert_allclose(load_model(root / "u.json").predict(ds.X), ref.predict(ds.X), rtol=1e-6)


@pytest.mark.parametrize(
    "extra, fragments",
    [
        (["--click-model", "cascade", "--eta", "2"], ["--click-model cascade takes --epsilon, not --eta"]),
        (["--epsilon", "1.5"], ["epsilon must be a probability"]),
        (["--click-model", "nosuch"], ["nosuch"]),
        (["--sessions", "0"], ["--sessions"]),
        (["--temperature", "0"], ["temperature must be > 0"]),
        (["--aggregate", "--out", "-"], ["--aggregate writes OUT, OUT.position and OUT.weight together"]),
        (["--per-session"], ["--per-session shapes the rows of --aggregate: give --aggregate too"]),
        (["--aggregate", "--out", "agg.parquet"], ["--aggregate writes SVMlight text", "OUT cannot be a Parquet file (agg.parquet)"]),
    ],
)
def test_bad_options_are_one_line(capsys, setup, extra, fragments):
    root, _, data, _ = setup
    args = ["simulate-clicks", "--data", data, "--logging-model", root / "m.json", "--sessions", 10, "--out", root / "x.tsv"]
    code, _, err = run(capsys, *args, *extra)
    assert_one_line_error(code, err, *fragments)


def test_bad_inputs_are_one_line(capsys, setup, tmp_path):
    root, _, data, _ = setup
    code, _, err = run(capsys, "simulate-clicks", "--data", tmp_path / "none.txt", "--logging-model", root / "m.json",
                       "--sessions", 10, "--out", tmp_path / "x.tsv")  # fmt: skip
    assert_one_line_error(code, err, "none.txt")
    negative = tmp_path / "neg.txt"
    negative.write_text("1 qid:1 1:1 2:0 3:0 4:0\n-1 qid:1 1:2 2:0 3:0 4:0\n")
    code, _, err = run(capsys, "simulate-clicks", "--data", negative, "--logging-model", root / "m.json",
                       "--sessions", 10, "--out", tmp_path / "x.tsv")  # fmt: skip
    assert_one_line_error(code, err, f"{negative}:2:", "labels must be >= 0")
    code, _, err = run(capsys, "simulate-clicks", "--data", data, "--logging-model", root / "m.json",
                       "--sessions", 10, "--out", data)  # fmt: skip
    assert_one_line_error(code, err, "would destroy the input")


def test_help_names_which_model_takes_which_option(capsys):
    code, out, _ = run(capsys, "simulate-clicks", "--help")
    text = " ".join(out.replace("│", " ").split())
    assert code == 0 and "[pbm, ubm, trust] Position-bias severity" in text and "[dcm] Probability" in text


def test_randpair_reaches_the_simulator_and_is_checked(capsys, setup):
    root, ds, data, (model, _) = setup
    out = root / "randpair.tsv"
    code, _, err = run(capsys, "simulate-clicks", "--data", data, "--logging-model", root / "m.json",
                       "--sessions", 300, "--top-k", 5, "--randpair", 3, "--seed", 2, "--out", out)  # fmt: skip
    assert code == 0, err
    expected = simulate(ds, model.predict(ds.X), PBM(), n_sessions=300, top_k=5, intervention="randpair", pivot=3,
                        seed=2)  # fmt: skip
    got = ClickLog.read(out)
    for f in ("document", "position", "click", "swap", "pivot"):
        assert np.array_equal(getattr(got, f), getattr(expected, f)), f
    for extra, fragment in ((["--randpair", 6], "--randpair must be a rank from 1 to --top-k (5), got 6"),
                            (["--randpair", 2, "--swap"], "--swap and --randpair are two interventions")):
        code, _, err = run(capsys, "simulate-clicks", "--data", data, "--logging-model", root / "m.json",
                           "--sessions", 10, "--top-k", 5, "--out", root / "bad.tsv", *extra)  # fmt: skip
        assert_one_line_error(code, err, fragment)
        assert not (root / "bad.tsv").exists()
