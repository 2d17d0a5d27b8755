"""A goldpan screen draws nothing that would be thrown away, and loses no drawing.

Textual renders a whole frame and then drops it while the app is in a batch (its start is
one): the first screen was rendered once more than it was shown, before the first paint.
The screens now only ask to be drawn once the batch is over; what changed in the batch is
on screen after it.
"""

from __future__ import annotations

from textual._compositor import Compositor
from textual.widgets import Header

from tui.screens.base import GoldpanScreen


async def test_no_frame_is_rendered_inside_a_batch(app_factory, monkeypatch):
    batches: list[int] = []
    app = app_factory()
    render = Compositor.render_update

    def counted(self, *args, **kwargs):
        batches.append(app._batch_count)
        return render(self, *args, **kwargs)

    monkeypatch.setattr(Compositor, "render_update", counted)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, GoldpanScreen)
        assert batches, "the first screen was drawn"
        assert batches.count(0) == len(batches), f"frames rendered in a batch: {batches}"
        first = app.screen._compositor.render_strips()
        assert any("status:" in "".join(s.text for s in strip) for strip in first)


async def test_what_changes_inside_a_batch_is_drawn_after_it(app_factory):
    app = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        header = app.screen.query_one(Header)
        with app.batch_update():
            app.sub_title = "changed in a batch"
            header.refresh()
            app.screen._compositor_refresh()  # asked to draw now: it waits for the batch
            assert app.screen._repaint_required
        await pilot.pause()
        await pilot.pause()
        assert not app.screen._repaint_required
        text = "\n".join(
            "".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()
        )
        assert "changed in a batch" in text
