"""The docs' generated tables (the key table, the command table), kept between markers.

Each table is rendered from its declarations (:func:`tui.help.keys_table`, written into
``docs/tui.md``; :func:`tui.cli.reference.commands_table`, written into ``docs/cli.md``);
a test fails while the page holds another text, and ``python -m tui.help`` /
``python -m tui.cli.reference`` write it in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
"""The folder of the pages that hold the tables."""


def with_table(page: str, start: str, end: str, table: str, what: str) -> str:
    """``page`` with the text between the markers ``start`` and ``end`` replaced by ``table``.

    Raises:
        ValueError: a marker is missing (``what`` names the table in the message).
    """
    if start not in page or end not in page:
        raise ValueError(f"the page has no generated {what} (its markers are missing)")
    head, rest = page.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{table}\n{end}{tail}"


def rewrite(path: Path, replace: Callable[[str], str], what: str) -> None:
    """Write ``replace(text of path)`` over ``path`` when it differs, saying which it was."""
    text = path.read_text(encoding="utf-8")
    new = replace(text)
    shown = f"{path.parent.name}/{path.name}"
    if new != text:
        path.write_text(new, encoding="utf-8")
        print(f"updated the {what} in {shown}")
    else:
        print(f"the {what} in {shown} is up to date")
