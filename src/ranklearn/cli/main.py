"""The ``ranklearn`` command line: info, evaluate, compare, report, cv, convert, train, predict, export, simulate-clicks, demo, trec-eval.

Bad input of any kind (malformed data or model files, missing or unreadable paths, bad
parameter values, usage errors) ends with exit status 2 and one line on stderr,
``ranklearn: error: <file>:<line>: <what is wrong>``; never a traceback or a boxed panel.
Outputs are written by the rules of :mod:`ranklearn._files`.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import warnings
from collections.abc import Sequence
from typing import Any
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Any

import typer
from typer.core import TyperCommand, TyperOption

from ranklearn._files import is_special, write_outputs
from ranklearn._compilation import on_first_compile
from ranklearn.cli import _common as C
from ranklearn.cli._export import export as export_command
from ranklearn.cli._trec_eval import trec_eval as trec_eval_command
from ranklearn.exceptions import DataFormatError, RanklearnError

app = typer.Typer(
    name="ranklearn",
    help="Learning to rank: train and apply RankLib's nine rankers (LambdaMART, MART, RankNet, "
    "RankBoost, AdaRank, coordinate ascent, ListNet, random forests, linear regression) and "
    "LambdaRank, evaluate rankings with stated metric conventions, inspect and convert "
    "LETOR/SVMlight files.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_typer_display_type = TyperOption.display_type_rich


def _display_type(self: TyperOption, ctx: typer.Context) -> str | None:
    """Help shows flags without a value placeholder and an option's own METAVAR if it has one.

    Typer prints every option's Python type (``--per-query <bool>``, ``--metric <list[str]>``)
    and offers no setting for it.
    """
    if self.is_flag:
        return None
    return self.metavar or _typer_display_type(self, ctx)


TyperOption.display_type_rich = _display_type  # type: ignore[method-assign]

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


#: ``info`` lists the count of each label up to this many distinct labels, then summarizes.
MAX_LISTED_LABELS = 32

DataArg = typer.Argument(
    ..., help="Ranking file: '<label> qid:<q> <fid>:<value> ...', or LightGBM layout with FILE.query; - reads stdin."
)
NoRegroupOpt = typer.Option(
    False,
    "--no-regroup",
    help="Refuse a file where a qid reappears after other queries (by default its rows are merged, with a warning).",
)


def _version(value: bool) -> None:
    if value:
        from ranklearn import __version__

        typer.echo(f"ranklearn {__version__}")
        raise typer.Exit()


@app.callback()
def _main_options(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Options of ``ranklearn`` itself, before the command (the app's ``help`` is its help text)."""


@app.command()
def info(file: Path = DataArg, no_regroup: bool = NoRegroupOpt) -> None:
    """Summarize a ranking file: rows, queries, features, labels, query sizes, empty queries."""
    import numpy as np
    from rich.table import Table

    ds = C.load_data(file, regroup=not no_regroup, sparse=True)  # sparse: any feature ids, little memory
    sizes = ds.query_sizes
    has_relevant = np.maximum.reduceat(ds.y, ds.ptr[:-1]) > 0
    labels, counts = np.unique(ds.y, return_counts=True)
    table = Table(title=C.shown(file), show_header=False)
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
    if ds.position is not None:
        shown_at, n_at = np.unique(ds.position, return_counts=True)
        top = ", ".join(f"{p}: {c:,}" for p, c in zip(shown_at[:5].tolist(), n_at[:5].tolist()))
        more = f", ... up to {shown_at[-1]:,}" if shown_at.shape[0] > 5 else ""
        table.add_row("positions", f"from {ds.position_file}; rows per position {top}{more}")
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
    ["ndcg@10"], "--metric", metavar="METRIC", help="Metric spec (repeatable): ndcg@k, dcg@k, err@k, map\\[@k], p@k, recall\\[@k], f1\\[@k], rr\\[@k] (or mrr\\[@k])."
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
RelevanceLevelOpt = typer.Option(
    None, "--relevance-level", metavar="N",
    help="Smallest relevant grade of the binary metrics (map, p, recall, f1, rr, trec_eval's): trec_eval's -l; "
    "ndcg keeps the grades. \\[label > 0; 1 with --conventions trec_eval]",
)  # fmt: skip
QrelsOpt = typer.Option(None, "--qrels", help="TREC qrels 'qid iter docid grade' (with --run, instead of --data).")
RunOpt = typer.Option(None, "--run", help="TREC run 'qid Q0 docid rank score tag' (repeatable).")
QueriesOpt = typer.Option(
    None,
    "--queries",
    help="With --qrels: the judged queries each run has (trec_eval; compare tests those every run has), "
    "or every judged one, a query a run lacks scoring 0 (trec_eval -c; ranx, which refuses runs without "
    "every judged query unless made comparable so). \\[both; qrels with --conventions ranx]",
)


