"""StarComm: sums over ranks (threads of this process here) on localhost sockets."""

from __future__ import annotations

import socket
import threading

import numpy as np
import pytest

from ranklearn.collective import Link, PeerError, PeerTimeoutError, StarComm, accept_link, open_listener


def _run_ranks(size: int, body, timeout: float = 10.0, token: bytes = b"fit") -> list:
    """Run ``body(comm)`` on ``size`` ranks (threads) joined in a star; their results or exceptions."""
    listeners = [open_listener("127.0.0.1") for _ in range(size)]
    addresses = [lst.getsockname()[:2] for lst in listeners]
    out: list = [None] * size

    def rank(r: int) -> None:
        try:
            comm = StarComm.connect(r, addresses, listeners[r], token, timeout, [f"peer {r}" for r in range(size)])
            try:
                out[r] = body(comm)
            finally:
                comm.close()
        except Exception as exc:  # handed to the test
            out[r] = exc

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


def test_allreduce_adds_in_rank_order_and_every_rank_gets_the_same_bits():
    rng = np.random.default_rng(0)
    parts = [rng.normal(size=1000) * 10.0 ** rng.integers(-8, 8, 1000) for _ in range(3)]
    expect = parts[0].copy()
    for p in parts[1:]:
        expect += p  # rank 0's vector, then rank 1's, then rank 2's

    def body(comm):
        return [comm.allreduce(parts[comm.rank].copy()) for _ in range(3)]  # several rounds on one star

    results = _run_ranks(3, body)
    for rounds in results:
        for got in rounds:
            np.testing.assert_array_equal(got, expect)


def test_one_rank_needs_no_sockets():
    comm = StarComm(0, ["alone"], {})
    np.testing.assert_array_equal(comm.allreduce(np.array([1.0, 2.0])), [1.0, 2.0])


def test_a_connection_with_another_token_is_refused_and_the_ranks_still_join():
    listener = open_listener("127.0.0.1")
    stale = socket.create_connection(listener.getsockname()[:2])
    stale.sendall(b"x" * 24)  # a hello with another fit's token
    addresses = [listener.getsockname()[:2], ("127.0.0.1", 0)]
    result = {}

    def rank1():
        comm = StarComm.connect(1, addresses, None, b"fit", 10)
        result[1] = comm.allreduce(np.array([2.0]))

    t = threading.Thread(target=rank1)
    t.start()
    comm = StarComm.connect(0, addresses, listener, b"fit", 10)
    result[0] = comm.allreduce(np.array([1.0]))
    t.join(10)
    assert result[0].tolist() == result[1].tolist() == [3.0]
    assert stale.recv(1) == b""  # closed by rank 0
    stale.close()


def test_a_silent_rank_is_named_after_the_timeout():
    def body(comm):
        if comm.rank == 1:
            threading.Event().wait(1.5)  # alive, sends nothing
            return None
        return comm.allreduce(np.ones(4))

    out = _run_ranks(2, body, timeout=0.5)
    assert isinstance(out[0], PeerTimeoutError)
    assert str(out[0]) == "peer 1 sent nothing for 0.5 s"


def test_a_rank_that_leaves_is_named():
    def body(comm):
        if comm.rank == 1:
            return None  # closes its connection without sending
        return comm.allreduce(np.ones(4))

    out = _run_ranks(2, body)
    assert isinstance(out[0], PeerError) and not isinstance(out[0], PeerTimeoutError)
    assert str(out[0]).startswith("peer 1 closed its connection")


def test_vectors_of_other_lengths_are_refused():
    out = _run_ranks(2, lambda comm: comm.allreduce(np.ones(3 + comm.rank)))
    assert isinstance(out[0], PeerError) and str(out[0]) == "peer 1 sent 4 values where 3 were expected"


def test_a_rank_that_never_joins_is_named():
    listener = open_listener("127.0.0.1")
    addresses = [listener.getsockname()[:2], ("127.0.0.1", 1), ("127.0.0.1", 1)]
    with pytest.raises(PeerTimeoutError, match="rank 1, rank 2 did not connect within 0.3 s"):
        StarComm.connect(0, addresses, listener, b"fit", 0.3)


def test_rank_0_out_of_reach_is_named():
    listener = open_listener("127.0.0.1")
    address = listener.getsockname()[:2]
    listener.close()  # nobody listens there any more
    with pytest.raises(PeerError, match=r"cannot reach worker A at 127\.0\.0\.1:\d+"):
        StarComm.connect(1, [address, ("127.0.0.1", 0)], None, b"fit", 2, ["worker A", "worker B"])


def test_only_a_contiguous_float64_vector_is_summed_in_place():
    comm = StarComm(0, ["alone"], {})
    for bad in (np.ones(3, dtype=np.float32), np.ones((2, 2)), np.ones(6)[::2]):
        with pytest.raises(ValueError, match="contiguous float64 vector in place"):
            comm.allreduce(bad)


def test_a_link_carries_objects_both_ways_and_refuses_strangers():
    listener = open_listener("127.0.0.1")
    listener.settimeout(10)
    address = listener.getsockname()[:2]
    stranger = socket.create_connection(address)  # another fit's token: closed, not accepted
    stranger.sendall(b"other".ljust(16, b"\0") + (1).to_bytes(8, "little"))
    assert accept_link(listener, b"fit", 2, "task {rank}") is None
    assert stranger.recv(1) == b""
    worker = Link.connect(address, b"fit", 1, 10, "the driver")
    rank, link = accept_link(listener, b"fit", 2, "task {rank}")
    assert (rank, link.name) == (1, "task 1")
    big = np.arange(100_000, dtype=np.float64)
    link.send(("tree", (big, None)))
    op, (values, nothing) = worker.recv()
    assert op == "tree" and nothing is None and np.array_equal(values, big)
    worker.send({"ok": [1, 2.5]})
    assert link.recv(5) == {"ok": [1, 2.5]}
    with pytest.raises(PeerTimeoutError, match="task 1 sent nothing for 0.2 s"):
        link.recv(0.2)
    worker.close()
    with pytest.raises(PeerError, match="task 1 closed its connection"):
        link.recv(5)
    link.close()
    listener.close()
