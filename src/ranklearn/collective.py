"""Sums across processes over TCP, as the workers of a distributed fit need them.

:class:`StarComm` joins ``size`` processes (ranks 0..size-1): every rank opens one connection
to rank 0. :meth:`StarComm.allreduce` sends each rank's array to rank 0, which adds them in
rank order and sends the total back, so every rank gets the same bits whatever the timing:
processes that grow a tree from such sums take the same decisions without asking anyone.
LightGBM's distributed training works the same way (its own sockets between the machines,
the scheduler out of the per-split loop); here the star suits the few workers of a Dask
cluster, where a tree of histograms would add latency for no bandwidth gain.

Plain sockets and NumPy buffers, no Dask: the trainer in :mod:`ranklearn.dask` opens them
on its workers, and the tests run ranks as threads of one process. :class:`Link` carries whole
Python objects between a coordinator and one of its processes (the commands and answers of
:mod:`ranklearn.spark`, whose driver has no actors to call).
"""

from __future__ import annotations

import pickle
import socket
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Link", "PeerError", "PeerTimeoutError", "StarComm", "accept_link", "open_listener"]

_HELLO = struct.Struct("<16sq")  # the fit's token, the sender's rank
_HEADER = struct.Struct("<q")  # values in the message that follows


class PeerError(RuntimeError):
    """A peer closed its connection or sent what the protocol does not allow."""


class PeerTimeoutError(PeerError):
    """A peer did not send within the timeout (alive but hung, or far slower)."""


def open_listener(host: str) -> socket.socket:
    """A listening TCP socket on ``host`` and a free port (``getsockname()`` tells which)."""
    return socket.create_server((host, 0), backlog=64)


class StarComm:
    """One rank's connections of a star: rank 0 holds one socket per other rank, the others
    one socket to rank 0.

    Use :meth:`connect` to make one. ``names[r]`` names rank ``r`` in errors (a worker's
    address, say).
    """

    def __init__(self, rank: int, names: Sequence[str], sockets: dict[int, socket.socket]) -> None:
        self.rank = rank
        self.names = list(names)
        self.size = len(self.names)
        self._sockets = sockets
        self._scratch = np.empty(0)  # rank 0: what another rank sends, before it is added

    @classmethod
    def connect(
        cls,
        rank: int,
        addresses: Sequence[tuple[str, int]],
        listener: socket.socket | None,
        token: bytes,
        timeout: float | None,
        names: Sequence[str] | None = None,
    ) -> StarComm:
        """Join the star.

        Parameters
        ----------
        rank : int
            This process's rank.
        addresses : list of (host, port)
            Every rank's listener; only rank 0's is connected to.
        listener : socket, optional
            Rank 0's listening socket (from :func:`open_listener`); closed once every rank
            has joined. Other ranks may pass theirs (it is closed) or None.
        token : bytes
            Up to 16 bytes the fit's ranks share: a connection with another token is refused
            (a stale rank of an earlier fit).
        timeout : float or None
            Seconds any later send or receive may wait, and the wait for the others to join
            (None: forever).
        names : list of str, optional
            Each rank's name in errors; default ``"rank <r>"``.

        Raises
        ------
        PeerTimeoutError
            When a rank has not joined in ``timeout``.
        PeerError
            When rank 0 cannot be reached.
        """
        names = [f"rank {r}" for r in range(len(addresses))] if names is None else list(names)
        token = token[:16].ljust(16, b"\0")
        sockets: dict[int, socket.socket] = {}
        try:
            if rank == 0:
                if listener is None:
                    raise ValueError("rank 0 needs its listener")
                listener.settimeout(timeout)
                while len(sockets) < len(addresses) - 1:
                    try:
                        conn, _ = listener.accept()
                    except TimeoutError:
                        late = [names[r] for r in range(1, len(addresses)) if r not in sockets]
                        raise PeerTimeoutError(f"{', '.join(late)} did not connect within {timeout:g} s") from None
                    _configure(conn, timeout)
                    hello = _recv_exact(conn, _HELLO.size)
                    their_token, their_rank = _HELLO.unpack(hello) if hello is not None else (None, -1)
                    if their_token != token or not 0 < their_rank < len(addresses) or their_rank in sockets:
                        conn.close()  # not one of this fit's ranks
                        continue
                    sockets[their_rank] = conn
            else:
                try:
                    conn = socket.create_connection(tuple(addresses[0]), timeout=timeout)
                except OSError as exc:
                    raise PeerError(f"cannot reach {names[0]} at {addresses[0][0]}:{addresses[0][1]} ({exc})") from exc
                _configure(conn, timeout)
                conn.sendall(_HELLO.pack(token, rank))
                sockets[0] = conn
        except BaseException:
            for s in sockets.values():
                s.close()
            raise
        finally:
            if listener is not None:
                listener.close()
        return cls(rank, names, sockets)

    def allreduce(self, values: np.ndarray) -> np.ndarray:
        """Replace ``values`` (a contiguous float64 vector of the same length on every rank)
        by its sum over the ranks, added in rank order on rank 0: every rank ends with the
        same bits. Returns ``values``.

        Raises
        ------
        PeerTimeoutError, PeerError
            Naming the rank that did not answer, closed its connection, or sent a vector
            of another length.
        """
        if values.dtype != np.float64 or values.ndim != 1 or not values.flags.c_contiguous:
            raise ValueError("allreduce sums a contiguous float64 vector in place")
        if self.size == 1:
            return values
        if self.rank != 0:
            self._send(0, values)
            self._recv(0, values)
            return values
        if self._scratch.shape[0] < values.shape[0]:
            self._scratch = np.empty(values.shape[0])  # kept: the same length comes again
        scratch = self._scratch[: values.shape[0]]
        for r in range(1, self.size):
            self._recv(r, scratch)
            values += scratch
        for r in range(1, self.size):
            self._send(r, values)
        return values

    def close(self) -> None:
        """Close the connections (idempotent)."""
        for s in self._sockets.values():
            s.close()
        self._sockets = {}

    def _send(self, rank: int, values: np.ndarray) -> None:
        try:
            sock = self._sockets[rank]
            sock.sendall(_HEADER.pack(values.shape[0]))
            sock.sendall(memoryview(values).cast("B"))  # no copy of the vector
        except TimeoutError:
            raise PeerTimeoutError(f"{self.names[rank]} took nothing for {self._timeout_text(rank)}") from None
        except OSError as exc:
            raise PeerError(f"{self.names[rank]} closed its connection ({exc})") from exc

    def _recv(self, rank: int, out: np.ndarray) -> None:
        sock = self._sockets[rank]
        n = out.shape[0]
        try:
            header = _recv_exact(sock, _HEADER.size)
            if header is None:
                raise PeerError(f"{self.names[rank]} closed its connection")
            (count,) = _HEADER.unpack(header)
            if count != n:
                raise PeerError(f"{self.names[rank]} sent {count} values where {n} were expected")
            if _recv_exact(sock, 8 * n, into=memoryview(out).cast("B")) is None:
                raise PeerError(f"{self.names[rank]} closed its connection mid-message")
        except TimeoutError:
            raise PeerTimeoutError(f"{self.names[rank]} sent nothing for {self._timeout_text(rank)}") from None
        except ConnectionError as exc:
            raise PeerError(f"{self.names[rank]} closed its connection ({exc})") from exc

    def _timeout_text(self, rank: int) -> str:
        return f"{self._sockets[rank].gettimeout():g} s"


