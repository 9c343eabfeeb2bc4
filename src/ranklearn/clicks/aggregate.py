"""A click log aggregated into counts, and into training rows joined with the documents' features."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ranklearn.clicks.log import ClickLog
    from ranklearn.data import RankingDataset


def runs(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order sorting rows by ``keys`` (first key most significant) and the start of each run
    of equal keys in that order (with the end appended)."""
    order = np.lexsort(keys[::-1])
    change = np.zeros(len(order), dtype=bool)
    if len(order):
        change[0] = True
        for k in keys:
            s = k[order]
            change[1:] |= s[1:] != s[:-1]
    return order, np.append(np.flatnonzero(change), len(order))


def dataset_rows(dataset: RankingDataset, query: np.ndarray, document: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The dataset row of each (query id, document index within the query), and each one's query index.

    Raises
    ------
    ValueError
        For a query id that is not in ``dataset`` or a document index past its query's rows.
    """
    ids = np.asarray(dataset.query_ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("click logs name queries by integer ids; the dataset's query ids are not integers")
    by_id = np.argsort(ids, kind="stable")
    at = np.minimum(np.searchsorted(ids[by_id], query), len(ids) - 1)
    found = ids[by_id][at] == query
    if not found.all():
        raise ValueError(f"click log query {query[np.flatnonzero(~found)[0]]} is not in the dataset")
    q_index = by_id[at]
    sizes = np.diff(dataset.ptr)[q_index]
    past = document >= sizes
    if past.any():
        i = int(np.flatnonzero(past)[0])
        raise ValueError(
            f"click log document {document[i]} of query {query[i]}: the query has {sizes[i]} rows in the dataset "
            "(documents are 0-based row indices within their query)"
        )
    return dataset.ptr[q_index] + document, q_index


@dataclass(frozen=True, eq=False)
class ClickTrainingSet:
    """Training rows from clicks: features, labels, query ids, weights and display positions.

    Rows of a query are contiguous. Fit a ranker with
    ``model.fit(t.X, t.y, qid=t.qid, sample_weight=t.sample_weight, position=t.position)``
    (or ``t.ctr`` as the label: clicks per impression).

    Attributes
    ----------
    X : features of each row's document (rows of the source dataset's ``X``)
    y : ndarray of float64, clicks
    qid : ndarray of int64, query ids (session ids for per-session rows)
    sample_weight : ndarray of float64, impressions
    position : ndarray of int64 or None, the 1-based rank shown (None when positions are pooled)
    document : ndarray of int64, the dataset row of each row's document
    """

    X: Any
    y: np.ndarray
    qid: np.ndarray
    sample_weight: np.ndarray
    position: np.ndarray | None
    document: np.ndarray

    @property
    def ctr(self) -> np.ndarray:
        """Click-through rate of each row: clicks / impressions."""
        return self.y / self.sample_weight

    def to_dataset(self) -> RankingDataset:
        """The rows as a :class:`~ranklearn.data.RankingDataset` (labels = clicks, with the positions;
        the impressions, a per-row weight, are not part of a dataset: see ``sample_weight``)."""
        from ranklearn.data import RankingDataset, group_ptr

        ptr = group_ptr(self.qid)
        return RankingDataset(self.X, self.y, ptr, query_ids=self.qid[ptr[:-1]], position=self.position)

    @classmethod
    def per_session(cls, log: ClickLog, dataset: RankingDataset) -> ClickTrainingSet:
        """One row per impression, grouped by session (sessions in id order, rows by position)."""
        order, _ = runs(log.session, log.position)
        rows, _ = dataset_rows(dataset, log.query[order], log.document[order])
        return cls(
            dataset.X[rows],
            log.click[order].astype(np.float64),
            log.session[order],
            np.ones(len(order)),
            log.position[order],
            rows,
        )

    @classmethod
    def per_pattern(cls, log: ClickLog, dataset: RankingDataset) -> ClickTrainingSet:
        """One group per distinct session: sessions of a query that showed the same documents at
        the same positions and got the same clicks are one group, ``sample_weight`` = how many.

        The same training signal as :meth:`per_session` for a ranker whose gradients (and
        position-bias statistics) are sums over sessions times the sample weights, in far fewer
        rows: a query's sessions under a deterministic logging ranker differ only in their
        clicks, and a click log of 10^6 sessions has far fewer distinct click patterns. Groups are
        in the order of their first session's id (``qid`` = that session's id), rows by position.
        """
        order, starts = runs(log.session, log.position)
        session, position = log.session[order], log.position[order]
        first = np.flatnonzero(np.r_[True, session[1:] != session[:-1]])
        per = np.diff(np.r_[first, session.size])
        # a session as one key row: its query, then document * 2 + click at each position (-1: not shown)
        keys = np.full((first.size, int(position.max(initial=1)) + 1), -1, dtype=np.int64)
        which = np.repeat(np.arange(first.size), per)
        keys[:, 0] = log.query[order][first]
        keys[which, position] = log.document[order] * 2 + log.click[order]
        _, representative, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        count = np.bincount(inverse.ravel(), minlength=representative.size)
        is_first = np.zeros(first.size, dtype=bool)
        is_first[representative] = True
        chosen = np.repeat(is_first, per)
        weight = np.zeros(first.size)
        weight[representative] = count
        rows, _ = dataset_rows(dataset, log.query[order][chosen], log.document[order][chosen])
        return cls(
            dataset.X[rows],
            log.click[order][chosen].astype(np.float64),
            session[chosen],
            np.repeat(weight, per)[chosen],
            position[chosen],
            rows,
        )


@dataclass(frozen=True, eq=False)
class ClickCounts:
    """Clicks and impressions per (query, document, position), sorted by query, document and position.

    Attributes
    ----------
    query, document, position, clicks, impressions : ndarray of int64
    """

    query: np.ndarray
    document: np.ndarray
    position: np.ndarray
    clicks: np.ndarray
    impressions: np.ndarray

    @classmethod
    def from_log(cls, log: ClickLog) -> ClickCounts:
        order, starts = runs(log.query, log.document, log.position)
        first = order[starts[:-1]]
        clicks = np.add.reduceat(log.click[order].astype(np.int64), starts[:-1]) if len(order) else np.zeros(0, np.int64)
        return cls(log.query[first], log.document[first], log.position[first], clicks, np.diff(starts))

    def __len__(self) -> int:
        return len(self.query)

    def training_set(self, dataset: RankingDataset, *, pool_positions: bool = False) -> ClickTrainingSet:
        """One training row per (query, document, position), ``y`` = clicks, ``sample_weight`` =
        impressions, with the document's features from ``dataset`` (the dataset the log was
        simulated on or logged from: ``document`` is the row index within the query). Queries
        come in the dataset's order. ``pool_positions=True``: one row per (query, document),
        counts summed over positions, ``position`` None.

        Raises
        ------
        ValueError
            For a query id not in ``dataset`` or a document index past its query's rows.
        """
        rows, q_index = dataset_rows(dataset, self.query, self.document)
        if pool_positions:
            order, starts = runs(q_index, self.document)
            first = order[starts[:-1]]
            clicks = np.add.reduceat(self.clicks[order], starts[:-1])
            impressions = np.add.reduceat(self.impressions[order], starts[:-1])
            position = None
        else:
            order, _ = runs(q_index, self.document, self.position)
            first, clicks, impressions, position = order, self.clicks[order], self.impressions[order], self.position[order]
        rows = rows[first]
        return ClickTrainingSet(
            dataset.X[rows],
            clicks.astype(np.float64),
            self.query[first],
            impressions.astype(np.float64),
            position,
            rows,
        )
