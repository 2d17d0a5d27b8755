"""One browser session of ``goldpan serve``: the app as the server starts it for one person.

The server (:mod:`tui.team_server`) checks the person's token and starts
``python -m tui.served_app WS --annotator NAME --role ROLE ...`` for that connection, with
Textual's web driver. The token never reaches this process: its command line (which
``ps`` shows) carries only the name the token stands for, and the role.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.assign import DEFAULT_PER_QUESTION, LEASE_SECONDS

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


def build_parser() -> argparse.ArgumentParser:
    """The child command line (internal: `goldpan serve` writes it)."""
    p = argparse.ArgumentParser(prog="python -m tui.served_app")
    p.add_argument("workspace", metavar="WS")
    p.add_argument("--annotator", required=True)
    p.add_argument("--role", choices=ROLES, default="annotator")
    p.add_argument("--per-question", type=int, default=DEFAULT_PER_QUESTION)
    p.add_argument("--lease-seconds", type=float, default=LEASE_SECONDS)
    return p


ENDED_META = "goldpan_ended"
"""The meta packet by which this process tells the server why it ended (:mod:`tui.team_server`
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the app for one browser connection; returns the exit code."""
    from engine.errors import GoldpanError
    from tui.app import GoldpanApp
    from tui.crash import failure_notice
    from tui.literal import visible

    args = build_parser().parse_args(argv)
    served = Served(args.role, args.per_question, args.lease_seconds)
    try:
        app = GoldpanApp(
            Path(args.workspace),
            annotator=args.annotator,
            readonly=not served.labels,
            served=served,
            # `goldpan serve` ranked every question before serving: no index (nor Kiwi's
            # 0.5 GB) per browser tab up front; a question written or edited in a tab
            # builds what it needs when it is pooled.
            warm_indexes=False,
            freeze_heap=True,  # this process is this one app
        )
    except GoldpanError as exc:
        print(visible(f"goldpan: error: {exc}"), file=sys.stderr)
        tell_server(f"goldpan: this session cannot start: {exc}", started=False)
        return 2
    app.run()
    if app.crash is None:
        return 0
    # The tab is gone with the app: the server's log keeps what happened (one line on
    # stderr, and for a bug the traceback in a crash log, as `goldpan open` does).
    if isinstance(app.crash, GoldpanError):
        print(visible(f"goldpan: error: {app.crash}"), file=sys.stderr)
        tell_server(f"goldpan: this session stopped: {app.crash}", started=True)
        return 2
    print(
        visible(f"goldpan: served session of {args.annotator}: {failure_notice(app.crash)}"),
        file=sys.stderr,
    )
    tell_server(
        "goldpan: this session stopped on an error (a bug); whoever runs goldpan serve has "
        "its crash log. Labels shown as saved are saved. Reload to go on.",
        started=True,
    )
    return 3


if __name__ == "__main__":
    sys.exit(main())
