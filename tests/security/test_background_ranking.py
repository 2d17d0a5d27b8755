"""The app ranks what is not ranked yet behind the screen: never unasked, never in a loop.

A received workspace's questions that its command retriever never ranked are "not ranked
yet" the moment the app opens, so the background ranking starts at once. It must never
run that command before this user trusted it (a terminal asks first; a served session
never runs it), a retriever that fails must not be run again on every look at the
workspace, and a damaged ranking row is refused with its table, never scored.
"""

from __future__ import annotations

import shlex
import sqlite3
import sys

from engine.trust import TrustStore
from engine.types import RetrieverSpec
from engine.workspace import Workspace
from tests.cli.test_trust import crafted
from tests.conftest import run_cli
from tests.tui.conftest import APP_SIZE, wait_for
from tests.tui.serve.test_served_trust import app_over
from tests.tui.test_readonly import record_notifications
from tui.app import GoldpanApp
from tui.screens.modals import TrustScreen
from tui.serve.served_app import Served

FAILING = """
import pathlib, sys
with open(sys.argv[1], "a", encoding="utf-8") as f:
    f.write("ran\\n")
sys.exit(3)
"""


def not_ranked_by(app: GoldpanApp, retriever: str) -> set[str]:
    return {q for q, by in app.session.live.not_ranked.items() if retriever in by}


async def test_a_served_app_never_runs_a_received_command_to_rank_behind(tmp_path):
    path, marker, _ = crafted(tmp_path)
    app = app_over(path, served=Served())
    seen = record_notifications(app)
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: any("sneaky" in m for m in seen))
        await wait_for(pilot, lambda: app.ranking.ranking == ())
        await app.workers.wait_for_complete()
        assert not isinstance(app.screen, TrustScreen)  # never asked in a browser
        assert not_ranked_by(app, "sneaky") == {"q1", "q2", "q3", "q4"}  # still said
    assert not marker.exists()
    assert TrustStore().entries() == []


async def test_a_terminal_asks_before_ranking_with_a_received_command(tmp_path):
    path, marker, command = crafted(tmp_path)
    app = app_over(path)
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(  # at once: nothing ranks before the answer
            pilot,
            lambda: isinstance(app.screen, TrustScreen) and app.screen.query("#trust-commands"),
        )
        assert command in str(app.screen.query_one("#trust-commands").render())
        assert not marker.exists()
        await pilot.press("escape")  # declined: ranked without it
        await wait_for(pilot, lambda: not isinstance(app.screen, TrustScreen))
        await wait_for(pilot, lambda: app.ranking.ranking == ())
        await app.workers.wait_for_complete()
        assert not_ranked_by(app, "sneaky") == {"q1", "q2", "q3", "q4"}
    assert not marker.exists()
    assert TrustStore().entries() == []


async def test_a_retriever_that_fails_is_not_run_again_until_a_reload(tmp_path):
    path, _, _ = crafted(tmp_path)
    script = tmp_path / "fails.py"
    script.write_text(FAILING, encoding="utf-8")
    runs = tmp_path / "runs.txt"
    command = shlex.join([sys.executable, str(script), str(runs)])
    spec = RetrieverSpec("broken", "command", {"command": command, "timeout": 60.0})
    with Workspace.open(path) as ws:
        ws.remove_retriever("sneaky")
        ws.add_retriever(spec)
        TrustStore().trust(ws, [spec])  # this user's own command, which fails
    app = app_over(path)
    seen = record_notifications(app)
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: runs.exists() and app.ranking.ranking == ())
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: any("broken" in m for m in seen))  # said once
        ran = runs.read_text(encoding="utf-8").count("ran")
        assert ran >= 1
        for _ in range(3):  # the watch's next looks: nothing new, nothing run again
            app.ranking.watch()
            await pilot.pause()
            assert app.ranking.ranking == ()
        await app.workers.wait_for_complete()
        assert runs.read_text(encoding="utf-8").count("ran") == ran
        assert not_ranked_by(app, "broken") == {"q1", "q2", "q3", "q4"}
        await pilot.press("ctrl+r")  # a reload tries again
        await wait_for(pilot, lambda: runs.read_text(encoding="utf-8").count("ran") > ran)


def test_a_damaged_ranking_hash_is_refused_naming_its_table(tmp_path, capsys):
    path, _, _ = crafted(tmp_path)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE runs SET input_hash = x'00ff' WHERE question_id = 'q1'")
    db.close()
    code, out, err = run_cli(capsys, "score", path, "--no-pool", "--retriever", "bm25-word")
    assert code == 2, (out, err)
    assert "table runs" in err and "input_hash" in err and "Traceback" not in err
