"""`goldpan import querylog`: exit codes, the line a refusal names, and its JSON sample (the
grouping, bands and samples themselves are in tests/engine/test_querylog.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.workspace import Workspace
from tests.conftest import querylog_rows, snapshot
from tui.cli import main


def test_a_bad_line_exits_2_naming_it_and_changes_nothing(
    tiny_ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "log.jsonl"
    bad.write_text('{"query": "fine", "count": 2}\n{"query": "", "count": 1}\n')
    before = snapshot(tiny_ws)
    assert main(["import", "querylog", str(tiny_ws), str(bad), "--sample", "1"]) == 2
    assert "log.jsonl:2" in capsys.readouterr().err
    assert main(["import", "querylog", str(tiny_ws), str(bad)]) == 2
    assert snapshot(tiny_ws) == before


def test_a_log_is_stored_then_sampled_as_json(
    tiny_ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.txt"
    log.write_text("reset password\nReset  password\nＲＥＳＥＴ password\nother thing\n")
    assert main(["import", "querylog", str(tiny_ws), str(log)]) == 0
    assert "ctrl+n" in capsys.readouterr().out
    ws = Workspace.open(tiny_ws)
    rows = querylog_rows(ws)
    ws.close()
    assert [(r["text"], r["count"], r["band"]) for r in rows] == [
        ("reset password", 3, "head"),
        ("other thing", 1, "torso"),  # starts at 3/4 = 75% of the traffic
    ]
    argv = ["import", "querylog", str(tiny_ws), str(log), "--sample", "5", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["queries"] == 4 and data["distinct"] == 2
    assert data["bands"]["head"]["cut"] == [0.0, 0.5]
    assert [s["query"] for s in data["sampled"]] == ["reset password", "other thing"]
    assert all(s["question"].startswith("log") for s in data["sampled"])
