"""``ranklearn warm-up`` fills numba's cache: afterwards the common paths compile nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from _helpers import assert_one_line_error, run

from ranklearn.registry import REGISTRY
from ranklearn.warmup import warm_up

CLI = "import sys; from ranklearn.cli.main import main; main(sys.argv[1:])"
# counts the ranklearn kernels numba compiles in the process
COUNTER = """
import sys
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        name = ev.data["dispatcher"].py_func.__module__
        if name.startswith("ranklearn."):
            compiled.append(name + "." + ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
"""
READ = """
from ranklearn.data import load_svmlight
load_svmlight(sys.argv[1])
print(len(compiled), sorted(set(compiled)))
"""
# a file read, fit with an eval set, predict (a batch, a few rows), NDCG
COMMON_PATH = COUNTER + """
from ranklearn.data import load_svmlight
from ranklearn.datasets import make_ranking
from ranklearn.metrics import get_metric
from ranklearn.models import LambdaMART
from ranklearn.data.groups import group_ptr
X, y, qid = make_ranking(40, 12, random_state=1, return_X_y=True)
model = LambdaMART(n_estimators=5, random_state=0).fit(X, y, qid, eval_set=[(X, y, qid)])
get_metric("ndcg@10").mean(y, model.predict(X), group_ptr(qid))
model.predict(X[:7])
load_svmlight(sys.argv[1])
print(len(compiled), sorted(set(compiled)))
"""


def test_after_warm_up_the_common_path_compiles_nothing(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    data = tmp_path / "d.txt"
    data.write_text("2 qid:7 1:0.5 2:1 # docid = x\n0 qid:7 1:0.1\n")

    first = subprocess.run([sys.executable, "-c", CLI, "warm-up", "--jobs", "2"], env=env, capture_output=True,
                           text=True, timeout=900)  # fmt: skip
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0].startswith("ranklearn: warming up numba's cache (" + str(tmp_path / "cache"))
    assert "2 process(es)" in lines[0] and lines[-1].startswith("ranklearn: kernels ready in ")
    assert len(lines) == 4 and all(re.search(r" \d+ kernels? compiled in ", line) for line in lines[1:3]), first.stdout

    after = subprocess.run([sys.executable, "-c", COMMON_PATH, str(data)], env=env, capture_output=True, text=True,
                           timeout=600)  # fmt: skip
    assert after.returncode == 0, after.stderr
    assert after.stdout.startswith("0 []"), after.stdout

    # the command line's common paths too: no "compiling" note in a pipe
    model, scores = tmp_path / "m.json", tmp_path / "s.txt"
    data.write_text("".join(f"{(i * 7) % 3} qid:{i // 6} 1:{i % 5} 2:{(i * 3) % 7} # docid = d{i}\n" for i in range(60)))
    for args in (["train", "--train", data, "--validate", data, "--model", "lambdamart", "--n-estimators", "3", "--save", model],
                 ["predict", "--model", model, "--data", data, "--out", scores],
                 ["evaluate", "--data", data, "--scores", scores, "--metric", "ndcg@10", "--metric", "err@10"]):
        out = subprocess.run([sys.executable, "-c", CLI, *map(str, args)], env=env, capture_output=True, text=True,
                             timeout=600)  # fmt: skip
        assert out.returncode == 0 and "compiling kernels" not in out.stderr, (args[0], out.stderr)

    again = subprocess.run([sys.executable, "-c", CLI, "warm-up", "--jobs", "1"], env=env, capture_output=True,
                           text=True, timeout=600)  # fmt: skip
    groups = again.stdout.splitlines()[1:3]
    assert again.returncode == 0 and all(": all from the cache (" in line for line in groups), again.stdout
    assert again.stdout.splitlines()[-1].endswith("(all from the cache, nothing compiled)"), again.stdout


def test_the_count_sees_compilation(tmp_path):
    """The check above can fail: with an empty cache the same counter sees the reader's kernels compile."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    data = tmp_path / "d.txt"
    data.write_text("2 qid:7 1:0.5 2:1\n0 qid:7 1:0.1\n")
    out = subprocess.run([sys.executable, "-c", COUNTER + READ, str(data)], env=env, capture_output=True, text=True,
                         timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[0]) >= 2 and "_svmlight_kernel.parse_svmlight" in out.stdout, out.stdout


def test_jobs_must_be_positive(capsys):
    with pytest.raises(ValueError, match="jobs must be >= 1, got 0"):
        warm_up(0)
    assert_one_line_error(*run(capsys, "warm-up", "--jobs", "0")[::2], "--jobs")


def test_a_warm_cache_is_not_called_compiling(monkeypatch):
    # every group loads from the cache: no line may say that kernels are being compiled
    import ranklearn.warmup as W

    monkeypatch.setattr(W, "_run_group", lambda name: (0, 0.25))
    lines: list[str] = []
    warm_up(1, echo=lines.append)
    assert not any("compiling" in line for line in lines), lines
    assert lines[-1].startswith("ranklearn: kernels ready in ") and lines[-1].endswith("(all from the cache, nothing compiled)")
    assert lines[1:-1] == [f"  {name}: all from the cache (0.2 s)" for name in W.GROUPS]


def check_warmed_up(spec, monkeypatch) -> None:
    """``spec``'s ranker is fitted and predicts in its warm-up group (``ModelSpec.warmup``)."""
    import importlib.util

    import ranklearn.warmup as W
    from ranklearn.registry import WARMUP_GROUPS

    assert spec.warmup in WARMUP_GROUPS, f"{spec.name} is in no warm-up group"
    if spec.extra == "neural" and importlib.util.find_spec("torch") is None:
        assert spec.name not in W.group_models(spec.warmup)  # the warm-up without torch leaves it out
        pytest.skip(f"{spec.name} needs torch")
    assert spec.name in W.group_models(spec.warmup)
    cls = spec.load_class()
    calls = []
    fit, predict = cls.fit, cls.predict
    monkeypatch.setattr(cls, "fit", lambda self, *a, **k: calls.append("fit") or fit(self, *a, **k))
    monkeypatch.setattr(cls, "predict", lambda self, *a, **k: calls.append("predict") or predict(self, *a, **k))
    W.fit_models([spec.name])
    assert calls == ["fit", "predict", "predict"]


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_registered_ranker_is_warmed_up(name, monkeypatch):
    check_warmed_up(REGISTRY[name], monkeypatch)


def test_cache_location_names_every_kernel_s_folder():
    """The header names where all kernels go: the package's ``__pycache__`` folders (beside each
    module, not only the metrics'), or NUMBA_CACHE_DIR, which holds a folder per module."""
    import ranklearn

    code = "from ranklearn.warmup import cache_location; print(cache_location())"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    beside = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    package = os.path.dirname(ranklearn.__file__)
    if os.access(package, os.W_OK):  # numba writes beside the sources only where it may
        assert beside.stdout.strip() == f"the __pycache__ folders under {package}", beside.stderr
    elsewhere = subprocess.run([sys.executable, "-c", code], env={**env, "NUMBA_CACHE_DIR": "/tmp/rl-cache-x"},
                               capture_output=True, text=True, timeout=120)  # fmt: skip
    assert elsewhere.stdout.strip() == "/tmp/rl-cache-x", elsewhere.stderr
