"""Issue 12, case 1: a received workspace runs nothing until this user trusts its commands.

A crafted workspace holds a ``command`` retriever whose program leaves a marker file when
it runs. Every command that pools (score, compare, failures, noanswer, queue, pool) and
the TUI's judge screen must skip it with a message naming the retriever, the command and
``goldpan trust WS``; the marker must not appear and the workspace must stay byte for
byte what it was. After ``goldpan trust`` the same command runs. Trust is kept outside
the workspace (the test's own XDG_CONFIG_HOME) and keyed by command, workspace id and
path: a copy, a changed command or a revoked trust is asked about again.
"""

from __future__ import annotations

import hashlib
import io
import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from engine.retrieve.runner import refresh_runs
from engine.team.merge import merge_workspaces
from engine.trust import TrustStore, config_dir
from engine.types import Label, RetrieverSpec
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS
from tests.conftest import run_cli as run
from tests.tui.conftest import wait_for
from tui.app import GoldpanApp
from tui.screens.judge import JudgeScreen
from tui.screens.modals import TrustScreen

MARKER_SCRIPT = """
import pathlib, sys
pathlib.Path(sys.argv[1]).write_text("ran", encoding="utf-8")
for line in sys.stdin:
    pass
"""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def crafted(tmp_path: Path, name: str = "received.db") -> tuple[Path, Path, str]:
    """A workspace as a colleague might send it: docs, labeled questions, every built-in
    retriever pooled, and a command retriever `sneaky` never run here. Returns
    (workspace, marker file, command)."""
    script = tmp_path / "payload.py"
    script.write_text(MARKER_SCRIPT, encoding="utf-8")
    marker = tmp_path / "RAN"
    command = shlex.join([sys.executable, str(script), str(marker)])
    path = tmp_path / name
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.write_labels([Label("q1", "d1", "mina", 2), Label("q2", "d2", "mina", 1)])
    refresh_runs(ws, ["bm25-word", "bm25-bigram"], depth=100)
    for spec in ws.retrievers():
        if spec.name not in ("bm25-word", "bm25-bigram"):
            ws.remove_retriever(spec.name)
    ws.add_retriever(RetrieverSpec("sneaky", "command", {"command": command, "timeout": 60.0}))
    ws.checkpoint()
    ws.close()
    return path, marker, command


POOLING_COMMANDS = [
    ("score",),
    ("score", "--json"),
    ("pool",),
    ("pool", "--retriever", "sneaky", "--force"),
    ("compare", "bm25-word", "sneaky", "--samples", "20"),
    ("failures", "--retriever", "sneaky"),
    ("noanswer", "--retriever", "sneaky"),
    ("queue",),
]


@pytest.mark.parametrize("argv", POOLING_COMMANDS, ids=" ".join)
def test_untrusted_command_never_runs_and_the_message_says_how_to_trust_it(tmp_path, capsys, argv):
    path, marker, command = crafted(tmp_path)
    before = digest(path)
    code, _, err = run(capsys, argv[0], path, *argv[1:])
    flat = " ".join(err.split())
    if argv[0] in ("compare", "failures"):  # what did not rank is refused, naming it
        assert code == 2 and "sneaky has not ranked 2 of the scored questions" in flat, err
    else:
        assert code == 0, err
    assert not marker.exists()
    assert "skipped retriever sneaky" in flat
    assert repr(command) in flat  # the exact command
    assert f"goldpan trust {path}" in flat
    assert "Traceback" not in err
    assert digest(path) == before  # nothing written: the built-ins were cached already
    assert not (config_dir() / "trusted-commands.json").exists()


def test_trust_yes_then_the_command_runs_and_only_for_that_file_and_command(tmp_path, capsys):
    path, marker, command = crafted(tmp_path)
    copy = tmp_path / "copy.db"
    shutil.copyfile(path, copy)

    code, out, err = run(capsys, "trust", path, "--yes")
    assert code == 0, err
    assert "sneaky" in out and command in out and "trusted 1 retriever(s)" in out
    record = json.loads((config_dir() / "trusted-commands.json").read_text(encoding="utf-8"))
    [entry] = record["trusted"]
    assert entry["command"] == command and entry["path"] == str(path.resolve())
    with Workspace.open(path, readonly=True) as ws:
        assert entry["workspace_id"] == ws.meta()["workspace_id"]

    # a copy keeps the workspace id but not the path: still untrusted
    code, _, err = run(capsys, "pool", copy, "--retriever", "sneaky")
    assert code == 0 and not marker.exists() and "skipped retriever sneaky" in err

    code, _, err = run(capsys, "pool", path, "--retriever", "sneaky")
    assert code == 0, err
    assert marker.read_text(encoding="utf-8") == "ran"
    assert "skipped" not in err

    # the command changes (a merge, an edit): asked again
    marker.unlink()
    with Workspace.open(path) as ws:
        ws.remove_retriever("sneaky")
        ws.add_retriever(RetrieverSpec("sneaky", "command", {"command": command + " x"}))
    code, _, err = run(capsys, "pool", path, "--retriever", "sneaky", "--force")
    assert code == 0 and not marker.exists() and "skipped retriever sneaky" in err


