"""Read-only review in the TUI: a banner on every screen, edits refused with a notification.

Also the notification after an upgrade, and `goldpan open --read-only`.
"""

from __future__ import annotations

import os

import pytest
from textual.widgets import Input

import engine.workspace.lifecycle as workspace_module
from engine.types import Label, Verdict
from engine.workspace import Workspace
from tests.conftest import snapshot
from tests.engine.workspace.test_upgrade import make_v1
from tests.tui.conftest import APP_SIZE
from tui.cli import main
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.judge import JudgeScreen
from tui.screens.modals import PromptScreen, SearchScreen
from tui.screens.questions import QuestionsScreen
from tui.screens.review import ReviewScreen
from tui.screens.write import WriteScreen
from tui.widgets.banner import ReadOnlyBanner


def record_notifications(app) -> list[str]:
    """Every notification the app shows from now on (screens notify through the app)."""
    seen: list[str] = []
    original = app.notify

    def notify(message, **kw):
        seen.append(message)
        return original(message, **kw)

    app.notify = notify
    return seen


def banner_text(screen) -> str:
    return str(screen.query_one(ReadOnlyBanner).render())


async def refused(pilot, seen: list[str], key: str) -> None:
    """Press ``key``: exactly one new notification, saying read-only; no dialog opens."""
    n = len(seen)
    screen = pilot.app.screen
    await pilot.press(key)
    await pilot.pause()
    assert len(seen) == n + 1, (key, seen[n:])
    assert "read-only" in seen[-1] and "nothing is changed" in seen[-1], seen[-1]
    assert pilot.app.screen is screen, f"{key} opened {pilot.app.screen}"
    assert not isinstance(pilot.app.screen, PromptScreen | SearchScreen)


async def test_read_only_review_has_a_banner_everywhere_and_refuses_every_edit(
    app_factory, demo_ws
):
    # a real WAL workspace with writes: another annotator's commits sit in the -wal file
    writer = Workspace.open(demo_ws)
    writer.conn.execute("PRAGMA wal_autocheckpoint = 0")
    writer.write_labels([Label("q04", "td-0137", "other", 2)])
    writer.write_verdicts([Verdict("q06", "other", "ambiguous", "two manuals")])
    assert os.path.getsize(f"{demo_ws}-wal") > 0
    before = snapshot(demo_ws)
    app = app_factory(readonly=True)
    seen = record_notifications(app)
    try:
        async with app.run_test(size=APP_SIZE) as pilot:
            assert app.readonly_reason == "opened read-only on request"
            assert "read-only" in app.sub_title
            assert isinstance(app.screen, QuestionsScreen)
            text = banner_text(app.screen)
            assert "READ-ONLY" in text and "opened read-only on request" in text
            assert "review only" in text
            # what is only in the WAL is shown
            assert Label("q04", "td-0137", "other", 2) in app.session.ws.labels_for("q04")

            app.judge("q04")
            await pilot.pause()
            assert isinstance(app.screen, JudgeScreen)
            assert "READ-ONLY" in banner_text(app.screen)
            for key in ("1", "2", "3", "0", "space", "n", "s", "a", "slash", "e"):
                await refused(pilot, seen, key)
            assert not app.screen.check_action("undo", ())  # nothing to undo
            await pilot.press("j", "right_square_bracket")  # moving around still works
            assert app.screen.question_id != "q04"

            await pilot.press("w")
            assert isinstance(app.screen, WriteScreen)
            assert "READ-ONLY" in banner_text(app.screen)
            app.screen.query_one("#write-text", Input).value = "a question that is not saved"
            await refused(pilot, seen, "ctrl+s")
            assert app.screen.query_one("#write-text", Input).value  # kept, not cleared

            await app.switch_mode("adjudicate")  # keys would go into the input here
            await pilot.pause()
            assert isinstance(app.screen, AdjudicateScreen)
            assert "READ-ONLY" in banner_text(app.screen)
            assert app.screen.question_id is not None
            for key in ("1", "u", "i", "plus", "minus", "n", "e", "x"):
                await refused(pilot, seen, key)

            await pilot.press("r")
            assert isinstance(app.screen, ReviewScreen)
            assert "READ-ONLY" in banner_text(app.screen)
            assert app.is_running
    finally:
        writer.close()
    assert snapshot(demo_ws) == before


async def test_unwritable_workspace_opens_read_only_saying_why(app_factory, demo_ws, monkeypatch):
    # os.access says "not writable" for non-root users of a read-only file (root: see below)
    monkeypatch.setattr(
        workspace_module, "writable_problem", lambda path: "the file is not writable"
    )
    before = snapshot(demo_ws)
    app = app_factory()
    seen = record_notifications(app)
    async with app.run_test(size=APP_SIZE) as pilot:
        assert "the file is not writable" in banner_text(app.screen)
        app.judge("q05")
        await pilot.pause()
        await refused(pilot, seen, "1")
        assert "the file is not writable" in seen[-1]
    assert snapshot(demo_ws) == before


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="runs as root: a chmod 444 file is still writable for root; "
    "test_unwritable_workspace_opens_read_only_saying_why covers the app's side",
)
async def test_read_only_file_opens_for_review(app_factory, demo_ws):
    before = snapshot(demo_ws)
    demo_ws.chmod(0o444)
    try:
        app = app_factory()
        seen = record_notifications(app)
        async with app.run_test(size=APP_SIZE) as pilot:
            assert "the file is not writable" in banner_text(app.screen)
            app.judge("q05")
            await pilot.pause()
            await refused(pilot, seen, "space")
    finally:
        demo_ws.chmod(0o644)
    assert snapshot(demo_ws) == before


async def test_writable_workspace_has_no_banner(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE):
        assert app.readonly_reason is None
        assert not app.screen.query(ReadOnlyBanner)


async def test_upgrade_is_announced_with_the_backup_path(app_factory, tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    make_v1(path, monkeypatch)
    app = app_factory(path)
    seen = record_notifications(app)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        (backup,) = tmp_path.glob("old.v1-backup-*.db")
        assert app.backup_path == backup
        notes = [n for n in seen if "Upgraded" in n]
        assert len(notes) == 1 and str(backup) in notes[0], seen


def test_open_read_only_flag(fake_app, demo_ws, capsys):
    assert main(["open", str(demo_ws), "--read-only", "--annotator", "x"]) == 0
    assert main(["open", str(demo_ws), "--annotator", "x"]) == 0
    assert [m["readonly"] for m in fake_app] == [True, False]


def test_open_upgrades_first_and_hands_the_backup_to_the_app(
    fake_app, tmp_path, monkeypatch, capsys
):
    path = tmp_path / "old.db"
    make_v1(path, monkeypatch)
    assert main(["open", str(path), "--annotator", "x"]) == 0
    (backup,) = tmp_path.glob("old.v1-backup-*.db")
    assert fake_app[0]["backup"] == backup
    assert str(backup) in capsys.readouterr().err.replace("\n", "")
    # read-only cannot upgrade: a clear error before any screen, exit 2
    other = tmp_path / "other.db"
    make_v1(other, monkeypatch)
    assert main(["open", str(other), "--read-only"]) == 2
    assert "must be upgraded" in " ".join(capsys.readouterr().err.split())
    assert len(fake_app) == 1
