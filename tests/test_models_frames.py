"""Data frames with a query column: fit(df, y, qid="qid"), group= and evaluation sets alike."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ranklearn.models import LambdaMART, LinearRegression

pd = pytest.importorskip("pandas")


def _frame(seed=0, n=60):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.random(n), "b": rng.random(n), "qid": np.repeat(np.arange(n // 10), 10)})
    y = (rng.random(n) * 3).astype(int) + (df["a"] > 0.5)
    return df, y.to_numpy()


@pytest.mark.parametrize("by", ["qid", "group"])
def test_the_query_column_is_named_and_never_a_feature(by):
    df, y = _frame()
    dv, yv = _frame(seed=1)
    named = LinearRegression().fit(df, y, **{by: "qid"}, eval_set=[(dv, yv, "qid")])
    assert list(named.feature_names_in_) == ["a", "b"]
    # the same model as the frame without the column and the ids given apart
    apart = LinearRegression().fit(df[["a", "b"]], y, qid=df["qid"].to_numpy(), eval_set=[(dv[["a", "b"]], yv, dv["qid"])])
    np.testing.assert_array_equal(named.coef_, apart.coef_)
    assert named.evals_result_ == apart.evals_result_
    assert named.score(df, y, qid="qid") == apart.score(df[["a", "b"]], y, qid=df["qid"])


def test_a_query_like_column_trained_on_is_a_warning_naming_it():
    df, y = _frame()
    with pytest.warns(UserWarning, match=r"X has a column 'qid', named like a query id.*pass qid='qid'"):
        model = LambdaMART(n_estimators=2, min_samples_leaf=2).fit(df, y, qid=df["qid"])
    assert "qid" in list(model.feature_names_in_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # named: no warning
        LambdaMART(n_estimators=2, min_samples_leaf=2).fit(df, y, qid="qid")


@pytest.mark.parametrize(
    "make, kwargs, words",
    [(lambda df: df, dict(qid="query"), "qid='query' is not a column of X (its columns: 'a', 'b', 'qid')"),
     (lambda df: df.to_numpy(), dict(qid="qid"), "qid='qid' names a column, but X is not a data frame"),
     (lambda df: df.assign(c=pd.Categorical(["x", "y"] * 30)), dict(qid="qid"),
      "X has columns that are not numbers: 'c' (category)"),
     (lambda df: df.assign(c=["x", "y"] * 30), dict(qid="qid"), "not numbers: 'c' (")],  # object or str
)  # fmt: skip
def test_bad_frames_are_refused_by_name(make, kwargs, words):
    df, y = _frame()
    with pytest.raises(ValueError) as info:
        LambdaMART(n_estimators=2).fit(make(df), y, **kwargs)
    assert words in str(info.value)


def test_an_evaluation_set_names_its_column_in_the_error():
    df, y = _frame()
    with pytest.raises(ValueError, match=r"qid='q' is not a column of evaluation set 'valid_0'"):
        LambdaMART(n_estimators=2).fit(df, y, qid="qid", eval_set=[(df, y, "q")])
