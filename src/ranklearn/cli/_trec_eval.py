"""``ranklearn trec-eval``: trec_eval's command line and its output, line for line.

The rules are trec_eval 9.0.8's (the release pytrec_eval embeds): the queries evaluated are
those of the run that the qrels judge, in byte order of their ids; ``-q`` prints each
query's values (``measure\\tqid\\tvalue``) before the summary (qid ``all``); counts are
summed and printed as integers, the other measures averaged and printed with four decimals,
gm_map and gm_bpref averaged geometrically; ``-c`` averages over every query of the qrels (a
query the run lacks counts 0, and log(1e-5) for the geometric means) and counts num_rel over
the whole qrels (grades > 0). ``-Z`` prints each query's value as a z-score against the
``qid measure mean stddev`` lines of a file (-1000000 where a line is missing). ``-R prefs``,
``qrels_prefs`` and ``qrels_jg`` read trec_eval's other judgement formats
(:mod:`ranklearn.io.trec_prefs`) for the measures computed from them
(:mod:`ranklearn.metrics.trec.preferences`, :mod:`ranklearn.metrics.trec.judgment_groups`);
any other measure asked with them is an error, as in trec_eval.
"""

from __future__ import annotations

import gc
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ranklearn.exceptions import DataFormatError

if TYPE_CHECKING:  # numpy only where the command runs: `ranklearn --help` builds this command
    import numpy as np

    from ranklearn.metrics.trec import Request

#: trec_eval's value for a z-score without its mean and deviation.
MISSING_ZSCORE = -1000000.0
#: log of the floor of the geometric means: a query missing under -c.
_LOG_MIN_GEO = math.log(0.00001)


