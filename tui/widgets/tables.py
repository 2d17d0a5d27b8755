"""Filling a DataTable with columns as wide as their widest cell.

A DataTable sizes automatic columns when it next becomes idle; until then (and for as
long as something keeps the app busy) they are as wide as their header, which cuts
retriever names, scores and question ids. Columns filled here get their width up front.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from tui.literal import one_line

Cell = str | Text
PADDING = 2
"""Cells a column takes beyond its width (DataTable's cell padding, both sides)."""


class RowTable(DataTable[object]):
    """A table of rows: `home` / `end` go to the first / last row, as in a list.

    (A DataTable's own `home` / `end` scroll sideways to its first / last column, which
    a row cursor never needs.)
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "scroll_top", "First row", show=False),
        Binding("end", "scroll_bottom", "Last row", show=False),
    ]


def cut(s: str, cells: int) -> Text:
    """``s`` on one line, cut to ``cells`` terminal cells with an ellipsis.

    (A Hangul syllable takes two cells: cutting by characters would overflow.)
    """
    text = one_line(s)
    text.truncate(cells, overflow="ellipsis")
    return text


def room(total: int, widths: Sequence[int], least: int) -> int:
    """The width left for one stretching column in ``total`` cells; at least ``least``.

    Beside columns of ``widths``, with each column's padding and a scrollbar allowed for.
    """
    used = sum(w + PADDING for w in widths) + PADDING + 2  # its padding, the scrollbar
    return max(least, total - used)


def width(cell: object) -> int:
    """The widest line of a cell, in terminal cells."""
    if isinstance(cell, Text):
        return max((line.cell_len for line in cell.split("\n")), default=0)
    return max((cell_len(line) for line in str(cell).split("\n")), default=0)


def fill(
    table: DataTable[object],
    labels: Sequence[Cell],
    rows: Sequence[Sequence[Cell]],
    keys: Sequence[str] | None = None,
    *,
    column_keys: Sequence[str] | None = None,
) -> None:
    """Replace a table's columns and rows; each column as wide as its widest cell.

    Nothing is done when the table already holds exactly these (a redraw whose rows did
    not change): clearing and refilling a table repaints and re-lays out the screen.
    """
    content = (
        tuple(labels),
        tuple(tuple(row) for row in rows),
        tuple(keys) if keys is not None else None,
        tuple(column_keys) if column_keys is not None else None,
    )
    if getattr(table, "_filled_with", None) == content and table.row_count == len(rows):
        return
    table.clear(columns=True)
    for i, label in enumerate(labels):
        widest = max([width(label), *(width(row[i]) for row in rows if i < len(row))])
        table.add_column(label, width=widest, key=column_keys[i] if column_keys else None)
    for j, row in enumerate(rows):
        table.add_row(*row, key=keys[j] if keys else None)
    table._filled_with = content  # type: ignore[attr-defined]
