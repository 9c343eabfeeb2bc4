"""SparkLambdaMART on a local[2] session (2 barrier tasks): the same model as one machine,
faults that end the fit with one error naming the task, persistence, the command line."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java (no java on PATH, no JAVA_HOME)", allow_module_level=True)

from _helpers import assert_one_line_error, run  # noqa: E402

from ranklearn.io import load_model  # noqa: E402
from ranklearn.models.lambdamart import LambdaMART  # noqa: E402
from ranklearn.spark import SparkLambdaMART, SparkLambdaMARTModel, TaskLostError, TaskTimeoutError  # noqa: E402

TREE_FIELDS = ("feature", "bin_threshold", "missing_left", "left", "right", "count")


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the tasks run this Python and this ranklearn
    session = (
        SparkSession.builder.master("local[2]").appName("ranklearn tests")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2").getOrCreate()
    )  # fmt: skip
    session.sparkContext.setLogLevel("OFF")  # the fault tests' failed tasks are expected
    yield session
    session.stop()


@pytest.fixture(scope="module")
def mq2008(shared_data):
    from ranklearn.datasets import load_letor_fold

    def dense(ds):
        return np.asarray(ds.X.todense() if hasattr(ds.X, "todense") else ds.X, dtype=np.float32)

    return [(dense(s), s.y, s.qid) for s in load_letor_fold(shared_data / "MQ2008", 1)]


def _frame(spark, X, y, q, **more):
    import pyarrow as pa

    columns = {
        "features": pa.ListArray.from_arrays(pa.array(np.arange(len(y) + 1, dtype=np.int32) * X.shape[1]),
                                             pa.array(X.astype(np.float64).ravel())),
        "label": y.astype(np.float64), "qid": q, **more,
    }  # fmt: skip
    return spark.createDataFrame(pa.table(columns))


def _assert_same_trees(ours, ref):
    assert len(ours.trees_) == len(ref.trees_)
    for a, b in zip(ours.trees_, ref.trees_):
        for name in TREE_FIELDS:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        np.testing.assert_allclose(a.value, b.value, rtol=1e-9, atol=1e-12)  # sums in another order
        np.testing.assert_allclose(a.threshold, b.threshold, rtol=0)


@pytest.fixture(scope="module")
def fitted(spark, mq2008):
    """MQ2008 Fold1: train and validation rows in one DataFrame (the validation rows marked),
    with bagging and feature subsampling; and the one-machine model."""
    (Xtr, ytr, qtr), (Xva, yva, qva), _ = mq2008
    params = dict(n_estimators=12, num_leaves=31, random_state=0, bagging_fraction=0.8, feature_fraction=0.7,
                  early_stopping_rounds=6)  # fmt: skip
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(ytr))
    ref = LambdaMART(**params).fit(Xtr, ytr, qtr, sample_weight=w, eval_set=[(Xva, yva, qva)])
    # the validation rows first, their queries numbered after the training ones: the fit moves
    # every query to its range of qid (the rows of a query keep their order, as one machine's)
    X, y = np.concatenate([Xva, Xtr]), np.concatenate([yva, ytr])
    q = np.concatenate([qva + 10**6, qtr])
    valid = np.r_[np.ones(len(yva), bool), np.zeros(len(ytr), bool)]
    weight = np.r_[np.zeros(len(yva)), w]  # (the validation rows' weights are not read)
    frame = _frame(spark, X, y, q, is_valid=valid, weight=weight)
    assert frame.rdd.getNumPartitions() == 2
    model = SparkLambdaMART(validationIndicatorCol="is_valid", weightCol="weight", **params).fit(frame)
    return model, ref


def test_same_trees_evaluation_and_predictions_as_one_machine_on_mq2008(fitted, mq2008, spark):
    model, ref = fitted
    ours = model.to_local()
    assert type(ours) is LambdaMART
    _assert_same_trees(ours, ref)
    np.testing.assert_array_equal(ours.bin_mapper_.edges_, ref.bin_mapper_.edges_)
    assert ours.best_iteration_ == ref.best_iteration_ and ours.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(ours.evals_result_["validation"]["ndcg@10"], ref.evals_result_["valid_0"]["ndcg@10"],
                               atol=1e-9)  # fmt: skip
    Xte, yte, qte = mq2008[2]
    out = model.transform(_frame(spark, Xte, yte, qte)).select("qid", "prediction").toPandas()
    assert np.abs(out["prediction"].to_numpy() - ref.predict(Xte)).max() <= 1e-6
    np.testing.assert_array_equal(out["qid"].to_numpy(), qte)  # transform keeps the rows and their order


def test_save_and_load_round_trip(fitted, mq2008, spark, tmp_path):
    model, _ = fitted
    model.setPredictionCol("score")
    model.write().save(str(tmp_path / "model"))
    back = SparkLambdaMARTModel.load(str(tmp_path / "model"))
    assert back.getPredictionCol() == "score" and back.uid == model.uid
    Xte, yte, qte = mq2008[2]
    np.testing.assert_array_equal(back.to_local().predict(Xte), model.to_local().predict(Xte))
    got = back.transform(_frame(spark, Xte[:50], yte[:50], qte[:50])).select("score").toPandas()["score"]
    np.testing.assert_array_equal(got.to_numpy(), model.to_local().predict(Xte[:50]))
    with pytest.raises(Exception, match="already exists"):
        model.write().save(str(tmp_path / "model"))
    model.write().overwrite().save(str(tmp_path / "model"))
    estimator = SparkLambdaMART(num_leaves=7, qidCol="query")
    estimator.write().save(str(tmp_path / "estimator"))
    again = SparkLambdaMART.load(str(tmp_path / "estimator"))
    assert again.getOrDefault("num_leaves") == 7 and again.getOrDefault("qidCol") == "query"


def test_parameters_are_checked_when_set():
    with pytest.raises(ValueError, match="num_leaves"):
        SparkLambdaMART(num_leaves=1)
    with pytest.raises(ValueError, match="objective='xendcg' is not supported"):
        SparkLambdaMART(objective="xendcg")
    with pytest.raises(TypeError, match="no parameter 'n_trees'"):
        SparkLambdaMART(n_trees=5)
    with pytest.raises(ValueError, match="task_timeout"):
        SparkLambdaMART(task_timeout=0)


def test_a_bad_partition_names_itself_and_a_partition_without_training_rows_trains(spark):
    # a fractional display rank in query 2 (partition 1): refused there, not cast to a whole one
    q = np.array([1, 1, 2, 2])
    frame = _frame(spark, np.ones((4, 2), np.float32), np.array([1.0, 0.0, 0.0, 2.0]), q,
                   shown=np.array([1, 2, 1, 2.5]), valid=np.zeros(4, np.int8))  # fmt: skip
    with (
        pytest.warns(UserWarning, match="ignores position="),  # as fit(position=) with lambdarank
        pytest.raises(ValueError, match=r"^partition 1: position must hold whole numbers >= 1 .*2\.5 at row 1"),
    ):
        SparkLambdaMART(n_estimators=2, positionCol="shown", task_timeout=60).fit(frame)
    # the other range of qid holds only validation rows: that task trains on no rows, and scores its own
    Xs = np.array([[0.0, 1], [1, 0], [0, 0], [1, 1], [2, 1], [0, 2]], np.float32)
    ys, qs = np.array([1.0, 0, 2, 0, 1, 2]), np.array([1, 1, 1, 2, 2, 2])
    small = _frame(spark, Xs, ys, qs, held=qs == 2)
    params = dict(n_estimators=3, num_leaves=3, min_samples_leaf=1, random_state=0)
    ours = SparkLambdaMART(validationIndicatorCol="held", task_timeout=60, **params).fit(small).to_local()
    ref = LambdaMART(**params).fit(Xs[:3], ys[:3], qs[:3], eval_set=[(Xs[3:], ys[3:], qs[3:])])
    _assert_same_trees(ours, ref)
    assert ours.evals_result_["validation"] == ref.evals_result_["valid_0"]
    wide = _frame(spark, np.array([[0, 1], [1, 0], [0, 1e39], [1, 1]]), np.array([1.0, 0, 0, 2]), q)
    with pytest.raises(ValueError, match=r"^partition 1: feature 2 \(from 1\) of row 0 \(from 0\) is infinite"):
        SparkLambdaMART(n_estimators=2, task_timeout=60).fit(wide)
    with pytest.raises(ValueError, match="featuresCol='feats': no such column"):
        SparkLambdaMART(featuresCol="feats").fit(frame)
    with pytest.raises(TypeError, match="validationIndicatorCol='valid' must be a boolean column, not tinyint"):
        SparkLambdaMART(validationIndicatorCol="valid").fit(frame)


def test_cli_train_on_spark_saves_the_one_machine_model(spark, capsys, tmp_path, shared_data):
    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"  # small: the Spark job's start dominates
    held = shared_data / "MQ2008" / "Fold1" / "test.txt"
    opts = ["--model", "lambdamart", "--n-estimators", "8", "--leaves", "7", "--seed", "0", "--train", src,
            "--validate", held, "--early-stopping", "2"]  # fmt: skip
    code, out, err = run(capsys, "train", *opts, "--spark", "local[2]", "--save", tmp_path / "spark.json")
    assert code == 0, err
    assert "lambdamart on spark: saved to" in out and "ndcg@10" in out and "validate" in out
    code, _, err = run(capsys, "train", *opts, "--save", tmp_path / "local.json")
    assert code == 0, err
    ours, ref = load_model(tmp_path / "spark.json"), load_model(tmp_path / "local.json")
    from ranklearn.data import load_svmlight

    X = np.asarray(load_svmlight(src).X.todense() if hasattr(load_svmlight(src).X, "todense") else load_svmlight(src).X)
    _assert_same_trees(ours, ref)  # early stopping on --validate kept the same trees
    assert ours.best_iteration_ == ref.best_iteration_
    assert ours.evals_result_["validation"]["ndcg@10"] == pytest.approx(ref.evals_result_["validate"]["ndcg@10"])
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), atol=1e-9)
    # the training file's .weight sidecar reaches the tasks as weightCol: the one machine's weighted model
    weighted = tmp_path / "weighted.txt"
    weighted.write_bytes(src.read_bytes())
    rng = np.random.default_rng(0)
    Path(f"{weighted}.weight").write_text("".join(f"{w}\n" for w in rng.integers(1, 6, X.shape[0])))
    wopts = [*opts[:-6], "--train", weighted, *opts[-4:]]
    for where, extra in (("spark-w.json", ["--spark", "local[2]"]), ("local-w.json", [])):
        code, _, err = run(capsys, "train", *wopts, *extra, "--save", tmp_path / where)
        assert code == 0 and f"weights from {weighted}.weight" in err, err
    ours, ref_w = load_model(tmp_path / "spark-w.json"), load_model(tmp_path / "local-w.json")
    _assert_same_trees(ours, ref_w)
    np.testing.assert_allclose(ours.predict(X), ref_w.predict(X), atol=1e-9)
    assert not np.allclose(ref_w.predict(X), ref.predict(X))  # the weights changed the model
    code, _, err = run(capsys, "train", *opts, "--spark", "local[2]", "--workers", "2")
    assert_one_line_error(code, err, "give --spark (a Spark master) or --scheduler/--workers")
    code, _, err = run(capsys, "train", "--train", src, "--model", "mart", "--spark", "local[2]")
    assert_one_line_error(code, err, "--spark trains --model lambdamart only, not mart")


# ---------------------------------------------------------------------- faults (last: they kill tasks)
def _task_pids():
    """The Python processes of the running fit's tasks: those connected to this process (the driver)."""
    psutil = pytest.importorskip("psutil")
    conns = psutil.net_connections(kind="tcp")
    mine = {c.raddr for c in conns if c.pid == os.getpid() and c.raddr and c.status == psutil.CONN_ESTABLISHED}
    pids = {c.pid for c in conns if c.pid not in (None, os.getpid()) and c.laddr in mine}
    return sorted(p for p in pids if psutil.Process(p).name().startswith("python"))


@pytest.fixture(scope="module")
def small(spark, mq2008):
    X, y, q = mq2008[1]  # the validation set: small, 2 tasks
    return _frame(spark, X, y, q)


@pytest.mark.parametrize("how", ["lost", "silent"])
def test_a_lost_or_silent_task_ends_the_fit_with_an_error_naming_it(small, how):
    victims = []

    def strike(iteration, total, results):
        if iteration == 2:
            pids = _task_pids()
            assert len(pids) == 2  # the two tasks of the fit
            victims.append(pids[-1])
            os.kill(pids[-1], signal.SIGKILL if how == "lost" else signal.SIGSTOP)

    kind = TaskLostError if how == "lost" else TaskTimeoutError
    try:
        with pytest.raises(kind) as caught:
            SparkLambdaMART(n_estimators=50, num_leaves=7, task_timeout=20).fit(small, callbacks=[strike])
    finally:
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):  # killed with the cancelled job, or it ends now
                os.kill(pid, signal.SIGCONT)
    message = str(caught.value)
    assert message.startswith("tree 3: ") and f"pid {victims[0]}" in message, message
    assert "the fit stops" in message
    assert caught.value.__cause__ is not None or how == "lost"
