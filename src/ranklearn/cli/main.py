"""The ``ranklearn`` command line: info, evaluate, convert, train, predict, export, demo.

Bad input of any kind (malformed data or model files, missing or unreadable paths, bad
parameter values) ends with exit status 2 and one line on stderr,
``ranklearn: error: <file>:<line>: <what is wrong>``; never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

import numpy as np
import typer
from rich.table import Table

from ranklearn.cli import _common as C
from ranklearn.exceptions import DataFormatError, RanklearnError

app = typer.Typer(
    name="ranklearn",
    help="Learning to rank: train and apply LambdaMART / RankNet / LambdaRank, evaluate rankings "
    "with stated metric conventions, inspect and convert LETOR/SVMlight files.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

#: Exceptions that mean "bad input" rather than a bug: reported in one line, exit status 2.
USER_ERRORS = (RanklearnError, ValueError, OSError)


class Gain(str, Enum):
    exp2 = "exp2"
    linear = "linear"


class Empty(str, Enum):
    zero = "zero"
    one = "one"
    skip = "skip"


class Ties(str, Enum):
    stable = "stable"
    pessimistic = "pessimistic"
    average = "average"


class Layout(str, Enum):
    qid = "qid"
    lightgbm = "lightgbm"


class ExportFormat(str, Enum):
    ranklib = "ranklib"


#: ``info`` lists the count of each label up to this many distinct labels, then summarizes.
MAX_LISTED_LABELS = 32

DataArg = typer.Argument(..., help="Ranking file: '<label> qid:<q> <fid>:<value> ...', or LightGBM layout with FILE.query.")


@app.command()
def info(file: Path = DataArg) -> None:
    """Summarize a ranking file: rows, queries, features, labels, query sizes, empty queries."""
    ds = C.load_data(file, regroup=True, sparse=True)  # sparse: any feature ids, little memory
    sizes = ds.query_sizes
    has_relevant = np.maximum.reduceat(ds.y, ds.ptr[:-1]) > 0
    labels, counts = np.unique(ds.y, return_counts=True)
    table = Table(title=str(file), show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("rows", f"{ds.n_samples:,}")
    table.add_row("queries", f"{ds.n_queries:,}")
    table.add_row("features", f"{ds.n_features:,}")
    if labels.shape[0] <= MAX_LISTED_LABELS:
        label_text = ", ".join(f"{v:g}: {c:,} ({100 * c / ds.n_samples:.1f}%)" for v, c in zip(labels, counts))
    else:  # continuous or many-graded labels
        label_text = f"{labels.shape[0]:,} distinct values from {labels[0]:g} to {labels[-1]:g}, mean {ds.y.mean():.3g}"
    table.add_row("labels", label_text)
    table.add_row("docs per query", f"min {sizes.min():,}, mean {sizes.mean():.1f}, max {sizes.max():,}")
    empty = int((~has_relevant).sum())
    table.add_row("queries without a relevant doc", f"{empty:,} ({100 * empty / ds.n_queries:.1f}%)")
    C.console.print(table)


@app.command()
def evaluate(
    data: Path = typer.Option(..., "--data", help="Ranking file with the labels."),
    scores: Path = typer.Option(..., "--scores", help="One score per line, in the row order of --data."),
    metric: list[str] = typer.Option(
        ["ndcg@10"], "--metric", help="Metric spec (repeatable): ndcg@k, dcg@k, err@k, map\\[@k], p@k, rr\\[@k]."
    ),
    empty: Empty = typer.Option(Empty.zero, help="Queries without a relevant document count 0, 1, or are skipped."),
    gain: Gain = typer.Option(Gain.exp2, help="DCG/NDCG gain: 2^rel-1 (exp2) or rel (linear)."),
    ties: Ties = typer.Option(Ties.stable, help="Equal scores: input order, relevant last, or the expectation."),
    per_query: bool = typer.Option(False, "--per-query", help="Also print each query's values."),
    as_json: bool = typer.Option(
        False,
        "--json",
        help='Print only a JSON object {"<metric>": mean, ...}; with --per-query it also has '
        '"per_query": [{"qid": ..., "<metric>": value}, ...] (null = skipped query).',
    ),
) -> None:
    """Score a ranking (one score per row) against the labels of a ranking file."""
    from ranklearn.metrics import get_metric, query_mean

    ds = C.load_data(data)
    s = C.read_scores(scores, ds.n_samples, data)
    # ERR's top grade is fixed from the whole file so that the stated convention is exact.
    top = max(1.0, float(ds.y.max()))
    metrics = [get_metric(m, gain=gain.value, empty=empty.value, ties=ties.value, max_grade=top) for m in metric]
    try:
        values = {m.name: m.per_query(ds.y, s, ds.ptr) for m in metrics}
    except ValueError as exc:  # labels the metrics cannot take (negative, too large): name the file
        raise DataFormatError(f"{exc} (data row numbers count from 0)", path=data) from None
    means = {name: query_mean(v) for name, v in values.items()}
    qids = ds.query_ids.tolist()
    if as_json:
        out: dict[str, object] = {name: C.json_number(v) for name, v in means.items()}
        if per_query:
            out["per_query"] = [
                {"qid": qid, **{name: C.json_number(v[q]) for name, v in values.items()}} for q, qid in enumerate(qids)
            ]
        C.print_json(out)
        return
    if per_query:
        rows = {str(qid): {name: v[q] for name, v in values.items()} for q, qid in enumerate(qids)}
        C.console.print(C.results_table(rows, list(values)))
    n_scored = int((~np.isnan(next(iter(values.values())))).sum())
    C.console.print(f"{data}: mean over {n_scored} of {ds.n_queries} queries")
    C.console.print(C.results_table({"mean": means}, list(means)))
    C.console.print(C.conventions_line(metrics))


@app.command()
def convert(
    source: Path = typer.Argument(..., metavar="IN", help="Ranking file (qid layout, or LightGBM layout with IN.query)."),
    target: Path = typer.Argument(..., metavar="OUT", help="File to write."),
    to: Layout = typer.Option(..., "--to", help="qid: '<label> qid:<q> ...' lines; lightgbm: no qid, group sizes in OUT.query."),
) -> None:
    """Convert between the qid layout and LightGBM's query-file layout (rows of a query are gathered, stably)."""
    from ranklearn.data import RankingDataset, save_svmlight

    C.check_output_path(target)
    ds = C.load_data(source, regroup=True)
    if to is Layout.qid:
        save_svmlight(ds, target)
        C.console.print(f"wrote {target}: {ds.n_samples:,} rows, {ds.n_queries:,} queries")
        return
    # LightGBM reads neither qids nor '#' comments: write the qid layout without them, then
    # drop the qid column, and put the group sizes in OUT.query.
    save_svmlight(RankingDataset(ds.X, ds.y, ds.ptr, query_ids=ds.query_ids), target)
    C.strip_qid_column(target)
    query_file = Path(f"{target}.query")
    C.write_lines(query_file, (str(n) for n in ds.query_sizes.tolist()))
    C.console.print(f"wrote {target} and {query_file}: {ds.n_samples:,} rows, {ds.n_queries:,} queries")


