"""A document shown is drawn at its own size, as if the screen were laid out again.

Each screen below, drawn after a move between documents of other lengths (the scrollbar
coming and going with a 5 MB one), is compared cell by cell (text and style) with the same
screen after a full layout; each frame of a grade that moves on draws the next document at
the size it needs.
"""

from __future__ import annotations

import pytest

from tests.tui.conftest import open_judge, wait_for
from tests.tui.test_big_document import big_ws  # noqa: F401 (a fixture)
from tests.tui.test_candidate_rows import cells
from tui.screens.judge import JudgeScreen
from tui.textual_compat import frames_rendered, laid_out_region
from tui.widgets.candidate_list import CandidateList
from tui.widgets.document_view import DocumentView, Part


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
async def test_moving_between_documents_is_laid_out_right(app_factory, size):
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


async def test_a_grade_that_moves_on_draws_the_next_document_at_its_own_size(app_factory):
    """The grade's frame shows the next document laid out, not cut to the last one's size.

    Grading moves the cursor on and shows the next document. Shown before the grade's own
    marks, its new size is laid out in the frame that draws the grade; shown after, that
    frame drew it at the size of the document before it, and a second frame drew it again.
    """
    app = app_factory()
    drawn: list[tuple[str, int, int]] = []  # (doc on show, height drawn at, height it needs)

    def checked() -> None:
        screen = app.screen
        if isinstance(screen, JudgeScreen) and screen.query_one(CandidateList).current:
            body = screen.query_one("#doc-body", Part)
            laid = laid_out_region(screen, body)
            if laid is not None and laid.width > 0:
                gutter = body.styles.gutter
                needs = gutter.height + body.get_content_height(
                    laid.size, screen.size, laid.width - gutter.width
                )
                current = screen.query_one(CandidateList).current
                drawn.append((current.doc_id if current else "", laid.height, needs))

    with frames_rendered(checked):
        await graded_four(app)
    heights = {needs for _, _, needs in drawn}
    assert len(heights) > 1, f"documents of one height only: nothing to tell ({drawn})"
    wrong = [d for d in drawn if d[1] != d[2]]
    assert not wrong, f"documents drawn at a size not their own: {wrong} of {drawn}"


async def graded_four(app) -> None:
    """Four grades on q01, each moving on to the next document."""
    async with app.run_test(size=(120, 40)) as pilot:
        judge = await open_judge(pilot, "q01")
        assert app.state.auto_advance
        # as a person's first grade comes: after the soundness checks that start with the
        # first paint. A grade typed at once waits for their verdict inside its handler,
        # and on a busy processor the screen's next frame then came first: two frames of
        # the next document at the last one's size. Pushing the layout to the screen at
        # once fixed that but drew every grade a frame later, so the app keeps it.
        await wait_for(pilot, lambda: not app.ws.soundness_checking())
        candidates = judge.query_one(CandidateList)
        shown = set()
        for _ in range(4):
            before = candidates.current.doc_id
            await pilot.press("1")
            await wait_for(pilot, lambda before=before: candidates.current.doc_id != before)
            await pilot.pause()
            shown.add(candidates.current.doc_id)
