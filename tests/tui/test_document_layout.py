"""A document shown is laid out in one pass, and looks as if the screen were laid out again.

The view's pieces skip the second layout pass Textual makes when a widget's size changes
(:class:`tui.widgets.document_view.Part`). Each screen below, drawn that way after a move
between documents of other lengths (the scrollbar coming and going with a 5 MB one), is
compared cell by cell (text and style) with the same screen after a full layout.
"""

from __future__ import annotations

import pytest

from tests.tui.conftest import open_judge
from tests.tui.test_big_document import big_ws  # noqa: F401 (a fixture)
from tests.tui.test_candidate_rows import cells
from tui.widgets.candidate_list import CandidateList
from tui.widgets.document_view import DocumentView


async def moves_look_laid_out_again(pilot, keys: list[str]) -> set[bool]:
    """Press each key; after each, the screen equals itself laid out again.

    Returns whether the document view had a vertical scrollbar, after each key.
    """
    app = pilot.app
    view = app.screen.query_one(DocumentView)
    bars = set()
    for key in keys:
        at = app.screen.query_one(CandidateList).highlighted
        await pilot.press(key)
        await pilot.pause()
        drawn = cells(app)
        bars.add(view.show_vertical_scrollbar)
        app.screen.refresh(layout=True)  # every widget laid out again
        await pilot.pause()
        assert drawn == cells(app), f"after {key!r} from row {at}"
    return bars


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_moving_between_documents_is_laid_out_once_and_right(app_factory, size):
    app = app_factory()
    async with app.run_test(size=size) as pilot:
        await open_judge(pilot, "q01")
        app.state.auto_advance = False
        await moves_look_laid_out_again(pilot, ["j", "j", "j", "k", "j", "j", "j", "j"])


async def test_the_scrollbar_comes_and_goes_with_a_big_document(app_factory, big_ws):  # noqa: F811
    app = app_factory(big_ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_judge(pilot, "q1")
        app.state.auto_advance = False
        bars = await moves_look_laid_out_again(pilot, ["j", "k", "j", "k"])
        assert bars == {True, False}
