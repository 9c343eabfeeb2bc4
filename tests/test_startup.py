"""Start-up: a command imports only what it uses. Each command runs in a fresh process, which then
reports the libraries it imported (what is measured is the import graph, not time: the times are
``benchmarks/bench_startup.py``'s)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _helpers import small_data

from ranklearn.data import from_arrays, save_svmlight
from ranklearn.models import LambdaMART
from ranklearn.registry import get_spec

#: never needed to score a saved tree or linear model, or to evaluate a run
HEAVY = ("sklearn", "torch", "dask", "distributed", "pyspark", "pandas", "matplotlib")
#: ranklearn --version / --help load no numeric library at all (numba imports SciPy where it is installed)
NUMERIC = ("numpy", "numba", "scipy")
#: nor does a command on a small input: its kernels run interpreted (ranklearn._compilation)
SMALL_INPUT = frozenset({*HEAVY, "numba", "scipy"})

CHILD = """
import sys
sys.argv = ["ranklearn", *sys.argv[1:]]
from ranklearn.cli import run
try:
    run()
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print(" ".join(sorted({m.split(".")[0] for m in sys.modules})))
"""


def _imported(*args) -> set[str]:
    out = subprocess.run([sys.executable, "-c", CHILD, *map(str, args)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.splitlines()[-1].split())


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("startup")
    X, y, qid = small_data(n_queries=8, docs=10, n_features=4)
    save_svmlight(from_arrays(X, y, qid), root / "data.txt")
    LambdaMART(n_estimators=3, num_leaves=4, random_state=0).fit(X, y, qid).save(root / "trees.json")
    get_spec("linear").load_class()().fit(X, y, qid).save(root / "linear.json")
    (root / "scores.txt").write_text("".join(f"{v!r}\n" for v in X[:, 0].tolist()))
    (root / "qrels").write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    (root / "run").write_text("1 Q0 a 1 0.5 t\n1 Q0 b 2 0.4 t\n2 Q0 c 1 0.9 t\n")
    return root


@pytest.mark.parametrize("args", [["--version"], ["--help"]], ids=["version", "help"])
def test_version_and_help_load_no_numeric_library(args):
    imported = _imported(*args)
    assert "ranklearn" in imported and "typer" in imported  # what was measured is the command's process
    assert not imported & {*HEAVY, *NUMERIC, "markdown_it"}, sorted(imported & {*HEAVY, *NUMERIC, "markdown_it"})


@pytest.mark.parametrize("args", [["--help"], ["predict", "--help"], ["trec-eval", "-h"]])
def test_help_without_rich_markdown_is_typers_help(args):
    """The help formatter is imported without rich.markdown (markdown-it): the same page as with it."""
    run = [sys.executable, "-c", CHILD, *args]
    fast = subprocess.run(run, capture_output=True, text=True, timeout=600)
    first = "import rich.markdown\n"  # imported first: typer's formatter gets the real module
    plain = subprocess.run([*run[:2], first + CHILD, *args], capture_output=True, text=True, timeout=600)
    page = fast.stdout.rsplit("\n", 2)[0]  # less the child's list of modules
    assert fast.returncode == plain.returncode == 0 and "Usage: ranklearn" in page
    assert page == plain.stdout.rsplit("\n", 2)[0]


@pytest.mark.parametrize("model", ["trees", "linear"])
def test_predict_of_a_tree_or_linear_model_on_few_rows_needs_no_numba(model, inputs, tmp_path):
    """Few rows are read by the parser interpreted and scored in numpy or by the linear kernel
    interpreted (ranklearn._compilation): importing numba (and SciPy with it) would cost more than the work."""
    out = tmp_path / "scores"
    imported = _imported("predict", "--model", inputs / f"{model}.json", "--data", inputs / "data.txt", "--out", out)
    assert len(out.read_text().split()) == 80  # it did score
    assert not imported & SMALL_INPUT, sorted(imported & SMALL_INPUT)


def test_evaluate_of_a_small_file_needs_no_numba_and_trec_eval_no_scikit_learn(inputs):
    """The metrics of a small run are the kernel's, interpreted; trec-eval's reader and measures are compiled."""
    imported = _imported("evaluate", "--data", inputs / "data.txt", "--scores", inputs / "scores.txt")
    assert "ranklearn" in imported and not imported & SMALL_INPUT, sorted(imported & SMALL_INPUT)
    imported = _imported("trec-eval", inputs / "qrels", inputs / "run")
    assert "numba" in imported and not imported & set(HEAVY), sorted(imported & set(HEAVY))


def test_a_larger_input_runs_the_compiled_kernels(inputs, tmp_path):
    """Past the small-input limits, the same commands import numba and run its kernels."""
    from ranklearn.data.svmlight import INTERPRETED_BYTES

    big = tmp_path / "big.txt"
    line = "1 qid:1 " + " ".join(f"{j}:0.123456" for j in range(1, 5)) + "\n"
    big.write_text(line * (INTERPRETED_BYTES // len(line) + 1))
    imported = _imported("predict", "--model", inputs / "trees.json", "--data", big, "--out", tmp_path / "s")
    assert "numba" in imported and len((tmp_path / "s").read_text().split()) == INTERPRETED_BYTES // len(line) + 1


def test_predict_of_part_of_a_model_builds_the_estimator(inputs, tmp_path):
    """--iterations needs the estimator's parts: scikit-learn comes in, and only then."""
    imported = _imported("predict", "--model", inputs / "trees.json", "--data", inputs / "data.txt",
                         "--out", tmp_path / "s", "--iterations", "2")  # fmt: skip
    assert "sklearn" in imported


def test_importing_the_clicks_package_loads_no_heavy_library():
    """``import ranklearn.clicks`` (logs, simulators, propensities, the IPW click DCG) stays light:
    scikit-learn and the rest load only where a function needs them."""
    code = "import sys, ranklearn.clicks; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    imported = set(out.stdout.split())
    assert "ranklearn" in imported and not imported & set(HEAVY), sorted(imported & set(HEAVY))
