"""``goldpan serve``'s tabs start their app processes a few at a time (:class:`StartGate`).

The server (:mod:`tui.serve.server`) enters the gate for every tab it starts.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable


def start_limit() -> int:
    """How many tabs' app processes start at once.

    One core is kept for the tabs already up (a start takes about a second of CPU; a
    grade, a few milliseconds).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


START_WAIT_S = 20.0
"""How long a start holds its place at most: an app that never says it has started (it
hangs, or the server cannot read it) does not hold up the tabs after it."""


class StartGate:
    """At most ``limit`` app processes starting at once; the others wait, first come first.

    With a whole team opening its links in the same minute, every app process started at
    once shares the processor with the tabs already up, and a grade there waits behind
    16 starts (half a second, measured). Held back, a start waits instead, and the tab
    says so. A start ends when its app says so (:data:`~tui.serve.served_app.STARTED_META`), when
    its process ends, or after :data:`START_WAIT_S`.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.starting = 0
        self._waiting: list[asyncio.Future[None]] = []

    @property
    def queued(self) -> int:
        """How many starts are waiting for a place."""
        return len(self._waiting)

    @property
    def full(self) -> bool:
        """Whether a start asked for now would wait."""
        return self.starting >= self.limit or bool(self._waiting)

    async def enter(self) -> Callable[[], None]:
        """Wait for a place; returns the call that gives it back (once, whoever calls)."""
        if self.full:
            place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.append(place)
            try:
                await place  # the place is handed over taken: see _leave
            except asyncio.CancelledError:
                if place in self._waiting:
                    self._waiting.remove(place)
                elif not place.cancelled():
                    self._leave()  # handed over as this one was cancelled: pass it on
                raise
        else:
            self.starting += 1
        timer = asyncio.get_running_loop().call_later(START_WAIT_S, lambda: done())
        left = False

        def done() -> None:
            nonlocal left
            if not left:
                left = True
                timer.cancel()
                self._leave()

        return done

    def _leave(self) -> None:
        while self._waiting:
            place = self._waiting.pop(0)
            if not place.done():
                place.set_result(None)  # the place goes to it: starting is unchanged
                return
        self.starting -= 1


def waiting_line(ahead: int) -> bytes:
    """What a tab shows while its app waits for its turn to start (terminal text).

    ``ahead``: the sessions starting or waiting before this one.
    """
    sessions = "1 session starts" if ahead == 1 else f"{ahead} sessions start"
    return (
        f"\r\ngoldpan: {sessions} before yours (a few at a time, so that those already "
        "labeling stay quick); yours follows...\r\n"
    ).encode()
