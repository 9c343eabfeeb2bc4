"""Bodies of ``evaluate --qrels/--run``, ``compare`` and ``predict --format trec``.

Per-query metric values come from either a ranking file with score files (one score per
row) or TREC qrels with runs; both give ``{system: {metric: per-query values}}`` over the
same queries, which ``evaluate`` prints and ``compare`` tests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from rich import box
from rich.table import Table

from ranklearn.cli import _common as C
from ranklearn.exceptions import DataFormatError

if TYPE_CHECKING:
    from ranklearn.data import RankingDataset
    from ranklearn.metrics import Metric
    from ranklearn.stats import Comparison


def _as_options(message: str) -> str:
    """A metric's error in the words of the command line: ``max_grade`` is ``--max-grade``,
    ``relevance_level`` ``--relevance-level``."""
    message = re.sub(r"\brelevance_level\b", "--relevance-level", message)
    return re.sub(r"\bmax_grade(=| )", "--max-grade ", message.replace("pass max_grade= ", "give --max-grade "))


def build_metrics(specs: Sequence[str], conventions: dict[str, object]) -> list[Metric]:
    """Metrics from specs and the convention options given (None = the preset's or default value)."""
    from ranklearn.metrics import get_metric

    try:
        return [get_metric(spec, **conventions) for spec in specs]  # type: ignore[arg-type]
    except ValueError as exc:
        raise ValueError(_as_options(str(exc))) from None


def _names(paths: Sequence[Path]) -> list[str]:
    """System names for the table: file names, or the paths where names repeat.

    Raises
    ------
    ValueError
        If a path is given twice (one system would silently replace the other).
    """
    names = [p.name for p in paths]
    if len(set(names)) == len(names):
        return names
    full = [str(p) for p in paths]
    twice = next((f for i, f in enumerate(full) if f in full[:i]), None)
    if twice is not None:
        raise ValueError(f"{twice} is given twice; give each system once")
    return full


def values_from_scores(
    data: Path, score_files: Sequence[Path], metrics: Sequence[Metric], *, regroup: bool = True
) -> tuple[list[object], dict[str, dict[str, np.ndarray]]]:
    """Per-query values of every score file on a ranking file: (query ids as the loader keeps them, system -> metric -> values).

    Score files follow the file's rows; when the loader gathered a reappearing qid, they are
    put in the same order.
    """
    ds, order = C.load_data(data, regroup=regroup, return_order=True,
                            positions_unused="the scores are evaluated on the file's labels")  # fmt: skip
    scores = {}
    for name, path in zip(_names(score_files), score_files):
        s = C.read_scores(path, ds.n_samples, data)
        scores[name] = s if order is None else s[order]
    return ds.query_ids.tolist(), values_from_arrays(ds, scores, metrics, data)


def values_from_arrays(
    ds: RankingDataset, scores: dict[str, np.ndarray], metrics: Sequence[Metric], data: Path
) -> dict[str, dict[str, np.ndarray]]:
    """Per-query values of every system's scores (in the rows' order of ``ds``): system -> metric -> values.

    ``data`` is the file ``ds`` was read from, named in errors and read for document ids
    under ``ties="docid"``.
    """
    docids = docids_for(ds, metrics, data)
    C.check_labels_nonnegative(ds, data)  # by its line here; the metrics would name a row
    out = {}
    for name, s in scores.items():
        try:
            out[name] = {m.name: m.per_query(ds.y, s, ds.ptr, docids=docids) for m in metrics}
        except ValueError as exc:  # labels the metrics cannot take (too large for the gain): name the file
            raise DataFormatError(_as_options(str(exc)), path=C.shown(data)) from None
    return out


def docids_for(ds: RankingDataset, metrics: Sequence[Metric], data: Path) -> np.ndarray | None:
    """The document ids of the rows of ``ds`` (its ``#docid = ...`` comments) where a metric
    orders ties by them (``ties="docid"``), else None."""
    from ranklearn.io.trec import docids_from_comments

    if not any(m.ties == "docid" for m in metrics):
        return None
    return docids_from_comments(ds.comments, path=C.shown(data), lines=ds.lines)


def values_from_trec(
    qrels_path: Path, run_files: Sequence[Path], metrics: Sequence[Metric], *, queries: str
) -> tuple[str, list[str], dict[str, dict[str, np.ndarray]]]:
    """Per-query values of TREC runs against qrels: (source line, query ids, system -> metric -> values).

    The query ids are every judged query, in qrels order. With ``queries="both"`` a run is
    scored on the judged queries it retrieved, as trec_eval scores each run on its own: its
    value for a judged query it lacks is NaN (not scored; ``compare`` then tests the queries
    every run has). With ``"qrels"`` such a query is an empty ranking (trec_eval ``-c``). The
    source line names the qrels file and the runs' queries that have no judgments (never
    scored, as in trec_eval).
    """
    from ranklearn.io.trec import align, read_qrels, read_run

    for path in (qrels_path, *run_files):
        if path.is_dir():
            raise IsADirectoryError(21, "is a directory, not a file", str(path))
    qrels = read_qrels(qrels_path, negative="keep")  # align reads them as 0, judged -1 (trec_eval's bpref, infAP)
    runs = [read_run(p) for p in run_files]
    for path, held in ((qrels_path, qrels), *((p, run.scores) for p, run in zip(run_files, runs))):
        if not held:  # say which file is empty rather than that nothing matched
            raise DataFormatError("has no lines to evaluate (an empty file?)", path=path)
    query_ids, arrays = align(qrels, runs, queries="qrels")
    out = {}
    for name, path, a in zip(_names(run_files), run_files, arrays):
        if queries == "both" and not a.retrieved.any():
            raise DataFormatError(f"no query of this run is judged in {qrels_path}", path=path)
        try:
            out[name] = {
                m.name: m.per_query(a.y, a.scores, a.ptr, docids=a.docids, retrieved=a.retrieved, judged=a.judged)
                for m in metrics
            }
        except ValueError as exc:
            raise DataFormatError(str(exc), path=qrels_path) from None
        if queries == "both":
            for values in out[name].values():
                values[a.retrieved == 0] = np.nan
    unjudged = {q for run in runs for q in run.scores if q not in qrels}
    source = str(qrels_path) + (
        f" ({len(unjudged)} {'query' if len(unjudged) == 1 else 'queries'} of the "
        f"{'run' if len(runs) == 1 else 'runs'} not judged there: not scored)" if unjudged else ""
    )  # fmt: skip
    return source, query_ids, out


def print_evaluation(
    query_ids: Sequence[object],
    values: dict[str, dict[str, np.ndarray]],
    metrics: Sequence[Metric],
    *,
    source: str,
    per_query: bool,
    as_json: bool,
) -> None:
    """The table (or JSON) of ``evaluate``: one row per system, or per query with ``--per-query``.

    With one system the JSON is ``{"<metric>": mean, ...}`` (plus ``"per_query"``); with
    several it is ``{"<system>": {...}, ...}``.
    """
    from ranklearn.metrics import means_scope

    summary = {m.name: m.summarize for m in metrics}  # the mean; geometric for gm_map, gm_bpref
    means = {name: {m: summary[m](v) for m, v in by_metric.items()} for name, by_metric in values.items()}
    names = [m.name for m in metrics]
    if as_json:
        objects = {}
        for system, by_metric in values.items():
            obj: dict[str, object] = {m: C.json_number(v) for m, v in means[system].items()}
            if per_query:
                obj["per_query"] = [
                    {"qid": q, **{m: C.json_number(v[i]) for m, v in by_metric.items()}}
                    for i, q in enumerate(query_ids)
                ]
            objects[system] = obj
        C.print_json(next(iter(objects.values())) if len(objects) == 1 else objects)
        return
    for system, by_metric in values.items():
        if per_query:
            rows = {str(q): {m: v[i] for m, v in by_metric.items()} for i, q in enumerate(query_ids)}
            if len(values) > 1:
                C.console.print(f"{system}:")
            C.console.print(C.results_table(rows, names))
    C.console.print(f"{source}: {means_scope(values, len(query_ids))}")
    C.console.print(C.results_table(means, names))
    C.console.print(C.conventions_line(metrics))


def run_compare(
    query_ids: Sequence[object],
    values: dict[str, dict[str, np.ndarray]],
    metrics: Sequence[Metric],
    *,
    permutations: int,
    seed: int,
    confidence: float,
    per_query: bool,
    as_json: bool,
) -> None:
    """Test every system against the first one; print a table per metric, or JSON."""
    result = comparison(values, metrics, permutations=permutations, seed=seed, confidence=confidence)
    by_metric = {m.name: {system: values[system][m.name] for system in values} for m in metrics}
    if as_json:
        out = result.to_dict()
        out["seed"] = seed
        out["conventions"] = {m.name: m.conventions for m in metrics}
        if per_query:
            out["per_query"] = [
                {"qid": q, **{m: {s: C.json_number(v[s][i]) for s in v} for m, v in by_metric.items()}}
                for i, q in enumerate(query_ids)
            ]
        C.print_json(_json_safe(out))
        return
    for metric in metrics:
        C.console.print(_compare_table(result, metric.name, len(query_ids)))
    C.console.print(C.conventions_line(metrics))
    C.console.print(result.note(seed))


def check_compare_options(permutations: int, confidence: float) -> None:
    """Refuse ``--permutations`` below 1 and a ``--confidence`` outside (0, 1), naming the option."""
    if permutations < 1:
        raise ValueError(f"--permutations must be >= 1, got {permutations}")
    if not 0 < confidence < 1:
        raise ValueError(f"--confidence must be between 0 and 1, got {confidence}")


def comparison(
    values: dict[str, dict[str, np.ndarray]], metrics: Sequence[Metric], *, permutations: int, seed: int, confidence: float
) -> Comparison:
    """``compare``'s tests of every system against the first one (options checked as the CLI names them)."""
    from ranklearn.stats import compare

    if len(values) < 2:
        raise ValueError("compare needs at least two systems (give --scores or --run twice or more)")
    check_compare_options(permutations, confidence)
    by_metric = {m.name: {system: values[system][m.name] for system in values} for m in metrics}
    return compare(by_metric, n_permutations=permutations, n_resamples=permutations, confidence=confidence, seed=seed)


def _compare_table(result: Comparison, metric: str, n_queries: int) -> Table:
    columns, cells = result.table(metric)
    # blank rules between columns, no padding: the table fits 80 columns
    table = Table(title=result.title(metric, n_queries), box=box.SIMPLE_HEAD, padding=0, show_edge=False)
    table.add_column(columns[0], min_width=min(24, max(len(s) for s in result.systems) + 7))
    for column in columns[1:]:
        table.add_column(column, justify="right", no_wrap=True)
    for row in cells:
        table.add_row(*row)
    return table


def _json_safe(obj: object) -> object:
    """NaN (no p-value) as null, through nested dicts and lists."""
    if isinstance(obj, float):
        return C.json_number(obj)
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_json_safe(v) for v in obj]
    return obj


def trec_run_lines(
    data: Path, ds: RankingDataset, scores: np.ndarray, tag: str, docid_field: str
) -> list[str]:
    """Lines of a TREC run for the rows of a ranking file ``ds`` read from ``data``, document
    ids from its comments (all made before any is written)."""
    from ranklearn.io.trec import docids_from_comments, run_lines

    docids = docids_from_comments(ds.comments, docid_field, path=C.shown(data), lines=ds.lines)
    query_ids = np.repeat(ds.query_ids, ds.query_sizes)
    try:
        return list(run_lines(query_ids, docids, scores, tag))
    except ValueError as exc:  # e.g. a field that is not an id: say where the ids came from
        raise DataFormatError(
            f"{exc} (document ids from the '{docid_field}' field, --docid-field)", path=C.shown(data)
        ) from None
