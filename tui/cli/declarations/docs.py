"""``goldpan docs``."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand

DOCS_LIMIT = 50
"""How many documents ``goldpan docs`` lists unless ``--limit`` says."""


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--search",
        metavar="TEXT",
        help="only documents whose id, title or text holds TEXT (case ignored)",
    )
    s.add_argument(
        "--limit",
        type=values.whole(0),
        default=DOCS_LIMIT,
        metavar="N",
        help=f"list at most N documents; 0: all (default: {DOCS_LIMIT})",
    )


COMMAND = CliCommand(
    "docs",
    "list or search the documents",
    "The documents in id order: id, title and length (characters of text); with --search, "
    "only those whose id, title or text holds TEXT, with where it is and the text around "
    "it. The line after the table says how many there are in all. --json prints "
    '{"search", "total", "corpus", "docs": [{"id", "title", "length", "found_in", '
    '"snippet"}]} (found_in: id, title, text; snippet: null unless in the text).',
    run="workspace:cmd_docs",
    see="[docs/analysis.md](analysis.md#finding-a-document-goldpan-docs)",
    options=_options,
    json=True,
)
