"""``export --format sqlite``: the labels, questions and qrels as a plain SQLite database."""

from __future__ import annotations

import csv
import json
import sqlite3

import pytest

from engine.errors import GoldpanError
from engine.export import export_workspace
from engine.types import Label
from engine.workspace import Workspace
from engine.workspace.identity import identify


def _rows(path, sql):
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_the_copy_holds_what_the_text_exports_hold(tiny_ws, tmp_path):
    with Workspace.open(tiny_ws) as ws:
        ws.write_labels([Label("q2", "d3", "joon", 0)])  # a 0 the qrels must keep
        line = export_workspace(ws, "sqlite", tmp_path / "copy.db")
        export_workspace(ws, "labels", tmp_path / "labels.csv")
        export_workspace(ws, "trec-qrels", tmp_path / "qrels.txt")
        export_workspace(ws, "questions-jsonl", tmp_path / "q.jsonl")
        docs = ws.docs()
    copy = tmp_path / "copy.db"
    assert line.startswith("wrote 4 documents, 4 questions")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(("copy", ".copy"))] == [
        "copy.db"
    ]  # no -journal, -wal or temporary file beside it
    tables = {r[0] for r in _rows(copy, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"docs", "questions", "labels", "qrels"}
    assert _rows(copy, "SELECT id, title, text FROM docs ORDER BY id") == sorted(
        (d.id, d.title, d.text) for d in docs
    )
    with open(tmp_path / "labels.csv", newline="", encoding="utf-8") as f:
        want = [(r[0], r[1], r[2], int(r[3])) for r in list(csv.reader(f))[1:]]
    got = _rows(copy, "SELECT * FROM labels ORDER BY question_id, doc_id, annotator")
    assert got == sorted(want) and got
    qrels = [line.split() for line in (tmp_path / "qrels.txt").read_text().splitlines()]
    got = _rows(copy, "SELECT * FROM qrels ORDER BY question_id, doc_id")
    assert got == sorted((q, d, int(g)) for q, _, d, g in qrels) and got
    assert any(g == 0 for _, _, g in got)
    questions = [json.loads(x) for x in (tmp_path / "q.jsonl").read_text().splitlines()]
    got = _rows(copy, "SELECT id, text, tags, no_answer FROM questions ORDER BY id")
    assert got == sorted(
        (q["id"], q["text"], json.dumps(q["tags"], ensure_ascii=False), int(q["no_answer"]))
        for q in questions
    )
    # declared keys: a second label of the same pair by the same annotator cannot go in
    pk = _rows(copy, "SELECT name FROM pragma_table_info('labels') WHERE pk > 0 ORDER BY pk")
    assert [r[0] for r in pk] == ["question_id", "doc_id", "annotator"]
    with pytest.raises(GoldpanError, match="is not a goldpan workspace"):
        identify(copy)  # not a workspace: goldpan opens it as another program's database


def test_an_empty_workspace_gives_the_tables_with_no_rows(tmp_path):
    from engine.workspace_setup import new_workspace

    ws = new_workspace(tmp_path / "empty.db")
    try:
        export_workspace(ws, "sqlite", tmp_path / "copy.db")
    finally:
        ws.close()
    for table in ("docs", "questions", "labels", "qrels"):
        assert _rows(tmp_path / "copy.db", f"SELECT count(*) FROM {table}") == [(0,)]
