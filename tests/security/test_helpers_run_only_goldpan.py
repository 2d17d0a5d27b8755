"""Helper processes run only goldpan's own code, whatever folder goldpan runs in.

Every Python process goldpan starts (Kiwi's helper for the terminal app, BM25's ranking
helper, ``goldpan serve``'s preloader and each browser tab's app) runs one of goldpan's
modules. Started as ``python -m MODULE`` they would put the current folder first on
their path, and a folder holding ``engine/``, ``tui/`` or ``goldpan/`` packages (an
unpacked dataset, a cloned repository) would run its own code in goldpan's place, and
could return fake rankings. Each test here runs the real helper from such a folder, whose
packages write a marker file when imported, and checks that the helper did its work and
no marker was written.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from pathlib import Path

import pytest

PACKAGES = ("engine", "tui", "goldpan")


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of packages named as goldpan's, each writing a marker when imported; the
    current folder from now on. Returns the folder the markers go to."""
    folder, marks = tmp_path / "cloned-repo", tmp_path / "marks"
    marks.mkdir()
    for name in PACKAGES:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(
            "import os, pathlib\n"
            f"pathlib.Path({str(marks)!r}, {name!r} + '-' + str(os.getpid())).write_text('ran')\n",
            encoding="utf-8",
        )
    monkeypatch.chdir(folder)
    return marks


def markers(marks: Path) -> list[str]:
    return sorted(p.name for p in marks.iterdir())


def test_the_kiwi_helper_runs_goldpans_own_code_from_a_folder_of_lookalike_packages(hostile):
    from engine.kiwi_helper import KiwiHelper
    from engine.tokenize import kiwi_safe

    helper = KiwiHelper()  # what the terminal app tokenizes with
    try:
        tokens = helper.tokenize_many([kiwi_safe("감쇠 보정은 TD-2024-0137")])
    finally:
        helper.close()
    assert "보정" in tokens[0] and "0137" in tokens[0]
    assert markers(hostile) == []


async def _first_screen(port: int, token: str, db: Path) -> str:
    """Open a tab's websocket; the terminal output once its app has drawn its question."""
    import aiohttp

    conn = sqlite3.connect(db, timeout=30)
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(f"ws://127.0.0.1:{port}/ws/{token}?width=100&height=30") as ws,
        ):
            await ws.send_json(["resize", {"width": 100, "height": 30}])
            seen, end = "", time.monotonic() + 120
            while time.monotonic() < end:
                try:
                    msg = await ws.receive(timeout=1)
                except TimeoutError:
                    continue
                if msg.type == aiohttp.WSMsgType.BINARY:
                    seen += msg.data.decode("utf-8", "replace")
                elif msg.type != aiohttp.WSMsgType.TEXT:
                    break  # closed
                row = conn.execute("SELECT question_id FROM leases").fetchone()
                if row is not None and f"{row[0]}: " in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen):
                    return seen
            return seen
    finally:
        conn.close()


def test_a_served_tab_runs_goldpans_own_code_from_a_folder_of_lookalike_packages(
    hostile, tiny_ws, tmp_path
):
    from tests.tui.serve.test_serve_load import child_processes, load_bench

    bench = load_bench()
    served = bench.start_server(tiny_ws, ["--annotator", "ara"], tmp_path, cwd=Path.cwd())
    try:
        shown = asyncio.run(_first_screen(served.port, served.tokens["ara"], tiny_ws))
        started = [cmd for _, cmd in child_processes(served.proc.pid)]
    finally:
        served.stop()
    assert "q" in shown and "connected (annotator)" in served.output(), served.output()
    # the preloader and the tab, each with Python's safe path
    assert any(" -P -m tui.serve.preload " in c for c in started), started
    assert any(" -P -m tui.serve.tab " in c for c in started), started
    assert markers(hostile) == []
