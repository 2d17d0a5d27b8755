"""``goldpan pool``."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.pooling import DEFAULT_DEPTH  # not engine.retrieve: it loads numpy

    s.add_argument("--retriever", action="append", metavar="NAME", help="repeatable; default all")
    s.add_argument(
        "--depth",
        type=values.ranks,
        default=DEFAULT_DEPTH,
        help=f"ranks kept: 1 to {values.MAX_RANKS:,} (default {DEFAULT_DEPTH})",
    )
    s.add_argument("--force", "--refresh", action="store_true", help="run again even when cached")
    s.add_argument("--quiet", action="store_true", help="no progress bar")


COMMAND = CliCommand(
    "pool",
    "run retrievers over every question and cache rankings",
    "Run retrievers over every question and keep their rankings in WS; a question runs "
    "again only when its inputs changed. The table shows, per retriever, the pooled "
    "documents no other first-stage retriever found, and how many are gold.",
    run="workspace:cmd_pool",
    options=_options,
)
