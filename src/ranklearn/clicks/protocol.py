"""The offline protocol of unbiased learning to rank: train on simulated clicks, test on true labels.

The semi-synthetic set-up of the unbiased-learning-to-rank literature (Joachims, Swaminathan,
Schnabel, WSDM 2017; Ai et al., SIGIR 2018; ULTRA, Tran et al., CIKM 2021), on any labelled
LETOR data:

1. a *logging* ranker (the production system) is trained on the true labels of a small random
   part of the training queries (``logging_fraction``, 1% by default);
2. sessions are simulated on its rankings of the training queries, and separately of the
   validation queries, by a click model (:mod:`ranklearn.clicks.models`): these click logs are
   all a ranker trained on clicks may see (each session one list: clicked 0/1 per shown
   document, with its position);
3. the rankers are trained on the training clicks and early-stopped on the validation clicks,
   never on a true label of any split;
4. every ranker is tested on the test queries' true labels (NDCG@1/3/5/10 by default, per query).

Reference rows: the logging ranker itself, the *naive* ranker (LambdaMART on the clicks as
labels, positions ignored) and the *full-information* ranker (LambdaMART on the training queries'
true labels, early-stopped on the validation queries' true labels: the skyline).
:func:`shown_information_ranker` is a further reference that reads true labels: the same
LambdaMART on the true labels of only the documents the sessions showed (pass it in ``rankers``).
:func:`run_protocol` runs all of it; a ranker of one's own is a function of the
:class:`ClickExperiment` that returns a fitted model (anything with ``predict(X)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklearn.clicks.aggregate import ClickTrainingSet
from ranklearn.clicks.log import ClickLog
from ranklearn.clicks.models import ClickModel
from ranklearn.clicks.simulation import simulate
from ranklearn.data.dataset import RankingDataset
from ranklearn.data.groups import group_ptr
from ranklearn.metrics import get_metric
from ranklearn.models.lambdamart import LambdaMART

__all__ = [
    "ClickExperiment",
    "ProtocolResult",
    "prepare",
    "naive_ranker",
    "full_information_ranker",
    "shown_information_ranker",
    "run_protocol",
]

#: metrics of the literature's tables, on the test queries' true labels (ranklearn's conventions)
METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10")


@dataclass(frozen=True)
class ClickExperiment:
    """What the protocol hands a ranker trained on clicks.

    Attributes
    ----------
    train_clicks, valid_clicks : ClickTrainingSet
        One row per shown document of every simulated session (``qid`` = session, ``y`` = clicked
        0/1, ``position`` = rank shown), on the training and on the validation queries. With
        ``prepare(..., merge_sessions=True)``, ``train_clicks`` holds each distinct session once
        (same query, documents, positions and clicks) with ``sample_weight`` = how many there were:
        a ranker trained on clicks must pass ``sample_weight`` (``fit_kwargs()`` does).
    logging : fitted model
        The logging ranker whose rankings were shown.
    click_model : ClickModel
    seed : int
        The experiment's seed (rankers use it as their ``random_state``).
    train, valid : RankingDataset
        The labelled splits: only the references that read true labels (the full-information
        and the shown-documents rows) may read their labels.
    swap_log : ClickLog or None
        With ``prepare(..., swap_sessions=n)``: ``n`` more sessions on the training queries
        with swap interventions (rank 1 traded with a uniformly drawn rank, the randomized share
        of traffic a production system spends on measuring its position bias), for propensity
        estimation (``estimate_propensity(swap_log, "swap")``); not part of ``train_clicks``.
    """

    train_clicks: ClickTrainingSet
    valid_clicks: ClickTrainingSet
    logging: Any
    click_model: ClickModel
    seed: int
    train: RankingDataset
    valid: RankingDataset
    swap_log: ClickLog | None = None

    def fit_kwargs(self) -> dict[str, Any]:
        """``qid``, ``sample_weight`` and ``position`` of the training clicks, as ``fit`` takes them."""
        t = self.train_clicks
        return dict(qid=t.qid, sample_weight=t.sample_weight, position=t.position)

    def eval_set(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The validation clicks as ``(X, y, qid)``, for early stopping."""
        v = self.valid_clicks
        return v.X, v.y, v.qid


