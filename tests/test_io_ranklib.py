"""RankLib's LambdaMART text format: export follows the format and scores as RankLib would, import is exact,
malformed files are ModelFormatErrors."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ranklearn import LambdaMART
from ranklearn.exceptions import ModelFormatError
from ranklearn.io.ranklib import export_ranklib, import_ranklib
from ranklearn.metrics import get_metric

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
