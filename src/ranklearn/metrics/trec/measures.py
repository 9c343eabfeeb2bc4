"""trec_eval's measures by name: their parameters, output names and one evaluation pass.

:data:`MEASURES` lists them in trec_eval's order (the order of its output lines). A
measure is requested as trec_eval's ``-m`` takes it: ``name`` or ``name.params``
(``P.5,10``, ``iprec_at_recall.0.5``, ``ndcg.1=3,2=9``, ``rbp.p=0.95``, ``utility.1,-2,0,0``);
:func:`parse_request` checks the parameters as trec_eval does (cutoffs positive, no
duplicates, sorted). :func:`evaluate_rels` computes every requested measure of every query
in one parallel pass over trec_eval's per-query judgement lists (see
:mod:`ranklearn.metrics.trec.ranking`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ranklearn._compilation import kernel, prange
from ranklearn.metrics.trec import average_precision as ap
from ranklearn.metrics.trec import bpref as bp
from ranklearn.metrics.trec import cutoffs as ct
from ranklearn.metrics.trec import gains as gn
from ranklearn.metrics.trec import precision as pr
from ranklearn.metrics.trec import rbp as rb
from ranklearn.metrics.trec import recall as rc
from ranklearn.metrics.trec import sets as st
from ranklearn.metrics.trec.counts import num_nonrel_judged_ret, num_rel, num_rel_ret
from ranklearn.metrics.trec.preferences import MEASURES as PREFS_MEASURES
from ranklearn.metrics.trec.reciprocal_rank import reciprocal_rank

# Kinds of value (how a measure is summed over queries and printed).
FLOAT, COUNT, GEOMETRIC, RUNID, NUM_Q, RELSTRING = "float", "count", "geometric", "runid", "num_q", "relstring"
# Kinds of parameter.
NONE, CUTOFFS, LEVELS, FLOATS, PAIRS = "none", "cutoffs", "levels", "floats", "pairs"

(
    C_NUM_RET, C_NUM_REL, C_NUM_REL_RET, C_MAP, C_GM_MAP, C_RPREC, C_BPREF, C_RECIP_RANK, C_IPREC, C_P,
    C_RECALL, C_INFAP, C_GM_BPREF, C_RPREC_MULT, C_UTILITY, C_11PT, C_BING, C_G, C_NDCG, C_NDCG_REL, C_RNDCG,
    C_NDCG_CUT, C_MAP_CUT, C_RELATIVE_P, C_SUCCESS, C_SET_P, C_SET_RELATIVE_P, C_SET_RECALL, C_SET_MAP, C_SET_F,
    C_NONREL_JUDGED, C_RBP, C_RBP_RESID, C_UNJ, C_YAAP, C_PREFS, C_NONE,
) = range(37)  # fmt: skip
#: The judgement formats (trec_eval's ``-R``) a measure is computed from; runid and num_q take any.
QRELS, PREFS, QRELS_JG, ANY = "qrels", "prefs", "qrels_jg", "any"

_CUTS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class MeasureSpec:
    """One trec_eval measure: its name, value kind, parameter kind and defaults, kernel code."""

    name: str
    kind: str
    params: str
    default: tuple[float, ...]
    code: int
    rel_format: str = QRELS


#: Every measure, in trec_eval's order of output (``measures.c``); rbp, rbp_resid and unj
#: are trec_eval 10's. The prefs_* measures (:mod:`.preferences`) and the *_avgjg ones (the
#: qrels measures of that name averaged over judgment groups, :mod:`.judgment_groups`) are
#: computed from other judgement formats (``rel_format``).
MEASURES: tuple[MeasureSpec, ...] = (
    MeasureSpec("runid", RUNID, NONE, (), C_NONE, ANY),
    MeasureSpec("num_q", NUM_Q, NONE, (), C_NONE, ANY),
    MeasureSpec("num_ret", COUNT, NONE, (), C_NUM_RET),
    MeasureSpec("num_rel", COUNT, NONE, (), C_NUM_REL),
    MeasureSpec("num_rel_ret", COUNT, NONE, (), C_NUM_REL_RET),
    MeasureSpec("map", FLOAT, NONE, (), C_MAP),
    MeasureSpec("gm_map", GEOMETRIC, NONE, (), C_GM_MAP),
    MeasureSpec("Rprec", FLOAT, NONE, (), C_RPREC),
    MeasureSpec("bpref", FLOAT, NONE, (), C_BPREF),
    MeasureSpec("recip_rank", FLOAT, NONE, (), C_RECIP_RANK),
    MeasureSpec("iprec_at_recall", FLOAT, LEVELS, _ELEVEN, C_IPREC),
    MeasureSpec("P", FLOAT, CUTOFFS, _CUTS, C_P),
    MeasureSpec("relstring", RELSTRING, FLOATS, (10.0,), C_NONE),
    MeasureSpec("recall", FLOAT, CUTOFFS, _CUTS, C_RECALL),
    MeasureSpec("infAP", FLOAT, NONE, (), C_INFAP),
    MeasureSpec("gm_bpref", GEOMETRIC, NONE, (), C_GM_BPREF),
    MeasureSpec("Rprec_mult", FLOAT, LEVELS, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), C_RPREC_MULT),
    MeasureSpec("utility", FLOAT, FLOATS, (1.0, -1.0, 0.0, 0.0), C_UTILITY),
    MeasureSpec("11pt_avg", FLOAT, FLOATS, _ELEVEN, C_11PT),
    MeasureSpec("binG", FLOAT, NONE, (), C_BING),
    MeasureSpec("G", FLOAT, PAIRS, (), C_G),
    MeasureSpec("ndcg", FLOAT, PAIRS, (), C_NDCG),
    MeasureSpec("ndcg_rel", FLOAT, PAIRS, (), C_NDCG_REL),
    MeasureSpec("Rndcg", FLOAT, PAIRS, (), C_RNDCG),
    MeasureSpec("ndcg_cut", FLOAT, CUTOFFS, _CUTS, C_NDCG_CUT),
    MeasureSpec("map_cut", FLOAT, CUTOFFS, _CUTS, C_MAP_CUT),
    MeasureSpec("relative_P", FLOAT, CUTOFFS, _CUTS, C_RELATIVE_P),
    MeasureSpec("success", FLOAT, CUTOFFS, (1.0, 5.0, 10.0), C_SUCCESS),
    MeasureSpec("set_P", FLOAT, NONE, (), C_SET_P),
    MeasureSpec("set_relative_P", FLOAT, NONE, (), C_SET_RELATIVE_P),
    MeasureSpec("set_recall", FLOAT, NONE, (), C_SET_RECALL),
    MeasureSpec("set_map", FLOAT, NONE, (), C_SET_MAP),
    MeasureSpec("set_F", FLOAT, FLOATS, (1.0,), C_SET_F),
    MeasureSpec("num_nonrel_judged_ret", COUNT, NONE, (), C_NONREL_JUDGED),
    *(MeasureSpec(name, COUNT if count else FLOAT, NONE, (), C_PREFS, PREFS) for name, count in PREFS_MEASURES),
    MeasureSpec("map_avgjg", FLOAT, NONE, (), C_MAP, QRELS_JG),
    MeasureSpec("P_avgjg", FLOAT, CUTOFFS, _CUTS, C_P, QRELS_JG),
    MeasureSpec("Rprec_mult_avgjg", FLOAT, LEVELS, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), C_RPREC_MULT,
                QRELS_JG),
    MeasureSpec("yaap", FLOAT, NONE, (), C_YAAP),
    MeasureSpec("rbp", FLOAT, PAIRS, (), C_RBP),
    MeasureSpec("rbp_resid", FLOAT, PAIRS, (), C_RBP_RESID),
    MeasureSpec("unj", FLOAT, CUTOFFS, (5.0, 10.0, 20.0), C_UNJ),
)
BY_NAME = {m.name: m for m in MEASURES}

#: trec_eval's nicknames (``-m official``, ``-m all_trec``, ``-m set``, ``-m all_prefs``,
#: ``-m prefs``, ``-m qrels_jg``): the measure sets of trec_eval 9.0.8, the release
#: pytrec_eval embeds (trec_eval 10 adds unj, rbp, rbp_resid to all_trec).
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel",
                 "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
                 "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_prefs": ("runid", "num_q", *(name for name, _ in PREFS_MEASURES)),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}  # fmt: skip


@dataclass(frozen=True)
class Request:
    """A measure with its parameters: ``values`` (cutoffs, levels, floats, or grade/gain pairs
    flattened) and ``columns``, the names of its output values (``P_5``, ``ndcg``)."""

    spec: MeasureSpec
    values: tuple[float, ...]
    columns: tuple[str, ...]


def _atof(text: str) -> float:
    """C's ``atof``/``atol`` on a parameter, refusing what is not a number."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"parameter {text!r} is not a number") from None