def _conventions(conventions, gain, empty, ties, p_divisor, map_divisor, max_grade, relevance_level=None) -> dict[str, object]:
    return dict(
        conventions=None if conventions is None else conventions.value,
        gain=None if gain is None else gain.value,
        empty=None if empty is None else empty.value,
        ties=None if ties is None else ties.value,
        p_divisor=None if p_divisor is None else p_divisor.value,
        map_divisor=None if map_divisor is None else map_divisor.value,
        max_grade=max_grade,
        relevance_level=relevance_level,
    )


def _inputs(data, scores, qrels, run, metrics, queries, conventions, *, regroup: bool = True):
    """Per-query values from --data/--scores or --qrels/--run, whichever pair is given."""
    from ranklearn.cli import _evaluate as E

    if (data is None) == (qrels is None):
        raise ValueError("give --data with --scores, or --qrels with --run")
    if data is not None:
        if run:
            raise ValueError("--data takes --scores; --run goes with --qrels")
        if not scores:
            raise ValueError("--data needs --scores (one score per row of --data)")
        if str(data) == "-" and any(str(p) == "-" for p in scores):
            raise ValueError("--data and --scores cannot both read standard input (-)")
        return str(data), *E.values_from_scores(data, scores, metrics, regroup=regroup)
    if scores:
        raise ValueError("--qrels takes --run; --scores goes with --data")
    if not run:
        raise ValueError("--qrels needs --run (a TREC run file)")
    if queries is None:  # ranx scores a query missing from a run as 0 (its make_comparable)
        queries = Queries.qrels if conventions is Conventions.ranx else Queries.both
    return E.values_from_trec(qrels, run, metrics, queries=queries.value)


