"""Body of ``ranklearn explain``: one query's ranking explained by feature contributions
(:mod:`ranklearn.explain`), as a terminal table, JSON, or a self-contained HTML page."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from rich.table import Table

from ranklearn.cli import _common as C
from ranklearn.explain import document_ids, method, shares_text

if TYPE_CHECKING:
    from ranklearn.explain import PairExplanation, QueryExplanation


def query_rows(ds, qid: str, data: Path) -> slice:
    """The rows of query ``qid`` (as written in the file).

    Raises
    ------
    ValueError
        When the file has no such query.
    """
    ids = [str(q) for q in ds.query_ids.tolist()]
    if qid not in ids:
        raise ValueError(f"--query {qid!r} is not a query of {C.shown(data)}")
    q = ids.index(qid)
    return slice(int(ds.ptr[q]), int(ds.ptr[q + 1]))


def _pair_table(pe: PairExplanation, title: str, n: int) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("feature")
    table.add_column("contribution", justify="right")
    for name, value in pe.top(n):
        table.add_row(name, f"{value:+.6g}")
    rest = pe.contributions.sum() - sum(v for _, v in pe.top(n))
    table.add_row("(all others)", f"{rest:+.6g}")
    table.add_row("= score difference", f"{pe.difference:+.6g}")
    return table


def _query_table(ex: QueryExplanation, n_docs: int, n: int) -> Table:
    table = Table(title=f"documents by score (query mean {ex.scores.mean():.6g}); features: share of score - mean",
                  title_justify="left")  # fmt: skip
    for col, justify in (("rank", "right"), ("doc", "left"), ("score", "right"), ("- mean", "right"),
                         ("moved by", "left")):  # fmt: skip
        table.add_column(col, justify=justify)
    mean = ex.scores.mean()
    for rank, i in enumerate(ex.order[:n_docs]):
        table.add_row(str(rank + 1), ex.doc_ids[i], f"{ex.scores[i]:.6g}", f"{ex.scores[i] - mean:+.4g}",
                      shares_text(ex.document(int(i), n)))  # fmt: skip
    return table


def _pairs_table(ex: QueryExplanation, n: int) -> Table:
    table = Table(title="adjacent pairs: what put each document above the next", title_justify="left")
    for col, justify in (("ranks", "right"), ("above", "left"), ("below", "left"), ("gap", "right"),
                         ("decided by", "left")):  # fmt: skip
        table.add_column(col, justify=justify)
    for p, pe in enumerate(ex.pairs):
        table.add_row(f"{p + 1}-{p + 2}", ex.doc_ids[ex.order[p]], ex.doc_ids[ex.order[p + 1]],
                      f"{pe.difference:+.4g}", shares_text(pe.top(n)))  # fmt: skip
    return table


def _page(model_path: Path, qid: str, model, X: np.ndarray, ex: QueryExplanation, pe: PairExplanation | None,
          pair: list[str] | None, n: int) -> str:  # fmt: skip
    from ranklearn import plot
    from ranklearn.report import figure, page, query_tables

    phi = model.predict_contributions(X)
    top_doc = int(ex.order[0])
    parts = [
        f"<h1>ranklearn explain: query {html.escape(qid)}</h1>",
        f"<p>model <code>{html.escape(str(model_path))}</code> ({html.escape(type(model).__name__)}); "
        f"{html.escape(method(model))}; largest residual {ex.residual:.2g}.</p>",
    ]
    if pe is not None:
        parts.append(figure(plot.pair(pe, top=n, labels=(pair[0], pair[1])),
                               f"Why {pair[0]} scores {'above' if pe.difference >= 0 else 'below'} {pair[1]}: "
                               "each feature's share of the score difference."))  # fmt: skip
    parts.append(figure(plot.waterfall(phi[top_doc], ex.names, top=n, title=f"{ex.doc_ids[top_doc]} (rank 1)"),
                          "Why this document is first: from the expected score, each feature's contribution."))
    parts += query_tables(ex, qid, n)
    return page(f"ranklearn explain: query {qid}", "\n".join(parts))


def run_explain(model_path: Path, data: Path, qid: str, *, pair: list[str] | None, top: int, n_features: int,
                as_json: bool, out: Path | None, docid_field: str) -> None:  # fmt: skip
    """Load, explain, print or write (see the ``explain`` command)."""
    from ranklearn import explain
    from ranklearn.io import load_model
    from ranklearn.exceptions import FeatureValueError

    if top < 1 or n_features < 1:
        raise ValueError(f"--top and --features must be >= 1, got {top} and {n_features}")
    if as_json and out is not None:
        raise ValueError("--json and --out are two outputs: give one")
    if out is not None:
        C.check_output_path(out, model_path, data)
    model = load_model(model_path)
    n = model.n_features_in_
    ds = C.load_data_as_wide(data, n, f"the model's features ({model_path} was trained on {n})",
                             positions_unused="explain reads the features only")  # fmt: skip
    rows = query_rows(ds, qid, data)
    X = np.asarray(ds.X[rows], dtype=np.float32)
    ids = document_ids(ds, rows, docid_field)
    try:
        ex = explain.query(model, X, top=top, doc_ids=ids)
        pe = None
        if pair is not None:
            a, b = (_doc_index(ids, d, qid) for d in pair)
            pe = explain.pair(model, X[a], X[b])
    except FeatureValueError as exc:
        raise C.feature_value_error(exc, ds, data, model) from None
    if as_json:
        obj = {"query": qid, "method": method(model), **ex.to_dict(n_features)}
        if pe is not None:
            obj["pair"] = {"a": pair[0], "b": pair[1], **pe.to_dict(n_features)}
        C.print_json(obj)
        return
    if out is not None:
        from ranklearn._files import write_output

        try:
            page = _page(model_path, qid, model, X, ex, pe, pair, n_features)
        except ImportError as exc:  # matplotlib (the plot extra)
            raise ValueError(f"explain --out is not available here ({exc})") from None
        write_output(out, page.encode("utf-8"))
        C.report(f"wrote {out}", out)
        return
    C.console.print(f"query {qid}: {len(ids)} documents; {method(model)}; largest residual {ex.residual:.2g}")
    if pe is not None:
        verb = "above" if pe.difference >= 0 else "below"
        C.console.print(_pair_table(pe, f"why {pair[0]} ({pe.score_a:.6g}) is {verb} {pair[1]} ({pe.score_b:.6g})",
                                    n_features))  # fmt: skip
        return
    C.console.print(_query_table(ex, len(ex.pairs) + 1, n_features))
    if ex.pairs:
        C.console.print(_pairs_table(ex, n_features))


def _doc_index(ids: list[str], doc: str, qid: str) -> int:
    if doc not in ids:
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise ValueError(f"--pair: no document {doc!r} in query {qid} (its documents: {shown})")
    return ids.index(doc)


__all__ = ["query_rows", "run_explain"]
