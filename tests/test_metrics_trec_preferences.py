"""trec_eval's preference measures by hand (the binary's outputs: tests/test_cli_trec_eval.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ranklearn.metrics.trec import preferences as P

NAMES = [name for name, _ in P.MEASURES]


def values(ranked, lines):
    counts, pairs, njr = P.prefs_counts(ranked, lines, "1", "prefs")
    return counts, pairs, njr, dict(zip(NAMES, P.prefs_values(counts, pairs, njr)))


def test_sub_groups_are_made_transitive():
    # one user: a > b (sub-group s), b > c (sub-group t): a > c follows
    lines = [("u", "s", "a", 2.0), ("u", "s", "b", 1.0), ("u", "t", "b", 2.0), ("u", "t", "c", 1.0)]
    counts, pairs, njr, v = values(["c", "b", "a"], lines)  # the ranking reverses every preference
    assert njr == 3 and v["prefs_num_prefs_poss"] == 3 and v["prefs_num_prefs_ful"] == 0
    # docids: c, b, a in rank order; every preference is of a later docid over an earlier one
    np.testing.assert_array_equal(pairs, [[0, 0, 0], [1, 0, 0], [1, 1, 0]])
    _, _, _, v = values(["a", "c"], lines)  # b unretrieved: a > c fulfilled, a > b implied, b > c failed
    assert (v["prefs_num_prefs_ful_ret"], v["prefs_num_prefs_ful"], v["prefs_num_prefs_poss"]) == (1, 2, 3)
    assert v["prefs_simp_ret"] == 1.0 and v["prefs_simp_imp"] == pytest.approx(2 / 3)


def test_equivalence_classes_users_and_pairs():
    # user u: a (2) > b, c (1) > d (0); user v disagrees on a and b
    lines = [("u", "0", "a", 2.0), ("u", "0", "b", 1.0), ("u", "0", "c", 1.0), ("u", "0", "d", 0.0),
             ("v", "0", "b", 1.0), ("v", "0", "a", 0.0)]  # fmt: skip
    counts, pairs, njr, v = values(["a", "b", "d"], lines)
    u, w = counts  # JGs in byte order of their ids
    # u: a>b, a>c, a>d, b>d, c>d; retrieved a, b, d: a>b, a>d, b>d fulfilled; a>c implied; c>d failed
    assert (u[P.FUL_RET], u[P.POSS_RET], u[P.FUL_IMP], u[P.POSS_IMP], u[P.NOTOCCUR]) == (3, 3, 1, 2, 0)
    assert (u[P.REL], u[P.REL_RET], u[P.NONREL], u[P.NONREL_RET]) == (3, 2, 1, 1)
    assert (w[P.FUL_RET], w[P.POSS_RET]) == (0, 1)  # b > a, failed
    assert v["prefs_simp"] == pytest.approx(4 / 6)
    assert v["prefs_avgjg"] == pytest.approx((4 / 5 + 0) / 2)
    # pairs: (a, b) is half fulfilled (u yes, v no); (a, d), (b, d), (a, c) fulfilled, (c, d) not
    assert v["prefs_pair"] == pytest.approx((0.5 + 1 + 1 + 1 + 0) / 5)
    assert v["prefs_pair_ret"] == pytest.approx((0.5 + 1 + 1) / 3)


def test_rnonrel_pads_or_cuts_the_non_relevant_documents():
    # R = 1 relevant, N = 3 non-relevant: only the first non-relevant (in docid order) counts
    lines = [("u", "0", d, lv) for d, lv in (("r", 1.0), ("n1", 0.0), ("n2", 0.0), ("n3", 0.0))]
    _, _, _, v = values(["n1", "r", "n2", "n3"], lines)
    assert v["prefs_avgjg"] == pytest.approx(2 / 3)
    assert v["prefs_avgjg_Rnonrel"] == 0.0  # r below n1, the one non-relevant document kept
    _, _, _, v = values(["r", "n1"], lines[:2])  # R = N = 1: nothing added
    assert v["prefs_avgjg_Rnonrel"] == v["prefs_avgjg"] == 1.0
