"""The README's command reference, generated from the command declarations."""

from __future__ import annotations

from tui.cli.declarations import ABOUT_GOLDPAN, COMMANDS

ABOUT: dict[str, str] = {
    "": ABOUT_GOLDPAN,
    **{" ".join(path): c.about for command in COMMANDS for path, c in command.walk()},
}
"""What each command's ``--help`` says above its options, by command path (``""`` is
``goldpan`` itself)."""