ModelOpt = typer.Option(..., "--model", help="A ranklearn model file (from train --save).")


@app.command()
def predict(
    model: Path = ModelOpt,
    data: Path = typer.Option(..., "--data", help="Ranking file to score."),
    out: Path = typer.Option(..., "--out", help="Scores file to write: one number per line, in the row order of --data."),
) -> None:
    """Score every row of a ranking file; the file is written atomically, floats exactly (repr)."""
    from ranklearn.io import load_model

    C.check_output_path(out)
    estimator = load_model(model)
    ds = C.load_data(data)
    scores = estimator.predict(ds.X)
    C.write_lines(out, (repr(float(v)) for v in scores))
    C.console.print(f"wrote {len(scores):,} scores to {out}")


@app.command()
def export(
    model: Path = ModelOpt,
    fmt: ExportFormat = typer.Option(..., "--format", help="Target format."),
    out: Path = typer.Option(..., "--out", help="File to write."),
) -> None:
    """Export a model to another tool's format (RankLib's LambdaMART text format)."""
    from ranklearn.io import load_model
    from ranklearn.io.ranklib import export_ranklib

    C.check_output_path(out)
    export_ranklib(load_model(model), out)
    C.console.print(f"wrote {out} ({fmt.value})")


@app.command()
def demo() -> None:
    """Train every available model on built-in synthetic data and compare them on a test set."""
    from ranklearn.cli._train import run_demo

    run_demo()


def _register_train_command() -> None:
    """(Re)build ``train`` from the model registry, so that every registered ranker is a choice."""
    from ranklearn.cli._train import build_train_command

    app.registered_commands = [c for c in app.registered_commands if c.name != "train"]
    app.command(name="train")(build_train_command())


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``ranklearn`` console script."""
    try:
        _register_train_command()
        app(args=argv, prog_name="ranklearn")
    except USER_ERRORS as exc:
        typer.echo(f"ranklearn: error: {C.one_line(exc)}", err=True)
        sys.exit(2)
    except MemoryError as exc:  # e.g. data far too large for this machine: say so in one line
        typer.echo(f"ranklearn: error: out of memory ({C.one_line(exc)})", err=True)
        sys.exit(2)
