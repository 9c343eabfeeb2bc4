"""Positions reach every ranker's objective or loss as side data, in the rows' training order,
from arrays and from files; rankers that read none say so."""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np
import pytest

from ranklearn.data import load_svmlight, save_svmlight
from ranklearn.data.dataset import from_arrays
from ranklearn.model_selection import cross_validate
from ranklearn.registry import REGISTRY

from tests._helpers import needs_torch, ranker_class


def shuffled_clicks(n_queries=8, docs=6, seed=0):
    """Rows of interleaved queries (so fit reorders them); the position names the row: position
    = 1 + the row's index, and the label is a function of it, so a loss can check the pairing."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    qid = rng.permutation(np.repeat(np.arange(n_queries), docs))
    position = np.arange(1, n + 1)
    y = (position % 3).astype(float)
    X = rng.normal(size=(n, 3))
    return X, y, qid, position


def _recording_loss():
    import torch

    from ranklearn.neural.losses import ListNetLoss

    class Recording(ListNetLoss):
        """ListNet that records the (label, position) pairs of every real document it sees."""

        side_keys = ("position",)
        seen: ClassVar[list] = []

        def gradient(self, scores, labels, mask, side=None):
            pos, lab = side["position"][mask], labels[mask]
            Recording.seen.append(torch.stack([lab.double(), pos.double()], 1).cpu().numpy())
            assert (side["position"][~mask] == 0).all()  # padding carries no position
            return super().gradient(scores, labels, mask)

    return Recording


@needs_torch
@pytest.mark.parametrize("name", ["ranknet", "lambdarank", "listnet"])
def test_neural_loss_receives_positions_of_its_rows(name):
    Recording = _recording_loss()
    Recording.seen.clear()
    X, y, qid, position = shuffled_clicks()
    model = REGISTRY[name].load_class()(hidden=(4,), n_estimators=2, random_state=0, loss=Recording())
    model.fit(X, y, qid, position=position)
    seen = np.concatenate(Recording.seen)
    assert np.array_equal(seen[:, 0], seen[:, 1] % 3)  # every position arrived beside its own row's label
    assert np.array_equal(np.sort(seen[:, 1]), np.repeat(position, 2))  # two epochs over every row


@needs_torch
def test_loss_that_reads_positions_needs_them():
    Recording = _recording_loss()
    X, y, qid, _ = shuffled_clicks()
    model = REGISTRY["listnet"].load_class()(hidden=(4,), n_estimators=1, loss=Recording())
    with pytest.raises(ValueError, match=r"ListNet\(loss='listnet'\) needs position=: the 1-based rank"):
        model.fit(X, y, qid)  # before training


@needs_torch
def test_positions_from_a_file_reach_the_loss(tmp_path):
    Recording = _recording_loss()
    Recording.seen.clear()
    X, y, qid, position = shuffled_clicks()
    save_svmlight(from_arrays(X, y, qid, position=position, regroup=True), tmp_path / "clicks.txt")
    ds = load_svmlight(tmp_path / "clicks.txt")  # the sidecar comes back beside its rows
    REGISTRY["listnet"].load_class()(hidden=(4,), n_estimators=1, random_state=0, loss=Recording()).fit(
        ds.X, ds.y, ds.qid, position=ds.position
    )
    seen = np.concatenate(Recording.seen)
    assert np.array_equal(seen[:, 0], seen[:, 1] % 3) and np.array_equal(np.sort(seen[:, 1]), position)


class RecordingObjective:
    """A tree objective (squared error) that records the (label, position) pairs of every row it
    is given; a class-level record, as a ranker copies its objective for each fit."""

    side_keys = ("position",)
    seen: ClassVar[list] = []

    def gradients(self, scores, y, ptr, side=None):
        RecordingObjective.seen.append(np.column_stack([y, side["position"]]).astype(float))
        return scores - y, np.ones_like(scores)


def _position_reader(cls: type) -> tuple[str, object, list] | None:
    """``(parameter, reader, its record)``: the user's object that reads positions through the
    ranker's public side-data protocol, a tree ``objective=`` (``gradients(..., side=)``) or a
    neural ``loss=`` (``Loss.side_keys``); None for a ranker that takes neither."""
    params = cls().get_params()
    if "loss" in params:
        Recording = _recording_loss()
        Recording.seen.clear()
        return "loss", Recording(), Recording.seen
    if "objective" in params:
        RecordingObjective.seen.clear()
        return "objective", RecordingObjective(), RecordingObjective.seen
    return None


def check_declared_positions(spec) -> None:
    """``ModelSpec.positions`` against behaviour, with the ranker's test settings. Every ranker warns
    that its test settings ignore ``position=`` and fits the model it fits without them (none of
    them debiases). A ranker declaring ``positions=True`` delivers them, in its rows' order, to an
    objective or loss that reads them; one declaring False never delivers them: with such an
    objective or loss too, it warns or refuses, and the object sees no position."""
    cls = ranker_class(spec)
    X, y, qid, position = shuffled_clicks()
    with pytest.warns(UserWarning, match="ignores position=.*does not read it"):
        with_pos = cls(**spec.test).fit(X, y, qid, position=position)
    plain = cls(**spec.test).fit(X, y, qid)
    assert np.array_equal(with_pos.predict(X), plain.predict(X)), spec.name
    reader = _position_reader(cls)
    if spec.positions:
        assert reader is not None, f"{spec.name} declares positions=True but takes no objective= or loss= to read them"
        param, obj, seen = reader
        cls(**{**spec.test, param: obj}).fit(X, y, qid, position=position)
        got = np.concatenate(seen)
        assert np.array_equal(got[:, 0], got[:, 1] % 3), spec.name  # each position beside its own row's label
        assert set(got[:, 1]) <= set(position) and len(got) >= len(position), spec.name
    elif reader is not None:
        param, obj, seen = reader
        refused = False
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                cls(**{**spec.test, param: obj}).fit(X, y, qid, position=position)
            except ValueError:  # such an object, or the positions, refused: nothing read them
                refused = True
        assert not seen, f"{spec.name} declares positions=False but gave them to its {param}"
        assert refused or any("ignores position=" in str(w.message) for w in caught), spec.name


@pytest.mark.parametrize("name", list(REGISTRY))
def test_declared_positions_match_what_the_fit_delivers(name):
    check_declared_positions(REGISTRY[name])


def test_bad_positions_are_refused_before_training():
    X, y, qid, position = shuffled_clicks()
    model = REGISTRY["lambdamart"].load_class()(n_estimators=2)
    with pytest.raises(ValueError, match=r"position must be >= 1 \(1 = shown first\): 0 at row 3"):
        model.fit(X, y, qid, position=np.where(np.arange(len(y)) == 3, 0, position))
    with pytest.raises(ValueError, match="position has 47 values for 48 rows"):
        model.fit(X, y, qid, position=position[:-1])
    assert not hasattr(model, "n_iter_")


@needs_torch
def test_cross_validate_gives_each_fold_its_positions():
    Recording = _recording_loss()
    Recording.seen.clear()
    X, y, qid, position = shuffled_clicks()
    model = REGISTRY["listnet"].load_class()(hidden=(4,), n_estimators=1, random_state=0, loss=Recording())
    cross_validate(model, X, y, qid=qid, cv=2, position=position)
    seen = np.concatenate(Recording.seen)
    assert np.array_equal(seen[:, 0], seen[:, 1] % 3)
    assert np.array_equal(np.sort(seen[:, 1]), position)  # each row trains in exactly one fold
    with pytest.raises(ValueError, match="position has 3 values for 48 rows"):
        cross_validate(model, X, y, qid=qid, cv=2, position=[1, 2, 3])


def test_the_positions_check_catches_a_false_declaration():
    import dataclasses

    with pytest.raises(AssertionError, match="lambdamart declares positions=False but gave them to its objective"):
        check_declared_positions(dataclasses.replace(REGISTRY["lambdamart"], positions=False))
