"""Keys typed ahead are handled before the screen is drawn again (tui.typeahead).

A move and a grade that reached a served tab together drew the move first (the cursor
on the next document, not graded), then the grade: a frame thrown away, that the grade's
frame waited for. Drawing now waits while a key is waiting, for TYPEAHEAD_S at most.
"""

from __future__ import annotations

import os

from textual import events

from tests.tui.conftest import open_judge, wait_for
from tui.screens.judge import JudgeScreen
from tui.textual_compat import frames_rendered
from tui.typeahead import keys_waiting, unread
from tui.widgets.candidate_list import CandidateList


def test_bytes_not_read_yet_are_keys_waiting() -> None:
    read, write = os.pipe()
    try:
        assert not unread(read)
        os.write(write, b"j")
        assert unread(read)
        os.read(read, 1)
        assert not unread(read)
    finally:
        os.close(read)
        os.close(write)


class Frames(list[int | None]):
    """The row highlighted in each frame drawn, once a list is watched."""

    def __init__(self) -> None:
        super().__init__()
        self.watched: CandidateList | None = None

    def drawn(self) -> None:
        if self.watched is not None:
            self.append(self.watched.highlighted)


async def judged(pilot, frames: Frames) -> tuple[JudgeScreen, CandidateList]:
    """q01 open on its first row; from now on, ``frames`` records each frame drawn."""
    judge = await open_judge(pilot, "q01")
    candidates = judge.query_one(CandidateList)
    await wait_for(pilot, lambda: candidates.highlighted == 0)
    frames.watched = candidates
    return judge, candidates


async def test_drawing_waits_for_a_key_typed_ahead_then_draws(app_factory):
    app = app_factory()
    frames = Frames()
    with frames_rendered(frames.drawn):
        async with app.run_test(size=(120, 40)) as pilot:
            judge, candidates = await judged(pilot, frames)
            candidates.highlighted = 1
            judge.refresh()  # a change to draw...
            app.post_message(events.Key("j", "j"))  # ...and a key behind it, not handled yet
            assert keys_waiting(app)
            judge.draw_pending()  # the screen's tick: it waits for the key
            assert frames == [], "drawn while a key waited"
            await wait_for(pilot, lambda: candidates.highlighted == 2 and bool(frames))
            assert frames[-1] == 2  # the key's result drawn, the row it passed through never


async def test_drawing_waits_for_keys_typed_ahead_a_moment_at_most(app_factory, monkeypatch):
    """A key that keeps waiting holds no frame back longer than TYPEAHEAD_S."""
    app = app_factory()
    frames = Frames()
    with frames_rendered(frames.drawn):
        async with app.run_test(size=(120, 40)) as pilot:
            judge, candidates = await judged(pilot, frames)
            monkeypatch.setattr("tui.screens.base.keys_waiting", lambda app: True)  # no end
            candidates.highlighted = 1
            judge.refresh()
            judge.draw_pending()
            assert frames == []
            assert judge._typeahead_until is not None
            await wait_for(pilot, lambda: bool(frames))
            assert frames[-1] == 1  # drawn although a key kept "waiting"
            candidates.highlighted = 2  # and so is each change after it
            await wait_for(pilot, lambda: frames[-1] == 2)
