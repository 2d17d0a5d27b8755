"""``goldpan failures``."""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--retriever",
        metavar="NAME",
        help="whose failures (default: the first retriever, as `goldpan retriever list` lists "
        "them; the Review screen's A starts there too)",
    )
    s.add_argument("--tag", help="only questions with this tag")


COMMAND = CliCommand(
    "failures",
    "questions whose gold is not at rank 1, and what won",
    "Each question whose gold is not at rank 1: the gold rank, how the rank-1 document "
    "relates to the gold (an overview post, or a neighbour of the same series: front "
    "matter's series, else the series its title writes, e.g. \"neighbour in series 'PET "
    "원리' (⑤ vs ⑥)\"), and both documents with their titles. --json prints "
    '[{"question", "gold", "gold_rank", "top_doc", "relation", "relation_detail", '
    '"series", "gold_doc", "gold_title", "top_title"}]. Refused (exit 2) when the '
    "retriever has not ranked some scored question and cannot rank it now (never ranked "
    "here).",
    run="scores:cmd_failures",
    see="[docs/analysis.md](analysis.md#which-document-beat-the-gold-goldpan-failures)",
    options=_options,
    json=True,
)
