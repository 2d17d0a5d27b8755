"""Keys typed ahead are handled before the screen is drawn again, as in vim or less.

A move and a grade sent together (``j`` then ``1``: a quick hand, a paste, a held key's
repeats behind a busy processor) were drawn one after the other: the moved cursor and its
document, then the grade. The first frame was thrown away a moment later, and the grade's
frame waited for it. Drawing waits instead while a key is waiting to be handled, for at
most :data:`TYPEAHEAD_S` (a stream of keys still sees the screen follow, a frame at least
that often), so the keys' last state is drawn once.

A key is waiting when one is in the app's queue, or when bytes are on the app's input (a
terminal, or a served tab's pipe) that its input thread has not read yet.
"""

from __future__ import annotations

import select
import sys

from textual.app import App

from tui.textual_compat import keys_queued

TYPEAHEAD_S = 0.008
"""How long drawing waits at most for the keys typed ahead (half a frame at 60 per second)."""
TYPEAHEAD_POLL_S = 0.0005
"""How often it looks again meanwhile (the input thread reads and parses in between)."""


def keys_waiting(app: App[object]) -> bool:
    """Whether a key is waiting to be handled: queued in ``app``, or not read yet."""
    if keys_queued(app):
        return True
    if app.is_headless:  # no terminal: nothing is read from stdin
        return False
    stdin = sys.__stdin__
    try:
        return stdin is not None and unread(stdin.fileno())
    except (OSError, ValueError):  # closed
        return False


def unread(fd: int) -> bool:
    """Whether bytes wait on ``fd`` (False where it cannot be asked: Windows)."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return False
