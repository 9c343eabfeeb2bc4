"""trec_eval's preference measures (``-R prefs`` / ``-R qrels_prefs``): the ``prefs_*`` family.

A query's judgements are judgment groups (JG, one user each); within a JG, a document is
preferred to another when a sub-group (JSG) gives it a higher rel_level, and preferences are
transitive across the JSGs of a JG (a JG with one JSG is a set of equivalence classes, one per
rel_level). For a preference A > B and a ranking, the preference is *fulfilled* when A is
ranked above B; when only A is retrieved it is fulfilled by implication (``imp``); when only B
is, it fails by implication; when neither is, it is possible but not fulfilled (``notoccur``).
Over the JGs of a query, with ful/poss counting fulfilled/possible preferences:

* prefs_num_prefs_poss = poss (all areas); prefs_num_prefs_ful = ful_ret + ful_imp;
  prefs_num_prefs_ful_ret = ful_ret (counts, summed over queries);
* prefs_simp = (ful_ret + ful_imp) / poss; prefs_simp_ret = ful_ret / poss_ret;
  prefs_simp_imp = (ful_ret + ful_imp) / (poss_ret + poss_imp);
* prefs_avgjg[_ret|_imp]: the same ratio within each JG, averaged over the JGs;
* prefs_pair[_ret|_imp]: per document pair, the share of the JGs' preferences on it that the
  ranking fulfils, averaged over the pairs (pairs of two unretrieved documents count 0 in
  prefs_pair, are left out of _imp and _ret; _ret keeps only pairs of retrieved documents);
* prefs_avgjg_Rnonrel[_ret]: prefs_avgjg with each JG's non-relevant documents (rel_level 0)
  cut or padded to R, its relevant ones: with N <= R, R (R - N) preferences fulfilled by every
  retrieved relevant document are added; with N > R only the first R non-relevant documents
  count (akin to bpref).

trec_eval's own rules are kept, quirks included (``form_prefs_counts.c`` and ``m_prefs_*.c`` of
trec_eval 9.0.8): equal scores are ranked by docno *ascending* here (the qrels measures use
descending), a ratio is 0 when nothing is possible, and the Rnonrel averages are 0 as soon as
one JG has no possible preference (its 0/0 makes the sum NaN). References: C. Buckley, trec_eval
documentation (``README``, ``-R prefs``); B. Carterette, P. Bennett, D. Chickering, S. Dumais,
"Here or There: Preference Judgments for Relevance", ECIR 2008.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ranklearn._compilation import kernel
from ranklearn.exceptions import DataFormatError

# Columns of a JG's counts (trec_format.h's JG), and the recalculated Rnonrel counts.
(FUL_RET, POSS_RET, FUL_IMP, POSS_IMP, NOTOCCUR, REL, REL_RET, NONREL, NONREL_RET, RN_FUL, RN_POSS, RNR_FUL,
 RNR_POSS) = range(13)  # fmt: skip

#: The measures, in trec_eval's order, and whether each is a count.
MEASURES: tuple[tuple[str, bool], ...] = (
    ("prefs_num_prefs_poss", True), ("prefs_num_prefs_ful", True), ("prefs_num_prefs_ful_ret", True),
    ("prefs_simp", False), ("prefs_pair", False), ("prefs_avgjg", False), ("prefs_avgjg_Rnonrel", False),
    ("prefs_simp_ret", False), ("prefs_pair_ret", False), ("prefs_avgjg_ret", False),
    ("prefs_avgjg_Rnonrel_ret", False), ("prefs_simp_imp", False), ("prefs_pair_imp", False),
    ("prefs_avgjg_imp", False),
)  # fmt: skip


@kernel(cache=True, inline="always")
def _tally(p1, p2, njr, out):
    """Count a preference for docid p1 over p2 (docids below njr retrieved, in rank order)."""
    if p1 < p2:
        if p2 < njr:
            out[FUL_RET] += 1
        elif p1 < njr:
            out[FUL_IMP] += 1
        else:
            out[NOTOCCUR] += 1
    elif p1 < njr:
        out[POSS_RET] += 1
    elif p2 < njr:
        out[POSS_IMP] += 1
    else:
        out[NOTOCCUR] += 1


@kernel(cache=True)
def _ec_counts(ranks, ec_ptr, levels, njr, pc, out):
    """Counts of a JG given as equivalence classes (ranks of each class ascending, classes by
    decreasing rel_level); adds its preferences to ``pc``. Returns a docid found in two classes, or -1."""
    n_ec = ec_ptr.shape[0] - 1
    for e1 in range(n_ec):
        a, b = ec_ptr[e1], ec_ptr[e1 + 1]
        ret = 0
        while a + ret < b and ranks[a + ret] < njr:
            ret += 1
        if levels[e1] > 0.0:
            out[REL_RET] += ret
            out[REL] += b - a
        else:
            out[NONREL_RET] += ret
            out[NONREL] += b - a
        for e2 in range(e1 + 1, n_ec):
            for i in range(a, b):
                p1 = ranks[i]
                for j in range(ec_ptr[e2], ec_ptr[e2 + 1]):
                    p2 = ranks[j]
                    pc[p1, p2] += 1
                    if p1 == p2:
                        return p1
                    _tally(p1, p2, njr, out)
    out[POSS_RET] += out[FUL_RET]
    out[POSS_IMP] += out[FUL_IMP]
    return -1


@kernel(cache=True)
def _ec_recount(ranks, ec_ptr, njr, keep, retrieved_only):
    """trec_eval's Rnonrel recount of an EC JG: the preferences among the classes but the last,
    and of every class over the first ``keep`` documents of the last (its non-relevant one)."""
    n_ec = ec_ptr.shape[0] - 1
    ful = 0
    poss = 0
    last = ec_ptr[n_ec - 1]
    for e1 in range(n_ec):
        for e2 in range(e1 + 1, n_ec + 1):
            if e2 == n_ec - 1:
                continue
            lo2, hi2 = (last, last + min(keep, ec_ptr[n_ec] - last)) if e2 == n_ec else (ec_ptr[e2], ec_ptr[e2 + 1])
            for i in range(ec_ptr[e1], ec_ptr[e1 + 1]):
                p1 = ranks[i]
                if retrieved_only and p1 >= njr:
                    break
                for j in range(lo2, hi2):
                    p2 = ranks[j]
                    if retrieved_only and p2 >= njr:
                        break
                    if p1 < p2 and p1 < njr:
                        ful += 1
                    else:
                        poss += 1
    return ful, poss + ful


@kernel(cache=True)
def _closure(pa):
    """Transitive closure of a preference array in place; returns a conflicted pair's first
    index (i > j and j > i), or -1."""
    n = pa.shape[0]
    for k in range(n):
        for i in range(n):
            if pa[i, k] or i == k:
                for j in range(n):
                    if pa[k, j]:
                        pa[i, j] = True
    for i in range(n):
        pa[i, i] = False
    for i in range(n):
        for j in range(n):
            if pa[i, j] and pa[j, i]:
                return i
    return -1


@kernel(cache=True)
def _pa_counts(pa, rel, njr, pc, out):
    """Counts of a JG given as a preference array over every judged document; adds it to ``pc``."""
    n = pa.shape[0]
    for i in range(n):
        if rel[i] > 0.0:
            out[REL] += 1
            if i < njr:
                out[REL_RET] += 1
        elif rel[i] == 0.0:
            out[NONREL] += 1
            if i < njr:
                out[NONREL_RET] += 1
        for j in range(n):
            if pa[i, j]:
                pc[i, j] += 1
                _tally(i, j, njr, out)
    out[POSS_RET] += out[FUL_RET]
    out[POSS_IMP] += out[FUL_IMP]


@kernel(cache=True)
def _pa_recount(pa, rel, njr, n_rel, retrieved_only):
    """trec_eval's Rnonrel recount of a preference-array JG: non-relevant documents after the
    ``n_rel``-th (in docid order; among the retrieved ones only for the _ret variant) left out."""
    n = pa.shape[0]
    seen = 0
    first_out = 0
    scan = njr if retrieved_only else n
    while first_out < scan:
        if rel[first_out] == 0.0:
            seen += 1
            if seen == n_rel + 1:
                break
        first_out += 1
    ful = 0
    poss = 0
    top = njr if retrieved_only else n
    for i in range(top):
        if i >= first_out and rel[i] == 0.0:
            continue
        for j in range(top):
            if j == i or (j >= first_out and rel[j] == 0.0) or not pa[i, j]:
                continue
            if i < njr and j > i:
                ful += 1
            else:
                poss += 1
    return ful, poss + ful


def _order(names: Sequence[str]) -> np.ndarray:
    """Positions sorting the names by C's strcmp (UTF-8 bytes)."""
    return np.array(sorted(range(len(names)), key=lambda i: names[i].encode()), dtype=np.int64)


