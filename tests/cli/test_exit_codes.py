"""Issue 12, cases 3, 4 and 5: own files only, one exit-code contract, no writes into a
damaged workspace.

Each test asserts the exit code, the message (naming the file, and the table and row
where there is one) and that the workspace and the files around it are byte for byte
what they were.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest

import engine.ingest
import tui.cli.commands.workspace as workspace_commands
from engine.workspace import Workspace
from engine.workspace.migrations import GOLDPAN_APPLICATION_ID
from tests.cli.test_corruption_matrix import DAMAGES
from tests.conftest import run_cli as run
from tests.conftest import write_jsonl
from tui.cli import main


def flat(text: str) -> str:
    return " ".join(text.split())


def folder_state(folder: Path, *, wal_side_files: bool = True) -> dict[str, str]:
    """Every file in the folder and its sha256. Without ``wal_side_files``, a goldpan
    workspace's -shm index and an *empty* -wal (which SQLite makes for any reader of a
    WAL-mode file, and which holds no write) are left out."""
    state = {}
    for p in sorted(folder.iterdir()):
        if not p.is_file():
            continue
        if not wal_side_files and (
            p.name.endswith("-shm") or (p.name.endswith("-wal") and p.stat().st_size == 0)
        ):
            continue
        state[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return state


def app_id(path: Path) -> int:
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("PRAGMA application_id").fetchone()[0])
    finally:
        conn.close()


# -- case 3: goldpan changes only its own files -------------------------------------------


def _other_program(path: Path, *, user_version: int, app: int = 0, wal: bool = False) -> None:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes(body) VALUES ('my notes, not a workspace')")
    conn.execute(f"PRAGMA user_version = {user_version}")
    conn.execute(f"PRAGMA application_id = {app}")
    conn.commit()
    conn.close()


FOREIGN = {
    "empty file": (lambda p: p.write_bytes(b""), "the file is empty"),
    "a text file": (lambda p: p.write_text("id,text\n1,x\n"), "it is not an SQLite file"),
    "SQLite user_version 1": (
        lambda p: _other_program(p, user_version=1),
        "user_version 1, but table",
    ),
    "SQLite user_version -1": (
        lambda p: _other_program(p, user_version=-1),
        "user_version -1 is no goldpan schema version",
    ),
    "SQLite user_version 1, WAL": (
        lambda p: _other_program(p, user_version=1, wal=True),
        "user_version 1, but table",
    ),
    "a GeoPackage": (
        lambda p: _other_program(p, user_version=10200, app=0x47504B47),
        "application_id is 1196444487 (0x47504b47), another program's",
    ),
    "blank SQLite file": (
        lambda p: (
            sqlite3.connect(p).execute("PRAGMA user_version = 0").connection.close()
            or p.write_bytes(p.read_bytes() or _blank_sqlite())
        ),
        "no goldpan schema version",
    ),
}


def _blank_sqlite() -> bytes:
    conn = sqlite3.connect(":memory:")
    conn.close()
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "blank.db"
        c = sqlite3.connect(path)
        c.execute("CREATE TABLE t(x)")
        c.execute("DROP TABLE t")
        c.commit()
        c.close()
        return path.read_bytes()


COMMANDS_ON_FOREIGN = [
    ("info", "{ws}"),
    ("label", "{ws}", "q1", "d1", "1", "--annotator", "x"),
    ("import", "docs", "{ws}", "{dir}/docs.jsonl"),
    ("score", "{ws}"),
    ("pool", "{ws}"),
    ("retriever", "add", "{ws}", "r2"),
    ("trust", "{ws}", "--yes"),
    ("check", "{ws}"),
    ("merge", "{ws}", "{dir}/good.db"),
    ("merge", "{dir}/out.db", "{ws}"),
    ("open", "{ws}"),
    ("new", "{ws}"),
]


@pytest.mark.parametrize("kind", list(FOREIGN))
def test_files_that_are_not_goldpans_are_refused_before_anything_is_written(tmp_path, capsys, kind):
    make, why = FOREIGN[kind]
    path = tmp_path / "theirs.db"
    make(path)
    write_jsonl(tmp_path / "docs.jsonl", [{"_id": "d1", "text": "x"}])
    assert run(capsys, "new", tmp_path / "good.db")[0] == 0
    before = folder_state(tmp_path)
    for argv in COMMANDS_ON_FOREIGN:
        args = [a.format(ws=path, dir=tmp_path) for a in argv]
        code, out, err = run(capsys, *args)
        assert code == 2, (args, out, err)
        message = flat(err + out)
        assert str(path) in message, (args, message)
        if argv[0] == "new":
            assert "already exists" in message
        else:
            assert "not a goldpan workspace" in message and why in message, (args, message)
            assert "nothing was written" in message.lower() or argv[0] == "check"
        assert "Traceback" not in err
        assert folder_state(tmp_path) == before, args  # the file and everything beside it


def test_a_new_workspace_carries_goldpans_application_id_and_a_random_id(tmp_path, capsys):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    assert run(capsys, "new", a)[0] == 0 and run(capsys, "new", b)[0] == 0
    assert app_id(a) == GOLDPAN_APPLICATION_ID == int.from_bytes(b"GoPn", "big")
    with Workspace.open(a, readonly=True) as wa, Workspace.open(b, readonly=True) as wb:
        ida, idb = wa.meta()["workspace_id"], wb.meta()["workspace_id"]
    assert re.fullmatch(r"[0-9a-f]{32}", ida) and ida != idb


# -- case 4: tracebacks never reach the terminal, and never exit 1 ------------------------


@pytest.mark.parametrize("depth", [500, 700, 989])
def test_jsonl_nested_hundreds_deep_is_an_input_error_naming_file_and_line(
    tiny_ws, tmp_path, capsys, depth
):
    docs = tmp_path / "deep.jsonl"
    docs.write_text(
        '{"_id": "ok", "text": "x"}\n'
        + '{"_id": "deep", "text": "x", "fields": '
        + "[" * depth
        + "]" * depth
        + "}\n",
        encoding="utf-8",
    )
    before = tiny_ws.read_bytes()
    code, _, err = run(capsys, "import", "docs", tiny_ws, docs)
    assert code == 2
    assert "deep.jsonl:2: JSON nested too deeply" in flat(err)
    assert "Traceback" not in err and tiny_ws.read_bytes() == before


ROW_CASES = {
    "tags not a list": (
        "UPDATE questions SET tags = '\"easy\"' WHERE id = 'q2'",
        "table questions, row id 'q2': tags is '\"easy\"', not a JSON array",
    ),
    "params not an object": (
        "UPDATE retrievers SET params = '7' WHERE name = 'bm25-word'",
        "table retrievers, row name 'bm25-word': params is '7', not a JSON object",
    ),
    "scores blob of odd length": (
        "UPDATE runs SET scores = x'00' WHERE question_id = 'q1' AND retriever = 'bm25-word'",
        "table runs, row (retriever 'bm25-word', question 'q1'): scores holds 1 bytes",
    ),
    "unknown retriever kind": (
        "UPDATE retrievers SET kind = 'quantum' WHERE name = 'bm25-word'",
        "table retrievers, row name 'bm25-word': kind 'quantum' is unknown",
    ),
    "a trigger that aborts inserts": (
        "CREATE TRIGGER nope BEFORE INSERT ON labels BEGIN SELECT RAISE(ABORT, 'no'); END",
        "table labels has a trigger 'nope'",
    ),
}


@pytest.mark.parametrize("case", list(ROW_CASES))
def test_bad_rows_exit_2_naming_table_and_row(tiny_ws, capsys, case):
    assert run(capsys, "pool", tiny_ws, "--retriever", "bm25-word", "--quiet")[0] == 0
    statement, expected = ROW_CASES[case]
    conn = sqlite3.connect(tiny_ws)
    conn.execute(statement)
    conn.commit()
    conn.close()
    before = tiny_ws.read_bytes()
    for argv in (
        ("score", tiny_ws, "--retriever", "bm25-word"),
        ("label", tiny_ws, "q2", "d1", "1", "--annotator", "lee"),
        ("check", tiny_ws),
    ):
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, out, err)
        assert expected in flat(out + err), (argv, out, err)
        assert str(tiny_ws) in flat(out + err)
        assert "Traceback" not in err
        assert tiny_ws.read_bytes() == before, argv


def test_an_internal_error_exits_3_with_one_line_and_a_log(tiny_ws, capsys, monkeypatch, tmp_path):
    def broken(args):
        raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")

    monkeypatch.setattr(workspace_commands, "cmd_info", broken)  # main resolves it by name
    code, out, err = run(capsys, "info", tiny_ws)
    assert code == 3
    assert out == "" and len(err.strip().splitlines()) <= 3  # one line, wrapped at most
    message = flat(err)
    assert "internal error (TypeError: unsupported operand" in message
    assert "Traceback" not in err
    m = re.search(r"the full traceback is in (\S+\.log)", message)
    assert m, message
    log = Path(m.group(1))
    assert log.is_relative_to(tmp_path.parent.parent) or log.exists()
    text = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and "in broken" in text
    assert "command: goldpan info" in text


def test_an_os_error_exits_2_naming_the_file(tiny_ws, capsys, monkeypatch):
    def unreadable(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "/data/corpus.jsonl")

    monkeypatch.setattr(engine.ingest, "import_docs", unreadable)
    code, _, err = run(capsys, "import", "docs", tiny_ws, "x.jsonl")
    assert code == 2
    assert "goldpan: error: /data/corpus.jsonl: Permission denied" in flat(err)


def test_help_states_the_exit_code_contract(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = flat(capsys.readouterr().out)
    assert "exit codes:" in text
    assert "1 only: a --fail-under floor was missed" in text
    assert "3 an internal error" in text and "2 bad input" in text


def test_a_missed_floor_is_the_only_exit_1(tiny_ws, capsys):
    code, _, err = run(capsys, "score", tiny_ws, "--fail-under", "mrr=1.01", "--quiet")
    assert code == 1 and "below the floor" in err


def test_a_gate_over_no_scored_question_is_bad_input_not_a_pass_or_a_missed_floor(tiny_ws, capsys):
    # q4, the only question tagged no-answer, has no label: a mean over no question reads
    # 0, and the floor said "below the floor: mrr 0.0000" (exit 1) of an empty test set
    floor = ("score", tiny_ws, "--fail-under", "mrr=0.1", "--quiet")
    code, _, err = run(capsys, *floor, "--tag", "no-answer")
    assert code == 2 and "below the floor" not in err
    assert "--fail-under: no question with tag 'no-answer' is scored (1 unlabeled)" in flat(err)
    assert run(capsys, *floor)[0] == 0  # the same floor over the scored questions holds
    # without a gate, score still prints its table (the latencies mean something), and
    # says what its zeros are
    code, _, err = run(capsys, "score", tiny_ws, "--quiet", "--tag", "no-answer")
    assert code == 0
    assert "no question with tag 'no-answer' is scored yet" in flat(err)
    assert "is scored yet" not in run(capsys, "score", tiny_ws, "--quiet")[2]
    # a regression gate that compared nothing said "no question got worse", exit 0
    assert run(capsys, "snapshot", "save", tiny_ws, "base")[0] == 0
    gate = ("score", tiny_ws, "--against", "base", "--fail-on-regression", "--quiet")
    code, _, err = run(capsys, *gate, "--tag", "no-answer")
    assert code == 2
    assert "bm25-word: no question is scored both in snapshot base and now" in flat(err)
    assert run(capsys, *gate)[0] == 0  # compared on the scored questions: none got worse
    # ungated, the comparison says there is nothing to compare (not a table of zeros)
    code, out, _ = run(capsys, "score", tiny_ws, "--against", "base", "--tag", "no-answer")
    assert code == 0
    assert "bm25-word: 0 questions scored then and now: nothing to compare" in flat(out)
    assert "95% interval" not in out


# -- case 5: a damaged workspace is never written to ---------------------------------------


def test_label_on_a_file_whose_labels_page_fails_integrity_check_writes_nothing(tiny_ws, capsys):
    DAMAGES["labels page smashed"](tiny_ws)
    before = folder_state(tiny_ws.parent, wal_side_files=False)
    code, _, err = run(capsys, "label", tiny_ws, "q2", "d3", "2", "--annotator", "lee")
    assert code == 2
    message = flat(err)
    assert f"{tiny_ws} is damaged" in message and "nothing was written" in message
    assert f"goldpan check {tiny_ws}" in message
    assert "Traceback" not in err
    assert folder_state(tiny_ws.parent, wal_side_files=False) == before

    code, _, err = run(capsys, "info", tiny_ws)  # used to crash after the bad write
    assert code == 2 and str(tiny_ws) in err and "Traceback" not in err

    code, out, _ = run(capsys, "check", tiny_ws, "--json")
    report = json.loads(out)
    assert code == 2 and not report["ok"] and report["integrity"]
    assert folder_state(tiny_ws.parent, wal_side_files=False) == before


def test_check_reports_every_pass_and_is_clean_on_a_sound_workspace(tiny_ws, capsys):
    code, out, _ = run(capsys, "check", tiny_ws)
    assert code == 0
    for line in ("file and schema: ok", "SQLite integrity_check: ok", "foreign keys: ok"):
        assert line in out
    assert "no problems found" in out

    conn = sqlite3.connect(tiny_ws)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute(
        "INSERT INTO labels(question_id, doc_id, annotator, grade, updated) "
        "VALUES ('ghost', 'd1', 'mina', 1, 'now')"
    )
    conn.execute("UPDATE docs SET fields = '[]' WHERE id = 'd2'")
    conn.commit()
    conn.close()
    before = tiny_ws.read_bytes()
    code, out, err = run(capsys, "check", tiny_ws)
    assert code == 2
    text = flat(out)
    assert "foreign keys: 1 problem(s)" in text and "table labels, rowid" in text
    assert "table docs, row id 'd2': fields is '[]', not a JSON object" in text
    assert "will not write into it" in flat(err)
    assert tiny_ws.read_bytes() == before


def test_a_crash_inside_the_terminal_ui_exits_3_without_a_traceback(tiny_ws, capsys, monkeypatch):
    from tui.app import GoldpanApp

    def broken_mount(self):
        raise AttributeError("'NoneType' object has no attribute 'doc_id'")

    run_app = GoldpanApp.run
    monkeypatch.setattr(GoldpanApp, "on_mount", broken_mount)
    monkeypatch.setattr(GoldpanApp, "run", lambda self: run_app(self, headless=True, size=(80, 24)))
    code, out, err = run(capsys, "open", tiny_ws, "--annotator", "lee")
    assert code == 3
    assert "Traceback" not in out + err and "NoneType" in flat(err)
    assert "the full traceback is in" in flat(err)


# -- only goldpan's own error family is the user's; the rest is a bug ----


def _key_error() -> None:
    {"bm25-word": 1}["bm25-wrod"]  # a lookup the code got wrong


def _value_error() -> None:
    int("3 questions")  # a conversion the code got wrong


def _programming_error() -> None:
    conn = sqlite3.connect(":memory:")
    conn.close()
    conn.execute("SELECT 1")  # sqlite3.ProgrammingError: a closed connection used


def _sql_bug(ws: Path) -> None:
    conn = sqlite3.connect(ws)
    try:  # sqlite3.OperationalError (SQLITE_ERROR): goldpan's own SQL is wrong
        conn.execute("SELECT grade2 FROM labels").fetchall()
    finally:
        conn.close()


BUGS = {
    "KeyError": (lambda ws: _key_error(), "KeyError: 'bm25-wrod'"),
    "ValueError": (lambda ws: _value_error(), "ValueError: invalid literal for int()"),
    "sqlite3.ProgrammingError": (
        lambda ws: _programming_error(),
        "ProgrammingError: Cannot operate on a closed database",
    ),
    "sqlite3 no such column": (_sql_bug, "OperationalError: no such column: grade2"),
}


@pytest.mark.parametrize("kind", list(BUGS))
def test_a_builtin_error_is_a_bug_exit_3_with_a_crash_log(
    tiny_ws, capsys, monkeypatch, tmp_path, kind
):
    """Used to be exit 2 "goldpan: error: ..." (or "the workspace is damaged") and no log."""
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    fail, shown = BUGS[kind]

    def broken(args):
        fail(Path(args.workspace))

    monkeypatch.setattr(workspace_commands, "cmd_info", broken)
    before = tiny_ws.read_bytes()
    code, out, err = run(capsys, "info", tiny_ws)
    assert code == 3, err
    message = flat(err)
    assert out == "" and len(err.strip().splitlines()) <= 3  # one line, wrapped at most
    assert f"internal error ({shown}" in message and "this is a bug in goldpan" in message
    assert "damaged" not in message and "Traceback" not in err
    logs = list((state / "goldpan").glob("goldpan-crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in message
    text = logs[0].read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and "in broken" in text
    assert f"command: goldpan info {tiny_ws}" in text
    assert tiny_ws.read_bytes() == before


def _refused(ws: Path) -> None:
    from engine.errors import Busy

    raise Busy(f"{ws} is locked by another program; nothing was written, try again")


def _unknown_metric(ws: Path) -> None:
    from engine.metrics import parse_metric

    parse_metric("mrr@x")


def _bad_line(ws: Path) -> None:
    from engine.formats.errors import IngestError

    raise IngestError("docs.jsonl", 7, "not JSON")


USER_ERRORS = {
    "a refused action": (_refused, "is locked by another program; nothing was written"),
    "an unknown name": (_unknown_metric, "unknown metric 'mrr@x'; known metrics:"),
    "a bad line": (_bad_line, "docs.jsonl:7: not JSON"),
}


@pytest.mark.parametrize("kind", list(USER_ERRORS))
def test_goldpans_own_errors_from_the_same_place_exit_2_without_a_log(
    tiny_ws, capsys, monkeypatch, tmp_path, kind
):
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    fail, shown = USER_ERRORS[kind]
    monkeypatch.setattr(workspace_commands, "cmd_info", lambda args: fail(Path(args.workspace)))
    code, _, err = run(capsys, "info", tiny_ws)
    assert code == 2
    assert flat(err).startswith("goldpan: error: ") and shown in flat(err)
    assert not state.exists() or not list(state.rglob("*.log"))


def _count(ws: Path, table: str) -> int:
    conn = sqlite3.connect(f"{ws.absolute().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def _cap_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every writable workspace opened from now on may not grow by one page: SQLite then
    fails a write that needs one with SQLITE_FULL, as on a full disk (the real condition,
    from SQLite itself; only the limit is set here)."""
    real_open = Workspace.open.__func__

    def capped(cls, path, **kwargs):
        ws = real_open(cls, path, **kwargs)
        if not ws.readonly:
            ws.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = ws.conn.execute("PRAGMA page_count").fetchone()[0]
            ws.conn.execute(f"PRAGMA max_page_count = {pages}")
        return ws

    monkeypatch.setattr(Workspace, "open", classmethod(capped))


