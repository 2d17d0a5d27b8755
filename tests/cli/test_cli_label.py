"""`goldpan label` / `goldpan verdict`, and two processes labeling one workspace at once."""

import subprocess
import sys

from engine.types import Label, Verdict
from engine.workspace import Workspace
from tests.conftest import ROOT
from tests.conftest import run_cli as run


def test_label_and_verdict_write_rows(tiny_ws, capsys, monkeypatch):
    monkeypatch.setenv("GOLDPAN_ANNOTATOR", "kim")
    assert run(capsys, "label", tiny_ws, "q4", "d4", "2")[0] == 0
    assert run(capsys, "label", tiny_ws, "q4", "d4", "3", "--annotator", "lee")[0] == 0
    assert run(capsys, "verdict", tiny_ws, "q2", "ambiguous", "--note", "two answers")[0] == 0
    ws = Workspace.open(tiny_ws)
    assert Label("q4", "d4", "kim", 2) in ws.labels()
    assert Label("q4", "d4", "lee", 3) in ws.labels()
    assert Verdict("q2", "kim", "ambiguous", "two answers") in ws.verdicts()


def test_label_bad_input_exits_2(tiny_ws, capsys):
    assert run(capsys, "label", tiny_ws, "nope", "d1", "1")[0] == 2
    assert run(capsys, "label", tiny_ws, "q1", "nope", "1")[0] == 2
    code, _, err = run(capsys, "label", tiny_ws, "q1", "d1", "4")
    assert code == 2 and "out of range" in err


WRITER = """
import sys
from tui.cli import main
ws, who = sys.argv[1], sys.argv[2]
for i in range(60):
    doc = "d%d" % (i % 4 + 1)
    q = "q%d" % (i // 4 % 4 + 1)
    assert main(["label", ws, q, doc, str(i % 4), "--annotator", f"{who}{i}"]) == 0
"""


def test_two_processes_labeling_at_once_keep_every_label(tiny_ws):
    before = len(Workspace.open(tiny_ws).labels())
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tiny_ws), who],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for who in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    ws = Workspace.open(tiny_ws)
    assert len(ws.labels()) == before + 120
    assert ws.integrity_problems() == []


def test_merge_command_twice_changes_nothing(tiny_ws, tmp_path, capsys):
    import shutil

    from tests.conftest import snapshot

    other = tmp_path / "other.db"
    shutil.copy(tiny_ws, other)
    assert run(capsys, "label", other, "q4", "d4", "2", "--annotator", "jun")[0] == 0
    out = tmp_path / "merged.db"
    code, text, _ = run(capsys, "merge", out, tiny_ws, other)
    assert code == 0 and "merged into" in text
    labels = Workspace.open(out).labels()
    assert Label("q4", "d4", "jun", 2) in labels and Label("q1", "d1", "mina", 2) in labels
    before = snapshot(out)
    assert run(capsys, "merge", out, tiny_ws, other)[0] == 0
    assert snapshot(out) == before
    code, _, err = run(capsys, "merge", out, out)
    assert code == 2
