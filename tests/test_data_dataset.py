"""RankingDataset, from_arrays / from_frame and the query-group helpers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from ranklearn.data import (
    DataFormatError,
    RankingDataset,
    from_arrays,
    from_frame,
    group_ptr,
    regroup_order,
    take_queries,
)
from _helpers import small_data


def small(sparse: bool = False) -> RankingDataset:
    X = np.arange(12, dtype=np.float32).reshape(6, 2)
    return RankingDataset(
        sp.csr_matrix(X) if sparse else X,
        [0, 1, 2, 0, 3, 1],
        [0, 2, 5, 6],
        query_ids=[11, 7, 30],
        comments=["a", "b", None, "d", "e", "f"],
        feature_names=["f1", "f2"],
    )


def test_properties():
    ds = small()
    assert (ds.n_samples, ds.n_features, ds.n_queries) == (6, 2, 3)
    assert ds.qid.tolist() == [11, 11, 7, 7, 7, 30]
    assert ds.query_sizes.tolist() == [2, 3, 1]
    assert ds.y.dtype == np.float64 and ds.ptr.dtype == np.int64 and ds.query_ids.dtype == np.int64
    assert "n_queries=3" in repr(ds)


def test_defaults_and_dtypes():
    ds = RankingDataset(np.ones((3, 2), dtype=np.int64), [1, 0, 1], [0, 3])
    assert ds.X.dtype == np.float32 and ds.query_ids.tolist() == [0]
    assert ds.comments is None and ds.feature_names is None
    assert RankingDataset(np.ones((1, 1)), [0], [0, 1]).X.dtype == np.float64  # float64 kept


def test_sparse_input_is_made_canonical_without_touching_the_callers_matrix():
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3])), shape=(1, 3))
    ds = RankingDataset(X, [1], [0, 1])
    assert ds.X.has_canonical_format
    np.testing.assert_array_equal(ds.X.toarray(), [[2, 0, 4]])
    np.testing.assert_array_equal(X.indices, [2, 0, 2])


def test_query_and_iteration():
    ds = small()
    q = ds.query(1)
    assert q.query_id == 7
    np.testing.assert_array_equal(q.X, [[4, 5], [6, 7], [8, 9]])
    np.testing.assert_array_equal(q.y, [2, 0, 3])
    assert q.comments.tolist() == [None, "d", "e"]
    assert ds.query(-1).query_id == 30
    assert [q.query_id for q in ds] == [11, 7, 30]
    with pytest.raises(IndexError):
        ds.query(3)


@pytest.mark.parametrize("sparse", [False, True])
def test_subset(sparse):
    ds = small(sparse)
    sub = ds.subset([2, 0])
    assert sub.query_ids.tolist() == [30, 11]
    np.testing.assert_array_equal(sub.ptr, [0, 1, 3])
    X = sub.X.toarray() if sparse else sub.X
    np.testing.assert_array_equal(X, [[10, 11], [0, 1], [2, 3]])
    np.testing.assert_array_equal(sub.y, [1, 0, 1])
    assert sub.comments.tolist() == ["f", "a", "b"]
    assert sub.feature_names == ["f1", "f2"]
    masked = ds.subset(np.array([True, False, True]))
    assert masked.query_ids.tolist() == [11, 30]
    with pytest.raises(DataFormatError, match="distinct"):
        ds.subset([0, 0])


def test_concatenate():
    a = small()
    b = RankingDataset(np.full((2, 2), 5.0), [4, 4], [0, 2], query_ids=[99])
    c = RankingDataset.concatenate([a, b])
    assert c.n_samples == 8 and c.X.dtype == np.float64
    np.testing.assert_array_equal(c.ptr, [0, 2, 5, 6, 8])
    assert c.query_ids.tolist() == [11, 7, 30, 99]
    assert c.comments.tolist() == ["a", "b", None, "d", "e", "f", None, None]
    assert c.feature_names == ["f1", "f2"]
    assert sp.issparse(RankingDataset.concatenate([small(True), b]).X)
    with pytest.raises(DataFormatError, match="distinct"):
        RankingDataset.concatenate([a, a])
    with pytest.raises(DataFormatError, match="n_features"):
        RankingDataset.concatenate([a, RankingDataset(np.ones((1, 3)), [0], [0, 1], query_ids=[5])])
    with pytest.raises(ValueError):
        RankingDataset.concatenate([])


def test_concatenate_files_whose_qids_are_text_and_integers(tmp_path):
    """qid:099 keeps its text and qid:100 is an integer: together they are text."""
    from ranklearn.data import load_svmlight

    (tmp_path / "a.txt").write_text("1 qid:099 1:0.5\n0 qid:099 1:0.1\n")
    (tmp_path / "b.txt").write_text("1 qid:100 1:0.5\n0 qid:100 1:0.2\n")
    parts = [load_svmlight(tmp_path / n) for n in ("a.txt", "b.txt")]
    assert parts[0].query_ids.tolist() == ["099"] and parts[1].query_ids.tolist() == [100]
    both = RankingDataset.concatenate(parts)
    assert both.query_ids.tolist() == ["099", "100"]
    with pytest.raises(DataFormatError, match="distinct"):  # 100 and "100" are one query
        RankingDataset.concatenate([both, parts[1]])
    floats = RankingDataset(np.ones((2, 2)), [0, 1], [0, 1, 2], query_ids=[1.0, 2.0])
    with pytest.raises(DataFormatError, match="distinct"):  # 1.0 and 1 stay one query: no text made of them
        RankingDataset.concatenate([floats, RankingDataset(np.ones((1, 2)), [0], [0, 1], query_ids=[1])])


def test_a_dataset_pickled_before_it_had_lines_still_works():
    import pickle

    ds = RankingDataset(np.ones((3, 2)), [0, 1, 0], [0, 2, 3])
    del ds.__dict__["lines"]  # as unpickled from an older ranklearn
    old = pickle.loads(pickle.dumps(ds))
    assert old.lines is None and old.subset([1]).lines is None
    with pytest.raises(DataFormatError, match="integers"):
        RankingDataset(np.ones((1, 2)), [0], [0, 1], lines=[1.5])


def test_to_dense():
    ds = small(sparse=True)
    dense = ds.to_dense()
    assert isinstance(dense.X, np.ndarray)
    np.testing.assert_array_equal(dense.X, small().X)
    assert dense.to_dense() is dense


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"X": np.ones(3)}, "2-D"),
        ({"y": [1, 2]}, "y must have shape"),
        ({"y": [1, np.nan, 2]}, "finite"),
        ({"ptr": [0, 2]}, "end at n_samples=3"),
        ({"ptr": [1, 3]}, "start at 0"),
        ({"ptr": [0, 0, 3]}, "empty"),
        ({"ptr": [0.0, 3.0]}, "integer"),
        ({"query_ids": [1, 2]}, "query_ids must have shape"),
        ({"comments": ["a"]}, "comments must have shape"),
        ({"feature_names": ["a", "b", "c"]}, "feature_names"),
    ],
)
def test_constructor_validation(kwargs, fragment):
    args = {"X": np.ones((3, 2)), "y": [0, 1, 2], "ptr": [0, 3]} | kwargs
    with pytest.raises(DataFormatError, match=fragment):
        RankingDataset(args.pop("X"), args.pop("y"), args.pop("ptr"), **args)


def test_from_arrays():
    ds = from_arrays(np.eye(4), [1, 0, 2, 1], ["b", "b", "a", "a"], comments=["w", "x", "y", "z"])
    assert ds.X.dtype == np.float32
    assert ds.query_ids.tolist() == ["b", "a"]
    np.testing.assert_array_equal(ds.ptr, [0, 2, 4])
    with pytest.raises(DataFormatError, match="reappears"):
        from_arrays(np.eye(3), [0, 1, 2], [1, 2, 1])
    with pytest.raises(DataFormatError, match="qid must have shape"):
        from_arrays(np.eye(3), [0, 1, 2], [1, 2])


def test_from_arrays_regroup_is_stable():
    X = np.arange(5, dtype=float)[:, None]
    ds = from_arrays(X, [0, 1, 2, 3, 4], [5, 9, 5, 7, 9], comments=list("abcde"), regroup=True)
    assert ds.query_ids.tolist() == [5, 9, 7]
    np.testing.assert_array_equal(ds.X[:, 0], [0, 2, 1, 4, 3])
    assert ds.comments.tolist() == ["a", "c", "b", "e", "d"]


def test_from_arrays_sparse_and_dtype():
    ds = from_arrays(sp.csr_matrix(np.eye(3)), [0, 1, 2], [1, 1, 1], dtype=np.float64)
    assert sp.issparse(ds.X) and ds.X.dtype == np.float64


def test_from_frame():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {
            "q": ["x", "x", "y"],
            "rel": [1, 0, 2],
            "bm25": [1.5, 2.0, 0.5],
            "len": [10, 20, 30],
            "doc": ["d1", "d2", "d3"],
        }
    )
    ds = from_frame(df, query_col="q", label_col="rel", comment_col="doc")
    assert ds.feature_names == ["bm25", "len"]
    np.testing.assert_array_equal(ds.X, np.array([[1.5, 10], [2.0, 20], [0.5, 30]], dtype=np.float32))
    assert ds.query_ids.tolist() == ["x", "y"] and ds.comments.tolist() == ["d1", "d2", "d3"]
    only = from_frame(df, query_col="q", label_col="rel", feature_cols=["len"])
    assert only.feature_names == ["len"] and only.n_features == 1
    with pytest.raises(KeyError, match="nope"):
        from_frame(df, query_col="nope", label_col="rel")
    with pytest.raises(KeyError, match="missing"):
        from_frame(df, query_col="q", label_col="rel", feature_cols=["missing"])
    # pd.DataFrame(array) names its columns 0, 1, ...: they were turned into text, then not found
    numbered = pd.DataFrame(np.array([[0, 1, 1.5], [0, 0, 2.0], [1, 2, 0.5]]))
    ds = from_frame(numbered, query_col=0, label_col=1)
    assert ds.feature_names == ["2"] and ds.X[:, 0].tolist() == [1.5, 2.0, 0.5] and ds.y.tolist() == [1, 0, 2]
    assert from_frame(numbered, query_col=0, label_col=1, feature_cols=[2]).n_features == 1


def test_group_helpers():
    np.testing.assert_array_equal(group_ptr([3, 3, 1, 2, 2]), [0, 2, 3, 5])
    np.testing.assert_array_equal(group_ptr([]), [0])
    with pytest.raises(DataFormatError, match="reappears at row 3"):
        group_ptr([1, 1, 2, 1])
    np.testing.assert_array_equal(regroup_order([1, 2, 1, 3, 2]), [0, 2, 1, 4, 3])
    rows, ptr = take_queries(np.array([0, 2, 5, 6]), [2, 0, -2])
    np.testing.assert_array_equal(rows, [5, 0, 1, 2, 3, 4])
    np.testing.assert_array_equal(ptr, [0, 1, 3, 6])
    with pytest.raises(IndexError):
        take_queries(np.array([0, 2]), [1])


def test_dataset_constructors_reject_bad_arrays():
    X, y, qid = small_data()
    with pytest.raises(DataFormatError, match="finite"):
        RankingDataset(X, np.where(np.arange(len(y)) == 2, np.nan, y), [0, len(y)])
    with pytest.raises(DataFormatError, match="ptr"):
        RankingDataset(X, y, [0, 5])
    with pytest.raises(DataFormatError, match="qid must have shape"):
        from_arrays(X, y, qid[:-1])
    with pytest.raises(DataFormatError, match="reappears"):
        from_arrays(X, y, np.r_[qid[8:], qid[:8]] % 2)
