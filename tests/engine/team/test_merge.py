import shutil
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest

from engine.retrieve import DEFAULT_RETRIEVERS
from engine.team.merge import MergeReport, merge_workspaces
from engine.types import Adjudication, Doc, Label, Verdict
from engine.workspace import Workspace, WorkspaceError
from tests.conftest import TINY_DOCS, TINY_QUESTIONS, snapshot

MINA = {  # the labels tiny_ws starts with
    Label("q1", "d1", "mina", 2),
    Label("q1", "d2", "mina", 0),
    Label("q2", "d2", "mina", 1),
    Label("q3", "d3", "mina", 3),
}
JUN = {Label("q1", "d1", "jun", 3), Label("q2", "d1", "jun", 0)}
SORA = {Label("q1", "d1", "sora", 1), Label("q4", "d4", "sora", 0)}


def copy_ws(tiny_ws: Path, name: str) -> Path:
    path = tiny_ws.with_name(name)
    shutil.copyfile(tiny_ws, path)  # tiny_ws is closed, so its WAL is checkpointed
    return path


@pytest.fixture
def pair(tiny_ws: Path) -> tuple[Path, Path]:
    """Two copies of the tiny workspace, labeled apart by jun (a.db) and sora (b.db)."""
    a, b = copy_ws(tiny_ws, "a.db"), copy_ws(tiny_ws, "b.db")
    with Workspace.open(a) as ws:
        ws.write_labels(JUN)
        ws.write_verdicts([Verdict("q1", "jun", "answerable")])
    with Workspace.open(b) as ws:
        ws.write_labels(SORA)
        ws.write_verdicts([Verdict("q4", "sora", "no_answer", "nothing on Mars")])
    return a, b


def read(path: Path) -> Workspace:
    return Workspace.open(path, readonly=True)


def test_merge_into_new_out_keeps_every_annotator(pair, tmp_path):
    a, b = pair
    out = tmp_path / "out.db"
    report = merge_workspaces(out, [a, b])
    assert report.created and report.conflicts == []
    assert report.questions_added == len(TINY_QUESTIONS)
    assert report.labels_added == len(MINA | JUN | SORA)
    assert report.verdicts_added == 2
    assert "labels: 8 added" in report.summary()
    with read(out) as ws, read(a) as wa:
        assert set(ws.labels()) == MINA | JUN | SORA
        assert set(ws.verdicts()) == {
            Verdict("q1", "jun", "answerable"),
            Verdict("q4", "sora", "no_answer", "nothing on Mars"),
        }
        assert ws.docs() == wa.docs() == TINY_DOCS
        assert ws.corpus_hash() == wa.corpus_hash()
        assert ws.questions() == wa.questions()
        assert ws.retrievers() == wa.retrievers()
        assert ws.annotators() == ["jun", "mina", "sora"]
        assert ws.counts()["runs"] == 0


def test_merging_again_changes_nothing_not_even_the_event_log(pair, tmp_path):
    a, b = pair
    out = tmp_path / "out.db"
    merge_workspaces(out, [a, b])
    before = snapshot(out)
    assert before["events"]  # the merge is logged ...
    again = merge_workspaces(out, [a, b])
    assert snapshot(out) == before  # ... once
    assert again == MergeReport()
    assert again.summary() == "nothing new: it held everything the others hold already"
    merge_workspaces(out, [b])
    assert snapshot(out) == before


def test_later_merges_bring_new_work_into_an_existing_out(pair, tmp_path):
    a, b = pair
    out = tmp_path / "out.db"
    merge_workspaces(out, [a])
    with Workspace.open(b) as ws:
        ws.add_retriever(replace(DEFAULT_RETRIEVERS[0], name="bm25-mine"))
    report = merge_workspaces(out, [b])
    assert (report.labels_added, report.labels_changed, report.retrievers_added) == (2, 0, 1)
    assert report.questions_added == 0 and report.conflicts == []
    with read(out) as ws:
        assert set(ws.labels()) == MINA | JUN | SORA
        assert ws.retrievers()[-1].name == "bm25-mine"


def test_question_text_conflict_is_reported_and_the_first_text_kept(pair, tmp_path):
    a, b = pair
    with Workspace.open(b) as ws:
        ws.edit_question("q2", "금속 인공물 문제", None, "sora")
    out = tmp_path / "out.db"
    report = merge_workspaces(out, [a, b])
    assert len(report.conflicts) == 1
    conflict = report.conflicts[0]
    assert "q2" in conflict and "a.db" in conflict and "금속 인공물 문제" in conflict
    with read(out) as ws:
        assert ws.question("q2").text == TINY_QUESTIONS[1].text
        assert Label("q2", "d1", "jun", 0) in ws.labels()  # labels are merged all the same


def test_existing_out_keeps_its_own_question_text(pair, tmp_path):
    a, b = pair
    out = copy_ws(a, "out.db")
    with Workspace.open(out) as ws:
        ws.edit_question("q1", "감쇠 보정 방법", None, "mina")
    report = merge_workspaces(out, [b])
    assert [c for c in report.conflicts if "question q1" in c]
    with read(out) as ws:
        assert ws.question("q1").text == "감쇠 보정 방법"


def test_label_conflict_keeps_the_later_grade(pair, tmp_path):
    a, b = pair
    with Workspace.open(a) as ws:
        ws.write_labels([Label("q3", "d3", "mina", 1)])
    time.sleep(0.005)  # the event log has millisecond times
    with Workspace.open(b) as ws:
        ws.write_labels([Label("q3", "d3", "mina", 2)])
    out = tmp_path / "out.db"
    report = merge_workspaces(out, [a, b])
    assert len(report.conflicts) == 1
    assert "label q3/d3 by mina" in report.conflicts[0]
    assert "kept b.db's 2, the latest" in report.conflicts[0]
    with read(out) as ws:
        assert Label("q3", "d3", "mina", 2) in ws.labels()
    assert merge_workspaces(out, [a, b]).labels_changed == 0  # OUT's copy is now the latest


