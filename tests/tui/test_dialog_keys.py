"""The dialogs declare their keys as commands too, and help prose names keys by command id.

So docs/tui.md's key table lists every key a person can press in a dialog, and a key is
written once: remapping it in its command changes the help text that mentions it.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from rich.text import Text

from tui.actions import Command, bindings, with_keys
from tui.app import GoldpanApp
from tui.help import HelpScreen, keys_table, navigation_text
from tui.screens.judge import JudgeScreen
from tui.screens.modals import DIALOGS
from tui.screens.write import WriteScreen
from tui.state import SharedState


def test_every_dialog_key_comes_from_a_command_and_is_in_the_key_table():
    table = keys_table()
    for dialog in (HelpScreen, *DIALOGS):
        assert dialog.AREA, dialog.__name__
        commands = {c.id: c for c in dialog.ACTIONS}
        assert len(commands) == len(dialog.ACTIONS) == len(dialog.BINDINGS), dialog.__name__
        for b in dialog.BINDINGS:
            c = commands[b.id]
            assert isinstance(c, Command) and c.help and c.footer
            assert (b.key, b.action, b.description, b.tooltip) == (
                c.key,
                c.action,
                c.footer,
                c.help,
            )
            assert f"| {dialog.AREA.lower()} | `{c.keys}` | {c.footer} |" in table


def test_help_prose_names_keys_by_command_id_and_follows_a_remap():
    remapped = tuple(
        replace(c, key="f9") if c.id == "write.save" else c for c in WriteScreen.ACTIONS
    )

    class Remapped(WriteScreen):
        ACTIONS = remapped
        BINDINGS = bindings(remapped)
        HELP = "`write.save` saves; `easy` and `hard` stay words."
        LEAVE = "`write.leave` goes back"

    assert Remapped.HELP == "`f9` saves; `easy` and `hard` stay words."
    assert Remapped.LEAVE == "escape goes back"  # plain text: no code span
    assert "`ctrl+s` saves" in WriteScreen.HELP  # the screen's own text, from its commands
    assert "`judge.undo`" not in JudgeScreen.HELP
    assert re.search(r"`u`\s+undoes the last", JudgeScreen.HELP)


def test_a_help_text_naming_no_command_is_refused_when_the_screen_is_declared():
    with pytest.raises(LookupError, match=r"`write\.sav` names no command here"):

        class Typo(WriteScreen):
            HELP = "`write.sav` saves"

    with pytest.raises(LookupError, match="no command here"):
        with_keys("`judge.undo` is not a Write key", WriteScreen.ACTIONS)


def test_the_help_lines_on_leaving_and_closing_take_their_keys_from_the_commands():
    quit_command = next(c for c in GoldpanApp.ACTIONS if c.id == "quit")
    app_keys = tuple(
        replace(c, key="ctrl+x") if c is quit_command else c for c in GoldpanApp.ACTIONS
    )
    nav = navigation_text(JudgeScreen(SharedState()), GoldpanApp.SCREEN_KEYS, app_keys)
    assert isinstance(nav, Text)
    lines = nav.plain.splitlines()
    assert lines[1].startswith("Leave") and "ctrl+x quits goldpan" in lines[1]
    assert lines[2].startswith("Help") and "escape, ? or f1 closes this help" in lines[2]
    write_nav = navigation_text(
        WriteScreen(SharedState()), GoldpanApp.SCREEN_KEYS, GoldpanApp.ACTIONS
    )
    assert write_nav.plain.splitlines()[1].startswith("Leave    escape goes back")
