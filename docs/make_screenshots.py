"""Make the README's pictures: the judge and review screens of the demo, as SVG.

Run from the project root: ``python docs/make_screenshots.py``. The demo workspace is
built in a temporary folder, so nothing in ``workspaces/`` is touched.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from engine.demo import build_demo
from tui.app import GoldpanApp

OUT = Path(__file__).resolve().parent
SIZE = (120, 36)


async def shoot(path: Path) -> None:
    """Judge two candidates of an unlabeled question as mina, then show the review."""
    app = GoldpanApp(path, annotator="mina", animations=False, blink=False, warm_indexes=False)
    async with app.run_test(size=SIZE) as pilot:
        app.judge("q47")  # one of the demo's unlabeled questions
        await pilot.pause()
        await pilot.press("2", "0")  # auto-advance: on to the third candidate
        app.save_screenshot("judge.svg", str(OUT))
        await pilot.press("r")
        await pilot.pause()
        app.save_screenshot("review.svg", str(OUT))


def main() -> None:
    """Build the demo in a temporary folder and take both pictures."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "demo.db"
        build_demo(path).close()
        asyncio.run(shoot(path))
    print(f"wrote {OUT / 'judge.svg'} and {OUT / 'review.svg'}")


if __name__ == "__main__":
    main()