def test_newer_input_label_replaces_out_label(pair, tmp_path):
    a, _ = pair
    out = tmp_path / "out.db"
    merge_workspaces(out, [a])
    time.sleep(0.005)
    with Workspace.open(a) as ws:
        ws.write_labels([Label("q1", "d1", "jun", 1)])
    report = merge_workspaces(out, [a])
    assert (report.labels_added, report.labels_changed) == (0, 1)
    with read(out) as ws:
        assert Label("q1", "d1", "jun", 1) in ws.labels()


def test_verdict_conflict_keeps_the_later_verdict(pair, tmp_path):
    a, b = pair
    time.sleep(0.005)
    with Workspace.open(b) as ws:
        ws.write_verdicts([Verdict("q1", "jun", "ambiguous")])
    out = tmp_path / "out.db"
    report = merge_workspaces(out, [a, b])
    assert [c for c in report.conflicts if c.startswith("verdict on q1 by jun")]
    with read(out) as ws:
        assert Verdict("q1", "jun", "ambiguous") in ws.verdicts()


def test_adjudications_are_copied(pair, tmp_path):
    a, b = pair
    adj_a = Adjudication("q1", False, {"d1": 3, "d2": 1}, "mina", "two relevant")
    adj_b = Adjudication("q4", True, {}, "sora")
    with Workspace.open(a) as ws:
        ws.write_adjudication(adj_a)
    with Workspace.open(b) as ws:
        ws.write_adjudication(adj_b)
    out = tmp_path / "out.db"
    report = merge_workspaces(out, [a, b])
    assert report.adjudications_added == 2 and report.conflicts == []
    with read(out) as ws:
        assert ws.adjudications() == [adj_a, adj_b]
    before = snapshot(out)
    merge_workspaces(out, [a, b])
    assert snapshot(out) == before


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (Doc("d2", "감쇠 보정 금속", "금속 인공물이 바뀌었다.", {"series": "ac"}), "differs"),
        (Doc("d5", "extra", "하나 더.", {}), "is in b.db but not in out.db"),
    ],
)
def test_corpus_mismatch_names_the_document_and_leaves_out_unchanged(pair, tmp_path, change, words):
    a, b = pair
    out = tmp_path / "out.db"
    merge_workspaces(out, [a])
    with Workspace.open(b) as ws:
        ws.write_docs([change])
    before = snapshot(out)
    with pytest.raises(WorkspaceError, match=repr(change.id)) as exc:
        merge_workspaces(out, [b])
    assert words in str(exc.value)
    assert snapshot(out) == before


def test_corpus_mismatch_between_inputs_creates_no_out(pair, tmp_path):
    a, b = pair
    with Workspace.open(b) as ws:
        ws.write_docs([Doc("d0", "first", "가장 앞의 문서.", {})])
    out = tmp_path / "out.db"
    with pytest.raises(WorkspaceError, match="'d0' is in b.db but not in a.db"):
        merge_workspaces(out, [a, b])
    assert not out.exists()


def test_label_conflict_without_readable_times_keeps_the_first_input(pair, tmp_path):
    a, b = pair
    with Workspace.open(b) as ws:
        ws.write_labels([Label("q3", "d3", "mina", 1)])
    conn = sqlite3.connect(b)  # a workspace whose event log was lost: no times to compare
    with conn:
        conn.execute("DELETE FROM events")
    conn.close()
    out = tmp_path / "out.db"
    report = merge_workspaces(out, [a, b])
    assert len(report.conflicts) == 1
    assert "kept a.db's 3, the first source's" in report.conflicts[0]
    with read(out) as ws:
        assert Label("q3", "d3", "mina", 3) in ws.labels()


def boom(*args, **kwargs):
    raise RuntimeError("disk full")


def test_failure_half_way_leaves_existing_out_unchanged(pair, tmp_path, monkeypatch):
    a, b = pair
    out = tmp_path / "out.db"
    merge_workspaces(out, [a])
    before = snapshot(out)
    # verdicts are written after questions and labels: those must be rolled back
    monkeypatch.setattr(Workspace, "write_verdicts", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        merge_workspaces(out, [b])
    assert snapshot(out) == before


def test_failure_half_way_leaves_no_new_out(pair, tmp_path, monkeypatch):
    a, b = pair
    out = tmp_path / "out.db"
    monkeypatch.setattr(Workspace, "write_verdicts", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        merge_workspaces(out, [a, b])
    assert list(tmp_path.glob("out.db*")) == []


def test_self_merge_is_refused(pair, tmp_path):
    a, b = pair
    before = snapshot(a)
    with pytest.raises(WorkspaceError, match="into itself"):
        merge_workspaces(a, [b, a])
    sub = tmp_path / "sub"
    sub.mkdir()
    with pytest.raises(WorkspaceError, match="into itself"):
        merge_workspaces(a, [sub / ".." / "a.db"])
    assert snapshot(a) == before


def test_no_inputs_and_missing_input_are_refused(pair, tmp_path):
    a, _ = pair
    with pytest.raises(WorkspaceError, match="at least one"):
        merge_workspaces(tmp_path / "out.db", [])
    with pytest.raises(WorkspaceError, match="no such workspace"):
        merge_workspaces(tmp_path / "out.db", [a, tmp_path / "missing.db"])
    assert not (tmp_path / "out.db").exists()
