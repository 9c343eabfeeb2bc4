"""The ``ranklearn`` command line: info, evaluate, compare, cv, convert, train, predict, export, demo.

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
from ranklearn.exceptions import RanklearnError

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
    docid = "docid"


class Layout(str, Enum):
    qid = "qid"
    lightgbm = "lightgbm"


class ExportFormat(str, Enum):
    ranklib = "ranklib"


class ModelName(str, Enum):
    lambdamart = "lambdamart"
    ranknet = "ranknet"
    lambdarank = "lambdarank"


class Optimizer(str, Enum):
    adam = "adam"
    sgd = "sgd"


class LambdaNorm(str, Enum):
    docs = "docs"
    pairs = "pairs"
    none = "none"


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


class Conventions(str, Enum):
    ranklearn = "ranklearn"
    trec_eval = "trec_eval"
    lightgbm = "lightgbm"
    xgboost = "xgboost"
    ranklib = "ranklib"
    ranx = "ranx"


class PDivisor(str, Enum):
    min_k_n = "min(k,n)"
    k = "k"


class MapDivisor(str, Enum):
    min_r_k = "min(R,k)"
    r = "R"


class Queries(str, Enum):
    both = "both"
    qrels = "qrels"


MetricOpt = typer.Option(
    ["ndcg@10"], "--metric", help="Metric spec (repeatable): ndcg@k, dcg@k, err@k, map\\[@k], p@k, rr\\[@k]."
)
ConventionsOpt = typer.Option(
    None, "--conventions", help="Set every convention as this tool does; the options below override it."
)
EmptyOpt = typer.Option(None, help="Queries without a relevant document count 0, 1 (ndcg, map), or are skipped. \\[zero]")
GainOpt = typer.Option(None, help="DCG/NDCG gain: 2^rel-1 (exp2) or rel (linear). \\[exp2]")
TiesOpt = typer.Option(
    None, help="Equal scores: input order, relevant last, the expectation, or docid descending. \\[stable]"
)
PDivisorOpt = typer.Option(None, "--p-divisor", help="P@k divides by min(k, list length) or by k. \\[min(k,n)]")
MapDivisorOpt = typer.Option(None, "--map-divisor", help="AP@k divides by min(R, k) or by R. \\[min(R,k)]")
MaxGradeOpt = typer.Option(None, "--max-grade", help="ERR's top grade: R = (2^rel-1)/2^max_grade. \\[4]")
QrelsOpt = typer.Option(None, "--qrels", help="TREC qrels 'qid iter docid grade' (with --run, instead of --data).")
RunOpt = typer.Option(None, "--run", help="TREC run 'qid Q0 docid rank score tag' (repeatable).")
QueriesOpt = typer.Option(
    Queries.both, "--queries", help="With --qrels: judged queries every run has (trec_eval), or all judged ones (-c)."
)


def _conventions(conventions, gain, empty, ties, p_divisor, map_divisor, max_grade) -> dict[str, object]:
    return dict(
        conventions=None if conventions is None else conventions.value,
        gain=None if gain is None else gain.value,
        empty=None if empty is None else empty.value,
        ties=None if ties is None else ties.value,
        p_divisor=None if p_divisor is None else p_divisor.value,
        map_divisor=None if map_divisor is None else map_divisor.value,
        max_grade=max_grade,
    )


def _inputs(data, scores, qrels, run, metrics, queries):
    """Per-query values from --data/--scores or --qrels/--run, whichever pair is given."""
    from ranklearn.cli import _evaluate as E

    if (data is None) == (qrels is None):
        raise ValueError("give --data with --scores, or --qrels with --run")
    if data is not None:
        if not scores or run:
            raise ValueError("--data takes --scores (not --run)")
        return str(data), *E.values_from_scores(data, scores, metrics)
    if not run or scores:
        raise ValueError("--qrels takes --run (not --scores)")
    return str(qrels), *E.values_from_trec(qrels, run, metrics, queries=queries.value)


@app.command()
def evaluate(
    data: Path | None = typer.Option(None, "--data", help="Ranking file with the labels."),
    scores: list[Path] | None = typer.Option(
        None, "--scores", help="One score per line, in the row order of --data (repeatable)."
    ),
    qrels: Path | None = QrelsOpt,
    run: list[Path] | None = RunOpt,
    metric: list[str] = MetricOpt,
    conventions: Conventions | None = ConventionsOpt,
    empty: Empty | None = EmptyOpt,
    gain: Gain | None = GainOpt,
    ties: Ties | None = TiesOpt,
    p_divisor: PDivisor | None = PDivisorOpt,
    map_divisor: MapDivisor | None = MapDivisorOpt,
    max_grade: float | None = MaxGradeOpt,
    queries: Queries = QueriesOpt,
    per_query: bool = typer.Option(False, "--per-query", help="Also print each query's values."),
    as_json: bool = typer.Option(
        False,
        "--json",
        help='Print only a JSON object {"<metric>": mean, ...}; with --per-query it also has '
        '"per_query": [{"qid": ..., "<metric>": value}, ...] (null = skipped query). '
        'With several score files or runs: {"<file name>": {...}, ...}.',
    ),
) -> None:
    """Score rankings against labels: score files against a ranking file, or TREC runs against qrels."""
    from ranklearn.cli._evaluate import build_metrics, print_evaluation

    metrics = build_metrics(metric, _conventions(conventions, gain, empty, ties, p_divisor, map_divisor, max_grade))
    source, query_ids, values = _inputs(data, scores, qrels, run, metrics, queries)
    print_evaluation(query_ids, values, metrics, source=source, per_query=per_query, as_json=as_json)


@app.command()
def compare(
    data: Path | None = typer.Option(None, "--data", help="Ranking file with the labels."),
    scores: list[Path] | None = typer.Option(
        None, "--scores", help="Scores of one system, one per row of --data (repeatable; the first is the baseline)."
    ),
    qrels: Path | None = QrelsOpt,
    run: list[Path] | None = typer.Option(None, "--run", help="TREC run of one system (repeatable; the first is the baseline)."),
    metric: list[str] = MetricOpt,
    conventions: Conventions | None = ConventionsOpt,
    empty: Empty | None = EmptyOpt,
    gain: Gain | None = GainOpt,
    ties: Ties | None = TiesOpt,
    p_divisor: PDivisor | None = PDivisorOpt,
    map_divisor: MapDivisor | None = MapDivisorOpt,
    max_grade: float | None = MaxGradeOpt,
    queries: Queries = QueriesOpt,
    permutations: int = typer.Option(10_000, help="Sign flips of the randomization test, and bootstrap resamples."),
    seed: int = typer.Option(0, help="Seed of the randomization test and the bootstrap."),
    confidence: float = typer.Option(0.95, help="Level of the bootstrap interval of each mean difference."),
    per_query: bool = typer.Option(False, "--per-query", help="With --json: every query's value for every system."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: means, every test, and the conventions."),
) -> None:
    """Compare two or more systems query by query: means, differences, t-test, Wilcoxon, randomization test, bootstrap interval, win/tie/loss."""
    from ranklearn.cli._evaluate import build_metrics, run_compare

    metrics = build_metrics(metric, _conventions(conventions, gain, empty, ties, p_divisor, map_divisor, max_grade))
    _, query_ids, values = _inputs(data, scores, qrels, run, metrics, queries)
    run_compare(query_ids, values, metrics, permutations=permutations, seed=seed, confidence=confidence,
                per_query=per_query, as_json=as_json)  # fmt: skip


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


@app.command()
def train(
    train: Path = typer.Option(..., "--train", help="Training file."),
    validate: Path | None = typer.Option(None, "--validate", help="Validation file: progress and early stopping."),
    test: Path | None = typer.Option(None, "--test", help="Test file: reported at the end only."),
    model: ModelName = typer.Option(..., "--model", help="Which ranker to train."),
    save: Path | None = typer.Option(None, "--save", help="Where to write the model file."),
    trees: int | None = typer.Option(None, help="\\[lambdamart] Number of trees (at most)."),
    leaves: int | None = typer.Option(None, help="\\[lambdamart] Leaves per tree."),
    learning_rate: float | None = typer.Option(None, "--learning-rate", help="Shrinkage (trees) or step size (neural)."),
    min_leaf_samples: int | None = typer.Option(None, help="\\[lambdamart] Minimum documents per leaf."),
    max_bins: int | None = typer.Option(None, help="\\[lambdamart] Histogram bins per feature."),
    metric: str | None = typer.Option(None, help="Metric watched on --validate, e.g. ndcg@10, err@10, map."),
    early_stopping: int | None = typer.Option(None, help="Stop after this many rounds without improvement on --validate."),
    threads: int | None = typer.Option(None, help="\\[lambdamart] Threads."),
    seed: int | None = typer.Option(None, help="Random seed."),
    sigma: float | None = typer.Option(None, help="Steepness of the pairwise sigmoid."),
    hidden: str | None = typer.Option(None, help="\\[ranknet, lambdarank] Hidden layer sizes, e.g. 64,32."),
    networks: int | None = typer.Option(None, help="\\[ranknet, lambdarank] Networks trained side by side and averaged."),
    epochs: int | None = typer.Option(None, help="\\[ranknet, lambdarank] Epochs (at most)."),
    optimizer: Optimizer | None = typer.Option(None, help="\\[ranknet, lambdarank] Optimizer."),
    batch_queries: int | None = typer.Option(None, help="\\[ranknet, lambdarank] Queries per update."),
    dropout: float | None = typer.Option(None, help="\\[ranknet, lambdarank] Dropout after each hidden layer."),
    lambda_norm: LambdaNorm | None = typer.Option(
        None, "--lambda-norm", help="\\[ranknet, lambdarank] Divide each query's lambdas by its documents or pairs."
    ),
    device: str | None = typer.Option(None, help="\\[ranknet, lambdarank] torch device: cpu, cuda or cuda:N."),
) -> None:
    """Train a ranker, save it, and print NDCG@10 and the watched metric on every given set.

    Only the options you give are passed on, so each model keeps its own defaults; an
    option of another model is an error. Ctrl-C keeps the best model so far, saves it
    (with --save) and exits with status 130.
    """
    from ranklearn.cli._train import estimator_params, parse_hidden, run_train

    options = dict(
        trees=trees, leaves=leaves, learning_rate=learning_rate, min_leaf_samples=min_leaf_samples,
        max_bins=max_bins, metric=metric, early_stopping=early_stopping, threads=threads, seed=seed,
        sigma=sigma, hidden=None if hidden is None else parse_hidden(hidden), networks=networks, epochs=epochs,
        optimizer=None if optimizer is None else optimizer.value, batch_queries=batch_queries,
        dropout=dropout, lambda_norm=None if lambda_norm is None else lambda_norm.value,
        device=device,
    )  # fmt: skip
    run_train(model.value, estimator_params(model.value, options), train, validate, test, save)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def cv(
    ctx: typer.Context,
    model: ModelName = typer.Option(..., "--model", help="Which ranker to cross-validate."),
    data: Path | None = typer.Option(None, "--data", help="Ranking file to split into query-grouped folds."),
    folds: int = typer.Option(5, "--folds", help="Number of folds of --data (whole queries, shuffled by --split-seed)."),
    letor_folds: Path | None = typer.Option(
        None, "--letor-folds", help="Folder of Fold1..FoldN/{train,vali,test}.txt: train, early-stop on vali, score test."
    ),
    metric: list[str] = typer.Option(["ndcg@10"], "--metric", help="Metric reported per fold (repeatable)."),
    split_seed: int = typer.Option(0, "--split-seed", help="Seed of the fold assignment of --data."),
    as_json: bool = typer.Option(False, "--json", help='Print {"folds": {...}, "mean": {...}, "std": {...}}.'),
) -> None:
    """Cross-validate a ranker: each fold's metrics, then mean ± std (as RankLib's -kcv).

    Model options are train's, given after the others: --trees --leaves --learning-rate
    --min-leaf-samples --max-bins --early-stopping --threads --seed --sigma --hidden --networks
    --epochs --optimizer --batch-queries --dropout --lambda-norm --device (--metric here is
    the reported metric).
    """
    from ranklearn.cli._cv import parse_model_options, run_cv

    params = parse_model_options(model.value, ctx.args)
    run_cv(model.value, params, metric, data=data, folds=folds, split_seed=split_seed, letor_folds=letor_folds,
           as_json=as_json)  # fmt: skip


ModelOpt = typer.Option(..., "--model", help="A ranklearn model file (from train --save).")


class PredictFormat(str, Enum):
    scores = "scores"
    trec = "trec"


@app.command()
def predict(
    model: Path = ModelOpt,
    data: Path = typer.Option(..., "--data", help="Ranking file to score."),
    out: Path = typer.Option(..., "--out", help="Scores file to write: one number per line, in the row order of --data."),
    fmt: PredictFormat = typer.Option(
        PredictFormat.scores, "--format", help="scores: one per line; trec: a TREC run 'qid Q0 docid rank score tag'."
    ),
    run_tag: str = typer.Option("ranklearn", "--run-tag", help="\\[trec] Tag in the last column of the run."),
    docid_field: str = typer.Option(
        "docid", "--docid-field", help="\\[trec] Comment field holding each row's document id ('# docid = ...')."
    ),
) -> None:
    """Score every row of a ranking file; the file is written atomically, floats exactly (repr)."""
    from ranklearn.io import load_model

    C.check_output_path(out)
    estimator = load_model(model)
    ds = C.load_data(data)
    scores = estimator.predict(ds.X)
    if fmt is PredictFormat.trec:
        from ranklearn.cli._evaluate import trec_run_lines

        qids = np.repeat(ds.query_ids, ds.query_sizes)
        lines = list(trec_run_lines(data, ds.comments, qids, scores, run_tag, docid_field))  # errors before writing
        C.write_lines(out, lines)
        C.console.print(f"wrote a run of {len(scores):,} documents, {ds.n_queries:,} queries to {out}")
        return
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


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``ranklearn`` console script."""
    try:
        app(args=argv, prog_name="ranklearn")
    except USER_ERRORS as exc:
        typer.echo(f"ranklearn: error: {C.one_line(exc)}", err=True)
        sys.exit(2)
    except MemoryError as exc:  # e.g. data far too large for this machine: say so in one line
        typer.echo(f"ranklearn: error: out of memory ({C.one_line(exc)})", err=True)
        sys.exit(2)