def parse_request(name: str, params: str | None) -> Request:
    """A measure request as trec_eval's ``-m name.params`` (``params`` None: the defaults).

    Raises
    ------
    ValueError
        Unknown measure, an empty or malformed parameter list, a cutoff that is not a
        positive integer, or duplicate cutoffs.
    """
    spec = BY_NAME.get(name)
    if spec is None:
        raise ValueError(f"illegal measure {name!r}: expected one of {', '.join(BY_NAME)} or {', '.join(NICKNAMES)}")
    if params is None:
        values = spec.default
        shown = None
    else:
        if params == "":
            raise ValueError(f"improper measure in parameter {name!r}: empty parameter list")
        if spec.params == NONE:
            raise ValueError(f"measure {name!r} takes no parameters, got {params!r}")
        values, shown = _parse_values(spec, name, params), params
    if spec.params == CUTOFFS:
        columns = tuple(f"{name}_{int(v)}" for v in values)
    elif spec.params == LEVELS:
        columns = tuple(f"{name}_{v:3.2f}" for v in values)
    else:
        columns = (name if shown is None else f"{name}_{shown}",)
    if spec.name == "utility" and len(values) != 4:
        raise ValueError(f"utility takes 4 coefficients, got {len(values)} ({params!r})")
    return Request(spec, tuple(values), columns)