def test_a_full_disk_exits_2_says_so_and_loses_nothing(tiny_ws, capsys, monkeypatch, tmp_path):
    """Used to read "SQLite reports database or disk is full; the workspace is damaged or
    not goldpan's", though ``goldpan check`` passes."""
    big = [{"_id": f"n{i}", "text": f"새 문서 {i} " + "감쇠 보정 " * 60} for i in range(400)]
    write_jsonl(tmp_path / "big.jsonl", big)
    qrels = tmp_path / "more.qrels"
    qrels.write_text("".join(f"q4 0 d{i} 1\n" for i in (1, 2, 3, 4)), encoding="utf-8")
    labels, docs = _count(tiny_ws, "labels"), _count(tiny_ws, "docs")
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    with monkeypatch.context() as full:
        _cap_pages(full)
        code, _, err = run(capsys, "import", "docs", tiny_ws, tmp_path / "big.jsonl")
    assert code == 2, err
    message = flat(err)
    assert f"{tiny_ws}: disk full; nothing was written" in message
    assert "damaged" not in message and "internal error" not in message
    assert not state.exists() or not list(state.rglob("*.log"))
    # room again: nothing was lost, nothing is damaged, and the same import now works
    assert _count(tiny_ws, "labels") == labels and _count(tiny_ws, "docs") == docs
    code, out, _ = run(capsys, "check", tiny_ws)
    assert code == 0 and "no problems found" in out
    assert run(capsys, "import", "docs", tiny_ws, tmp_path / "big.jsonl")[0] == 0
    assert _count(tiny_ws, "docs") == docs + len(big)


