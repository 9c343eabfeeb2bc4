"""RankLib's linear model format: Coordinate Ascent and linear regression exports score as predict."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.datasets import make_ranking
from ranklearn.io.ranklib import export_ranklib
from ranklearn.models.coordinate_ascent import CoordinateAscent
from ranklearn.models.linear import LinearRegression


def ranklib_linear_scores(path, X: np.ndarray) -> np.ndarray:
    """RankLib's rule, written independently: skip ``##`` lines, read ``fid:weight`` pairs from
    the first other line; score = weight of fid 0 (the constant) + sum of weight * feature in
    the order listed, in doubles, the features read as floats."""
    lines = [ln.strip() for ln in open(path) if ln.strip() and not ln.strip().startswith("##")]
    pairs = [(int(k), float(v)) for k, v in (tok.split(":") for tok in lines[0].split())]
    out = []
    for row in X.astype(np.float32):
        s = 0.0
        for fid, w in pairs:
            if fid == 0:
                s = w + s
        for fid, w in pairs:
            if fid > 0:
                s += w * float(row[fid - 1])
        out.append(s)
    return np.array(out)


@pytest.fixture(scope="module")
def data():
    return make_ranking(25, 7, n_informative=4, random_state=5, return_X_y=True)


@pytest.mark.parametrize(
    "model, header",
    [
        (CoordinateAscent(n_restarts=1, max_iterations=10, random_state=0), "## Coordinate Ascent\n## Restart = 1\n"),
        (LinearRegression(l2_regularization=0.3), "## Linear Regression\n## Lambda = 0.3\n"),
    ],
)
def test_linear_export_scores_exactly_as_predict(data, tmp_path, model, header):
    X, y, qid = data
    model.fit(X, y, qid)
    path = tmp_path / "model.txt"
    export_ranklib(model, path)
    text = path.read_text()
    assert text.startswith(header)
    body = [ln for ln in text.splitlines() if not ln.startswith("##")]
    assert len(body) == 1
    fids = [int(tok.split(":")[0]) for tok in body[0].split()]
    assert fids == ([0] if isinstance(model, LinearRegression) else []) + list(range(1, X.shape[1] + 1))
    np.testing.assert_array_equal(ranklib_linear_scores(path, X), model.predict(X))


def test_linear_export_refuses_an_unfitted_model(tmp_path):
    with pytest.raises(ValueError, match="fitted"):
        export_ranklib(LinearRegression(), tmp_path / "m.txt")
    assert not (tmp_path / "m.txt").exists()


def test_mq2008_coordinate_ascent_export_scores_as_predict(shared_data, tmp_path):
    from ranklearn.datasets import load_letor_fold

    tr, _, te = load_letor_fold(shared_data / "MQ2008", 1)
    m = CoordinateAscent(n_restarts=1, max_iterations=5, tolerance=0.01, random_state=0).fit(tr.X, tr.y, qid=tr.qid)
    export_ranklib(m, tmp_path / "ca.txt")
    X = np.asarray(te.X)
    np.testing.assert_array_equal(ranklib_linear_scores(tmp_path / "ca.txt", X), m.predict(X))
