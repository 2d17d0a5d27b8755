"""Issue 20 item 4 in the app: a grade that cannot be saved is a notice, never the end.

Another program holding the workspace's write lock longer than goldpan waits, or a full
disk, used to end the app (Textual's handler for an unhandled exception) and lose the
session. Now the grade is rolled back, the notice says it was not saved and why, and the
next grade, once the lock is gone or there is room, is saved. A bug in a worker is a
notice too, with its traceback in the crash log instead of lost.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from engine.workspace import Workspace
from tests.conftest import run_cli
from tests.tui.conftest import APP_SIZE, my_labels, open_judge, wait_for
from tui.textual_compat import notification_messages
from tui.widgets.candidate_list import CandidateList


def notices(app) -> str:
    return " | ".join(notification_messages(app))


async def test_a_grade_while_another_program_holds_the_lock_is_not_saved_and_the_app_goes_on(
    app_factory, demo_ws
):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        app.state.auto_advance = False
        screen = await open_judge(pilot, "q04")
        first = screen.query_one(CandidateList).candidates[0].doc_id
        before = my_labels(demo_ws, "q04")
        # the app waits for a lock at most 5 s (a batch job 30 s); the test not even that
        assert app.ws.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
        app.ws.conn.execute("PRAGMA busy_timeout = 100")
        holder = sqlite3.connect(demo_ws)
        holder.execute("BEGIN IMMEDIATE")
        try:
            await pilot.press("2")
            await wait_for(pilot, lambda: "was not saved" in notices(app))
        finally:
            holder.rollback()
            holder.close()
        assert app.is_running and app.crash is None
        text = notices(app)
        assert "The label was not saved" in text and "locked by another program" in text
        assert my_labels(demo_ws, "q04") == before
        await pilot.press("2")  # the lock is gone: the same key saves it
        await wait_for(pilot, lambda: my_labels(demo_ws, "q04").get(first) == 2)
    assert app.crash is None


async def first_graded_1(pilot, ws: Path):
    """The judge screen on q04, auto-advance off, its first candidate graded 1 and saved."""
    pilot.app.state.auto_advance = False
    screen = await open_judge(pilot, "q04")
    first = screen.query_one(CandidateList).candidates[0].doc_id
    await pilot.press("1")
    await wait_for(pilot, lambda: my_labels(ws, "q04").get(first) == 1)
    return screen


REPLACE = """
import shutil, sys
from pathlib import Path
from engine.formats.outfiles import atomic_database
source, target = map(Path, sys.argv[1:])
with atomic_database(target, replace=True, label="demo") as tmp:  # as demo --force does
    shutil.copy(source, tmp)
