"""A command judge's output is parsed strictly, under a deadline that ends all of it.

``goldpan judge --command CMD`` runs the team's program and reads one grade per line. A
line that is not a grade 0-3 (``NaN``, ``1e309``) is exit 2 naming the line, a line of
hundreds of megabytes is refused without being held, and the deadline (``--timeout``)
ends the program and everything it started, even a child that keeps its output open.
Real judge programs run here, through the real ``goldpan judge``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.workspace import Workspace
from tests.conftest import ROOT, run_cli


@pytest.fixture
def ws(tiny_ws: Path, capsys) -> Path:
    """The tiny workspace without its Kiwi retriever (nothing here needs Kiwi)."""
    assert run_cli(capsys, "retriever", "remove", tiny_ws, "bm25-kiwi")[0] == 0
    return tiny_ws


def judge(tmp_path: Path, script: str) -> str:
    """A judge program: ``script`` run by this Python."""
    path = tmp_path / "judge.py"
    path.write_text(script, encoding="utf-8")
    return f"{sys.executable} {path}"


def nothing_stored(ws: Path) -> bool:
    with Workspace.open(ws, readonly=True) as opened:
        return opened.model_judges() == [] and opened.model_labels() == []


EVERY_LINE = "import sys\nfor line in sys.stdin:\n    print({!r}, flush=True)\n"


def test_a_grade_of_nan_is_refused_naming_the_line(ws, tmp_path, capsys):
    command = judge(tmp_path, EVERY_LINE.format("NaN"))
    code, _, err = run_cli(capsys, "judge", ws, "--command", command, "--quiet")
    assert code == 2, err
    assert "output line 1: expected a grade 0-3" in " ".join(err.split()) and "'NaN'" in err
    assert nothing_stored(ws)


def test_a_grade_beyond_any_float_is_refused_naming_the_line(ws, tmp_path, capsys):
    command = judge(tmp_path, EVERY_LINE.format('{"grade": 1e309}'))
    code, _, err = run_cli(capsys, "judge", ws, "--command", command, "--quiet")
    assert code == 2, err
    assert "output line 1: expected a grade" in " ".join(err.split()) and "1e309" in err
    assert nothing_stored(ws)


# Runs a command and prints its peak memory (KiB) and exit code. A small process of its
# own: a child forked from this one (a test worker that loaded torch) would count this
# process's memory in its peak, from the fork to its exec.
PEAK = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))\n"
)


def test_a_line_of_300_megabytes_is_refused_without_being_held(ws, tmp_path):
    """Its own goldpan process, whose peak memory is measured (``wait4``)."""
    script = (
        "import sys\nsys.stdin.read()\nchunk = '1' * (1 << 20)\n"
        "for _ in range(300):\n    sys.stdout.write(chunk)\nsys.stdout.write('\\n')\n"
    )
    command = judge(tmp_path, script)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-P", "-m", "tui.cli", "judge", str(ws), "--command", command]
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *argv, "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    peak_kib, code = (int(x) for x in done.stdout.split())
    assert code == 2, done.stderr
    assert "output line 1: expected a grade" in " ".join(done.stderr.split()), done.stderr
    peak_mb = peak_kib / 1024
    assert peak_mb < 250, f"goldpan held {peak_mb:.0f} MB reading a 300 MB line"
    assert nothing_stored(ws)


def test_the_deadline_ends_a_judge_and_the_child_that_keeps_its_output(ws, tmp_path, capsys):
    script = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "time.sleep(120)\n"
    )
    command = judge(tmp_path, script)
    start = time.monotonic()
    code, _, err = run_cli(capsys, "judge", ws, "--command", command, "--timeout", "1", "--quiet")
    seconds = time.monotonic() - start
    assert code == 2 and "no answer within 1 s" in err, err
    assert seconds < 60, f"{seconds:.0f} s: the judge's child held its output open"
    assert nothing_stored(ws)


@pytest.mark.parametrize("value", ["1e300", "0.001", "nan"])
def test_a_judge_timeout_out_of_range_is_refused_as_parsed(ws, tmp_path, capsys, value):
    command = judge(tmp_path, EVERY_LINE.format("1"))
    code, _, err = run_cli(capsys, "judge", ws, "--command", command, "--timeout", value)
    assert code == 2
    assert "argument --timeout" in err and "from 0.1 to 604,800" in err
    assert nothing_stored(ws)
