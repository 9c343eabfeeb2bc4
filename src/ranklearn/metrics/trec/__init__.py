"""trec_eval's measures, one module per measure family, each kernel reproducing trec_eval's
rules value for value (tested against pytrec_eval, which runs trec_eval's C code).

* :mod:`.counts` num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret
* :mod:`.average_precision` map, map_cut, gm_map, yaap
* :mod:`.precision` P, relative_P, success, Rprec, Rprec_mult
* :mod:`.recall` recall, iprec_at_recall, 11pt_avg
* :mod:`.cutoffs` every value at rank cutoffs (P, relative_P, success, recall, map_cut, unj)
* :mod:`.reciprocal_rank` recip_rank
* :mod:`.bpref` bpref, gm_bpref, infAP
* :mod:`.gains` ndcg, ndcg_cut, ndcg_rel, Rndcg, G, binG
* :mod:`.sets` set_P, set_recall, set_relative_P, set_map, set_F, utility
* :mod:`.rbp` rbp, rbp_resid
* :mod:`.preferences` the prefs_* measures of ``-R prefs`` / ``qrels_prefs``
* :mod:`.judgment_groups` map_avgjg, P_avgjg, Rprec_mult_avgjg of ``-R qrels_jg``
* :mod:`.measures` the catalogue (names, parameters, output names) and the evaluation pass;
  :mod:`.ranking` trec_eval's judgement lists; :mod:`.metric` the measures through ``get_metric``.
"""

from ranklearn.metrics.trec.measures import MEASURES, NICKNAMES, Request, evaluate_rels, expand, parse_request
from ranklearn.metrics.trec.ranking import JudgedRankings

__all__ = [
    "MEASURES",
    "NICKNAMES",
    "JudgedRankings",
    "Request",
    "evaluate_rels",
    "expand",
    "parse_request",
]
