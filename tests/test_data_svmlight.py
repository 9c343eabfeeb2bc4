"""SVMlight / LETOR loading and saving: quirks, malformed input, exactness, real files."""

from __future__ import annotations

import codecs
import gzip
import io

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklearn.data import DataFormatError, RankingDataset, load_svmlight, save_svmlight
from ranklearn.models import LambdaMART
from _helpers import TINY_TREES, small_data

BASIC = (
    "2 qid:10 1:0.5 3:-1.25 # docid = A\n"
    "0 qid:10 2:7\n"
    "1 qid:3 1:1e-3 4:2.5E+2 #docid = B inc = 1\n"
)


def write(tmp_path, content, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def assert_same_dataset(a: RankingDataset, b: RankingDataset) -> None:
    Xa = a.X.toarray() if sp.issparse(a.X) else a.X
    Xb = b.X.toarray() if sp.issparse(b.X) else b.X
    assert Xa.dtype == Xb.dtype
    np.testing.assert_array_equal(Xa, Xb)  # NaN == NaN here
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.ptr, b.ptr)
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert (a.comments is None) == (b.comments is None)
    if a.comments is not None:
        assert a.comments.tolist() == b.comments.tolist()


# ------------------------------------------------------------------ well-formed


def test_basic_file(tmp_path):
    ds = load_svmlight(write(tmp_path, BASIC))
    assert (ds.n_samples, ds.n_features, ds.n_queries) == (3, 4, 2)
    assert ds.X.dtype == np.float32 and ds.y.dtype == np.float64 and ds.ptr.dtype == np.int64
    np.testing.assert_array_equal(
        ds.X, np.array([[0.5, 0, -1.25, 0], [0, 7, 0, 0], [1e-3, 0, 0, 250]], dtype=np.float32)
    )
    np.testing.assert_array_equal(ds.y, [2, 0, 1])
    np.testing.assert_array_equal(ds.ptr, [0, 2, 3])
    assert ds.query_ids.tolist() == [10, 3]  # file order, not sorted
    assert ds.qid.tolist() == [10, 10, 3]
    assert ds.comments.tolist() == ["docid = A", None, "docid = B inc = 1"]


def test_crlf_trailing_spaces_tabs_and_blank_lines_match_plain(tmp_path):
    plain = load_svmlight(write(tmp_path, BASIC, "plain.txt"))
    messy_lines = []
    for line in BASIC.splitlines():
        data, hash_, comment = line.partition("#")
        messy_lines.append("\t" + data.replace(" ", " \t ") + hash_ + comment + "   \r\n\r\n")
    messy = "\r\n  \r\n" + "".join(messy_lines) + "\n   \t\n"
    assert_same_dataset(load_svmlight(write(tmp_path, messy, "messy.txt")), plain)


def test_comment_only_lines_are_not_data_and_line_numbers_still_count(tmp_path):
    text = "# header\n\n1 qid:1 1:1\n#another\n1 qid:1 1:NULL\n"
    with pytest.raises(DataFormatError) as exc:
        load_svmlight(write(tmp_path, text))
    assert exc.value.line == 5
    text = "# header\n1 qid:1 1:1\n   # indented comment\n0 qid:1 2:1\n"
    ds = load_svmlight(write(tmp_path, text))
    assert ds.n_samples == 2 and ds.comments is None


def test_comment_without_space_before_hash(tmp_path):
    ds = load_svmlight(write(tmp_path, "1 qid:1 1:0.5#docid=7\n"))
    assert ds.comments.tolist() == ["docid=7"]
    assert ds.X[0, 0] == np.float32(0.5)


def test_sparse_rows_and_label_only_rows(tmp_path):
    ds = load_svmlight(write(tmp_path, "1 qid:1 7:2\n0 qid:1\n3 qid:2 2:1\n"))
    assert ds.n_features == 7
    np.testing.assert_array_equal(ds.X[1], np.zeros(7, dtype=np.float32))
    assert ds.X[0, 6] == 2 and ds.X[2, 1] == 1


def test_number_syntax_scientific_negative_and_signs(tmp_path):
    tokens = ["1e-3", "-2.5E+2", "+1.5", ".5", "5.", "-0", "1E3", "-7", "0.000000", "12345678901234567890", "1e-30"]
    line = "-1.5 qid:1 " + " ".join(f"{i + 1}:{t}" for i, t in enumerate(tokens))
    ds = load_svmlight(write(tmp_path, line + "\n"), dtype=np.float64)
    np.testing.assert_array_equal(ds.X[0], [float(t) for t in tokens])
    assert ds.y[0] == -1.5


def test_labels_any_real_values(tmp_path):
    labels = ["0", "4", "31", "100", "-3", "0.25", "2.5e1", "1e-300"]
    text = "".join(f"{lab} qid:1 1:1\n" for lab in labels)
    ds = load_svmlight(write(tmp_path, text))
    np.testing.assert_array_equal(ds.y, [float(v) for v in labels])


