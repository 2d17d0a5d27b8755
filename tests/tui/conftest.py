"""Fixtures for Pilot tests: a copy of the demo workspace per test, an app factory."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.demo import build_demo
from tui.app import GoldpanApp

APP_SIZE = (120, 40)


@pytest.fixture(scope="session")
def demo_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace, built and pooled once per test session."""
    path = tmp_path_factory.mktemp("demo-master") / "demo.db"
    build_demo(path).close()
    return path


@pytest.fixture
def demo_ws(demo_master: Path, tmp_path: Path) -> Path:
    """A private copy of the demo workspace for one test."""
    target = tmp_path / "demo.db"
    shutil.copy(demo_master, target)
    return target


@pytest.fixture
def app_factory(demo_ws: Path) -> Callable[..., GoldpanApp]:
    """Make an app over the test's demo copy, pinned for determinism."""

    def factory(path: Path | None = None, annotator: str = "tester", **kw: object) -> GoldpanApp:
        kw.setdefault("warm_indexes", False)
        return GoldpanApp(
            path or demo_ws,
            annotator=annotator,
            theme="textual-dark",
            animations=False,
            blink=False,
            **kw,  # type: ignore[arg-type]
        )

    return factory


async def wait_for(pilot, condition: Callable[[], bool], tries: int = 200) -> None:
    """Pause until ``condition`` holds (bounded; fails loudly instead of hanging)."""
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("condition not met in time")
