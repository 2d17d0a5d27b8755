"""Every ``goldpan`` subcommand's declaration, one module per command.

A module is named after its command (``import_`` for ``import``, a Python keyword) and
holds its :class:`~tui.cli.command.CliCommand` as ``COMMAND``: name, summary, help text,
options and the ``"module:function"`` that runs it. A family of commands that share one
word (``import docs|questions|...``, ``retriever list|add|remove``) is one module, the
family's ``COMMAND`` holding them as ``subcommands``.

A command line imports only the declaration of the command it names (:func:`declaration`);
``goldpan --help`` and docs/cli.md's table import them all (:func:`commands`). So
:data:`NAMES` lists the modules, in the order ``goldpan --help`` shows them, and a test
checks that every module is listed and declares the command it is named after.
"""

from __future__ import annotations

import importlib
import keyword

from tui.cli.command import CliCommand

ABOUT_GOLDPAN = (
    "Make retrieval test sets that are hard and honest, and score retrievers on them."
    " Exit codes: see below."
)
"""What ``goldpan --help`` says above the list of commands."""

NAMES = (
    "new",
    "import",
    "pool",
    "retriever",
    "score",
    "label",
    "verdict",
    "merge",
    "agreement",
    "queue",
    "judging",
    "simulate",
    "judge",
    "compare",
    "fidelity",
    "failures",
    "noanswer",
    "sweep",
    "overlap",
    "export",
    "docs",
    "info",
    "check",
    "trust",
    "demo",
    "open",
    "snapshot",
    "power",
    "serve",
)
"""The subcommands (their modules' names), in the order ``goldpan --help`` lists them."""


def module_name(name: str) -> str:
    """The module that declares the command ``name``."""
    return f"{__name__}.{name}_" if keyword.iskeyword(name) else f"{__name__}.{name}"


def declaration(name: str) -> CliCommand:
    """The declaration of the subcommand ``name`` (one of :data:`NAMES`)."""
    command: CliCommand = importlib.import_module(module_name(name)).COMMAND
    return command


def commands() -> tuple[CliCommand, ...]:
    """Every subcommand's declaration, in :data:`NAMES` order."""
    return tuple(declaration(name) for name in NAMES)
