"""Filling a DataTable with columns as wide as their widest cell.

A DataTable sizes automatic columns when it next becomes idle; until then (and for as
long as something keeps the app busy) they are as wide as their header, which cuts
retriever names, scores and question ids. Columns filled here get their width up front.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.containers import Lines
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

if TYPE_CHECKING:
    from rich.console import Console
    from textual.widgets._data_table import CellCacheKey, ColumnKey, RowKey

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

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list[list[Segment]]:
        """One cell's lines: a one-line text cell that fits its column is drawn directly.

        Textual draws every cell through Rich's ``Styled(Padding(cell))``, about 0.3 ms a
        cell, and a first paint of the questions table draws some 300 of them (a third of
        the time to the first frame). A cell of one line of :class:`~rich.text.Text` that
        fits its column (what :func:`fill` makes) gives the same segments when its text is
        rendered alone and padded here; anything else goes Textual's way. Textual 8.2's
        cell cache and styles are used as its own ``_render_cell`` uses them.
        """
        fast = self._one_line_cell(row_index, column_index, width)
        if fast is None:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        cell, row_key, column_key = fast
        key: CellCacheKey = (
            row_key,
            column_key,
            base_style,
            cursor,
            hover,
            self._show_hover_cursor,
            self._update_count,
            self._pseudo_class_state,
        )
        cached = self._cell_render_cache.get(key)
        if cached is not None:
            return cached
        fixed = row_index < self.fixed_rows or column_index < self.fixed_columns
        component, post = self._get_styles_to_render_cell(
            False,
            False,
            fixed,
            hover,
            cursor,
            self.show_cursor,
            self._show_hover_cursor,
            self.cursor_foreground_priority == "css",
            self.cursor_background_priority == "css",
        )
        pre = base_style + Style.from_meta({"row": row_index, "column": column_index})
        options = self.app.console_options
        justify = cell.justify or options.justify or "default"
        overflow = cell.overflow or options.overflow or "fold"
        line = _padded(self.app.console, cell, width, self.cell_padding, justify, overflow)
        lines = [
            [
                Segment(t, (pre + component + s) + post if s else pre + component + post)
                for t, s, _ in line
            ]
        ]
        self._cell_render_cache[key] = lines
        return lines

    def _one_line_cell(
        self, row_index: int, column_index: int, width: int
    ) -> tuple[Text, RowKey, ColumnKey] | None:
        """The cell as one line of text that fits ``width``, with its keys; else None."""
        if row_index < 0 or column_index < 0:
            return None  # the header and row labels: Textual's way
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        if row_key is None or column_key is None:
            return None
        row = self.rows.get(row_key)
        if row is None or row.height != 1:
            return None
        cells = self._get_row_renderables(row_index).cells
        if column_index >= len(cells):
            return None
        cell = cells[column_index]
        if not isinstance(cell, Text) or cell.justify not in (None, "default", "left", "right"):
            return None
        plain = cell.plain
        if "\n" in plain or "\t" in plain or cell.cell_len > width - 2 * self.cell_padding:
            return None
        return cell, row_key, column_key


_JOIN = Text("\n")


def _padded(
    console: Console, cell: Text, width: int, padding: int, justify: str, overflow: str
) -> list[Segment]:
    """``Padding(cell, (0, padding))`` as Rich draws it at ``width``: one line that fits.

    The text is justified and rendered by Rich itself; the padding and the room left over
    are unstyled spaces (Rich's ``Segment.adjust_line_length``).
    """
    inner = width - 2 * padding
    line = cell.copy()
    Lines([line]).justify(console, inner, justify=justify, overflow=overflow)  # type: ignore[arg-type]
    line.truncate(inner, overflow=overflow)  # type: ignore[arg-type]
    null = Style.null()
    out = [Segment(" " * padding, null)] if padding else []
    # joined as Rich's Text.__rich_console__ joins its lines: the text's own style becomes
    # a span, which Text.render applies (it renders a text without spans unstyled)
    out.extend(_JOIN.join([line]).render(console, end=""))
    room = inner - line.cell_len
    if room > 0:
        out.append(Segment(" " * room, null))
    if padding:
        out.append(Segment(" " * padding, null))
    return out


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
