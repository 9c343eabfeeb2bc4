"""Property tests (hypothesis): metrics, the loader, lambda gradients and tree models.

Example counts are kept small (CI runs these on every push); ``--hypothesis-seed`` and a
larger ``max_examples`` in a local profile explore further.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ranklearn.data import RankingDataset, load_svmlight, save_svmlight
from ranklearn.metrics import get_metric
from ranklearn.objectives.lambdas import LambdaObjective

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

METRICS = ["ndcg", "ndcg@1", "ndcg@3", "ndcg@10", "dcg@5", "err", "err@3", "map", "map@3", "p@3", "recall@3", "rr",
           "rr@2"]


# ------------------------------------------------------------------------------ strategies
@st.composite
def queries(draw, min_size=1, max_size=25, max_queries=5, continuous=False, ties=True):
    """(labels, scores, ptr) of a few queries; scores with ties unless ``ties=False``."""
    sizes = draw(st.lists(st.integers(min_size, max_size), min_size=1, max_size=max_queries))
    n = sum(sizes)
    if continuous:
        label = st.floats(0, 6, allow_nan=False, allow_infinity=False)
    else:
        label = st.integers(0, 4).map(float)
    y = np.array(draw(st.lists(label, min_size=n, max_size=n)))
    if ties:
        score = st.one_of(st.sampled_from([-1.0, 0.0, 0.5, 1.0]), st.floats(-1e6, 1e6, allow_nan=False))
        s = np.array(draw(st.lists(score, min_size=n, max_size=n)))
    else:
        s = np.array(draw(st.permutations(range(n))), dtype=float) * 0.37 - 3.0
    ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return y, s, ptr


conventions = st.fixed_dictionaries(
    {
        "gain": st.sampled_from(["exp2", "linear"]),
        "empty": st.sampled_from(["zero", "one", "skip"]),
        "ties": st.sampled_from(["stable", "pessimistic", "average"]),
    }
)


# ================================================================================= metrics
@FAST
@given(data=queries(continuous=False) | queries(continuous=True), conv=conventions, k=st.none() | st.integers(1, 30))
def test_ndcg_is_between_0_and_1(data, conv, k):
    y, s, ptr = data
    values = get_metric("ndcg" if k is None else f"ndcg@{k}", **conv).per_query(y, s, ptr)
    kept = values[~np.isnan(values)]
    assert np.all(kept >= 0.0) and np.all(kept <= 1.0 + 1e-12), values
    if conv["empty"] != "skip":
        assert not np.isnan(values).any()


@FAST
@given(data=queries(min_size=2, max_queries=1), pick=st.data(), ties=st.sampled_from(["stable", "average"]))
def test_swapping_equally_labelled_documents_changes_nothing(data, pick, ties):
    y, s, ptr = data
    groups = {}
    for i, label in enumerate(y.tolist()):
        groups.setdefault(label, []).append(i)
    pairs = [g for g in groups.values() if len(g) >= 2]
    assume(pairs)
    group = pick.draw(st.sampled_from(pairs))
    i, j = pick.draw(st.permutations(group))[:2]
    if ties == "stable":  # with tied scores, input order breaks ties: keep scores distinct
        s = np.argsort(np.argsort(s, kind="stable"), kind="stable").astype(float)
    swapped = s.copy()
    swapped[[i, j]] = s[[j, i]]
    for spec in METRICS:
        m = get_metric(spec, ties=ties)
        before, after = m.per_query(y, s, ptr), m.per_query(y, swapped, ptr)
        if ties == "stable":
            np.testing.assert_array_equal(after, before, err_msg=spec)
        else:
            np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-12, err_msg=spec)


@FAST
@given(data=queries(min_size=2, max_queries=1, ties=False), pick=st.data(), gain=st.sampled_from(["exp2", "linear"]))
def test_fixing_an_inversion_at_the_top_never_lowers_a_metric(data, pick, gain):
    y, s, ptr = data
    order = np.argsort(-s, kind="stable")
    ranked = y[order]
    # the highest-placed document that has a more relevant one below it
    tops = [a for a in range(len(ranked)) if (ranked[a + 1 :] > ranked[a]).any()]
    assume(tops)
    a = tops[0] if pick.draw(st.booleans()) else pick.draw(st.sampled_from(tops))
    b = pick.draw(st.sampled_from([b for b in range(a + 1, len(ranked)) if ranked[b] > ranked[a]]))
    fixed = s.copy()
    fixed[[order[a], order[b]]] = s[[order[b], order[a]]]
    for spec in METRICS:
        m = get_metric(spec, gain=gain)
        before, after = m.per_query(y, s, ptr)[0], m.per_query(y, fixed, ptr)[0]
        assert after >= before - 1e-12, (spec, before, after)
    ndcg = get_metric("ndcg", gain=gain)
    assert ndcg.per_query(y, fixed, ptr)[0] > ndcg.per_query(y, s, ptr)[0]  # whole list: strictly better


# ================================================================================== loader
_QID_CHARS = st.characters(
    blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters=":#", max_codepoint=0x2FFF
)
# save_svmlight refuses what it cannot write on one line, and NUL (the loader's sign of a binary file)
_COMMENT_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\0")


@st.composite
def text_datasets(draw):
    """Datasets with arbitrary text qids (at least one not an integer), comments and NaN."""
    n_queries = draw(st.integers(1, 5))
    first = "q" + draw(st.text(_QID_CHARS, max_size=8))
    others = draw(st.lists(st.text(_QID_CHARS, min_size=1, max_size=8), max_size=n_queries - 1))
    qids = list(dict.fromkeys([first, *others]))
    sizes = draw(st.lists(st.integers(1, 4), min_size=len(qids), max_size=len(qids)))
    n = sum(sizes)
    n_features = draw(st.integers(1, 6))
    value = st.one_of(
        st.just(0.0), st.just(float("nan")), st.floats(allow_infinity=False, allow_nan=False, width=32)
    )
    X = np.array(draw(st.lists(value, min_size=n * n_features, max_size=n * n_features)), dtype=np.float32)
    X = X.reshape(n, n_features)
    y = np.array(draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=n, max_size=n)))
    comments = draw(
        st.none() | st.lists(st.none() | st.text(_COMMENT_CHARS, max_size=20), min_size=n, max_size=n)
    )
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    return RankingDataset(X, y, ptr, query_ids=np.array(qids, dtype=object), comments=comments)


def _as_read_back(comment):
    """The loader strips ASCII blanks around a comment; an empty one reads back as None."""
    if comment is None:
        return None
    stripped = comment.strip(" \t\x0b\x0c")
    return stripped or None


@SLOW
@given(ds=text_datasets())
def test_save_then_load_keeps_text_qids_comments_and_nan(tmp_path_factory, ds):
    path = tmp_path_factory.mktemp("rt") / "data.txt"
    save_svmlight(ds, path)
    back = load_svmlight(path, n_features=ds.n_features)
    assert back.query_ids.tolist() == ds.query_ids.tolist()  # as written, "01" stays "01"
    np.testing.assert_array_equal(back.ptr, ds.ptr)
    np.testing.assert_array_equal(back.y, ds.y)
    np.testing.assert_array_equal(back.X, np.where(ds.X == 0, 0, ds.X))  # NaN == NaN here; -0.0 reads as 0
    expected = None if ds.comments is None else [_as_read_back(c) for c in ds.comments.tolist()]
    if expected is not None and all(c is None for c in expected):
        expected = None
    assert (None if back.comments is None else back.comments.tolist()) == expected


@SLOW
@given(ds=text_datasets(), data=st.data())
def test_regrouping_shuffled_rows_restores_the_queries(tmp_path_factory, ds, data):
    """Rows of queries interleaved in the file: regroup=True gives each query's rows in file order."""
    order = np.array(data.draw(st.permutations(range(ds.n_samples))))
    shuffled = RankingDataset(ds.X[order], ds.y[order], np.arange(ds.n_samples + 1),
                              query_ids=np.array([f"r{i}" for i in range(ds.n_samples)], dtype=object))  # fmt: skip
    path = tmp_path_factory.mktemp("rg") / "data.txt"
    save_svmlight(shuffled, path)
    text = path.read_text(encoding="utf-8").splitlines()
    qid_of_row = ds.qid[order].tolist()
    lines = [line.replace(f"qid:r{i}", f"qid:{qid_of_row[i]}", 1) for i, line in enumerate(text)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    back = load_svmlight(path, regroup=True, n_features=ds.n_features)
    first_seen = list(dict.fromkeys(qid_of_row))
    assert back.query_ids.tolist() == first_seen
    for q, qid in enumerate(first_seen):
        rows = order[[i for i, v in enumerate(qid_of_row) if v == qid]]  # original rows, in file order
        np.testing.assert_array_equal(back.y[back.ptr[q] : back.ptr[q + 1]], ds.y[rows])


# ================================================================================= lambdas
LAMBDA_SETTINGS = [
    dict(z="none", k=None, normalize=False),
    dict(z="none", k=None, normalize=True),
    dict(z="ndcg", k=None, normalize=False),
    dict(z="ndcg", k=None, normalize=True),
    dict(z="ndcg", k=3, normalize=False),
    dict(z="ndcg", k=10, normalize=True),
    dict(z="err", k=5, normalize=False),
    dict(z="map", k=None, normalize=True),
]


@st.composite
def lambda_inputs(draw):
    y, s, ptr = draw(queries(max_size=30, max_queries=4))
    if draw(st.booleans()):  # extreme score gaps as well
        s = np.array(draw(st.lists(st.floats(-1e300, 1e300, allow_nan=False), min_size=len(s), max_size=len(s))))
    return y, s, ptr


@FAST
@given(data=lambda_inputs(), setting=st.sampled_from(LAMBDA_SETTINGS), sigma=st.sampled_from([0.5, 1.0, 3.0]))
def test_lambdas_sum_to_zero_per_query_and_are_finite(data, setting, sigma):
    y, s, ptr = data
    grad, hess = LambdaObjective(sigma=sigma, gain="exp2", max_grade=4.0, **setting).gradients(s, y, ptr)
    assert np.isfinite(grad).all() and np.isfinite(hess).all()
    assert (hess >= 0).all()
    for q in range(len(ptr) - 1):
        g = grad[ptr[q] : ptr[q + 1]]
        assert abs(g.sum()) <= 1e-9 * max(1.0, np.abs(g).sum()), (q, g)


@FAST
@given(data=queries(max_queries=1))
def test_queries_with_one_label_get_no_gradient(data):
    y, s, ptr = data
    y = np.full_like(y, y[0])
    for setting in LAMBDA_SETTINGS:
        grad, hess = LambdaObjective(max_grade=4.0, **setting).gradients(s, y, ptr)
        assert not grad.any() and not hess.any()


# ================================================================================== trees
@st.composite
def tree_data(draw, continuous_labels=False):
    """Continuous random features with a drawn shape; graded labels 0..3, or distinct real labels."""
    seed = draw(st.integers(0, 2**32 - 1))
    n_queries = draw(st.integers(2, 12))
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 25, n_queries)
    n = int(sizes.sum())
    n_features = draw(st.integers(1, 6))
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    if draw(st.booleans()):
        X[rng.random(X.shape) < 0.1] = np.nan
    if continuous_labels:
        y = np.round(np.nan_to_num(X[:, 0]) + rng.normal(0, 1, n), 3)
    else:
        y = np.clip(np.round(X[:, 0] + rng.normal(0, 1, n)), 0, 3)
        y[np.isnan(y)] = 0
    qid = np.repeat(np.arange(n_queries) * 11, sizes)
    within = np.concatenate([start + rng.permutation(size) for start, size in zip(np.r_[0, np.cumsum(sizes)[:-1]], sizes)])
    return X, y, qid, within


