"""ranklearn report: a well-formed, self-contained page holding evaluate's and compare's numbers,
rendered by headless Chromium without console errors."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")

from ranklearn.cli.main import main  # noqa: E402
from ranklearn.data import save_svmlight  # noqa: E402
from ranklearn.datasets import make_ranking_splits  # noqa: E402
from ranklearn.models import LambdaMART  # noqa: E402

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
PNG = b"\x89PNG\r\n\x1a\n"


def run(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    out = capsys.readouterr()
    code = exit_info.value.code
    return (0 if code is None else code), out.out, out.err


class Page(HTMLParser):
    """Checks nesting (every element closed, in order) and collects tags, links and table cells."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.links: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.captions: list[str] = []
        self._cell: list[str] | None = None
        self._caption: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.links += [v for k, v in attrs if k in ("src", "href") and v is not None]
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "caption":
            self._caption = []

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()
        if tag in ("td", "th"):
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "caption":
            self.captions.append("".join(self._caption).strip())
            self._caption = None

    def handle_data(self, data):
        for part in (self._cell, self._caption):
            if part is not None:
                part.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    assert page.stack == [], f"unclosed elements {page.stack}"
    return page


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    train, vali, test = make_ranking_splits((80, 25, 40), n_features=8, n_informative=5, random_state=0)
    model = LambdaMART(n_estimators=20, num_leaves=7, learning_rate=0.2, min_samples_leaf=5, random_state=0,
                       early_stopping_rounds=5)  # fmt: skip
    model.fit(train.X, train.y, qid=train.qid, eval_set=[(vali.X, vali.y, vali.qid)])
    model.save(folder / "model.json")
    save_svmlight(test, folder / "test.txt")
    (folder / "bm25.scores").write_text("".join(f"{float(v)!r}\n" for v in test.X[:, 1]))
    return folder


@pytest.fixture(scope="module")
def page(files):
    out = files / "report.html"
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--model", str(files / "model.json"), "--data", str(files / "test.txt"), "--baseline",
              str(files / "bm25.scores"), "--metric", "ndcg@10", "--metric", "map", "--permutations", "2000",
              "--out", str(out)])  # fmt: skip
    assert exit_info.value.code in (0, None)
    return out


def test_report_is_well_formed_and_self_contained(page):
    text = page.read_text()
    parsed = parse(text)
    assert text.startswith("<!DOCTYPE html>")
    assert parsed.tags[:1] == ["html"] and "style" in parsed.tags
    assert not {"script", "link", "iframe", "object"} & set(parsed.tags)
    assert not re.search(r"https?://", text)
    assert parsed.links and all(link.startswith("data:image/png;base64,") for link in parsed.links)
    # learning curves, feature importance, metric@k, per-query difference, lambda forces, contributions summary
    assert len(parsed.links) == parsed.tags.count("img") == 6
    for link in parsed.links:
        assert base64.b64decode(link.split(",", 1)[1], validate=True).startswith(PNG)


