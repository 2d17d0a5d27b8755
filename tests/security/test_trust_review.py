"""``goldpan trust`` shows what it asks about in full, made visible, before anything is trusted.

What is trusted is keyed by a template's hash, but a person cannot read a hash: every SQL
template and request body is printed whole, line by line, with control and invisible
characters as pictures (``␛``, ``⟨U+202E⟩``), and every address whole, never cut short.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from engine.retrieve import new_spec
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, run_cli

# a template whose second line erases the screen and reverses what follows it
SQL = (
    "SELECT id, 1.0 FROM docs\nWHERE %(query)s <> '' -- \x1b[2J\u202e ;eteled\u200b\nLIMIT %(k)s\n"
)
LONG_URL = "https://search.example.org/v1/" + "/".join(["deep"] * 40) + "/search?q={{query}}"


def workspace(tmp_path: Path, *specs: tuple[str, str, dict[str, object]]) -> Path:
    path = tmp_path / "received.db"
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    for name, kind, params in specs:
        ws.add_retriever(new_spec(name, kind, params))
    ws.close()
    return path


def answer_no(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))


def test_trust_shows_a_sql_template_whole_with_its_hidden_characters_visible(
    tmp_path, capsys, monkeypatch
):
    pytest.importorskip("psycopg")
    sql = tmp_path / "t.sql"
    sql.write_text(SQL, encoding="utf-8")
    path = workspace(tmp_path, ("pg", "postgres", {"dsn_env": "PG_DSN", "sql": str(sql)}))
    answer_no(monkeypatch)
    code, out, err = run_cli(capsys, "trust", path)
    assert code == 0, err
    assert "| SELECT id, 1.0 FROM docs" in out
    assert "| WHERE %(query)s <> '' -- ␛[2J⟨U+202E⟩ ;eteled⟨U+200B⟩" in out
    assert "| LIMIT %(k)s" in out
    assert "\x1b" not in out + err and "\u202e" not in out + err
    with Workspace.open(path, readonly=True) as ws:
        assert [s.params["sql"] for s in ws.retrievers() if s.name == "pg"] == [SQL]


def test_trust_shows_a_request_body_and_a_long_address_whole(tmp_path, capsys, monkeypatch):
    body = tmp_path / "body.json"
    body.write_text('{"q": "{{query}}",\n "k": {{size}}, "x": "\\u001b]52;c;ZXZpbA==\\u0007"}\n')
    params = {"url": LONG_URL, "hits_pointer": "/hits", "body": str(body)}
    path = workspace(tmp_path, ("api", "http", params))
    answer_no(monkeypatch)
    code, out, err = run_cli(capsys, "trust", path)
    assert code == 0, err
    assert f"--url {LONG_URL}" in out  # on the line asked about, whole
    assert '| {"q": "{{query}}",' in out and '|  "k": {{size}}, "x":' in out
    code, listed, err = run_cli(capsys, "trust", path, "--list")
    assert code == 0, err
    flat = "".join(line.strip(" │") for line in listed.splitlines())  # the table folds it
    assert LONG_URL in flat and "…" not in listed