def _ratio(ful: int, poss: int) -> float:
    """C's double division: 0/0 is NaN."""
    if poss:
        return ful / poss
    return float("nan") if ful == 0 else float("inf")


def prefs_counts(ranked: Sequence[str], lines: Sequence[tuple[str, str, str, float]], qid: str, path: str):
    """The judgment groups' counts (one row per JG, columns ``FUL_RET``...) and the pair counts.

    Parameters
    ----------
    ranked : sequence of str
        The query's retrieved docnos in rank order.
    lines : sequence of (jg, jsg, docno, rel_level)
        Its preference lines.

    Returns
    -------
    counts : int64 array (n_jgs, 13)
    pair_counts : int64 array (n_judged, n_judged)
        JGs preferring the document of docid i to that of j; docids number the judged
        documents, the retrieved ones first in rank order, then the others by docno.
    n_judged_ret : int

    Raises
    ------
    DataFormatError
        A document with two rel_levels in one sub-group, with level 0 and another level in one
        group, or preferences that contradict each other within a group (trec_eval aborts).
    """
    judged = {docno for _, _, docno, _ in lines}
    docid: dict[str, int] = {}
    for docno in ranked:
        if docno in judged:
            docid[docno] = len(docid)
    njr = len(docid)
    for docno in sorted(judged - docid.keys(), key=str.encode):
        docid[docno] = len(docid)
    n = len(docid)
    ranks = np.array([docid[d] for _, _, d, _ in lines], dtype=np.int64)
    levels = np.array([level for *_, level in lines], dtype=np.float32)
    jgs = [jg for jg, *_ in lines]
    jsgs = [jsg for _, jsg, _, _ in lines]
    # trec_eval's order: jg, jsg, rel_level descending, docid
    order = sorted(range(len(lines)), key=lambda i: (jgs[i].encode(), jsgs[i].encode(), -levels[i], ranks[i]))
    pc = np.zeros((n, n), dtype=np.int64)
    rows = []
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and jgs[order[end]] == jgs[order[start]]:
            end += 1
        idx = np.array(order[start:end], dtype=np.int64)
        rows.append(_jg_counts(idx, ranks, levels, [jsgs[i] for i in idx], njr, n, pc, lines, qid, path))
        start = end
    return np.array(rows, dtype=np.int64).reshape(-1, 13), pc, njr


