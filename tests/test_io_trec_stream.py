"""The streaming TREC reader: block boundaries, numbers, comments and errors naming the line."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.exceptions import DataFormatError
from ranklearn.io import trec_stream
from ranklearn.io.trec_stream import read_judged_rankings


def files(tmp_path, qrels, run):
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    return tmp_path / "q", tmp_path / "r"


def test_blocks_of_any_size_give_the_same_lists(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    qrels = "".join(f"{q} 0 d{d} {rng.integers(-1, 3)}\n" for q in range(5) for d in range(0, 40, 3))
    run = "# comment\n" + "".join(f"{q} Q0 d{d} 1 {rng.integers(0, 4) / 4} t{q}\n" for q in range(5) for d in range(30))
    q, r = files(tmp_path, qrels, run)
    whole, runid, _ = read_judged_rankings(q, r)
    monkeypatch.setattr(trec_stream, "BLOCK", 7)  # lines cut across reads
    cut, _, _ = read_judged_rankings(q, r)
    assert runid == "t4" and whole.query_ids == cut.query_ids == [str(i) for i in range(5)]
    np.testing.assert_array_equal(whole.rels, cut.rels)
    np.testing.assert_array_equal(whole.levels, cut.levels)
    # query 0: scores tie, so docid descending within each score; d0 (grade in qrels) present
    first = whole.rels[whole.ptr[0] : whole.ptr[1]]
    assert first.size == 30 and set(first) <= {-2, -1, 0, 1, 2}


@pytest.mark.parametrize("text", ["1.5", "-3", "1e-3", "0.1", "12345678901234567890", "1e300", "-0.000000000000000000000001"])
def test_scores_are_read_exactly(tmp_path, text):
    q, r = files(tmp_path, "1 0 a 1\n1 0 b 0\n", f"1 Q0 a 1 {text} t\n1 Q0 b 2 {float(text)!r} t\n")
    assert trec_stream._read(r, run=True).values.tolist() == [float(text)] * 2


def test_long_scores_are_read_exactly(tmp_path):
    # Python's repr (up to 17 digits: 16-digit ones up to 2**53 convert fast, the others by
    # float()), fixed and exponent forms, integers past 2**53
    rng = np.random.default_rng(13)
    spread = rng.normal(size=300) * 10.0 ** rng.integers(-30, 30, 300)
    values = np.concatenate([rng.normal(size=300), rng.random(300), spread])
    texts = [repr(float(v)) for v in values] + [f"{v:.16f}" for v in values[:200]] + [f"{v:.15e}" for v in values[:200]]
    texts += ["9007199254740993", "9007199254740992", "0.9007199254740993", "12345678901234567", "1" + "0" * 17]
    # halfway between two doubles (ties to even) and next to halfway
    ulps = [2 ** int(e) for e in rng.integers(1, 7, 100)]
    texts += [str(int(k) * u + u // 2 + int(j)) for k, u, j in zip(rng.integers(2**52, 2**53, 100), ulps, rng.integers(-1, 2, 100))]
    _, r = files(tmp_path, "", "".join(f"q Q0 d{i} 1 {t} t\n" for i, t in enumerate(texts)))
    assert trec_stream._read(r, run=True).values.tolist() == [float(t) for t in texts]


@pytest.mark.parametrize(
    "qrels, run, fragments",
    [
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n\n1 Q0 b 1\n", ["r:3:", "6 columns", "got 4"]),
        ("1 0 a 1\n", "1 Q0 a 1 nan t\n", ["r:1:", "score must be a finite number", "nan"]),
        ("1 0 a 1\n", "1 Q0 a 1 1e999 t\n", ["r:1:", "finite", "1e999"]),
        ("1 0 a 1\n", "1 Q0 a 1 1..2 t\n", ["r:1:", "finite", "1..2"]),
        ("# c\n1 0 a x\n", "1 Q0 a 1 1 t\n", ["q:2:", "grade must be a finite number"]),
        ("1 0 a 1 2\n", "1 Q0 a 1 1 t\n", ["q:1:", "4 columns"]),
    ],
)
def test_errors_name_the_line(tmp_path, qrels, run, fragments):
    q, r = files(tmp_path, qrels, run)
    with pytest.raises(DataFormatError) as info:
        read_judged_rankings(q, r)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def reference_rels(qrels: dict, run: dict, judged_only: bool, max_docs: int | None) -> dict:
    """trec_eval's judgement lists by its rules, one query at a time in plain Python."""
    out = {}
    for q in sorted(set(qrels) & set(run)):
        # trec_eval sorts C floats: scores equal as float32 tie
        ranked = sorted(run[q].items(), key=lambda item: (np.float32(item[1]), item[0].encode()), reverse=True)[:max_docs]
        rels = [-1 if d not in qrels[q] else -2 if qrels[q][d] < 0 else qrels[q][d] for d, _ in ranked]
        out[q] = [g for g in rels if not (judged_only and g < 0)]
    return out


