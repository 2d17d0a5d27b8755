"""The questions screen after a re-import changed a question's text, with invisible ids.

A question judged only for its older text shows the status ``recheck`` and is counted as
needing re-check; ids holding zero-width or bidi-override characters show those as their
code points, so they neither look like another id nor reorder the row.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from engine.ingest import import_questions
from engine.types import Doc, Label, Question
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import write_jsonl
from tests.tui.conftest import APP_SIZE
from tests.tui.test_markup_literal import assert_shown

ZW, RLO = "q\u200b1", "q\u202e2"


def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws.db"
    ws = new_workspace(path)
    ws.write_docs([Doc("d1", "alpha", "alpha text"), Doc("d2", "beta", "beta text")])
    ws.write_questions([Question(ZW, "what is alpha"), Question(RLO, "what is beta")])
    ws.write_labels([Label(ZW, "d1", "kim", 2), Label(RLO, "d2", "kim", 1)])
    file = write_jsonl(tmp_path / "q.jsonl", [{"id": ZW, "text": "what was alpha"}])
    report = import_questions(ws, file)
    assert report.recheck == (1, 1)
    ws.close()
    return path


async def test_recheck_status_and_invisible_characters_shown(app_factory, tmp_path):
    path = workspace(tmp_path)
    app = app_factory(path)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert str(table.get_row(ZW)[1]) == "recheck"
        assert str(table.get_row(RLO)[1]) == "labeled"
        text = assert_shown(app, "q⟨U+200B⟩1", "q⟨U+202E⟩2", "1 recheck ·")
        assert "\u200b" not in text and "\u202e" not in text
        # the session (what the judge screen's keys call) sees it so too, until judged again
        assert app.session.gold(ZW).status.value == "recheck"
        gold = app.session.set_grade(ZW, "d1", 2).gold
        assert gold.status.value == "labeled" and dict(gold.gold) == {"d1": 2}
    with Workspace.open(path, readonly=True) as ws:
        assert ws.recheck_counts() == {ZW: 1}  # kim's label, made for the old text, is kept
