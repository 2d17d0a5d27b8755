"""The ``goldpan`` program's exit (``tui.cli.run``): no teardown, nothing an exit owes skipped.

``run`` ends a finished command with ``os._exit`` after flushing the output and running
``atexit``'s functions, so that a pool's hundreds of thousands of objects are not freed
one by one. Each test is a real process, since that exit cannot happen inside pytest's,
running a command that returns (``--version`` leaves through argparse's own exit).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest

import engine.retrieve.runner
from tests.conftest import ROOT
from tui.cli import main


def goldpan(
    cwd: Path, *argv: object, script: str = "", stdout: Any = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    """A process running ``script`` (set-up code), then ``tui.cli.run`` with ``argv``."""
    code = f"import sys\n{script}\nsys.argv = ['goldpan', *{[str(a) for a in argv]!r}]\n"
    code += "from tui.cli import run\nrun()\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("PYTHONUNBUFFERED", None)  # output held in a buffer, as a user's process holds it
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_pool_process_writes_its_whole_report_to_a_pipe_and_leaves_no_wal(tiny_ws):
    done = goldpan(tiny_ws.parent, "pool", tiny_ws, "--retriever", "bm25-word", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "bm25-word" in done.stdout and done.stdout.rstrip().endswith("┘")
    assert "only it found" in done.stderr
    # the workspace was closed before the exit: checkpointed, its side files removed
    assert not Path(f"{tiny_ws}-wal").exists() and not Path(f"{tiny_ws}-shm").exists()
    info = goldpan(tiny_ws.parent, "info", tiny_ws, "--json")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["questions"] == 4


def test_the_exit_code_is_the_commands(tiny_ws):
    assert goldpan(tiny_ws.parent, "pool", tiny_ws, "--quiet").returncode == 0
    gate = goldpan(tiny_ws.parent, "score", tiny_ws, "--fail-under", "hit@1=1")
    assert gate.returncode == 1 and "below the floor" in gate.stderr
    missing = goldpan(tiny_ws.parent, "info", tiny_ws.parent / "missing.db")
    assert missing.returncode == 2 and "no such workspace" in missing.stderr


def test_atexit_functions_still_run(tiny_ws):
    mark = tiny_ws.parent / "atexit-ran"
    script = f"import atexit, pathlib\natexit.register(pathlib.Path({str(mark)!r}).touch)"
    done = goldpan(tiny_ws.parent, "info", tiny_ws, script=script)
    assert done.returncode == 0 and "questions" in done.stdout
    assert mark.exists()


def test_a_thread_still_working_is_waited_for(tiny_ws):
    """A thread that is not a daemon, still running when the command returns: Python's
    own exit is taken, which waits for it (``os._exit`` would cut its write off)."""
    mark = tiny_ws.parent / "written"
    script = f"""
import pathlib, threading, time
import tui.cli
returned = threading.Event()
command = tui.cli.main
def main(argv=None):
    try:
        return command(argv)
    finally:
        returned.set()
tui.cli.main = main
def late_write():
    returned.wait()
    time.sleep(0.3)  # still at work when run() decides how to exit
    pathlib.Path({str(mark)!r}).write_text("done")
threading.Thread(target=late_write).start()
"""
    done = goldpan(tiny_ws.parent, "info", tiny_ws, script=script)
    assert done.returncode == 0, done.stderr
    assert mark.read_text() == "done"


def test_a_connection_left_open_is_closed_by_pythons_exit(tiny_ws):
    """A workspace connection still open when the command returns: Python's own exit
    closes it, which checkpoints the write-ahead log and removes it."""
    script = f"""
from pathlib import Path
from engine.workspace import Workspace
left_open = Workspace.open(Path({str(tiny_ws)!r}))
assert Path({str(tiny_ws)!r} + "-wal").exists()
"""
    done = goldpan(tiny_ws.parent, "info", tiny_ws, script=script)
    assert done.returncode == 0, done.stderr
    assert not Path(f"{tiny_ws}-wal").exists()


def test_main_on_its_own_keeps_nothing_for_an_exit_that_does_not_come(tiny_ws, monkeypatch):
    """In one process running many commands (the tests), a pool's indexes go when it is
    done: only a process that ``run`` started leaves them to its exit."""
    made: list[weakref.ref[object]] = []

    class Watched(engine.retrieve.runner.PreparedRetrievers):
        def __init__(self) -> None:
            super().__init__()
            made.append(weakref.ref(self))

    monkeypatch.setattr(engine.retrieve.runner, "PreparedRetrievers", Watched)
    assert main(["pool", str(tiny_ws), "--retriever", "bm25-word", "--quiet"]) == 0
    gc.collect()
    assert len(made) == 1 and made[0]() is None


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("json_out", [False, True], ids=["table", "json"])
def test_output_to_a_full_disk_is_one_clear_error(tiny_ws, json_out):
    """A table fails while it is printed, JSON once the exit flushes it: each says once
    that the output may be cut short (it used to claim a file "rolled back")."""
    argv = ["info", tiny_ws, *(["--json"] if json_out else [])]
    with open("/dev/full", "w") as full:
        done = goldpan(tiny_ws.parent, *argv, stdout=full)
    assert done.returncode == 2
    assert done.stderr.count("goldpan: error:") == 1, done.stderr
    assert "disk full while writing" in done.stderr and "may be cut short" in done.stderr
    assert "rolled back" not in done.stderr and "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr


def test_a_reader_that_left_is_exit_2_without_a_word(tiny_ws):
    """`goldpan info --json | head -c0`: the output held back for the exit meets a closed
    pipe; nothing is printed about it and nothing is left for Python to complain of."""
    reader, writer = os.pipe()
    os.close(reader)
    with os.fdopen(writer, "w") as closed:
        done = goldpan(tiny_ws.parent, "info", tiny_ws, "--json", stdout=closed)
    assert (done.returncode, done.stderr) == (2, "")
