"""LabelingSession: two annotators on one file never drop each other's changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.gold import Status
from engine.session.labeling import LabelingSession
from engine.types import Label
from engine.workspace import Workspace, WorkspaceError


def open_session(path: Path, who: str) -> LabelingSession:
    return LabelingSession(Workspace.open(path), who)


def test_two_sessions_see_each_others_label_after_their_own_write(tiny_ws):
    kim, lee = open_session(tiny_ws, "kim"), open_session(tiny_ws, "lee")
    try:
        assert kim.live.golds["q4"].status is Status.UNLABELED
        assert lee.live.golds["q4"].status is Status.UNLABELED
        lee.set_grade("q4", "d4", 2)  # lee's commit, between two of kim's reads
        state = kim.set_grade("q3", "d1", 0)  # kim's next write notices it
        assert kim.live.golds["q4"].status is Status.LABELED
        assert dict(kim.live.golds["q4"].gold) == {"d4": 2}
        assert state.mine == {"d1": 0}  # kim's own grades, lee's row not among them
        kim.set_grade("q4", "d1", 1)
        lee.set_grade("q2", "d4", 0)  # and lee sees kim's, after lee's own next write
        assert lee.live.golds["q4"].status is Status.DISPUTED
        assert lee.gold("q4").annotators == ("kim", "lee")
        assert lee.my_grades("q4") == {"d4": 2}
        assert not lee.reload_if_changed()  # nothing new since that write
    finally:
        kim.ws.close()
        lee.ws.close()


def test_reload_if_changed_sees_another_process_commit(tiny_ws):
    kim = open_session(tiny_ws, "kim")
    other = Workspace.open(tiny_ws)
    try:
        before = kim.change_token()
        assert kim.gold("q4").status is Status.UNLABELED  # cached from here on
        assert not kim.reload_if_changed()
        other.write_labels([Label("q4", "d4", "lee", 3)])
        assert kim.change_token() != before
        assert kim.reload_if_changed()
        assert kim.gold("q4").status is Status.LABELED
        assert kim.live.golds["q4"].status is Status.LABELED
        token = kim.change_token()
        assert kim.change_token() == token  # reading changes nothing
        kim.set_grade("q4", "d4", 3)
        assert kim.change_token() != token  # own writes count too
    finally:
        kim.ws.close()
        other.close()


def test_set_grade_reads_the_labels_once_per_question(tiny_ws, monkeypatch):
    kim = open_session(tiny_ws, "kim")
    reads: list[str] = []
    real = Workspace.labels_for
    monkeypatch.setattr(Workspace, "labels_for", lambda ws, q: reads.append(q) or real(ws, q))
    try:
        for grade in (1, 2, 3, 0):
            state = kim.set_grade("q2", "d1", grade)
            assert state.mine["d1"] == grade
        assert reads == ["q2"]  # read once; every later state derived in memory
        # mina: d2 relevant; kim only judged d1 not relevant: no disagreement
        assert state.gold.status is Status.LABELED and dict(state.gold.gold) == {"d2": 1}
        assert state.mine == {"d1": 0}
        fresh = open_session(tiny_ws, "kim")
        assert fresh.state("q2") == state  # what was derived equals what is stored
        fresh.ws.close()
    finally:
        kim.ws.close()


def test_clear_grades_is_one_undo(tiny_ws):
    mina = open_session(tiny_ws, "mina")
    try:
        state = mina.clear_grades("q1")
        assert state.mine == {} and state.gold.status is Status.UNLABELED
        change = mina.undo()
        assert change is not None and change.kind == "group"
        assert mina.my_grades("q1") == {"d1": 2, "d2": 0}
        assert mina.undo() is None
        rows = Workspace.open(tiny_ws, readonly=True)
        assert {(lab.doc_id, lab.grade) for lab in rows.labels_for("q1")} == {("d1", 2), ("d2", 0)}
        rows.close()
    finally:
        mina.ws.close()


def test_unknown_question_or_document_changes_nothing(tiny_ws):
    kim = open_session(tiny_ws, "kim")
    try:
        with pytest.raises(WorkspaceError, match="unknown question"):
            kim.set_grade("nope", "d1", 1)
        with pytest.raises(WorkspaceError, match="unknown document"):
            kim.set_grade("q1", "nope", 1)
        with pytest.raises(WorkspaceError, match="out of range"):
            kim.set_grade("q1", "d1", 4)
        assert [lab for lab in kim.ws.labels() if lab.annotator == "kim"] == []
        assert kim.undo_stack == []
    finally:
        kim.ws.close()


def test_a_one_shot_writers_label_is_seen_by_an_open_session_at_its_next_write(tiny_ws):
    # what `goldpan label` and `goldpan verdict` do: open the file, one session write, close
    def lee_once(write) -> None:
        lee = open_session(tiny_ws, "lee")
        try:
            write(lee)
        finally:
            lee.ws.close()

    kim = open_session(tiny_ws, "kim")
    try:
        assert kim.live.golds["q4"].status is Status.UNLABELED
        lee_once(lambda lee: lee.set_grade("q4", "d4", 2))
        lee_once(lambda lee: lee.set_verdict("q2", "ambiguous"))
        kim.set_grade("q1", "d3", 0)
        assert kim.live.golds["q4"].status is Status.LABELED
        assert kim.live.golds["q2"].status is Status.AMBIGUOUS
        with pytest.raises(WorkspaceError, match="unknown document 'nope'"):
            lee_once(lambda lee: lee.set_grade("q4", "nope", 2))
    finally:
        kim.ws.close()


def test_live_latencies_follow_rankings_pooled_after_they_were_read(tiny_ws):
    # the review screen's ms columns: a question pooled (timed alone) after the session
    # read the latencies, here or in another process, is in them when next shown
    from engine.retrieve.runner import refresh_runs
    from engine.scoring import latency

    with Workspace.open(tiny_ws) as ws:
        refresh_runs(ws, ["bm25-word"])
        ws.conn.execute("UPDATE runs SET alone_ms = NULL")  # nothing timed alone yet
        ws.conn.commit()
    session = open_session(tiny_ws, "kim")
    other = Workspace.open(tiny_ws)
    try:
        assert session.live.latency["bm25-word"].timed == 0
        refresh_runs(other, ["bm25-word"], question_ids=["q3"], force=True)  # another process
        session.catch_up()
        assert session.live.latency["bm25-word"].timed == 1
        refresh_runs(session.ws, ["bm25-word"], question_ids=["q4"], force=True)  # this one
        session.take_rankings("q4")
        assert session.live.latency == latency(session.ws)
        assert session.live.latency["bm25-word"].timed == 2
    finally:
        session.ws.close()
        other.close()