@pytest.mark.parametrize("judged_only, max_docs", [(False, None), (True, None), (True, 7), (False, 3)])
def test_many_queries_equal_a_plain_reference(tmp_path, judged_only, max_docs):
    # queries across the parallel chunks with long lists, shared document ids, score ties,
    # unjudged and negative grades: -J moves every list (the move once raced between threads)
    rng = np.random.default_rng(3)
    qrels, run = {}, {}
    for q in range(24):
        docs = [f"d{d}" for d in rng.choice(3000, size=2000, replace=False)]
        qrels[f"q{q}"] = {d: int(rng.integers(-2, 3)) for d in docs[:1200]}
        run[f"q{q}"] = {d: float(rng.integers(0, 50)) / 2 for d in docs[300:]}
    q, r = files(tmp_path, "".join(f"{k} 0 {d} {g}\n" for k, judged in qrels.items() for d, g in judged.items()),
                 "".join(f"{k} Q0 {d} 1 {s} t\n" for k, ranked in run.items() for d, s in ranked.items()))  # fmt: skip
    got, _, _ = read_judged_rankings(q, r, judged_only=judged_only, max_docs=max_docs)
    want = reference_rels(qrels, run, judged_only, max_docs)
    assert got.query_ids == list(want)
    for i, k in enumerate(got.query_ids):
        assert got.rels[got.ptr[i] : got.ptr[i + 1]].tolist() == want[k], k


def test_scores_are_compared_as_c_floats(tmp_path):
    # negative scores, -0.0 and 0.0, scores equal only as float32, runs of ties shorter and
    # longer than the insertion-sort limit, ids of several lengths (byte order: "d10" < "d9")
    rng = np.random.default_rng(5)
    base = [-2.5, -0.0, 0.0, 0.1, 0.1000000001, 0.1000000002, 1e-30, -1e-30, 3.0, 1e30]
    qrels, run = {}, {}
    for q in range(6):
        docs = [f"d{d}" for d in rng.choice(400, size=120, replace=False)]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs}
        picks = [base[i] for i in rng.integers(0, len(base), size=90)] + [7.0] * 30  # a run of 30 ties
        run[f"q{q}"] = dict(zip(docs, picks))
    q, r = files(tmp_path, "".join(f"{k} 0 {d} {g}\n" for k, judged in qrels.items() for d, g in judged.items()),
                 "".join(f"{k} Q0 {d} 1 {s!r} t\n" for k, ranked in run.items() for d, s in ranked.items()))  # fmt: skip
    got, _, _ = read_judged_rankings(q, r)
    want = reference_rels(qrels, run, False, None)
    for i, k in enumerate(got.query_ids):
        assert got.rels[got.ptr[i] : got.ptr[i + 1]].tolist() == want[k], k
    # the float64 order would differ: the float32 rule decides here
    by_double = {k: [qrels[k][d] for d, _ in sorted(v.items(), key=lambda it: (it[1], it[0].encode()), reverse=True)]
                 for k, v in run.items()}  # fmt: skip
    assert by_double != want


def test_shuffled_lines_give_the_same_lists(tmp_path):
    # files listing each query's lines together and files interleaving them (the grouping
    # by query then reorders the rows) read the same
    rng = np.random.default_rng(7)
    qrels = [f"q{q} 0 d{d} {rng.integers(-1, 3)}\n" for q in range(9) for d in rng.choice(300, 80, replace=False)]
    run = [f"q{q} Q0 d{d} 1 {rng.integers(0, 20) / 4} t\n" for q in range(9) for d in rng.choice(300, 120, replace=False)]
    q, r = files(tmp_path, "".join(qrels), "".join(run))
    together, _, by_query = read_judged_rankings(q, r)
    q, r = files(tmp_path, "".join(rng.permutation(qrels)), "".join(rng.permutation(run)))
    shuffled, _, shuffled_by_query = read_judged_rankings(q, r)
    assert together.query_ids == shuffled.query_ids
    np.testing.assert_array_equal(together.rels, shuffled.rels)
    np.testing.assert_array_equal(together.levels, shuffled.levels)
    def grades(judged):
        return {k: sorted(v.tolist()) for k, v in judged.items()}

    assert grades(by_query) == grades(shuffled_by_query)


@pytest.mark.parametrize("ids_ascending, max_docs", [(False, None), (True, None), (True, 5)])
def test_rankings_of_the_queries_asked_equal_a_plain_reference(tmp_path, ids_ascending, max_docs):
    # the run of -R prefs / qrels_jg: only the queries asked, equal scores (as C floats) by
    # docno ascending (prefs) or descending (qrels_jg)
    from ranklearn.io.trec_stream import read_rankings

    rng = np.random.default_rng(11)
    run = {f"q{q}": {f"d{d}": float(rng.integers(0, 8) / 4 + 1e-9 * rng.integers(0, 2))
                     for d in rng.choice(90, 40, replace=False)} for q in range(12)}  # fmt: skip
    _, r = files(tmp_path, "", "".join(f"{k} Q0 {d} 1 {s!r} t{k}\n" for k, ranked in run.items() for d, s in ranked.items()))
    asked = ["q3", "q10", "q7", "absent"]
    ids, ranked, runid = read_rankings(r, asked, max_docs=max_docs, ids_ascending=ids_ascending)
    assert ids == ["q10", "q3", "q7"] and runid == "tq11" and len(ranked) == 3
    for q, docs in zip(ids, ranked):
        by_id = sorted(run[q], key=str.encode, reverse=not ids_ascending)
        assert docs == sorted(by_id, key=lambda d: -np.float32(run[q][d]))[:max_docs], q
    (tmp_path / "twice").write_text("1 Q0 a 1 1 t\n2 Q0 a 1 1 t\n2 Q0 b 2 1 t\n2 Q0 a 3 0.5 t\n")
    with pytest.raises(DataFormatError, match="'a' is listed twice for query '2'"):
        read_rankings(tmp_path / "twice", ["1"])
