"""An app that is its process's only app leaves its start-up heap out of the cycle collector.

Python's full collections walked the session, the screens and Textual's caches again and
again (35-40 ms on the UI thread on a team-sized workspace, one key in thirty drawn that
much later). ``goldpan open`` and each ``goldpan serve`` tab freeze what is alive once the
app has started; a test's apps, many in one process, do not.
"""

from __future__ import annotations

import gc

from tests.tui.conftest import wait_for
from tui.cli import main
from tui.serve import served_app


def test_goldpan_open_and_a_served_tab_ask_for_a_frozen_heap(fake_app, demo_ws):
    assert main(["open", str(demo_ws), "--annotator", "x"]) == 0
    assert served_app.main([str(demo_ws), "--annotator", "ara"]) == 0
    assert [m.get("freeze_heap") for m in fake_app] == [True, True]


async def test_the_heap_is_frozen_once_started_and_only_when_asked(app_factory, monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    async with app_factory().run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.pause()
        assert calls == [], "a test's app froze the heap"
    async with app_factory(freeze_heap=True).run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: bool(calls))
        assert calls == ["collect", "freeze"]  # no garbage frozen with what lives on
