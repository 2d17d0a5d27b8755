"""The ``goldpan`` console script: the engine's jobs from a terminal or a CI job.

Exit codes (``goldpan --help`` and docs/cli.md say the same): 0 done; 1 only for a missed
``--fail-under`` floor or a ``--fail-on-regression`` regression; 2 bad input, usage, or a
workspace that cannot be used (the message names the file and the line, or the table and
row; nothing is written); 3 an internal error (one line, the traceback in a log file). No
traceback ever reaches the terminal.

This module is the entry point (:func:`main`), the command line's parser
(:func:`parse_args`) and the whole tree of parsers (:func:`build_parser`, for the docs and
the tests); each command is declared once in :mod:`tui.cli.declarations`
(:class:`~tui.cli.command.CliCommand`). A command starts fast because it imports only what
it uses: parsing imports no numpy, scipy, sqlite-utils or Textual, reads the declaration of
the command being run and no other (one level at a time, with argparse's public API
alone), and imports the command's ``"module:function"`` (in :mod:`tui.cli.commands`) only
when it runs; those modules import the engine inside the command functions.
``tests/test_import_hygiene.py`` checks it, ``benchmarks/bench_cli_start.py`` times it.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


def _texts(command: CliCommand) -> dict[str, Any]:
    """What a command's parser says in its ``--help``: the about text, usage and epilog."""
    return {
        "description": command.about,
        "usage": command.usage,
        "epilog": command.epilog or None,
        "formatter_class": _HelpFormatter,
    }


def _fill(parser: argparse.ArgumentParser, command: CliCommand) -> None:
    """Give a declared command's parser its arguments: WS, ``--json``, then its own options.

    A command that holds commands gets every one of them, each parser filled (the whole
    tree: :func:`build_parser`).
    """
    if command.subcommands:
        _add_commands(parser, _Group.below(command, parser.prog), fill=True)
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


def _command_parser(command: CliCommand, prog: str) -> argparse.ArgumentParser:
    """The parser of one declared command that runs."""
    parser = argparse.ArgumentParser(prog=prog, **_texts(command))
    _fill(parser, command)
    return parser


@dataclass(frozen=True)
class _Group:
    """A command that holds commands: ``goldpan`` itself, ``goldpan import``, ``retriever``."""

    prog: str
    description: str
    epilog: str | None
    usage: str | None
    dest: str
    """The argument that holds the command chosen (``args.command``, ``args.what``)."""
    names: tuple[str, ...]
    declared: Callable[[str], CliCommand]
    """A command's declaration by name (importing its module, for the top level)."""
    version: bool = False
    """Takes ``--version`` (the top level)."""

    @classmethod
    def below(cls, command: CliCommand, prog: str) -> _Group:
        """The commands one level below ``command`` (declared in its module, all at once)."""
        below = {c.name: c for c in command.subcommands}
        epilog = command.epilog or None
        return cls(
            prog,
            command.about,
            epilog,
            command.usage,
            command.dest,
            tuple(below),
            below.__getitem__,
        )

    @property
    def metavar(self) -> str:
        """How the command's place is named in the usage line and errors (``COMMAND``)."""
        return self.dest.upper()


_TOP = _Group(
    "goldpan", ABOUT_GOLDPAN, EXIT_CODES, None, "command", NAMES, declaration, version=True
)


def _group_parser(group: _Group) -> argparse.ArgumentParser:
    """The parser of ``group`` with argparse's subcommands: every command and its summary.

    Every command's declaration is read for its summary; with :func:`_add_commands`'s
    ``fill`` each command's parser is made whole as well.
    """
    parser = argparse.ArgumentParser(
        prog=group.prog,
        description=group.description,
        usage=group.usage,
        epilog=group.epilog,
        formatter_class=_HelpFormatter,
    )
    if group.version:
        parser.add_argument("--version", action="version", version=f"goldpan {__version__}")
    return parser


