"""An outside answer's one deadline: connecting, the headers and the body together.

A socket's timeout bounds each read, not the answer: an engine that sends one byte a
second before each timeout runs out would hold a pool for as long as it likes. A
:class:`Deadline` bounds the whole exchange instead. While it is active on a thread
(``with Deadline(seconds):``), every socket that thread's requests open is watched
(:func:`watch`); when the time is up a timer shuts them all down, so a read blocked in the
middle of the headers or the body returns at once, whatever the other side sends or
withholds. The caller then sees an error or a short answer, and :attr:`Deadline.passed`
tells it why.

Used by :mod:`engine.retrieve.remote` (``http``, ``opensearch``, ``elasticsearch``): its
connections watch their socket once it is connected, and a TLS socket once its handshake
begins. A host name's lookup is bounded by the system resolver's own timeouts, not this.
And by :mod:`engine.retrieve.postgres`, whose queries the server stops at their timeout:
a deadline a little later watches the connection for a server (or something between)
that does not.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
from types import TracebackType

_active = threading.local()
"""The deadline active on each thread (``_active.deadline``)."""


class Deadline:
    """Shuts down the sockets it watches once ``seconds`` have passed (a context manager)."""

    def __init__(self, seconds: float) -> None:
        """Start counting now."""
        self.seconds = seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._passed = False
        self._done = False
        _WATCHDOG.add(time.monotonic() + seconds, self)

    @property
    def passed(self) -> bool:
        """Whether the time ran out (the watched sockets were shut down)."""
        return self._passed

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the time is up (at once, if it is up already)."""
        with self._lock:
            if not self._passed:
                self._sockets.append(sock)
                return
        _shut(sock)

    def expire(self) -> None:
        """The time is up: shut down every socket watched (nothing once it has ended)."""
        with self._lock:
            if self._done:
                return
            self._passed = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)

    def __enter__(self) -> Deadline:
        self._outer = getattr(_active, "deadline", None)
        _active.deadline = self
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        _active.deadline = self._outer
        with self._lock:
            self._done = True  # the watchdog forgets it when its time comes
            self._sockets = []


class _Watchdog:
    """One thread for every deadline of the process, started with the first.

    A thread per deadline cost a request about 0.1 ms for the thread's start, more on a
    busy machine, for an engine that answers in a millisecond.
    """

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, at: float, deadline: Deadline) -> None:
        with self._wake:
            heapq.heappush(self._heap, (at, next(self._order), deadline))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="goldpan-deadlines", daemon=True
                )
                self._thread.start()
            if self._heap[0][2] is deadline:  # sooner than what the thread waits for
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._wake.wait(wait)
                _, _, due = heapq.heappop(self._heap)
            due.expire()


_WATCHDOG = _Watchdog()


def watch(sock: socket.socket) -> None:
    """Have the deadline active on this thread, if any, watch ``sock``."""
    deadline: Deadline | None = getattr(_active, "deadline", None)
    if deadline is not None:
        deadline.watch(sock)


def _shut(sock: socket.socket) -> None:
    """End ``sock``'s connection both ways: a read blocked on it returns now.

    ``socket.socket.shutdown`` itself, also for a TLS socket (whose own ``shutdown`` would
    drop its TLS state under the reading thread); an already closed socket is left alone.
    """
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
