"""A workspace without questions says what to do first, on the first screen."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from engine.types import Doc, Question
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.tui.conftest import wait_for
from tui.screens.write import WriteScreen


def _plain(steps: Static) -> str:
    from io import StringIO

    from rich.console import Console

    console = Console(file=StringIO(), width=100, color_system=None)
    console.print(steps.content)
    return " ".join(console.file.getvalue().split())


async def test_an_empty_workspace_says_press_w_and_what_to_import(app_factory, tmp_path):
    path = tmp_path / "empty.db"
    new_workspace(path).close()
    app = app_factory(path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        steps = screen.query_one("#first-steps", Static)
        await wait_for(pilot, lambda: steps.display)
        assert not screen.query_one("#questions", DataTable).display
        text = _plain(steps)
        assert "Press w to write your first question" in text
        assert "The workspace has no documents yet: import your corpus first." in text
        for command in (
            "goldpan import docs empty.db PATH",
            "goldpan import questions empty.db FILE",
            "goldpan import squad empty.db FILE --onto",
            "goldpan import querylog empty.db FILE",
            "goldpan docs empty.db --search TEXT",
        ):
            assert command in text
        assert steps.region.bottom <= screen.query_one("#question-full").region.y  # all shown
        await pilot.press("w")
        assert isinstance(app.screen, WriteScreen)


async def test_the_table_comes_back_when_questions_arrive(app_factory, tmp_path):
    path = tmp_path / "corpus.db"
    ws = new_workspace(path)
    ws.write_docs([Doc("d1", "감쇠 보정", "본문")])
    ws.close()
    app = app_factory(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        steps = screen.query_one("#first-steps", Static)
        await wait_for(pilot, lambda: steps.display)
        assert "no documents yet" not in _plain(steps)  # the corpus is there
        other = Workspace.open(path)  # another process imports questions
        other.write_questions([Question("q1", "감쇠 보정은?")])
        other.close()
        await pilot.press("ctrl+r")
        table = screen.query_one("#questions", DataTable)
        await wait_for(pilot, lambda: table.display and table.row_count == 1)
        assert not steps.display