def test_report_tables_hold_evaluate_and_compare_numbers(capsys, files, page, tmp_path):
    parsed = parse(page.read_text())
    preds = tmp_path / "model.json"  # named as the model file: the report's system name
    assert run(capsys, "predict", "--model", files / "model.json", "--data", files / "test.txt", "--out", preds)[0] == 0
    data, base = files / "test.txt", files / "bm25.scores"
    metrics = ["--metric", "ndcg@10", "--metric", "map"]
    code, out, _ = run(capsys, "evaluate", "--data", data, "--scores", preds, "--scores", base, *metrics, "--json")
    assert code == 0
    means = json.loads(out)
    evaluation = parsed.tables[0]
    assert evaluation[0] == ["system", "ndcg@10", "map"]
    assert evaluation[1:] == [[s, f"{means[s]['ndcg@10']:.4f}", f"{means[s]['map']:.4f}"] for s in ("model.json", "bm25.scores")]
    code, out, _ = run(capsys, "compare", "--data", data, "--scores", base, "--scores", preds, *metrics,
                       "--permutations", "2000", "--json")  # fmt: skip
    assert code == 0
    result = json.loads(out)
    assert parsed.captions[:3] == ["mean over 40 of 40 queries", "ndcg@10 (40 of 40 queries)", "map (40 of 40 queries)"]
    for table, test in zip(parsed.tables[1:], result["tests"]):
        assert table[0] == ["system", "mean", "diff", "95% CI", "p(t)", "p(W)", "p(rand)", "W/T/L"]
        assert table[1][:2] == ["bm25.scores (base)", f"{test['baseline_mean']:.4f}"]
        row = table[2]
        assert row[:4] == ["model.json", f"{test['mean']:.4f}", f"{test['difference']:+.4f}",
                           f"{test['ci_low']:+.3f},{test['ci_high']:+.3f}"]  # fmt: skip
        for cell, p in zip(row[4:7], (test["t_p"], test["wilcoxon_p"], test["randomization_p"])):
            assert cell == ("<0.001" if p < 1e-3 else f"{p:.3f}")
        assert row[7] == f"{test['wins']}/{test['ties']}/{test['losses']}"
    assert len(parsed.tables) == 3 + 2 * 3  # and the explanations' two tables of three queries


def test_report_explains_the_three_queries_where_the_systems_differ_most(files, page):
    from ranklearn import explain
    from ranklearn.data import load_svmlight
    from ranklearn.io import load_model
    from ranklearn.metrics import get_metric

    parsed = parse(page.read_text())
    test = load_svmlight(files / "test.txt")
    model = load_model(files / "model.json")
    ndcg = get_metric("ndcg@10")
    diff = ndcg.per_query(test.y, model.predict(test.X), test.ptr) - ndcg.per_query(test.y, test.X[:, 1], test.ptr)
    expected = [str(test.query_ids[q]) for q in np.argsort(-np.abs(diff), kind="stable")[:3]]
    assert parsed.captions[3:] == [c for q in expected for c in (f"Documents of query {q} by score",
                                                                 f"Adjacent pairs of query {q}")]  # fmt: skip
    q = int(np.flatnonzero(test.query_ids == int(expected[0]))[0])
    rows = slice(test.ptr[q], test.ptr[q + 1])
    ex = explain.query(model, test.X[rows], top=5)
    docs, pairs = parsed.tables[3], parsed.tables[4]
    assert [r[2] for r in docs[1:]] == [f"{ex.scores[i]:.6g}" for i in ex.order[:5]]
    top_feature, value = ex.pairs[0].top(1)[0]
    assert pairs[1][4].startswith(f"{top_feature} {value:+.3g}")


def test_report_without_baseline_and_errors(capsys, files, tmp_path):
    out = tmp_path / "r.html"
    code, stdout, err = run(capsys, "report", "--model", files / "model.json", "--data", files / "test.txt",
                            "--query", "109", "--out", out)  # fmt: skip
    assert code == 0 and err == "" and "wrote" in stdout
    parsed = parse(out.read_text())
    assert len(parsed.tables) == 1 and parsed.tags.count("img") == 5  # no compare table, no difference plot
    assert "With --baseline, the queries where the two systems differ most" in out.read_text()
    assert "lambdas (NDCG@10) of query 109 under" in out.read_text()

    def error(*args):
        code, _, err = run(capsys, "report", "--model", files / "model.json", "--data", files / "test.txt", *args)
        assert code == 2 and err.startswith("ranklearn: error: ") and err.count("\n") == 1, err
        return err

    assert "--query '7'" in error("--query", "7", "--out", out)
    short = tmp_path / "short.scores"
    short.write_text("1.0\n2.0\n")
    assert str(short) in error("--baseline", short, "--out", out)
    assert "destroy the input" in error("--out", files / "test.txt")
    assert "--permutations" in error("--baseline", files / "bm25.scores", "--permutations", "0", "--out", out)
    lines = (files / "test.txt").read_text().splitlines(keepends=True)
    mixed = tmp_path / "mixed.txt"  # the first query's first row moved to the end: its qid reappears
    mixed.write_text("".join(lines[1:] + lines[:1]))
    code, _, err = run(capsys, "report", "--model", files / "model.json", "--data", mixed, "--out", out, "--no-regroup")
    assert code == 2 and err.count("\n") == 1 and "reappears" in err and "mixed.txt" in err