def _logging_ranker(train: RankingDataset, fraction: float, seed: int) -> LambdaMART:
    """A small LambdaMART on the true labels of a random ``fraction`` of the training queries (at least 2)."""
    rng = np.random.default_rng(seed)
    n = max(2, int(round(fraction * train.n_queries)))
    part = train.subset(np.sort(rng.choice(train.n_queries, size=min(n, train.n_queries), replace=False)))
    model = LambdaMART(n_estimators=50, num_leaves=7, min_samples_leaf=5, random_state=seed)
    return model.fit(part.X, part.y, qid=part.qid)


def _shuffled_within_sessions(clicks: ClickTrainingSet, seed: int) -> ClickTrainingSet:
    """The rows of each session in a random order (sessions stay contiguous).

    Early stopping scores the validation sessions by NDCG of the clicks, and ranklearn's NDCG (as
    others) breaks score ties in row order: rows in display order would hand every tie the
    logging ranker's order, which the biased clicks reward, so that a model of one coarse tree
    (many ties) would out-score every later iteration on the validation clicks.
    """
    order = np.lexsort((np.random.default_rng(seed).random(clicks.qid.size), clicks.qid))
    return ClickTrainingSet(clicks.X[order], clicks.y[order], clicks.qid[order], clicks.sample_weight[order],
                            clicks.position[order], clicks.document[order])  # fmt: skip


def prepare(
    train: RankingDataset,
    valid: RankingDataset,
    click_model: ClickModel,
    *,
    n_sessions: int,
    seed: int = 0,
    logging_fraction: float = 0.01,
    top_k: int = 10,
    logging: Any | None = None,
    merge_sessions: bool = False,
    max_valid_sessions: int | None = None,
    swap_sessions: int = 0,
) -> ClickExperiment:
    """Train the logging ranker (unless given) and simulate the click logs of both splits.

    The validation queries get sessions in proportion to their number (at least one per
    query, at most ``max_valid_sessions`` when given), each session's rows in a random order
    (score ties of a model must not fall in the logged order); the two logs use different seeds.
    Labels above a query's ``max_grade`` follow :func:`ranklearn.clicks.simulate` (the largest
    label of the split, at least 1). ``merge_sessions=True``: the training clicks hold each
    distinct session once, weighted by its count (:meth:`ClickTrainingSet.per_pattern`): the
    same gradients for a ranker that weights them, in a training set that stops growing with
    the sessions once the click patterns repeat (10^6 sessions cost little more than 10^4).
    ``swap_sessions``: that many more training-query sessions with swap interventions, kept
    apart as ``swap_log`` (for propensity estimation only; seeded by ``2**32 + seed``, a stream
    no other experiment's logs use).

    Raises
    ------
    ValueError
        For ``n_sessions < 1``, ``max_valid_sessions < 1``, ``swap_sessions < 0`` or a
        ``logging_fraction`` outside (0, 1], and the errors of :func:`ranklearn.clicks.simulate`.
    """
    if not 0 < logging_fraction <= 1:
        raise ValueError(f"logging_fraction must be in (0, 1], got {logging_fraction!r}")
    if n_sessions < 1:
        raise ValueError(f"n_sessions must be at least 1, got {n_sessions!r}")
    if max_valid_sessions is not None and max_valid_sessions < 1:
        raise ValueError(f"max_valid_sessions must be at least 1, got {max_valid_sessions!r}")
    if swap_sessions < 0:
        raise ValueError(f"swap_sessions must be >= 0, got {swap_sessions!r}")
    if logging is None:
        logging = _logging_ranker(train, logging_fraction, seed)
    max_grade = max(1.0, float(train.y.max()), float(valid.y.max()))
    n_valid = max(valid.n_queries, int(round(n_sessions * valid.n_queries / train.n_queries)))
    if max_valid_sessions is not None:
        n_valid = max(valid.n_queries, min(n_valid, max_valid_sessions))
    logs = [
        simulate(split, logging.predict(split.X), click_model, n_sessions=n, top_k=top_k, seed=seed * 2 + part,
                 max_grade=max_grade)
        for part, (split, n) in enumerate(((train, n_sessions), (valid, n_valid)))
    ]  # fmt: skip
    train_clicks = (ClickTrainingSet.per_pattern if merge_sessions else ClickTrainingSet.per_session)(logs[0], train)
    valid_clicks = _shuffled_within_sessions(ClickTrainingSet.per_session(logs[1], valid), seed)
    swap_log = None
    if swap_sessions:
        swap_log = simulate(train, logging.predict(train.X), click_model, n_sessions=swap_sessions, top_k=top_k,
                            seed=2**32 + seed, max_grade=max_grade, intervention="swap")  # fmt: skip
    return ClickExperiment(train_clicks, valid_clicks, logging, click_model, seed, train, valid, swap_log)


