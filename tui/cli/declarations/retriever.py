"""``goldpan retriever list|add|remove``.

``add``'s options are generated from each retriever kind's declared parameters
(:data:`engine.retrieve.KIND_PARAMS`, through :mod:`tui.cli.commands.retriever_options`,
which also turns them back into a spec), so they are declared there, once per parameter.
"""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand

RUN = "workspace:cmd_retriever"


def _add(s: argparse.ArgumentParser) -> None:
    from tui.cli.commands.retriever_options import add_retriever_options, kinds_summary

    s.description = f"{kinds_summary()} {s.description}"
    s.add_argument("name", metavar="NAME", help="the new retriever's name")
    add_retriever_options(s)


def _remove(s: argparse.ArgumentParser) -> None:
    s.add_argument("name", metavar="NAME", help="the retriever to remove")


COMMAND = CliCommand(
    "retriever",
    "add, list or remove retrievers",
    "Add, list or remove the retrievers a workspace pools and scores.",
    workspace=False,
    see="[Retrievers](retrievers.md)",
    dest="action",
    subcommands=(
        CliCommand(
            "list",
            "the configured retrievers",
            'The configured retrievers: name, kind and parameters; --json prints [{"name", '
            '"kind", "params"}].',
            run=RUN,
            json=True,
        ),
        CliCommand(
            "add",
            "add a retriever",
            'A command retriever\'s CMD reads the questions as JSON lines {"id", "text"} on '
            "stdin and prints a TREC run (qid Q0 doc rank score tag) on stdout. Imported run "
            "files are added by `goldpan import run`.",
            run=RUN,
            options=_add,
        ),
        CliCommand(
            "remove",
            "remove a retriever and its cached rankings",
            "Remove a retriever and its cached rankings (a retriever another one reads cannot "
            "be removed first).",
            run=RUN,
            options=_remove,
        ),
    ),
)
