"""The candidate list redraws only the rows a key changes, and looks as if redrawn whole.

A cursor move redraws the row left and the row reached; a grade redraws its row. Each
screen below, drawn that way, is compared cell by cell (text and style) with the same
screen after the whole list is redrawn: a row left highlighted, or a mark not redrawn,
would differ.
"""

from __future__ import annotations

import pytest

from tests.tui.conftest import open_judge
from tui.textual_compat import screen_strips
from tui.widgets.candidate_list import CandidateList


def cells(app) -> list[list[tuple[str, object]]]:
    """Every line of the screen as drawn now: its segments' text and style."""
    strips = screen_strips(app.screen)
    return [[(seg.text, seg.style) for seg in strip] for strip in strips]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_rows_redrawn_alone_look_as_the_whole_list_redrawn(app_factory, size):
    app = app_factory()
    async with app.run_test(size=size) as pilot:
        screen = await open_judge(pilot, "q01")
        app.state.auto_advance = False
        candidates = screen.query_one(CandidateList)
        rows = len(candidates.candidates)
        assert rows > candidates.scrollable_content_region.height or size == (120, 40)
        # down past the bottom (the list scrolls at 80x24), back up, grades on the way
        keys = ["j", "j", "1", "k", *["j"] * rows, "2", *["k"] * 3, "0"]
        scrolled = False
        for key in keys:
            at = candidates.highlighted
            await pilot.press(key)
            await pilot.pause()
            drawn = cells(app)
            candidates.refresh()  # the whole list, every row drawn again
            await pilot.pause()
            assert drawn == cells(app), f"after {key!r} from row {at}"
            scrolled |= candidates.scroll_y > 0
        assert scrolled or size == (120, 40), "the list never scrolled"
