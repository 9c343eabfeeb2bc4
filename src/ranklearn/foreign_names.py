"""Other tools' names for ranklearn's parameters, fit arguments and options: one table.

Users arrive from LightGBM's ``LGBMRanker``, XGBoost's ``XGBRanker`` and RankLib's command line
with those tools' names in their fingers. :data:`NAMES` maps each of them to ranklearn's; it
is read by the estimators (an unknown keyword that is another tool's name says "ranklearn
calls it ..."), by the command line (``-tree`` or ``--min-child-samples`` says the same, with
the option's name) and by the README's mapping table (:func:`markdown_table`, written by
``tools/readme_models.py`` and checked by a test). It imports nothing of ranklearn, so every
layer can use it.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "NAMES", "RENAMED", "OLD_AUTO_EARLY_STOPPING", "ForeignName", "hint", "lookup", "markdown_table",
    "naming_other_tools", "nearest", "value_hint", "VALUES",
]  # fmt: skip

LIGHTGBM, XGBOOST, RANKLIB = "LightGBM", "XGBoost", "RankLib"
#: ranklearn's own names before issue 30's vocabulary (docs/DESIGN.md, "Vocabulary")
EARLIER = "earlier ranklearn"
TOOLS = (LIGHTGBM, XGBOOST, RANKLIB, EARLIER)

#: the parameters issue 30's vocabulary renamed, per model name (old -> new, applied at once: a random
#: forest's old ``n_estimators`` is its ``trees_per_bag`` and its old ``n_bags`` its ``n_estimators``).
#: Read by the model-file upgrade (``BaseRanker.from_payload``) and, as NAMES rows, by every
#: "ranklearn calls it ..." message.
RENAMED: dict[str, dict[str, str]] = {
    **{name: {"epochs": "n_estimators"} for name in ("ranknet", "lambdarank", "listnet")},
    "coordinate-ascent": {"n_restarts": "n_estimators", "max_iterations": "line_search_steps"},
    "random-forest": {"n_bags": "n_estimators", "n_estimators": "trees_per_bag"},
}
#: what ``early_stopping_rounds="auto"`` meant before the vocabulary, per model name (None: never
#: stop early, keep the best iteration); read by the model-file upgrade
OLD_AUTO_EARLY_STOPPING: dict[str, int | None] = {
    "mart": 100, "ranknet": 20, "lambdarank": 20, "listnet": 20, "coordinate-ascent": None, "adarank": None,
    "rankboost": None,
}  # fmt: skip


@dataclass(frozen=True)
class ForeignName:
    """``tool``'s ``name`` for ranklearn's ``ours`` (a parameter, or ``fit(arg=)`` for a fit
    argument, or ``--option`` / ``command`` for the command line only); ``note`` says how
    they differ, when they do."""

    tool: str
    name: str
    ours: str
    note: str = ""


def _rows(tool: str, pairs: Iterable[tuple[str, ...]]) -> tuple[ForeignName, ...]:
    return tuple(ForeignName(tool, *pair) for pair in pairs)


#: every name of another tool ranklearn knows, with ranklearn's
NAMES: tuple[ForeignName, ...] = (
    *_rows(LIGHTGBM, [
        # the same name in LGBMRanker and ranklearn: listed so that the table shows it
        ("n_estimators", "n_estimators"), ("num_leaves", "num_leaves"), ("learning_rate", "learning_rate"),
        ("max_depth", "max_depth"), ("n_jobs", "n_jobs"), ("random_state", "random_state"),
        ("min_gain_to_split", "min_gain_to_split"), ("feature_fraction", "feature_fraction"),
        ("objective", "objective", "'lambdarank'; LightGBM's 'rank_xendcg' is 'xendcg'"),
        ("num_iterations", "n_estimators"), ("num_boost_round", "n_estimators"), ("num_trees", "n_estimators"),
        ("num_round", "n_estimators"), ("eta", "learning_rate"), ("shrinkage_rate", "learning_rate"),
        ("max_leaves", "num_leaves"), ("min_child_samples", "min_samples_leaf"),
        ("min_data_in_leaf", "min_samples_leaf"), ("min_child_weight", "min_sum_hessian"),
        ("min_sum_hessian_in_leaf", "min_sum_hessian"), ("reg_lambda", "l2_regularization"),
        ("lambda_l2", "l2_regularization"), ("min_split_gain", "min_gain_to_split"),
        ("subsample", "bagging_fraction", "ranklearn draws whole queries"),
        ("bagging_fraction", "bagging_fraction", "ranklearn draws whole queries"),
        ("colsample_bytree", "feature_fraction"), ("max_bin", "max_bins"),
        ("lambdarank_truncation_level", "truncation_level"), ("sigmoid", "sigma"),
        ("label_gain", "gain", "'exp2' (2^rel-1, LightGBM's default gains) or 'linear'"),
        ("lambdarank_norm", "lambda_normalization", "True is 'lightgbm'"),
        ("num_threads", "n_jobs"), ("seed", "random_state"), ("random_seed", "random_state"),
        ("early_stopping_round", "early_stopping_rounds"), ("n_iter_no_change", "early_stopping_rounds"),
        ("eval_at", "metric", "one metric at one depth: metric='ndcg@10'"), ("eval_metric", "metric"),
        ("init_score", "", "not taken: every fit starts from 0"),
        ("eval_group", "fit(eval_group=)"), ("eval_set", "fit(eval_set=)"), ("group", "fit(group=)"),
        ("weight", "fit(sample_weight=)", "a weight per row; ranklearn train reads TRAIN.weight as LightGBM does"),
        ("position", "fit(position=)", "ranklearn's are 1-based ranks; ranklearn train reads TRAIN.position"),
    ]),  # fmt: skip
    *_rows(XGBOOST, [
        ("n_estimators", "n_estimators"), ("learning_rate", "learning_rate"), ("max_depth", "max_depth"),
        ("n_jobs", "n_jobs"), ("random_state", "random_state"), ("early_stopping_rounds", "early_stopping_rounds"),
        ("num_boost_round", "n_estimators"), ("eta", "learning_rate"), ("max_leaves", "num_leaves"),
        ("min_child_weight", "min_sum_hessian"), ("reg_lambda", "l2_regularization"),
        ("lambda", "l2_regularization"), ("gamma", "min_gain_to_split"), ("min_split_loss", "min_gain_to_split"),
        ("subsample", "bagging_fraction", "ranklearn draws whole queries"), ("colsample_bytree", "feature_fraction"),
        ("max_bin", "max_bins"), ("nthread", "n_jobs"), ("seed", "random_state"),
        ("lambdarank_pair_method", "truncation_level", "'topk' with lambdarank_num_pair_per_sample=k: truncation_level=k"),
        ("eval_metric", "metric"), ("objective", "objective", "XGBoost's 'rank:ndcg' is 'lambdarank'"),
        ("eval_qid", "fit(eval_set=)", "as (X, y, qid) entries"), ("qid", "fit(qid=)"), ("group", "fit(group=)"),
    ]),  # fmt: skip
    *_rows(RANKLIB, [
        ("-train", "--train"), ("-validate", "--validate"), ("-test", "--test"), ("-save", "--save"),
        ("-ranker", "--model", "the numbers are in the Rankers table"), ("-metric2t", "metric"),
        ("-metric2T", "evaluate --metric"), ("-load", "predict --model"), ("-rank", "predict --data"),
        ("-kcv", "cv --folds"), ("-kcvmd", "cv --save-models"), ("-tvs", "--validation-split"), ("-tree", "n_estimators", "with -ranker 8 (random forest) -tree is trees_per_bag"), ("-leaf", "num_leaves"), ("-shrinkage", "learning_rate"),
        ("-mls", "min_samples_leaf"), ("-estop", "early_stopping_rounds"), ("-tc", "max_bins", "RankLib's -1: every value"),
        ("-epoch", "n_estimators", "the networks' epochs"), ("-layer", "hidden", "--hidden 10,10 is -layer 2 -node 10"), ("-node", "hidden"),
        ("-lr", "learning_rate"), ("-round", "n_estimators"), ("-r", "n_estimators", "coordinate ascent's restarts"), ("-i", "line_search_steps"),
        ("-tolerance", "tolerance"), ("-reg", "regularized"), ("-bag", "n_estimators", "a random forest's bags"), ("-srate", "subsample"),
        ("-frate", "feature_fraction"), ("-max", "max_selections"), ("-noeq", "enqueue", "-noeq is enqueue=False"),
        ("-gmax", "metric", "get_metric('err@10', max_grade=G)"), ("-norm", "--normalize", "normalize= in Python; RankLib's per-query normalization is query-zscore, query-sum, query-linear"),
        ("-feature", "--features", "a file of feature ids; features= in Python takes 0-based columns"),
    ]),  # fmt: skip
    *_rows(EARLIER, [
        ("epochs", "n_estimators", "the networks' epochs"), ("n_restarts", "n_estimators", "coordinate ascent's restarts"),
        ("n_bags", "n_estimators", "a random forest's bags; its trees per bag are trees_per_bag"),
        ("max_iterations", "line_search_steps"),
        # the command line's old flags
        ("--trees", "--n-estimators", "random-forest's trees per bag: --trees-per-bag"),
        ("--epochs", "--n-estimators", "the networks' epochs"), ("--rounds", "--n-estimators"),
        ("--restarts", "--n-estimators"), ("--bags", "--n-estimators"),
        ("--iterations", "--line-search-steps", "coordinate ascent's steps; trees, epochs or rounds: --n-estimators"),
    ]),  # fmt: skip
)


def lookup(name: str, tools: Iterable[str] = TOOLS) -> list[ForeignName]:
    """The rows whose other-tool name is ``name`` (``-tree``, also as ``--tree``;
    ``min_child_samples``, also as ``--min-child-samples``), from the given tools."""
    exact = [row for row in NAMES if row.tool in tools and row.name == name]
    if exact or not name.startswith("--"):  # an old flag (--epochs) is not also its parameter (epochs)
        return exact
    bare = name.lstrip("-")  # RankLib's -leaf typed with a double dash, as the other options are
    wanted = {bare.replace("-", "_"), f"-{bare}"}
    return [row for row in NAMES if row.tool in tools and row.name in wanted]


def hint(name: str, known: Iterable[str], options: Mapping[str, str] | None = None,
         tools: Iterable[str] = TOOLS) -> str | None:  # fmt: skip
    """``"ranklearn calls it min_samples_leaf (LightGBM's min_child_samples)"`` for another tool's
    ``name``, or None. ``known`` are the names the caller takes (a ranker's parameters); with
    ``options`` (parameter -> command-line option) the option is named instead of the parameter.
    """
    known = set(known)
    said: dict[tuple[str, str, str], list[str]] = {}  # (ours, note, their name) -> the tools that use it
    for row in lookup(name, tools):
        ours = row.ours
        plain = ours and not (ours.startswith(("fit(", "-")) or " " in ours)  # a parameter
        if plain and options is not None:
            ours = options.get(ours, f"the Python parameter {ours} (no command-line option)")
        elif plain and ours not in known:
            continue  # another ranker's parameter: no hint for this one
        said.setdefault((ours, row.note, row.name), []).append(f"{row.tool}'s")
    texts = []
    for (ours, note, theirs), tools_ in said.items():
        whose = " and ".join(tools_) + f" {theirs}"
        if not ours:
            texts.append(f"ranklearn has no counterpart of {whose} ({note})")
        else:
            texts.append(f"ranklearn calls it {ours} ({whose}" + (f"; {note})" if note else ")"))
    return "; ".join(texts) or None


#: other tools' values of a parameter that ranklearn spells differently: (parameter, value) ->
#: (ranklearn's value, whose)
VALUES: dict[tuple[str, str], tuple[str, str]] = {
    ("objective", "rank_xendcg"): ("xendcg", f"{LIGHTGBM}'s"),
    ("objective", "regression"): ("squared_error", f"{LIGHTGBM}'s"),
    ("objective", "rank:ndcg"): ("lambdarank", f"{XGBOOST}'s"),
    ("objective", "rank:pairwise"): ("ranknet", f"{XGBOOST}'s"),
    ("objective", "reg:squarederror"): ("squared_error", f"{XGBOOST}'s"),
}


def value_hint(parameter: str, value: str) -> str | None:
    """``"ranklearn calls it xendcg (LightGBM's rank_xendcg)"`` for another tool's value of
    ``parameter``, or None."""
    found = VALUES.get((parameter, value.strip()))
    return None if found is None else f"ranklearn calls it {found[0]} ({found[1]} {value.strip()})"


def nearest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates closest to ``name``, compared without their leading dashes (``--bogus``
    and ``--bags`` share no more than their dashes)."""
    bare = {c.lstrip("-"): c for c in candidates}
    return [bare[m] for m in difflib.get_close_matches(name.lstrip("-"), list(bare), n=n, cutoff=0.7)]


def markdown_table(parameters: Mapping[str, str]) -> str:
    """The README's mapping table: one row per ranklearn parameter or fit argument (``parameters``:
    name -> its command-line option or ""), with LightGBM's, XGBoost's and RankLib's names."""
    rows = ["| ranklearn | command line | LightGBM | XGBoost | RankLib | earlier ranklearn | note |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    ours = list(parameters) + sorted({r.ours for r in NAMES if r.ours and r.ours not in parameters})
    for name in ours:
        cells = []
        for tool in TOOLS:
            cells.append(", ".join(f"`{r.name}`" for r in NAMES if r.tool == tool and r.ours == name) or "")
        said = list(dict.fromkeys(r.note for r in NAMES if r.ours == name and r.note))
        notes = "; ".join(n for n in said if not any(n != other and n in other for other in said))  # each once
        option = parameters.get(name, "")
        rows.append(f"| `{name}` | {f'`{option}`' if option else ''} | {' | '.join(cells)} | {notes} |")
    missing = sorted({f"{r.tool} `{r.name}`" for r in NAMES if not r.ours})
    rows.append(f"| (none) | | | | | | not taken: {', '.join(missing)} |")
    return "\n".join(rows)


def naming_other_tools(method: Callable) -> Callable:
    """``method`` (an estimator's ``__init__``, ``fit`` or ``set_params``) with an unknown keyword
    that is another tool's name explained: the same TypeError, plus "ranklearn calls it ..."."""
    if getattr(method, "_names_other_tools", False):
        return method
    known = [p for p in inspect.signature(method).parameters if p != "self"]

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except TypeError as exc:
            match = _UNEXPECTED.search(str(exc))
            if match is None or match.group(1) not in kwargs:  # a TypeError from inside the method
                raise
            said = hint(match.group(1), set(known) | set(_parameters(self)))
            if said is None:
                raise
            raise TypeError(f"{type(self).__name__}.{method.__name__}() got an unexpected keyword argument "
                            f"{match.group(1)!r}: {said}") from None  # fmt: skip

    wrapper._names_other_tools = True  # type: ignore[attr-defined]
    return wrapper


_UNEXPECTED = re.compile(r"got an unexpected keyword argument '(\w+)'")


def _parameters(estimator: Any) -> list[str]:
    get = getattr(type(estimator), "_get_param_names", None)
    return list(get()) if callable(get) else []
