"""RankLib's text formats: the LambdaMART export follows the format and scores as RankLib would, import is exact,
malformed files are ModelFormatErrors; the linear export (Coordinate Ascent, linear regression) scores as predict
and imports back."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ranklearn import LambdaMART
from ranklearn.datasets import make_ranking
from ranklearn.exceptions import ModelFormatError
from ranklearn.io import load_model
from ranklearn.io.ranklib import export_ranklib, import_ranklib
from ranklearn.metrics import get_metric
from ranklearn.models.coordinate_ascent import CoordinateAscent
from ranklearn.models.linear import LinearRegression

NDCG10 = get_metric("ndcg@10")


def ranklib_reference_scores(path, X):
    """Score as RankLib does: parse outputs, weights and thresholds as Java floats, x <= t goes left."""
    body = "\n".join(l for l in open(path) if not l.lstrip().startswith("##"))
    root = ET.fromstring(body)
    f32 = np.float32
    out = np.zeros(X.shape[0])

    def ev(node, x):
        o = node.find("output")
        if o is not None:
            return float(f32(o.text.strip()))
        f = int(node.find("feature").text) - 1
        thr = f32(node.find("threshold").text.strip())
        kids = {c.get("pos"): c for c in node if c.tag == "split"}
        return ev(kids["left"] if f32(x[f]) <= thr else kids["right"], x)

    for tree in root:
        w = float(f32(tree.get("weight")))
        split = tree.find("split")
        out += np.array([w * ev(split, x) for x in X])
    return out


def test_ranklib_export_follows_format_and_round_trips(fitted, splits, tmp_path):
    path = tmp_path / "model.txt"
    export_ranklib(fitted, path)
    text = path.read_text()
    assert text.startswith("## LambdaMART\n")
    assert re.search(r"## No\. of trees = 40\n", text)
    X = splits[2][0][:300]
    ours = fitted.predict(X)
    # our importer is exact; RankLib's float32 parsing agrees to float32 precision
    np.testing.assert_array_equal(import_ranklib(path, n_features=X.shape[1]).predict(X), ours)
    np.testing.assert_allclose(ranklib_reference_scores(path, X), ours, rtol=1e-5, atol=1e-6)


def test_ranklib_import_of_a_ranklib_trained_model(tmp_path):
    path = tmp_path / "rl.txt"
    path.write_text(
        "## LambdaMART\n## No. of trees = 2\n<ensemble>\n"
        '<tree id="1" weight="0.1"><split><feature> 2 </feature><threshold> 0.5 </threshold>'
        '<split pos="left"><output> -1.0 </output></split><split pos="right"><output> 2.0 </output></split>'
        "</split></tree>\n"
        '<tree id="2" weight="0.1"><split><output> 0.5 </output></split></tree>\n</ensemble>\n'
    )
    m = import_ranklib(path, n_features=3)
    X = np.array([[0, 0.5, 0], [9, 0.6, 9]], dtype=np.float32)
    np.testing.assert_allclose(m.predict(X), [0.1 * -1 + 0.05, 0.1 * 2 + 0.05])
    # RankLib parses a threshold as a 32-bit float: a feature written 0.3, read as float32, is
    # <= float32(0.3) and goes left there (against the double 0.3 < float32(0.3) it went right)
    path.write_text(path.read_text().replace("<threshold> 0.5 </threshold>", "<threshold> 0.3 </threshold>"))
    at = np.array([[0, 0.3, 0]], dtype=np.float32)
    np.testing.assert_allclose(import_ranklib(path, n_features=3).predict(at), [0.1 * -1 + 0.05])
    np.testing.assert_allclose(import_ranklib(path, n_features=3).predict(at.astype(np.float64)), [0.1 * -1 + 0.05])
    # rounded to float32 once, from the decimal, as Java's Float.parseFloat: through the nearest
    # double, a decimal just above a float32 midpoint fell to the float32 below
    from ranklearn.io.ranklib import _float32

    assert _float32("1.0000000596046447755") == float(np.nextafter(np.float32(1), np.float32(2)))
    assert _float32("1.00000005960464477539062") == 1.0 and _float32(" 0.3 ") == float(np.float32(0.3))


@pytest.mark.parametrize(
    "content,match",
    [
        ("", "XML"),
        ("<ensemble><tree><split><feature>x</feature></split></tree></ensemble>", "split"),
        ("<ensemble><tree><split><feature>0</feature><threshold>1</threshold></split></tree></ensemble>", "1-based"),
        ("<forest/>", "ensemble"),
        ("<ensemble></ensemble>", "no trees"),
        ('<!DOCTYPE x [<!ENTITY a "b">]><ensemble/>', "DOCTYPE"),
    ],
)
def test_ranklib_import_rejects_malformed_files(tmp_path, content, match):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(ModelFormatError, match=match):
        import_ranklib(path)


def test_ranklib_export_scores_mq2008_like_predict(shared_data, tmp_path):
    from ranklearn.data import load_svmlight

    fold = shared_data / "MQ2008" / "Fold1"
    tr = load_svmlight(fold / "train.txt")
    te = load_svmlight(fold / "test.txt")
    m = LambdaMART(n_estimators=30, random_state=0).fit(tr.X, tr.y, tr.qid)
    path = tmp_path / "mq.txt"
    export_ranklib(m, path)
    X = np.asarray(te.X.todense() if hasattr(te.X, "todense") else te.X)
    ours = m.predict(X)
    np.testing.assert_array_equal(import_ranklib(path, n_features=X.shape[1]).predict(X), ours)
    ref = ranklib_reference_scores(path, X)
    np.testing.assert_allclose(ref, ours, rtol=1e-5, atol=1e-6)
    assert NDCG10.mean(te.y, ref, te.ptr) == pytest.approx(NDCG10.mean(te.y, ours, te.ptr), abs=1e-4)


# --- the linear models ------------------------------------------------------------------------------
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
def linear_data():
    return make_ranking(25, 7, n_informative=4, random_state=5, return_X_y=True)


@pytest.mark.parametrize(
    "model, header",
    [
        (CoordinateAscent(n_estimators=1, line_search_steps=10, random_state=0), "## Coordinate Ascent\n## Restart = 1\n"),
        (LinearRegression(l2_regularization=0.3), "## Linear Regression\n## Lambda = 0.3\n"),
    ],
)
def test_linear_export_scores_exactly_as_predict(linear_data, tmp_path, model, header):
    X, y, qid = linear_data
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
    back = import_ranklib(path)
    assert type(back) is type(model) and back.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    back.save(tmp_path / "back.json")
    np.testing.assert_array_equal(load_model(tmp_path / "back.json").predict(X), model.predict(X))


def test_linear_import_of_a_ranklib_written_model(tmp_path):
    """RankLib's own file: its parameter lines, Java's double notation, a subset of the features."""
    path = tmp_path / "ca.txt"
    path.write_text("## Coordinate Ascent\n## Restart = 5\n## MaxIteration = 25\n## Regularized = false\n"
                    "2:0.5 4:-1.5E-4\n")  # fmt: skip
    X = np.random.default_rng(0).normal(size=(20, 6)).astype(np.float32)
    model = import_ranklib(path, n_features=6)
    assert isinstance(model, CoordinateAscent)
    np.testing.assert_array_equal(model.predict(X), ranklib_linear_scores(path, X))
    np.testing.assert_array_equal(model.coef_, [0, 0.5, 0, -1.5e-4, 0, 0])
    assert import_ranklib(path).n_features_in_ == 4  # the largest id listed
    with pytest.raises(ValueError, match="n_features=3"):
        import_ranklib(path, n_features=3)


@pytest.mark.parametrize(
    "content, match",
    [
        ("## Coordinate Ascent\n0:1 1:2\n", "feature id >= 1"),  # only linear regression has a constant
        ("## Linear Regression\n0:1 1:x\n", "'1:x'"),
        ("## Linear Regression\n0:1 1:2 1:3\n", "two weights"),
        ("## Coordinate Ascent\n1:1\n2:1\n", "one line"),
        ("## Coordinate Ascent\n", "one line"),
        ("## Coordinate Ascent\n1:nan\n", "'1:nan'"),
    ],
)
def test_linear_import_rejects_malformed_files(tmp_path, content, match):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(ModelFormatError, match=match) as info:
        import_ranklib(path)
    assert str(path) in str(info.value)


def test_linear_export_refuses_an_unfitted_model(tmp_path):
    with pytest.raises(ValueError, match="fitted"):
        export_ranklib(LinearRegression(), tmp_path / "m.txt")
    assert not (tmp_path / "m.txt").exists()


def test_mq2008_coordinate_ascent_export_scores_as_predict(shared_data, tmp_path):
    from ranklearn.datasets import load_letor_fold

    tr, _, te = load_letor_fold(shared_data / "MQ2008", 1)
    m = CoordinateAscent(n_estimators=1, line_search_steps=5, tolerance=0.01, random_state=0).fit(tr.X, tr.y, qid=tr.qid)
    export_ranklib(m, tmp_path / "ca.txt")
    X = np.asarray(te.X)
    np.testing.assert_array_equal(ranklib_linear_scores(tmp_path / "ca.txt", X), m.predict(X))