def _jg_counts(idx, ranks, levels, jsgs, njr, n, pc, lines, qid, path) -> np.ndarray:
    out = np.zeros(13, dtype=np.int64)
    r, lv = ranks[idx], levels[idx]
    jg = lines[idx[0]][0]
    if len(set(jsgs)) == 1:  # equivalence classes
        ec_ptr = np.flatnonzero(np.r_[True, lv[1:] != lv[:-1], True])
        twice = _ec_counts(r, ec_ptr, lv[ec_ptr[:-1]], njr, pc, out)
        if twice >= 0:
            docno = next(d for (_, _, d, _), k in zip(lines, ranks) if k == twice)
            raise DataFormatError(f"query {qid!r}: document {docno!r} has two rel_levels in judgment group {jg!r}",
                                  path=path)  # fmt: skip
        if out[NONREL] > out[REL]:
            out[RN_FUL], out[RN_POSS] = _ec_recount(r, ec_ptr, njr, out[REL], False)
        if out[NONREL_RET] > out[REL_RET]:
            out[RNR_FUL], out[RNR_POSS] = _ec_recount(r, ec_ptr, njr, out[REL_RET], True)
        return out
    rel = np.full(n, -1.0, dtype=np.float32)
    pa = np.zeros((n, n), dtype=np.bool_)
    for k in range(len(idx)):
        d = r[k]
        if (rel[d] > 0 and lv[k] == 0) or (rel[d] == 0 and lv[k] > 0):
            raise DataFormatError(f"query {qid!r}: document {lines[idx[k]][2]!r} has rel_level 0 and another level "
                                  f"in judgment group {jg!r}", path=path)  # fmt: skip
        rel[d] = lv[k]
        j = k + 1
        while j < len(idx) and jsgs[j] == jsgs[k] and lv[j] == lv[k]:
            j += 1
        while j < len(idx) and jsgs[j] == jsgs[k]:
            pa[d, r[j]] = True
            j += 1
    if _closure(pa) >= 0:
        raise DataFormatError(f"query {qid!r}: the preferences of judgment group {jg!r} contradict each other",
                              path=path)  # fmt: skip
    _pa_counts(pa, rel, njr, pc, out)
    if out[NONREL] > out[REL]:
        out[RN_FUL], out[RN_POSS] = _pa_recount(pa, rel, njr, out[REL], False)
    if out[NONREL_RET] > out[REL_RET]:
        out[RNR_FUL], out[RNR_POSS] = _pa_recount(pa, rel, njr, out[REL], True)
    return out


