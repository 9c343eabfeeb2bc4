"""Model files of two source trees of ranklearn: the same bits (a refactor that must keep every model).

Fits LambdaMART (with sample weights; with bagging and feature_fraction), MART (bagged) and
RandomForest on MQ2008 Fold1 and on the speed benchmark's 200,000-row synthetic set, on 1 and
2 threads, and DaskLambdaMART (lambdarank with bagging, squared_error) on a LocalCluster of
two 1-thread worker processes; saves every model file, its test predictions and its
evaluation history; then compares the two folders file by file (JSON payloads: trees,
thresholds, bins, values, gains, counts, bin mapper, parameters; predictions bit for bit).
Model files are compared as this ranklearn saves them again after loading them, so a file of an
older tree is compared under today's parameter names (issue 30's vocabulary; run `compare` with
the newer tree on the path), and a forest is built with whichever name of its bags the tree takes.

    git worktree add --detach /tmp/ranklearn-old <commit>
    PYTHONPATH=/tmp/ranklearn-old/src .venv/bin/python benchmarks/models_identical.py fit /tmp/A
    PYTHONPATH=src .venv/bin/python benchmarks/models_identical.py fit /tmp/B
    .venv/bin/python benchmarks/models_identical.py compare /tmp/A /tmp/B
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_letor, require_shared_data  # noqa: E402


def datasets() -> dict[str, dict]:
    from ranklearn.datasets import make_ranking

    fold = require_shared_data() / "MQ2008" / "Fold1"
    mq = {name: load_letor(fold / f"{name}.txt") for name in ("train", "vali", "test")}
    X, y, qid = make_ranking(1600, 136, n_informative=20, docs_per_query=(125, 125), random_state=0, return_X_y=True)
    X, cut = np.asarray(X, dtype=np.float32), 1400 * 125
    big = {"train": (X[:cut], y[:cut], qid[:cut]), "vali": (X[cut:], y[cut:], qid[cut:]), "test": (X[cut:],)}
    return {"mq2008": mq, "synth200k": big}


def local_models(name: str) -> dict:
    from ranklearn.models import MART, LambdaMART, RandomForest

    n = 40 if name == "mq2008" else 8
    return {
        "lambdamart_bag": lambda j: LambdaMART(n_estimators=n, bagging_fraction=0.7, feature_fraction=0.6, random_state=3, n_jobs=j),
        "lambdamart_weighted": lambda j: LambdaMART(n_estimators=n, random_state=3, n_jobs=j),
        # early_stopping_rounds=100: what MART's default "auto" meant before issue 30's vocabulary
        # (today's "auto" is max(20, n_estimators // 10)), so both trees train the same model
        "mart": lambda j: MART(n_estimators=n, num_leaves=10, feature_fraction=0.8, bagging_fraction=0.8,
                               early_stopping_rounds=100, random_state=5, n_jobs=j),
        "rf": lambda j: RandomForest(**_bags(RandomForest, 10 if name == "mq2008" else 3), num_leaves=30, random_state=7, n_jobs=j),
    }  # fmt: skip


def _bags(cls: type, n: int) -> dict[str, int]:
    """A forest's bags under this tree's name: n_estimators since issue 30's vocabulary, n_bags before."""
    return {"n_bags" if "n_bags" in cls._get_param_names() else "n_estimators": n}


def _resaved_payload(path: Path, tmp: Path) -> dict:
    """The payload of the model file at ``path`` as this ranklearn saves it after loading it."""
    from ranklearn.io import load_model

    load_model(path).save(tmp / path.name)
    return json.loads((tmp / path.name).read_text())["payload"]


def save(out: Path, tag: str, model, X_test: np.ndarray, started: float) -> None:
    model.save(out / f"{tag}.json")
    np.save(out / f"{tag}.pred.npy", model.predict(X_test))
    (out / f"{tag}.evals.json").write_text(json.dumps(model.evals_result_))
    print(tag, f"{time.time() - started:.1f} s, 1-min load {os.getloadavg()[0]:.2f}", flush=True)


def fit(out: Path) -> None:
    import dask.array as da
    from distributed import Client, LocalCluster

    from ranklearn.dask import DaskLambdaMART

    out.mkdir(parents=True, exist_ok=True)
    data = datasets()
    for dname, d in data.items():
        (Xt, yt, qt), (Xv, yv, qv) = d["train"], d["vali"]
        weight = np.random.default_rng(0).uniform(0.5, 2.0, Xt.shape[0])
        for cname, make in local_models(dname).items():
            for threads in (1, 2):
                t = time.time()
                kw = {"sample_weight": weight} if cname == "lambdamart_weighted" else {}
                model = make(threads).fit(Xt, yt, qt, eval_set=[(Xv, yv, qv)], **kw)
                save(out, f"{dname}-{cname}-j{threads}", model, d["test"][0], t)

    def halves(X, y, q):  # two partitions of whole queries (rows sorted by query id)
        o = np.argsort(q, kind="stable")
        X, y, q = X[o], y[o], q[o]
        cut = int(np.searchsorted(q, q[len(q) // 2]))
        rows = (cut, len(q) - cut)
        return da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=(rows,)), da.from_array(q, chunks=(rows,))

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:  # fmt: skip
        for dname, d in data.items():
            train, vali = halves(*d["train"]), halves(*d["vali"])
            n = 40 if dname == "mq2008" else 8
            for cname, kw in {"dask_bag": dict(bagging_fraction=0.7, feature_fraction=0.6),
                              "dask_mart": dict(objective="squared_error", num_leaves=10)}.items():  # fmt: skip
                t = time.time()
                model = DaskLambdaMART(n_estimators=n, random_state=3, client=client, **kw).fit(*train, eval_set=[vali])
                save(out, f"{dname}-{cname}", model, d["test"][0], t)


def compare(a: Path, b: Path) -> int:
    import tempfile

    names = sorted(p.name for p in a.iterdir())
    if names != sorted(p.name for p in b.iterdir()):
        sys.exit(f"{a} and {b} hold other files")
    differ = 0
    for n in names:
        if n.endswith(".npy"):
            same = np.array_equal(np.load(a / n), np.load(b / n))
        elif n.endswith(".evals.json"):
            same = json.loads((a / n).read_text()) == json.loads((b / n).read_text())
        else:
            with tempfile.TemporaryDirectory() as tmp:
                pa, pb = (_resaved_payload(x / n, Path(tmp)) for x in (a, b))
            same = pa == pb
            n = f"{n} ({len(pa.get('trees', pa.get('bags', [])))} trees or bags)"
        print("same     " if same else "DIFFERENT", n)
        differ += not same
    print(f"{len(names) - differ} of {len(names)} files identical")
    return differ


if __name__ == "__main__":
    if sys.argv[1:2] == ["fit"] and len(sys.argv) == 3:
        fit(Path(sys.argv[2]))
    elif sys.argv[1:2] == ["compare"] and len(sys.argv) == 4:
        sys.exit(1 if compare(Path(sys.argv[2]), Path(sys.argv[3])) else 0)
    else:
        sys.exit(__doc__)
