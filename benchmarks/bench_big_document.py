"""How long the Label screen takes to show the first screen of a 5 MB document.

Run: ``python benchmarks/bench_big_document.py [--runs 5] [--mb 5]``.

Builds a workspace (in a temporary folder) with one question whose two candidates are a
small document and a big one, opens the Label screen headless at 120x40 cells, and times
each move of the cursor from the small document onto the big one until the screen's
rendered lines show the big document's first line (the compositor renders them: the work
a terminal would wait for). Prints each run, the median, and how much the process's peak
memory grew. Target: median under 200 ms, memory a small multiple of the document.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.types import Doc, Label, Question  # noqa: E402
from engine.workspace import Workspace  # noqa: E402
from tui.app import GoldpanApp  # noqa: E402
from tui.screens.judge import JudgeScreen  # noqa: E402
from tui.textual_compat import screen_text  # noqa: E402
from tui.widgets.candidate_list import CandidateList  # noqa: E402

FIRST = "FIRST-LINE of the big document: 감쇠 보정 원리"
LINE = "금속 인공물 감쇠 보정 원리와 점검 절차를 다시 설명한다. lorem ipsum dolor sit amet\n"


def build(path: Path, mb: float) -> int:
    """The workspace; returns the big document's size in bytes."""
    text = FIRST + "\n" + LINE * int(mb * 2**20 / len(LINE.encode()))
    ws = Workspace.create(path)
    ws.write_docs([Doc("small", "Small", "SMALL-TEXT", {}), Doc("big", "Big", text, {})])
    ws.write_questions([Question("q1", "감쇠 보정 원리", ())])
    ws.write_labels([Label("q1", "small", "other", 0), Label("q1", "big", "other", 0)])
    ws.close()
    return len(text.encode())


def painted(app: GoldpanApp) -> str:
    return screen_text(app.screen)


async def measure(path: Path, runs: int) -> list[float]:
    app = GoldpanApp(path, annotator="bench", animations=False, blink=False, warm_indexes=False)
    times: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        app.judge("q1")
        await pilot.pause()
        assert isinstance(app.screen, JudgeScreen)
        candidates = app.screen.query_one(CandidateList)
        for _ in range(runs):
            candidates.select("small")
            await pilot.pause()
            while "SMALL-TEXT" not in painted(app):
                await pilot.pause(0.01)
            started = time.perf_counter()
            candidates.select("big")
            while FIRST not in painted(app):
                await pilot.pause(0.001)
            times.append(time.perf_counter() - started)
    return times


def main() -> None:
    """Build, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mb", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        size = build(Path(tmp) / "big.db", args.mb)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        times = asyncio.run(measure(Path(tmp) / "big.db", args.runs))
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    for i, t in enumerate(times, 1):
        print(f"run {i}: {t * 1000:.0f} ms")
    print(
        f"median {statistics.median(times) * 1000:.0f} ms to the first screen of a "
        f"{size / 2**20:.1f} MB document (target < 200 ms)"
    )
    print(
        f"peak memory grew by {grown / 2**20:.0f} MB ({grown / size:.1f}x the document, "
        "including the app itself)"
    )


if __name__ == "__main__":
    main()