class Link:
    """One connection carrying Python objects (pickled, length first) between the coordinator
    of a fit and one of its processes.

    Pickle runs code of the sender's choosing: both ends are the fit's own processes, and a
    connection opens with the fit's token (:func:`accept_link` refuses any other).

    Parameters
    ----------
    sock : socket
        Connected.
    name : str
        The other end in errors.
    """

    def __init__(self, sock: socket.socket, name: str) -> None:
        self.sock = sock
        self.name = name

    @classmethod
    def connect(cls, address: tuple[str, int], token: bytes, rank: int, timeout: float | None, name: str) -> Link:
        """Connect to a coordinator's listener as ``rank`` (sends the token and the rank).

        Raises
        ------
        PeerError
            When ``address`` cannot be reached.
        """
        try:
            sock = socket.create_connection(tuple(address), timeout=timeout)
        except OSError as exc:
            raise PeerError(f"cannot reach {name} at {address[0]}:{address[1]} ({exc})") from exc
        _configure(sock, None)  # commands may be far apart (the coordinator's metric, callbacks)
        sock.sendall(_HELLO.pack(token[:16].ljust(16, b"\0"), rank))
        return cls(sock, name)

    def send(self, message: Any) -> None:
        """Send one object.

        Raises
        ------
        PeerError
            When the other end has closed the connection.
        """
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.sock.sendall(_HEADER.pack(len(data)))
            self.sock.sendall(data)
        except OSError as exc:
            raise PeerError(f"{self.name} closed its connection ({exc})") from exc

    def recv(self, timeout: float | None = None) -> Any:
        """Receive one object, waiting at most ``timeout`` seconds for it to start (None: forever).

        Raises
        ------
        PeerTimeoutError
            When nothing came in ``timeout``.
        PeerError
            When the other end closed the connection.
        """
        self.sock.settimeout(timeout)
        try:
            header = _recv_exact(self.sock, _HEADER.size)
            if header is None:
                raise PeerError(f"{self.name} closed its connection")
            self.sock.settimeout(None)  # a message that started is read to its end
            (n,) = _HEADER.unpack(header)
            data = _recv_exact(self.sock, n)
        except TimeoutError:
            raise PeerTimeoutError(f"{self.name} sent nothing for {timeout:g} s") from None
        except ConnectionError as exc:
            raise PeerError(f"{self.name} closed its connection ({exc})") from exc
        if data is None:
            raise PeerError(f"{self.name} closed its connection mid-message")
        return pickle.loads(data)

    def fileno(self) -> int:
        """The socket's descriptor (for ``select``)."""
        return self.sock.fileno()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self.sock.close()


def accept_link(listener: socket.socket, token: bytes, size: int, name: str) -> tuple[int, Link] | None:
    """Accept one connection made by :meth:`Link.connect` on ``listener`` (blocking as the
    listener's timeout says): its rank and link, or None for a connection without the token
    or with a rank outside ``0..size-1`` (closed). ``name`` may hold ``{rank}``."""
    conn, _ = listener.accept()
    _configure(conn, 10.0)  # the hello follows the connection at once
    hello = _recv_exact(conn, _HELLO.size)
    their_token, rank = _HELLO.unpack(hello) if hello is not None else (None, -1)
    if their_token != token[:16].ljust(16, b"\0") or not 0 <= rank < size:
        conn.close()
        return None
    conn.settimeout(None)
    return rank, Link(conn, name.format(rank=rank))


def _configure(sock: socket.socket, timeout: float | None) -> None:
    sock.settimeout(timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # small sums go out at once


def _recv_exact(sock: socket.socket, n: int, into: memoryview | None = None) -> bytes | memoryview | None:
    """Read exactly ``n`` bytes (into ``into`` when given); None if the peer closed first."""
    buf = memoryview(bytearray(n)) if into is None else into
    got = 0
    while got < n:
        k = sock.recv_into(buf[got:], n - got)
        if k == 0:
            return None
        got += k
    return bytes(buf) if into is None else buf
