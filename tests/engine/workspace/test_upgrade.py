"""Upgrades (backup first, newer refused, a failed migration changes nothing) and
read-only workspaces (opened for review, every change refused with the reason).

A version-1 workspace here is a real older workspace: the engine writes it with only the
first migration applied, then schema 2 (embeddings) is what an upgrade adds.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import engine.workspace.lifecycle as workspace_module
from engine.session.labeling import LabelingSession
from engine.types import Doc, Label, Question
from engine.workspace import READ_ONLY_ASKED, Workspace, WorkspaceError
from engine.workspace.migrations import GOLDPAN_APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS, snapshot

ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0
not_as_root = pytest.mark.skipif(
    ROOT_USER,
    reason="runs as root: file permissions do not stop root from writing, so an "
    "unwritable workspace cannot be made; the same path is covered by the tests that "
    "report the file as unwritable through engine.workspace.writable_problem",
)


def dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, read with plain SQLite (any schema version)."""
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    finally:
        conn.close()


def application_id(path: Path) -> int:
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("PRAGMA application_id").fetchone()[0])
    finally:
        conn.close()


def user_version(path: Path) -> int:
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


@contextmanager
def schema_1(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The engine as goldpan with schema version 1 was: only the first migration."""
    with monkeypatch.context() as m:
        m.setattr(workspace_module, "MIGRATIONS", MIGRATIONS[:1])
        m.setattr(workspace_module, "SCHEMA_VERSION", 1)
        yield


def v1_label(ws: Workspace, q: str, d: str, annotator: str, grade: int) -> None:
    """A label row as goldpan with schema version 1 wrote it."""
    with ws.transaction():
        ws.conn.execute(
            "INSERT INTO labels(question_id, doc_id, annotator, grade, updated) "
            "VALUES (?, ?, ?, ?, '2024-01-01T00:00:00Z')",
            (q, d, annotator, grade),
        )


def make_v1(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A version-1 workspace with docs, questions, labels, verdicts, an adjudication."""
    with schema_1(monkeypatch):
        ws = new_workspace(path)
        with ws.transaction():  # documents as version 1 wrote them (no doc_numbers yet)
            ws.conn.executemany(
                "INSERT INTO docs(id, title, text, fields, hash) VALUES (?, ?, ?, '{}', ?)",
                [(d.id, d.title, d.text, d.hash) for d in TINY_DOCS],
            )
            ws._set_meta("corpus_hash", ws._compute_corpus_hash())
        ws.write_questions(TINY_QUESTIONS)
        # judgments as version 1 wrote them (today's writers set columns added later)
        v1_label(ws, "q1", "d1", "mina", 2)
        v1_label(ws, "q1", "d2", "jun", 1)
        v1_label(ws, "q3", "d3", "mina", 3)
        with ws.transaction():
            ws.conn.execute(
                "INSERT INTO verdicts(question_id, annotator, verdict, note, updated) "
                "VALUES ('q4', 'mina', 'no_answer', 'nothing on Mars', '2024-01-01T00:00:00Z')"
            )
            ws.conn.execute(
                "INSERT INTO adjudications(question_id, no_answer, gold, by, at, note) VALUES "
                """('q1', 0, '{"d1":2}', 'lee', '2024-01-01T00:00:00Z', 'took mina''s side')"""
            )
        assert ws.schema_version == 1
        ws.close()
    assert user_version(path) == 1


# -- upgrades -----------------------------------------------------------------------------


def test_v1_workspace_is_upgraded_after_a_backup_that_includes_the_wal(tmp_path, monkeypatch):
    path = tmp_path / "team.db"
    make_v1(path, monkeypatch)
    # a v1 goldpan still has the workspace open and its last label is only in the -wal file
    with schema_1(monkeypatch):
        writer = Workspace.open(path)
    writer.conn.execute("PRAGMA wal_autocheckpoint = 0")
    v1_label(writer, "q2", "d2", "mina", 1)
    raw = tmp_path / "raw-copy.db"
    shutil.copyfile(path, raw)  # what a plain file copy would keep
    assert ("q2", "d2", "mina", 1) not in [r[:4] for r in dump(raw)["labels"]]
    before = dump(path)
    assert ("q2", "d2", "mina", 1) in [r[:4] for r in before["labels"]]

    ws = Workspace.open(path)
    assert ws.schema_version == SCHEMA_VERSION == len(MIGRATIONS)
    assert ws.upgraded_from == 1
    backup = ws.backup_path
    assert backup is not None and backup.parent == path.parent
    assert re.fullmatch(r"team\.v1-backup-\d{8}T\d{6}Z\.db", backup.name), backup.name
    assert ws.integrity_problems() == []
    assert Label("q2", "d2", "mina", 1) in ws.labels()
    assert ws.embeddings("any-model") == {}  # the table migration 2 added
    ws.close()
    writer.close()

    after = dump(path)
    for table in ("labels", "verdicts", "adjudications"):  # made_for (a later migration): NULL
        assert all(r[-1] is None for r in after[table])
        after[table] = [r[:-1] for r in after[table]]
    # the identity migration gave it a random workspace id (the trust record's key)
    ids = [row for row in after["meta"] if row[0] == "workspace_id"]
    assert len(ids) == 1 and re.fullmatch(r"[0-9a-f]{32}", ids[0][1])
    after["meta"].remove(ids[0])
    # migration 9 numbered every document once; the other tables later migrations added
    # start empty; every row of every old table is as it was
    numbered = after.pop("doc_numbers")
    assert sorted(i for _, i in numbered) == sorted(d.id for d in TINY_DOCS)
    assert sorted(n for n, _ in numbered) == list(range(1, len(TINY_DOCS) + 1))
    assert all(after[t] == [] for t in after.keys() - before.keys())
    assert {t: after[t] for t in before} == before
    assert application_id(path) == GOLDPAN_APPLICATION_ID and application_id(backup) == 0

    # the backup is the version-1 workspace, WAL contents included, and a v1 goldpan opens it
    assert user_version(backup) == 1
    assert dump(backup) == before
    with schema_1(monkeypatch):
        old = Workspace.open(backup, readonly=True)
        assert old.integrity_problems() == []
        assert ("q2", "d2", "mina", 1) in [r[:4] for r in dump(backup)["labels"]]
        old.close()

    # opened again: nothing to do, no second backup
    again = Workspace.open(path)
    assert again.upgraded_from is None and again.backup_path is None
    again.close()
    assert sorted(p.name for p in tmp_path.glob("team.v*-backup-*.db")) == [backup.name]


def test_a_migration_failing_midway_leaves_the_v1_workspace_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "v1.db"
    make_v1(path, monkeypatch)
    before = dump(path)
    # migration 2 runs, then a broken migration 3 fails after one of its statements
    bad = "CREATE TABLE half_done (x INTEGER);\nINSERT INTO no_such_table VALUES (1);"
    monkeypatch.setattr(workspace_module, "MIGRATIONS", [*MIGRATIONS, bad])
    monkeypatch.setattr(workspace_module, "SCHEMA_VERSION", len(MIGRATIONS) + 1)
    with pytest.raises(WorkspaceError) as exc:
        Workspace.open(path)
    msg = str(exc.value)
    assert "no_such_table" in msg and "unchanged" in msg and "still version 1" in msg
    assert user_version(path) == 1
    assert dump(path) == before  # no embeddings, no half_done, every row as it was
    assert not list(tmp_path.glob("*backup*"))  # the copy was dropped: nothing changed
    monkeypatch.undo()
    ws = Workspace.open(path)  # and the real upgrade still works afterwards
    assert ws.schema_version == SCHEMA_VERSION and ws.integrity_problems() == []
    ws.close()


def test_no_upgrade_without_a_backup(tmp_path, monkeypatch):
    path = tmp_path / "v1.db"
    make_v1(path, monkeypatch)
    before = dump(path)
    nowhere = tmp_path / "no-such-folder" / "v1.v1-backup.db"
    monkeypatch.setattr(workspace_module, "backup_path", lambda p, v: nowhere)
    with pytest.raises(WorkspaceError) as exc:
        Workspace.open(path)
    msg = str(exc.value)
    assert "not upgraded" in msg and str(nowhere) in msg and "unchanged" in msg
    assert user_version(path) == 1 and dump(path) == before


@not_as_root
def test_no_upgrade_in_a_folder_that_cannot_be_written(tmp_path, monkeypatch):
    folder = tmp_path / "locked"
    folder.mkdir()
    path = folder / "v1.db"
    make_v1(path, monkeypatch)
    before = dump(path)
    folder.chmod(0o555)
    try:
        with pytest.raises(WorkspaceError) as exc:
            Workspace.open(path)
        msg = str(exc.value)
        assert "schema version 1" in msg and "must be upgraded" in msg
        assert "not writable" in msg
        assert not list(folder.glob("*backup*"))
    finally:
        folder.chmod(0o755)
    assert user_version(path) == 1 and dump(path) == before


# -- read-only ----------------------------------------------------------------------------


def test_read_only_open_sees_what_is_still_in_the_wal(tiny_ws):
    writer = Workspace.open(tiny_ws)
    writer.conn.execute("PRAGMA wal_autocheckpoint = 0")
    writer.write_labels([Label("q4", "d4", "jun", 2)])
    assert Path(f"{tiny_ws}-wal").stat().st_size > 0
    ro = Workspace.open(tiny_ws, readonly=True)
    assert ro.readonly and ro.readonly_reason == READ_ONLY_ASKED
    assert Label("q4", "d4", "jun", 2) in ro.labels()
    assert ro.integrity_problems() == []
    with pytest.raises(WorkspaceError, match=r"read-only \(opened read-only on request\)"):
        ro.write_labels([Label("q4", "d4", "ro", 1)])
    writer.write_labels([Label("q4", "d3", "jun", 1)])  # a later commit is seen too
    assert Label("q4", "d3", "jun", 1) in ro.labels()
    ro.close()
    writer.close()
    assert Label("q4", "d4", "ro", 1) not in Workspace.open(tiny_ws, readonly=True).labels()


def test_a_v1_workspace_cannot_be_reviewed_read_only_without_an_upgrade(tmp_path, monkeypatch):
    path = tmp_path / "v1.db"
    make_v1(path, monkeypatch)
    with pytest.raises(WorkspaceError, match=f"must be upgraded to {SCHEMA_VERSION}.*read-only"):
        Workspace.open(path, readonly=True)
    assert user_version(path) == 1 and not list(tmp_path.glob("*backup*"))


@pytest.fixture
def unwritable(monkeypatch):
    """Every workspace reports itself as not writable (what os.access says as non-root)."""
    monkeypatch.setattr(
        workspace_module, "writable_problem", lambda path: "the file is not writable"
    )


def test_unwritable_workspace_opens_read_only_with_the_reason(tiny_ws, unwritable):
    ws = Workspace.open(tiny_ws)
    assert ws.readonly and ws.readonly_reason == "the file is not writable"
    assert ws.doc_count() == 4
    with pytest.raises(WorkspaceError, match=r"read-only \(the file is not writable\)"):
        ws.add_question("a new one", [], "mina")
    ws.close()


@not_as_root
def test_unwritable_file_opens_read_only(tiny_ws):
    before = snapshot(tiny_ws)
    tiny_ws.chmod(0o444)
    try:
        ws = Workspace.open(tiny_ws)
        assert ws.readonly and ws.readonly_reason == "the file is not writable"
        assert ws.doc_count() == 4
        with pytest.raises(WorkspaceError, match=r"read-only \(the file is not writable\)"):
            LabelingSession(ws, "mina").set_grade("q1", "d1", 3)
        ws.close()
    finally:
        tiny_ws.chmod(0o644)
    assert snapshot(tiny_ws) == before


@not_as_root
def test_unwritable_folder_opens_read_only_with_and_without_a_wal(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    path = folder / "w.db"
    ws = new_workspace(path)
    ws.write_docs([Doc("a", "t", "x")])
    ws.close()  # clean close: no -wal, no -shm; mode=ro alone could not start here
    assert sorted(p.name for p in folder.iterdir()) == ["w.db"]
    folder.chmod(0o555)
    try:
        ro = Workspace.open(path)
        assert ro.readonly and "folder" in (ro.readonly_reason or "")
        assert ro.doc_ids() == ["a"] and ro.integrity_problems() == []
        with pytest.raises(WorkspaceError, match="not writable"):
            ro.write_questions([Question("q", "x")])
        ro.close()
    finally:
        folder.chmod(0o755)
    # now with a -wal holding a commit (a writer still has it open)
    writer = Workspace.open(path)
    writer.conn.execute("PRAGMA wal_autocheckpoint = 0")
    writer.write_docs([Doc("b", "t", "y")])
    folder.chmod(0o555)
    try:
        ro = Workspace.open(path)
        assert ro.readonly and ro.doc_ids() == ["a", "b"]
        ro.close()
    finally:
        folder.chmod(0o755)
        writer.close()