def test_trust_asks_for_each_command_and_no_is_the_default(tmp_path, capsys, monkeypatch):
    path, marker, command = crafted(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))  # just enter
    code, out, err = run(capsys, "trust", path)
    assert code == 0
    assert "runs a program on this machine" in " ".join(err.split())
    assert "[y/N]" in err and "1 left untrusted" in out
    assert TrustStore().entries() == []

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # end of input: no
    assert run(capsys, "trust", path)[0] == 0 and TrustStore().entries() == []

    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    code, out, _ = run(capsys, "trust", path)
    assert code == 0 and "trusted 1 retriever(s)" in out
    code, out, _ = run(capsys, "trust", path, "--list")
    assert code == 0 and "yes" in out

    code, out, _ = run(capsys, "trust", path, "--revoke")
    assert code == 0 and "revoked trust in 1" in out
    assert TrustStore().entries() == []
    assert run(capsys, "pool", path, "--retriever", "sneaky")[0] == 0
    assert not marker.exists()


def test_trust_shows_invisible_and_bidi_characters_escaped(tmp_path, capsys):
    path, _, command = crafted(tmp_path)
    with Workspace.open(path) as ws:
        ws.add_retriever(RetrieverSpec("bidi", "command", {"command": "echo \u202eten\x1b[2J"}))
    code, out, _ = run(capsys, "trust", path, "--list")
    assert code == 0
    assert "\\u202e" in out and "\\u001b" in out and "\u202e" not in out and "\x1b" not in out


def test_a_damaged_trust_record_is_an_error_naming_it(tmp_path, capsys):
    path, marker, _ = crafted(tmp_path)
    record = config_dir() / "trusted-commands.json"
    record.parent.mkdir(parents=True)
    record.write_text("{not json", encoding="utf-8")
    code, _, err = run(capsys, "pool", path)
    assert code == 2 and "trusted-commands.json" in err and "damaged" in err
    assert not marker.exists()


def test_merge_reports_command_retrievers_it_brings_in_and_leaves_them_untrusted(tmp_path, capsys):
    received, marker, command = crafted(tmp_path)
    assert run(capsys, "trust", received, "--yes")[0] == 0  # trusted in the received file
    mine = tmp_path / "mine.db"
    ws = new_workspace(mine)
    ws.write_docs(TINY_DOCS)
    ws.close()
    for out in (mine, tmp_path / "new.db"):  # into an existing OUT, and a new one
        code, stdout, err = run(capsys, "merge", out, received)
        assert code == 0, err
        flat = " ".join(err.split())
        assert "retriever sneaky" in flat and command in flat
        assert f"goldpan trust {out}" in flat
        assert (
            "1 retriever running a command or sending questions out brought in, untrusted"
            in " ".join(stdout.split())
        )
        code, _, err = run(capsys, "pool", out, "--retriever", "sneaky")
        assert code == 0 and "skipped retriever sneaky" in err
        assert not marker.exists()
    report = merge_workspaces(mine, [received])
    assert report.commands_added == []  # already there: nothing new to report


async def test_tui_asks_once_before_pooling_with_an_untrusted_command(tmp_path):
    path, marker, command = crafted(tmp_path)

    def app() -> GoldpanApp:
        return GoldpanApp(
            path, annotator="tester", animations=False, blink=False, warm_indexes=False
        )

    first = app()
    async with first.run_test(size=(120, 40)) as pilot:
        first.judge("q1")  # q1 has no ranking by sneaky: pooling it would run the command
        await wait_for(pilot, lambda: isinstance(first.screen, TrustScreen))
        shown = str(first.screen.query_one("#trust-commands").render())
        assert "sneaky" in shown and command in shown
        await pilot.press("escape")  # declines (see tests/tui/serve/test_served_trust.py)
        await wait_for(pilot, lambda: isinstance(first.screen, JudgeScreen))
        await first.workers.wait_for_complete()
        await pilot.pause()
        first.judge("q2")  # asked once: the next question pools without asking
        await first.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(first.screen, JudgeScreen)
    assert not marker.exists()
    assert TrustStore().entries() == []

    second = app()
    async with second.run_test(size=(120, 40)) as pilot:
        second.judge("q1")
        await wait_for(pilot, lambda: isinstance(second.screen, TrustScreen))
        await pilot.press(*"trust", "enter")  # the deliberate confirmation, never one key
        await wait_for(pilot, marker.exists)
        await second.workers.wait_for_complete()
    assert marker.read_text(encoding="utf-8") == "ran"
    [entry] = TrustStore().entries()
    assert entry.command == command and entry.retriever == "sneaky"