def test_nan_values_are_missing(tmp_path):
    ds = load_svmlight(write(tmp_path, "1 qid:1 1:nan 2:NaN 3:-nan 4:1\n"))
    assert np.isnan(ds.X[0, :3]).all() and ds.X[0, 3] == 1


def test_unsorted_feature_ids_are_sorted(tmp_path):
    # slow-path numbers (many digits, big exponent) in a reordered line land in the right column
    line = "1 qid:1 5:1.2345678901234567890123 2:0.5 9:1e-30 1:3\n"
    ds = load_svmlight(write(tmp_path, line), dtype=np.float64, sparse=True)
    assert ds.X.indices.tolist() == [0, 1, 4, 8]
    np.testing.assert_array_equal(ds.X.data, [3.0, 0.5, 1.2345678901234567890123, 1e-30])


def test_sparse_output_and_float64(tmp_path):
    ds = load_svmlight(write(tmp_path, BASIC), sparse=True, dtype=np.float64)
    assert sp.issparse(ds.X) and ds.X.format == "csr" and ds.X.dtype == np.float64
    assert ds.X.shape == (3, 4)
    np.testing.assert_array_equal(ds.X.toarray(), load_svmlight(write(tmp_path, BASIC), dtype=np.float64).X)


def test_n_features_pads(tmp_path):
    ds = load_svmlight(write(tmp_path, BASIC), n_features=10)
    assert ds.n_features == 10 and not ds.X[:, 4:].any()


def test_gzip_detected_by_magic_bytes_not_name(tmp_path):
    plain = load_svmlight(write(tmp_path, BASIC))
    packed = gzip.compress(BASIC.encode())
    assert_same_dataset(load_svmlight(write(tmp_path, packed, "misnamed.txt")), plain)
    assert_same_dataset(load_svmlight(write(tmp_path, packed, "data.txt.gz")), plain)


def test_file_objects(tmp_path):
    plain = load_svmlight(write(tmp_path, BASIC))
    assert_same_dataset(load_svmlight(io.BytesIO(BASIC.encode())), plain)
    assert_same_dataset(load_svmlight(io.StringIO(BASIC)), plain)
    assert_same_dataset(load_svmlight(io.BytesIO(gzip.compress(BASIC.encode()))), plain)


def test_utf8_bom_and_utf8_comments(tmp_path):
    ds = load_svmlight(write(tmp_path, b"\xef\xbb\xbf1 qid:1 1:1 # caf\xc3\xa9\n"))
    assert ds.y[0] == 1 and ds.comments.tolist() == ["café"]


def test_string_qids_are_kept_as_written(tmp_path):
    ds = load_svmlight(write(tmp_path, "1 qid:q-b 1:1\n0 qid:q-b 1:2\n2 qid:7 1:3\n"))
    assert ds.query_ids.tolist() == ["q-b", "7"]
    assert ds.qid.tolist() == ["q-b", "q-b", "7"]


def test_reappearing_qid_is_an_error_naming_both_lines(tmp_path):
    text = "1 qid:5 1:1\n0 qid:5 1:2\n\n2 qid:9 1:3\n1 qid:5 1:4\n"
    with pytest.raises(DataFormatError) as exc:
        load_svmlight(write(tmp_path, text))
    assert exc.value.line == 5
    assert "line 5" in str(exc.value) and "line 1" in str(exc.value)
    assert "qid:5" in str(exc.value)


def test_regroup_is_stable(tmp_path):
    text = "1 qid:5 1:1 #a\n0 qid:9 1:2 #b\n2 qid:5 1:3 #c\n3 qid:7 1:4 #d\n4 qid:9 1:5 #e\n"
    ds = load_svmlight(write(tmp_path, text), regroup=True)
    assert ds.query_ids.tolist() == [5, 9, 7]
    np.testing.assert_array_equal(ds.ptr, [0, 2, 4, 5])
    np.testing.assert_array_equal(ds.y, [1, 2, 0, 4, 3])
    np.testing.assert_array_equal(ds.X[:, 0], [1, 3, 2, 5, 4])
    assert ds.comments.tolist() == ["a", "c", "b", "e", "d"]
    sparse = load_svmlight(write(tmp_path, text), regroup=True, sparse=True)
    np.testing.assert_array_equal(sparse.X.toarray(), ds.X)


