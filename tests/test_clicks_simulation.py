"""simulate(): click rates per rank equal the models' closed forms (binomial 5-sigma bounds), seeds
reproduce whatever the threads, Plackett-Luce logging, swaps and RandPair, top_k, query frequencies."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.clicks import DCM, PBM, UBM, Cascade, TrustBias, simulate
from ranklearn.clicks.simulation import relevance_probabilities
from ranklearn.data import from_arrays

SIGMA = 5.0


@pytest.fixture(scope="module")
def data():
    """30 queries of 3 to 14 documents, labels 0-2, and a logging ranker's scores (noisy labels)."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(3, 15, 30)
    qid = np.repeat(np.arange(100, 130), sizes)
    y = rng.integers(0, 3, len(qid)).astype(float)
    ds = from_arrays(rng.normal(size=(len(qid), 2)), y, qid)
    return ds, y + rng.normal(scale=1.0, size=len(qid))


def expected_rates(ds, scores, model, top_k, frequency=None):
    """Per rank: the click rate over sessions that reach it, from the closed form of each query's list."""
    rel = relevance_probabilities(ds.y, 2.0)
    f = np.ones(ds.n_queries) if frequency is None else np.asarray(frequency, float)
    num, den = np.zeros(top_k), np.zeros(top_k)
    for q in range(ds.n_queries):
        a, b = ds.ptr[q], ds.ptr[q + 1]
        order = np.lexsort((np.arange(b - a), -scores[a:b]))[:top_k]
        p = model.click_probabilities(rel[a:b][order])
        num[: len(p)] += f[q] * p
        den[: len(p)] += f[q]
    return num / den


def observed(log, top_k):
    shown = np.bincount(log.position, minlength=top_k + 1)[1:]
    clicked = np.bincount(log.position, weights=log.click, minlength=top_k + 1)[1:]
    return clicked, shown


@pytest.mark.parametrize(
    "model",
    [PBM(eta=1, epsilon=0.1), PBM(eta=2, epsilon=0.0), Cascade(epsilon=0.1), DCM(continuation=0.6),
     UBM(eta=1, epsilon=0.1), TrustBias(eta=1)],
    ids=["pbm", "pbm-eta2", "cascade", "dcm", "ubm", "trust"],
)  # fmt: skip
def test_click_rates_per_rank_equal_the_closed_form(data, model):
    ds, scores = data
    top_k, n = 12, 40_000
    log = simulate(ds, scores, model, n_sessions=n, top_k=top_k, seed=1)
    clicked, shown = observed(log, top_k)
    p = expected_rates(ds, scores, model, top_k)
    assert shown.sum() == len(log) and len(log) == np.minimum(np.diff(ds.ptr), top_k)[np.searchsorted(ds.query_ids, log.query[log.position == 1])].sum()
    bound = SIGMA * np.sqrt(p * (1 - p) / shown) + 1e-12
    assert np.all(np.abs(clicked / shown - p) <= bound), (clicked / shown, p, bound)


def test_the_lists_follow_the_logging_ranking_cut_at_top_k(data):
    ds, scores = data
    log = simulate(ds, scores, PBM(), n_sessions=200, top_k=5, seed=3)
    for s in np.unique(log.session)[:50]:
        rows = log.session == s
        q = int(np.searchsorted(ds.query_ids, log.query[rows][0]))
        a, b = ds.ptr[q], ds.ptr[q + 1]
        assert log.position[rows].tolist() == list(range(1, min(5, b - a) + 1))
        assert log.document[rows].tolist() == np.argsort(-scores[a:b], kind="stable")[:5].tolist()


