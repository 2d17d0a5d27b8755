"""One browser session of ``goldpan serve``: the app as the server starts it for one person.

The server (:mod:`tui.serve.server`) checks the person's token and starts
``python -m tui.serve.served_app WS --annotator NAME --role ROLE ...`` for that connection, with
Textual's web driver. The token never reaches this process: its command line (which
``ps`` shows) carries only the name the token stands for, and the role.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.team.assign import DEFAULT_PER_QUESTION, LEASE_SECONDS
from tui.serve.served import (  # tui.serve.server and tui.serve.tokens import these names from here
    ENDED_META,
    ROLES,
    STARTED_META,
    Served,
    send_meta,
    tell_server,
    tell_started,
)

__all__ = ["ENDED_META", "ROLES", "STARTED_META", "Served", "main", "send_meta", "tell_started"]


def build_parser() -> argparse.ArgumentParser:
    """The child command line (internal: `goldpan serve` writes it)."""
    p = argparse.ArgumentParser(prog="python -m tui.serve.served_app")
    p.add_argument("workspace", metavar="WS")
    p.add_argument("--annotator", required=True)
    p.add_argument("--role", choices=ROLES, default="annotator")
    p.add_argument("--per-question", type=int, default=DEFAULT_PER_QUESTION)
    p.add_argument("--lease-seconds", type=float, default=LEASE_SECONDS)
    return p


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
