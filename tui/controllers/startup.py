"""The end of the app's start: the heap left out of the cycle collector, the server told.

Once the first screen is drawn, what is alive is frozen (:func:`gc.freeze`), for an app
that is its process's only app (``goldpan open``, a ``goldpan serve`` tab), never for one
of a test's many apps. A served tab then tells the server its start is over, once the
soundness checks are done too: the server holds the next tab's start until then
(:class:`tui.serve.starts.StartGate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine import gc_policy
from tui.serve.served import tell_started

if TYPE_CHECKING:
    from tui.app import GoldpanApp

SOUNDNESS_POLL_S = 0.05
"""How often a served tab looks again whether the soundness checks are done."""


class StartUp:
    """What the app does once its first screen is drawn."""

    def __init__(self, app: GoldpanApp, *, freeze_heap: bool) -> None:
        """``freeze_heap``: this app is the whole process (see :meth:`freeze_heap`)."""
        self.app = app
        self.freeze_on_start = freeze_heap

    def after_first_paint(self) -> None:
        """Served in a browser: say started; else freeze the heap when asked."""
        app = self.app
        if app.served is not None and app.is_web:  # textual-serve's channel (not a test's)
            app.call_after_refresh(self.say_started)  # the heap is frozen before it says so
        elif self.freeze_on_start:
            app.call_after_refresh(self.freeze_heap)

    def freeze_heap(self) -> None:
        """Leave what is alive once started out of Python's cycle collector.

        The session's state, the screens and Textual's caches live as long as the app, yet
        every full collection walked them all again: 35-40 ms on the UI thread on a
        team-sized workspace, about once every 30 keys, so one key in thirty was drawn that
        much later. Frozen, they still die by reference counting; the collector walks only
        what was made since (6 ms). Collected first, so that no garbage is frozen with them.
        """
        if self.freeze_on_start:
            gc_policy.freeze_survivors()

    def say_started(self) -> None:
        """Served: tell the server this tab's start is over (the soundness checks done)."""
        if self.app.ws.soundness_checking():
            self.app.set_timer(SOUNDNESS_POLL_S, self.say_started)
            return
        self.freeze_heap()
        tell_started()
