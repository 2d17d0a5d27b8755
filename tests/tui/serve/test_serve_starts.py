"""Issue 22: `goldpan serve` starts a few tabs' apps at a time; the others wait and say so.

With a team opening its links in the same minute, every app process starting at once took
the processor from the tabs already labeling (a grade waited half a second behind 16
starts). :class:`tui.serve.starts.StartGate` holds starts beyond its limit until an app says
its start is over (``goldpan_started``), its process ends, or a timeout passes.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time

import pytest

from tests.tui.serve.test_serve_load import child_processes, is_tab, load_bench
from tests.tui.serve.test_served import unlabel
from tui.serve import starts
from tui.serve.starts import StartGate, waiting_line


async def _entered(gate: StartGate, order: list[str], name: str):
    done = await gate.enter()
    order.append(name)
    return done


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_start_beyond_the_limit_waits_for_one_to_end_first_come_first():
    async def scenario() -> None:
        gate = StartGate(1)
        order: list[str] = []
        first = await _entered(gate, order, "a")
        assert gate.full
        b = asyncio.ensure_future(_entered(gate, order, "b"))
        c = asyncio.ensure_future(_entered(gate, order, "c"))
        await _settle()
        assert order == ["a"] and gate.queued == 2
        first()
        first()  # said twice (its app's message, then its process's end): one place back
        await _settle()
        assert order == ["a", "b"] and gate.starting == 1 and gate.queued == 1
        (await b)()
        await _settle()
        assert order == ["a", "b", "c"]
        (await c)()
        assert gate.starting == 0 and not gate.full

    asyncio.run(scenario())


def test_a_tab_closed_while_waiting_gives_up_its_turn():
    async def scenario() -> None:
        gate = StartGate(1)
        order: list[str] = []
        first = await _entered(gate, order, "a")
        gone = asyncio.ensure_future(_entered(gate, order, "gone"))
        after = asyncio.ensure_future(_entered(gate, order, "after"))
        await _settle()
        gone.cancel()
        await _settle()
        assert gate.queued == 1
        first()
        await _settle()
        assert order == ["a", "after"] and gate.starting == 1
        (await after)()
        assert gate.starting == 0

    asyncio.run(scenario())


def test_a_start_that_never_says_it_ended_holds_its_place_only_so_long(monkeypatch):
    monkeypatch.setattr(starts, "START_WAIT_S", 0.05)

    async def scenario() -> None:
        gate = StartGate(1)
        order: list[str] = []
        await _entered(gate, order, "hangs")
        waiting = asyncio.ensure_future(_entered(gate, order, "next"))
        done = await asyncio.wait_for(waiting, 10)
        assert order == ["hangs", "next"]
        done()
        assert gate.starting == 0

    asyncio.run(scenario())


def test_the_waiting_line_is_plain_text_and_counts_who_is_ahead():
    one, three = waiting_line(1), waiting_line(3)
    assert one.startswith(b"\r\ngoldpan: 1 session starts before yours") and one.isascii()
    assert b"3 sessions start before yours" in three and b"\x1b" not in three


def _apps(server_pid: int) -> list[int]:
    return [pid for pid, cmd in child_processes(server_pid) if is_tab(cmd)]


@pytest.mark.timeout(180)
def test_the_second_tab_waits_for_the_first_app_to_start_and_says_so(demo_ws, tmp_path):
    """Two tabs at once with one start at a time: the second tab is told it waits, no second
    app process runs until the first app has drawn its question, then both label."""
    bench = load_bench()
    unlabel(demo_ws)
    served = bench.start_server(
        demo_ws,
        ["--annotator", "ara", "--annotator", "bo", "--per-question", "2", "--start-at-once", "1"],
        tmp_path,
    )

    async def scenario() -> tuple[list[bytes], list[bytes], int]:
        import aiohttp

        seen: dict[str, list[bytes]] = {"ara": [], "bo": []}
        most_apps = 0

        async def tab(name: str) -> None:
            """Until this tab shows the progress line of the question handed to it."""
            url = f"ws://127.0.0.1:{served.port}/ws/{served.tokens[name]}?width=120&height=40"
            db = sqlite3.connect(demo_ws)
            try:
                async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
                    await ws.send_json(["resize", {"width": 120, "height": 40}])
                    async for msg in ws:
                        if msg.type != aiohttp.WSMsgType.BINARY:
                            continue
                        seen[name].append(msg.data)
                        qid = bench._my_lease(db, name)
                        text = bench.ANSI.sub("", b"".join(seen[name]).decode("utf-8", "replace"))
                        if qid is not None and f"{qid}: " in text:
                            return
            finally:
                db.close()

        tabs = [asyncio.ensure_future(tab("ara"))]
        await asyncio.sleep(0)
        tabs.append(asyncio.ensure_future(tab("bo")))
        deadline = time.monotonic() + 150
        while not all(t.done() for t in tabs):
            assert time.monotonic() < deadline, "the tabs never both drew their screens"
            apps = len(_apps(served.proc.pid))
            # the server sends the first app's frame before it reads that app's "started"
            # and starts the next one: every frame sent before this look is on the socket,
            # and is taken in before asking whether a tab has drawn
            await asyncio.sleep(0.05)
            for _ in range(20):
                await asyncio.sleep(0)
            if not any(t.done() for t in tabs):  # neither has drawn: one app may run
                most_apps = max(most_apps, apps)
        for t in tabs:
            t.result()
        return seen["ara"], seen["bo"], most_apps

    try:
        ara, bo, most_apps = asyncio.run(scenario())
    finally:
        served.stop()
    assert most_apps <= 1
    first_frames = [b"".join(frames[:1]) for frames in (ara, bo)]
    told = [b"before yours" in frame for frame in first_frames]
    assert sorted(told) == [False, True]  # whichever came second was told it waits
    assert served.output().count("connected (annotator)") == 2
