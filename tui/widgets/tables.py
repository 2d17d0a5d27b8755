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


def fitted(
    labels: Sequence[Cell], rows: Sequence[Sequence[Cell]], room: int, padding: int
) -> tuple[list[Cell], int, int]:
    """Headers, cell padding and header height that fit a table in ``room`` cells.

    The table as it is when it fits (``padding`` on each side of each cell); else with one
    cell of padding; else also with each header wider than its cells split in two lines
    at its last space or ``@`` (``ms p95`` over ``ms`` / ``p95``, ``nDCG@10`` over
    ``nDCG`` / ``@10``), which leaves a column as wide as its numbers. What still does
    not fit scrolls sideways.
    """
    cells = [
        max((width(row[i]) for row in rows if i < len(row)), default=0) for i in range(len(labels))
    ]

    def needed(heads: Sequence[Cell], pad: int) -> int:
        return sum(max(width(h), c) + 2 * pad for h, c in zip(heads, cells, strict=True))

    for pad in dict.fromkeys((padding, 1)):
        if needed(labels, pad) <= room:
            return list(labels), pad, 1
    split = [two_lines(h) if width(h) > c else h for h, c in zip(labels, cells, strict=True)]
    return split, 1, 2 if split != list(labels) else 1


def two_lines(label: Cell) -> Cell:
    """A header on two lines at its last space or ``@`` (as it is when it has neither).

    ``title ov.`` over ``title`` / ``ov.``: a column of short numbers needs no wider one.
    """
    text = label if isinstance(label, Text) else Text(label)
    plain = text.plain
    at = max(plain.rfind(" "), plain.rfind("@"))
    if at <= 0:
        return label
    cut = at + 1 if plain[at] == " " else at
    out = Text(justify=text.justify)
    out.append_text(text[:at].copy())
    out.append("\n")
    out.append_text(text[cut:].copy())
    return out


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
