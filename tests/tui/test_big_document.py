"""A 5 MB document in the Label screen: its first screen shows at once, the previous
document's text is gone the moment the cursor leaves it, a grade goes to the document
shown, memory stays a small multiple of the document, and scrolling reads on.

(The 200 ms figure is measured by benchmarks/bench_big_document.py, not timed here.)
"""

from __future__ import annotations

import functools
import resource
import time
from pathlib import Path

import pytest

from engine.types import Doc, Label, Question
from engine.workspace import Workspace
from tests.tui.conftest import APP_SIZE, my_labels, open_judge, plain
from tui.textual_compat import screen_text
from tui.widgets.candidate_list import CandidateList
from tui.widgets.document_view import MOST_PARTS, DocumentView

BIG_BYTES = 5 * 1024 * 1024
FIRST = "FIRST-LINE of the big document: 감쇠 보정 원리"
LAST = "LAST-LINE of the big document"
LINE = "금속 인공물 감쇠 보정 원리와 점검 절차를 다시 설명한다. lorem ipsum dolor sit amet\n"
SMALL = "SMALL-TEXT of the small document"


@functools.cache
def big_text() -> str:
    """About 5 MB of UTF-8: a first line, numbered lines of Korean and Latin, a last one."""
    n = (BIG_BYTES - len(FIRST.encode()) - len(LAST.encode())) // (8 + len(LINE.encode()))
    return "".join([f"{FIRST}\n", *(f"{i:07} {LINE}" for i in range(n)), LAST])


@pytest.fixture
def big_ws(tmp_path: Path) -> Path:
    """A question whose two judged candidates are a small document and a 5 MB one."""
    path = tmp_path / "big.db"
    ws = Workspace.create(path)  # no retriever: the candidates are the judged documents
    ws.write_docs([Doc("small", "Small", SMALL, {}), Doc("big", "Big", big_text(), {})])
    ws.write_questions([Question("q1", "감쇠 보정 원리", ())])
    ws.write_labels([Label("q1", "small", "other", 0), Label("q1", "big", "other", 0)])
    ws.close()
    return path


def rss_peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def painted(app) -> str:
    return screen_text(app.screen)


async def test_moving_onto_a_5_mb_document(app_factory, big_ws):
    app = app_factory(big_ws)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q1")
        app.state.auto_advance = False
        candidates = screen.query_one(CandidateList)
        view = screen.query_one(DocumentView)
        ids = [c.doc_id for c in candidates.candidates]
        candidates.select("small")
        await pilot.pause()
        assert SMALL in painted(app)
        before = rss_peak_bytes()
        key = "j" if ids.index("big") > ids.index("small") else "k"
        started = time.monotonic()
        await pilot.press(key)
        assert candidates.current is not None and candidates.current.doc_id == "big"
        assert SMALL not in view.shown_text(), "the small document is still in the view"
        assert FIRST in view.shown_text()
        while FIRST not in painted(app):  # the first line on screen, within a bounded wait
            assert time.monotonic() - started < 3, "the first screen took over 3 s"
            await pilot.pause(0.02)
        assert time.monotonic() - started < 3, "the first screen took over 3 s"
        assert SMALL not in painted(app)
        grown = rss_peak_bytes() - before
        assert grown < 20 * BIG_BYTES, f"memory grew by {grown / 2**20:.0f} MB"
        assert "KB" in plain(view.query_one("#doc-more")), "no word of the text not shown yet"
        await pilot.press("2")  # the grade goes to the document on screen
        assert my_labels(big_ws, "q1") == {"big": 2}


async def test_scrolling_reads_on_and_back_through_a_window(app_factory, big_ws):
    app = app_factory(big_ws)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q1")
        screen.query_one(CandidateList).select("big")
        await pilot.pause()
        view = screen.query_one(DocumentView)
        text = big_text()
        end = len(view.shown_text())
        for _ in range(MOST_PARTS + 4):  # scrolling to the end of what is shown reads on
            view.scroll_end(animate=False)
            await pilot.pause()
            shown = view.shown_text()
            start = text.index(shown)
            assert start + len(shown) > end  # further on, in order, nothing skipped
            end = start + len(shown)
            assert len(view.query(".doc-part")) < MOST_PARTS  # and the window slides
        assert start > 0 and FIRST not in painted(app)
        assert "KB above" in plain(view.query_one("#doc-above"))
        on_screen = painted(app)
        while view.shown_text() != text[: len(view.shown_text())]:  # back to the start
            before = view.shown_text()
            view.scroll_home(animate=False)
            await pilot.pause()
            await pilot.pause()
            assert view.shown_text() != before, "scrolling up did not read back"
        view.scroll_home(animate=False)
        await pilot.pause()
        assert FIRST in painted(app) and on_screen != painted(app)
        assert not view.query_one("#doc-above").display


async def test_drawing_the_question_again_leaves_the_document_where_it_is_read(app_factory, big_ws):
    app = app_factory(big_ws)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q1")
        candidates = screen.query_one(CandidateList)
        view = screen.query_one(DocumentView)
        candidates.select("big")
        await pilot.pause()
        view.scroll_to(y=5, animate=False)
        await pilot.pause()
        await pilot.pause()
        y, shown = view.scroll_y, view.shown_text()
        assert y > 0
        screen.show_question()  # as after a change elsewhere: the same candidate, again
        await pilot.pause()
        assert (view.scroll_y, view.shown_text()) == (y, shown)
        candidates.select("small")
        await pilot.pause()
        candidates.select("big")  # another document, then this one again: from its top
        await pilot.pause()
        assert view.scroll_y == 0 and FIRST in view.shown_text()