def _settings(experiment: ClickExperiment, params: dict[str, Any]) -> dict[str, Any]:
    """The reference rows' LambdaMART settings, ``params`` overriding them."""
    return dict(n_estimators=500, early_stopping_rounds=50, random_state=experiment.seed) | params


def naive_ranker(experiment: ClickExperiment, **params: Any) -> LambdaMART:
    """LambdaMART on the clicks as labels (positions ignored), early-stopped on the validation clicks.

    ``params`` override LambdaMART's settings here (``n_estimators=500, early_stopping_rounds=50``,
    ``random_state`` the experiment's seed, the rest LambdaMART's defaults).
    """
    t = experiment.train_clicks
    return LambdaMART(**_settings(experiment, params)).fit(
        t.X, t.y, qid=t.qid, sample_weight=t.sample_weight, eval_set=[experiment.eval_set()]
    )


def full_information_ranker(experiment: ClickExperiment, **params: Any) -> LambdaMART:
    """The skyline: LambdaMART on the training queries' true labels, early-stopped on the validation
    queries' true labels (with :func:`shown_information_ranker`, the rows that read them). A
    reference, not a bound: a model of another kind, or other settings, may score above it.

    ``params`` override LambdaMART's settings here (``n_estimators=500, early_stopping_rounds=50``,
    ``random_state`` the experiment's seed, the rest LambdaMART's defaults).
    """
    tr, va = experiment.train, experiment.valid
    return LambdaMART(**_settings(experiment, params)).fit(tr.X, tr.y, qid=tr.qid, eval_set=[(va.X, va.y, va.qid)])


def shown_information_ranker(experiment: ClickExperiment, **params: Any) -> LambdaMART:
    """A reference: LambdaMART on the true labels of the shown documents only.

    It trains on the training queries' documents that some training session showed (the rows of
    ``train_clicks``, each once, with its true label) and is early-stopped on the true labels of the
    validation documents that some validation session showed: what LambdaMART at these settings
    learns from the documents a ranker trained on the clicks sees, with their labels in place of
    the clicks. Set beside the full-information row (every document), it shows how much of the
    gap the logging ranker's selection of documents alone leaves to these trees. It bounds
    neither other models (a network generalizes from the same documents otherwise) nor other
    settings of LambdaMART. Like :func:`full_information_ranker`, it reads true labels.

    ``params`` override LambdaMART's settings here (``n_estimators=500, early_stopping_rounds=50``,
    ``random_state`` the experiment's seed, the rest LambdaMART's defaults), e.g. ``num_leaves=7``.
    A query no session showed has no rows (a split's rows stay grouped by query).
    """
    train_rows = np.unique(experiment.train_clicks.document)  # ascending: each query's rows stay together
    valid_rows = np.unique(experiment.valid_clicks.document)
    tr, va = experiment.train, experiment.valid
    return LambdaMART(**_settings(experiment, params)).fit(
        tr.X[train_rows], tr.y[train_rows], qid=tr.qid[train_rows],
        eval_set=[(va.X[valid_rows], va.y[valid_rows], va.qid[valid_rows])],
    )  # fmt: skip