def test_same_seed_same_log_whatever_the_threads(data):
    ds, scores = data
    kw = dict(n_sessions=3000, seed=7, temperature=0.5, intervention="swap")
    a = simulate(ds, scores, DCM(), n_jobs=1, **kw)
    b = simulate(ds, scores, DCM(), n_jobs=2, **kw)
    for f in ("query", "session", "document", "position", "click", "swap"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    c = simulate(ds, scores, DCM(), n_jobs=2, **{**kw, "seed": 8})
    assert not np.array_equal(a.click, c.click)


def test_cascade_never_clicks_below_the_first_click(data):
    ds, scores = data
    log = simulate(ds, scores, Cascade(epsilon=0.3), n_sessions=5000, seed=2)
    per_session = np.bincount(log.session, weights=log.click)
    assert per_session.max() == 1 and per_session.sum() > 1000
    dcm = simulate(ds, scores, DCM(continuation=0.9), n_sessions=5000, seed=2)
    assert np.bincount(dcm.session, weights=dcm.click).max() > 1  # DCM does click again


def test_plackett_luce_logging_draws_rank_1_by_the_softmax(data):
    ds, scores = data
    q = int(np.argmax(np.diff(ds.ptr)))
    a, b = ds.ptr[q], ds.ptr[q + 1]
    f = np.zeros(ds.n_queries)
    f[q] = 1.0
    T, n = 0.7, 20_000
    log = simulate(ds, scores, PBM(), n_sessions=n, seed=4, temperature=T, query_frequency=f)
    assert np.all(log.query == ds.query_ids[q])
    z = np.exp(scores[a:b] / T)
    p = z / z.sum()
    top = np.bincount(log.document[log.position == 1], minlength=b - a) / n
    assert np.all(np.abs(top - p) <= SIGMA * np.sqrt(p * (1 - p) / n) + 1e-12)
    # uniform shuffles at an infinite temperature
    flat = simulate(ds, scores, PBM(), n_sessions=n, seed=4, temperature=np.inf, query_frequency=f)
    top = np.bincount(flat.document[flat.position == 1], minlength=b - a) / n
    u = 1 / (b - a)
    assert np.all(np.abs(top - u) <= SIGMA * np.sqrt(u * (1 - u) / n))


def logged_session(log, ds, scores, s, top_k):
    """Session ``s`` of ``log``: its rows, the logging ranker's top ``top_k`` of its query (dataset
    row offsets within the query) and the session's drawn swap rank."""
    rows = log.session == s
    q = int(np.searchsorted(ds.query_ids, log.query[rows][0]))
    a, b = ds.ptr[q], ds.ptr[q + 1]
    return rows, np.argsort(-scores[a:b], kind="stable")[:top_k], int(log.swap[rows][0])


def test_swap_interventions_trade_rank_1_with_a_uniform_rank(data):
    ds, scores = data
    log = simulate(ds, scores, PBM(), n_sessions=4000, top_k=6, seed=5, intervention="swap")
    assert log.swap is not None and log.swap.min() >= 1
    for s in range(200):
        rows, ranked, k = logged_session(log, ds, scores, s, 6)
        assert np.all(log.swap[rows] == k) and 1 <= k <= len(ranked)
        ranked[[0, k - 1]] = ranked[[k - 1, 0]]
        assert log.document[rows].tolist() == ranked.tolist()
    full = log.swap[(log.position == 1) & (np.isin(log.query, ds.query_ids[np.diff(ds.ptr) >= 6]))]
    share = np.bincount(full, minlength=7)[1:] / len(full)
    assert np.all(np.abs(share - 1 / 6) <= SIGMA * np.sqrt((1 / 6) * (5 / 6) / len(full)))


def test_randpair_trades_the_pivot_with_a_uniform_rank(data):
    """RandPair with pivot 3: rank 3's document trades places with a rank drawn uniformly from the
    list; lists shorter than the pivot are shown as logged (swap 0); with pivot 1 it is the swap
    intervention, draw for draw."""
    ds, scores = data
    log = simulate(ds, scores, PBM(), n_sessions=4000, top_k=6, seed=5, intervention="randpair", pivot=3)
    assert log.pivot is not None and np.all(log.pivot == 3)
    for s in range(300):
        rows, ranked, k = logged_session(log, ds, scores, s, 6)
        assert np.all(log.swap[rows] == k)
        if len(ranked) < 3:
            assert k == 0
        else:
            assert 1 <= k <= len(ranked)
            ranked[[2, k - 1]] = ranked[[k - 1, 2]]
        assert log.document[rows].tolist() == ranked.tolist()
    full = log.swap[(log.position == 1) & (np.isin(log.query, ds.query_ids[np.diff(ds.ptr) >= 6]))]
    share = np.bincount(full, minlength=7)[1:] / len(full)
    assert np.all(np.abs(share - 1 / 6) <= SIGMA * np.sqrt((1 / 6) * (5 / 6) / len(full)))
    swap = simulate(ds, scores, PBM(), n_sessions=500, top_k=6, seed=5, intervention="swap")
    one = simulate(ds, scores, PBM(), n_sessions=500, top_k=6, seed=5, intervention="randpair", pivot=1)
    for f in ("query", "session", "document", "position", "click", "swap"):
        assert np.array_equal(getattr(swap, f), getattr(one, f)), f
    assert swap.pivot is None and np.all(one.pivot == 1)
    threads = [simulate(ds, scores, DCM(), n_sessions=2000, seed=9, intervention="randpair", pivot=4, n_jobs=n)
               for n in (1, 2)]  # fmt: skip
    for f in ("document", "click", "swap", "pivot"):
        assert np.array_equal(getattr(threads[0], f), getattr(threads[1], f)), f


def test_query_frequency_is_followed(data):
    ds, scores = data
    f = np.arange(ds.n_queries, dtype=float)  # query 0 never, the last most often
    n = 20_000
    log = simulate(ds, scores, PBM(), n_sessions=n, seed=6, query_frequency=f)
    firsts = np.searchsorted(ds.query_ids, log.query[log.position == 1])
    share = np.bincount(firsts, minlength=ds.n_queries) / n
    p = f / f.sum()
    assert share[0] == 0
    assert np.all(np.abs(share - p) <= SIGMA * np.sqrt(p * (1 - p) / n) + 1e-12)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n_sessions=-1), "n_sessions must be"),
        (dict(top_k=0), "top_k must be"),
        (dict(temperature=0.0), "temperature must be > 0"),
        (dict(intervention="shuffle"), "intervention must be one of"),
        (dict(intervention="randpair", pivot=11), r"pivot must be an integer rank from 1 to top_k \(10\)"),
        (dict(intervention="randpair", pivot=0), "pivot must be an integer rank"),
        (dict(intervention="swap", pivot=2), "pivot=2 needs intervention='randpair'"),
        (dict(query_frequency=[1.0, 2.0]), "query_frequency must be 30 finite weights"),
        (dict(max_grade=1.0), "max_grade must be > 0 and at least every label"),
        (dict(scores=np.zeros(3)), "scores must be one score per row"),
        (dict(scores="nan"), "scores must be finite"),
        (dict(model="pbm"), "model must be a ClickModel"),
    ],
)
def test_bad_arguments_are_named(data, kwargs, message):
    ds, scores = data
    given = dict(scores=scores, model=PBM(), n_sessions=10)
    given.update(kwargs)
    if isinstance(given["scores"], str):
        given["scores"] = np.full(ds.n_samples, np.nan)
    with pytest.raises(ValueError, match=message):
        simulate(ds, given.pop("scores"), given.pop("model"), **given)


def test_negative_labels_are_refused(data):
    ds, scores = data
    bad = from_arrays(ds.X, np.where(np.arange(ds.n_samples) == 3, -1.0, ds.y), ds.qid)
    with pytest.raises(ValueError, match="labels must be >= 0"):
        simulate(bad, scores, PBM(), n_sessions=10)


def test_plackett_luce_at_a_tiny_temperature_is_the_ranking(data):
    ds, scores = data
    cold = simulate(ds, scores, PBM(), n_sessions=300, top_k=8, seed=9, temperature=1e-9)
    ranked = simulate(ds, scores, PBM(), n_sessions=300, top_k=8, seed=9)
    assert np.array_equal(cold.document, ranked.document) and np.array_equal(cold.query, ranked.query)