@app.command()
def evaluate(
    data: Path | None = typer.Option(None, "--data", help="Ranking file with the labels (- reads stdin)."),
    scores: list[Path] | None = typer.Option(
        None, "--scores", help="One score per line, in the row order of --data (repeatable; - reads stdin)."
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
    relevance_level: float | None = RelevanceLevelOpt,
    queries: Queries | None = QueriesOpt,
    per_query: bool = typer.Option(False, "--per-query", help="Also print each query's values."),
    as_json: bool = typer.Option(
        False,
        "--json",
        help='Print only a JSON object {"<metric>": mean, ...}; with --per-query it also has '
        '"per_query": [{"qid": ..., "<metric>": value}, ...] (null = not scored: skipped by --empty skip, '
        'or a judged query the run lacks). '
        'With several score files or runs: {"<file name>": {...}, ...}.',
    ),
    no_regroup: bool = NoRegroupOpt,
) -> None:
    """Score rankings against labels: score files against a ranking file, or TREC runs against qrels."""
    from ranklearn.cli._evaluate import build_metrics, print_evaluation

    metrics = build_metrics(
        metric, _conventions(conventions, gain, empty, ties, p_divisor, map_divisor, max_grade, relevance_level)
    )
    source, query_ids, values = _inputs(data, scores, qrels, run, metrics, queries, conventions, regroup=not no_regroup)
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
    relevance_level: float | None = RelevanceLevelOpt,
    queries: Queries | None = QueriesOpt,
    permutations: int = typer.Option(10_000, help="Sign flips of the randomization test, and bootstrap resamples."),
    seed: int = typer.Option(0, min=0, help="Seed of the randomization test and the bootstrap."),
    confidence: float = typer.Option(0.95, help="Level of the bootstrap interval of each mean difference."),
    per_query: bool = typer.Option(False, "--per-query", help="With --json: every query's value for every system."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: means, every test, and the conventions."),
    no_regroup: bool = NoRegroupOpt,
) -> None:
    """Compare two or more systems query by query: means, differences, t-test, Wilcoxon, randomization test, bootstrap interval, win/tie/loss."""
    from ranklearn.cli._evaluate import build_metrics, run_compare

    if per_query and not as_json:
        raise ValueError("--per-query adds every query's values to the JSON output: give --json too")
    metrics = build_metrics(
        metric, _conventions(conventions, gain, empty, ties, p_divisor, map_divisor, max_grade, relevance_level)
    )
    _, query_ids, values = _inputs(data, scores, qrels, run, metrics, queries, conventions, regroup=not no_regroup)
    run_compare(query_ids, values, metrics, permutations=permutations, seed=seed, confidence=confidence,
                per_query=per_query, as_json=as_json)  # fmt: skip


@app.command()
def report(
    model: Path = typer.Option(..., "--model", help="A ranklearn model file (from train --save)."),
    data: Path = typer.Option(..., "--data", help="Ranking file to score and evaluate (- reads stdin)."),
    out: Path = typer.Option(..., "--out", parser=C.output_path, help="HTML file to write (- = stdout)."),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="Scores of a baseline system, one per row of --data: adds compare's tables and plot."
    ),
    metric: list[str] = MetricOpt,
    conventions: Conventions | None = ConventionsOpt,
    empty: Empty | None = EmptyOpt,
    gain: Gain | None = GainOpt,
    ties: Ties | None = TiesOpt,
    p_divisor: PDivisor | None = PDivisorOpt,
    map_divisor: MapDivisor | None = MapDivisorOpt,
    max_grade: float | None = MaxGradeOpt,
    query: str | None = typer.Option(
        None, "--query", metavar="QID", help="Query whose lambdas are drawn. \\[the first with two different labels]"
    ),
    permutations: int = typer.Option(10_000, help="Sign flips of the randomization test, and bootstrap resamples."),
    seed: int = typer.Option(0, min=0, help="Seed of the randomization test and the bootstrap."),
    confidence: float = typer.Option(0.95, help="Level of the bootstrap interval of each mean difference."),
    no_regroup: bool = NoRegroupOpt,
) -> None:
    """Write one self-contained HTML page: evaluate's and compare's tables, learning curves, feature importance, metric@k, per-query differences, lambdas of one query, explanations."""
    from ranklearn.cli._evaluate import build_metrics
    from ranklearn.cli._report import run_report

    options = _conventions(conventions, gain, empty, ties, p_divisor, map_divisor, max_grade)
    metrics = build_metrics(metric, options)
    run_report(out, model, data, baseline, metrics=metrics, conventions=options, query=query,
               permutations=permutations, seed=seed, confidence=confidence, regroup=not no_regroup)  # fmt: skip


