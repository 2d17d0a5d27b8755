"""The candidate list measures its rows at the width it draws them at.

When a longer list brings the scrollbar, the rows are two cells narrower than when they
were first measured. A title that fitted the list by a cell or two then needs a second
line: measured before the scrollbar came, it kept one, and its end (the document id) was
cut off the screen.
"""

from __future__ import annotations

from textual.app import App, ComposeResult

from engine.pooling import Candidate
from tui.textual_compat import screen_text
from tui.widgets.candidate_list import CandidateList

WIDTH = 24
EXACT = "abcdefghijklmnop"  # "[ ] " + 16 + "  d9": exactly 24 cells, one line without the bar


class ListApp(App[None]):
    CSS = f"CandidateList {{ width: {WIDTH}; height: 4; border: none; padding: 0; }}"

    def compose(self) -> ComposeResult:
        yield CandidateList()


def heights_at(widget: CandidateList, width: int) -> list[int]:
    """Each option's height, measured now at ``width`` cells."""
    return [widget.option_height(i, width) for i in range(widget.option_count)]


async def test_rows_measured_again_once_the_scrollbar_narrows_them():
    app = ListApp()
    async with app.run_test(size=(40, 12)) as pilot:
        widget = app.query_one(CandidateList)
        widget.show([Candidate("d1")], {"d1": "short"})
        await pilot.pause()
        assert widget.scrollable_content_region.width == WIDTH  # no scrollbar yet
        many = [Candidate(f"d{i}") for i in range(1, 10)]
        titles = {f"d{i}": f"title {i}" for i in range(1, 9)} | {"d9": EXACT}
        widget.show(many, titles)
        await pilot.pause()
        narrower = widget.scrollable_content_region.width
        assert narrower < WIDTH, "the longer list has a scrollbar"
        assert heights_at(widget, WIDTH)[-1] == 1 and heights_at(widget, narrower)[-1] == 2
        lines = widget.option_lines(8)
        assert lines is not None and lines[1] == 2  # the last row: two lines high
        assert widget.virtual_size.height == sum(heights_at(widget, narrower))
        widget.highlighted = 8  # scrolled to the end: the id is on screen
        await pilot.pause()
        shown = screen_text(app.screen)
        assert "d9" in shown, shown
