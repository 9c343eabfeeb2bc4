"""Display positions as data: the sidecar file, the dataset, the loaders and writers, the CLI."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from ranklearn.data import RankingDataset, from_arrays, from_frame, load_svmlight, save_svmlight
from ranklearn.data.positions import check_position, read_position_file, sidecar_path
from ranklearn.exceptions import DataFormatError

from tests._helpers import assert_one_line_error, run

DATA = "2 qid:1 1:0.5\n0 qid:1 1:0.1\n1 qid:2 1:0.3\n0 qid:2 1:0.2\n1 qid:2 1:0.9\n"


def write(path, text):
    path.write_text(text)
    return path


def test_read_position_file(tmp_path):
    f = write(tmp_path / "p", "1\n2\r\n10\n\n\n")  # CRLF and trailing blank lines are fine
    assert read_position_file(f).tolist() == [1, 2, 10]
    assert read_position_file(f, 3).dtype == np.int64
    g = tmp_path / "p.gz"
    g.write_bytes(gzip.compress(b"3\n1\n"))
    assert read_position_file(g).tolist() == [3, 1]


@pytest.mark.parametrize(
    "text, line, token",
    [("1\n0\n", 2, "0"), ("1\n-1\n", 2, "-1"), ("1.5\n", 1, "1.5"), ("1\n\n2\n", 2, ""), ("x\n", 1, "x"), ("1 2\n", 1, "1 2")],
)
def test_read_position_file_errors_name_file_and_line(tmp_path, text, line, token):
    f = write(tmp_path / "train.txt.position", text)
    with pytest.raises(DataFormatError) as info:
        read_position_file(f)
    assert info.value.path == str(f) and info.value.line == line and info.value.token == token
    assert "whole number >= 1" in str(info.value)


def test_read_position_file_counts_rows(tmp_path):
    f = write(tmp_path / "p", "1\n2\n")
    with pytest.raises(DataFormatError, match=r"2 positions for the 3 rows"):
        read_position_file(f, 3)


def test_check_position():
    assert check_position(None, 3) is None
    assert check_position([3.0, 1.0, 2.0], 3).tolist() == [3, 1, 2]
    assert check_position(np.array([[1], [2]]), 2).tolist() == [1, 2]  # a column
    assert check_position([5, 6, 7], 3, order=np.array([2, 0, 1])).tolist() == [7, 5, 6]
    for bad, message in [
        ([1, 0], "must be >= 1"),
        ([1, np.nan], "whole numbers"),
        ([1, 2.5], "2.5 at row 1"),
        ([True, False], "dtype bool"),
        (["1", "2"], "dtype <U1"),
        ([1, 2, 3], "3 values for 2 rows"),
    ]:
        with pytest.raises(ValueError, match=message):
            check_position(bad, 2)


def test_sidecar_is_read_and_named(tmp_path):
    data = write(tmp_path / "train.txt", DATA)
    assert load_svmlight(data).position is None
    write(sidecar_path(data), "1\n2\n1\n2\n3\n")
    ds = load_svmlight(data)
    assert ds.position.tolist() == [1, 2, 1, 2, 3]
    assert ds.position_file == str(tmp_path / "train.txt.position")
    assert load_svmlight(data, position_file=False).position is None
    other = write(tmp_path / "other", "5\n4\n3\n2\n1\n")
    assert load_svmlight(data, position_file=other).position.tolist() == [5, 4, 3, 2, 1]
    with pytest.raises(DataFormatError, match=f"4 positions for the 5 rows of {data}") as info:
        load_svmlight(data, position_file=write(tmp_path / "short", "1\n2\n3\n4\n"))
    assert info.value.path.endswith("short")


def test_positions_follow_regrouped_rows(tmp_path):
    data = write(tmp_path / "t.txt", "1 qid:1 1:1\n0 qid:2 1:2\n1 qid:1 1:3\n")
    write(sidecar_path(data), "1\n1\n2\n")
    ds = load_svmlight(data, regroup=True)
    assert ds.X[:, 0].tolist() == [1, 3, 2] and ds.position.tolist() == [1, 2, 1]


def test_positions_with_lightgbm_query_file(tmp_path):
    data = write(tmp_path / "t.txt", "1 1:1\n0 1:2\n1 1:3\n")
    write(tmp_path / "t.txt.query", "2\n1\n")
    write(tmp_path / "t.txt.position", "1\n2\n1\n")
    ds = load_svmlight(data)
    assert ds.query_sizes.tolist() == [2, 1] and ds.position.tolist() == [1, 2, 1]


def test_save_round_trip_writes_the_sidecar(tmp_path):
    ds = from_arrays(np.arange(4.0).reshape(4, 1), [1, 0, 1, 0], [7, 7, 8, 8], position=[2, 1, 1, 3])
    out = tmp_path / "out.txt"
    save_svmlight(ds, out)
    assert (tmp_path / "out.txt.position").read_text() == "2\n1\n1\n3\n"
    back = load_svmlight(out)
    assert back.position.tolist() == [2, 1, 1, 3] and back.query_ids.tolist() == [7, 8]
    with pytest.raises(ValueError, match="positions, which need a file"):
        save_svmlight(ds, "-")
    save_svmlight(from_arrays(np.ones((1, 1)), [1], [1]), tmp_path / "plain.txt")
    assert not (tmp_path / "plain.txt.position").exists()


def test_dataset_subset_concatenate_keep_positions():
    a = from_arrays(np.ones((3, 1)), [1, 0, 1], [1, 1, 2], position=[1, 2, 1])
    b = from_arrays(np.ones((2, 1)), [0, 1], [3, 3], position=[4, 5])
    assert a.subset([1, 0]).position.tolist() == [1, 1, 2]
    both = RankingDataset.concatenate([a, b])
    assert both.position.tolist() == [1, 2, 1, 4, 5]
    with pytest.raises(DataFormatError, match="with and without positions"):
        RankingDataset.concatenate([a, from_arrays(np.ones((1, 1)), [1], [9])])
    assert "with positions" in repr(a)
    with pytest.raises(DataFormatError, match="must be >= 1"):
        RankingDataset(np.ones((2, 1)), [1, 0], [0, 2], position=[1, 0])


def test_from_arrays_regroup_moves_positions():
    ds = from_arrays(np.arange(3.0).reshape(3, 1), [1, 0, 1], [1, 2, 1], position=[1, 1, 2], regroup=True)
    assert ds.X[:, 0].tolist() == [0, 2, 1] and ds.position.tolist() == [1, 2, 1]


def test_from_frame_position_column_is_not_a_feature():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"qid": [1, 1, 2], "label": [1, 0, 1], "f": [0.1, 0.2, 0.3], "pos": [1, 2, 1]})
    ds = from_frame(df, position_col="pos")
    assert ds.feature_names == ["f"] and ds.position.tolist() == [1, 2, 1]
    with pytest.raises(KeyError, match="position_col='rank'"):
        from_frame(df, position_col="rank")


def test_cli_info_and_convert_keep_positions(tmp_path, capsys):
    data = write(tmp_path / "train.txt", DATA)
    write(sidecar_path(data), "1\n2\n1\n2\n3\n")
    code, out, err = run(capsys, "info", str(data))
    assert code == 0 and "positions" in out and "1: 2, 2: 2, 3: 1" in out
    assert f"ranklearn: positions from {data}.position" in err
    code, out, err = run(capsys, "convert", str(data), str(tmp_path / "lgb.txt"), "--to", "lightgbm")
    assert code == 0, err
    assert (tmp_path / "lgb.txt.position").read_text() == "1\n2\n1\n2\n3\n"
    assert (tmp_path / "lgb.txt.query").read_text() == "2\n3\n"
    back = load_svmlight(tmp_path / "lgb.txt")
    assert back.position.tolist() == [1, 2, 1, 2, 3]
    code, out, err = run(capsys, "convert", str(data), "-", "--to", "qid")
    note, error = err.split("\n", 1)  # the note says where the positions came from, then the one-line error
    assert note.startswith("ranklearn: positions from")
    assert_one_line_error(code, error, "OUT.position (IN's positions)", "cannot be standard output")


def test_cli_train_and_cv_pass_the_sidecar_positions_to_fit(tmp_path, capsys):
    data = write(tmp_path / "train.txt", DATA * 4)  # query ids repeat: regrouped, positions follow their rows
    write(sidecar_path(data), "1\n2\n1\n2\n3\n" * 4)
    code, out, err = run(capsys, "train", "--model", "linear", "--train", str(data))
    assert code == 0 and "ranklearn: positions from" in err
    assert "ranklearn: warning: Linear regression ignores position=: its training does not read it" in err
    code, out, err = run(capsys, "cv", "--model", "linear", "--data", str(data), "--folds", "2")
    assert code == 0 and "ranklearn: warning: Linear regression ignores position=" in err


def test_cli_commands_that_use_no_positions_do_not_read_the_sidecar_and_say_so(tmp_path, capsys):
    """Train reads the training file's sidecar; --validate and --test are scored on their labels,
    so their sidecars are not read (a bad one is no error) and one note says so per set."""
    data = write(tmp_path / "clicks.txt", DATA * 4)
    write(sidecar_path(data), "1\n2\n1\n2\n3\n" * 4)
    other = write(tmp_path / "test.txt", DATA)
    write(sidecar_path(other), "not a position\n")  # unread: no error
    model = tmp_path / "m.json"
    code, out, err = run(capsys, "train", "--model", "lambdamart", "--train", str(data), "--validate", str(data),
                         "--test", str(other), "--unbiased", "pairwise", "--n-estimators", "2", "--save", str(model))
    assert code == 0, err
    assert err.count("positions from") == 1 and f"ranklearn: positions from {data}.position" in err
    assert f"ranklearn: {data}.position not read: --validate is scored on its labels" in err
    assert f"ranklearn: {other}.position not read: --test is scored on its labels" in err
    code, out, err = run(capsys, "predict", "--model", str(model), "--data", str(other), "--out", str(tmp_path / "s"))
    assert code == 0, err
    assert err.strip() == f"ranklearn: {other}.position not read: predict scores the documents without them"
