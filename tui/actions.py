"""One declaration per action: its key, footer text, help, palette entry and availability.

Every screen (and the app) lists its :class:`Command` objects in ``ACTIONS``; everything a
user reads about a key is derived from them (davep/braindrop's command pattern):

- the footer and the key bindings: ``BINDINGS = bindings(ACTIONS)``;
- the command palette: :func:`palette_commands`, gated by the screen's ``check_action``,
  runs the same action string as the key;
- the help screen (``?`` / ``f1``): :mod:`tui.help` lists the commands with their help;
- the keys named in a screen's ``HELP`` prose and a dialog's hint line: :func:`with_keys`
  writes a command's id (``"`judge.undo`"``) as its key;
- docs/tui.md's key table: :func:`tui.help.keys_table`, checked by a test (the dialogs'
  keys too: :mod:`tui.screens.modals` and the help screen declare theirs the same way).

``when`` names a boolean attribute of the screen: while it is false the command is
unavailable (hidden from the footer, refused by the key, left out of the palette).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.dom import DOMNode
from textual.widget import Widget

KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "plus": "+",
    "minus": "-",
}
"""How a Textual key name is written for people."""


def shown_key(key: str) -> str:
    """A binding's keys as people write them: ``question_mark,f1`` -> ``? / f1``."""
    return " / ".join(KEY_NAMES.get(k, k) for k in key.split(","))


def spoken_keys(key: str) -> str:
    """A binding's keys in a sentence: ``escape,question_mark,f1`` -> ``escape, ? or f1``."""
    names = [KEY_NAMES.get(k, k) for k in key.split(",")]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


@dataclass(frozen=True)
class Command:
    """A user action, declared once."""

    key: str
    """Textual key name(s), comma separated (``"question_mark,f1"``)."""
    action: str
    """The action string the key and the palette run (``"grade(2)"``)."""
    footer: str
    """The short name in the footer and the help's key list."""
    help: str
    """One sentence: the tooltip, the help screen's and the palette's explanation."""
    id: str
    """A stable id (``App.set_keymap`` remaps keys by it)."""
    title: str = ""
    """The palette title, ``area: verb`` (empty: the command is not in the palette)."""
    show: bool = True
    """Shown in the footer (the rest still appear in help and the palette)."""
    group: Binding.Group | None = None
    """Footer group (``0-3 Grade``)."""
    priority: bool = False
    """A priority binding (works even when a focused widget wants the key)."""
    when: str | None = None
    """Name of a boolean screen attribute that must be true for the command to work."""
    doc_key: str | None = None
    """How docs/tui.md's key table writes the key when several commands share one row (``1-9``)."""
    doc_help: str | None = None
    """The key table's explanation of that shared row."""

    @property
    def name(self) -> str:
        """The action's name without its arguments (``grade``)."""
        return self.action.split("(", 1)[0]

    @property
    def keys(self) -> str:
        """The key(s) as people write them."""
        return self.doc_key or shown_key(self.key)

    def binding(self) -> Binding:
        """The Textual binding of this command."""
        return Binding(
            self.key,
            self.action,
            self.footer,
            show=self.show,
            group=self.group,
            priority=self.priority,
            id=self.id,
            tooltip=self.help,
        )


def bindings(commands: Iterable[Command]) -> list[Binding | tuple[str, str] | tuple[str, str, str]]:
    """The bindings of a screen's (or the app's) commands (typed as Textual's ``BINDINGS``)."""
    return [c.binding() for c in commands]


KEY_REFERENCE = re.compile(r"`([a-z_]+\.[a-z0-9_]+)`")
"""A code span naming a command by its id in help prose: ``"`judge.undo`"``."""


def with_keys(text: str, commands: Sequence[Command], *, code: bool = True) -> str:
    """``text`` with each code span naming a command's id written as that command's key.

    ``"`judge.undo` undoes"`` becomes ``"`u` undoes"`` (``"u undoes"`` when ``code`` is
    false, for plain text), so help prose names keys without restating them: remapping a
    key in its :class:`Command` changes the prose too. A code span with a dot that names
    none of ``commands`` is refused (a typo, or a command renamed); other code spans
    (``"`disputed`"``, a tag) are left as they are.
    """
    ids = {c.id: c for c in commands}

    def key(match: re.Match[str]) -> str:
        command = ids.get(match[1])
        if command is None:
            known = ", ".join(ids) or "none"
            raise LookupError(f"{match[0]} names no command here (their ids: {known})")
        return f"`{command.keys}`" if code else command.keys

    return KEY_REFERENCE.sub(key, text)


def by_id(commands: Sequence[Command], command_id: str) -> Command:
    """The command with this id (a :class:`LookupError` names the ids there are)."""
    for command in commands:
        if command.id == command_id:
            return command
    raise LookupError(f"no command {command_id!r} (their ids: {', '.join(c.id for c in commands)})")


def find(commands: Sequence[Command], action: str) -> Command | None:
    """The first command whose action has this name."""
    return next((c for c in commands if c.name == action), None)


def available(node: DOMNode, commands: Sequence[Command], action: str) -> bool:
    """Whether ``action`` works now on ``node``, per its command's ``when``."""
    command = find(commands, action)
    if command is None or command.when is None:
        return True
    return bool(getattr(node, command.when))


def palette_commands(
    node: Widget | App[Any], commands: Iterable[Command]
) -> Iterable[SystemCommand]:
    """Palette entries for the commands that work now; each runs the key's action."""
    for command in commands:
        if not command.title:
            continue
        if node.check_action(command.name, ()) is False:
            continue
        yield SystemCommand(command.title, command.help, _runner(node, command.action))


def _runner(node: Widget | App[Any], action: str) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        await node.run_action(action)

    return run