def test_return_order_lines_up_file_rows(tmp_path):
    text = "1 qid:5 1:1\n0 qid:9 1:2\n2 qid:5 1:3\n3 qid:7 1:4\n4 qid:9 1:5\n"
    ds, order = load_svmlight(write(tmp_path, text), regroup=True, return_order=True)
    assert order.tolist() == [0, 2, 1, 4, 3]
    file_rows = np.arange(1, 6)  # feature 1 holds the file's row number
    np.testing.assert_array_equal(ds.X[:, 0], file_rows[order])
    plain, none = load_svmlight(write(tmp_path, "1 qid:1 1:1\n0 qid:2 1:2\n"), return_order=True)
    assert none is None and plain.n_queries == 2
    with pytest.raises(DataFormatError, match=r"regroup=True gathers them"):
        load_svmlight(write(tmp_path, text), return_order=True)


# ------------------------------------------------------------ LightGBM layout

LGB = "1 1:0.5 3:1\n0 2:1\n2 1:1\n0 3:2\n1 2:3\n"


def test_query_file_next_to_data_is_used(tmp_path):
    path = write(tmp_path, LGB, "rank.train")
    write(tmp_path, "2\n3\n", "rank.train.query")
    ds = load_svmlight(path)
    np.testing.assert_array_equal(ds.ptr, [0, 2, 5])
    assert ds.query_ids.tolist() == [0, 1]


def test_explicit_query_file(tmp_path):
    path = write(tmp_path, LGB, "data.txt")
    groups = write(tmp_path, "1\r\n\r\n4\r\n", "groups.txt")
    np.testing.assert_array_equal(load_svmlight(path, query_file=groups).ptr, [0, 1, 5])


def test_query_file_sizes_must_sum_to_rows(tmp_path):
    path = write(tmp_path, LGB, "rank.train")
    write(tmp_path, "2\n2\n", "rank.train.query")
    with pytest.raises(DataFormatError, match="sum to 4 but the data file has 5 rows") as exc:
        load_svmlight(path)
    assert exc.value.path.endswith("rank.train.query")


@pytest.mark.parametrize(
    ("content", "line", "token"),
    [("2\nx\n3\n", 2, "x"), ("2\n0\n3\n", 2, "0"), ("2.5\n", 1, "2.5"), ("-1\n", 1, "-1"),
     # digits of other scripts and superscripts: int() took the first, isdigit() alone the second
     ("2\n\u0663\n", 2, "\u0663"), ("2\n\u00b3\n", 2, "\u00b3")],
)
def test_bad_query_file_token(tmp_path, content, line, token):
    path = write(tmp_path, LGB, "rank.train")
    write(tmp_path, content, "rank.train.query")
    with pytest.raises(DataFormatError, match="positive integer") as exc:
        load_svmlight(path)
    assert (exc.value.line, exc.value.token) == (line, token)


def test_no_qid_and_no_query_file_is_an_error(tmp_path):
    with pytest.raises(DataFormatError, match="missing qid") as exc:
        load_svmlight(write(tmp_path, "\n" + LGB))
    assert (exc.value.line, exc.value.token) == (2, "1:0.5")


def test_query_file_given_for_file_with_qids(tmp_path):
    groups = write(tmp_path, "3\n", "g.query")
    with pytest.raises(DataFormatError, match="already carry qids"):
        load_svmlight(write(tmp_path, BASIC), query_file=groups)


# ------------------------------------------------------------------- malformed

