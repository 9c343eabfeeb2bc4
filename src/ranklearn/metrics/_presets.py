"""Named convention presets: every convention at once, so that a number equals a tool's own.

Each preset was checked against the tool itself on MQ2008 test runs (``tests/test_metrics.py``);
RankLib, which is not on PyPI, against its scorers' definitions. The presets assume integer
grades: trec_eval and ranx call a document relevant when its grade is >= 1, LightGBM when it
is > 0.5, ranklearn when it is > 0.
"""

from __future__ import annotations

#: Convention values of each preset (parameters of :func:`ranklearn.metrics.get_metric`).
PRESETS: dict[str, dict[str, object]] = {
    # ranklearn's own defaults
    "ranklearn": dict(gain="exp2", empty="zero", ties="stable", p_divisor="min(k,n)", map_divisor="min(R,k)", max_grade=4.0),
    # linear gain; equal scores by docno descending; P@k / k; AP@k / R; empty queries 0
    "trec_eval": dict(gain="linear", empty="zero", ties="docid", p_divisor="k", map_divisor="R", max_grade=4.0,
                      relevance_level=1),
    # label_gain 2^i-1, stable sort, queries without a relevant document score 1, MAP@k / min(R, k)
    "lightgbm": dict(gain="exp2", empty="one", ties="stable", p_divisor="min(k,n)", map_divisor="min(R,k)", max_grade=4.0),
    # XGBoost's ndcg@k, map@k, pre@k (exp gain; empty queries 1, its 'ndcg@k-' / 'map@k-' are
    # empty="zero"; pre@k counts empty queries 0 and divides by min(k, n)). Its cutoff-free
    # 'ndcg' and 'map' are not reproduced: give a cutoff.
    "xgboost": dict(gain="exp2", empty="one", ties="stable", p_divisor="min(k,n)", map_divisor="min(R,k)", max_grade=4.0),
    # RankLib's scorers: NDCG 2^rel-1 (0 without relevant documents), P@k / min(k, n),
    # AP over relevant documents, ERR with g_max = 2^4
    "ranklib": dict(gain="exp2", empty="zero", ties="stable", p_divisor="min(k,n)", map_divisor="R", max_grade=4.0),
    # ranx's "ndcg" (Järvelin's linear gain; ranx calls the exp2 one "ndcg_burges"), precision@k / k,
    # map@k / R. ranx orders equal scores by an unstable quicksort, which no convention can
    # name: its numbers are reproduced on tie-free scores.
    "ranx": dict(gain="linear", empty="zero", ties="stable", p_divisor="k", map_divisor="R", max_grade=4.0),
}


def preset(name: str) -> dict[str, object]:
    """The conventions of a named preset.

    Raises
    ------
    ValueError
        Unknown preset name.
    """
    try:
        return dict(PRESETS[name])
    except (KeyError, TypeError):
        raise ValueError(f"conventions must be one of {sorted(PRESETS)}, got {name!r}") from None
