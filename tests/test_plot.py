"""ranklearn.plot: every figure holds the data it claims, checked against independent computations."""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")

from matplotlib.figure import Figure  # noqa: E402
from matplotlib.quiver import Quiver  # noqa: E402

from ranklearn import plot  # noqa: E402
from ranklearn.datasets import make_ranking_splits  # noqa: E402
from ranklearn.models import LambdaMART  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    train, vali, test = make_ranking_splits((60, 20, 30), n_features=6, n_informative=4, random_state=0)
    model = LambdaMART(n_estimators=15, num_leaves=5, learning_rate=0.2, min_samples_leaf=5, random_state=0,
                       early_stopping_rounds=5)  # fmt: skip
    model.fit(train.X, train.y, qid=train.qid, eval_set=[(train.X, train.y, train.qid), (vali.X, vali.y, vali.qid)])
    return model, test


def _ndcg_at_k(y, s, ptr, k):
    """Brute force: sort each query, 2^rel-1 gain, 1/log2(rank+1) discount, 0 without a relevant doc."""
    out = []
    for a, b in zip(ptr[:-1], ptr[1:]):
        rel = y[a:b][np.argsort(-s[a:b], kind="stable")][:k]
        ideal = np.sort(y[a:b])[::-1][:k]
        disc = 1 / np.log2(np.arange(2, rel.shape[0] + 2))
        idcg = ((2**ideal - 1) * disc).sum()
        out.append(((2**rel - 1) * disc).sum() / idcg if idcg > 0 else 0.0)
    return float(np.mean(out))


def test_learning_curves_lines_equal_evals_result(fitted):
    model, _ = fitted
    fig = plot.learning_curves(model)
    assert isinstance(fig, Figure)
    assert [ax.get_ylabel() for ax in fig.axes] == ["ndcg@10"]
    for ax in fig.axes:
        metric = ax.get_ylabel()
        curves = [line for line in ax.get_lines() if not line.get_label().startswith("best")]
        assert [line.get_label() for line in curves] == list(model.evals_result_)
        for line, by_metric in zip(curves, model.evals_result_.values()):
            np.testing.assert_array_equal(line.get_ydata(), by_metric[metric])
            np.testing.assert_array_equal(line.get_xdata(), np.arange(1, len(by_metric[metric]) + 1))
        (best,) = [line for line in ax.get_lines() if line.get_label().startswith("best")]
        assert list(best.get_xdata()) == [model.best_iteration_] * 2
    # from a dict: one axes per metric, no best-iteration line unless given
    fig = plot.learning_curves({"vali": {"ndcg@10": [0.1, 0.3, 0.2], "map": [0.2, 0.25, None]}})
    assert [ax.get_ylabel() for ax in fig.axes] == ["ndcg@10", "map"]
    (line,) = fig.axes[0].get_lines()
    assert list(line.get_ydata()) == [0.1, 0.3, 0.2]
    np.testing.assert_array_equal(fig.axes[1].get_lines()[0].get_ydata(), [0.2, 0.25, np.nan])  # None: a gap
    fig = plot.learning_curves({"vali": {"map": [0.2, 0.3]}}, best_iteration=2)
    assert list(fig.axes[0].get_lines()[1].get_xdata()) == [2, 2]
    with pytest.raises(ValueError, match="eval_set"):
        plot.learning_curves({})


def test_feature_importance_bars_by_name(fitted):
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    train, _, _ = make_ranking_splits((40, 5, 5), n_features=6, n_informative=4, random_state=1)
    names = ["bm25", "tfidf", "pagerank", "url_len", "clicks", "age"]
    model = LambdaMART(n_estimators=10, num_leaves=5, min_samples_leaf=5, random_state=0)
    model.fit(pd.DataFrame(train.X, columns=names), train.y, qid=train.qid)
    gains = dict(zip(names, model.feature_importance("gain")))
    top = sorted(names, key=lambda n: -gains[n])[:4]
    fig = plot.feature_importance(model, top=4)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == top
    np.testing.assert_allclose([p.get_width() for p in ax.patches], [gains[n] for n in top])
    splits = plot.feature_importance(model, kind="split").axes[0]
    counts = model.feature_importance("split")
    assert sorted(p.get_width() for p in splits.patches) == sorted(counts.tolist())
    with pytest.raises(TypeError, match="no feature importance"):
        plot.feature_importance(object())
    with pytest.raises(ValueError, match="top"):
        plot.feature_importance(model, top=0)


def test_metric_at_k_equals_brute_force(fitted):
    model, test = fitted
    systems = {"model": model.predict(test.X), "feature 1": test.X[:, 0]}
    fig = plot.metric_at_k(test.y, systems, test.ptr, "ndcg")
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == list(systems)
    for line, s in zip(lines, systems.values()):
        assert list(line.get_xdata()) == list(range(1, 21))
        expected = [_ndcg_at_k(test.y, s, test.ptr, k) for k in range(1, 21)]
        np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-12)
    # conventions reach the metric: empty="one" lifts every curve
    one = plot.metric_at_k(test.y, systems, test.ptr, "ndcg", ks=[5], empty="one").axes[0].get_lines()
    assert one[0].get_ydata()[0] > lines[0].get_ydata()[4]


