"""Helpers shared by several test modules: small data, tiny models, running the CLI in-process."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ranklearn.cli.main import main
from ranklearn.models import LambdaMART


RANKLEARN = Path(sys.executable).with_name("ranklearn")


TINY_TREES = dict(n_estimators=3, num_leaves=4, min_samples_leaf=2, random_state=0, n_jobs=1)


def _torch_models():
    try:
        import safetensors  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return []
    from ranklearn.models import LambdaRank, RankNet

    return [RankNet, LambdaRank]


NEURAL = _torch_models()


needs_torch = pytest.mark.skipif(not NEURAL, reason="torch / safetensors not installed")


def small_data(n_queries=6, docs=8, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    X = rng.normal(size=(n, n_features))
    y = rng.integers(0, 3, n).astype(float)
    qid = np.repeat(np.arange(n_queries), docs)
    return X, y, qid


def all_models():
    """(name, factory) of every estimator with tiny settings."""
    models = [("lambdamart", lambda: LambdaMART(**TINY_TREES))]
    for cls in NEURAL:
        models.append((cls.__name__.lower(), lambda cls=cls: cls(hidden=(4,), n_estimators=2, random_state=0)))
    return models


MODELS = all_models()


MODEL_IDS = [name for name, _ in MODELS]


def ranker_class(spec) -> type:
    """The class of a registered ranker; the test is skipped when its extra (torch) is missing."""
    try:
        return spec.load_class()
    except ImportError as exc:
        pytest.skip(f"{spec.name}: {exc}")


def fitted_with_test_settings(spec):
    """``(model, X, y, qid)``: a registered ranker fitted on small data with its test settings
    (``ModelSpec.test``); the test is skipped when its extra is missing."""
    X, y, qid = small_data(n_queries=10, docs=12)
    return ranker_class(spec)(**spec.test).fit(X, y, qid=qid), X, y, qid


def run(capsys, *args) -> tuple[int, str, str]:
    """Run ``ranklearn ARGS`` in-process; return (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
    out = capsys.readouterr()
    code = info.value.code
    return (0 if code is None else code), out.out, out.err


def assert_one_line_error(code, err, *fragments):
    assert code == 2, err
    assert err.startswith("ranklearn: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def tree_data(n=3000, f=6, seed=0, nan_frac=0.0):
    """Features for the tree engine (few distinct values, mass at 0, optional NaN), gradients, hessians."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f)).astype(np.float32)
    X[:, 1] = rng.integers(0, 4, n)  # few distinct values
    X[:, 2] = np.where(rng.random(n) < 0.7, 0.0, rng.exponential(size=n))  # heavy mass at 0
    if nan_frac:
        X[rng.random((n, f)) < nan_frac] = np.nan
    g = -(X[:, 0] > 0.3).astype(float) + 0.5 * np.nan_to_num(X[:, 2]) + 0.1 * rng.normal(size=n)
    h = rng.uniform(0.5, 1.5, n)
    return X, g.astype(np.float64), h


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Autouse in the torch test modules (import it there)."""
    import torch

    # small models on a shared machine: one intra-op thread avoids OpenMP oversubscription
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def make_queries(n_queries=30, docs=(3, 12), n_features=5, seed=0, flip=False, max_label=3):
    """Synthetic queries: graded labels from a noisy linear function (anti-correlated if flip)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(docs[0], docs[1] + 1, size=n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    w = np.linspace(1.0, -0.5, n_features)
    u = X @ w * (-1 if flip else 1) + 0.3 * rng.normal(size=n)
    y = np.clip(np.floor(u + 1.0), 0, max_label)
    qid = np.repeat(np.arange(n_queries), sizes)
    return X, y, qid


def _cuda_available() -> bool:
    if not NEURAL:
        return False
    import torch

    return torch.cuda.is_available()


# CI has no GPU: these run where one exists (they were run on an H100 lent to a session).
needs_cuda = pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA GPU")


def written(hist, features, n_bins):
    """The cells of a histogram that the kernels write, ``hist[features]`` with every other
    cell (bins past a feature's ``n_bins`` that are not the missing bin) set to 0."""
    from ranklearn.tree.binning import MISSING_BIN

    out = np.array(hist[features])
    for k, f in enumerate(features):
        out[k, n_bins[f] : MISSING_BIN] = 0.0
    return out


def nan_tree_model(n_estimators=30, seed=0):
    """A LambdaMART trained on data with 15% NaN (splits send them both ways) and its rows."""
    from ranklearn.datasets import make_ranking

    X, y, qid = make_ranking(80, 12, random_state=seed, return_X_y=True)
    X = X.astype(np.float32)
    X[np.random.default_rng(seed).random(X.shape) < 0.15] = np.nan
    model = LambdaMART(n_estimators=n_estimators, num_leaves=15, min_samples_leaf=5, random_state=seed).fit(X, y, qid)
    splits = [t.missing_left[t.feature >= 0] for t in model.trees_]
    assert any(s.any() for s in splits) and any((~s).any() for s in splits), "NaN must go both ways"
    return model, X


def threshold_rows(trees, X, seed=0, dtype=np.float32):
    """Rows that hit every split of ``trees`` exactly: a row of ``X`` with the split's feature set
    to the threshold, the float32 just below and just above it, and NaN; for ``dtype=float64``
    also the doubles around the midpoint between the threshold and the next float32 (where a
    double rounds to one or the other)."""
    rng = np.random.default_rng(seed)
    rows = []
    for tree in trees:
        for node in np.flatnonzero(tree.feature >= 0):
            t = np.float32(tree.threshold[node])
            with np.errstate(over="ignore"):
                up = np.nextafter(t, np.float32(np.inf))
            values = [np.nextafter(t, np.float32(-np.inf)), t, np.nan, *([up] if np.isfinite(up) else [])]
            if dtype == np.float64 and np.isfinite(up):
                middle = (float(t) + float(up)) / 2
                values += [np.nextafter(middle, -np.inf), middle, np.nextafter(middle, np.inf)]
            for v in values:
                row = X[rng.integers(X.shape[0])].astype(dtype)
                row[tree.feature[node]] = v
                rows.append(row)
    return np.array(rows, dtype=dtype)