#: the protocol's reference rows (the logging ranker is always a row)
REFERENCES: dict[str, Callable[[ClickExperiment], Any]] = {
    "naive": naive_ranker,
    "full information": full_information_ranker,
}


@dataclass
class ProtocolResult:
    """Test-query values of every ranker: ``per_query[ranker][metric]`` (float64 per test query).

    ``conventions`` states the metrics' conventions; ``settings`` the experiment's.
    """

    per_query: dict[str, dict[str, np.ndarray]]
    conventions: str
    settings: dict[str, Any] = field(default_factory=dict)

    def means(self) -> dict[str, dict[str, float]]:
        """Mean of every metric over the test queries, per ranker."""
        return {name: {m: float(v.mean()) for m, v in values.items()} for name, values in self.per_query.items()}


def run_protocol(
    train: RankingDataset,
    valid: RankingDataset,
    test: RankingDataset,
    click_model: ClickModel,
    *,
    n_sessions: int,
    seed: int = 0,
    rankers: Mapping[str, Callable[[ClickExperiment], Any]] | None = None,
    metrics: Sequence[str] = METRICS,
    logging_fraction: float = 0.01,
    top_k: int = 10,
    merge_sessions: bool = False,
    max_valid_sessions: int | None = None,
    swap_sessions: int = 0,
) -> ProtocolResult:
    """Run the whole protocol on one split of labelled data (see the module docstring).

    Parameters
    ----------
    train, valid, test : RankingDataset
        Labelled splits (e.g. one LETOR fold): clicks are simulated on train and valid, the
        rankers are tested on test's true labels.
    click_model : ClickModel
        e.g. ``PBM(eta=1.0, epsilon=0.1)``.
    n_sessions : int
        Sessions simulated on the training queries.
    seed : int
        Seeds the logging ranker's queries, the simulation and every ranker.
    rankers : mapping of name -> function(ClickExperiment) -> fitted model, optional
        Rankers to compare besides the references (logging, naive, full information). A function
        may return None when the experiment cannot train it (e.g. propensities that its clicks
        cannot estimate): it then has no row, and ``settings["skipped"]`` names it.
    metrics : sequence of str
        Metric specs, on the test labels.
    merge_sessions, max_valid_sessions, swap_sessions
        As :func:`prepare`.

    Returns
    -------
    ProtocolResult
    """
    experiment = prepare(train, valid, click_model, n_sessions=n_sessions, seed=seed,
                         logging_fraction=logging_fraction, top_k=top_k, merge_sessions=merge_sessions,
                         max_valid_sessions=max_valid_sessions, swap_sessions=swap_sessions)  # fmt: skip
    scorers = [get_metric(m) for m in metrics]
    ptr = group_ptr(test.qid)
    fitted = {"logging": experiment.logging}
    skipped = []
    for name, make in {**REFERENCES, **(rankers or {})}.items():
        model = make(experiment)
        if model is None:
            skipped.append(name)
        else:
            fitted[name] = model
    per_query = {}
    for name, model in fitted.items():
        scores = np.asarray(model.predict(test.X), dtype=np.float64)
        per_query[name] = {m.name: m.per_query(test.y, scores, ptr) for m in scorers}
    settings = dict(click_model=repr(click_model), n_sessions=n_sessions, seed=seed,
                    logging_fraction=logging_fraction, top_k=top_k,
                    train_rows=int(experiment.train_clicks.y.size), swap_sessions=swap_sessions,
                    valid_rows=int(experiment.valid_clicks.y.size), skipped=skipped,
                    train_click_rate=float(np.average(experiment.train_clicks.y,
                                                      weights=experiment.train_clicks.sample_weight)))  # fmt: skip
    return ProtocolResult(per_query, scorers[0].conventions, settings)