def _add_commands(parser: argparse.ArgumentParser, group: _Group, *, fill: bool) -> None:
    """``group``'s commands as argparse's subcommands of ``parser``, each with its summary."""
    sub = parser.add_subparsers(dest=group.dest, required=True, metavar=group.metavar)
    for name in group.names:
        command = group.declared(name)
        made = sub.add_parser(name, help=command.summary, **_texts(command))
        if fill:
            _fill(made, command)


class _ListCommands(argparse.Action):
    """``-h``/``--help`` of a command group: every command with its summary, then exit.

    The group's parser at run time knows only the names; this makes argparse's listing
    (every command's declaration read for its summary) when the help is asked for.
    """

    def __init__(self, option_strings: Sequence[str], dest: str, group: _Group) -> None:
        super().__init__(
            option_strings,
            dest=argparse.SUPPRESS,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show this help message and exit",
        )
        self.group = group

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        """Print the listing and exit 0, as argparse's own help does."""
        listing = _group_parser(self.group)
        _add_commands(listing, self.group, fill=False)
        listing.print_help()
        parser.exit()


def _names_parser(group: _Group) -> argparse.ArgumentParser:
    """``group``'s parser at run time: its options, a command's name, and the rest kept whole.

    The rest (``argparse.REMAINDER``) is handed as it was typed to the named command's
    parser, as argparse's subcommands hand it.
    """
    version = " [--version]" if group.version else ""
    parser = argparse.ArgumentParser(
        prog=group.prog,
        usage=group.usage or f"%(prog)s [-h]{version} {group.metavar} ...",
        add_help=False,
    )
    parser.add_argument("-h", "--help", action=_ListCommands, group=group)
    if group.version:
        parser.add_argument("--version", action="version", version=f"goldpan {__version__}")
    parser.add_argument(group.dest, metavar=group.metavar, nargs=argparse.REMAINDER)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command, made whole: for docs/cli.md's table and the tests.

    A command line is parsed by :func:`parse_args`, which makes only the parsers it needs.
    """
    parser = _group_parser(_TOP)
    _add_commands(parser, _TOP, fill=True)
    return parser


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` parsed as ``goldpan`` parses it; errors and ``--help`` exit as argparse's do.

    Each level is parsed in turn (``goldpan``, then ``retriever``, then ``add``): a group's
    parser takes its options and a command's name, and only the named command's parser is
    made, from its declaration alone, to parse the rest. Making every parser (or reading
    every command's summary) first, as argparse's subcommands need, imports every
    declaration: 15 to 30 ms of each command's start (``benchmarks/bench_cli_start.py``).
    A name that is not one of the group's is refused with the list of them (exit 2);
    ``--help`` lists them with their summaries.
    """
    group, words = _TOP, list(argv)
    parsed = argparse.Namespace()
    extras: list[str] = []
    while True:
        parser = _names_parser(group)
        level, unknown = parser.parse_known_args(words)
        extras += unknown
        rest = getattr(level, group.dest)
        if not rest:
            parser.error(f"the following arguments are required: {group.metavar}")
        name, words = rest[0], rest[1:]
        if name not in group.names:
            shown = ", ".join(repr(n) for n in group.names)
            parser.error(
                f"argument {group.metavar}: invalid choice: {name!r} (choose from {shown})"
            )
        setattr(parsed, group.dest, name)
        command = group.declared(name)
        prog = f"{group.prog} {name}"
        if not command.subcommands:
            break
        group = _Group.below(command, prog)
    parser = _command_parser(command, prog)
    level, unknown = parser.parse_known_args(words)
    vars(parsed).update(vars(level))  # the command's own ``--command`` wins, as in argparse
    extras += unknown
    if extras:  # said in the usage of the command named, not of the top level
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    return parsed


# -- running ------------------------------------------------------------------------------


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
    argv = list(sys.argv[1:] if argv is None else argv)
    for n, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # bytes the shell passed that are not UTF-8
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            err.print(literal(f"goldpan: error: argument {n} ({shown}) is not valid UTF-8"))
            return 2
    args = parse_args(argv)
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
