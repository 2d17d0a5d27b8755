"""The annotator's loop: one refresh per change and then quiet, auto-advance, progress,
the current question shared by every screen, search, Write's way out and its hints."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter

import pytest
from textual.widgets import DataTable, Input, OptionList, Static

from engine.retrieve import bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.workspace import Workspace
from tests.tui.conftest import APP_SIZE, my_labels, open_judge, plain, rows, wait_for
from tui.screens.base import GoldpanScreen, cursor_key
from tui.screens.judge import JudgeScreen
from tui.screens.modals import ConfirmScreen, SearchScreen
from tui.screens.questions import QuestionsScreen
from tui.screens.review import ReviewScreen
from tui.screens.write import WriteScreen
from tui.textual_compat import messages_dispatched, notification_messages, screen_text
from tui.widgets.candidate_list import CandidateList


def painted(app) -> str:
    return screen_text(app.screen)


def notices(app) -> str:
    return " | ".join(notification_messages(app))


class Deliveries:
    """Counts WorkspaceChanged per screen, and every message any node handles."""

    def __init__(self, monkeypatch) -> None:
        self.per_screen: Counter[str] = Counter()
        self.messages: Counter[str] = Counter()
        handler = GoldpanScreen.on_workspace_changed

        def counted(screen, message):
            self.per_screen[type(screen).__name__] += 1
            return handler(screen, message)

        monkeypatch.setattr(GoldpanScreen, "on_workspace_changed", counted)

    def every(self, pump, message) -> None:
        if not type(pump).__name__.startswith("Toast"):  # notifications expire on time
            self.messages[type(message).__name__] += 1


@pytest.fixture
def deliveries(monkeypatch):
    seen = Deliveries(monkeypatch)
    with messages_dispatched(seen.every):
        yield seen


async def visit_every_screen(pilot) -> None:
    for key in "rdlwq":
        await pilot.press(key)
        await pilot.pause()


@pytest.fixture
def pooled_tiny(tiny_ws):
    """The tiny workspace with the two retrievers the issue saw cut to one name."""
    ws = Workspace.open(tiny_ws)
    for spec in ws.retrievers():
        ws.remove_retriever(spec.name)
    ws.add_retriever(bm25_spec("bm25-word", "word"))
    ws.add_retriever(bm25_spec("bm25-word+bigram", "word+bigram"))
    refresh_runs(ws)
    ws.close()
    return tiny_ws


async def test_one_save_one_delivery_per_live_screen_then_quiet(
    app_factory, pooled_tiny, deliveries
):
    seen = deliveries
    app = app_factory(pooled_tiny)
    async with app.run_test(size=APP_SIZE) as pilot:
        await visit_every_screen(pilot)
        assert len(app.live_screens) == 5
        seen.per_screen.clear()
        await pilot.press("w", *"금속 보정 방법", "ctrl+s")
        assert isinstance(app.screen, JudgeScreen)
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: sum(seen.per_screen.values()) >= 5)
        await pilot.pause(0.3)
        # the pooled question was announced once to each of the five screens, and never
        # came back to the app (the old loop re-posted it forever)
        assert seen.per_screen == Counter(
            {
                "QuestionsScreen": 1,
                "WriteScreen": 1,
                "JudgeScreen": 1,
                "ReviewScreen": 1,
                "AdjudicateScreen": 1,
            }
        )
        assert seen.messages["QuestionPooled"] == 1
        # then quiet: nothing at all is handled over a bounded wait
        app.clear_notifications()
        await pilot.pause(0.1)
        seen.messages.clear()
        await asyncio.sleep(0.5)  # (pilot.pause posts callbacks of its own)
        assert sum(seen.messages.values()) == 0, seen.messages
        # one grade: again exactly one delivery per live screen
        seen.per_screen.clear()
        await pilot.press("2")
        await pilot.pause(0.2)
        assert set(seen.per_screen.values()) == {1} and len(seen.per_screen) == 5
        # the review after all that: whole retriever names and scores, never cut
        await pilot.press("r")
        await pilot.pause()
        screen = app.screen
        metrics = screen.query_one("#metrics", DataTable)
        means = app.session.live.means()
        assert means["bm25-word"]["mrr"] > 0
        wanted = ["bm25-word ", "bm25-word+bigram"]
        wanted += [f"{means[name]['mrr']:.3f}" for name in ("bm25-word", "bm25-word+bigram")]
        await wait_for(pilot, lambda: all(w in painted(app) for w in wanted))
        first = next(iter(metrics.columns.values()))
        assert first.get_render_width(metrics) >= len("bm25-word+bigram")


async def test_a_grade_moves_on_and_the_last_candidate_opens_the_next_question(
    app_factory, demo_ws
):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q47")
        cands = screen.query_one(CandidateList)
        ids = [c.doc_id for c in cands.candidates]
        progress = screen.query_one("#progress", Static)
        assert f"q47: 0/{len(ids)} candidates judged" in plain(progress)
        assert "auto-advance on" in plain(progress)
        assert "] opens q48" in plain(progress)
        # the setting, in the footer (painted a frame later)
        await wait_for(pilot, lambda: "m Auto-advance: on" in painted(app))
        await pilot.press("1")
        assert my_labels(demo_ws, "q47") == {ids[0]: 1}
        assert cands.current.doc_id == ids[1]  # on to the next candidate
        assert f"q47: 1/{len(ids)} candidates judged" in plain(progress)
        await pilot.press(*"0" * (len(ids) - 1))
        assert my_labels(demo_ws, "q47") == {ids[0]: 1, **{d: 0 for d in ids[1:]}}
        # every candidate judged: on to the next question you have not judged
        assert screen.question_id == app.state.current_question == "q48"
        assert "candidates of q47 judged; on to q48" in notices(app)
        assert "q48: 0/" in plain(progress)


async def test_verdicts_move_to_the_next_question_and_the_toggle_stops_it(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q10")
        await pilot.press("s")
        assert rows(demo_ws, "SELECT verdict FROM verdicts WHERE annotator = 'tester'") == [
            ("skip",)
        ]
        assert screen.question_id == "q11"
        await pilot.press("n")
        assert screen.question_id == "q12"
        progress = plain(screen.query_one("#progress", Static))
        assert "you: 2/49 questions judged" in progress
        await pilot.press("m")  # auto-advance off: the footer and the progress line say so
        assert not app.state.auto_advance
        await wait_for(pilot, lambda: "m Auto-advance: off" in painted(app))
        assert "auto-advance off" in plain(screen.query_one("#progress", Static))
        first = screen.query_one(CandidateList).current.doc_id
        await pilot.press("2")
        assert screen.query_one(CandidateList).current.doc_id == first  # stays put
        await pilot.press("s")
        assert screen.question_id == "q12"
        await pilot.press("m")
        assert app.state.auto_advance


async def test_next_on_the_last_question_says_so(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q49")
        assert "] last question" in plain(screen.query_one("#progress", Static))
        await pilot.press("right_square_bracket")
        assert screen.question_id == "q49"
        assert "q49 is the last question of this list (49 questions)" in notices(app)


async def test_no_answer_on_a_graded_question_clears_with_notice_and_undo(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        app.state.auto_advance = False
        screen = await open_judge(pilot, "q20")
        doc = screen.query_one(CandidateList).current.doc_id
        await pilot.press("3", "n")
        assert my_labels(demo_ws, "q20") == {}
        assert f"cleared your 1 relevant grade(s) on q20 ({doc} [3])" in notices(app)
        assert "[3]" not in str(screen.query_one(CandidateList).get_option_at_index(0).prompt)
        await pilot.press("u")
        assert my_labels(demo_ws, "q20") == {doc: 3}
        assert rows(demo_ws, "SELECT * FROM verdicts WHERE annotator = 'tester'") == []


async def test_the_current_question_is_the_same_on_every_screen(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        table = app.screen.query_one("#questions", DataTable)
        await pilot.press("down", "down", "down")
        assert cursor_key(table) == app.state.current_question == "q04"
        # the questions screen shows the selected question's full text and progress
        full = plain(app.screen.query_one("#question-full", Static))
        text = rows(app.workspace_path, "SELECT text FROM questions WHERE id = 'q04'")[0][0]
        assert f"q04  {text}" in full
        assert "you: 0/49 questions judged · q04: 0/" in plain(
            app.screen.query_one("#progress", Static)
        )
        await pilot.press("r")
        assert isinstance(app.screen, ReviewScreen)
        grid = app.screen.query_one("#grid", DataTable)
        assert cursor_key(grid) == "q04"  # the review grid rests on it
        await pilot.press("down")
        chosen = cursor_key(grid)
        await pilot.press("l")  # opens the question selected on the review
        assert app.screen.question_id == chosen
        await pilot.press("q")
        assert isinstance(app.screen, QuestionsScreen)
        assert cursor_key(app.screen.query_one("#questions", DataTable)) == chosen


async def test_questions_screen_shows_a_long_question_whole(app_factory, demo_ws):
    long = "장비 " * 60 + "끝까지 보이는 질문"
    conn = sqlite3.connect(demo_ws)
    conn.execute("UPDATE questions SET text = ? WHERE id = 'q02'", (long,))
    conn.commit()
    conn.close()
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        full = app.screen.query_one("#question-full", Static)
        # the table fills in a worker: on a loaded machine the first row may not be there yet
        await wait_for(pilot, lambda: plain(full).startswith("q01"))
        await pilot.press("down")
        await wait_for(pilot, lambda: plain(full).startswith("q02  장비 장비"))
        await wait_for(pilot, lambda: "끝까지 보이는 질문" in painted(app))


async def test_search_one_down_enter_preview_and_grade_keys(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q01")
        await pilot.press("slash")
        assert isinstance(app.screen, SearchScreen)
        results = app.screen.query_one(OptionList)
        await wait_for(pilot, lambda: results.option_count > 0)
        first = results.get_option_at_index(0).id
        await pilot.press("down")  # one Down: on the first result, previewed
        assert results.has_focus and results.highlighted == 0
        await pilot.pause()
        title = app.session.ws.doc(first).title
        assert title in plain(app.screen.query_one("#doc-head", Static))
        await pilot.press("down", "2")  # the second result, grade 2
        second = results.get_option_at_index(1).id
        assert isinstance(app.screen, JudgeScreen)
        assert my_labels(demo_ws, "q01")[second] == 2
        await pilot.press("slash")
        await wait_for(pilot, lambda: app.screen.query_one(OptionList).option_count > 0)
        await pilot.press("down", "enter")  # one Down, enter: the first, relevant
        assert isinstance(app.screen, JudgeScreen)
        assert my_labels(demo_ws, "q01")[first] == 1
        assert screen.question_id == "q01"


async def test_escape_leaves_write_asking_only_with_unsaved_text(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r", "w")
        await pilot.press("escape")  # empty: straight back to the review
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("w", *"draft")
        await pilot.press("escape")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # stay, text kept
        assert isinstance(app.screen, WriteScreen)
        assert app.screen.query_one("#write-text", Input).value == "draft"
        await pilot.press("escape", "y")
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("w")
        assert app.screen.query_one("#write-text", Input).value == ""


async def test_write_hints_come_from_the_workspace(app_factory, tiny_ws):
    app = app_factory(tiny_ws)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("w")
        await pilot.pause()
        text = app.screen.query_one("#write-text", Input)
        tags = app.screen.query_one("#write-tags", Input)
        assert "임신" not in text.placeholder  # the demo's example is the demo's alone
        assert text.placeholder.startswith("e.g. like q4: 화성 탐사선 일정")
        # the tiny workspace's own tags, each used once: by name
        assert tags.placeholder == "easy, hard, no-answer, partial-id"
