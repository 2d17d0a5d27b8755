"""``goldpan serve``."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.team.assign import DEFAULT_PER_QUESTION, LEASE_SECONDS

    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=values.port, default=8000, help="default 8000")
    s.add_argument(
        "--annotator", action="append", default=[], metavar="NAME", help="a labeler (repeatable)"
    )
    s.add_argument(
        "--adjudicator",
        action="append",
        default=[],
        metavar="NAME",
        help="a labeler who may also adjudicate (repeatable)",
    )
    s.add_argument(
        "--viewer",
        action="append",
        default=[],
        metavar="NAME",
        help="read-only: watches the review screen (repeatable)",
    )
    s.add_argument(
        "--per-question",
        type=values.people_per_question,
        default=DEFAULT_PER_QUESTION,
        metavar="K",
        help=f"annotators per question (default {DEFAULT_PER_QUESTION})",
    )
    s.add_argument(
        "--lease",
        type=values.lease_seconds,
        default=LEASE_SECONDS,
        metavar="SECONDS",
        help=f"how long an unattended question stays taken: 5 to {values.MAX_LEASE_SECONDS:g} "
        f"(default {LEASE_SECONDS:g})",
    )
    s.add_argument(
        "--public-url",
        metavar="URL",
        help="the address people open when a TLS reverse proxy is in front "
        "(e.g. https://label.example.org)",
    )
    s.add_argument(
        "--start-at-once",
        type=values.whole(1, 256),
        metavar="N",
        help="how many tabs' apps start at once; the others wait their turn and say so "
        "(default: the cores less one, at least 1)",
    )
    s.add_argument("--links", action="store_true", help="print the last session's links and exit")
    s.add_argument("--new-tokens", action="store_true", help="issue new links (old ones stop)")


COMMAND = CliCommand(
    "serve",
    "serve the app to a team's browsers: one private link per annotator",
    "Serve the labeling app over HTTP (textual-serve). Each person gets a link with a "
    "private token; the token decides the name on their labels. Questions are handed out so"
    " that nobody judges a question someone else has open. Links are kept (outside the "
    "workspace) across restarts; `--links` prints them again.",
    run="serve:cmd_serve",
    options=_options,
    see="[Labeling as a team, in the browser](team.md)",
)
