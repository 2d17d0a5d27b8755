"""One rule for a question whose text changed, whichever path changed it.

A re-import with a new text marks the judgments made for the old text as needing
re-check; an edit in the TUI (``e`` in Label, a rewrite in Adjudicate: both
:meth:`LabelingSession.edit_question`) must do exactly the same, and undoing the edit
brings them back as gold.
"""

from __future__ import annotations

from pathlib import Path

from engine.gold import Status
from engine.ingest import import_questions
from engine.session.labeling import LabelingSession
from engine.types import Adjudication, Label, Verdict
from engine.workspace import Workspace
from tests.conftest import write_jsonl

NEW_TEXT = "감쇠 보정은 PET에서 어떻게 하나"


def judged(path: Path) -> Path:
    """The tiny workspace with a second annotator, a verdict and an adjudication on q1."""
    ws = Workspace.open(path)
    ws.write_labels([Label("q1", "d1", "kim", 3)])
    ws.write_verdicts([Verdict("q1", "kim", "answerable", "")])
    ws.write_adjudication(Adjudication("q1", False, {"d1": 2}, "lead", ""))
    ws.close()
    return path


def judgments(ws: Workspace) -> dict[str, object]:
    """What the rule decides: the re-check counts, the current rows and the status."""
    session = LabelingSession(ws, "mina")
    return {
        "recheck": ws.recheck_counts(),
        "labels": ws.labels_for("q1"),
        "verdicts": ws.verdicts_for("q1"),
        "adjudication": ws.adjudication("q1"),
        "status": session.gold("q1").status,
    }


def test_a_session_edit_marks_judgments_recheck_exactly_as_a_reimport(tiny_ws, tmp_path):
    imported = judged(tiny_ws)
    edited = tmp_path / "edited.db"
    edited.write_bytes(imported.read_bytes())

    ws = Workspace.open(imported)
    q = ws.question("q1")
    assert q is not None
    src = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "text": NEW_TEXT, "tags": list(q.tags)}])
    assert import_questions(ws, src).recheck == (1, 5)
    by_import = judgments(ws)
    ws.close()

    ws = Workspace.open(edited)
    session = LabelingSession(ws, "mina")
    assert session.gold("q1").status is Status.LABELED
    state_before = session.state("q1")
    assert state_before.mine == {"d1": 2, "d2": 0}
    session.edit_question("q1", NEW_TEXT, None)
    # the session's own view agrees with the file at once (nothing cached from before)
    assert session.gold("q1").status is Status.RECHECK
    assert session.state("q1").mine == {}
    assert judgments(ws) == by_import
    assert by_import["recheck"] == {"q1": 5} and by_import["status"] is Status.RECHECK

    # undoing the edit brings the old text back, and with it its judgments as gold
    session.undo()
    assert ws.recheck_counts() == {}
    assert session.gold("q1").status is Status.LABELED
    assert session.state("q1").mine == {"d1": 2, "d2": 0}
    ws.close()


def test_an_edit_that_keeps_the_text_keeps_the_gold(tiny_ws):
    ws = Workspace.open(judged(tiny_ws))
    session = LabelingSession(ws, "mina")
    q = ws.question("q1")
    assert q is not None
    session.edit_question("q1", q.text, ["easy", "paraphrase"])  # tags only
    assert ws.recheck_counts() == {}
    assert session.gold("q1").status is Status.LABELED
    ws.close()
