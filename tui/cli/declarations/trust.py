"""``goldpan trust``."""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--yes", action="store_true", help="trust every listed retriever (scripts)")
    s.add_argument("--list", action="store_true", help="show what each runs and whether trusted")
    s.add_argument("--revoke", action="store_true", help="forget this workspace's trust")
    s.add_argument(
        "--retriever", action="append", metavar="NAME", help="only this retriever (repeatable)"
    )


COMMAND = CliCommand(
    "trust",
    "review what a workspace's retrievers run or send, and trust them",
    "A command retriever runs a program on this machine, with your rights, each time goldpan"
    " pools questions; an opensearch, elasticsearch or http retriever sends every question "
    "to the address it names, a postgres retriever runs the workspace's SQL on the database "
    "its environment variable connects to. goldpan runs them only once you trusted them "
    "here: each command, or each engine's address, index, credential variable names and "
    "template (printed whole, control and invisible characters made visible), is shown and "
    "you answer y/N (--yes for scripts). Trust is recorded in "
    "your config folder ($XDG_CONFIG_HOME/goldpan, else ~/.config/goldpan), never in the "
    "workspace, for exactly that text, this workspace's id and its path: a copied or moved "
    "workspace, or a changed command, address or template, is asked about again.",
    run="trust:cmd_trust",
    options=_options,
    see="[What goldpan runs, sends and loads](trust.md)",
)
