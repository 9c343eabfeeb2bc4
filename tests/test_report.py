"""ranklearn.report.build: the report page from a model and a dataset in memory; ``ranklearn report``
writes the same page from the files."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")

from test_cli_report import files, parse, run  # noqa: E402, F401  (files: fixture)

from ranklearn.data import from_arrays, load_svmlight  # noqa: E402
from ranklearn.datasets import make_ranking_splits  # noqa: E402
from ranklearn.io import load_model  # noqa: E402
from ranklearn.metrics import get_metric  # noqa: E402
from ranklearn.models import LinearRegression  # noqa: E402
from ranklearn.report import build  # noqa: E402
from ranklearn.stats import compare  # noqa: E402

WRITTEN = re.compile(r"written \d{4}-\d\d-\d\d \d\d:\d\d UTC")


@pytest.fixture(scope="module")
def in_memory():
    train, _, test = make_ranking_splits((60, 10, 30), n_features=5, n_informative=3, random_state=4)
    model = LinearRegression().fit(train.X, train.y, qid=train.qid)
    data = from_arrays(test.X, test.y, test.qid)  # no file behind it
    return model, data, test.X[:, 0].astype(np.float64)


def test_the_page_holds_the_metrics_and_the_tests_of_the_data_in_memory(in_memory):
    model, data, baseline = in_memory
    text = build(model, data, ["ndcg@10", "map"], baseline=baseline, model_name="lr", baseline_name="first feature",
                 permutations=500)  # fmt: skip
    page = parse(text)
    assert text.startswith("<!DOCTYPE html>") and "<script" not in text
    ndcg, ap = get_metric("ndcg@10"), get_metric("map")
    scores = model.predict(data.X)
    assert page.tables[0][1:] == [
        ["lr", f"{ndcg.mean(data.y, scores, data.ptr):.4f}", f"{ap.mean(data.y, scores, data.ptr):.4f}"],
        ["first feature", f"{ndcg.mean(data.y, baseline, data.ptr):.4f}", f"{ap.mean(data.y, baseline, data.ptr):.4f}"],
    ]
    values = {m.name: {s: m.per_query(data.y, v, data.ptr) for s, v in (("first feature", baseline), ("lr", scores))}
              for m in (ndcg, ap)}  # fmt: skip
    result = compare(values, n_permutations=500, n_resamples=500)
    columns, rows = result.table("ndcg@10")
    assert page.tables[1] == [columns, *rows]
    assert page.captions[1] == result.title("ndcg@10", data.n_queries)
    # the linear model's explanations: three queries, each with its documents and pairs
    assert len(page.tables) == 3 + 2 * 3 and "exact Shapley values of a linear score" in text
    # metric@k, the per-query differences, the lambdas, the summary; no learning curves (no eval set), no importance
    assert "ranklearn report: lr on data" in text and page.tags.count("img") == 4


def test_bad_inputs_are_refused_by_name(in_memory):
    model, data, baseline = in_memory
    with pytest.raises(ValueError, match="baseline has 3 values for"):
        build(model, data, baseline=baseline[:3])
    with pytest.raises(ValueError, match="the model and the baseline are both named 'x'"):
        build(model, data, baseline=baseline, model_name="x", baseline_name="x")
    with pytest.raises(ValueError, match="'nope' is not a query"):
        build(model, data, query="nope")
    with pytest.raises(ValueError, match="unknown metric 'ndgc@10'"):
        build(model, data, ["ndgc@10"])


def test_the_command_writes_the_page_the_library_builds(files, capsys):
    out = files / "same.html"
    code, _, err = run(capsys, "report", "--model", files / "model.json", "--data", files / "test.txt", "--baseline",
                       files / "bm25.scores", "--metric", "ndcg@10", "--metric", "map", "--permutations", "300",
                       "--out", out)  # fmt: skip
    assert code == 0, err
    data = load_svmlight(files / "test.txt")
    baseline = np.loadtxt(files / "bm25.scores")
    page = build(load_model(files / "model.json"), data, ["ndcg@10", "map"], baseline=baseline, model_name="model.json",
                 data_name="test.txt", baseline_name="bm25.scores", permutations=300)  # fmt: skip
    assert WRITTEN.sub("", out.read_text()) == WRITTEN.sub("", page)
