"""``goldpan check`` and ``pool`` on a received file: what it is, and what is wrong with it.

A path that never was a workspace (a FIFO, a text file) is said to be that, not "damaged,
restore it from a copy". Retrievers that read their own rankings, through each other or
directly (a file edited by hand: ``retriever add`` refuses them), are found by ``check``
and refused by ``pool`` before anything runs.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from tests.conftest import run_cli


def test_check_calls_a_fifo_not_a_workspace_and_never_says_to_restore_it(tmp_path, capsys):
    fifo = tmp_path / "received.db"
    os.mkfifo(fifo)
    code, out, err = run_cli(capsys, "check", fifo)
    said = " ".join((out + err).split())
    assert code == 2
    refused = f"goldpan: error: {fifo} is not a goldpan workspace, so there is nothing to restore"
    assert refused in said
    assert "damaged" not in said and "Restore" not in said


def test_check_calls_a_text_file_not_a_workspace_and_never_says_to_restore_it(tmp_path, capsys):
    text = tmp_path / "notes.db"
    text.write_text("meeting notes\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "check", text)
    said = " ".join((out + err).split())
    assert code == 2
    assert "it is not an SQLite file" in said and "nothing to restore" in said
    assert "damaged" not in said and "Restore" not in said
    assert text.read_text(encoding="utf-8") == "meeting notes\n"
    code, out, _ = run_cli(capsys, "check", text, "--json")
    assert code == 2 and json.loads(out)["verdict"] == "not a workspace"


def test_check_of_a_damaged_workspace_still_says_to_restore_it(tiny_ws, capsys):
    with sqlite3.connect(tiny_ws) as conn:
        conn.execute("UPDATE retrievers SET params = '[1, 2]' WHERE name = 'bm25-word'")
    conn.close()
    code, out, err = run_cli(capsys, "check", tiny_ws)
    assert code == 2
    assert "is damaged" in err and "Restore it from a copy" in " ".join(err.split())
    code, out, _ = run_cli(capsys, "check", tiny_ws, "--json")
    assert json.loads(out)["verdict"] == "damaged"


def read_from(ws: Path, reads: dict[str, list[str]]) -> None:
    """Make each named fusion read the given retrievers, as a hand edit of the file does."""
    with sqlite3.connect(ws) as conn:
        for name, bases in reads.items():
            conn.execute(
                "UPDATE retrievers SET params = json_set(params, '$.of', json(?)) WHERE name = ?",
                (json.dumps(bases), name),
            )
    conn.close()


def fusions(capsys, ws: Path, *names: str) -> None:
    for name in names:
        argv = ["retriever", "add", ws, name, "--kind", "rrf", "--of", "bm25-word,bm25-bigram"]
        assert run_cli(capsys, *argv)[0] == 0


def test_check_finds_two_fusions_that_read_each_other(tiny_ws, capsys):
    fusions(capsys, tiny_ws, "f1", "f2")
    read_from(tiny_ws, {"f1": ["f2", "bm25-word"], "f2": ["f1", "bm25-bigram"]})
    code, out, _ = run_cli(capsys, "check", tiny_ws)
    assert code == 2, out
    assert "row name 'f1': retriever 'f1' reads its own rankings (a cycle: f1 -> f2 -> f1)" in out


def test_check_finds_a_fusion_that_reads_itself(tiny_ws, capsys):
    fusions(capsys, tiny_ws, "f3")
    read_from(tiny_ws, {"f3": ["f3", "bm25-word"]})
    code, out, _ = run_cli(capsys, "check", tiny_ws)
    assert code == 2, out
    assert "retriever 'f3' reads its own rankings (a cycle: f3 -> f3)" in out


def test_pool_refuses_fusions_that_read_each_other_and_runs_nothing(tiny_ws, capsys):
    fusions(capsys, tiny_ws, "f1", "f2")
    read_from(tiny_ws, {"f1": ["f2", "bm25-word"], "f2": ["f1", "bm25-bigram"]})
    code, _, err = run_cli(capsys, "pool", tiny_ws, "--retriever", "f2", "--quiet")
    assert code == 2, err
    assert "reads its own rankings (a cycle: f2 -> f1 -> f2)" in err
    with sqlite3.connect(tiny_ws) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    conn.close()
