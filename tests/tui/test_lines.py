"""The progress and status lines: redrawn in place, re-laid out only when their height changes."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widget import Widget

from tui.widgets.lines import Lines


class OneLine(App[None]):
    CSS = "Lines { height: auto; max-height: 2; width: 24; }"

    def compose(self) -> ComposeResult:
        yield Lines(id="line")


def watch_layouts(monkeypatch, widget: Widget) -> list[bool]:
    asked: list[bool] = []
    original = Widget.refresh

    def refresh(self, *regions, layout: bool = False, **kw):  # type: ignore[no-untyped-def]
        if self is widget:
            asked.append(layout)
        return original(self, *regions, layout=layout, **kw)

    monkeypatch.setattr(Widget, "refresh", refresh)
    return asked


async def test_same_height_no_layout_a_new_height_relays_and_shows_every_line(monkeypatch):
    app = OneLine()
    async with app.run_test(size=(40, 10)) as pilot:
        line = app.query_one(Lines)
        line.show(Text("q01: 1/17 judged"))
        await pilot.pause()
        assert line.size.height == 1
        asked = watch_layouts(monkeypatch, line)

        line.show(Text("q01: 2/17 judged"))  # same height: drawn in place
        await pilot.pause()
        assert asked == [False]
        assert "2/17" in str(line.render())

        line.show(Text("q01: 3/17 judged · ] opens q02 · auto-advance on"))  # wraps to 2
        await pilot.pause()
        assert asked[-1] is True
        assert line.size.height == 2

        line.show(Text("a much longer line than two lines of twenty-four cells can hold"))
        await pilot.pause()
        assert asked[-1] is False  # still 2: max-height caps it
        assert line.size.height == 2

        line.show("")
        await pilot.pause()
        assert asked[-1] is True and line.size.height == 1


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        from textual.widgets import DataTable

        yield DataTable()


async def test_a_table_refilled_with_the_same_rows_is_left_alone_and_a_change_refills_it():
    from textual.widgets import DataTable

    from tui.widgets.tables import fill

    app = OneTable()
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.query_one(DataTable)
        rows = [["q01", Text("labeled", style="green")], ["q02", "-"]]
        fill(table, ["id", "status"], rows, ["q01", "q02"])
        await pilot.pause()
        table.move_cursor(row=1)
        fill(table, ["id", "status"], [list(r) for r in rows], ["q01", "q02"])  # equal copy
        assert table.cursor_row == 1  # not cleared (a clear puts the cursor back on row 0)
        fill(table, ["id", "status"], [["q01", Text("disputed")], ["q02", "-"]], ["q01", "q02"])
        assert table.get_cell_at((0, 1)).plain == "disputed"
        assert table.cursor_row == 0  # refilled
        fill(table, ["id", "status"], [["q01", Text("disputed")]], ["q01"])
        assert table.row_count == 1
