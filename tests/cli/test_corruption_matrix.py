"""Issue 12, the corruption matrix: every way of damaging a workspace x every command.

A workspace is a file people send each other, so it may arrive truncated, written by
another program, hand-edited with the sqlite3 shell, or with a bad disk page. For each of
the damages below and each goldpan command (run in-process through ``main``, so the whole
matrix takes seconds): no traceback, never exit 1 (reserved for a missed floor), never
exit 3 (an internal error is a bug), and the damaged file is byte for byte what it was
(the write gate and ``identify`` refuse before anything is written). ``goldpan check``
exits 2 on every one of them, and 0 on the undamaged workspace.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.retrieve.runner import refresh_runs
from engine.types import Adjudication, Label, Verdict
from engine.workspace.migrations import GOLDPAN_APPLICATION_ID, SCHEMA_VERSION
from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS
from tui.cli import main

Damage = Callable[[Path], None]


def _sql(*statements: str, checks: bool = True, fks: bool = False) -> Damage:
    """A damage done with the sqlite3 shell's powers (CHECK constraints off if asked)."""

    def damage(path: Path) -> None:
        conn = sqlite3.connect(path)
        try:
            if not checks:
                conn.execute("PRAGMA ignore_check_constraints = ON")
            conn.execute(f"PRAGMA foreign_keys = {'ON' if fks else 'OFF'}")
            for st in statements:
                conn.execute(st)
            conn.commit()
        finally:
            conn.close()

    return damage


def _bytes(change: Callable[[bytes, Path], bytes]) -> Damage:
    def damage(path: Path) -> None:
        path.write_bytes(change(path.read_bytes(), path))

    return damage


def _page_of(path: Path, name: str) -> tuple[int, int]:
    """(page size, root page number) of a table or index."""
    conn = sqlite3.connect(path)
    try:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        return size, root[0]
    finally:
        conn.close()


def _smash_page(name: str, at: int = 0, data: bytes = b"\xff" * 8) -> Damage:
    """Overwrite bytes of the b-tree page of table or index ``name`` (a bad disk sector)."""

    def change(raw: bytes, path: Path) -> bytes:
        size, root = _page_of(path, name)
        start = (root - 1) * size + at
        return raw[:start] + data + raw[start + len(data) :]

    return _bytes(change)


