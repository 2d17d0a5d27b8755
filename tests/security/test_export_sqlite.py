"""Hostile cases of ``goldpan export --format sqlite``: it writes a new database only where
nothing is, never over a file, a database, a link or the workspace, and corpus text goes in
as data. Real processes; every refusal leaves every file exactly as it was."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.types import Doc, Question
from engine.workspace_setup import new_workspace
from tests.cli.test_cli_exit import goldpan
from tests.conftest import snapshot

TRAP = "[bold]x[/] \x1b[2J\x1b]0;owned\x07 \u202eevil\x00tail"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "w.db"
    made = new_workspace(path)
    made.write_docs([Doc("d1", TRAP, TRAP), Doc("d2", "t", "본문")])
    made.write_questions([Question("q1", TRAP, ("tag",))])
    made.close()
    return path


def export(tmp_path: Path, ws: Path, out: object, *more: str) -> subprocess.CompletedProcess[str]:
    return goldpan(tmp_path, "export", ws, "--format", "sqlite", "--out", out, *more)


def refused(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "error:" in done.stderr


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("force", [False, True])
def test_an_existing_file_or_database_is_never_written_over(tmp_path, ws, force):
    more = ("--force",) if force else ()
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n", encoding="utf-8")
    mine = tmp_path / "mine.db"
    conn = sqlite3.connect(mine)
    conn.execute("CREATE TABLE t(x)")
    conn.commit()
    conn.close()
    held = {p: p.read_bytes() for p in (notes, mine)}
    before, names = snapshot(ws), listing(tmp_path)
    for target in (notes, mine, ws):
        done = export(tmp_path, ws, target, *more)
        refused(done)
    assert {p: p.read_bytes() for p in held} == held
    assert snapshot(ws) == before and listing(tmp_path) == names


def test_a_link_is_never_written_through(tmp_path, ws):
    before = snapshot(ws)
    to_ws = tmp_path / "to-ws.db"
    to_ws.symlink_to(ws)
    dangling = tmp_path / "dangling.db"
    dangling.symlink_to(tmp_path / "elsewhere" / "planted.db")
    (tmp_path / "elsewhere").mkdir()
    for link in (to_ws, dangling):
        done = export(tmp_path, ws, link, "--force")
        refused(done)
        assert "link" in done.stderr
    assert snapshot(ws) == before
    assert os.readlink(dangling) == str(tmp_path / "elsewhere" / "planted.db")
    assert listing(tmp_path / "elsewhere") == []


def test_a_missing_folder_or_workspace_is_refused_and_nothing_is_made(tmp_path, ws):
    refused(export(tmp_path, ws, tmp_path / "no" / "such" / "copy.db"))
    assert not (tmp_path / "no").exists()
    refused(export(tmp_path, tmp_path / "absent.db", tmp_path / "copy.db"))
    assert not (tmp_path / "absent.db").exists() and not (tmp_path / "copy.db").exists()


def test_a_received_file_that_is_not_a_workspace_is_refused(tmp_path):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE docs(id, title, text)")
    conn.commit()
    conn.close()
    held = other.read_bytes()
    refused(export(tmp_path, other, tmp_path / "copy.db"))
    assert other.read_bytes() == held and not (tmp_path / "copy.db").exists()


def test_corpus_text_goes_in_as_data_and_the_report_names_only_the_path(tmp_path, ws):
    out = tmp_path / "copy.db"
    done = export(tmp_path, ws, out)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    conn = sqlite3.connect(out)
    try:
        assert conn.execute("SELECT title, text FROM docs WHERE id = 'd1'").fetchone() == (
            TRAP,
            TRAP,
        )
        assert conn.execute("SELECT text FROM questions").fetchone() == (TRAP,)
    finally:
        conn.close()
    assert listing(tmp_path) == ["copy.db", "w.db"]  # no temporary or side file left


def test_a_folder_holding_engine_tui_or_sqlite_utils_runs_none_of_it(tmp_path, ws):
    """The installed ``goldpan`` run from a folder planted with goldpan's own package names
    (and sqlite-utils'): what runs is the installed code, never the folder's."""
    script = Path(sys.executable).with_name("goldpan")
    if not script.exists():
        pytest.skip("no installed goldpan script beside this Python")
    work = tmp_path / "checkout"
    for package in ("engine", "tui", "sqlite_utils"):
        (work / package).mkdir(parents=True)
        (work / package / "__init__.py").write_text(
            "open(__file__ + '.ran', 'w').close()\nraise SystemExit(99)\n", encoding="utf-8"
        )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(script), "export", str(ws), "--format", "sqlite", "--out", "copy.db"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not list(work.rglob("*.ran"))
    assert (work / "copy.db").is_file()
