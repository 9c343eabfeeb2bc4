"""ClickLog: arrays and files checked per row/line, TSV and Parquet round trips, aggregation and the feature join."""

from __future__ import annotations

import builtins
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklearn.clicks import ClickLog
from ranklearn.data import from_arrays
from ranklearn.exceptions import DataFormatError

HEADER = "query\tsession\tdocument\tposition\tclicked\n"


def small_log(swap=False, pivot=False):
    rng = np.random.default_rng(0)
    rows = []
    for session in range(40):
        query = int(rng.integers(0, 3))
        docs = rng.permutation(5)[:4]
        for pos, doc in enumerate(docs, 1):
            rows.append((query, session, int(doc), pos, int(rng.random() < 0.3), 2 if swap else 0))
    q, s, d, p, c, w = map(np.array, zip(*rows))
    return ClickLog.from_arrays(query=q, session=s, document=d, position=p, click=c, swap=w if swap else None,
                                pivot=np.full(len(q), 3) if pivot else None)  # fmt: skip


def dataset(n_queries=3, docs=5, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * docs, 3))
    return from_arrays(X, rng.integers(0, 3, n_queries * docs), np.repeat(np.arange(n_queries), docs))


def equal_logs(a, b):
    for f in ("query", "session", "document", "position", "click"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert (a.swap is None) == (b.swap is None)
    if a.swap is not None:
        assert np.array_equal(a.swap, b.swap)
    assert (a.pivot is None) == (b.pivot is None)
    if a.pivot is not None:
        assert np.array_equal(a.pivot, b.pivot)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(position=[1, 0, 3]), "click log row 1: position must be at least 1"),
        (dict(position=[1, 2.5, 3]), "click log row 1: position is 2.5, not an integer"),
        (dict(position=[1, 2, np.nan]), "click log row 2: position is NaN"),
        (dict(click=[0, 2, 1]), "click log row 1: clicked must be 0 or 1, got 2"),
        (dict(document=[0, -1, 2]), "click log row 1: document must be a row index"),
        (dict(position=[1, 2, 1]), "click log row 2: session 7 shows position 1 twice"),
        (dict(query=[4, 4, 5]), "click log row 2: session 7 belongs to query 5 and to another query"),
        (dict(click=[0, 1]), "click log arrays differ in length"),
        (dict(session=["a", "b", "c"]), "session must be numbers"),
        (dict(swap=[2, 2, 2], pivot=[1, 0, 1]), "click log row 1: pivot must be a rank"),
        (dict(pivot=[1, 1, 1]), "a pivot column needs a swap column"),
    ],
)
def test_from_arrays_names_the_first_bad_row(change, message):
    given = dict(query=[4, 4, 4], session=[7, 7, 7], document=[0, 1, 2], position=[1, 2, 3], click=[0, 1, 0])
    given.update(change)
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        ClickLog.from_arrays(**given)


def test_the_first_bad_row_wins_whatever_the_rule():
    # row 1 repeats a position, row 2 has a bad click: row 1 is reported
    with pytest.raises(ValueError, match="row 1: session 0 shows position 1 twice"):
        ClickLog.from_arrays(query=[0, 0, 0], session=[0, 0, 0], document=[0, 1, 2], position=[1, 1, 2], click=[0, 0, 5])