DAMAGES: dict[str, Damage] = {
    # the file
    "empty file": _bytes(lambda raw, p: b""),
    "not sqlite": _bytes(lambda raw, p: b"id,title,text\nd1,a,b\n" * 50),
    "truncated to half": _bytes(lambda raw, p: raw[: len(raw) // 2]),
    "header magic garbled": _bytes(lambda raw, p: b"SQLite format 4\x00" + raw[16:]),
    "labels page smashed": _smash_page("labels"),
    "docs index page smashed": _smash_page("sqlite_autoindex_docs_1"),
    "sqlite_master page smashed": _bytes(lambda raw, p: raw[:100] + b"\x00" * 12 + raw[112:]),
    # whose file it is
    "another program's application_id": _sql("PRAGMA application_id = 305419896"),
    "user_version -1": _sql("PRAGMA user_version = -1"),
    "user_version 0": _sql("PRAGMA user_version = 0"),
    "newer goldpan schema": _sql(f"PRAGMA user_version = {SCHEMA_VERSION + 1}"),
    "goldpan version without goldpan's id": _sql("PRAGMA application_id = 0"),
    # the schema
    "labels table dropped": _sql("DROP TABLE labels"),
    "docs gained a column": _sql("ALTER TABLE docs ADD COLUMN extra TEXT"),
    "a trigger aborts inserts": _sql(
        "CREATE TRIGGER nope BEFORE INSERT ON labels BEGIN SELECT RAISE(ABORT, 'no'); END"
    ),
    # rows
    "docs.fields not JSON": _sql("UPDATE docs SET fields = '{oops' WHERE id = 'd2'"),
    "docs.fields an array": _sql("UPDATE docs SET fields = '[1, 2]' WHERE id = 'd3'"),
    "docs.id a blob": _sql("UPDATE docs SET id = x'00ff' WHERE id = 'd4'"),
    "docs.title not UTF-8": _sql("UPDATE docs SET title = CAST(x'c328ff' AS TEXT) WHERE id = 'd4'"),
    # each cut mid-character, the two halves of 이 (the gate checks the columns joined)
    "docs.title and text halves of a character": _sql(
        "UPDATE docs SET title = CAST(x'41ec9d' AS TEXT), text = CAST(x'b442' AS TEXT) "
        "WHERE id = 'd1'"
    ),
    "docs.fields empty but a blob": _sql(
        "UPDATE docs SET fields = CAST('{}' AS BLOB) WHERE id = 'd2'"
    ),
    "questions.tags not a list": _sql("UPDATE questions SET tags = '\"easy\"' WHERE id = 'q2'"),
    "questions.tags holds a number": _sql("UPDATE questions SET tags = '[1]' WHERE id = 'q3'"),
    "questions.tags nested 900 deep": _sql(
        f"UPDATE questions SET tags = '{'[' * 900}{']' * 900}' WHERE id = 'q4'"
    ),
    "labels.grade 7": _sql("UPDATE labels SET grade = 7 WHERE doc_id = 'd1'", checks=False),
    "labels.grade text": _sql("UPDATE labels SET grade = 'two' WHERE doc_id = 'd2'", checks=False),
    "verdict unknown": _sql("UPDATE verdicts SET verdict = 'maybe'", checks=False),
    "adjudications.gold not an object": _sql("UPDATE adjudications SET gold = '[\"d1\"]'"),
    "retrievers.params not an object": _sql(
        "UPDATE retrievers SET params = '[1]' WHERE name = 'bm25-bigram'"
    ),
    "retrievers.kind unknown": _sql(
        "UPDATE retrievers SET kind = 'quantum' WHERE name = 'bm25-bigram'"
    ),
    "runs.scores odd length": _sql(
        "UPDATE runs SET scores = x'00112233445566' WHERE question_id = 'q1'"
    ),
    "runs.doc_ids not JSON": _sql("UPDATE runs SET doc_ids = 'd1 d2' WHERE question_id = 'q2'"),
    "runs.doc_ids holds a number": _sql(
        "UPDATE runs SET doc_ids = '[7]', scores = x'0000000000000000' WHERE question_id = 'q3'"
    ),
    "runs.doc_ids numbers cut short": _sql(
        "UPDATE runs SET doc_ids = x'010203' WHERE question_id = 'q1'"
    ),
    "runs.doc_ids a number no document has": _sql(
        "UPDATE runs SET doc_ids = x'ffffff7f', scores = x'0000000000000000' "
        "WHERE question_id = 'q2'"
    ),
    "doc_numbers.id a blob": _sql("UPDATE doc_numbers SET id = x'6431' WHERE id = 'd1'"),
    "a document without a number": _sql("DELETE FROM doc_numbers WHERE id = 'd2'"),
    "meta.value a blob": _sql("UPDATE meta SET value = x'01' WHERE key = 'created'"),
    "events.at a blob": _sql("UPDATE events SET at = x'3432'"),
    "label of a deleted question": _sql(
        "INSERT INTO labels(question_id, doc_id, annotator, grade, updated) "
        "VALUES ('ghost', 'd1', 'mina', 1, '2025-01-01')"
    ),
    "judging_order unknown": _sql("INSERT INTO meta(key, value) VALUES ('judging_order', 'evil')"),
    "stop_below not a number": _sql("INSERT INTO meta(key, value) VALUES ('stop_below', 'nan')"),
    "stops.annotator a blob": _sql(
        "INSERT INTO stops(question_id, annotator, rule, updated) VALUES ('q1', x'00ff', 'r', 't')"
    ),
    "proposal of a missing document": _sql(
        "INSERT INTO proposals(question_id, doc_id, method, by, proposed) "
        "VALUES ('q1', 'ghost', 'rocchio', 'lee', 't')"
    ),
}

COMMANDS: dict[str, list[str]] = {
    "info": ["info", "{ws}"],
    "check": ["check", "{ws}"],
    "score": ["score", "{ws}", "--json"],
    "score --fail-under": ["score", "{ws}", "--fail-under", "mrr=0"],
    "pool": ["pool", "{ws}", "--force", "--quiet"],
    "label": ["label", "{ws}", "q2", "d3", "1", "--annotator", "lee"],
    "verdict": ["verdict", "{ws}", "q4", "no_answer", "--annotator", "lee"],
    "import questions": ["import", "questions", "{ws}", "{dir}/more.jsonl"],
    "import docs": ["import", "docs", "{ws}", "{dir}/docs.jsonl"],
    "retriever list": ["retriever", "list", "{ws}"],
    "retriever add": ["retriever", "add", "{ws}", "extra", "--tokenizer", "bigram"],
    "retriever remove": ["retriever", "remove", "{ws}", "bm25-bigram"],
    "agreement": ["agreement", "{ws}"],
    "queue": ["queue", "{ws}", "--json"],
    "compare": ["compare", "{ws}", "bm25-word", "bm25-bigram", "--samples", "20"],
    "failures": ["failures", "{ws}", "--retriever", "bm25-word"],
    "noanswer": ["noanswer", "{ws}", "--retriever", "bm25-word"],
    "sweep": ["sweep", "{ws}", "--retriever", "bm25-word", "--k1", "1.2", "--b", "0.75"],
    "overlap": ["overlap", "{ws}"],
    "export": ["export", "{ws}", "--format", "labels", "--out", "{dir}/labels-out.csv"],
    "trust": ["trust", "{ws}", "--yes"],
    "merge into it": ["merge", "{ws}", "{dir}/good.db"],
    "merge from it": ["merge", "{dir}/merged.db", "{ws}"],
    "judging": ["judging", "{ws}", "--json"],
    "judging --order": ["judging", "{ws}", "--order", "fused"],
    "simulate": ["simulate", "{ws}", "--assessor", "mina", "--seeds", "1", "--samples", "20"],
    "queue --beyond-pool": ["queue", "{ws}", "--beyond-pool", "2", "--json"],
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small, sound workspace with a little of everything (pooled, two annotators)."""
    folder = tmp_path_factory.mktemp("matrix-base")
    path = folder / "base.db"
    ws = new_workspace(path)
    for spec in ws.retrievers():
        if spec.name not in ("bm25-word", "bm25-bigram"):
            ws.remove_retriever(spec.name)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.write_labels(
        [
            Label("q1", "d1", "mina", 2),
            Label("q1", "d2", "jun", 1),
            Label("q3", "d3", "mina", 3),
            Label("q3", "d3", "jun", 2),
        ]
    )
    ws.write_verdicts([Verdict("q4", "mina", "no_answer", "")])
    ws.write_adjudication(Adjudication("q1", False, {"d1": 2}, "lee"))
    refresh_runs(ws, depth=20)
    ws.checkpoint()
    ws.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def _prepare(folder: Path, base: Path) -> None:
    shutil.copyfile(base, folder / "good.db")
    (folder / "more.jsonl").write_text('{"id": "q9", "text": "new question"}\n', "utf-8")
    (folder / "docs.jsonl").write_text('{"_id": "d9", "text": "new document"}\n', "utf-8")


def test_the_undamaged_workspace_passes_every_command(base, tmp_path, capsys):
    """The control row: every command works on the sound workspace (so a refusal below
    is the damage's doing)."""
    for name, argv in COMMANDS.items():
        folder = tmp_path / name.replace(" ", "_")
        folder.mkdir()
        _prepare(folder, base)
        ws = folder / "ws.db"
        shutil.copyfile(base, ws)
        code = main([a.format(ws=ws, dir=folder) for a in argv])
        captured = capsys.readouterr()
        assert code == 0, (name, captured.err)


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_workspace_under_every_command(base, tmp_path, capsys, damage):
    damaged = tmp_path / "damaged.db"
    shutil.copyfile(base, damaged)
    DAMAGES[damage](damaged)
    for suffix in ("-wal", "-shm"):  # the damage is all in the file
        assert not Path(f"{damaged}{suffix}").exists()
    before = _digest(damaged)
    failures = []
    for name, argv in COMMANDS.items():
        folder = tmp_path / name.replace(" ", "_")
        folder.mkdir()
        _prepare(folder, base)
        ws = folder / "ws.db"
        shutil.copyfile(damaged, ws)
        code = main([a.format(ws=ws, dir=folder) for a in argv])
        out, err = capsys.readouterr()
        if "Traceback" in out + err or code not in (0, 2):
            failures.append(f"{name}: exit {code}: {err.strip()[-300:]}")
        if _digest(ws) != before:
            failures.append(f"{name}: wrote into the damaged file (exit {code})")
        if list(folder.glob("*backup*")):
            failures.append(f"{name}: wrote a backup copy (an upgrade was attempted)")
        if name == "check" and code != 2:
            failures.append(f"check: exit {code}, expected 2 (a problem found)")
        if code == 2 and name != "check" and not err.strip():
            failures.append(f"{name}: exit 2 without a message")
    assert not failures, "\n".join(failures)


def test_the_matrix_is_big_enough():
    assert len(DAMAGES) >= 25 and len(COMMANDS) >= 20
    assert int.from_bytes(b"GoPn", "big") == GOLDPAN_APPLICATION_ID
