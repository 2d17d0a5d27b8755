"""Filling a DataTable with columns as wide as their widest cell.

A DataTable sizes automatic columns when it next becomes idle; until then (and for as
long as something keeps the app busy) they are as wide as their header, which cuts
retriever names, scores and question ids. Columns filled here get their width up front.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

Cell = str | Text


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
    """Replace a table's columns and rows; each column as wide as its widest cell."""
    table.clear(columns=True)
    for i, label in enumerate(labels):
        widest = max([width(label), *(width(row[i]) for row in rows if i < len(row))])
        table.add_column(label, width=widest, key=column_keys[i] if column_keys else None)
    for j, row in enumerate(rows):
        table.add_row(*row, key=keys[j] if keys else None)
