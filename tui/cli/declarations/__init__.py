"""Every ``goldpan`` subcommand's declaration, one module per command, in help order.

A module is named after its command (``import_`` for ``import``, a Python keyword) and
holds its :class:`~tui.cli.command.CliCommand` as ``COMMAND``: name, summary, help text,
options and the ``"module:function"`` that runs it. A family of commands that share one
word (``import docs|questions|...``, ``retriever list|add|remove``) is one module, the
family's ``COMMAND`` holding them as ``subcommands``. Importing these modules imports no
engine module heavier than its constants' own: each ``options`` function imports what its
defaults need when the command's parser is made.
"""

from __future__ import annotations

from tui.cli.command import CliCommand
from tui.cli.declarations import (
    agreement,
    check,
    compare,
    demo,
    export,
    failures,
    fidelity,
    import_,
    info,
    judge,
    label,
    merge,
    new,
    noanswer,
    open,
    overlap,
    pool,
    power,
    queue,
    retriever,
    score,
    serve,
    snapshot,
    sweep,
    trust,
    verdict,
)

ABOUT_GOLDPAN = (
    "Make retrieval test sets that are hard and honest, and score retrievers on them."
    " Exit codes: see below."
)
"""What ``goldpan --help`` says above the list of commands."""

COMMANDS: tuple[CliCommand, ...] = (
    new.COMMAND,
    import_.COMMAND,
    pool.COMMAND,
    retriever.COMMAND,
    score.COMMAND,
    label.COMMAND,
    verdict.COMMAND,
    merge.COMMAND,
    agreement.COMMAND,
    queue.COMMAND,
    judge.COMMAND,
    compare.COMMAND,
    fidelity.COMMAND,
    failures.COMMAND,
    noanswer.COMMAND,
    sweep.COMMAND,
    overlap.COMMAND,
    export.COMMAND,
    info.COMMAND,
    check.COMMAND,
    trust.COMMAND,
    demo.COMMAND,
    open.COMMAND,
    snapshot.COMMAND,
    power.COMMAND,
    serve.COMMAND,
)
"""The subcommands in the order ``goldpan --help`` lists them."""