def test_per_query_difference_sorted_bars():
    a = np.array([0.5, 0.2, np.nan, 0.9, 0.4])
    b = np.array([0.1, 0.2, 0.3, 1.0, 0.7])
    fig = plot.per_query_difference(a, b, "map", "lm", "bm25")
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, [0.4, 0.0, -0.1, -0.3])  # hand-computed, NaN query left out
    assert ax.get_title() == "1 wins, 1 ties, 2 losses over 4 queries"
    assert ax.get_ylabel() == "map: lm - bm25"
    with pytest.raises(ValueError, match="differ in length"):
        plot.per_query_difference(a, b[:3])


def _swap_lambdas(y, s, k=10, sigma=1.0):
    """Brute-force LambdaRank lambdas (negative = up): for every pair, RankNet's gradient times
    |ΔNDCG@k| measured by swapping the two documents in the ranking and recomputing NDCG@k."""
    order = np.argsort(-s, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    disc = np.where(np.arange(y.shape[0]) < k, 1 / np.log2(np.arange(2, y.shape[0] + 2)), 0.0)
    idcg = ((2 ** np.sort(y)[::-1] - 1) * disc).sum()

    def ndcg(ranks):
        return ((2**y - 1) * disc[ranks]).sum() / idcg

    base = ndcg(rank)
    lam = np.zeros_like(s)
    for i, j in itertools.permutations(range(y.shape[0]), 2):
        if y[i] > y[j]:
            swapped = rank.copy()
            swapped[[i, j]] = rank[[j, i]]
            delta = abs(ndcg(swapped) - base)
            g = -sigma * delta / (1 + np.exp(sigma * (s[i] - s[j])))
            lam[i] += g
            lam[j] -= g
    return lam


def test_lambda_forces_arrows_follow_independent_lambdas():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 14).astype(float)
    s = rng.normal(size=14)
    reference = _swap_lambdas(y, s)
    lam = plot.query_lambdas(y, s, lambda_normalization="none")
    np.testing.assert_allclose(lam, reference, rtol=1e-9, atol=1e-12)
    fig = plot.lambda_forces(y, s)
    (quiver,) = [c for c in fig.axes[0].collections if isinstance(c, Quiver)]
    order = np.argsort(-s)
    np.testing.assert_array_equal(quiver.X, np.arange(1, 15))  # documents in their current order
    # up (V > 0) exactly for documents pushed up (lambda < 0); lengths proportional to |lambda|
    np.testing.assert_array_equal(np.sign(quiver.V), -np.sign(reference[order]))
    ratio = quiver.V / -reference[order]
    np.testing.assert_allclose(ratio[reference[order] != 0], ratio[reference[order] != 0][0], rtol=1e-9)
    scatter = [c for c in fig.axes[0].collections if not isinstance(c, Quiver)][0]
    np.testing.assert_array_equal(scatter.get_array(), y[order])  # dots colored by label
    with pytest.raises(ValueError, match="at least 2 documents"):
        plot.lambda_forces(y[:1], s[:1])


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"'plot' extra"):
        plot.per_query_difference([1.0], [0.0])


def test_figures_render_to_png(tmp_path, fitted):
    model, test = fitted
    path = tmp_path / "f.png"
    plot.learning_curves(model).savefig(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _contributions(fitted):
    model, test = fitted
    X = np.asarray(test.X, dtype=np.float32)[:120].copy()
    X[::7, 0] = np.nan
    return model, X, model.predict_contributions(X)


def test_summary_rows_are_features_by_mean_abs_contribution(fitted):
    model, X, phi = _contributions(fitted)
    fig = plot.summary(phi, X, top=3)
    ax = fig.axes[0]
    order = np.argsort(-np.abs(phi[:, :-1]).mean(axis=0), kind="stable")[:3]
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"f{j + 1}" for j in order]
    # two scatters a feature (missing values in grey, then the others): together its column of phi
    xs = [c.get_offsets()[:, 0] for c in ax.collections]
    for row, j in enumerate(order):
        got = np.concatenate(xs[2 * row : 2 * row + 2])
        np.testing.assert_allclose(np.sort(got), np.sort(phi[:, j]))


def test_dependence_plots_value_against_contribution(fitted):
    model, X, phi = _contributions(fitted)
    fig = plot.dependence(phi, X, "f1")
    known = ~np.isnan(X[:, 0])
    pts = fig.axes[0].collections[0].get_offsets()
    np.testing.assert_allclose(pts[:, 0], X[known, 0])
    np.testing.assert_allclose(pts[:, 1], phi[known, 0])
    assert fig.axes[0].collections[1].get_offsets().shape[0] == (~known).sum()  # missing values drawn apart
    with pytest.raises(ValueError, match="no feature named"):
        plot.dependence(phi, X, "zz")
    with pytest.raises(ValueError, match=r"\(n, F \+ 1\)"):
        plot.dependence(phi[:, :-1], X, 0)


