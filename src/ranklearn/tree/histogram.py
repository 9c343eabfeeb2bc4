"""Per-leaf gradient/hessian/count histograms, and the subtraction trick.

A histogram is a float64 array (n_features, 256, 3): for every feature and bin the sums of
gradients, hessians and the number of samples. Only the smaller child of a split is built
from the data; the larger one is its parent minus the smaller.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from ranklearn.tree.binning import MISSING_BIN, N_HIST_BINS


def new_histogram(n_features: int) -> np.ndarray:
    """An uninitialised histogram for ``n_features`` features."""
    return np.empty((n_features, N_HIST_BINS, 3), dtype=np.float64)


FEATURE_CHUNKS = 16  # parallel tasks; fixed so results never depend on the thread count
GROUP = 4  # features summed in one pass over the rows: four independent add chains, one row read
#: rows whose bins are prefetched ahead of their use, when a node's rows are sparse: at under
#: one row in SPARSE of its span, each row's bins are a cache miss the hardware does not foresee
#: (measured, 200,000 x 136, 1 thread: 4% of the rows 3.2 -> 2.3 ms; above ~12% slower: the
#: lines are streamed already)
PREFETCH_AHEAD = 32
SPARSE = 8


@intrinsic
def _add_to_bin(typingctx, acc, offset, g, h):
    """``acc.ravel()[offset:offset + 4] += (g, h, 1.0, 0.0)`` as one 4-lane vector add.

    ``acc`` is a C-contiguous float64 array whose last axis is a bin's (gradient, hessian,
    count, padding). One load, add and store a bin instead of three of each: LLVM leaves the
    three scalar adds as they are, and they were most of a histogram's time. Each lane is the
    same IEEE addition as the scalar one, so the sums are bit for bit the same.
    """
    if not (isinstance(acc, types.Array) and acc.dtype == types.float64 and acc.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        acc_v, offset_v, g_v, h_v = args
        data = context.make_array(signature.args[0])(context, builder, acc_v).data
        lanes = ir.VectorType(ir.DoubleType(), 4)
        ptr = builder.bitcast(builder.gep(data, [offset_v], inbounds=True), lanes.as_pointer())
        add = ir.Constant(lanes, [0.0, 0.0, 1.0, 0.0])
        add = builder.insert_element(add, g_v, ir.Constant(ir.IntType(32), 0))
        add = builder.insert_element(add, h_v, ir.Constant(ir.IntType(32), 1))
        builder.store(builder.fadd(builder.load(ptr, align=8), add), ptr, align=8)
        return context.get_dummy_value()

    return types.void(acc, types.intp, types.float64, types.float64), codegen


@intrinsic
def _prefetch(typingctx, column, index):
    """Ask the CPU for the cache line of ``column[index]`` ahead of its use (no effect on any
    value; nothing for a column that is not contiguous)."""
    if not isinstance(column, types.Array):
        return None

    def codegen(context, builder, signature, args):
        if signature.args[0].layout != "C":
            return context.get_dummy_value()
        column_v, index_v = args
        data = context.make_array(signature.args[0])(context, builder, column_v).data
        byte_ptr = ir.IntType(8).as_pointer()
        ptr = builder.bitcast(builder.gep(data, [index_v], inbounds=True), byte_ptr)
        i32 = ir.IntType(32)
        prefetch = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]), "llvm.prefetch.p0"
        )
        # a read, kept in all cache levels, of data
        builder.call(prefetch, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(column, types.intp), codegen


@njit(cache=True, inline="always")
def _add_row(acc, c0, c1, c2, c3, i, g, h):  # fmt: skip
    """Add row ``i`` (gradient ``g``, hessian ``h``) to the histograms of four feature columns
    (``acc`` (4, 256, 4): a bin's gradient, hessian, count and a padding lane, kept at 0.0)."""
    _add_to_bin(acc, (0 * N_HIST_BINS + c0[i]) * 4, g, h)
    _add_to_bin(acc, (1 * N_HIST_BINS + c1[i]) * 4, g, h)
    _add_to_bin(acc, (2 * N_HIST_BINS + c2[i]) * 4, g, h)
    _add_to_bin(acc, (3 * N_HIST_BINS + c3[i]) * 4, g, h)


@njit(cache=True, inline="always")
def gather_gradients(samples: np.ndarray, grad: np.ndarray, hess: np.ndarray) -> tuple[np.ndarray, int, bool]:
    """The rows' gradients and hessians interleaved, (m, 2), so that every pass over the rows
    streams one array; and whether the rows are the range ``lo, lo + 1, ...`` (returned
    second): sorted distinct rows spanning m values (the root) are read without a gather."""
    m = samples.shape[0]
    lo = samples[0] if m > 0 else 0
    contiguous = m > 0 and samples[m - 1] - lo == m - 1
    gh = np.empty((m, 2))
    for r in range(m):
        i = lo + r if contiguous else samples[r]
        gh[r, 0] = grad[i]
        gh[r, 1] = hess[i]
    return gh, lo, contiguous


@njit(cache=True, inline="always")
def build_feature_group(
    binned: np.ndarray, samples: np.ndarray, gh: np.ndarray, lo: int, contiguous: bool,
    features: np.ndarray, n_bins: np.ndarray, f0: int, acc: np.ndarray, hist: np.ndarray,
) -> None:  # fmt: skip
    """Histograms of ``features[f0:f0 + 4]`` (fewer at the end) into ``hist``, one pass over
    the rows (``gh``, ``lo``, ``contiguous`` from :func:`gather_gradients`); ``acc`` is a
    (4, 256, 4) scratch array. Each bin is summed in row order. Only a feature's value bins
    (``< n_bins[f]``) and the missing bin are written: its rows hold no other bin."""
    nf = features.shape[0]
    m = gh.shape[0]
    # a short last group repeats its last feature; the repeats are not written out
    c0 = binned[features[f0]]
    c1 = binned[features[min(f0 + 1, nf - 1)]]
    c2 = binned[features[min(f0 + 2, nf - 1)]]
    c3 = binned[features[min(f0 + 3, nf - 1)]]
    # zeroing and copying the bins in use only: most of a small node's time otherwise
    top = 0
    for k in range(min(GROUP, nf - f0)):
        top = max(top, n_bins[features[f0 + k]])
    for k in range(GROUP):
        for b in range(top):
            for j in range(4):
                acc[k, b, j] = 0.0
        for j in range(4):
            acc[k, MISSING_BIN, j] = 0.0
    if contiguous:
        for r in range(m):
            _add_row(acc, c0, c1, c2, c3, lo + r, gh[r, 0], gh[r, 1])
    else:
        ahead = 0
        if m > 0 and samples[m - 1] - samples[0] > SPARSE * m:
            ahead = min(PREFETCH_AHEAD, m)
        for r in range(m - ahead):
            j = samples[r + ahead]
            _prefetch(c0, j)
            _prefetch(c1, j)
            _prefetch(c2, j)
            _prefetch(c3, j)
            _add_row(acc, c0, c1, c2, c3, samples[r], gh[r, 0], gh[r, 1])
        for r in range(m - ahead, m):
            _add_row(acc, c0, c1, c2, c3, samples[r], gh[r, 0], gh[r, 1])
    for k in range(min(GROUP, nf - f0)):
        f = features[f0 + k]
        hf = hist[f]
        for b in range(n_bins[f]):
            hf[b, 0] = acc[k, b, 0]
            hf[b, 1] = acc[k, b, 1]
            hf[b, 2] = acc[k, b, 2]
        hf[MISSING_BIN, 0] = acc[k, MISSING_BIN, 0]
        hf[MISSING_BIN, 1] = acc[k, MISSING_BIN, 1]
        hf[MISSING_BIN, 2] = acc[k, MISSING_BIN, 2]


@njit(parallel=True, cache=True)
def build_histogram(
    binned: np.ndarray,
    samples: np.ndarray,
    grad: np.ndarray,
    hess: np.ndarray,
    features: np.ndarray,
    n_bins: np.ndarray,
    hist: np.ndarray,
) -> None:
    """Fill ``hist`` for the given features from the rows in ``samples``.

    Parameters
    ----------
    binned : uint8 (n_features, n_samples), feature-major
    samples : int32 rows of the leaf (sorted and distinct: reads stay close together)
    grad, hess : float64 per row
    features : int64 features to build (the tree's feature subsample)
    n_bins : int64 (n_features,) value bins of each feature
    hist : float64 (n_features, 256, 3), written for ``features`` only, and of those for the
        value bins and the missing bin only (the cells split finding reads)

    Each feature's bins are summed by one task in row order, so the sums are the same
    whatever the number of threads.
    """
    gh, lo, contiguous = gather_gradients(samples, grad, hess)
    n_groups = (features.shape[0] + GROUP - 1) // GROUP
    n_chunks = min(n_groups, FEATURE_CHUNKS)
    for c in prange(n_chunks):
        # Task-local accumulators padded to 32 bytes a bin: aligned, and hot in L1.
        acc = np.empty((GROUP, N_HIST_BINS, 4))
        for gi in range(c * n_groups // n_chunks, (c + 1) * n_groups // n_chunks):
            build_feature_group(binned, samples, gh, lo, contiguous, features, n_bins, gi * GROUP, acc, hist)


@njit(cache=True)
def subtract_histogram(
    parent: np.ndarray, child: np.ndarray, features: np.ndarray, n_bins: np.ndarray, out: np.ndarray
) -> None:
    """``out = parent - child`` for the given features' value bins and missing bin (``out``
    may be ``parent``); serial: it is tiny."""
    for fi in range(features.shape[0]):
        f = features[fi]
        subtract_feature(parent[f], child[f], n_bins[f], out[f])


@njit(cache=True, inline="always")
def subtract_feature(parent: np.ndarray, child: np.ndarray, nb: int, out: np.ndarray) -> None:
    """``out = parent - child`` over one feature's value bins (``< nb``) and missing bin."""
    for b in range(nb):
        for c in range(3):
            out[b, c] = parent[b, c] - child[b, c]
    for c in range(3):
        out[MISSING_BIN, c] = parent[MISSING_BIN, c] - child[MISSING_BIN, c]
