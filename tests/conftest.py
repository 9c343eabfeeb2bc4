"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from _helpers import small_data

from ranklearn.cli.main import main
from ranklearn.data import from_arrays, save_svmlight
from ranklearn.datasets import make_ranking_splits
from ranklearn.models import LambdaMART

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session", autouse=True)
def private_running_fits(tmp_path_factory):
    """The suite's fits share CPUs among themselves only, not with a benchmark running beside it."""
    import ranklearn._threads as threads

    before = threads.RUNNING_FITS
    threads.RUNNING_FITS = threads.RunningFits(tmp_path_factory.mktemp("running-fits"))
    yield
    threads.RUNNING_FITS = before


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only real data folder (``../shared/data`` next to the repo); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not available at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Small good, odd and malformed data, scores and model files for the command-line tests."""
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
    code = main_ok(["train", "--train", paths["ok"], "--model", "lambdamart", "--n-estimators", "2", "--save", root / "m.json"])
    assert code == 0
    paths["model"] = root / "m.json"
    return paths


def main_ok(args) -> int:
    """Run ``ranklearn ARGS`` in-process; return the exit status."""
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        return 0 if exc.code is None else exc.code
    return 0


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    """A small saved LambdaMART model, with its training data written beside it as data.txt."""
    X, y, qid = small_data(n_queries=10, docs=12)
    path = tmp_path_factory.mktemp("model") / "model.json"
    save_svmlight(from_arrays(X, y, qid), path.with_name("data.txt"))
    LambdaMART(n_estimators=4, num_leaves=4, min_samples_leaf=3, random_state=0).fit(X, y, qid=qid).save(path)
    return path


@pytest.fixture(scope="module")
def splits():
    """Synthetic train / validation / test (X, y, qid) for the LambdaMART and RankLib tests."""
    s = make_ranking_splits((200, 60, 60), n_features=12, random_state=0)
    return [(d.X, d.y, d.qid) for d in (s.train, s.vali, s.test)]


@pytest.fixture(scope="module")
def fitted(splits):
    """A 40-tree LambdaMART fitted on ``splits`` with the validation set as eval set."""
    tr, va, _ = splits
    return LambdaMART(n_estimators=40, num_leaves=15, random_state=0).fit(*tr, eval_set=[va])
