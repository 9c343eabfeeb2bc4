"""Best-first growth that splits several leaves per call to the rows, and still grows TreeGrower's tree.

:class:`~ranklearn.tree.grower.TreeGrower` splits one leaf at a time: the best leaf, then the
best of the leaves left and the two new ones, and so on. Where the rows are far away (a Dask
cluster), each split is a round trip to every worker. :class:`BatchedTreeGrower` replays the
same sequence of decisions on the client, and sends the splits it will probably need ahead of
time, several per round trip:

* a heap of the tree's leaves ordered by (-gain, node id), node ids numbered as TreeGrower
  numbers them (the children of the k-th split are 2k + 1 and 2k + 2), so ties break alike;
* popping the best leaf *commits* its split. If the rows have not been split there yet, one
  call splits it together with up to ``batch - 1`` other leaves with the highest gains whose
  split is known and not made yet (in the heap, or children of leaves split ahead), never
  more than leaves the tree may still grow; the rows return the sums of each new child and
  the histogram of the smaller one, the client derives the larger one by subtraction and
  searches both children's best splits, exactly as TreeGrower does for one split.
  Committing a leaf split ahead needs no call.
* when the tree is full or no leaf gains, the splits made ahead and never committed are
  undone on the rows (:meth:`HistogramBuilder.merge`): those leaves stay leaves.

A split's outcome (the children's sums, histograms and best splits) depends only on the leaf
and its rows, not on when it is made, and the order of the commits is TreeGrower's, so the
tree is the same, node for node. Only the order in which the rows are split changes, and
splits made ahead but undone are wasted work.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from ranklearn.tree.binning import MISSING_BIN
from ranklearn.tree.grower import GrowerNode, TreeGrower
from ranklearn.tree.histogram import subtract_histogram
from ranklearn.tree.tree import Tree

#: splits sent to the rows in one call at most: on synthetic data with 31 leaves, 30 splits took
#: 30 / 16 / 10 / 9 calls with batches of 1 / 2 / 4 / 8, undoing 0 / 0 / 5 / 25 splits made ahead
DEFAULT_BATCH = 4


class BatchedTreeGrower(TreeGrower):
    """Grow TreeGrower's tree with up to ``batch`` splits per call to the builder.

    Build it with :meth:`TreeGrower.from_builder`, then set :attr:`batch`. The builder needs
    :meth:`HistogramBuilder.split_batch` and :meth:`HistogramBuilder.merge` besides the
    interface TreeGrower uses.

    Attributes
    ----------
    batch : int
        Splits per call at most (1: one split per call, as TreeGrower).
    calls : int
        Calls to :meth:`HistogramBuilder.split_batch` of the last :meth:`grow`.
    undone : int
        Splits made ahead and undone in the last :meth:`grow`.
    leaf_nodes : ndarray of int64
        The builder's node id of every leaf of the last tree, in the tree's leaf order
        (``np.flatnonzero(tree.left < 0)``): the builder numbers nodes as they are split, the
        tree as the splits are committed.
    """

    batch: int = DEFAULT_BATCH

    def grow(self) -> tuple[Tree, np.ndarray, np.ndarray]:
        """Grow the tree: the same tree, samples and leaf ranges as :meth:`TreeGrower.grow`."""
        builder = self.builder
        self.calls = self.undone = 0
        nodes = [GrowerNode(0, *builder.root())]  # by builder id
        tree_id = {0: 0}  # builder id -> tree id, for committed nodes and their children
        order = [0]  # builder ids by tree id
        heap: list[tuple[float, int, int]] = []  # (-gain, tree id, builder id)
        root = nodes[0]
        if self._splittable(root) and self.num_leaves > 1:
            (root.hist,) = builder.histograms([0])
            self._find_split(root)
            if root.split is not None:
                heap.append((-root.split.gain, 0, 0))
        ahead: set[int] = set()  # split on the rows, not committed
        n_leaves = 1
        while heap and n_leaves < self.num_leaves:
            _, _, bid = heap[0]
            if nodes[bid].children is None:
                # ahead: the best other leaves with a split, in the heap or below a leaf split ahead
                room = max(1, min(self.batch, self.num_leaves - n_leaves))
                others = [(-n.split.gain, i) for i, n in enumerate(nodes) if i != bid and self._pending(n)]
                todo = [bid] + [i for _, i in heapq.nsmallest(room - 1, others)]
                self._split(nodes, todo)
                ahead.update(todo)
            heapq.heappop(heap)
            ahead.discard(bid)
            n_leaves += 1
            for cid in nodes[bid].children:
                tree_id[cid] = len(order)
                order.append(cid)
            if n_leaves < self.num_leaves:
                for cid in nodes[bid].children:
                    c = nodes[cid]
                    if c.split is not None:
                        heapq.heappush(heap, (-c.split.gain, tree_id[cid], cid))
        for bid in sorted(ahead, reverse=True):  # a leaf split ahead below another one first
            left, right = nodes[bid].children
            builder.merge(bid, left, right)
            nodes[bid].children = None
        self.undone = len(ahead)
        tree_nodes = []
        for bid in order:
            node = nodes[bid]
            if node.children is not None:
                node.children = (tree_id[node.children[0]], tree_id[node.children[1]])
            tree_nodes.append(node)
        self.leaf_nodes = np.array([bid for bid in order if nodes[bid].children is None], dtype=np.int64)
        return self._finish(tree_nodes)

    def _leaf_rows(self, leaves: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        # the builder knows the leaves by its own ids
        samples, ranges = self.builder.leaf_rows(self.leaf_nodes)
        ranges[:, 0] = leaves
        return samples, ranges

    @staticmethod
    def _pending(node: GrowerNode) -> bool:
        """Whether ``node`` has a split to make and is not split on the rows yet."""
        return node.split is not None and node.children is None and node.hist is not None

    def _split(self, nodes: list[GrowerNode], todo: Sequence[int]) -> None:
        """Split the leaves ``todo`` on the rows in one call and search their children's splits."""
        requests = []
        for bid in todo:
            node = nodes[bid]
            s = node.split
            ids = (len(nodes), len(nodes) + 1)
            node.children = ids
            counts = node.hist[s.feature, :, 2]
            n_left = counts[: s.bin_threshold + 1].sum() + (counts[MISSING_BIN] if s.missing_left else 0.0)
            n_right = node.count - n_left
            depth_ok = self.max_depth is None or node.depth + 1 < self.max_depth
            wanted = depth_ok and max(n_left, n_right) >= 2 * self.min_samples_leaf
            # the smaller child is built from rows (the left one on a tie), as TreeGrower does
            build = (ids[1] if n_right < n_left else ids[0]) if wanted else None
            requests.append((bid, s.feature, s.bin_threshold, s.missing_left, *ids, build))
            nodes.extend(GrowerNode(node.depth + 1, 0.0, 0.0, 0) for _ in ids)
        self.calls += 1
        for (bid, *_, left, right, build), (sums_l, sums_r, small) in zip(requests, self.builder.split_batch(requests)):
            node = nodes[bid]
            children = (nodes[left], nodes[right])
            for c, sums in zip(children, (sums_l, sums_r)):
                c.sum_g, c.sum_h, c.count = sums
            parent_hist, node.hist = node.hist, None
            if build is None:
                continue
            # the larger child is the parent minus the smaller, in the parent's memory
            subtract_histogram(parent_hist, small, self.builder.features, self.n_bins, parent_hist)
            k = 0 if build == left else 1
            children[k].hist, children[1 - k].hist = small, parent_hist
            for c in children:
                if self._splittable(c):
                    self._find_split(c)
                if c.split is None:
                    c.hist = None
