"""AllreduceHistogramBuilder: ranks holding parts of the rows grow one machine's tree."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ranklearn.collective import StarComm, open_listener
from ranklearn.tree.allreduce_builder import AllreduceHistogramBuilder, pack_histogram, packed_size, unpack_histogram
from ranklearn.tree.binning import MISSING_BIN
from ranklearn.tree.grower import TreeGrower

FIELDS = ("feature", "bin_threshold", "missing_left", "left", "right", "count")


def _data(n=4000, n_features=8, seed=0):
    rng = np.random.default_rng(seed)
    n_bins = rng.integers(2, 60, n_features).astype(np.int64)
    binned = (rng.random((n_features, n)) * n_bins[:, None]).astype(np.uint8)
    binned[rng.random((n_features, n)) < 0.05] = MISSING_BIN
    return binned, n_bins, rng.normal(size=n), rng.uniform(0.1, 1.0, n)


def test_pack_and_unpack_move_the_value_bins_and_the_missing_bin_of_each_feature():
    rng = np.random.default_rng(1)
    hist = rng.normal(size=(3, 256, 3))
    features, n_bins = np.array([0, 2]), np.array([3, 9, 2])
    out = np.full(2 + packed_size(features, n_bins), -1.0)
    pack_histogram(hist, features, n_bins, out, 2)
    expect = np.concatenate([hist[0, :3], hist[0, [MISSING_BIN]], hist[2, :2], hist[2, [MISSING_BIN]]]).ravel()
    np.testing.assert_array_equal(out[2:], expect)
    assert out[:2].tolist() == [-1.0, -1.0]
    back = np.zeros_like(hist)
    unpack_histogram(out, 2, features, n_bins, back)
    for f, nb in ((0, 3), (2, 2)):
        np.testing.assert_array_equal(back[f, :nb], hist[f, :nb])
        np.testing.assert_array_equal(back[f, MISSING_BIN], hist[f, MISSING_BIN])
    assert not back[1].any()  # a feature not asked for is untouched


class _Counting:
    """A communicator that counts its exchanges."""

    def __init__(self, comm):
        self.comm, self.calls = comm, 0

    def allreduce(self, values):
        self.calls += 1
        return self.comm.allreduce(values)


def _run_ranks(cuts: list[int], body, timeout: float = 60) -> list:
    """Run ``body(comm, a, b)`` for each rank holding rows ``cuts[r]:cuts[r + 1]``, in threads
    joined by a real StarComm (counting its exchanges); the ranks' results, in rank order."""
    n_ranks = len(cuts) - 1
    listeners = [open_listener("127.0.0.1") for _ in range(n_ranks)]
    addresses = [lst.getsockname()[:2] for lst in listeners]
    out = [None] * n_ranks

    def rank(r):
        comm = _Counting(StarComm.connect(r, addresses, listeners[r], b"t", 10))
        out[r] = body(comm, cuts[r], cuts[r + 1])
        comm.comm.close()

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n_ranks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return out


@pytest.mark.parametrize(
    "limits, bag, features",
    [
        (dict(num_leaves=31, min_samples_leaf=20), False, None),
        (dict(num_leaves=15, min_samples_leaf=5, max_depth=3, l2_regularization=1.0), False, None),
        (dict(num_leaves=20, min_samples_leaf=10), True, np.array([1, 3, 4, 6])),
        (dict(num_leaves=40, min_samples_leaf=400), False, None),  # stops before the leaf budget
        (dict(num_leaves=8, min_samples_leaf=20, leaf_order="deviance"), True, None),  # RankLib's order
    ],
)
def test_ranks_with_parts_of_the_rows_grow_the_one_machine_tree(limits, bag, features):
    binned, n_bins, g, h = _data()
    n = binned.shape[1]
    samples = np.flatnonzero(np.random.default_rng(2).random(n) < 0.6) if bag else None
    ref, ref_samples, ref_ranges = TreeGrower(binned, n_bins, g, h, samples=samples, features=features, **limits).grow()

    def rank(comm, a, b):
        local = None if samples is None else samples[(samples >= a) & (samples < b)] - a
        builder = AllreduceHistogramBuilder(comm, np.ascontiguousarray(binned[:, a:b]), n_bins, g[a:b], h[a:b],
                                            samples=local, features=features)  # fmt: skip
        tree, leaf_samples, ranges = TreeGrower.from_builder(builder, n_bins, **limits).grow()
        return tree, leaf_samples + a, ranges, comm.calls

    out = _run_ranks([0, 1300, 1300, n], rank)  # three ranks, the second holding no row
    n_splits = int((ref.left >= 0).sum())
    assert n_splits > 2
    leaf_rows = {}
    for tree, leaf_samples, ranges, calls in out:
        for name in FIELDS:
            np.testing.assert_array_equal(getattr(tree, name), getattr(ref, name))
        np.testing.assert_allclose(tree.value, ref.value, rtol=1e-12, atol=1e-15)  # sums in another order
        assert calls == 1 + n_splits  # the root's sums and histogram, then one exchange a split
        for node, start, end in ranges:
            leaf_rows.setdefault(int(node), []).extend(leaf_samples[start:end].tolist())
    # every rank's local rows of a leaf, together, are the leaf's rows on one machine
    for node, start, end in ref_ranges:
        assert sorted(leaf_rows[int(node)]) == sorted(ref_samples[start:end].tolist())


def test_histograms_asked_directly_are_summed_over_the_ranks_in_one_exchange():
    from ranklearn.tree.histogram_builder import HistogramBuilder

    binned, n_bins, g, h = _data(n=600, n_features=5, seed=3)
    ref = HistogramBuilder(binned, n_bins, g, h)
    ref.root()
    ref.split(0, 1, int(n_bins[1]) // 2, True, 1, 2)
    expect = ref.histograms([1, 2])

    def rank(comm, a, b):
        builder = AllreduceHistogramBuilder(comm, np.ascontiguousarray(binned[:, a:b]), n_bins, g[a:b], h[a:b])
        builder.root()
        builder.histograms([0])  # the root's, exchanged with its sums: no exchange now
        before = comm.calls
        builder.split(0, 1, int(n_bins[1]) // 2, True, 1, 2)  # one exchange: the smaller child's comes with it
        got = builder.histograms([1, 2])  # the larger one: one more exchange
        return got, comm.calls - before

    for got, calls in _run_ranks([0, 250, 600], rank, timeout=30):
        assert calls == 2
        for a, b in zip(got, expect):
            for f, nb in enumerate(n_bins):
                np.testing.assert_allclose(a[f, :nb], b[f, :nb], rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(a[f, MISSING_BIN], b[f, MISSING_BIN], rtol=1e-12, atol=1e-12)