@app.command()
def convert(
    source: Path = typer.Argument(
        ..., metavar="IN", help="Ranking file (qid layout, or LightGBM layout with IN.query; - reads stdin)."
    ),
    target: Path = typer.Argument(
        ..., metavar="OUT", parser=C.output_path, help="File to write (- writes stdout with --to qid)."
    ),
    to: Layout = typer.Option(..., "--to", help="qid: '<label> qid:<q> ...' lines; lightgbm: no qid, group sizes in OUT.query."),
    no_regroup: bool = NoRegroupOpt,
) -> None:
    """Convert between the qid layout and LightGBM's query-file layout (rows of a query are gathered, stably).

    LightGBM's layout has no qids and no comments: converting back numbers the queries 0, 1, ...
    Positions (IN.position) go to OUT.position, in the rows' new order.
    """
    import numpy as np

    from ranklearn.data import format_svmlight
    from ranklearn.data.positions import format_positions, sidecar_path

    ds = C.load_data(source, regroup=not no_regroup, dtype=np.float64)  # every value as written
    outputs = [target] if to is Layout.qid else [target, Path(f"{target}.query")]
    if ds.position is not None:
        outputs.append(sidecar_path(target))
    if len(outputs) > 1 and is_special(target):
        companions = (["OUT.query (group sizes)"] if to is Layout.lightgbm else []) + (
            ["OUT.position (IN's positions)"] if ds.position is not None else []
        )
        raise ValueError(
            f"OUT is written together with {' and '.join(companions)}: OUT cannot be standard output or a device "
            f"({target})"
        )
    for out in outputs:
        C.check_output_path(out, source)
    files = {target: format_svmlight(ds, with_qid=to is Layout.qid)}
    if to is Layout.lightgbm:
        files[outputs[1]] = "".join(f"{n}\n" for n in ds.query_sizes.tolist()).encode()
    if ds.position is not None:
        files[outputs[-1]] = format_positions(ds.position)
    if to is Layout.qid:
        write_outputs(files)  # all or none
        C.report(f"wrote {' and '.join(map(str, outputs))}: {ds.n_samples:,} rows, {ds.n_queries:,} queries", target)
        return
    ids = ds.query_ids
    if ds.comments is not None or not np.array_equal(ids, np.arange(ds.n_queries)):
        C.warn(
            f"LightGBM's layout has no qids or comments: {target} keeps neither (first qid: {ids[:1].tolist()[0]}), "
            f"so converting it back numbers the queries 0 to {ds.n_queries - 1}"
        )
    write_outputs(files)  # all or none
    C.report(f"wrote {', '.join(map(str, outputs))}: {ds.n_samples:,} rows, {ds.n_queries:,} queries", target)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def cv(
    ctx: typer.Context,
    model: str = typer.Option(..., "--model", metavar="MODEL", help="Which ranker to cross-validate (train's --model)."),
    data: Path | None = typer.Option(None, "--data", help="Ranking file to split into query-grouped folds (its .position and .weight sidecars reach each fold's fit)."),
    folds: int = typer.Option(
        5, "--folds", min=2, help="Number of folds of --data (whole queries, shuffled by --split-seed)."
    ),
    letor_folds: Path | None = typer.Option(
        None, "--letor-folds", help="Folder of Fold1..FoldN/{train,vali,test}.txt: train, early-stop on vali, score test."
    ),
    metric: list[str] = typer.Option(["ndcg@10"], "--metric", help="Metric reported per fold (repeatable)."),
    train_metric: str | None = typer.Option(
        None, "--train-metric", metavar="METRIC",
        help="The ranker's own metric (train's --metric): watched on each fold's validation queries, "
        "and what coordinate-ascent, adarank and rankboost fit.",
    ),  # fmt: skip
    split_seed: int = typer.Option(
        0, "--split-seed", min=0, max=2**32 - 1, help="Seed of the fold assignment of --data."
    ),
    as_json: bool = typer.Option(False, "--json", help='Print {"folds": {...}, "mean": {...}, "std": {...}}.'),
    save_models: Path | None = typer.Option(
        None, "--save-models", metavar="DIR", help="Save each fold's model as DIR/fold-N.json (RankLib's -kcvmd)."
    ),
) -> None:
    """Cross-validate a ranker: each fold's metrics, then mean ± std (as RankLib's -kcv).

    Model options are train's (see 'ranklearn train --help'), given after the others, e.g.
    --n-estimators 100 --leaves 15 (--metric here is the reported metric; --train-metric is
    train's --metric).
    """
    from ranklearn.cli._cv import parse_model_options, run_cv
    from ranklearn.registry import get_spec

    model = get_spec(model).name  # an unknown name lists the known ones
    params = parse_model_options(model, ctx.args, train_metric)
    run_cv(model, params, metric, data=data, folds=folds, split_seed=split_seed, letor_folds=letor_folds,
           as_json=as_json, save_models=save_models)  # fmt: skip


ModelOpt = typer.Option(..., "--model", help="A ranklearn model file (from train --save).")


class PredictFormat(str, Enum):
    scores = "scores"
    trec = "trec"


