"""Issue 20: trust belongs to whoever runs goldpan on their own machine, never to a browser.

A received workspace holds a ``command`` retriever whose program leaves a marker file when
it runs. Served (``goldpan serve``), an annotator writes a question and saves it, then
presses ``y`` as the old trust dialog asked: the dialog must never appear, the command
must never run and no trust record may be written; the question is pooled by the other
retrievers, and the session says who can trust the command and how. Locally, the trust
dialog answers only a deliberate confirmation (typing ``trust``), never a stray key.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import Input

from engine.trust import TRUST_FILE, TrustStore, config_dir
from engine.workspace import Workspace
from tests.cli.test_trust import crafted
from tests.tui.conftest import APP_SIZE, wait_for
from tests.tui.serve.test_serve_load import load_bench
from tests.tui.test_readonly import record_notifications
from tui.app import GoldpanApp
from tui.screens.judge import JudgeScreen
from tui.screens.modals import TrustScreen
from tui.serve.served_app import Served

QUESTION = "감쇠 보정 금속 인공물"


def app_over(path: Path, **kw: object) -> GoldpanApp:
    return GoldpanApp(
        path,
        annotator="ara",
        animations=False,
        blink=False,
        warm_indexes=False,
        **kw,  # type: ignore[arg-type]
    )


def question_ranked(db: sqlite3.Connection, text: str, retriever: str) -> str | None:
    """The id of the question with this text once ``retriever`` has ranked it."""
    row = db.execute(
        "SELECT q.id FROM questions q JOIN runs r ON r.question_id = q.id "
        "WHERE q.text = ? AND r.retriever = ?",
        (text, retriever),
    ).fetchone()
    return None if row is None else str(row[0])


async def until(check, timeout: float = 60.0):  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {check}")


def received_with_rankings(tmp_path: Path) -> tuple[Path, Path]:
    """The crafted workspace as its sender had it: ``sneaky`` ranked every question there
    (its cached rankings came along), so opening a question pools nothing; writing a new
    one does. Returns (workspace, marker file)."""
    path, marker, _ = crafted(tmp_path)
    with Workspace.open(path) as ws:
        ws.write_runs(replace(r, retriever="sneaky") for r in ws.runs("bm25-word").values())
        ws.checkpoint()
    return path, marker


async def write_and_save_in_the_browser(port: int, token: str, db: sqlite3.Connection) -> str:
    """What the annotator's tab sends: `w`, a question, ctrl+s, then `y` (the old dialog's
    "trust and run"), as xterm.js does; returns the saved question's id once pooled."""
    import aiohttp

    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(f"ws://127.0.0.1:{port}/ws/{token}?width=120&height=40") as ws,
    ):
        screen: list[str] = []

        async def drain() -> None:
            async for message in ws:
                if message.type == aiohttp.WSMsgType.BINARY:
                    screen.append(message.data.decode("utf-8", "replace"))

        def shows(text: str) -> bool:
            return text in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", "".join(screen))

        async def key(k: str) -> None:
            await ws.send_json(["stdin", k])

        reader = asyncio.create_task(drain())
        await ws.send_json(["resize", {"width": 120, "height": 40}])
        await until(lambda: shows("Grade"))  # the Label screen is drawn
        screen.clear()
        await key("w")
        await until(lambda: shows("Save and judge"))  # the Write screen's footer
        await key(QUESTION)
        await key("\x13")  # ctrl+s
        await until(
            lambda: db.execute("SELECT 1 FROM questions WHERE text = ?", (QUESTION,)).fetchone()
        )
        await key("y")  # what the old trust dialog took as "trust and run"
        qid = await until(lambda: question_ranked(db, QUESTION, "bm25-word"))
        await ws.close()
        reader.cancel()
    return str(qid)


@pytest.mark.timeout(180)
def test_a_browser_session_never_trusts_nor_runs_a_received_command(tmp_path):
    path, marker = received_with_rankings(tmp_path)
    folder = tmp_path / "owner-config"
    folder.mkdir()
    bench = load_bench()
    served = bench.start_server(path, ["--annotator", "ara"], folder)
    db = sqlite3.connect(path, timeout=30)
    try:
        qid = asyncio.run(write_and_save_in_the_browser(served.port, served.tokens["ara"], db))
        # the old dialog wrote the owner's trust record on `y`, before pooling
        assert not (folder / TRUST_FILE).exists()
        # pooled by the other retrievers, never by sneaky
        asyncio.run(until(lambda: question_ranked(db, QUESTION, "bm25-bigram") == qid))
        assert question_ranked(db, QUESTION, "sneaky") is None
        assert not marker.exists()
    finally:
        db.close()
        served.stop()
    assert not marker.exists()
    assert not (folder / TRUST_FILE).exists()
    assert "Traceback" not in served.output()


async def test_served_pools_without_untrusted_commands_and_says_who_can_trust_them(tmp_path):
    path, marker, _ = crafted(tmp_path)
    app = app_over(path, served=Served())
    seen = record_notifications(app)
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q1")  # q1 has no ranking by sneaky: pooling it would run the command
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, TrustScreen)
        await pilot.press("y")  # what the old dialog took as "trust and run"
        app.judge("q2")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, JudgeScreen)
        assert not any(isinstance(s, TrustScreen) for s in app.screen_stack)
    assert not marker.exists()
    assert not (config_dir() / TRUST_FILE).exists()
    notices = [m for m in seen if "sneaky" in m]
    assert len(notices) == 1, seen  # said once per session, not on every question
    assert "goldpan serve" in notices[0] and f"goldpan trust {path}" in notices[0]


async def test_served_honours_what_the_owner_trusted(tmp_path):
    path, marker, _ = crafted(tmp_path)
    with Workspace.open(path) as ws:
        TrustStore().trust(ws, [s for s in ws.retrievers() if s.name == "sneaky"])
    app = app_over(path, served=Served())
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q1")
        await wait_for(pilot, marker.exists)
        await app.workers.wait_for_complete()
    assert marker.read_text(encoding="utf-8") == "ran"


async def test_the_trust_dialog_takes_no_stray_key_only_typing_trust(tmp_path):
    path, marker, command = crafted(tmp_path)
    app = app_over(path)
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q1")
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        dialog = app.screen
        # the Label screen's keys, the old dialog's y / n, enter, space: none answers it
        for k in ("y", "n", "enter", "space", "1", "0", "j", "t", "ctrl+y", "enter", "tab"):
            await pilot.press(k)
            await pilot.pause()
            assert app.screen is dialog, k
        field = dialog.query_one(Input)
        field.value = ""
        await pilot.press("t", "r", "u", "s", "x", "enter")  # a typo does not trust either
        await pilot.pause()
        assert app.screen is dialog
        assert not marker.exists() and TrustStore().entries() == []
        field.value = ""
        await pilot.press(*"trust", "enter")
        await wait_for(pilot, marker.exists)
        await app.workers.wait_for_complete()
    [entry] = TrustStore().entries()
    assert entry.command == command and entry.retriever == "sneaky"


async def test_escape_declines_the_trust_dialog(tmp_path):
    path, marker, _ = crafted(tmp_path)
    app = app_over(path)
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q1")
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        await pilot.press(*"trus", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JudgeScreen))
        await app.workers.wait_for_complete()
    assert not marker.exists() and TrustStore().entries() == []
