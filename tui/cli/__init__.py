"""The ``goldpan`` console script: the engine's jobs from a terminal or a CI job.

Exit codes (``goldpan --help`` and docs/cli.md say the same): 0 done; 1 only for a missed
``--fail-under`` floor or a ``--fail-on-regression`` regression; 2 bad input, usage, or a
workspace that cannot be used (the message names the file and the line, or the table and
row; nothing is written); 3 an internal error (one line, the traceback in a log file). No
traceback ever reaches the terminal.

This module is the entry point (:func:`main`) and the parser's generator
(:func:`build_parser`); each command is declared once in :mod:`tui.cli.declarations`
(:class:`~tui.cli.command.CliCommand`). A command starts fast because it imports only what
it uses: building the parser imports no numpy, scipy, sqlite-utils or Textual, makes the
parser of the command being run and no other, and imports the command's
``"module:function"`` (in :mod:`tui.cli.commands`) only when it runs; those modules import
the engine inside the command functions. ``tests/test_import_hygiene.py`` checks it,
``benchmarks/bench_cli_start.py`` times it.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import importlib
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

from rich.text import Text

from engine import __version__
from engine.errors import GoldpanError
from tui.cli.command import CliCommand
from tui.cli.commands.common import (
    EXIT_CODES,
    GateFailed,
    err,
)
from tui.cli.declarations import ABOUT_GOLDPAN, NAMES, declaration
from tui.crash import bug_notice
from tui.literal import literal


class _Parsers(Mapping[str, argparse.ArgumentParser]):
    """Subcommand parsers by name, each made the first time it is looked up."""

    def __init__(self) -> None:
        self._makers: dict[str, Callable[[], argparse.ArgumentParser]] = {}
        self._made: dict[str, argparse.ArgumentParser] = {}

    def add(self, name: str, make: Callable[[], argparse.ArgumentParser]) -> None:
        self._makers[name] = make

    def __getitem__(self, name: str) -> argparse.ArgumentParser:
        parser = self._made.get(name)
        if parser is None:
            parser = self._made[name] = self._makers[name]()
        return parser

    def __contains__(self, name: object) -> bool:
        return name in self._makers

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


class _Summary(argparse.Action):
    """A subcommand's line in its parent's ``--help``: the summary, read when shown."""

    def __init__(self, name: str, declared: Callable[[], CliCommand]) -> None:
        super().__init__(option_strings=[], dest=name, metavar=name)
        self._declared = declared

    @property
    def help(self) -> str:
        """The declaration's summary (importing its module when it is not yet)."""
        return self._declared().summary

    @help.setter
    def help(self, value: str | None) -> None:
        pass  # argparse.Action sets it to None; the summary is the declaration's


class _Subcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """argparse's subcommands, each one's declaration and parser loaded only when used.

    Making a parser costs a few tenths of a millisecond (argparse looks its words up in
    gettext's catalogues), importing a declaration's module about as much: all of them
    were some 15 ms of every command's start. Here the names come first (a wrong name is
    refused with the list of them), a command's summary is read when ``--help`` shows it,
    and its parser (its options, and so its ``options`` function's imports) is made when
    the command line names it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._parsers = _Parsers()
        # argparse reads the parsers through both names (3.11 to 3.14)
        self._name_parser_map = self.choices = self._parsers  # type: ignore[assignment]

    def add_command(self, name: str, declared: Callable[[], CliCommand]) -> None:
        """Add the command ``name``, declared by what ``declared`` returns when asked."""
        self._choices_actions.append(_Summary(name, declared))
        prog = f"{self._prog_prefix} {name}"
        self._parsers.add(name, lambda: _make_parser(declared(), prog))


def _add_commands(
    parser: argparse.ArgumentParser,
    names: Sequence[str],
    declared: Callable[[str], CliCommand],
    dest: str,
) -> None:
    sub = parser.add_subparsers(dest=dest, required=True, metavar=dest.upper(), action=_Subcommands)
    assert isinstance(sub, _Subcommands)
    for name in names:
        sub.add_command(name, functools.partial(declared, name))


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help, but a text with line breaks of its own (an epilog) kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def _with_default(action: argparse.Action) -> None:
    """Add an option's default to its help, where the help does not say it already."""
    default = action.default
    if not action.option_strings or default is None or default is False:
        return
    if default in ("", []) or default is argparse.SUPPRESS:
        return
    if action.help is None:
        action.help = f"default: {default}"
    elif "default" not in action.help:
        action.help = f"{action.help} (default: {default})"


def _make_parser(command: CliCommand, prog: str) -> argparse.ArgumentParser:
    """The parser of one declared command: WS, ``--json``, then its own options."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description=command.about,
        usage=command.usage,
        epilog=command.epilog or None,
        formatter_class=_HelpFormatter,
    )
    if command.subcommands:
        below = {c.name: c for c in command.subcommands}
        _add_commands(parser, list(below), below.__getitem__, command.dest)
    if command.workspace:
        parser.add_argument("workspace", metavar="WS", help="the workspace file (SQLite)")
    if command.json:
        parser.add_argument("--json", action="store_true", help="JSON on stdout, not a table")
    if command.options is not None:
        command.options(parser)
    for action in parser._actions:
        _with_default(action)
    if command.run is not None:
        parser.set_defaults(func=command.run)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand, from :mod:`tui.cli.declarations`."""
    parser = argparse.ArgumentParser(
        prog="goldpan",
        description=ABOUT_GOLDPAN,
        epilog=EXIT_CODES,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"goldpan {__version__}")
    _add_commands(parser, NAMES, declaration, "command")
    return parser


