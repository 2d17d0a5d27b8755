"""`goldpan demo` opens before Kiwi and e5: the app ranks with them (and what reads e5) in a
worker."""

from __future__ import annotations

from pathlib import Path

from engine.demo import build_demo
from engine.workspace import Workspace
from tests.tui.conftest import APP_SIZE, wait_for
from tui.app import GoldpanApp

KIWI = "bm25-kiwi"
BEHIND = (KIWI, "e5", "hybrid", "hybrid+id")


async def test_the_demo_opens_with_its_model_retrievers_pending_and_pools_them_behind(
    tmp_path: Path, kiwi: object
) -> None:
    """Kiwi's retriever, e5 and the two that read e5 (hybrid, hybrid+id) are pooled by
    the app after its first paint; the word-level ones before it."""
    path = tmp_path / "demo.db"
    ws = build_demo(path, slow=False)
    try:
        qids = ws.question_ids()
        for spec in ws.retrievers():
            ranked = set(ws.runs(spec.name))
            assert ranked == (set() if spec.name in BEHIND else set(qids)), spec.name
    finally:
        ws.close()
    app = GoldpanApp(
        path,
        annotator="tester",
        theme="textual-dark",
        animations=False,
        blink=False,
        warm_indexes=False,
    )
    for name in BEHIND:
        assert app.session.live.rankings[name] == {}  # what the first screen scores
    async with app.run_test(size=APP_SIZE) as pilot:
        for name in BEHIND:
            await wait_for(pilot, lambda n=name: len(app.session.live.rankings[n]) == len(qids))
        await wait_for(pilot, lambda: app.sub_title == app.base_sub_title)
    with Workspace.open(path) as ws:
        for name in BEHIND:
            stored = ws.runs(name)
            assert set(stored) == set(qids), name
            assert {q: tuple(r) for q, r in app.session.live.rankings[name].items()} == {
                q: tuple(r.doc_ids) for q, r in stored.items()
            }, name


APP_POOLS_KIWI = """
import asyncio, sys
from pathlib import Path
from engine.demo import build_demo
from tui.app import GoldpanApp

path = Path(sys.argv[1])
ws = build_demo(path, slow=False, models=False)
n = len(ws.question_ids())
ws.close()
loaded_before = "kiwipiepy" in sys.modules

async def main():
    app = GoldpanApp(path, annotator="tester", theme="textual-dark", animations=False,
                     blink=False, warm_indexes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        while len(app.session.live.rankings["bm25-kiwi"]) < n or app.ranking.ranking:
            await pilot.pause(0.05)
    print(loaded_before, "kiwipiepy" in sys.modules, len(app.session.live.rankings["bm25-kiwi"]), n)

asyncio.run(main())
"""


def test_the_app_pools_kiwi_without_loading_it_in_its_own_process(tmp_path: Path) -> None:
    """Kiwi's first analysis holds Python's lock for about two seconds: in the app's
    process that froze the screen after every open. The app's Kiwi is a helper process
    (engine.kiwi_helper), so kiwipiepy is never imported by the app's process itself."""
    import subprocess
    import sys

    from engine.helper_process import helper_env

    done = subprocess.run(
        [sys.executable, "-c", APP_POOLS_KIWI, str(tmp_path / "demo.db")],
        capture_output=True,
        text=True,
        env=helper_env(),
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after, ranked, n = done.stdout.split()
    assert (before, after) == ("False", "False")
    assert int(ranked) == int(n) > 0
    with Workspace.open(tmp_path / "demo.db") as ws:
        assert set(ws.runs(KIWI)) == set(ws.question_ids())
