"""trec_eval's measures as :class:`~ranklearn.metrics.Metric` objects (``get_metric("bpref")``).

A :class:`TrecMetric` is one output value of one trec_eval measure (``success@5`` is
``success_5``, ``iprec@0.3`` is ``iprec_at_recall_0.30``) computed by the kernels of
:mod:`ranklearn.metrics.trec` on the metric arrays: each query's rows ranked by score
(``ties="docid"``: equal scores by document id descending, trec_eval's order; ``"stable"``:
input order), grades are the labels truncated to integers (trec_eval reads them with
``atol``) and a document is relevant when its grade is at least ``relevance_level``
(trec_eval's ``-l``, default 1). Rows that ``judged=`` marks 0 are retrieved documents the
qrels do not list, -1 documents they give a negative grade (bpref, infAP and the counts
treat both as trec_eval does; the other measures count them non-relevant). gm_map and
gm_bpref give log(max(value, 1e-5)) per query and
:meth:`TrecMetric.summarize` averages them geometrically, as trec_eval.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ranklearn.metrics._api import Metric, as_c_float, check_inputs, check_retrieved, docid_order, query_mean
from ranklearn.metrics.trec.measures import BY_NAME, GEOMETRIC, evaluate_rels, parse_request
from ranklearn.metrics.trec.counts import NONPOOL, UNJUDGED

#: ranklearn spec name -> (trec_eval measure, what ``@x`` gives: "cutoff", "level", "float" or "").
SPEC_NAMES: dict[str, tuple[str, str]] = {
    "bpref": ("bpref", ""), "gm_bpref": ("gm_bpref", ""), "infap": ("infAP", ""), "gm_map": ("gm_map", ""),
    "rprec": ("Rprec", ""), "r_precision": ("Rprec", ""), "rprec_mult": ("Rprec_mult", "level"),
    "iprec": ("iprec_at_recall", "level"), "11pt": ("11pt_avg", ""), "success": ("success", "cutoff"),
    "hit_rate": ("success", "cutoff"), "relative_p": ("relative_P", "cutoff"), "set_p": ("set_P", ""),
    "set_recall": ("set_recall", ""), "set_relative_p": ("set_relative_P", ""), "set_map": ("set_map", ""),
    "set_f": ("set_F", "float"), "utility": ("utility", ""), "bing": ("binG", ""), "g": ("G", ""),
    "ndcg_rel": ("ndcg_rel", ""), "rndcg": ("Rndcg", ""), "num_ret": ("num_ret", ""), "num_rel": ("num_rel", ""),
    "num_rel_ret": ("num_rel_ret", ""), "num_nonrel_judged_ret": ("num_nonrel_judged_ret", ""),
    "unj": ("unj", "cutoff"), "rbp": ("rbp", "float"), "rbp_resid": ("rbp_resid", "float"),
    "yaap": ("yaap", ""),
}  # fmt: skip
#: Measures whose ``@x`` is required (they have no single default value).
_NEEDS_PARAMETER = {"success", "hit_rate", "relative_p", "iprec", "unj", "rprec_mult"}
_SPEC = re.compile(r"^\s*([a-z0-9_]+)\s*(?:@\s*([0-9.eE+-]+))?\s*$")


@dataclass(frozen=True)
class TrecMetric(Metric):
    """One value of a trec_eval measure; built by :func:`ranklearn.metrics.get_metric`."""

    measure: str = ""
    params: str | None = None
    relevance_level: int = 1
    gain_pairs: tuple[tuple[int, float], ...] = ()
    column: int = field(default=0, repr=False)

    @property
    def uses_max_grade(self) -> bool:
        return False

    @property
    def conventions(self) -> str:
        gains = f", gains {dict(self.gain_pairs)}" if self.gain_pairs else ""
        return (f"trec_eval's {self.measure}, relevant=grade>={self.relevance_level} (grades truncated to integers)"
                f"{gains}, ties={self.ties}")  # fmt: skip

    def kernel_args(self) -> tuple:  # type: ignore[override]
        raise ValueError(f"{self.name} is a trec_eval measure, evaluated only (no ranker optimizes it directly)")

    def per_query(
        self,
        y: ArrayLike,
        scores: ArrayLike,
        ptr: ArrayLike,
        *,
        docids: ArrayLike | None = None,
        retrieved: ArrayLike | None = None,
        judged: ArrayLike | None = None,
    ) -> np.ndarray:
        """Value of the measure on every query (as :meth:`Metric.per_query`; ``judged``: per row,
        1 (True) judged, 0 (False) a retrieved document the qrels do not list, -1 one they give a
        negative grade, as :attr:`ranklearn.io.trec.TrecArrays.judged`). NaN for a query without
        a relevant document under ``empty="skip"``."""
        labels, s, p = check_inputs(y, scores, ptr)
        sizes = np.diff(p)
        n_ret = check_retrieved(retrieved, p)
        pool = np.ones(labels.size, dtype=np.int8) if judged is None else np.asarray(judged).astype(np.int8).ravel()
        if pool.shape != labels.shape:
            raise ValueError(f"judged has {pool.size} values for {labels.size} rows")
        if self.ties == "docid":
            if docids is None:
                raise ValueError(f"{self.name}: ties='docid' needs the document ids (docids=)")
            first = docid_order(docids, p, n_ret)
            labels, s, pool = labels[first], as_c_float(s[first]), pool[first]
        query = np.repeat(np.arange(sizes.size), sizes)
        ranked = (np.arange(labels.size) - p[query]) < n_ret[query]
        tiebreak = labels if self.ties == "pessimistic" else np.zeros(labels.size)
        # retrieved rows first, by score descending, then stable (input or docid order)
        order = np.lexsort((tiebreak, -s, ~ranked, query))
        grades = labels.astype(np.int64)
        known = pool > 0
        rels = np.select([known, pool == 0], [grades, NONPOOL], UNJUDGED)[order][ranked[order]]
        rels_ptr = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(n_ret, out=rels_ptr[1:])
        levels = np.zeros((sizes.size, int(grades.max(initial=0)) + 1), dtype=np.int64)
        np.add.at(levels, (query[known], grades[known]), 1)
        request = parse_request(self.measure, self.params)
        values = evaluate_rels(rels, rels_ptr, levels, [request], relevance_level=self.relevance_level)[:, self.column]
        if self.empty == "skip":
            values[levels[:, max(self.relevance_level, 0) :].sum(axis=1) == 0] = np.nan
        return values

    def summarize(self, values: np.ndarray) -> float:
        """Mean over queries; exp of the mean for gm_map and gm_bpref (their values are logs)."""
        mean = query_mean(values)
        return math.exp(mean) if BY_NAME[self.measure].kind == GEOMETRIC else mean

    def mean(self, y, scores, ptr, *, docids=None, retrieved=None, judged=None) -> float:  # type: ignore[override]
        """:meth:`summarize` of :meth:`per_query`."""
        return self.summarize(self.per_query(y, scores, ptr, docids=docids, retrieved=retrieved, judged=judged))

    def scorer(self, y: ArrayLike, ptr: ArrayLike):  # type: ignore[override]
        """``scores -> mean(y, scores, ptr)`` (every row retrieved and judged)."""
        if self.ties == "docid":
            raise ValueError(f"{self.name}: ties='docid' needs the document ids; use mean(..., docids=)")
        return lambda scores: self.mean(y, scores, ptr)


def trec_metric(spec: str, conv: dict[str, object]) -> TrecMetric | None:
    """The :class:`TrecMetric` of ``spec`` (None when ``spec`` names no trec_eval measure)."""
    match = _SPEC.match(spec.lower())
    if match is None or match.group(1) not in SPEC_NAMES:
        return None
    key, given = match.group(1), match.group(2)
    measure, kind = SPEC_NAMES[key]
    if given is not None and not kind:
        raise ValueError(f"metric {spec!r}: {key} takes no @ parameter")
    if given is None and key in _NEEDS_PARAMETER:
        what, example = ("level", "0.5") if kind == "level" else ("k", "10")
        raise ValueError(f"metric {spec!r}: give {key}@<{what}> (e.g. '{key}@{example}')")
    if kind == "cutoff" and given is not None:
        if not given.isdigit() or int(given) < 1:
            raise ValueError(f"metric {spec!r}: the cutoff k must be an integer >= 1")
    params: str | None = None
    if given is not None:
        params = f"p={given}" if measure in ("rbp", "rbp_resid") else given
    pairs = tuple(sorted(dict(conv.get("gain_pairs") or {}).items()))
    if pairs and BY_NAME[measure].params == "pairs":
        params = ",".join(f"{g}={v!r}" for g, v in pairs) + ("" if params is None else "," + params)
    parse_request(measure, params)  # check now, not at the first evaluation
    empty = str(conv["empty"])
    if empty == "one":
        empty = "zero"  # a preset's "one" concerns NDCG and MAP
    k = int(given) if kind == "cutoff" else None
    level = conv.get("relevance_level")
    return TrecMetric(spec, k, "linear", empty, str(conv["ties"]), float(conv["max_grade"]), "k", "R",
                      measure=measure, params=params, relevance_level=1 if level is None else math.ceil(level),  # type: ignore[call-overload]
                      gain_pairs=pairs)  # fmt: skip