"""


async def test_a_grade_after_the_workspace_was_replaced_under_the_app_is_not_shown_saved(
    app_factory, demo_ws, demo_master
):
    """Rebuilt in place by another goldpan, the file the app writes is one nobody opens."""
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await first_graded_1(pilot, demo_ws)
        first = screen.query_one(CandidateList).candidates[0].doc_id
        subprocess.run(
            [sys.executable, "-c", REPLACE, str(demo_master), str(demo_ws)],
            cwd=Path(__file__).parents[2],
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
            check=True,
        )
        assert my_labels(demo_ws, "q04") == {}  # the file at the path now: the new one
        await pilot.press("3")
        await wait_for(pilot, lambda: "was not saved" in notices(app))
        assert app.is_running and app.crash is None
        assert "was replaced or moved since goldpan opened it" in notices(app)
        assert my_labels(demo_ws, "q04") == {}
        assert screen.query_one(CandidateList).candidates[0].doc_id == first
        assert app.session.my_grades("q04").get(first) == 1, "shown as saved: 3"
    assert app.crash is None


def _fill_labels_to_the_cap(path: Path, question_id: str, doc_id: str) -> int:
    """Fill the labels table's last pages until SQLite has no page left for another row.

    The file may not grow (``max_page_count`` is its page count, the free pages taken
    first), and labels of other annotators, each a byte smaller than the tester's, are
    added until one does not fit: the tester's next label then needs a page, as on a full
    disk. Returns the page cap.
    """
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")  # no free pages: the next new row needs a new page
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        stamp = "2026-01-01T00:00:00+00:00"
        for i in range(100_000):
            try:  # "f" and four characters: a byte shorter than "tester"
                conn.execute(
                    "INSERT INTO labels(question_id, doc_id, annotator, grade, updated) "
                    "VALUES (?, ?, ?, 1, ?)",
                    (question_id, doc_id, f"f{i:04d}", stamp),
                )
            except sqlite3.OperationalError as exc:
                assert exc.sqlite_errorname == "SQLITE_FULL", exc
                return int(pages)
        raise AssertionError("the labels never filled the cap")
    finally:
        conn.close()


async def test_a_grade_on_a_full_disk_is_not_saved_and_nothing_is_lost(
    app_factory, demo_ws, capsys
):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await first_graded_1(pilot, demo_ws)  # one label saved while there is room
        cands = screen.query_one(CandidateList)
        first, second = cands.candidates[0].doc_id, cands.candidates[1].doc_id
        cap = _fill_labels_to_the_cap(demo_ws, "q04", second)
        app.ws.conn.execute(f"PRAGMA max_page_count = {cap}")
        await pilot.press("down", "3")
        await wait_for(pilot, lambda: "was not saved" in notices(app))
        assert app.is_running and app.crash is None
        text = notices(app)
        assert "The label was not saved" in text and "disk full; nothing was written" in text
        assert "damaged" not in text
        assert my_labels(demo_ws, "q04") == {first: 1}
        app.ws.conn.execute("PRAGMA max_page_count = 1073741823")  # room again
        await pilot.press("3")
        await wait_for(pilot, lambda: my_labels(demo_ws, "q04") == {first: 1, second: 3})
    assert app.crash is None
    code, out, _ = run_cli(capsys, "check", demo_ws)
    assert code == 0 and "no problems found" in out


async def test_a_bug_in_the_pool_worker_is_a_notice_with_its_traceback_logged(
    app_factory, monkeypatch, tmp_path
):
    """Used to be a notice with the bare message (``Pooling failed: 'x'``) and no trace."""
    import engine.retrieve.runner as runner

    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))

    def broken(*args, **kwargs):
        return {}["bm25-wrod"]

    monkeypatch.setattr(runner, "refresh_runs", broken)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        app.pooling.pool("q04")
        await wait_for(pilot, lambda: "Pooling failed" in notices(app))
        text = notices(app)
        assert "internal error (KeyError: 'bm25-wrod')" in text and "bug in goldpan" in text
        assert app.is_running and app.crash is None
    logs = list((state / "goldpan").glob("goldpan-crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in text
    assert "in broken" in logs[0].read_text(encoding="utf-8")


def test_a_crash_in_a_served_session_is_exit_3_with_a_crash_log(
    demo_ws, monkeypatch, tmp_path, capsys
):
    """Used to return 0 whatever happened in the session."""
    import tui.serve.served_app
    from tui.app import GoldpanApp

    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))

    def broken_mount(self):
        raise AttributeError("'NoneType' object has no attribute 'doc_id'")

    run_app = GoldpanApp.run
    monkeypatch.setattr(GoldpanApp, "on_mount", broken_mount)
    monkeypatch.setattr(GoldpanApp, "run", lambda self: run_app(self, headless=True, size=(80, 24)))
    with Workspace.open(demo_ws):
        pass
    code = tui.serve.served_app.main([str(demo_ws), "--annotator", "lee"])
    err = capsys.readouterr().err
    assert code == 3
    assert "served session of lee: internal error (AttributeError" in err
    assert "Traceback" not in err
    logs = list((state / "goldpan").glob("goldpan-crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in err
    assert "in broken_mount" in logs[0].read_text(encoding="utf-8")
