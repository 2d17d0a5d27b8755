"""The tables' own cell drawing (tui/widgets/tables.py) gives Textual's segments exactly.

RowTable draws a one-line text cell that fits its column itself, for speed (a first
paint of the questions table draws some 300 cells); every such cell of the questions and
adjudicate tables, plain, under the cursor and the hover and on other row styles, must
come out segment for segment as Textual's DataTable draws it.
"""

from __future__ import annotations

from rich.style import Style
from textual.widgets import DataTable

from tests.tui.conftest import wait_for
from tests.tui.test_adjudicate import open_adjudicate
from tui.widgets.tables import RowTable

BASES = (Style(), Style(bgcolor="red"), Style.parse("bold on blue"))
STATES = ((False, False), (True, False), (False, True))


def cells_differing(table: RowTable) -> tuple[int, int, list[tuple[int, int]]]:
    """How many cells were compared, how many RowTable draws itself, and where its
    drawing is not Textual's."""
    compared, own, wrong = 0, 0, []
    for r in range(table.row_count):
        for c, column in enumerate(table.ordered_columns):
            width = column.get_render_width(table)
            own += table._one_line_cell(r, c, width) is not None
            for base in BASES:
                for cursor, hover in STATES:
                    table._cell_render_cache.clear()
                    mine = table._render_cell(r, c, base, width, cursor, hover)
                    table._cell_render_cache.clear()
                    theirs = DataTable._render_cell(table, r, c, base, width, cursor, hover)
                    compared += 1
                    if mine != theirs:
                        wrong.append((r, c))
    table._cell_render_cache.clear()
    table.refresh()
    return compared, own, wrong


async def test_questions_table_cells_are_drawn_as_textual_draws_them(app_factory):
    for size in ((120, 40), (80, 24)):
        async with app_factory().run_test(size=size) as pilot:
            app = pilot.app
            await wait_for(pilot, lambda a=app: bool(a.screen.overlap))  # the % cells too
            table = app.screen.query_one(RowTable)
            compared, own, wrong = cells_differing(table)
            cells = 49 * len(table.columns)
            assert table.row_count == 49 and compared == cells * len(BASES) * len(STATES)
            assert own == cells  # every cell of this table takes RowTable's way
            assert wrong == []


async def test_adjudicate_tables_cells_are_drawn_as_textual_draws_them(app_factory):
    async with app_factory().run_test(size=(120, 40)) as pilot:
        screen = await open_adjudicate(pilot, "q35")
        for table in screen.query(RowTable):
            compared, own, wrong = cells_differing(table)
            assert own and wrong == []
