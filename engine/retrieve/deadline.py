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
import socket
import threading
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
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

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

    def _expire(self) -> None:
        with self._lock:
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
        tb: TracebackType | None,
    ) -> None:
        self._timer.cancel()
        _active.deadline = self._outer
        with self._lock:
            self._sockets = []


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
