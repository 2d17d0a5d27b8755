"""A served tab's websocket takes textual-serve's messages only; junk ends nothing.

Whoever holds an annotator's link can send anything on its websocket. A message that is
not one of the protocol's (a resize to ``"wide"`` or to a billion columns, text that is
not JSON, an unknown kind) is ignored with one log line, and the session goes on: the
next key press still labels. A real ``goldpan serve`` runs here, with a real websocket.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from pathlib import Path

from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS

JUNK = [
    '["resize", {"width": "wide", "height": 40}]',
    '["resize", {"width": 1000000000, "height": 1}]',
    '["resize"]',
    "not json at all",
    '["launch", "missiles"]',
]


async def _until(check, seconds: float = 120.0):  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if value := check():
            return value
        await asyncio.sleep(0.05)
    return None


def plain(text: str) -> str:
    """Terminal output without its escape sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


async def junk_then_a_grade(port: int, token: str, db: Path) -> tuple[object, object]:
    """(whether the app drew its question, the labels after junk then ``1``)."""
    import aiohttp

    conn = sqlite3.connect(db, timeout=30)
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(f"ws://127.0.0.1:{port}/ws/{token}?width=100&height=30") as ws,
        ):
            seen: list[str] = []

            async def drain() -> None:
                async for msg in ws:
                    if msg.type == aiohttp.WSMsgType.BINARY:
                        seen.append(msg.data.decode("utf-8", "replace"))

            reader = asyncio.create_task(drain())
            await ws.send_json(["resize", {"width": 100, "height": 30}])
            leased = await _until(lambda: conn.execute("SELECT question_id FROM leases").fetchone())
            # the app has drawn its question: it listens to keys now
            drawn = await _until(lambda: leased and f"{leased[0]}: " in plain("".join(seen)))
            for text in JUNK:
                await ws.send_str(text)
            await ws.send_json(["stdin", "1"])
            labels = await _until(
                lambda: conn.execute(
                    "SELECT doc_id, grade FROM labels WHERE annotator = 'ara'"
                ).fetchall(),
                60,
            )
            reader.cancel()
            return drawn, labels
    finally:
        conn.close()


def test_junk_on_an_open_websocket_is_ignored_and_the_session_goes_on(tmp_path):
    from tests.tui.serve.test_serve_load import load_bench

    path = tmp_path / "team.db"  # nothing labeled yet: ara is handed a question at once
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.close()
    bench = load_bench()
    served = bench.start_server(path, ["--annotator", "ara"], tmp_path)
    try:
        drawn, labels = asyncio.run(junk_then_a_grade(served.port, served.tokens["ara"], path))
    finally:
        served.stop()
    log = served.output()
    assert drawn, log
    assert labels and labels[0][1] == 1, log  # the key after the junk was a grade
    assert "ara's tab sent a resize to 'wide' by 40 cells" in log
    assert "ara's tab sent a resize to 1000000000 by 1 cells" in log
    assert "session failed" not in log and "Traceback" not in log and "bug" not in log