@app.command()
def predict(
    model: Path = ModelOpt,
    data: Path = typer.Option(..., "--data", help="Ranking file to score (- reads stdin)."),
    out: Path = typer.Option(
        ..., "--out", parser=C.output_path,
        help="Scores file to write (- = stdout): one number per line, in the row order of --data.",
    ),  # fmt: skip
    fmt: PredictFormat = typer.Option(
        PredictFormat.scores, "--format", help="scores: one per line; trec: a TREC run 'qid Q0 docid rank score tag'."
    ),
    run_tag: str = typer.Option("ranklearn", "--run-tag", help="\\[trec] Tag in the last column of the run."),
    docid_field: str = typer.Option(
        "docid", "--docid-field", help="\\[trec] Comment field holding each row's document id ('# docid = ...')."
    ),
    iterations: int | None = C.ITERATIONS_OPT,
    best: bool = typer.Option(
        False, "--best", help="Score with the best iteration on the validation set (the default when the model has one; an error when it has none)."
    ),
) -> None:
    """Score every row of a ranking file; floats are written exactly (repr), in the file's row order.

    Trailing features left out of the file (all zero) count as zeros up to the model's feature count.
    """
    import numpy as np

    from ranklearn.exceptions import FeatureValueError
    from ranklearn.io import load_model
    from ranklearn.models.serving import load_scorer

    if fmt is PredictFormat.trec and re.fullmatch(r"\S+", run_tag) is None:  # checked before any work
        raise ValueError(f"--run-tag must be one word without blanks, got {run_tag!r}")
    C.check_output_path(out, data, model)
    # the whole model without building its estimator (no scikit-learn import) unless a part is asked for
    whole = iterations is None and not best
    estimator = load_scorer(model) if whole else C.model_part(load_model(model), iterations, best, model)
    n_features = estimator.n_features_in_
    # scores need no query groups: a reappearing qid is merged silently, then undone, and a file
    # without qids needs no .query file; a TREC run does need its queries, and so does a model
    # that normalizes each query within itself
    norm = getattr(estimator, "normalizer_", None)
    ds, order = C.load_data_as_wide(
        data, n_features, f"the model's features ({model} was trained on {n_features})",
        return_order=True, warn_regroup=False, positions_unused="predict scores the documents without them",
        require_groups=fmt is PredictFormat.trec or (norm is not None and norm.per_query),
    )  # fmt: skip
    try:
        scores = estimator.predict(ds.X, qid=ds.qid)
    except FeatureValueError as exc:  # e.g. NaN for a neural model: name the file's line
        raise C.feature_value_error(exc, ds, data, estimator) from None
    except ValueError as exc:
        raise DataFormatError(str(exc), path=C.shown(data)) from None
    if fmt is PredictFormat.trec:  # in the loader's query order, which a run does not depend on
        from ranklearn.cli._evaluate import trec_run_lines

        lines = trec_run_lines(data, ds, scores, run_tag, docid_field)
        C.write_lines(out, lines)
        C.report(f"wrote a run of {len(scores):,} documents, {ds.n_queries:,} queries to {out}", out)
        return
    if order is not None:
        scores = scores[np.argsort(order)]
    C.write_lines(out, (repr(float(v)) for v in scores))
    C.report(f"wrote {len(scores):,} scores to {out}", out)


app.command()(export_command)


class ClickModelName(str, Enum):
    pbm = "pbm"
    cascade = "cascade"
    dcm = "dcm"
    ubm = "ubm"
    trust = "trust"


