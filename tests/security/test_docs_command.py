"""Hostile cases of ``goldpan docs``: corpus text is data, a huge corpus answers in bounds,
a file that is not a workspace is refused and left as it is. Each test is a real process."""

from __future__ import annotations

import hashlib
import json
import sqlite3

from engine.types import Doc
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.cli.test_cli_exit import goldpan

TRAP = "[bold red]boom[/] \x1b[2J\x1b]0;owned\x07 \u202egnp.exe"
"""Rich markup, a clear-screen and a window-title escape, a right-to-left override."""


def _ws_with(tmp_path, docs):
    path = tmp_path / "w.db"
    ws = new_workspace(path)
    ws.write_docs(docs)
    ws.close()
    return path


def test_markup_and_escapes_in_titles_and_text_are_shown_as_text(tmp_path):
    ws = _ws_with(tmp_path, [Doc("d1", TRAP, f"앞 {TRAP} 뒤")])
    for argv in ([], ["--search", "boom"]):
        done = goldpan(tmp_path, "docs", ws, *argv)
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout
        assert "\u202e" not in done.stdout and "⟨U+202E⟩" in done.stdout
        assert "[bold red]boom[/]" in done.stdout  # printed, not obeyed
    done = goldpan(tmp_path, "docs", ws, "--search", "boom", "--json")
    assert "\x1b" not in done.stdout and "\\u001b" in done.stdout
    (found,) = json.loads(done.stdout)["docs"]
    assert found["title"] == TRAP and TRAP in found["snippet"]  # the data, exactly


def test_a_search_is_literal_text_never_a_pattern(tmp_path):
    ws = _ws_with(tmp_path, [Doc("a", "100% 확인", "본문"), Doc("b", "다른 글", "a.b 본문")])
    for pattern, expected in (("%", ["a"]), ("_", []), (".*", []), ("a.b", ["b"])):
        done = goldpan(tmp_path, "docs", ws, "--search", pattern, "--json")
        assert [d["id"] for d in json.loads(done.stdout)["docs"]] == expected, pattern


def test_a_one_character_search_of_a_huge_corpus_lists_the_limit_and_counts_the_rest(tmp_path):
    n = 30_000
    ws = _ws_with(
        tmp_path, [Doc(f"d{i:05d}", f"글 {i}", "가나다 " * 30 + f"끝 {i}") for i in range(n)]
    )
    done = goldpan(tmp_path, "docs", ws, "--search", "가", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["total"], data["corpus"], len(data["docs"])) == (n, n, 50)
    assert [d["id"] for d in data["docs"][:2]] == ["d00000", "d00001"]
    table = goldpan(tmp_path, "docs", ws, "--search", "가")
    assert table.returncode == 0
    assert f"50 shown of {n:,}: --limit N shows more (0: all)" in table.stdout
    assert len(table.stdout.splitlines()) < 200  # the limit's rows, not thirty thousand


def test_a_file_that_is_not_a_workspace_is_refused_and_left_as_it_is(tmp_path):
    notes = tmp_path / "notes.db"
    notes.write_text("not a database\n", encoding="utf-8")
    before = hashlib.sha256(notes.read_bytes()).hexdigest()
    other = tmp_path / "other.db"  # an SQLite file of another program
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE docs (id TEXT, title TEXT, text TEXT)")
        conn.execute("INSERT INTO docs VALUES ('x', 'y', 'z')")
    conn.close()
    other_before = hashlib.sha256(other.read_bytes()).hexdigest()
    for path in (notes, other, tmp_path / "missing.db"):
        done = goldpan(tmp_path, "docs", path, "--search", "y")
        assert done.returncode == 2, (path, done.stderr)
        assert done.stdout == "" and "Traceback" not in done.stderr
        assert path.name in done.stderr
    assert hashlib.sha256(notes.read_bytes()).hexdigest() == before
    assert hashlib.sha256(other.read_bytes()).hexdigest() == other_before
    assert not (tmp_path / "missing.db").exists()


def test_a_document_whose_text_is_not_text_is_named_not_a_crash(tmp_path):
    ws = _ws_with(tmp_path, [Doc("d1", "제목", "본문"), Doc("d2", "둘", "본문")])
    with sqlite3.connect(ws) as conn:  # a received workspace with a damaged row
        conn.execute("UPDATE docs SET text = X'00FF' WHERE id = 'd2'")
    conn.close()
    for argv in ([], ["--search", "본"]):
        done = goldpan(tmp_path, "docs", ws, *argv)
        assert done.returncode == 2, done.stderr
        assert "docs" in done.stderr and "d2" in done.stderr
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    check = Workspace.open(ws, readonly=True)
    check.close()
