"""``goldpan new``."""

from __future__ import annotations

from tui.cli.command import CliCommand

COMMAND = CliCommand(
    "new",
    "create a workspace with the default BM25 retrievers",
    "Create the workspace file WS (SQLite; it must not exist yet) with one BM25 retriever "
    "per tokenizer; `goldpan retriever list WS` shows them.",
    run="workspace:cmd_new",
)