@app.command(name="simulate-clicks")
def simulate_clicks(
    data: Path = typer.Option(..., "--data", help="Ranking file whose true labels the simulated users click on."),
    logging_model: list[Path] = typer.Option(
        ..., "--logging-model", metavar="MODEL", help="Model file (train --save) ranking each session's list; repeat it for several logging rankers, drawn per session."
    ),
    click_model: ClickModelName = typer.Option(ClickModelName.pbm, "--click-model", help="pbm, cascade, dcm (dependent), ubm (user browsing), trust (trust bias)."),
    sessions: int = typer.Option(..., "--sessions", min=1, help="Number of sessions (queries drawn uniformly)."),
    eta: float | None = typer.Option(None, "--eta", help="\\[pbm, ubm, trust] Position-bias severity: theta_k = theta_base(k)^eta (default 1)."),
    epsilon: float | None = typer.Option(None, "--epsilon", help="\\[pbm, cascade, dcm, ubm] Click probability of an examined non-relevant document (default 0.1)."),
    continuation: float | None = typer.Option(None, "--continuation", help="\\[dcm] Probability of reading on after a click (default 0.5)."),
    top_k: int = typer.Option(10, "--top-k", min=1, help="Length of the logged lists."),
    temperature: float | None = typer.Option(None, "--temperature", help="Stochastic logging: a Plackett-Luce sample of softmax(score / T) instead of the ranking."),
    swap: bool = typer.Option(False, "--swap", help="Swap interventions: rank 1 trades places with a uniformly drawn rank (the log's swap column)."),
    randpair: int | None = typer.Option(None, "--randpair", metavar="PIVOT", help="RandPair: rank PIVOT trades places with a uniformly drawn rank (the log's swap and pivot columns); --swap is RandPair with pivot 1."),
    seed: int = typer.Option(0, "--seed", help="Same seed, same log."),
    out: Path = typer.Option(..., "--out", parser=C.output_path, help="Click log to write: TSV (query session document position clicked), Parquet for .parquet; - = stdout."),
    aggregate: bool = typer.Option(False, "--aggregate", help="Write OUT as SVMlight instead: one row per query, document and position, label = clicks, with OUT.position and OUT.weight (impressions)."),
    per_session: bool = typer.Option(False, "--per-session", help="With --aggregate: one query group per distinct session (same query, documents, positions and clicks), labels = clicked 0/1, OUT.weight = how many sessions: the training set of the offline protocol, for train --unbiased."),
) -> None:
    """Simulate users clicking on a logging ranker's lists of --data's queries (clicks from the true labels)."""
    from ranklearn.cli._clicks import run_simulate_clicks

    run_simulate_clicks(
        data=data, logging_models=logging_model, model_name=click_model.value,
        options={"eta": eta, "epsilon": epsilon, "continuation": continuation}, sessions=sessions, top_k=top_k,
        temperature=temperature, swap=swap, randpair=randpair, seed=seed, out=out, aggregate=aggregate,
        per_session=per_session,
    )  # fmt: skip


app.command(name="trec-eval")(trec_eval_command)