MALFORMED = [
    # (file content, line, token, fragment of the message)
    ("1 qid:1 1:1\n1 qid:1 2:NULL\n", 2, "2:NULL", "not a number"),
    ("1 qid:1 1:1\n0 1:2\n", 2, "1:2", "missing qid"),
    ("1 qid:1 1:1\n0\n", 2, "0", "missing qid"),
    ("1 1:1\n0 qid:3 1:2\n", 2, "qid:3", "unexpected qid"),
    ("1 qid:1 0:1\n", 1, "0:1", ">= 1"),
    ("1 qid:1 -2:1\n", 1, "-2:1", ">= 1"),
    ("1 qid:1 1.5:2\n", 1, "1.5:2", "not an integer"),
    ("1 qid:1 a:2\n", 1, "a:2", "not an integer"),
    ("1 qid:1 99999999999:2\n", 1, "99999999999:2", "too large"),
    ("1 qid:1 2:1 2:3\n", 1, "2:3", "duplicate feature id 2"),
    ("1 qid:1 3:1 1:2 3:4\n", 1, "3:4", "duplicate feature id 3"),
    ("abc qid:1 1:2\n", 1, "abc", "bad label"),
    ("qid:1 1:2\n", 1, "qid:1", "bad label"),
    ("nan qid:1 1:2\n", 1, "nan", "label is not finite"),
    ("-inf qid:1 1:2\n", 1, "-inf", "label is not finite"),
    ("1e999 qid:1 1:2\n", 1, "1e999", "label overflows"),
    ("1 qid:1 3:\n", 1, "3:", "missing value"),
    ("1 qid:1 :4\n", 1, ":4", "missing feature id"),
    ("1 qid:1 abc\n", 1, "abc", "expected '<feature id>:<value>'"),
    ("1 qid:1 1:2:3\n", 1, "1:2:3", "not a number"),
    ("1 qid:1 1:1_000\n", 1, "1:1_000", "not a number"),
    ("1 qid:1 1:inf\n", 1, "1:inf", "infinite feature value"),
    ("1 qid:1 1:-Infinity\n", 1, "1:-Infinity", "infinite feature value"),
    ("1 qid:1 1:1e39\n", 1, "1:1e39", "overflows float32"),
    ("1 qid:1 1:1e999\n", 1, "1:1e999", "overflows float32"),
    ("1 qid: 1:2\n", 1, "qid:", "malformed qid"),
    ("1 qid:1:2 1:2\n", 1, "qid:1:2", "malformed qid"),
    ("1 qid:1 1:2 qid:1\n", 1, "qid:1", "misplaced qid"),
    (b"1 qid:1 1:0.5\n1 qid:1 2:\xff\xfe\n", 2, "2:\\xff\\xfe", "not a number"),
    (b"1 qid:1 1:0.5\n1 qid:1 2:\xff\xfe\n", 2, "2:\\xff\\xfe", "the token is not UTF-8 text (a file in another"),
    (b"\xcb\xca qid:1 1:0.5\n", 1, "\\xcb\\xca", "bad label: expected a number as the first token of the line; the "
     "token is not UTF-8 text"),
    (b"1 qid:1 1:1 # caf\xe9\n", 1, "caf\\xe9", "not valid UTF-8"),
    (b"1 qid:\xe9 1:1\n", 1, "\\xe9", "not valid UTF-8"),
]


@pytest.mark.parametrize(("content", "line", "token", "fragment"), MALFORMED)
def test_malformed_input(tmp_path, content, line, token, fragment):
    path = write(tmp_path, content)
    with pytest.raises(DataFormatError) as exc:
        load_svmlight(path)
    err = exc.value
    assert (err.path, err.line, err.token) == (str(path), line, token)
    message = str(err)
    assert message.startswith(f"{path}:{line}: ")
    assert fragment in message
    assert f"(got '{token}')" in message  # bytes that are not UTF-8 escaped once, as Python shows bytes


def test_float32_range_boundary(tmp_path):
    top = np.finfo(np.float32).max
    ds = load_svmlight(write(tmp_path, "1 qid:1 1:3.4028235e38 2:-3.40282356e38\n"))
    np.testing.assert_array_equal(ds.X[0], [top, -top])  # round to the largest float32, not inf
    with pytest.raises(DataFormatError, match="overflows float32"):
        load_svmlight(write(tmp_path, "1 qid:1 1:3.4028236e38\n"))  # rounds to inf


def test_value_in_float64_range_is_fine_with_float64(tmp_path):
    ds = load_svmlight(write(tmp_path, "1 qid:1 1:1e39\n"), dtype=np.float64)
    assert ds.X[0, 0] == 1e39


def test_feature_id_beyond_given_n_features(tmp_path):
    with pytest.raises(DataFormatError, match="exceeds n_features=3") as exc:
        load_svmlight(write(tmp_path, BASIC), n_features=3)
    assert (exc.value.line, exc.value.token) == (3, "4:2.5E+2")


@pytest.mark.parametrize("content", ["", "\n\n  \r\n", "# only a comment\n\n#another\n"])
def test_empty_file(tmp_path, content):
    path = write(tmp_path, content)
    with pytest.raises(DataFormatError, match="no data lines") as exc:
        load_svmlight(path)
    assert exc.value.path == str(path)