@pytest.mark.parametrize("swap, pivot", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("suffix", [".tsv", ".parquet"])
def test_file_round_trip(tmp_path, suffix, swap, pivot):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    log = small_log(swap, pivot)
    path = tmp_path / f"log{suffix}"
    log.write(path)
    equal_logs(ClickLog.read(path), log)
    if suffix == ".tsv":
        lines = path.read_text().splitlines()
        extra = ["swap"] * swap + ["pivot"] * pivot
        assert lines[0].split("\t") == ["query", "session", "document", "position", "clicked", *extra]
        assert lines[1].split("\t") == [str(v) for v in (log.query[0], log.session[0], log.document[0], log.position[0], log.click[0])] + ["2"] * swap + ["3"] * pivot
        assert len(lines) == len(log) + 1


@pytest.mark.parametrize(
    "body, line, message",
    [
        ("1\t0\t3\t0\t1\n", 2, "position must be at least 1"),
        ("1\t0\t3\t1\t1\n1\t0\t4\tnan\t0\n", 3, "NaN is not an integer (got 'nan')"),
        ("1\t0\t3\t1.5\t1\n", 2, "expected an integer (got '1.5')"),
        ("1\t0\t3\t1\t2\n", 2, "clicked must be 0 or 1, got 2"),
        ("1\t0\t3\t1\n", 2, "expected 5 tab-separated fields as in the header (got '1\\t0\\t3\\t1')"),
        ("1\t0\t3\t1\t0\t1\n", 2, "expected 5 tab-separated fields"),
        ("1\t0\t3\t1\t0\n\r\n\n1\t0\t4\t1\t1\n", 5, "session 0 shows position 1 twice"),
        ("1\t0\t3\t1\t0\r\n1\t0\t4\t2\t9\r\n", 3, "clicked must be 0 or 1, got 9"),
        ("1\t0\t3\t1\t99999999999999999999\n", 2, "integer out of range"),
    ],
)
def test_tsv_errors_name_file_and_line(tmp_path, body, line, message):
    path = tmp_path / "bad.tsv"
    path.write_text(HEADER + body)
    with pytest.raises(DataFormatError) as info:
        ClickLog.read(path)
    assert info.value.path == str(path) and info.value.line == line, str(info.value)
    assert message in str(info.value)


def test_tsv_header_is_checked(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("query session document position clicked\n1 0 3 1 0\n")
    with pytest.raises(DataFormatError, match=r"bad\.tsv:1: expected the header query <tab> session"):
        ClickLog.read(path)


def test_tsv_without_final_newline_and_empty(tmp_path):
    path = tmp_path / "a.tsv"
    path.write_text(HEADER + "1\t0\t3\t1\t0\n1\t0\t4\t2\t1")
    log = ClickLog.read(path)
    assert log.position.tolist() == [1, 2] and log.click.tolist() == [0, 1]
    path.write_text(HEADER)
    assert len(ClickLog.read(path)) == 0


def test_parquet_errors_name_file_and_row(tmp_path):
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    import pyarrow.parquet as pq

    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"query": [1, 1], "session": [0, 0], "document": [0, 1], "position": [1, 1], "clicked": [0, 1]}), path)
    with pytest.raises(DataFormatError, match=r"bad\.parquet: row 1: session 0 shows position 1 twice"):
        ClickLog.read(path)
    pq.write_table(pa.table({"query": [1], "session": [0]}), path)
    with pytest.raises(DataFormatError, match="missing columns"):
        ClickLog.read(path)
    columns = {"query": [1], "session": [0], "document": [0], "position": [1], "clicked": [0], "pivot": [2]}
    pq.write_table(pa.table(columns), path)
    with pytest.raises(DataFormatError, match=r"bad\.parquet: a pivot column needs a swap column"):
        ClickLog.read(path)