def _model(**kw):
    from ranklearn.models import LambdaMART

    # one thread: the property is the same, and small fits skip the cost of starting parallel regions
    return LambdaMART(
        n_estimators=8, num_leaves=6, min_samples_leaf=2, bin_subsample=None, random_state=0, n_jobs=1, **kw
    )


@SLOW
@given(data=tree_data(), rows=st.randoms(use_true_random=False))
def test_tree_scores_do_not_depend_on_row_order_at_predict_time(data, rows):
    X, y, qid, _ = data
    model = _model().fit(X, y, qid=qid)
    perm = np.arange(len(y))
    rows.shuffle(perm)
    np.testing.assert_array_equal(model.predict(X[perm]), model.predict(X)[perm])
    np.testing.assert_array_equal(model.predict(X[perm[:1]]), model.predict(X)[perm[:1]])


@SLOW
@given(data=tree_data(continuous_labels=True), normalize=st.booleans())
def test_ranknet_trees_do_not_depend_on_training_row_order(data, normalize):
    """With RankNet lambdas (no position weighting), permuting rows within queries changes only
    the order of floating-point sums: predictions are equal up to rounding.

    Only where no exact tie in split gain exists, which the data make sure of: real labels
    (every document of a query gets a gradient; a query whose documents all share one label
    has none, and its documents can go to either side of a split at the same gain) and
    continuous sample weights (below).

    With |dNDCG| weighting (the default) this does not hold: the first iteration ranks the
    all-zero scores in input order, so its lambdas, and every later tree, depend on the order
    of the rows within each query.
    """
    X, y, qid, within = data
    # Continuous weights make every document's gradient distinct. Without them, documents at
    # the same label rank in queries of the same size get identical gradients, two different
    # splits can then have exactly the same gain, and the rounding of the histogram sums
    # (which follows the row order) picks one: a tie-break, not a dependence on the order.
    weight = np.random.default_rng(len(y)).uniform(0.5, 1.5, len(y))
    a = _model(lambda_metric="none", lambda_normalization="lightgbm" if normalize else "none").fit(X, y, qid=qid, sample_weight=weight)
    b = _model(lambda_metric="none", lambda_normalization="lightgbm" if normalize else "none").fit(
        X[within], y[within], qid=qid[within], sample_weight=weight[within]
    )
    # Equal up to rounding. The trees need not be identical: in a small node two features
    # can induce the same partition with the same gain, and a split whose gain is zero up to
    # rounding may be made in one order and not in the other (its leaves then differ by ~0).
    np.testing.assert_allclose(b.predict(X), a.predict(X), rtol=1e-9, atol=1e-9)


def test_ndcg_is_exactly_one_for_the_ideal_order():
    """A fixed sanity anchor for the properties above."""
    y = np.array([3.0, 2, 2, 1, 0])
    for spec in ("ndcg", "ndcg@3"):
        assert math.isclose(get_metric(spec).per_query(y, -np.arange(5.0), [0, 5])[0], 1.0)


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