@app.command()
def explain(
    model: Path = ModelOpt,
    data: Path = typer.Option(..., "--data", help="Ranking file holding the query (- reads stdin)."),
    query: str = typer.Option(..., "--query", metavar="QID", help="The query to explain, as written in the file."),
    pair: tuple[str, str] | None = typer.Option(
        None, "--pair", metavar="DOC_A DOC_B", help="Explain why DOC_A scores above (or below) DOC_B instead."
    ),
    top: int = typer.Option(10, "--top", help="Documents of the ranking explained (and their adjacent pairs)."),
    features: int = typer.Option(5, "--features", help="Features shown per document or pair."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (every number) instead of tables."),
    out: Path | None = typer.Option(None, "--out", parser=C.output_path, help="Write an HTML page instead."),
    docid_field: str = typer.Option(
        "docid", "--docid-field", help="Comment field naming each document ('# docid = ...'); else 'line N'."
    ),
) -> None:
    """Why the model ranks one query's documents as it does: feature contributions (TreeSHAP for trees).

    Per document, the features that moved it above or below the query's mean document; per adjacent
    pair of the ranking, the features that decided their order; with --pair, one pair.
    """
    from ranklearn.cli._explain import run_explain

    run_explain(model, data, query, pair=list(pair) if pair else None, top=top, n_features=features,
                as_json=as_json, out=out, docid_field=docid_field)  # fmt: skip


@app.command(name="warm-up")
def warm_up(
    jobs: int = typer.Option(2, "--jobs", min=1, help="Processes to compile in (the kernels come in two groups)."),
) -> None:
    """Compile the kernels of the common paths into numba's cache now (those already there are
    only loaded), so that later commands start at once."""
    from ranklearn.warmup import warm_up as compile_kernels

    compile_kernels(jobs, echo=typer.echo)


@app.command()
def demo() -> None:
    """Train every available model on built-in synthetic data and compare them on a test set."""
    from ranklearn.cli._train import run_demo

    run_demo()


class _TrainCommand(TyperCommand):
    """``train``, whose help is click's plain text under 100 columns: rich's table of four columns
    (train's option names are up to 30 characters) left its help a word a line at 80."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if shutil.get_terminal_size().columns < 100:
            self.rich_markup_mode = None
            for param in self.params:  # plain text: no rich escapes, long choice lists in the help column
                if getattr(param, "help", None):
                    param.help = param.help.replace("\\[", "[")
                    shown = param.display_type_rich(ctx=ctx) or ""  # a choice's is "<a|b|c>"
                    choices = shown.strip("<>").split("|")
                    if len(shown) > 28 and len(choices) > 1:
                        if not all(c in param.help for c in choices):
                            param.help += f" One of: {', '.join(choices)}."
                        param.metavar = str(param.name).upper()
        super().format_help(ctx, formatter)


def _register_train_command(args: Sequence[str]) -> None:
    """(Re)build ``train`` from the model registry, so that every registered ranker is a choice.
    Its options are generated from the rankers' classes (importing scikit-learn), so only a
    command line that names ``train`` gets them; any other has its name and help alone."""
    from ranklearn.cli._train import TRAIN_HELP, build_train_command

    app.registered_commands = [c for c in app.registered_commands if c.name != "train"]
    if "train" in args:
        app.command(name="train", cls=_TrainCommand)(build_train_command())
    else:
        app.command(name="train", help=TRAIN_HELP)(lambda: None)


def _typed_value(args: list[str], opts: list[str]) -> str | None:
    """The last value given on the command line for an option (``--leaves abc``, ``--leaves=abc``)."""
    value = None
    for i, arg in enumerate(args):
        for opt in opts:
            if arg == opt and i + 1 < len(args):
                value = args[i + 1]
            elif arg.startswith(f"{opt}="):
                value = arg[len(opt) + 1 :]
    return value


def _unknown_option(exc: typer.TyperException, args: list[str]) -> str:
    """"No such option", with ranklearn's name when the option is another tool's (RankLib's
    ``-tree``, LightGBM's ``--min-child-samples``), else the nearest options by their names."""
    from ranklearn.foreign_names import NAMES, hint, nearest
    from ranklearn.registry import REGISTRY, option_flag

    typed = exc.option_name
    if not typed.startswith("--"):  # click reads RankLib's "-tree" as "-t" with "ree"
        typed = next((a for a in args if a.startswith(typed) and not a.startswith("--")), typed).split("=")[0]
    model = REGISTRY.get(str(_typed_value(args, ["--model"])))
    params = {row.ours for row in NAMES if row.ours and not row.ours.startswith(("-", "fit(")) and " " not in row.ours}
    options = {param: flag for param in params if (flag := option_flag(param)) is not None}
    said = hint(typed, (), options=options)
    param = typed.lstrip("-").replace("-", "_")
    if said is None and model is not None and param in model.load_class()().get_params():
        # the Python name of a parameter with a short flag (--num-leaves), or of none (--verbose)
        flag = option_flag(param)
        said = f"ranklearn calls it {flag}" if flag else f"ranklearn calls it the Python parameter {param} (no command-line option)"
    if said is not None:
        return f"No such option: {typed}: {said}"
    ctx = getattr(exc, "ctx", None)
    flags = [o for p in (ctx.command.params if ctx is not None else []) for o in p.opts if o.startswith("--")]
    near = nearest(typed, flags)
    return f"No such option: {typed}" + (f" (nearest: {', '.join(near)})" if near else "")


def _usage_line(exc: typer.TyperException, args: list[str]) -> str:
    """A usage error (bad, missing or unknown option) as one line, with the help command to run."""
    if type(exc).__name__ == "NoSuchOption":  # typer's own copy of click's class
        text = _unknown_option(exc, args)
    else:
        text = " ".join(exc.format_message().replace("Value error, ", "").split()).rstrip(".")
    value = _typed_value(args, getattr(getattr(exc, "param", None), "opts", None) or [])
    if value is not None and getattr(exc, "param", None) is not None:  # LightGBM's --objective rank_xendcg
        from ranklearn.foreign_names import value_hint

        said = value_hint(str(exc.param.name), value)
        text += f": {said}" if said else ""
    if value is not None and repr(value) not in text:  # "Input should be a valid integer" names no value
        text += f" (got {value!r})"
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "ranklearn"
    if command == "ranklearn" and args and args[0] in typer.main.get_command(app).commands:  # type: ignore[attr-defined]
        command = f"ranklearn {args[0]}"  # an option's missing value is reported without its command
    return f"{text} (see '{command} --help')"


def _say_compiling() -> None:
    typer.echo(
        "ranklearn: compiling kernels, first run only (up to a minute; later runs start at once; "
        "'ranklearn warm-up' does it ahead)",
        err=True,
    )


class _Markdown:
    """rich's ``Markdown``, imported when one is made (never, in ``rich_markup_mode="rich"``)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from rich.markdown import Markdown

        return Markdown(*args, **kwargs)


def _import_help_formatter() -> None:
    """Import typer's help formatter (``typer.rich_utils``) without ``rich.markdown``, which it
    imports for ``rich_markup_mode="markdown"`` only: markdown-it and its regular expressions are
    about a fifth of ``ranklearn --help``. The formatter gets :class:`_Markdown`; a later
    ``import rich.markdown`` gets the real module."""
    if "typer.rich_utils" in sys.modules or "rich.markdown" in sys.modules:
        return
    sys.modules["rich.markdown"] = stand_in = ModuleType("rich.markdown")
    stand_in.Markdown = _Markdown  # type: ignore[attr-defined]
    try:
        import typer.rich_utils  # noqa: F401
    finally:
        del sys.modules["rich.markdown"]


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``ranklearn`` console script: exit 0, 2 (one line on stderr) or 130."""
    args = list(sys.argv[1:] if argv is None else argv) or ["--help"]
    if "--help" in args or "-h" in args:
        _import_help_formatter()
    # At a terminal, at once. In a pipe or a log (a notebook, CI) someone may be waiting too, but
    # a script may read an error there as the only line: there the note waits for the first kernel
    # after the data loader's, when the input files have been read and checked.
    on_first_compile(_say_compiling, ignore=() if sys.stderr.isatty() else ("ranklearn.data.",))
    shown_warnings = warnings.showwarning
    # a library's warning (RankLib export of a model that learned NaN, RankBoost without pairs...)
    # is one line, as the command line's own, not Python's "file:line: UserWarning" and source line
    warnings.showwarning = lambda message, *_args, **_kwargs: C.warn(str(message))
    try:
        _register_train_command(args)
        code = app(args=args, prog_name="ranklearn", standalone_mode=False)
    except typer.TyperException as exc:  # click's usage errors; standalone mode would print a panel
        typer.echo(f"ranklearn: error: {_usage_line(exc, args)}", err=True)
        sys.exit(2)
    except BrokenPipeError:  # e.g. `ranklearn predict --out - | head`: the reader has gone
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except USER_ERRORS as exc:
        typer.echo(f"ranklearn: error: {C.one_line(exc)}", err=True)
        sys.exit(2)
    except MemoryError as exc:  # e.g. data far too large for this machine: say so in one line
        typer.echo(f"ranklearn: error: out of memory ({C.one_line(exc)})", err=True)
        sys.exit(2)
    except typer.Abort:  # end of input at a prompt
        typer.echo("ranklearn: aborted", err=True)
        sys.exit(1)
    except C.Interrupted as exc:  # a command's Ctrl-C: what it kept
        typer.echo(f"ranklearn: {exc}", err=True)
        sys.exit(130)
    except KeyboardInterrupt:  # e.g. while train's options are built (its libraries load), before typer runs
        typer.echo("ranklearn: interrupted", err=True)
        sys.exit(130)
    finally:
        warnings.showwarning = shown_warnings
    if code == 130:  # typer's silent Exit(130) for a Ctrl-C outside a command's own handling
        typer.echo("ranklearn: interrupted", err=True)
    sys.exit(code if isinstance(code, int) else 0)