def _parse_values(spec: MeasureSpec, name: str, params: str) -> tuple[float, ...]:
    parts = params.split(",")
    if spec.params == PAIRS:
        pairs = [part.split("=") for part in parts]
        if any(len(pair) != 2 or not pair[0] for pair in pairs):
            raise ValueError(f"malformed pair parameters in {params!r} (expected grade=gain,...)")
        if spec.code in (C_RBP, C_RBP_RESID):
            out = []
            for key, value in pairs:
                # p=persistence; the other pairs are grade=gain
                out += [math.inf if key == "p" else float(int(_atof(key))), _atof(value)]
            return tuple(out)
        return tuple(x for key, value in pairs for x in (float(int(_atof(key))), _atof(value)))
    values = [_atof(part) for part in parts]
    if spec.params == CUTOFFS:
        values = sorted(float(int(v)) for v in values)
        if values[0] <= 0:
            raise ValueError(f"measure {name!r}: cutoffs must be positive, got {params!r}")
    elif spec.params == LEVELS:
        values = sorted(values)
    if spec.params in (CUTOFFS, LEVELS) and len(set(values)) != len(values):
        raise ValueError(f"measure {name!r}: duplicate cutoffs in {params!r}")
    return tuple(values)


def expand(requests: list[str]) -> list[Request]:
    """trec_eval's ``-m`` arguments (names, ``name.params`` or nicknames) as requests in
    trec_eval's output order; a measure named twice keeps its first parameters."""
    chosen: dict[str, str | None] = {}
    for text in requests:
        name, dot, params = text.partition(".")
        names = NICKNAMES.get(name, (name,))
        if dot and name in NICKNAMES:
            raise ValueError(f"illegal measure {text!r}: a nickname takes no parameters")
        for each in names:
            if each not in BY_NAME:
                raise ValueError(
                    f"illegal measure {text!r}: expected one of {', '.join(BY_NAME)} or {', '.join(NICKNAMES)}"
                )
            if each not in chosen or (dot and chosen[each] is None and each == name):
                chosen[each] = params if dot else chosen.get(each)
    return [parse_request(m.name, chosen[m.name]) for m in MEASURES if m.name in chosen]


