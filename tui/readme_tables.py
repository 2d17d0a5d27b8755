"""The README's generated tables (the key table, the command table), kept between markers.

Each table is rendered from its declarations (:func:`tui.help.keys_table`,
:func:`tui.cli.reference.commands_table`); a test fails while the README holds another
text, and ``python -m tui.help`` / ``python -m tui.cli.reference`` write it in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def with_table(readme: str, start: str, end: str, table: str, what: str) -> str:
    """``readme`` with the text between the markers ``start`` and ``end`` replaced by ``table``.

    Raises:
        ValueError: a marker is missing (``what`` names the table in the message).
    """
    if start not in readme or end not in readme:
        raise ValueError(f"README.md has no generated {what} (its markers are missing)")
    head, rest = readme.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{table}\n{end}{tail}"


def rewrite(replace: Callable[[str], str], what: str) -> None:
    """Write ``replace(README)`` over the README when it differs, saying which it was."""
    text = README.read_text(encoding="utf-8")
    new = replace(text)
    if new != text:
        README.write_text(new, encoding="utf-8")
        print(f"updated the {what} in {README.name}")
    else:
        print(f"the {what} in {README.name} is up to date")
