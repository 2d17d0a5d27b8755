"""One declaration per ``goldpan`` subcommand: its name, help, options and what runs it.

Each command is a :class:`CliCommand` in a module of :mod:`tui.cli.declarations` named
after it (``goldpan score`` in ``declarations/score.py``). Everything a user reads about a
command is derived from that declaration:

- the argument parsers (:func:`tui.cli.parse_args`, :func:`tui.cli.build_parser`) and so
  ``goldpan --help`` (the summaries) and ``goldpan CMD --help`` (the about text and the
  options);
- the command reference in docs/cli.md: :func:`tui.cli.reference.commands_table`, checked by a
  test (``python -m tui.cli.reference`` rewrites it).

A command's ``run`` is named ``"module:function"`` in :mod:`tui.cli.commands` and its
``options`` function is called only when the parser of that command is made, which is when
it runs or prints its help: building the parser for one command imports nothing another
command needs (``tests/test_import_hygiene.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Options = Callable[[argparse.ArgumentParser], None]
"""Adds a command's arguments to its parser (engine constants imported inside)."""


@dataclass(frozen=True)
class CliCommand:
    """A subcommand of ``goldpan``, declared once."""

    name: str
    """The word on the command line (``"docs"`` in ``goldpan import docs``)."""
    summary: str
    """One line: the command's entry in its parent's ``--help`` list."""
    about: str
    """What ``goldpan CMD --help`` says above the options: what the command does, the
    files it reads or writes (their columns and fields) and what ``--json`` prints."""
    run: str | None = None
    """``"module:function"`` in :mod:`tui.cli.commands`, imported when the command runs
    (None for a command that only holds ``subcommands``)."""
    options: Options | None = None
    """Adds the command's arguments (after ``WS`` and ``--json`` when those are asked)."""
    workspace: bool = True
    """The first argument is the workspace file, ``WS``."""
    json: bool = False
    """Takes ``--json`` (JSON on stdout, not a table)."""
    subcommands: tuple[CliCommand, ...] = ()
    """The commands one level down (``goldpan import docs``, ``goldpan retriever add``)."""
    dest: str = ""
    """With ``subcommands``: the argument that holds the one chosen (``args.what``); its
    metavar is the same word in capitals (``WHAT``)."""
    usage: str | None = None
    """The usage line, when argparse's own would mislead (``goldpan snapshot``)."""
    epilog: str = ""
    """Text after the options, kept as written (its own line breaks)."""
    see: str = ""
    """The docs section that tells more, as a Markdown link relative to docs/ (docs/cli.md's
    table only)."""

    def walk(self, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], CliCommand]]:
        """(command path, declaration) of this command and every one below it."""
        path = (*path, self.name)
        yield path, self
        for sub in self.subcommands:
            yield from sub.walk(path)
