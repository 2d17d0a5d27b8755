"""How ``goldpan serve`` runs one person's app, and the app's channel back to the server.

Shared by the served app's entry (:mod:`tui.serve.served_app`), the app (:mod:`tui.app`) and the
server (:mod:`tui.serve.server`); it imports none of them.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

from engine.team.assign import DEFAULT_PER_QUESTION, LEASE_SECONDS

ROLES = ("annotator", "adjudicator", "viewer")
"""What a link lets its holder do: label; label and adjudicate; only look (read-only)."""


@dataclass(frozen=True)
class Served:
    """How ``goldpan serve`` runs this app session."""

    role: str = "annotator"
    """One of :data:`ROLES`."""
    per_question: int = DEFAULT_PER_QUESTION
    """How many annotators judge each question (work is handed out accordingly)."""
    lease_seconds: float = LEASE_SECONDS
    """How long a question stays this session's without renewal."""

    @property
    def labels(self) -> bool:
        """Whether this person labels (a viewer only looks)."""
        return self.role != "viewer"

    @property
    def adjudicates(self) -> bool:
        """Whether this person may settle disputed questions."""
        return self.role == "adjudicator"


ENDED_META = "goldpan_ended"
"""The meta packet by which this process tells the server why it ended (:mod:`tui.serve.server`
shows the message in the tab)."""
STARTED_META = "goldpan_started"
"""The meta packet by which this process tells the server that its start is over (first
screen drawn, the soundness checks done): the server starts the next waiting tab's app."""


def send_meta(meta: dict[str, str], *, started: bool) -> None:
    """Send ``meta`` to the server on textual-serve's channel (stdout), as a meta packet.

    ``started``: whether the app ran (its driver already wrote textual-serve's prelude).
    Called on the app's thread while it runs (the driver writes there too, whole packets).
    Nothing is raised: the server may be gone.
    """
    body = json.dumps(meta).encode("utf-8")
    packet = (b"" if started else b"__GANGLION__\n") + b"M" + len(body).to_bytes(4, "big") + body
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
        while packet:
            packet = packet[os.write(fd, packet) :]
    except (OSError, ValueError):
        pass


def tell_server(message: str, *, started: bool) -> None:
    """Tell the server why this session ended (shown in the tab)."""
    send_meta({"type": ENDED_META, "message": message}, started=started)


def tell_started() -> None:
    """Tell the server this session's start is over (:data:`STARTED_META`)."""
    send_meta({"type": STARTED_META}, started=True)