def _read_zscores(path: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """``(qid, measure) -> (mean, stddev)`` from ``qid measure mean stddev`` lines."""
    from ranklearn._text import plain_float

    table: dict[tuple[str, str], tuple[float, float]] = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 4:
                raise DataFormatError(f"expected 4 columns 'qid measure mean stddev', got {len(fields)}",
                                      path=path, line=number)  # fmt: skip
            mean, stddev = plain_float(fields[2]), plain_float(fields[3])
            if not (math.isfinite(mean) and math.isfinite(stddev)):
                raise DataFormatError("mean and stddev must be finite numbers", path=path, line=number)
            table.setdefault((fields[0], fields[1]), (mean, stddev))
    return table


def _zscore(value: float, entry: tuple[float, float] | None) -> float:
    if entry is None:
        return MISSING_ZSCORE
    mean, stddev = entry
    if stddev:
        return (value - mean) / stddev
    return 0.0 if value == mean else MISSING_ZSCORE


def _fixed(value: float) -> str:
    """C's ``%6.4f``: a NaN with its sign bit set prints as ``-nan`` (glibc)."""
    if math.isnan(value):
        return ("-nan" if math.copysign(1.0, value) < 0 else "nan").rjust(6)
    return f"{value:6.4f}"


def _relstring(rels: np.ndarray, length: float) -> str:
    """trec_eval's relstring: one character per rank (grade, ``-`` absent, ``.`` unjudged, ``>`` above 9)."""
    chars = []
    for r in rels[: max(int(length), 0)]:
        chars.append(">" if r > 9 else str(r) if r >= 0 else "-" if r == -1 else "." if r == -2 else "<")
    return "".join(chars)


def trec_eval_lines(
    qrels_path: Path,
    run_path: Path,
    measures: Sequence[str],
    *,
    per_query: bool = False,
    complete: bool = False,
    summary: bool = True,
    judged_only: bool = False,
    relevance_level: int = 1,
    max_docs: int | None = None,
    n_docs: int = 0,
    zscores: Path | None = None,
    rel_format: str = "qrels",
) -> Iterator[str]:
    """trec_eval's output lines (without newlines) for the options of ``ranklearn trec-eval``.

    Raises
    ------
    ValueError, DataFormatError
        An illegal measure or parameter, malformed files (naming the line), a document listed
        twice for a query, or no query both judged and retrieved.
    """
    from ranklearn.io.trec_stream import read_judged_rankings
    from ranklearn.metrics.trec import evaluate_rels, expand
    from ranklearn.metrics.trec import measures as M

    requests = expand(list(measures) or ["official"])
    if max_docs is not None and max_docs < 0:
        raise ValueError(f"-M must be >= 0, got {max_docs}")
    _check_formats(requests, rel_format)
    z_table = _read_zscores(zscores) if zscores is not None else None
    if rel_format == "qrels":
        ranked, runid, qrels = read_judged_rankings(qrels_path, run_path, max_docs=max_docs, judged_only=judged_only)
        ids, n_judged = ranked.query_ids, len(qrels)
        values = evaluate_rels(ranked.rels, ranked.ptr, ranked.levels, requests, relevance_level=relevance_level,
                               n_docs=n_docs)  # fmt: skip
    else:
        ids, values, runid, n_judged = _other_format_values(qrels_path, run_path, requests, rel_format, max_docs=max_docs,
                                                            judged_only=judged_only, relevance_level=relevance_level)  # fmt: skip
    columns = [name for r in requests if r.spec.code != M.C_NONE for name in r.columns]
    if z_table is not None:
        for q, qid in enumerate(ids):
            values[q] = [_zscore(v, z_table.get((qid, name))) for v, name in zip(values[q], columns)]
    z = "Z" if z_table is not None else ""
    count_format = "{}{:<22}\t{}\t{}"

    def line(kind: str, name: str, qid: str, value: float) -> str:
        if kind == M.COUNT and not z:
            return count_format.format(z, name, qid, int(value))
        return f"{z}{name:<22}\t{qid}\t{_fixed(value)}"

    if per_query:
        for q, qid in enumerate(ids):
            col = 0
            for request in requests:
                kind = request.spec.kind
                if kind == M.RELSTRING:
                    rels = ranked.rels[ranked.ptr[q] : ranked.ptr[q + 1]]
                    yield f"{request.columns[0]:<22}\t{qid}\t'{_relstring(rels, request.values[0])}'"
                if request.spec.code == M.C_NONE:
                    continue
                for name in request.columns:
                    if kind != M.GEOMETRIC:
                        yield line(kind, name, qid, values[q, col])
                    col += 1
    if not summary:
        return
    n_queries = n_judged if complete else len(ids)
    totals = values.sum(axis=0)
    col = 0
    for request in requests:
        kind = request.spec.kind
        if kind == M.RUNID:
            yield f"{'runid':<22}\tall\t{runid}"
        elif kind == M.NUM_Q:
            yield line(M.COUNT, "num_q", "all", n_queries)
        if request.spec.code == M.C_NONE:
            continue
        for name in request.columns:
            total = float(totals[col])
            if kind == M.COUNT:
                if complete and request.spec.code == M.C_NUM_REL:  # trec_eval counts grades > 0 here, whatever -l
                    total = float(sum(int((grades > 0).sum()) for grades in qrels.values()))
                yield line(kind, name, "all", total)
            elif kind == M.GEOMETRIC:
                total += (n_queries - len(ids)) * _LOG_MIN_GEO
                yield line(kind, name, "all", math.exp(total / n_queries))
            else:
                yield line(kind, name, "all", total / n_queries)
            col += 1


def _check_formats(requests: list[Request], rel_format: str) -> None:
    """Each measure against the judgement format (trec_eval: "Can't calculate measure")."""
    from ranklearn.metrics.trec import measures as M

    family = {"qrels": M.QRELS, "prefs": M.PREFS, "qrels_prefs": M.PREFS, "qrels_jg": M.QRELS_JG}.get(rel_format)
    if family is None:
        raise ValueError(f"-R {rel_format!r} is not a judgement format: expected one of qrels, prefs, qrels_prefs, qrels_jg")
    for request in requests:
        needs = request.spec.rel_format
        if needs not in (M.ANY, family):
            formats = {M.QRELS: "qrels", M.PREFS: "prefs or qrels_prefs", M.QRELS_JG: "qrels_jg"}[needs]
            raise ValueError(f"measure {request.spec.name!r} needs -R {formats} judgements, not -R {rel_format}")


def _other_format_values(
    rel_path: Path, run_path: Path, requests: list[Request], rel_format: str, *, max_docs: int | None, judged_only: bool,
    relevance_level: int,
) -> tuple[list[str], np.ndarray, str, int]:
    """(query ids, values, runid, judged queries) of the prefs/qrels_prefs/qrels_jg measures:
    each query of the run that the judgements have, in byte order of the ids."""
    import numpy as np

    from ranklearn.io.trec_prefs import read_prefs, read_qrels_jg
    from ranklearn.io.trec_stream import read_rankings
    from ranklearn.metrics.trec import measures as M
    from ranklearn.metrics.trec import preferences as P
    from ranklearn.metrics.trec.judgment_groups import avgjg_values

    judged = read_qrels_jg(rel_path) if rel_format == "qrels_jg" else read_prefs(rel_path, rel_format=rel_format)
    # trec_eval's order: scores (C floats) descending, equal scores by docno, ascending for
    # the prefs measures and descending for the others; the run streamed, each query's
    # docnos made when its turn comes
    ids, ranked, runid = read_rankings(run_path, judged.keys(), max_docs=max_docs, ids_ascending=rel_format != "qrels_jg")
    if not ids:
        raise DataFormatError("no queries with both results and relevance info", path=run_path)
    computed = [r for r in requests if r.spec.code != M.C_NONE]
    if rel_format == "qrels_jg":
        values = avgjg_values(ranked, [judged[q] for q in ids], computed, relevance_level=relevance_level,
                              judged_only=judged_only)  # fmt: skip
    else:
        names = [name for name, _ in P.MEASURES]
        take = [names.index(r.spec.name) for r in computed]
        values = np.zeros((len(ids), len(take)))
        for q, qid in enumerate(ids):
            counts, pairs, n_judged_ret = P.prefs_counts(ranked[q], judged[qid], qid, str(rel_path))
            values[q] = P.prefs_values(counts, pairs, n_judged_ret)[take]
    return ids, values, runid, len(judged)


def print_trec_eval(lines: Iterator[str]) -> None:
    """Write the lines to standard output."""
    out = sys.stdout
    for text in lines:
        out.write(text + "\n")


def trec_eval(
    qrels: Path = typer.Argument(..., help="Qrels file: 'qid iter docid grade' lines (# lines are comments)."),
    run: Path = typer.Argument(
        ..., help="Run file: 'qid Q0 docid rank score tag' lines (more columns ignored; - reads stdin)."
    ),
    measure: list[str] = typer.Option(
        [], "-m", "--measure",
        help="Measure, measure.params or nickname (official, all_trec, set); repeatable. Default: official.",
    ),
    query_eval_wanted: bool = typer.Option(False, "-q", "--query_eval_wanted", help="Also print each query's values."),
    complete: bool = typer.Option(
        False, "-c", "--complete_rel_info_wanted",
        help="Average over every query of the qrels (a query missing from the run counts 0).",
    ),
    no_summary: bool = typer.Option(False, "-n", "--nosummary", help="Print no summary (the 'all' lines)."),
    judged_only: bool = typer.Option(False, "-J", "--Judged_docs_only", help="Drop unjudged documents from the run first."),
    level: int = typer.Option(1, "-l", "--level_for_rel", metavar="N", help="Smallest grade that is relevant (binary measures)."),
    max_docs: int | None = typer.Option(None, "-M", "--Max_retrieved_per_topic", metavar="N", help="Evaluate only each query's top N."),
    n_docs: int = typer.Option(0, "-N", "--Number_docs_in_coll", metavar="N", help="Documents in the collection (utility)."),
    zscores: Path | None = typer.Option(
        None, "-Z", "--Zscore", metavar="FILE", help="Print z-scores against 'qid measure mean stddev' lines of FILE."
    ),
    rel_format: str = typer.Option(
        "qrels", "-R", "--Rel_info_format", metavar="FORMAT",
        help="Judgements format: qrels, prefs ('qid jg jsg docno rel_level'), qrels_prefs or qrels_jg (iter = judgment group).",
    ),
    results_format: str = typer.Option(
        "trec_results", "-T", "--Results_format", metavar="FORMAT", help="Run format: trec_results."
    ),
) -> None:
    """Evaluate a TREC run as trec_eval does: same options, same output line for line."""
    if results_format != "trec_results":
        raise ValueError(f"-T {results_format!r} is not supported: only 'trec_results'")
    # no garbage collection meanwhile: the imports and kernel loads make many objects and no
    # cycles worth a pass (a tenth of a second)
    collecting = gc.isenabled()
    gc.disable()
    try:
        print_trec_eval(
            trec_eval_lines(qrels, run, measure, per_query=query_eval_wanted, complete=complete,
                            summary=not no_summary, judged_only=judged_only, relevance_level=level,
                            max_docs=max_docs, n_docs=n_docs, zscores=zscores, rel_format=rel_format)  # fmt: skip
        )
    finally:
        if collecting:
            gc.enable()