def test_parquet_without_pyarrow_says_how_to_get_it(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(ImportError, match=r"pip install 'ranklearn\[parquet\]'"):
        small_log().write(tmp_path / "log.parquet")


def test_aggregate_counts_equal_a_brute_force_count():
    log = small_log()
    counts = log.aggregate()
    shown = Counter(zip(log.query.tolist(), log.document.tolist(), log.position.tolist()))
    clicked = Counter(k for k, c in zip(zip(log.query.tolist(), log.document.tolist(), log.position.tolist()), log.click) if c)
    got = {(q, d, p): (c, n) for q, d, p, c, n in zip(counts.query, counts.document, counts.position, counts.clicks, counts.impressions)}
    assert got == {k: (clicked[k], n) for k, n in shown.items()}
    keys = list(zip(counts.query, counts.document, counts.position))
    assert keys == sorted(keys)


def test_training_set_joins_the_documents_features():
    log, ds = small_log(), dataset()
    t = log.training_set(ds)
    counts = log.aggregate()
    assert t.y.sum() == log.click.sum() and t.sample_weight.sum() == len(log)
    for i in range(len(t.y)):  # every row: the features of its document's row in its query
        q = int(t.qid[i])
        assert np.array_equal(t.X[i], ds.X[ds.ptr[q] + (t.document[i] - ds.ptr[q])])
        match = (counts.query == q) & (counts.document == t.document[i] - ds.ptr[q]) & (counts.position == t.position[i])
        assert (counts.clicks[match], counts.impressions[match]) == (t.y[i], t.sample_weight[i])
    assert np.all(np.diff(t.qid) >= 0)  # queries contiguous, in the dataset's order
    assert np.allclose(t.ctr, t.y / t.sample_weight)
    rows = t.to_dataset()
    assert np.array_equal(rows.position, t.position) and rows.n_queries == len(np.unique(t.qid))
    pooled = log.training_set(ds, per="document")
    assert pooled.position is None and pooled.sample_weight.sum() == len(log)
    assert len(pooled.y) == len(set(zip(log.query.tolist(), log.document.tolist())))


def test_per_session_rows():
    log, ds = small_log(), dataset()
    t = log.training_set(ds, per="session")
    assert len(t.y) == len(log) and np.all(t.sample_weight == 1)
    assert np.all(np.diff(t.qid) >= 0)
    first = t.qid == log.session[0]
    assert t.position[first].tolist() == [1, 2, 3, 4]
    assert np.array_equal(t.X[first], ds.X[ds.ptr[log.query[0]] + log.document[log.session == log.session[0]]])


def test_per_pattern_merges_identical_sessions_with_their_count():
    # sessions of 2 queries over 3 documents: many repeat exactly (same list, same clicks)
    rng = np.random.default_rng(1)
    rows = []
    for session in range(200):
        query = int(rng.integers(0, 2))
        docs = [0, 1, 2] if rng.random() < 0.8 else [2, 0, 1]
        rows += [(query, session, d, p, int(rng.random() < 0.3)) for p, d in enumerate(docs, 1)]
    q, s, d, p, c = map(np.array, zip(*rows))
    log = ClickLog.from_arrays(query=q, session=s, document=d, position=p, click=c)
    t = log.training_set(dataset(), per="pattern")
    # brute force: each session as (query, ((document, position, click), ...)), counted
    sessions = Counter(
        (int(q[s == k][0]), tuple(zip(d[s == k].tolist(), p[s == k].tolist(), c[s == k].tolist()))) for k in range(200)
    )
    got = {}
    for k in np.unique(t.qid):
        g = t.qid == k
        assert np.all(t.sample_weight[g] == t.sample_weight[g][0]) and t.position[g].tolist() == [1, 2, 3]
        q_index = np.searchsorted(dataset().ptr, t.document[g][0], side="right") - 1
        key = (int(q_index), tuple(zip((t.document[g] - dataset().ptr[q_index]).tolist(), t.position[g].tolist(),
                                       t.y[g].astype(int).tolist())))  # fmt: skip
        got[key] = int(t.sample_weight[g][0])
    assert got == dict(sessions) and t.sample_weight[np.r_[True, t.qid[1:] != t.qid[:-1]]].sum() == 200
    assert np.array_equal(t.X, dataset().X[t.document]) and np.all(np.diff(t.qid) >= 0)
    with pytest.raises(ValueError, match="'session' or 'pattern'"):
        log.training_set(dataset(), per="sessions")


def test_join_errors_name_the_query_and_document():
    log = ClickLog.from_arrays(query=[9], session=[0], document=[0], position=[1], click=[1])
    with pytest.raises(ValueError, match="click log query 9 is not in the dataset"):
        log.training_set(dataset())
    log = ClickLog.from_arrays(query=[1], session=[0], document=[5], position=[1], click=[1])
    with pytest.raises(ValueError, match="document 5 of query 1: the query has 5 rows"):
        log.training_set(dataset())
    with pytest.raises(ValueError, match="per must be"):
        log.training_set(dataset(), per="query")


@settings(max_examples=40, deadline=None)
@given(
    sessions=st.lists(
        st.tuples(st.integers(-(2**63), 2**63 - 1), st.lists(st.tuples(st.integers(0, 2**63 - 1), st.booleans()), min_size=1, max_size=4)),
        max_size=6,
    ),
    swap=st.booleans(),
)
def test_any_valid_log_survives_the_tsv_round_trip(tmp_path_factory, sessions, swap):
    """Extreme ids (int64's ends, negative queries), empty logs, with and without the swap column."""
    q, s, d, p, c = [], [], [], [], []
    for number, (query, shown) in enumerate(sessions):
        for pos, (doc, click) in enumerate(shown, 1):
            q.append(query), s.append(-number), d.append(doc), p.append(pos), c.append(int(click))
    arrays = dict(query=np.array(q, np.int64), session=np.array(s, np.int64), document=np.array(d, np.int64),
                  position=np.array(p, np.int64), click=np.array(c, np.int64))  # fmt: skip
    log = ClickLog.from_arrays(**arrays, swap=np.ones(len(q), np.int64) if swap else None)
    path = tmp_path_factory.mktemp("prop") / "log.tsv"
    log.write(path)
    equal_logs(ClickLog.read(path), log)
