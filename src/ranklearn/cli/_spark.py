"""``ranklearn train --spark MASTER``: LambdaMART on Spark (:mod:`ranklearn.spark`) from the command line."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ranklearn.cli import _common as C
from ranklearn.data import RankingDataset
from ranklearn.models.lambdamart import LambdaMART


def _table(train: RankingDataset, validate: RankingDataset | None, weight: np.ndarray | None = None) -> Any:
    """The sets as one Arrow table: features (a list of doubles per row), label, qid,
    ``validation`` (true on the validation rows) and, when the training file has them, ``position``
    and ``weight``."""
    import pyarrow as pa

    parts = [(train, False)] + ([(validate, True)] if validate is not None else [])
    X = np.concatenate([np.asarray(ds.to_dense().X, dtype=np.float64) for ds, _ in parts])
    offsets = np.arange(X.shape[0] + 1, dtype=np.int32) * X.shape[1]
    # queries numbered in file order (the order one machine trains them in), the training
    # set's even and the validation set's odd: a qid may be in both files, and the ranges of
    # qid the tasks get each hold a share of both sets
    qid = []
    for ds, v in parts:
        sizes = np.diff(ds.ptr)
        qid.append(np.repeat(2 * np.arange(sizes.size) + int(v), sizes))
    columns = {
        "features": pa.ListArray.from_arrays(pa.array(offsets), pa.array(X.ravel())),
        "label": np.concatenate([np.asarray(ds.y, dtype=np.float64) for ds, _ in parts]),
        "qid": np.concatenate(qid),
        "validation": np.concatenate([np.full(ds.n_samples, v) for ds, v in parts]),
    }
    if train.position is not None:  # the training rows' display ranks (the validation rows' are not read)
        columns["position"] = np.concatenate([np.asarray(train.position, dtype=np.float64)]
                                             + [np.ones(ds.n_samples) for ds, v in parts if v])  # fmt: skip
    if weight is not None:  # the training rows' (the validation rows' are not read)
        columns["weight"] = np.concatenate([np.asarray(weight, dtype=np.float64)]
                                           + [np.ones(ds.n_samples) for ds, v in parts if v])  # fmt: skip
    return pa.table(columns)


def fit_on_spark(
    master: str,
    params: dict[str, Any],
    train: RankingDataset,
    validate: RankingDataset | None,
    callbacks: Sequence[Any],
    task_timeout: float | None,
    weight: np.ndarray | None = None,
) -> LambdaMART:
    """Fit ``SparkLambdaMART(**params)`` on a Spark session of ``master`` (the active one if
    there is one; a new one is stopped at the end) and return the plain ``LambdaMART``;
    ``weight``: the training rows' weights (``weightCol``).

    The tasks run this Python (``PYSPARK_PYTHON`` unless set). A task lost or silent for
    ``task_timeout`` seconds ends the command with one line and status 1.
    """
    import typer

    try:
        from pyspark.sql import SparkSession

        from ranklearn.spark import SparkLambdaMART, TaskLostError
    except ImportError as exc:
        raise ValueError(f"--spark needs the spark extra: pip install 'ranklearn[spark]' ({exc})") from None
    if task_timeout is not None and not task_timeout > 0:
        raise ValueError(f"--worker-timeout must be a positive number of seconds, got {task_timeout:g}")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    existing = SparkSession.getActiveSession()
    session = existing or SparkSession.builder.master(master).appName("ranklearn train").getOrCreate()
    try:
        estimator = SparkLambdaMART(
            **params, validationIndicatorCol="validation" if validate is not None else None,
            positionCol="position" if train.position is not None else None,
            weightCol="weight" if weight is not None else None,
            **({} if task_timeout is None else {"task_timeout": task_timeout}),
        )  # fmt: skip
        frame = session.createDataFrame(_table(train, validate, weight))
        try:
            return estimator.fit(frame, callbacks=callbacks).to_local()
        except KeyboardInterrupt:
            raise C.Interrupted("interrupted; a Spark fit keeps no model: nothing saved") from None
        except TaskLostError as exc:  # the cluster failed, not the input: status 1
            typer.echo(f"ranklearn: error: {C.one_line(exc)}", err=True)
            raise typer.Exit(1) from None
    finally:
        if existing is None:
            session.stop()