def test_waterfall_and_pair_bars_add_up_to_the_score(fitted):
    from ranklearn import explain

    model, X, phi = _contributions(fitted)
    fig = plot.waterfall(phi[0], top=2)
    bars = fig.axes[0].patches
    assert len(bars) == 3  # two features, then the others together
    assert bars[0].get_x() == pytest.approx(phi[0, -1])
    end = bars[-1].get_x() + bars[-1].get_width()
    assert end == pytest.approx(model.predict(X[:1])[0], abs=1e-9)
    top2 = np.sort(np.abs(phi[0, :-1]))[::-1][:2]
    np.testing.assert_allclose(np.abs([b.get_width() for b in bars[:2]]), top2)
    pe = explain.pair(model, X[0], X[1])
    bars = plot.pair(pe, top=3, labels=("a", "b")).axes[0].patches
    assert bars[-1].get_x() + bars[-1].get_width() == pytest.approx(pe.difference, abs=1e-9)


def test_protocol_rows_hold_each_rankers_mean_and_its_paired_interval_against_naive(tmp_path):
    from ranklearn.stats import bootstrap_interval

    rng = np.random.default_rng(0)
    naive = rng.random(60)
    per_query = {
        "logging": {"ndcg@10": naive - 0.05},
        "naive": {"ndcg@10": naive},
        "full information": {"ndcg@10": naive + 0.2},
        "better": {"ndcg@10": naive + 0.1 + rng.normal(0, 0.01, 60)},  # above naive, outside the noise
        "same": {"ndcg@10": naive + rng.normal(0, 0.05, 60)},
    }
    fig = plot.protocol(per_query, n_resamples=500)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(per_query)
    dots = {int(line.get_ydata()[0]): line for line in ax.lines if line.get_marker() == "o"}
    for row, name in enumerate(per_query):
        assert dots[row].get_xdata()[0] == pytest.approx(per_query[name]["ndcg@10"].mean())
    spans = {int(line.get_ydata()[0]): line for line in ax.lines
             if line.get_marker() != "o" and line.get_label() != "half the gap"}  # fmt: skip
    for row, name in ((3, "better"), (4, "same")):
        low, high = bootstrap_interval(per_query[name]["ndcg@10"], naive, n_resamples=500, seed=0)
        np.testing.assert_allclose(spans[row].get_xdata(), [naive.mean() + low, naive.mean() + high])
    assert set(spans) == {0, 2, 3, 4}  # every row but naive's
    assert dots[3].get_color() == "tab:green" and dots[4].get_color() == "tab:blue"
    assert dots[0].get_color() == dots[1].get_color() == dots[2].get_color() == "0.4"  # the references: grey
    # a row of one's own that reads true labels is a reference too: grey, not judged
    grey = plot.protocol(per_query, n_resamples=500, references=(*plot.PROTOCOL_REFERENCES, "better")).axes[0]
    assert [line.get_color() for line in grey.lines if line.get_marker() == "o"][3] == "0.4"
    band = ax.patches[0]
    assert band.get_x() == pytest.approx(naive.mean()) and band.get_width() == pytest.approx(0.2)
    fig.savefig(tmp_path / "protocol.png")
    with pytest.raises(ValueError, match="no 'full information' row"):
        plot.protocol({"naive": per_query["naive"]})
    with pytest.raises(ValueError, match="metric 'ndcg@5' is not in the protocol result"):
        plot.protocol(per_query, metric="ndcg@5")
    for bad, message in (({"ndcg@5": naive}, "row 'same' has no 'ndcg@10' values"),
                         ({"ndcg@10": naive[:-1]}, "row 'same' has 59 ndcg@10 values, the naive row 60"),
                         ({"ndcg@10": np.r_[np.nan, naive[1:]]}, "row 'same' has 1 NaN ndcg@10 values")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            plot.protocol({**per_query, "same": bad})
    with pytest.raises(ValueError, match="references must be row names, not one string"):
        plot.protocol(per_query, references="naive")


def test_protocol_takes_run_protocols_result():
    from ranklearn.clicks import PBM
    from ranklearn.clicks.protocol import run_protocol

    tr, va, te = make_ranking_splits((40, 15, 20), n_features=5, n_informative=3, random_state=1)
    result = run_protocol(tr, va, te, PBM(eta=1.0), n_sessions=500, seed=0, metrics=("ndcg@10",),
                          rankers={"logging again": lambda exp: exp.logging})  # fmt: skip
    ax = plot.protocol(result).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["logging", "naive", "full information", "logging again"]
