"""The commands are declared once: docs/cli.md's table is the generated one, and it holds
every command and every option that ``--help`` shows."""

from __future__ import annotations

import argparse
import copy
import importlib
import pkgutil
import re

import pytest

import tui.cli.declarations as declarations
from tests.conftest import ROOT
from tui.cli import build_parser
from tui.cli.declarations import NAMES, commands
from tui.cli.reference import PAGE, TABLE_END, TABLE_START, with_commands

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def table_rows() -> dict[str, str]:
    """docs/cli.md's table rows by their command line (the first cell, without backticks)."""
    page = PAGE.read_text(encoding="utf-8")
    table = page.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0]
    rows = {}
    for line in table.strip().splitlines()[2:]:
        first, rest = line.removeprefix("| `").split("` | ", 1)
        rows[first.replace("\\|", "|")] = rest
    return rows


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(path, parser) of every command that takes no subcommand, read from argparse."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [(path, parser)]
    return [pair for name, p in subs[0].choices.items() for pair in parsers(p, (*path, name))]


def test_the_command_table_in_docs_is_the_generated_one():
    assert PAGE == ROOT / "docs" / "cli.md"
    page = PAGE.read_text(encoding="utf-8")
    assert with_commands(page) == page, "run `python -m tui.cli.reference` to update docs/cli.md"


def test_every_command_and_every_option_of_its_help_is_in_its_table_row(monkeypatch):
    monkeypatch.setenv("COLUMNS", "10000")  # no line breaks (argparse would break at "-")
    rows = table_rows()
    commands = parsers(build_parser())
    assert len(rows) == len(commands) >= 35
    for path, parser in commands:
        name = f"goldpan {' '.join(path)}"
        row = next((r for line, r in rows.items() if line.split()[: len(path) + 1] == name.split()))
        # the options and the text above them; an epilog may name other commands' options
        bare = copy.copy(parser)
        bare.epilog = None
        shown = bare.format_help()
        flags = set(OPTION.findall(shown))
        assert "--help" in flags, name
        for flag in flags - {"--help"}:
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", row), (name, flag)


def test_goldpan_help_lists_every_declared_command_with_its_summary(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for command in commands():
        assert f"{command.name} {' '.join(command.summary.split())}" in text


def test_each_declaration_module_is_named_after_its_command_and_listed():
    modules = {m.name for m in pkgutil.iter_modules(declarations.__path__)}
    assert len(NAMES) == len(set(NAMES))
    assert {declarations.module_name(n).rsplit(".", 1)[1] for n in NAMES} == modules
    for name in NAMES:
        assert declarations.declaration(name).name == name


def test_every_run_names_a_function_of_tui_cli_commands():
    for top in commands():
        for path, command in top.walk():
            assert (command.run is None) == bool(command.subcommands), path
            if command.run is not None:
                module, _, function = command.run.partition(":")
                found = getattr(importlib.import_module(f"tui.cli.commands.{module}"), function)
                assert callable(found), path