def test_a_lock_held_longer_than_goldpan_waits_is_refused_and_nothing_lost(
    tiny_ws, capsys, monkeypatch
):
    import engine.workspace.lifecycle as lifecycle

    monkeypatch.setattr(lifecycle, "BUSY_TIMEOUT_S", 0.2)
    assert run(capsys, "info", tiny_ws)[0] == 0  # WAL mode, as every goldpan writer leaves it
    holder = sqlite3.connect(tiny_ws)
    holder.execute("BEGIN IMMEDIATE")
    try:
        code, _, err = run(capsys, "label", tiny_ws, "q4", "d4", "2", "--annotator", "lee")
    finally:
        holder.rollback()
        holder.close()
    assert code == 2, err
    message = flat(err)
    assert f"{tiny_ws} is locked by another program" in message and "try again" in message
    assert "damaged" not in message
    assert run(capsys, "label", tiny_ws, "q4", "d4", "2", "--annotator", "lee")[0] == 0


def test_a_file_size_limit_in_a_real_process_exits_2_and_loses_nothing(tiny_ws, capsys, tmp_path):
    """``ulimit -f`` (RLIMIT_FSIZE) in a real ``goldpan`` process: the kernel refuses the
    write (EFBIG, as a full quota's EDQUOT), SQLite reports SQLITE_IOERR_WRITE. Used to be
    "the workspace is damaged or not goldpan's"; then an internal error."""
    import os
    import resource
    import subprocess
    import sys

    from tests.conftest import ROOT

    big = [{"_id": f"n{i}", "text": "감쇠 보정 " * 80} for i in range(2000)]
    write_jsonl(tmp_path / "big.jsonl", big)
    labels, docs = _count(tiny_ws, "labels"), _count(tiny_ws, "docs")
    state = tmp_path / "state"

    def limited() -> None:  # Python ignores SIGXFSZ: the write fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))

    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", "import", "docs", str(tiny_ws), "big.jsonl"],
        cwd=tmp_path,
        env={**os.environ, "XDG_STATE_HOME": str(state), "COLUMNS": "300", "PYTHONPATH": str(ROOT)},
        preexec_fn=limited,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    message = flat(done.stderr)
    assert f"{tiny_ws}: the system failed a write" in message
    assert "nothing was written" in message and "SQLITE_IOERR_WRITE" in message
    assert "Traceback" not in done.stderr and not state.exists()
    assert _count(tiny_ws, "labels") == labels and _count(tiny_ws, "docs") == docs
    code, out, _ = run(capsys, "check", tiny_ws)
    assert code == 0 and "no problems found" in out