def test_report_without_matplotlib_is_one_line(capsys, files, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    out = tmp_path / "r.html"
    code, _, err = run(capsys, "report", "--model", files / "model.json", "--data", files / "test.txt", "--out", out)
    assert code == 2 and err.count("\n") == 1 and "pip install 'ranklearn[plot]'" in err, err
    assert not out.exists()


def test_report_conventions_and_neural_model(capsys, files, tmp_path):
    pytest.importorskip("torch", reason="the neural extra (torch) is not installed")
    from ranklearn.data import load_svmlight
    from ranklearn.metrics import get_metric
    from ranklearn.models import RankNet

    test = load_svmlight(files / "test.txt")
    model = RankNet(hidden=(8,), n_estimators=3, n_jobs=1, random_state=0)
    model.fit(test.X, test.y, qid=test.qid, eval_set=[(test.X, test.y, test.qid)])
    model.save(tmp_path / "nn.json")
    out = tmp_path / "nn.html"
    code, _, err = run(capsys, "report", "--model", tmp_path / "nn.json", "--data", files / "test.txt",
                       "--metric", "map", "--empty", "skip", "--out", out)  # fmt: skip
    assert code == 0, err
    parsed = parse(out.read_text())
    # learning curves, metric@k, lambdas, contributions summary (expected gradients): no feature importance
    assert parsed.tags.count("img") == 4
    assert "expected gradients (an approximation" in out.read_text()
    metric = get_metric("map", empty="skip")
    n_scored = int((~np.isnan(metric.per_query(test.y, model.predict(test.X), test.ptr))).sum())
    assert n_scored < test.n_queries  # some queries have no relevant document
    assert parsed.captions == [f"mean over {n_scored} of {test.n_queries} queries"]
    assert parsed.tables[0][1] == ["nn.json", f"{metric.mean(test.y, model.predict(test.X), test.ptr):.4f}"]


def test_report_with_trec_eval_conventions_orders_ties_by_docid(capsys, files, tmp_path):
    # trec_eval orders ties by the #docid comments: the metric@k plot needs them too
    lines = (files / "test.txt").read_text().splitlines()
    data = tmp_path / "test.txt"
    data.write_text("".join(f"{line} #docid = D{i:04d}\n" for i, line in enumerate(lines)))
    out = tmp_path / "r.html"
    code, _, err = run(capsys, "report", "--model", files / "model.json", "--data", data, "--metric", "ndcg@10",
                       "--conventions", "trec_eval", "--out", out)  # fmt: skip
    assert code == 0, err
    preds = tmp_path / "p.scores"
    assert run(capsys, "predict", "--model", files / "model.json", "--data", data, "--out", preds)[0] == 0
    code, stdout, _ = run(capsys, "evaluate", "--data", data, "--scores", preds, "--conventions", "trec_eval", "--json")
    assert code == 0
    assert parse(out.read_text()).tables[0][1] == ["model.json", f"{json.loads(stdout)['ndcg@10']:.4f}"]
    code, _, err = run(capsys, "report", "--model", files / "model.json", "--data", files / "test.txt",
                       "--ties", "docid", "--out", out)  # fmt: skip
    assert code == 2 and "docid" in err and err.count("\n") == 1


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if path := shutil.which(name):
            return path
    pytest.skip("no chromium binary found (apt-get install chromium)")


def _render(browser: str, html_path, png_path, size: str) -> list[str]:
    """Screenshot a page in headless Chromium; the console messages it logged (``...:CONSOLE...`` lines)."""
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         f"--screenshot={png_path}", f"--window-size={size}", f"file://{html_path}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert png_path.exists(), proc.stderr[-2000:]
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def test_report_renders_in_headless_chromium(page, tmp_path):
    from matplotlib.image import imread

    browser = _chromium()
    # the console capture works: a page with a failing script is caught
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>throw new Error('boom')</script></body></html>")
    assert any("Uncaught Error: boom" in line for line in _render(browser, bad, tmp_path / "bad.png", "300,200"))
    shot = tmp_path / "report.png"
    assert _render(browser, page, shot, "1200,3000") == []
    pixels = imread(shot)[..., :3]
    assert pixels.shape[:2] == (3000, 1200)
    dark = (pixels.mean(axis=2) < 0.5).mean()  # text, axes and bars
    colored = (np.ptp(pixels, axis=2) > 0.3).mean()  # the plots' lines and bars
    assert 0.01 < dark < 0.5 and colored > 0.01, (dark, colored)


def _report_of_a_click_model(capsys, files, tmp_path, model) -> str:
    """The report page of ``model`` fitted on PBM-like clicks of 40 lists of 10 (relevance: feature 0)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8))
    position = np.tile(np.arange(1, 11), 40)
    y = (rng.random(400) < (X[:, 0] > 0) / position).astype(float)
    model.fit(X, y, qid=np.repeat(np.arange(40), 10), position=position)
    model.save(tmp_path / "clicks.json")
    out = tmp_path / "report.html"
    code, _, err = run(capsys, "report", "--model", tmp_path / "clicks.json", "--data", files / "test.txt", "--out", out)
    assert code == 0, err
    return out.read_text()


def test_report_of_a_debiased_model_shows_its_position_bias(capsys, files, tmp_path):
    model = LambdaMART(n_estimators=3, num_leaves=3, min_samples_leaf=5, unbiased="position_factors")
    text = _report_of_a_click_model(capsys, files, tmp_path, model)
    assert "Position bias learned from the clicks (unbiased=&#x27;position_factors&#x27;)" in text
    assert "the trees f alone" in text
    # feature importance, position bias, metric@k, lambdas, the explanations' summary (no eval set: no
    # learning curves; no baseline)
    assert parse(text).tags.count("img") == 5


@pytest.mark.parametrize("neural", [False, True], ids=["trees", "network"])
def test_report_says_given_propensities_are_given_not_learned(capsys, files, tmp_path, neural):
    """IPW's propensities are given to the model: the caption says so (and that they are clipped)."""
    if neural:
        pytest.importorskip("torch", reason="the neural rankers need torch")
        from ranklearn.models import ListNet

        model = ListNet(n_estimators=2, hidden=(4,), n_networks=1, loss="ipw", propensity=[1, 0.5, 0.3], random_state=0)
        caption = "Position bias of the click loss (ipw: the propensities given to it, clipped)"
    else:
        model = LambdaMART(n_estimators=3, num_leaves=3, min_samples_leaf=5, unbiased="ipw", propensity=[1, 0.5, 0.3])
        caption = "Position bias given, clipped (unbiased=&#x27;ipw&#x27;)"
    text = _report_of_a_click_model(capsys, files, tmp_path, model)
    assert caption in text and "learned" not in text.split(caption, 1)[1].split("</figcaption>", 1)[0]


def test_report_of_a_network_trained_on_clicks_names_its_loss_not_trees(capsys, files, tmp_path):
    pytest.importorskip("torch", reason="the neural rankers need torch")
    from ranklearn.models import ListNet

    model = ListNet(n_estimators=2, hidden=(4,), n_networks=1, loss="dla", random_state=0)
    text = _report_of_a_click_model(capsys, files, tmp_path, model)
    assert "Position bias of the click loss (dla: the propensities it learned from the clicks)" in text
    assert "network&#x27;s relevance scores alone" in text
    assert "trees f" not in text
