"""A goldpan screen draws nothing that would be thrown away, and loses no drawing.

Textual renders a whole frame and then drops it while the app is in a batch (its start is
one): the first screen was rendered once more than it was shown, before the first paint.
The screens now only ask to be drawn once the batch is over; what changed in the batch is
on screen after it.
"""

from __future__ import annotations

from textual.widgets import Header

from tests.tui.conftest import open_judge, wait_for
from tui.screens.base import GoldpanScreen
from tui.screens.judge import JudgeScreen
from tui.textual_compat import frames_rendered, in_batch, laid_out_region, screen_text
from tui.widgets.candidate_list import CandidateList
from tui.widgets.document_view import Part


async def test_no_frame_is_rendered_inside_a_batch(app_factory):
    batches: list[bool] = []
    app = app_factory()
    with frames_rendered(lambda: batches.append(in_batch(app))):
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, GoldpanScreen)
            assert batches, "the first screen was drawn"
            assert not any(batches), f"frames rendered in a batch: {batches}"
            assert "status:" in screen_text(app.screen)


async def test_what_changes_inside_a_batch_is_drawn_after_it(app_factory):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        header = app.screen.query_one(Header)
        with app.batch_update():
            app.sub_title = "changed in a batch"
            header.refresh()
            app.screen.draw_now()  # asked to draw now: it waits for the batch
            assert app.screen.repaint_pending
        await pilot.pause()
        await pilot.pause()
        assert not app.screen.repaint_pending
        assert "changed in a batch" in screen_text(app.screen)


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
