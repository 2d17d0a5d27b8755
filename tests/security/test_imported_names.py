"""Names in an imported file cannot pass for a model judge's or for an option.

A labels or verdicts CSV names its annotators. A name under ``model:`` would put a
person's labels among a model judge's (or a model's among people's, where it becomes
gold), and a name starting with ``-`` is read as an option where it is passed on (as
``serve`` passes names to each tab). Either is refused with the file and line, and the
workspace is exactly as it was.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli, snapshot

LABELS = "question_id,doc_id,annotator,grade\nq1,d1,lee,2\n"
VERDICTS = "question_id,annotator,verdict,note\nq1,lee,no_answer,\n"


def refused(capsys, ws: Path, what: str, path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    before = snapshot(ws)
    code, _, err = run_cli(capsys, "import", what, ws, path)
    assert code == 2, err
    assert snapshot(ws) == before
    return " ".join(err.split())


def test_imported_labels_under_a_model_judges_name_are_refused(tiny_ws, tmp_path, capsys):
    text = LABELS + "q1,d2,model:minilm,3\n"
    said = refused(capsys, tiny_ws, "labels", tmp_path / "labels.csv", text)
    assert "labels.csv:3: annotator 'model:minilm'" in said and "model judges'" in said


def test_imported_labels_by_a_name_starting_with_a_dash_are_refused(tiny_ws, tmp_path, capsys):
    said = refused(capsys, tiny_ws, "labels", tmp_path / "labels.csv", LABELS + "q2,d2,--role,1\n")
    assert "labels.csv:3: annotator '--role': a name must not start with '-'" in said


def test_imported_verdicts_under_a_model_judges_name_are_refused(tiny_ws, tmp_path, capsys):
    said = refused(
        capsys, tiny_ws, "verdicts", tmp_path / "v.csv", VERDICTS + "q2,model:x,no_answer,\n"
    )
    assert "v.csv:3: annotator 'model:x'" in said


def test_imported_verdicts_by_a_name_starting_with_a_dash_are_refused(tiny_ws, tmp_path, capsys):
    said = refused(capsys, tiny_ws, "verdicts", tmp_path / "v.csv", VERDICTS + "q2,-x,skip,\n")
    assert "v.csv:3: annotator '-x': a name must not start with '-'" in said
