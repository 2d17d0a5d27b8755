"""Every screen does its main job at 80x24, by keys alone.

Each test checks what matters is on screen (inside the table's visible width) and then
does the screen's main action, asserting on the rows of the workspace file.
"""

from __future__ import annotations

from textual.widgets import DataTable

from tests.tui.conftest import my_labels, rows, wait_for
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.judge import JudgeScreen
from tui.screens.review import ReviewScreen

SMALL = (80, 24)


def on_screen(table: DataTable, key: str) -> bool:
    """Whether column ``key`` lies wholly inside the table's visible width."""
    left = 0
    for column in table.ordered_columns:
        right = left + column.get_render_width(table)
        if column.key.value == key:
            return right <= table.scrollable_content_region.width
        left = right
    raise AssertionError(f"no column {key!r}")


async def test_adjudicate_settles_a_dispute_at_80x24(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("d")
        screen = app.screen
        assert isinstance(screen, AdjudicateScreen)
        sides = screen.query_one("#sides", DataTable)
        assert screen.question_id == "q32"
        for key in ("a:jun", "a:mina", "final"):
            assert on_screen(sides, key), f"{key} is off screen"
        await pilot.press("2")  # take mina's side
        assert rows(demo_ws, "SELECT by FROM adjudications WHERE question_id = 'q32'") == [
            ("tester",)
        ]


async def test_adjudicate_below_60_columns_puts_the_list_above_and_keeps_every_grade(
    app_factory, demo_ws
):
    app = app_factory()
    async with app.run_test(size=(56, 24)) as pilot:
        await pilot.press("d")
        screen = app.screen
        assert isinstance(screen, AdjudicateScreen)
        assert screen.has_class("-narrow")
        listed = screen.query_one("#adjudicate-list", DataTable)
        sides = screen.query_one("#sides", DataTable)
        assert listed.region.bottom <= sides.region.y  # above, not beside
        for key in ("doc", "a:jun", "a:mina", "final"):
            assert on_screen(sides, key), f"{key} is off screen"
        await pilot.press("1")  # take jun's side
        assert rows(demo_ws, "SELECT by FROM adjudications WHERE question_id = 'q32'") == [
            ("tester",)
        ]
    async with app_factory().run_test(size=SMALL) as pilot:  # 80 columns: side by side
        await pilot.press("d")
        assert not pilot.app.screen.has_class("-narrow")


async def test_label_grades_at_80x24(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("l")
        assert isinstance(app.screen, JudgeScreen)
        await pilot.press("2")
        assert list(my_labels(demo_ws, "q01").values()) == [2]


async def write_then(pilot, text: str, key: str) -> None:
    """On the Write screen, type ``text``, then press ``key``."""
    await pilot.press("w", *text, key)


async def test_write_saves_at_80x24(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await write_then(pilot, "감마 카메라 점검 주기", "ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, JudgeScreen))
        assert rows(demo_ws, "SELECT text FROM questions WHERE text = '감마 카메라 점검 주기'")


async def test_questions_opens_one_at_80x24(app_factory):
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        table = app.screen.query_one("#questions", DataTable)
        assert on_screen(table, "question")  # the question text is never cut off
        await pilot.press("end")  # the last row, not the last column
        assert table.cursor_row == table.row_count - 1 and table.scroll_x == 0
        await pilot.press("home", "down", "enter")
        assert isinstance(app.screen, JudgeScreen) and app.screen.question_id == "q02"
        assert app.ws.question("q02") is not None


async def test_review_shows_a_retrievers_ranks_at_80x24(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        grid = screen.query_one("#grid", DataTable)
        await wait_for(pilot, lambda: grid.row_count > 0)
        scored = rows(demo_ws, "SELECT COUNT(DISTINCT question_id) FROM runs")[0][0]
        assert scored == 49 and grid.row_count == app.session.live.counts()["scored"]
        for column in list(grid.columns)[1:]:
            assert on_screen(grid, column.value), f"{column.value} is off screen"


async def test_a_dialog_wraps_its_lines_at_80x24_instead_of_cutting_them(app_factory):
    """Leaving Write with unsaved text asks first; at 80 columns its detail line (what `n`
    does) was cut at "with the text as". Every word of it is on screen now."""
    from textual.widgets import Label

    from tui.screens.modals import ConfirmScreen

    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await write_then(pilot, "abc", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.pause()
        detail = app.screen.query(Label)[1]
        shown = " ".join(
            strip.text.strip() for strip in detail.render_lines(detail.region.reset_offset)
        )
        assert shown == "ctrl+s saves it instead; n keeps you here with the text as it is."
        dialog = detail.parent
        assert dialog is not None and dialog.has_class("dialog")
        assert detail.region.right <= dialog.content_region.right  # not cut by the dialog
        assert detail.region.height == 2  # wrapped, at this width
        await pilot.press("n")
        assert not isinstance(app.screen, ConfirmScreen)


async def test_every_review_column_is_on_screen_at_80x24(app_factory):
    """ms p50, ms p95 and q/s were off the right edge: the metrics table takes one cell of
    padding and puts a header wider than its numbers on two lines."""
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("r")
        metrics = app.screen.query_one("#metrics", DataTable)
        await wait_for(pilot, lambda: metrics.row_count == 4)
        for column in metrics.ordered_columns:
            assert on_screen(metrics, column.key.value), column.label
        assert [str(c.label) for c in metrics.ordered_columns][-3:] == [
            "ms\np50",
            "ms\np95",
            "q/s",
        ]
        labels = [str(c.label) for c in metrics.ordered_columns]
        assert not any("Judged" in label for label in labels)  # the line above names it
        await pilot.resize_terminal(120, 40)  # room again: one line, as it was
        await wait_for(pilot, lambda: metrics.header_height == 1)
        assert str(metrics.ordered_columns[-2].label) == "ms p95"
        assert any("Judged" in str(c.label) for c in metrics.ordered_columns)


def test_narrow_latency_cells_take_three_significant_figures():
    """A dense retriever's 157.68 ms took the q/s column off an 80-column Review."""
    from tui.render import scores_grid

    means = {"e5": {"mrr": 0.5}}
    cells = {"e5": (65.15, 157.68, 11.43)}
    headers = ("ms p50", "ms p95", "q/s")
    wide = scores_grid(means, ["mrr"], cells, headers).rows[0][2:]
    narrow = scores_grid(means, ["mrr"], cells, headers, compact=True).rows[0][2:]
    assert [str(c) for c in wide] == ["65.15", "157.68", "11.43"]
    assert [str(c) for c in narrow] == ["65.2", "158", "11.4"]


async def test_the_tags_are_beside_the_question_at_80x24(app_factory):
    """The tags column was off the right edge: it stays on screen, cut only as far as the
    question column needs its least width."""
    from tui.screens.questions import LEAST_QUESTION, LEAST_TAGS

    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        table = app.screen.query_one("#questions", DataTable)
        await wait_for(pilot, lambda: table.row_count == 49)
        assert on_screen(table, "tags") and on_screen(table, "question")
        widths = {c.key.value: c.width for c in table.ordered_columns}
        assert widths["question"] >= LEAST_QUESTION and widths["tags"] >= LEAST_TAGS
        tags = [str(table.get_cell(f"q{i:02d}", "tags")) for i in range(1, 50)]
        assert "easy" in tags and "hard, paraphrase" in tags  # whole, not one letter


async def test_no_footer_is_cut_at_80x24(app_factory):
    """At 80 columns the footers lost their last keys ("? H▏", "m Auto-advance: ▏"): a
    narrow footer is compact and leaves `^p palette` out (ctrl+p still opens it)."""
    from textual.widgets import Footer

    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        # 2 on Label: undo joins the footer; m: the longer "Auto-advance: off"
        for key in ("q", "l", "2", "m", "r", "p", "p", "d", "w"):
            await pilot.press(key)
            await pilot.pause()
            footer = app.screen.query_one(Footer)
            palette = footer.query(".-command-palette")
            limit = palette.first().region.x if palette else footer.region.right
            keys = footer.query("FooterKey").exclude(".-command-palette")
            assert keys, key
            cut = [str(k.render()) for k in keys if not 0 < k.region.right <= limit]
            assert not cut, (key, cut)
        await pilot.press("escape")
        await pilot.resize_terminal(120, 40)  # room: spaced, with the palette's key
        await pilot.press("q")
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        assert not footer.compact and footer.query(".-command-palette")


async def test_the_by_tag_panel_fits_80_columns_with_long_tags(app_factory):
    """Two long tags (english-name, partial-id) pushed the overlap columns off the edge
    of an 80-column table nobody can scroll: a tag's name is cut over its columns (the
    panel's title names both whole)."""
    from textual.widgets import Static

    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("r", "p", "p")
        screen = app.screen
        table = screen.query_one("#tags-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 4)
        while screen._tags()[0] != "english-name":
            await pilot.press("1")
        while screen._tags()[1] != "partial-id":
            await pilot.press("2")
        await pilot.pause()
        for column in table.ordered_columns:
            assert on_screen(table, column.key.value), column.label
        title = str(screen.query_one("#panel-title", Static).render())
        assert "english-name vs partial-id" in title
        assert str(table.ordered_columns[1].label) == "englis…\nHit@1"
