import sqlite3

import pytest

from engine.errors import UnknownName
from engine.retrieve.runner import refresh_runs
from engine.types import Adjudication, Doc, Label, Question, Verdict
from engine.workspace import Workspace, WorkspaceError
from engine.workspace.migrations import SCHEMA_VERSION


def test_new_workspace_is_wal_with_schema_version(tiny_ws):
    ws = Workspace.open(tiny_ws)
    assert ws.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert ws.schema_version == SCHEMA_VERSION
    assert [s.name for s in ws.retrievers()] == [
        "bm25-word",
        "bm25-bigram",
        "bm25-word+bigram",
        "bm25-kiwi",
    ]
    assert ws.integrity_problems() == []


def test_newer_workspace_is_refused_naming_both_versions(tiny_ws):
    conn = sqlite3.connect(tiny_ws)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 3}")
    conn.close()
    with pytest.raises(WorkspaceError) as exc:
        Workspace.open(tiny_ws)
    msg = str(exc.value)
    assert f"schema version {SCHEMA_VERSION + 3}" in msg
    assert f"up to {SCHEMA_VERSION}" in msg


def test_foreign_sqlite_file_and_missing_file_are_refused(tmp_path):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(WorkspaceError, match="not a goldpan workspace"):
        Workspace.open(other)
    with pytest.raises(WorkspaceError, match="no such workspace"):
        Workspace.open(tmp_path / "nope.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(WorkspaceError, match="not a goldpan workspace"):
        Workspace.open(junk)


def test_transaction_rolls_back_everything(tiny_ws):
    ws = Workspace.open(tiny_ws)
    before = ws.counts()
    with pytest.raises(RuntimeError), ws.transaction():
        ws.write_docs([Doc("new", "t", "x")])
        ws.write_labels([Label("q4", "d4", "jun", 1)])
        raise RuntimeError("boom")
    assert ws.counts() == before
    assert ws.doc("new") is None


def test_labels_are_logged_as_events(tiny_ws):
    ws = Workspace.open(tiny_ws)
    ws.write_labels([Label("q1", "d1", "mina", 3)])
    last = ws.events(limit=1)[0]
    assert (last["kind"], last["question_id"], last["doc_id"], last["old"], last["new"]) == (
        "label",
        "q1",
        "d1",
        "2",
        "3",
    )


def test_label_written_is_visible_to_another_connection_at_once(tiny_ws):
    a = Workspace.open(tiny_ws)
    b = Workspace.open(tiny_ws)
    a.write_labels([Label("q4", "d4", "jun", 1)])
    assert Label("q4", "d4", "jun", 1) in b.labels()


def test_readonly_refuses_writes(tiny_ws):
    ws = Workspace.open(tiny_ws, readonly=True)
    assert ws.doc_count() == 4
    with pytest.raises(WorkspaceError, match="read-only"):
        ws.write_labels([Label("q1", "d1", "x", 1)])


def test_cached_runs_are_reused_until_an_input_changes(tiny_ws):
    ws = Workspace.open(tiny_ws)
    first = refresh_runs(ws, ["bm25-bigram"], depth=10)
    assert first.ran == {"bm25-bigram": 4}
    again = refresh_runs(ws, ["bm25-bigram"], depth=10)
    assert again.ran == {"bm25-bigram": 0} and again.cached == {"bm25-bigram": 4}
    # a question edit re-runs only that question
    ws.write_questions([Question("q2", "금속 인공물 보정", ("hard",))])
    assert refresh_runs(ws, ["bm25-bigram"], depth=10).ran == {"bm25-bigram": 1}
    # a corpus change re-runs every question
    ws.write_docs([Doc("d5", "new", "감쇠 새 문서")])
    assert refresh_runs(ws, ["bm25-bigram"], depth=10).ran == {"bm25-bigram": 4}
    # asking for a deeper ranking than cached re-runs too
    assert refresh_runs(ws, ["bm25-bigram"], depth=50).ran == {"bm25-bigram": 4}


def test_cached_run_round_trips_scores_exactly(tiny_ws):
    ws = Workspace.open(tiny_ws)
    refresh_runs(ws, ["bm25-word+bigram"], depth=10)
    run = ws.runs("bm25-word+bigram")["q1"]
    assert run.doc_ids[0] == "d1"
    assert list(run.scores) == sorted(run.scores, reverse=True)
    assert all(isinstance(s, float) and s > 0 for s in run.scores)


def test_unknown_retriever_is_named(tiny_ws):
    ws = Workspace.open(tiny_ws)
    with pytest.raises(UnknownName, match="unknown retriever 'dense'.*bm25-word"):
        refresh_runs(ws, ["dense"])


def test_commits_are_synced_before_they_return(tiny_ws):
    """WAL with synchronous=FULL: a committed label survives a power cut, not only a kill."""
    with Workspace.open(tiny_ws) as ws:
        assert ws.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert ws.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_runs_of_some_questions_equal_those_of_all(tiny_ws):
    with Workspace.open(tiny_ws) as ws:
        refresh_runs(ws, ["bm25-bigram"], depth=10)
        every = ws.runs("bm25-bigram")
        assert len(every) == 4
        assert ws.runs("bm25-bigram", ["q2", "q4", "nope"]) == {q: every[q] for q in ("q2", "q4")}
        assert ws.runs("bm25-bigram", []) == {}


def test_judgment_times_name_the_event_that_wrote_the_current_value(tiny_ws):
    ws = Workspace.open(tiny_ws)
    ws.write_labels([Label("q1", "d1", "mina", 3)])
    ws.write_verdicts([Verdict("q2", "mina", "no_answer")])
    ws.write_adjudication(Adjudication("q1", False, {"d1": 3}, "lead"))
    ws.edit_question("q3", "a new text for q3", None, by="mina")  # a question event: no verdict
    times = ws.judgment_times()
    label_at, verdict_at, adj_at = (e["at"] for e in ws.events(limit=4)[-1:0:-1])
    assert times.label_time(Label("q1", "d1", "mina", 3)) == label_at
    assert times.verdict_time(Verdict("q2", "mina", "no_answer")) == verdict_at
    assert times.adjudication_time(Adjudication("q1", False, {"d1": 3}, "lead")) == adj_at
    # a value the newest event does not record is not dated (changed without the log)
    assert times.label_time(Label("q1", "d1", "mina", 1)) is None
    assert times.verdict_time(Verdict("q2", "mina", "answerable")) is None
    assert times.adjudication_time(Adjudication("q1", True, {}, "lead")) is None
    assert times.verdict_time(Verdict("q3", "mina", "a new text for q3")) is None


def _soundness_threads():
    import threading

    return [t for t in threading.enumerate() if t.name == "goldpan-soundness"]


@pytest.mark.parametrize("damage", ["bad utf-8", "dangling label"])
def test_checks_run_behind_refuse_a_write_as_the_gate_does(tiny_ws, tmp_path, damage):
    # the soundness checks started in a thread (as `goldpan pool` does) give the first
    # write the verdict and the message the gate gives on its own
    import shutil

    conn = sqlite3.connect(tiny_ws)
    if damage == "bad utf-8":
        conn.execute("UPDATE docs SET text = CAST(X'6162FF63' AS TEXT) WHERE rowid = 2")
    else:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute(
            "INSERT INTO labels(question_id, doc_id, annotator, grade, updated) "
            "SELECT id, 'no-such-doc', 'x', 1, '2026-01-01' FROM questions LIMIT 1"
        )
    conn.commit()
    conn.close()
    twin = tmp_path / "twin.db"
    shutil.copy(tiny_ws, twin)
    with Workspace.open(twin) as alone, pytest.raises(WorkspaceError) as want:
        alone.ensure_sound()
    ws = Workspace.open(tiny_ws)
    try:
        ws.check_soundness_behind()
        with pytest.raises(WorkspaceError) as got:
            ws.add_question("a new question", [], "me")
    finally:
        ws.close()
    assert str(got.value) == str(want.value).replace(str(twin), str(tiny_ws))
    assert "nothing was written" in str(got.value)
    assert not _soundness_threads()


def test_checks_run_behind_pass_a_sound_file_and_close_stops_them(tiny_ws):
    ws = Workspace.open(tiny_ws)
    ws.check_soundness_behind()
    ws.add_question("a new question", [], "me")  # waits for the verdict, then writes
    assert ws._sound
    ws.close()
    with Workspace.open(tiny_ws) as again:
        assert "a new question" in [q.text for q in again.questions()]
    ws = Workspace.open(tiny_ws)
    ws.check_soundness_behind()
    ws.close()  # nothing written: the checks are stopped, their connection closed
    assert not _soundness_threads()
    assert not (tiny_ws.parent / (tiny_ws.name + "-wal")).exists()


def test_checks_that_fail_behind_run_again_before_the_write_and_print_nothing(
    tiny_ws, monkeypatch, capfd
):
    def broken(cls, path):
        raise RuntimeError("no connection for the checks")

    ws = Workspace.open(tiny_ws)
    try:
        monkeypatch.setattr(Workspace, "open_for_checks", classmethod(broken))
        ws.check_soundness_behind()
        ran = []
        real = Workspace._soundness_problem
        monkeypatch.setattr(
            Workspace, "_soundness_problem", lambda self, **kw: ran.append(kw) or real(self, **kw)
        )
        ws.add_question("a new question", [], "me")
    finally:
        ws.close()
    assert ran == [{}]  # the gate itself ran, on the writing connection
    assert capfd.readouterr().err == ""
    assert not _soundness_threads()
