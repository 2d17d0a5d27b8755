"""``goldpan failures``."""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--retriever", required=True, metavar="NAME", help="whose failures")
    s.add_argument("--tag", help="only questions with this tag")


COMMAND = CliCommand(
    "failures",
    "questions whose gold is not at rank 1, and what won",
    "Each question whose gold is not at rank 1: the gold rank, the rank-1 document and how "
    "it relates to the gold (an overview, or a neighbour of the same series). --json prints "
    '[{"question", "gold", "gold_rank", "top_doc", '
    '"relation"}]. Refused (exit 2) when the retriever has not ranked some scored question '
    "and cannot rank it now (never ranked here).",
    run="scores:cmd_failures",
    options=_options,
    json=True,
)
