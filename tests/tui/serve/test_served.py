"""The app as `goldpan serve` runs it for one person: handed-out work, roles, who is on what.

Pilot tests of the same app process a browser tab gets (no server, no browser: see
test_serve_browser.py for those).
"""

from __future__ import annotations

import sqlite3

from textual.widgets import DataTable

from engine.team.assign import Assigner
from engine.workspace import Workspace
from tests.tui.conftest import APP_SIZE
from tests.tui.test_readonly import record_notifications
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.judge import JudgeScreen
from tui.screens.questions import QuestionsScreen
from tui.screens.review import ReviewScreen
from tui.serve.served_app import Served, main


def unlabel(path) -> None:
    """Clear the demo's labels: every question needs two annotators again."""
    db = sqlite3.connect(path)
    with db:
        for table in ("labels", "verdicts", "adjudications"):
            db.execute(f"DELETE FROM {table}")
    db.close()


async def test_an_annotator_is_handed_a_question_and_the_next_one_on_bracket(app_factory, demo_ws):
    unlabel(demo_ws)
    app = app_factory(annotator="ara", served=Served())
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, JudgeScreen)
        first = app.screen.question_id
        assert first is not None and app.leases.assigner is not None
        with Workspace.open(demo_ws, readonly=True) as other:
            assert other.leases() == {first: "ara"}
        await pilot.press("1")  # judged: saved under the served name
        with Workspace.open(demo_ws, readonly=True) as other:
            assert {lab.annotator for lab in other.labels_for(first)} == {"ara"}
        await pilot.press("right_square_bracket")
        second = app.screen.question_id
        assert second not in (None, first)
        with Workspace.open(demo_ws, readonly=True) as other:
            assert other.leases() == {second: "ara"}  # the first lease was given up
    with Workspace.open(demo_ws, readonly=True) as other:
        assert other.leases() == {}  # leaving frees the question


async def test_a_question_someone_else_holds_is_not_handed_out_and_is_flagged(app_factory, demo_ws):
    unlabel(demo_ws)
    with Workspace.open(demo_ws) as ws:
        bo = Assigner(ws, "bo")
        held = bo.next({})  # bo holds a question from another process
        app = app_factory(annotator="ara", served=Served())
        seen = record_notifications(app)
        async with app.run_test(size=APP_SIZE) as pilot:
            await pilot.pause()
            assert app.screen.question_id != held
            await pilot.press("q")
            app.judge(held)  # opened by hand from the questions screen
            await pilot.pause()
            assert app.screen.question_id == held
            assert any("bo is judging" in m for m in seen), seen
            await pilot.press("q")
            assert isinstance(app.screen, QuestionsScreen)
            table = app.screen.query_one(DataTable)
            labels = [str(c.label) for c in table.columns.values()]
            assert "on" in labels
            row = table.get_row(held)
            assert "bo" in [str(cell) for cell in row]
        assert ws.leases() == {held: "bo"}  # ara never took it


async def test_only_adjudicators_adjudicate(app_factory, demo_ws):
    app = app_factory(annotator="ara", served=Served("annotator"))
    seen = record_notifications(app)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("d")
        await pilot.pause()
        assert app.screen is screen and not isinstance(app.screen, AdjudicateScreen)
        assert any("adjudicators" in m for m in seen)
    app = app_factory(annotator="lead", served=Served("adjudicator"))
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, AdjudicateScreen)


async def test_a_viewer_watches_the_review_read_only_and_takes_no_lease(app_factory, demo_ws):
    app = app_factory(annotator="vera", served=Served("viewer"), readonly=True)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        assert app.readonly_reason is not None and app.leases.assigner is None
    with Workspace.open(demo_ws, readonly=True) as ws:
        assert ws.leases() == {}


def test_the_child_command_refuses_a_missing_workspace(tmp_path, capsys):
    assert main([str(tmp_path / "none.db"), "--annotator", "ara"]) == 2
    assert "no such workspace" in capsys.readouterr().err