def _avg_jg(ful: np.ndarray, poss: np.ndarray) -> float:
    """Mean over the JGs of ful/poss (a JG with nothing possible adds 0); 0 unless positive."""
    total = 0.0
    for f, p in zip(ful.tolist(), poss.tolist()):
        if p:
            total += f / p
    return total / ful.shape[0] if total > 0.0 else 0.0


def _rnonrel(c: np.ndarray, retrieved: bool) -> float:
    total = 0.0
    for row in c:
        r, nn = (row[REL_RET], row[NONREL_RET]) if retrieved else (row[REL], row[NONREL])
        if r >= nn:
            ful = row[FUL_RET] + (0 if retrieved else row[FUL_IMP]) + row[REL_RET] * (r - nn)
            poss = row[POSS_RET] + (0 if retrieved else row[POSS_IMP] + row[NOTOCCUR]) + row[REL] * (r - nn)
            total += _ratio(ful, poss)
        else:
            total += _ratio(row[RNR_FUL], row[RNR_POSS]) if retrieved else _ratio(row[RN_FUL], row[RN_POSS])
    return total / c.shape[0] if total > 0.0 else 0.0  # NaN > 0 is false: trec_eval's 0


def _pairs(pc: np.ndarray, njr: int, which: str) -> float:
    """Mean over document pairs with a preference of the share fulfilled (prefs_pair*)."""
    upper = np.triu(np.ones(pc.shape, dtype=bool), 1)
    any_pref = ((pc > 0) | (pc.T > 0)) & upper
    retrieved = np.arange(pc.shape[0]) < njr
    both = retrieved[:, None] & retrieved[None, :]
    one = retrieved[:, None] & ~retrieved[None, :]
    share = np.divide(pc, pc + pc.T, out=np.zeros(pc.shape), where=(pc + pc.T) > 0)
    # among two retrieved documents i < j, i is ranked above j; with one retrieved, i is it
    counted = both | (one if which != "ret" else False)
    pairs = int((any_pref & counted).sum()) + (int((any_pref & ~(both | one)).sum()) if which == "all" else 0)
    # a pair (retrieved i, unretrieved j) with i > j in docid order cannot exist (retrieved first)
    return float(share[any_pref & counted].sum()) / pairs if pairs else 0.0


def prefs_values(counts: np.ndarray, pc: np.ndarray, njr: int) -> np.ndarray:
    """The values of :data:`MEASURES` for one query from :func:`prefs_counts`."""
    c = counts
    ful_ret, ful_imp = c[:, FUL_RET], c[:, FUL_IMP]
    poss_ret, poss_imp, notoccur = c[:, POSS_RET], c[:, POSS_IMP], c[:, NOTOCCUR]
    poss = int((poss_ret + poss_imp + notoccur).sum())
    ful = int((ful_ret + ful_imp).sum())

    def simple(f: int, p: int) -> float:
        return f / p if p else 0.0

    return np.array([
        poss, ful, int(ful_ret.sum()),
        simple(ful, poss), _pairs(pc, njr, "all"), _avg_jg(ful_ret + ful_imp, poss_ret + poss_imp + notoccur),
        _rnonrel(c, False),
        simple(int(ful_ret.sum()), int(poss_ret.sum())), _pairs(pc, njr, "ret"), _avg_jg(ful_ret, poss_ret),
        _rnonrel(c, True),
        simple(ful, int((poss_ret + poss_imp).sum())), _pairs(pc, njr, "imp"),
        _avg_jg(ful_ret + ful_imp, poss_ret + poss_imp),
    ], dtype=np.float64)  # fmt: skip