def test_corrupt_gzip(tmp_path):
    packed = gzip.compress(BASIC.encode())
    with pytest.raises(DataFormatError, match="gzip"):
        load_svmlight(write(tmp_path, packed[: len(packed) // 2], "cut.gz"))


def test_random_binary_garbage_never_escapes_as_another_error(tmp_path):
    rng = np.random.default_rng(0)
    for i in range(20):
        blob = rng.integers(0, 256, size=300, dtype=np.uint8).tobytes()
        with pytest.raises(DataFormatError):
            load_svmlight(write(tmp_path, blob, f"garbage{i}.bin"))


def test_text_stream_over_binary_bytes(tmp_path):
    path = write(tmp_path, b"1 qid:1 1:1 # \xff\xfe\n")
    with open(path, encoding="utf-8") as fh, pytest.raises(DataFormatError, match="binary mode"):
        load_svmlight(fh)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_svmlight(tmp_path / "nope.txt")


def test_bad_arguments(tmp_path):
    path = write(tmp_path, BASIC)
    with pytest.raises(ValueError, match="dtype"):
        load_svmlight(path, dtype=np.int32)
    with pytest.raises(ValueError, match="n_features"):
        load_svmlight(path, n_features=0)


# -------------------------------------------------------------- exact numbers


def test_float_parsing_is_exact_for_many_formats(tmp_path):
    rng = np.random.default_rng(1)
    raw = np.concatenate([
        rng.standard_normal(400) * 10.0 ** rng.integers(-30, 30, 400),
        rng.random(200),
        rng.integers(-10**6, 10**6, 100).astype(float),
    ])
    formats = ["{!r}", "{:.6f}", "{:.17g}", "{:.3e}", "{:.25f}", "{:.15g}"]
    tokens = [fmt.format(v) for v in raw.tolist() for fmt in formats]
    chunks = [tokens[i : i + 50] for i in range(0, len(tokens), 50)]
    text = "".join("0 qid:1 " + " ".join(f"{j + 1}:{t}" for j, t in enumerate(c)) + "\n" for c in chunks)
    ds = load_svmlight(write(tmp_path, text), dtype=np.float64)
    expected = np.zeros((len(chunks), 50))
    for r, c in enumerate(chunks):
        expected[r, : len(c)] = [float(t) for t in c]
    np.testing.assert_array_equal(ds.X, expected)
    ds32 = load_svmlight(write(tmp_path, text), dtype=np.float32)
    np.testing.assert_array_equal(ds32.X, expected.astype(np.float32))


# ------------------------------------------------------------------ round trip


def test_round_trip_exact(tmp_path):
    X = np.array(
        [[0.1, 0, np.nan, 1e-30], [3, -2.5, 0, 123456.78], [1 / 3, 0, 0, 0], [0, 0, 0, 0]], dtype=np.float64
    )
    y = np.array([0, 3.25, -1, 40.0])
    ds = RankingDataset(X, y, [0, 2, 3, 4], query_ids=["q1", "q2", "17"], comments=["docid = a #x", None, "b", "c"])
    path = tmp_path / "out.txt"
    save_svmlight(ds, path)
    back = load_svmlight(path, dtype=np.float64, n_features=4)
    assert_same_dataset(back, ds)
    lines = path.read_text().splitlines()
    assert lines[0] == "0 qid:q1 1:0.1 3:nan 4:1e-30 #docid = a #x"
    assert lines[3] == "40 qid:17 #c"


def test_round_trip_float32_and_sparse(tmp_path):
    rng = np.random.default_rng(2)
    X = sp.random(50, 30, density=0.2, random_state=3, format="csr", dtype=np.float32)
    X.data = (rng.standard_normal(X.nnz) * 10.0 ** rng.integers(-8, 8, X.nnz)).astype(np.float32)
    ds = RankingDataset(X, rng.integers(0, 5, 50), [0, 10, 25, 50], query_ids=[30, 10, 20])
    path = tmp_path / "out.txt"
    save_svmlight(ds, path)
    back = load_svmlight(path, n_features=30, sparse=True)
    assert_same_dataset(back, ds)


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(st.floats(allow_infinity=False, width=32), min_size=1, max_size=40),
    labels=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=5),
)
def test_round_trip_property(tmp_path_factory, values, labels):
    n = len(labels)
    X = np.resize(np.array(values, dtype=np.float32), (n, 8))
    ds = RankingDataset(X, labels, np.arange(n + 1), query_ids=np.arange(n) * 7)
    path = tmp_path_factory.mktemp("rt") / "x.txt"
    save_svmlight(ds, path)
    back = load_svmlight(path, n_features=8)
    np.testing.assert_array_equal(back.X, np.where(X == 0, 0, X))  # -0.0 comes back as 0
    np.testing.assert_array_equal(back.y, ds.y)


def test_save_refuses_what_cannot_be_read_back(tmp_path):
    path = tmp_path / "x.txt"
    with pytest.raises(ValueError, match="inf"):
        save_svmlight(RankingDataset([[np.inf]], [1], [0, 1]), path)
    with pytest.raises(ValueError, match="qid"):
        save_svmlight(RankingDataset([[1]], [1], [0, 1], query_ids=["a b"]), path)
    with pytest.raises(ValueError, match="several lines"):
        save_svmlight(RankingDataset([[1]], [1], [0, 1], comments=["a\nb"]), path)
    # a NUL is what the loader reads as a binary file (found by tests/test_properties.py)
    with pytest.raises(ValueError, match="comment of row 0 has a NUL character"):
        save_svmlight(RankingDataset([[1]], [1], [0, 1], comments=["a\0b"]), path)
    with pytest.raises(ValueError, match="cannot be written: .*or a NUL"):
        save_svmlight(RankingDataset([[1]], [1], [0, 1], query_ids=["a\0b"]), path)
    assert not path.exists()


def test_save_extremes_round_trip(tmp_path):
    f32 = np.finfo(np.float32)
    X = np.array([[f32.max, -f32.max, f32.tiny, f32.smallest_subnormal, np.float32(16777215)]], dtype=np.float32)
    ds = RankingDataset(X, [1e300], [0, 1])
    save_svmlight(ds, tmp_path / "x.txt")
    back = load_svmlight(tmp_path / "x.txt")
    np.testing.assert_array_equal(back.X, X)
    assert back.y[0] == 1e300


def test_format_without_qid_is_lightgbm_layout(tmp_path):
    from ranklearn.data import format_svmlight

    ds = RankingDataset([[1.5, 0], [0, 2]], [2, 0], [0, 1, 2], query_ids=[7, 8], comments=["a", None])
    assert format_svmlight(ds) == b"2 qid:7 1:1.5 #a\n0 qid:8 2:2\n"
    assert format_svmlight(ds, with_qid=False) == b"2 1:1.5\n0 2:2\n"
    (tmp_path / "x.txt.query").write_text("1\n1\n")
    (tmp_path / "x.txt").write_bytes(format_svmlight(ds, with_qid=False))
    back = load_svmlight(tmp_path / "x.txt")
    np.testing.assert_array_equal(back.X, ds.X)
    np.testing.assert_array_equal(back.ptr, ds.ptr)


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("old")
    save_svmlight(RankingDataset([[1.5]], [2], [0, 1]), path)
    assert path.read_text() == "2 qid:0 1:1.5\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


# ------------------------------------------------------------------ real files


def test_mq2008_fold1_train(shared_data):
    ds = load_svmlight(shared_data / "MQ2008" / "Fold1" / "train.txt")
    assert (ds.n_samples, ds.n_queries, ds.n_features) == (9630, 471, 46)
    assert set(np.unique(ds.y)) == {0.0, 1.0, 2.0}
    assert all(c.startswith("docid = GX") and " prob = " in c for c in ds.comments)


def test_mq2008_all_sets(shared_data):
    parts = [load_svmlight(shared_data / "MQ2008" / f"S{i}.txt") for i in range(1, 6)]
    whole = RankingDataset.concatenate(parts)
    assert (whole.n_samples, whole.n_queries, whole.n_features) == (15211, 784, 46)
    assert sum(q.y.max() == 0 for q in whole) == 220  # queries without a relevant document

def test_mq2008_fold_with_unsorted_qids(shared_data):
    fold5 = load_svmlight(shared_data / "MQ2008" / "Fold5" / "train.txt")  # S5, S1, S2 in this order
    assert not np.all(np.diff(fold5.query_ids) > 0)
    parts = [load_svmlight(shared_data / "MQ2008" / f"S{i}.txt") for i in (5, 1, 2)]
    assert_same_dataset(fold5, RankingDataset.concatenate(parts))


def test_mq2008_crlf_equals_lf(shared_data):
    for split in ("train", "vali", "test"):
        lf = load_svmlight(shared_data / "MQ2008" / "Fold1" / f"{split}.txt")
        crlf = load_svmlight(shared_data / "MQ2008-crlf" / f"{split}.txt")
        assert_same_dataset(crlf, lf)


def test_mq2008_equals_sklearn(shared_data):
    from sklearn.datasets import load_svmlight_file

    path = shared_data / "MQ2008" / "Fold1" / "train.txt"
    X, y, qid = load_svmlight_file(str(path), query_id=True)
    ours64 = load_svmlight(path, dtype=np.float64, sparse=True)
    np.testing.assert_array_equal(ours64.X.toarray(), X.toarray())
    np.testing.assert_array_equal(ours64.y, y)
    np.testing.assert_array_equal(ours64.qid, qid)
    np.testing.assert_array_equal(load_svmlight(path).X, X.toarray().astype(np.float32))


@pytest.mark.parametrize("name", ["msn1.fold1.train.5k.txt", "msn1.fold1.test.5k.txt"])
def test_mslr_sample(shared_data, name):
    from sklearn.datasets import load_svmlight_file

    path = shared_data / "MSLR-sample" / name
    ds = load_svmlight(path, dtype=np.float64)
    assert (ds.n_samples, ds.n_queries, ds.n_features) == (5000, 43, 136)
    assert set(np.unique(ds.y)) == {0.0, 1.0, 2.0, 3.0, 4.0}
    X, y, qid = load_svmlight_file(str(path), query_id=True)
    np.testing.assert_array_equal(ds.X, X.toarray())
    np.testing.assert_array_equal(ds.y, y)
    np.testing.assert_array_equal(ds.qid, qid)


@pytest.mark.parametrize(("name", "rows", "queries"), [("rank.train", 3005, 201), ("rank.test", 768, 50)])
def test_lightgbm_example(shared_data, name, rows, queries):
    path = shared_data / "lightgbm-example" / name
    ds = load_svmlight(path, sparse=True)
    assert (ds.n_samples, ds.n_queries) == (rows, queries)
    assert ds.n_features <= 300
    sizes = np.loadtxt(f"{path}.query", dtype=np.int64)
    np.testing.assert_array_equal(ds.query_sizes, sizes)
    assert ds.X.nnz < 0.5 * rows * ds.n_features  # sparse rows


@pytest.mark.parametrize(
    ("name", "rows", "queries"), [("trec_news_2018.train", 782, 45), ("trec_news_2018.test", 41, 5)]
)
def test_trec_news(shared_data, name, rows, queries):
    from sklearn.datasets import load_svmlight_file

    path = shared_data / "trec-news-2018" / name
    ds = load_svmlight(path, dtype=np.float64)
    assert (ds.n_samples, ds.n_queries, ds.n_features) == (rows, queries, 5)
    assert (ds.X < 0).any()
    X, y, _ = load_svmlight_file(str(path), query_id=True, n_features=5)
    np.testing.assert_array_equal(ds.X, X.toarray())  # scientific notation, exactly
    np.testing.assert_array_equal(ds.y, y)


def test_mq2008_save_keeps_line_look(shared_data, tmp_path):
    path = shared_data / "MQ2008" / "Fold1" / "vali.txt"
    ds = load_svmlight(path)
    out = tmp_path / "vali.txt"
    save_svmlight(ds, out)
    assert_same_dataset(load_svmlight(out, n_features=ds.n_features), ds)
    original = path.read_text().splitlines()[0]
    written = out.read_text().splitlines()[0]
    # label, qid and comment text as in the original; nonzero values in shortest form
    assert written.split()[:2] == original.split()[:2]
    assert written.split("#", 1)[1] == original.split("#", 1)[1]
    assert written.split()[2:4] == ["1:1", "5:1"]  # was 1:1.000000 ... 5:1.000000


# ------------------------------------------------------- odd labels, huge ids, file errors
def test_loader_accepts_any_finite_label(tmp_path):
    path = tmp_path / "neg.txt"
    path.write_text("-2.5 qid:1 1:1\n0 qid:1 1:2\n1e-3 qid:2 1:1\n")
    np.testing.assert_array_equal(load_svmlight(path).y, [-2.5, 0, 1e-3])


def test_huge_qid_is_kept_as_text(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("1 qid:99999999999999999999 1:1\n0 qid:99999999999999999999 1:2\n2 qid:7 1:0\n")
    ds = load_svmlight(path)
    assert ds.query_ids.tolist() == ["99999999999999999999", "7"]
    np.testing.assert_array_equal(ds.ptr, [0, 2, 3])
    model = LambdaMART(**TINY_TREES).fit(ds.X, ds.y, qid=ds.qid)
    assert model.predict(ds.X).shape == (3,)


def test_huge_feature_id_is_a_clear_error_dense_and_fine_sparse(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("1 qid:1 1:0.5 2:1\n0 qid:1 1:0.25 1000000000:1\n1 qid:2 2:3\n")
    with pytest.raises(DataFormatError, match=r"f\.txt:2: feature id 1,000,000,000 .*GiB.*sparse=True"):
        load_svmlight(path)
    with pytest.raises(DataFormatError, match=r"n_features=2,000,000,000"):
        load_svmlight(path, n_features=2_000_000_000)
    ds = load_svmlight(path, sparse=True)
    assert ds.X.shape == (3, 10**9) and ds.X.nnz == 5
    # the models need dense features: a giant, almost empty sparse X is refused, not densified
    with pytest.raises(ValueError, match="sparse with 1,000,000,000 columns"):
        LambdaMART(**TINY_TREES).fit(ds.X, ds.y, qid=ds.qid)
    # sparse X of a normal size still trains
    X, y, qid = small_data()
    LambdaMART(**TINY_TREES).fit(sp.csr_matrix(X), y, qid=qid)


def test_feature_id_beyond_int32_is_an_error(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("1 qid:1 2147483648:1\n")
    with pytest.raises(DataFormatError, match="feature id too large"):
        load_svmlight(path, sparse=True)


def test_loader_file_errors(tmp_path, monkeypatch):
    import ranklearn.data.source as source_module

    with pytest.raises(FileNotFoundError):
        load_svmlight(tmp_path / "missing.txt")
    with pytest.raises(IsADirectoryError):
        load_svmlight(tmp_path)
    (tmp_path / "file").write_text("1 qid:1 1:1\n")
    with pytest.raises(NotADirectoryError):
        load_svmlight(tmp_path / "file" / "below")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(args[0]))

    monkeypatch.setattr(source_module, "open", refuse, raising=False)
    with pytest.raises(PermissionError):
        load_svmlight(tmp_path / "file")


def test_each_row_knows_its_line_through_regrouping_and_subsets(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("# header\n2 qid:1 1:1\n\n0 qid:2 1:2\n1 qid:1 1:3 # back\n")
    ds = load_svmlight(path, regroup=True)  # qid 1's rows gathered: lines 2 and 5, then line 4
    assert ds.lines.tolist() == [2, 5, 4]
    assert ds.subset([1]).lines.tolist() == [4]
    assert ds.to_dense().lines.tolist() == [2, 5, 4]
    assert load_svmlight(path, regroup=True, sparse=True).to_dense().lines.tolist() == [2, 5, 4]


@pytest.mark.parametrize(
    "content, words",
    [(codecs.BOM_UTF16_LE + "1 qid:1 1:0.5\n".encode("utf-16-le"), ["not UTF-8 text", "looks like UTF-16"]),
     ("1 qid:1 1:0.5\n0 qid:1 1:0.2\n".encode("utf-16-be"), ["looks like UTF-16", "iconv"]),  # no byte-order mark
     (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["not UTF-8 text: a binary file", "byte 8"])],
)  # fmt: skip
def test_utf16_and_binary_files_are_named_as_such(tmp_path, content, words):
    path = tmp_path / "f.txt"
    path.write_bytes(content)
    with pytest.raises(DataFormatError) as info:
        load_svmlight(path)
    for word in words:
        assert word in str(info.value)
    assert str(info.value).startswith(f"{path}: not UTF-8 text")


def test_bytes_that_are_not_utf8_are_escaped_once_in_messages(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"1 qid:1 1:\xff\xfe\n")
    with pytest.raises(DataFormatError) as info:
        load_svmlight(path)
    assert str(info.value).endswith("(got '1:\\xff\\xfe')"), str(info.value)  # one backslash each, as Python shows bytes


GOOD_FILES = [
    "2 qid:1 1:0.5 3:nan 2:-1e-3 # doc a\n\n# a comment line\n0 qid:1 4:1.234567890123456789 1:+7 #\n"
    "1\tqid:2 2:1e30 5:-0 6:.5e-30 # b\r\n3 qid:2 7:123456789012345678901234567890\n",
    "1 qid:007 1:1\n0 qid:abc 2:2\n",  # qids kept as text
    "1 1:0.5 2:0.25\n0 3:1E5\n",  # no qid: one query of 2 rows (d.txt.query)
]
BAD_FILES = [
    "1 qid:1 1:0.5\n0 qid:1 0:0.1\n", "x qid:1 1:1\n", "1 qid:1 1:1 1:2\n", "1 qid:1 1:inf\n", "1 qid:1 a:1\n",
    "1 qid:1 1:1\n0 2:1\n", "1 1:1 qid:1\n", "1 qid:1 1:1e400\n", "1 qid:1 1:1_0\n", "nan qid:1 1:1\n",
]  # fmt: skip


@pytest.fixture
def small_inputs(monkeypatch):
    """Parse the way a process without numba parses a small file (ranklearn._compilation), then compiled."""
    from ranklearn import _compilation

    def parse(path, **kwargs):
        results = []
        for form in ("interpreted", "compiled"):
            monkeypatch.setattr(_compilation, "SMALL_INPUTS", form)
            try:
                results.append(load_svmlight(path, **kwargs))
            except DataFormatError as exc:
                results.append(str(exc))
        return results

    return parse


@pytest.mark.parametrize("text", GOOD_FILES + BAD_FILES)
def test_the_interpreted_parser_reads_and_refuses_as_the_compiled_one(text, tmp_path, small_inputs):
    path = tmp_path / "d.txt"
    path.write_bytes(text.encode())
    (tmp_path / "d.txt.query").write_text("2\n")
    interpreted, compiled = small_inputs(path)
    if text in BAD_FILES:
        assert isinstance(compiled, str) and interpreted == compiled  # the same message, line and token
        return
    for name in ("X", "y", "ptr", "query_ids", "lines", "comments"):
        assert _same(getattr(interpreted, name), getattr(compiled, name)), name


def _same(a, b) -> bool:
    """Equal bit for bit (NaN included), or equal as lists of Python objects."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tolist() == b.tolist() if a.dtype == object else a.tobytes() == b.tobytes()


def test_the_interpreted_parser_reads_real_letor_rows_bit_for_bit(shared_data, tmp_path, small_inputs):
    path = tmp_path / "mq2008.txt"
    path.write_bytes(b"".join((shared_data / "MQ2008" / "Fold1" / "vali.txt").read_bytes().splitlines(True)[:400]))
    for kwargs in ({}, {"dtype": np.float64}):
        interpreted, compiled = small_inputs(path, **kwargs)
        for name in ("X", "y", "ptr", "query_ids", "comments"):
            assert _same(getattr(interpreted, name), getattr(compiled, name)), name
