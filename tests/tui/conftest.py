"""Fixtures for Pilot tests: a copy of the demo workspace per test, an app factory, and
the helpers several test modules share."""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from engine.demo import build_demo
from tui.app import GoldpanApp
from tui.screens.judge import JudgeScreen

APP_SIZE = (120, 40)


@pytest.fixture(scope="session")
def demo_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace, built and pooled once per test session."""
    path = tmp_path_factory.mktemp("demo-master") / "demo.db"
    build_demo(path, models=False).close()
    return path


@pytest.fixture
def demo_ws(demo_master: Path, tmp_path: Path) -> Path:
    """A private copy of the demo workspace for one test."""
    target = tmp_path / "demo.db"
    shutil.copy(demo_master, target)
    return target


def make_app(path: Path, annotator: str = "tester", **kw: object) -> GoldpanApp:
    """An app over ``path``, pinned for determinism (for tests outside tests/tui too)."""
    kw.setdefault("warm_indexes", False)
    return GoldpanApp(
        path,
        annotator=annotator,
        theme="textual-dark",
        animations=False,
        blink=False,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture
def app_factory(demo_ws: Path) -> Callable[..., GoldpanApp]:
    """Make an app over the test's demo copy, pinned for determinism."""

    def factory(path: Path | None = None, annotator: str = "tester", **kw: object) -> GoldpanApp:
        return make_app(path or demo_ws, annotator, **kw)

    return factory


WAIT_S = 60.0
"""How long :func:`wait_for` waits: generous, for a machine whose cores are busy elsewhere
(a condition that holds returns at once; only a broken one waits this long)."""


async def wait_for(pilot, condition: Callable[[], bool], timeout: float = WAIT_S) -> None:
    """Pause until ``condition`` holds (bounded; fails loudly instead of hanging)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout:.0f} s")
        await pilot.pause(0.02)


def rows(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Rows of ``sql`` read from the workspace file itself (its own connection)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def my_labels(path: Path, qid: str) -> dict[object, object]:
    """The grades the ``tester`` annotator gave on question ``qid``: doc id -> grade."""
    return dict(
        rows(
            path,
            "SELECT doc_id, grade FROM labels WHERE question_id = ? AND annotator = 'tester'",
            qid,
        )
    )


def plain(widget: Static) -> str:
    """What a Static shows, as text."""
    return str(widget.render())


async def open_judge(pilot: Any, qid: str) -> JudgeScreen:
    """Open the judge screen on ``qid`` and return it."""
    pilot.app.judge(qid)
    await pilot.pause()
    assert isinstance(pilot.app.screen, JudgeScreen)
    return pilot.app.screen


class FakeApp:
    """Stands in for the TUI: records how `goldpan open` (or a served tab) built it."""

    made: list[dict[str, object]] = []
    crash = None  # what a real app that crashed would hand back for `goldpan open` to report

    def __init__(self, path, **kw):
        FakeApp.made.append({"path": path, **kw})

    def run(self) -> None:
        pass


@pytest.fixture
def fake_app(monkeypatch) -> list[dict[str, object]]:
    """The app replaced by :class:`FakeApp`; what each one was built with, in order."""
    import tui.app

    FakeApp.made = []
    monkeypatch.setattr(tui.app, "GoldpanApp", FakeApp)
    return FakeApp.made


def until(condition: Callable[[], object], timeout: float = 30.0, what: str = "") -> Any:
    """Poll ``condition`` (outside an app: real processes) until it is true; its value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what or condition}")