# -- running ------------------------------------------------------------------------------


def _named_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` was parsed for: the one whose usage helps."""
    while True:
        sub = next((a for a in parser._actions if isinstance(a, _Subcommands)), None)
        name = None if sub is None else getattr(args, sub.dest, None)
        if sub is None or not isinstance(name, str) or name not in sub._parsers:
            return parser
        parser = sub._parsers[name]


def _resolve(func: str) -> Callable[[argparse.Namespace], None]:
    """The subcommand's function: its ``"module:function"`` name, imported now."""
    module, _, name = func.partition(":")
    found: Callable[[argparse.Namespace], None] = getattr(
        importlib.import_module(f"tui.cli.commands.{module}"), name
    )
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (see ``EXIT_CODES``). Never shows a traceback.

    Only :class:`~engine.errors.GoldpanError` (and the few SQLite and OS conditions that
    :func:`_user_condition` recognises by their codes) is the user's to fix: exit 2 and its
    message. Every other exception is a bug, whatever its type: exit 3, one line, and the
    traceback in a crash log.
    """
    # numpy's OpenBLAS threads spin for about 0.1 s of a core after they start, and after
    # each product, before they sleep: a command that imports numpy spent that much more
    # CPU time, beside its own work on a small machine. With this they sleep at once (a
    # product wakes them; the user's own setting wins; numpy reads it when imported).
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    for n, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # bytes the shell passed that are not UTF-8
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            err.print(literal(f"goldpan: error: argument {n} ({shown}) is not valid UTF-8"))
            return 2
    args, extras = parser.parse_known_args(argv)
    if extras:  # argparse would say so in the top level's usage, not the command's
        _named_parser(parser, args).error(f"unrecognized arguments: {' '.join(extras)}")
    try:
        _resolve(args.func)(args)
        sys.stdout.flush()  # what it printed and is held back fails here, told as below
    except GateFailed as exc:
        err.print(literal(f"goldpan: {exc}"))
        return 1
    except GoldpanError as exc:
        err.print(literal(f"goldpan: error: {exc}"))
        return 2
    except BrokenPipeError:  # `goldpan ... | head`: the reader left; say nothing more
        _output_nowhere()
        return 2
    except KeyboardInterrupt:
        err.print(Text("goldpan: interrupted; the workspace keeps what was committed"))
        return 130
    except Exception as exc:
        known = _user_condition(args, exc)
        if known is not None:
            err.print(literal(f"goldpan: error: {known}"))
            return 2
        # a bug: one line here, the traceback in a crash log
        err.print(literal(f"goldpan: {bug_notice(exc, argv)}"))
        return 3
    return 0


def _user_condition(args: argparse.Namespace, exc: Exception) -> str | None:
    """The message for an error that is the user's to fix though not goldpan's own type.

    An SQLite lock held too long, a full disk or a damaged file (by SQLite's result code,
    for a statement run outside :meth:`~engine.workspace.Workspace.transaction`, which
    translates them itself), and an operating-system error naming a file (unreadable,
    missing, a full disk). None for anything else: a bug.
    """
    from engine.errors import from_os_error, from_sqlite

    if isinstance(exc, sqlite3.Error):
        known = from_sqlite(exc, _workspace_named(args))
        return None if known is None else str(known)
    if isinstance(exc, OSError):
        full = from_os_error(exc)
        if full is not None:
            return str(full)
        if exc.filename is None:  # no file to name: not a condition the user can find
            return None
        return f"{exc.filename}: {exc.strerror or exc}"
    return None


def _workspace_named(args: argparse.Namespace) -> str:
    """The workspace (and other database files) the command line names."""
    names = [getattr(args, "workspace", None), getattr(args, "out", None)]
    names += getattr(args, "inputs", None) or []
    return ", ".join(str(n) for n in names if n) or "the workspace"


def _output_nowhere() -> None:
    """Point stdout at the null device: output still held back is dropped, quietly."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


_kept: list[object] | None = None
"""What :func:`keep_to_exit` was given, in a process :func:`run` started (else None)."""


def keep_to_exit(*objects: object) -> None:
    """Leave ``objects`` for the process's exit to free, when :func:`run` is its program.

    Where :func:`main` is called on its own (the tests, many commands in one process),
    nothing is kept: the objects go when their command is done with them.
    """
    if _kept is not None:
        _kept.extend(objects)


def run() -> NoReturn:
    """The ``goldpan`` program: :func:`main`, then an exit without Python's teardown.

    What a finished command leaves (a pool's indexes and token lists, hundreds of
    thousands of objects: :func:`keep_to_exit`) is not freed object by object, nor are the
    modules torn down: the system takes the memory back at once (a tenth of a second of a
    ``goldpan pool`` of KorQuAD). What an exit must do is done first: the output flushed
    and ``atexit``'s functions run. Python's own exit is taken instead while a thread that
    is not a daemon runs (Python waits for it) or a database connection is open (closing
    it is what checkpoints and removes its ``-wal``). :func:`main` alone, as the tests
    call it, does none of this.
    """
    global _kept
    _kept = []
    code = main()  # a command that returned had its output flushed there, failures told
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # what a failed command left held back (it said why)
        _output_nowhere()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    held = sys.modules.get("engine.workspace.held")
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(not t.daemon for t in others) or (held is not None and held.holding_any()):
        sys.exit(code)
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":
    run()
