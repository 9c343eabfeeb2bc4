"""Compile ranklearn's kernels once, ahead of use, into numba's on-disk cache.

``ranklearn warm-up`` (or ``python -m ranklearn.warmup``) runs the common paths on tiny data —
reading an SVMlight file, simulating clicks, every metric, trec-eval's reader and measures, fitting and
predicting with every ranker that needs no extra — so that numba compiles their kernels and
stores them (``cache=True``). Later processes load the machine code in milliseconds instead
of compiling for tens of seconds.
``make demo`` and ``make test`` run it right after ``pip install``.

Where the cache goes is numba's choice: ``__pycache__`` next to the sources when that is
writable (an editable or a user install), else the user's cache directory
(``~/.cache/numba``, or ``NUMBA_CACHE_DIR``) when site-packages is read-only. A cache entry
is tied to its source file's timestamp: editing a module recompiles its kernels on next use,
but not the cached kernels of other modules that call them (delete the cache after such an edit).

The work is split into two groups that run in two processes when ``jobs`` >= 2: the tree
kernels (binning, histograms, gradients, splits, prediction) and the rest (data loading,
metrics, the linear rankers, and the neural rankers when torch is installed). A kernel both
use (the metrics, for early stopping) may be compiled by both.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np

#: iteration parameters cut down to a few: the warm-up needs every code path, not a good model
_SHORT = {"n_estimators": 3, "line_search_steps": 3, "early_stopping_rounds": 2}
METRICS = ("ndcg@10", "dcg@10", "err@10", "map", "p@10", "rr@10")


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from ranklearn.datasets import make_ranking

    # 30 queries of 5-60 documents: more rows than the predictor's serial limit (256)
    return make_ranking(30, 8, random_state=0, return_X_y=True)


def group_models(group: str) -> list[str]:
    """The registered rankers the warm-up ``group`` fits (``ModelSpec.warmup``): those that need no
    extra, and the neural ones when torch is installed (make demo's extra)."""
    from ranklearn.registry import REGISTRY

    extras = {None} | ({"neural"} if importlib.util.find_spec("torch") is not None else set())
    return [name for name, spec in REGISTRY.items() if spec.warmup == group and spec.extra in extras]


def fit_models(names: list[str]) -> None:
    """Fit each ranker of ``names`` on tiny data with an evaluation set (its demo settings, its
    iterations cut short) and predict with it: a batch and a few rows."""
    from ranklearn.registry import get_spec

    X, y, qid = _data()
    for name in names:
        cls = get_spec(name).load_class()
        accepted = cls().get_params()
        params = {**get_spec(name).demo, **{k: v for k, v in _SHORT.items() if k in accepted}}
        model = cls(**params).fit(X, y, qid, eval_set=[(X, y, qid)])
        model.predict(X)  # batch: the parallel kernels
        model.predict(X[:20])  # a small batch: the serial ones


def _trees() -> None:
    from ranklearn.collective import StarComm
    from ranklearn.models import LambdaMART
    from ranklearn.tree.allreduce_builder import AllreduceHistogramBuilder
    from ranklearn.tree.grower import TreeGrower

    X, y, qid = _data()
    model = LambdaMART(n_estimators=2).fit(X, y, qid)  # no eval set: the metrics are the other group's
    model.predict(X)
    fit_models(group_models("trees"))
    # a Dask worker's tree (ranklearn.dask): the builder that sums over workers, here one
    binned, n_bins = model.bin_mapper_.transform(X), model.bin_mapper_.n_bins_
    g, h = np.linspace(-1.0, 1.0, len(y)), np.ones(len(y))
    TreeGrower.from_builder(AllreduceHistogramBuilder(StarComm(0, ["rank 0"], {}), binned, n_bins, g, h), n_bins).grow()


def _data_metrics_linear() -> None:
    from ranklearn.data import load_svmlight
    from ranklearn.data.groups import group_ptr
    from ranklearn.metrics import evaluate

    X, y, qid = _data()
    evaluate(y, X[:, 0].astype(np.float64), group_ptr(qid), list(METRICS))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "warmup.txt"
        path.write_text("1 qid:1 1:0.5 3:nan # docid = a\n0 qid:1 2:1e-3\n2 qid:2 1:-1 2:0.25\n")
        load_svmlight(path)
        _clicks(X, y, qid, Path(tmp) / "clicks.tsv")
        _trec_eval(Path(tmp))
    fit_models(group_models("rest"))  # the neural rankers' too: RankNet's pair loop is numba


def _clicks(X: np.ndarray, y: np.ndarray, qid: np.ndarray, path: Path) -> None:
    """The click simulator (``ranklearn simulate-clicks``) and the click log's TSV reader and writer."""
    from ranklearn.clicks import PBM, ClickLog, simulate
    from ranklearn.data import from_arrays

    log = simulate(from_arrays(X, y, qid), X[:, 0], PBM(), n_sessions=20, intervention="swap")
    log.write(path)
    ClickLog.read(path)


def _trec_eval(folder: Path) -> None:
    """``ranklearn trec-eval -m all_trec``'s reader and measures."""
    from ranklearn.io.trec_stream import read_judged_rankings, read_rankings
    from ranklearn.metrics.trec import evaluate_rels, expand

    (folder / "qrels").write_text("1 0 a 1\n1 0 b -1\n")
    (folder / "run").write_text("1 Q0 a 1 0.5 t\n1 Q0 c 2 0.5 t\n")
    ranked, _, _ = read_judged_rankings(folder / "qrels", folder / "run")
    read_rankings(folder / "run", ["1"])  # -R prefs / qrels_jg
    evaluate_rels(ranked.rels, ranked.ptr, ranked.levels, expand(["all_trec", "rbp", "unj"]))


GROUPS: dict[str, Callable[[], None]] = {
    "trees (binning, histograms, gradients, splits, prediction)": _trees,
    "data loading, metrics, linear and neural rankers": _data_metrics_linear,
}


def _run_group(name: str) -> tuple[int, float]:
    """Run one group in this process: (ranklearn kernels compiled, seconds)."""
    from numba.core import event

    from ranklearn import _compilation

    _compilation.SMALL_INPUTS = "compiled"  # the groups' data is tiny: it must compile the kernels

    compiled = []

    class _Count(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            if (getattr(ev.data["dispatcher"].py_func, "__module__", None) or "").startswith("ranklearn."):
                compiled.append(ev.data["dispatcher"])

        def on_end(self, ev: event.Event) -> None:
            pass

    start = time.perf_counter()
    with event.install_listener("numba:compile", _Count()):
        GROUPS[name]()
    return len(compiled), time.perf_counter() - start


def cache_location() -> str:
    """Where numba keeps ranklearn's compiled kernels: the ``__pycache__`` folders beside the
    package's modules, or the cache directory that holds a folder for each of them."""
    import ranklearn
    from ranklearn.metrics.kernels import per_query_values

    one = Path(per_query_values.dispatcher._cache._cache_path)  # the folder of one kernel's module
    if one.name == "__pycache__":
        return f"the __pycache__ folders under {Path(ranklearn.__file__).parent}"
    return str(one.parent)


def warm_up(jobs: int = 2, echo: Callable[[str], None] = print) -> dict[str, tuple[int, float]]:
    """Compile the kernels of the common paths into numba's cache, saying what it does.

    Parameters
    ----------
    jobs : int
        Processes to compile in (at most one per group); 1 compiles in this process.
    echo : callable
        Receives one line per step.

    Returns
    -------
    dict
        Group -> (number of ranklearn kernels compiled, seconds); 0 kernels means every one
        was already in the cache.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    start = time.perf_counter()
    # not "compiling": whether anything compiles is known only once the groups have run
    echo(f"ranklearn: warming up numba's cache ({cache_location()}), {min(jobs, len(GROUPS))} process(es)")
    results: dict[str, tuple[int, float]] = {}
    if jobs == 1:
        for name in GROUPS:
            results[name] = _run_group(name)
            echo(f"  {name}: {_say(*results[name])}")
    else:
        # spawn: a fresh interpreter, no copy of this process's numba threads or locks
        with ProcessPoolExecutor(min(jobs, len(GROUPS)), mp_context=get_context("spawn")) as pool:
            futures = {name: pool.submit(_run_group, name) for name in GROUPS}
            for name, future in futures.items():
                results[name] = future.result()
                echo(f"  {name}: {_say(*results[name])}")
    compiled = sum(n for n, _ in results.values())
    how = f"{compiled} compiled" if compiled else "all from the cache, nothing compiled"
    echo(f"ranklearn: kernels ready in {time.perf_counter() - start:.1f} s ({how})")
    return results


def _say(n: int, seconds: float) -> str:
    if n == 0:
        return f"all from the cache ({seconds:.1f} s)"
    return f"{n} kernel{'s' if n != 1 else ''} compiled in {seconds:.1f} s"


if __name__ == "__main__":
    warm_up(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
