"""What goldpan's commands say about a workspace's schema and a file they cannot write: where
an upgrade's backup is, a newer workspace refused naming both versions, every write command
on a read-only workspace exit 2 with the reason while reading commands work. The upgrades
and the read-only opening themselves are in tests/engine/workspace/test_upgrade.py (whose helpers
these tests use)."""

from __future__ import annotations

import json
import sqlite3

import pytest

import engine.workspace.lifecycle as workspace_module
from engine.workspace.migrations import SCHEMA_VERSION
from tests.conftest import run_cli as run
from tests.conftest import snapshot, write_jsonl
from tests.engine.workspace.test_upgrade import make_v1


@pytest.fixture
def unwritable(monkeypatch):
    """Every workspace reports itself as not writable (what os.access says as non-root)."""
    monkeypatch.setattr(
        workspace_module, "writable_problem", lambda path: "the file is not writable"
    )


def test_cli_says_where_the_backup_is(tmp_path, monkeypatch, capsys):
    path = tmp_path / "old.db"
    make_v1(path, monkeypatch)
    code, out, err = run(capsys, "info", path, "--json")
    assert code == 0
    assert json.loads(out)["schema_version"] == SCHEMA_VERSION
    (backup,) = tmp_path.glob("old.v1-backup-*.db")
    assert "upgraded" in err and f"from schema version 1 to {SCHEMA_VERSION}" in err
    assert str(backup) in err.replace("\n", "")
    # the second time there is nothing to say
    code, _, err = run(capsys, "info", path, "--json")
    assert code == 0 and err == ""


def test_newer_workspace_is_refused_by_the_cli_naming_both_versions(tiny_ws, capsys):
    conn = sqlite3.connect(tiny_ws)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    before = tiny_ws.read_bytes()
    for argv in (("info", tiny_ws), ("open", tiny_ws), ("label", tiny_ws, "q1", "d1", "1")):
        code, _, err = run(capsys, *argv)
        assert code == 2, argv
        flat = " ".join(err.split())
        assert "schema version 99" in flat and f"up to {SCHEMA_VERSION}" in flat, flat
        assert "Traceback" not in err
    assert tiny_ws.read_bytes() == before
    assert not list(tiny_ws.parent.glob("*backup*"))


def test_cli_write_commands_on_a_read_only_workspace_exit_2(tiny_ws, tmp_path, unwritable, capsys):
    before = snapshot(tiny_ws)
    write_jsonl(tmp_path / "more.jsonl", [{"_id": "d9", "title": "t", "text": "x"}])
    write_jsonl(tmp_path / "qs.jsonl", [{"_id": "q9", "text": "new"}])
    commands = [
        ("import", "docs", tiny_ws, tmp_path / "more.jsonl"),
        ("import", "questions", tiny_ws, tmp_path / "qs.jsonl"),
        ("label", tiny_ws, "q1", "d1", "3", "--annotator", "mina"),
        ("verdict", tiny_ws, "q2", "skip", "--annotator", "mina"),
        ("retriever", "add", tiny_ws, "extra", "--tokenizer", "word"),
        ("retriever", "remove", tiny_ws, "bm25-word"),
        ("pool", tiny_ws, "--retriever", "bm25-word", "--quiet"),
    ]
    for argv in commands:
        code, _, err = run(capsys, *argv)
        flat = " ".join(err.split())
        assert code == 2, (argv, err)
        assert "read-only (the file is not writable)" in flat, (argv, flat)
        assert "Traceback" not in err
    assert snapshot(tiny_ws) == before
    # reading still works
    code, out, _ = run(capsys, "info", tiny_ws, "--json")
    assert code == 0 and json.loads(out)["labels"] == 4
    code, out, _ = run(capsys, "score", tiny_ws, "--no-pool", "--json")
    board = json.loads(out)  # nothing was ever pooled: no retriever holds any question
    assert code == 0 and board["questions"]["scored"] == 3  # out, and none has means
    assert board["questions"]["not_ranked"] == 0
    assert all(r["mrr"] is None and r["not_ranked"] == 3 for r in board["retrievers"].values())
    # score pools stale rankings first, except on a read-only workspace: it scores the cache
    code, out, err = run(capsys, "score", tiny_ws)
    assert code == 0 and "scoring the cached rankings" in " ".join(err.split())
    labels = tmp_path / "labels.csv"
    assert run(capsys, "export", tiny_ws, "--format", "labels", labels)[0] == 0
    assert len(labels.read_text().splitlines()) == 5
    assert snapshot(tiny_ws) == before