def kernel_inputs(requests: list[Request]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(codes, params, parameter boundaries, column boundaries) of the computed measures."""
    codes, params, pptr, cols = [], [], [0], [0]
    for request in requests:
        if request.spec.code == C_NONE or request.spec.rel_format != QRELS:
            continue
        codes.append(request.spec.code)
        params += request.values
        pptr.append(len(params))
        cols.append(cols[-1] + len(request.columns))
    return (np.asarray(codes, dtype=np.int64), np.asarray(params, dtype=np.float64),
            np.asarray(pptr, dtype=np.int64), np.asarray(cols, dtype=np.int64))  # fmt: skip


@kernel(cache=True, error_model="numpy")
def _pairs(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Grade/gain pairs and the RBP persistence (grade +inf: ``p=``; default 0.9)."""
    n = 0
    persistence = 0.9
    for j in range(0, p.shape[0], 2):
        if np.isinf(p[j]):
            persistence = p[j + 1]
        else:
            n += 1
    grades = np.empty(n, dtype=np.int64)
    gains = np.empty(n)
    n = 0
    for j in range(0, p.shape[0], 2):
        if not np.isinf(p[j]):
            grades[n] = np.int64(p[j])
            gains[n] = p[j + 1]
            n += 1
    return grades, gains, persistence


@kernel(cache=True, error_model="numpy")
def _measure(code, r, lv, n_rel, n_rel_ret, rl, n_docs, p, out):
    n_ret = r.shape[0]
    if code == C_NUM_RET:
        out[0] = n_ret
    elif code == C_NUM_REL:
        out[0] = n_rel
    elif code == C_NUM_REL_RET:
        out[0] = n_rel_ret
    elif code == C_NONREL_JUDGED:
        out[0] = num_nonrel_judged_ret(r, rl)
    elif code == C_MAP:
        out[0] = ap.average_precision(r, n_rel, rl)
    elif code == C_GM_MAP:
        out[0] = ap.log_average_precision(r, n_rel, rl)
    elif code == C_MAP_CUT:
        ct.at_cutoffs(r, n_rel, rl, p.astype(np.int64), ct.AP, out)
    elif code == C_RPREC:
        out[0] = pr.r_precision(r, n_rel, rl)
    elif code == C_RPREC_MULT:
        pr.r_precision_multiples(r, n_rel, n_rel_ret, rl, p, out)
    elif code == C_P:
        ct.at_cutoffs(r, n_rel, rl, p.astype(np.int64), ct.PRECISION, out)
    elif code == C_RELATIVE_P:
        ct.at_cutoffs(r, n_rel, rl, p.astype(np.int64), ct.RELATIVE_P, out)
    elif code == C_SUCCESS:
        ct.at_cutoffs(r, n_rel, rl, p.astype(np.int64), ct.SUCCESS, out)
    elif code == C_RECALL:
        ct.at_cutoffs(r, n_rel, rl, p.astype(np.int64), ct.RECALL, out)
    elif code == C_IPREC:
        rc.interpolated_precision(r, n_rel, n_rel_ret, rl, p, out)
    elif code == C_11PT:
        out[0] = rc.eleven_point_average(r, n_rel, n_rel_ret, rl, p)
    elif code == C_BPREF:
        out[0] = bp.bpref(r, lv, n_rel, rl)
    elif code == C_GM_BPREF:
        out[0] = bp.log_bpref(r, lv, n_rel, rl)
    elif code == C_INFAP:
        out[0] = bp.inferred_ap(r, n_rel, rl)
    elif code == C_RECIP_RANK:
        out[0] = reciprocal_rank(r, rl)
    elif code == C_BING:
        out[0] = gn.binary_g(r, n_rel, rl)
    elif code == C_NDCG_CUT:
        gn.ndcg_at(r, lv, p.astype(np.int64), out)
    elif code == C_G or code == C_NDCG or code == C_NDCG_REL or code == C_RNDCG:
        grades, gains, _ = _pairs(p)
        kind = gn.G if code == C_G else gn.NDCG if code == C_NDCG else gn.NDCG_REL if code == C_NDCG_REL else gn.RNDCG
        out[0] = gn.graded(r, lv, n_rel, grades, gains, kind)
    elif code == C_RBP:
        grades, gains, persistence = _pairs(p)
        out[0] = rb.rbp(r, lv, grades, gains, persistence)
    elif code == C_RBP_RESID:
        out[0] = rb.rbp_residual(r, _pairs(p)[2])
    elif code == C_YAAP:
        out[0] = ap.yaap(r, n_rel, rl)
    elif code == C_UNJ:
        ct.at_cutoffs(r, n_rel, rl, p.astype(np.int64), ct.UNJUDGED_SHARE, out)
    elif code == C_UTILITY:
        out[0] = st.utility(n_ret, n_rel, n_rel_ret, p, n_docs)
    elif code == C_SET_F:
        out[0] = st.set_f(n_ret, n_rel, n_rel_ret, p[0])
    elif code == C_SET_P:
        out[0] = st.set_measure(n_ret, n_rel, n_rel_ret, st.SET_P)
    elif code == C_SET_RECALL:
        out[0] = st.set_measure(n_ret, n_rel, n_rel_ret, st.SET_RECALL)
    elif code == C_SET_RELATIVE_P:
        out[0] = st.set_measure(n_ret, n_rel, n_rel_ret, st.SET_RELATIVE_P)
    elif code == C_SET_MAP:
        out[0] = st.set_measure(n_ret, n_rel, n_rel_ret, st.SET_MAP)


@kernel(cache=True, parallel=True, error_model="numpy")
def _evaluate(rels, ptr, levels, rl, n_docs, codes, params, pptr, cols, out):
    for q in prange(ptr.shape[0] - 1):
        r = rels[ptr[q] : ptr[q + 1]]
        lv = levels[q]
        n_rel = num_rel(lv, rl)
        n_rel_ret = num_rel_ret(r, rl)
        for m in range(codes.shape[0]):
            _measure(codes[m], r, lv, n_rel, n_rel_ret, rl, n_docs, params[pptr[m] : pptr[m + 1]],
                     out[q, cols[m] : cols[m + 1]])  # fmt: skip


def evaluate_rels(
    rels: np.ndarray,
    ptr: np.ndarray,
    levels: np.ndarray,
    requests: list[Request],
    *,
    relevance_level: int = 1,
    n_docs: int = 0,
) -> np.ndarray:
    """Values of the requested measures for every query: shape (n_queries, columns).

    Parameters
    ----------
    rels : int64 array
        Every query's retrieved documents in rank order, as grades (-1: absent from the
        qrels, -2: in them with a negative grade), query ``q`` at ``ptr[q]:ptr[q+1]``.
    levels : int64 array of shape (n_queries, top grade + 1)
        Judged documents of each query at each grade >= 0 (retrieved or not).
    requests : list of Request
        From :func:`expand`; runid, num_q and relstring have no columns here.
    relevance_level : int
        trec_eval's ``-l``: grades below it are not relevant for the binary measures.
    n_docs : int
        Documents in the collection (``-N``), for utility's fourth coefficient.
    """
    codes, params, pptr, cols = kernel_inputs(requests)
    out = np.zeros((ptr.shape[0] - 1, int(cols[-1])))
    if codes.size:
        _evaluate(np.ascontiguousarray(rels, dtype=np.int64), np.ascontiguousarray(ptr, dtype=np.int64),
                  np.ascontiguousarray(levels, dtype=np.int64), int(relevance_level), int(n_docs), codes, params,
                  pptr, cols, out)  # fmt: skip
    return out
