"""Hostile cases of ``goldpan judge --report``: bad judges, empty workspaces, bad options.

The report card only reads the workspace (its bytes are compared before and after) and
runs a command judge again only when this user trusts it for this workspace. A command
that answers NaN, nothing, or too slowly is a clear error (exit 2, the line named), never
a traceback.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_LABELS, TINY_QUESTIONS
from tests.conftest import run_cli as run

# Answers the judging run; the report's runs (marked by a file) answer as told.
JUDGE = """
import json, os, sys, time
mode = sys.argv[1]
asked = os.path.exists(sys.argv[2])
open(sys.argv[2], "a").close()
for line in sys.stdin:
    r = json.loads(line)
    if asked and mode == "nan":
        print("NaN", flush=True)
    elif asked and mode == "silent":
        break
    elif asked and mode == "slow":
        time.sleep(30)
    else:
        print(1 if r["doc_id"] in ("d1", "d2", "d3") else 0, flush=True)
"""


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _workspace(tmp_path: Path, labels: bool = True) -> Path:
    """tiny_ws's documents and questions, with its labels or none."""
    path = tmp_path / "ws.db"
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    if labels:
        ws.write_labels(TINY_LABELS)
    ws.close()
    return path


def _judged(tmp_path: Path, capsys, mode: str = "ok", labels: bool = True) -> tuple[Path, Path]:
    path = _workspace(tmp_path, labels)
    assert run(capsys, "pool", path, "--retriever", "bm25-word", "--quiet")[0] == 0
    script = tmp_path / "judge.py"
    script.write_text(JUDGE, encoding="utf-8")
    marker = tmp_path / "asked"
    cmd = f"{sys.executable} {script} {mode} {marker}"
    code, _, err = run(
        capsys, "judge", path, "--command", cmd, "--annotator", "model:cmd", "--no-pool"
    )
    assert code == 0, err
    return path, marker


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("nan", "output line 1: expected a grade 0-3"),
        ("silent", "answered 0 of the"),
    ],
)
def test_a_command_answering_nan_or_nothing_when_asked_again_is_bad_input(
    tmp_path, capsys, mode, said
):
    path, _ = _judged(tmp_path, capsys, mode)
    before = _file_hash(path)
    code, out, err = run(capsys, "judge", path, "--report", "--json")
    assert code == 2 and out == "" and said in err and "Traceback" not in err
    assert _file_hash(path) == before


def test_a_slow_command_is_stopped_at_the_timeout(tmp_path, capsys):
    path, _ = _judged(tmp_path, capsys, "slow")
    code, _, err = run(capsys, "judge", path, "--report", "--timeout", "1")
    assert code == 2 and "no answer within 1 s" in err


def test_a_command_not_trusted_here_is_not_run(tmp_path, capsys, user_dirs, monkeypatch):
    # a received workspace: the judging run's trust belongs to another user
    path, marker = _judged(tmp_path, capsys)
    marker.unlink()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "someone-else"))
    code, out, err = run(capsys, "judge", path, "--report", "--json")
    assert code == 0, err
    same = json.loads(out)["self_consistency"]
    assert same["asked"] is False and "not trusted" in same["reason"]
    assert not marker.exists()  # the command never started


def test_the_report_writes_nothing(tmp_path, capsys):
    path, _ = _judged(tmp_path, capsys)
    before = _file_hash(path)
    code, out, err = run(capsys, "judge", path, "--report", "--json", "--repeats", "2")
    assert code == 0, err
    assert json.loads(out)["self_consistency"]["asked"] is True
    assert _file_hash(path) == before


def test_a_workspace_without_human_judgments_is_bad_input(tmp_path, capsys):
    path, _ = _judged(tmp_path, capsys, labels=False)
    code, out, err = run(capsys, "judge", path, "--report")
    assert code == 2 and out == "" and "no person has graded a pair model:cmd graded" in err


def test_no_model_judge_or_several_unnamed_is_bad_input(tmp_path, capsys):
    path = _workspace(tmp_path)
    code, _, err = run(capsys, "judge", path, "--report")
    assert code == 2 and "has no model judge" in err
    code, _, err = run(capsys, "judge", path, "--report", "--annotator", "model:nobody")
    assert code == 2 and "model:nobody" in err


@pytest.mark.parametrize("keep", ["150", "nan", "-5", "10,inf"])
def test_a_share_kept_that_is_not_a_percent_is_bad_input(tmp_path, capsys, keep):
    path, _ = _judged(tmp_path, capsys)
    code, out, err = run(capsys, "judge", path, "--report", "--keep", keep)
    assert code == 2 and out == "" and "--keep" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--report", "--model", "x"],
        ["--report", "--remove", "model:cmd"],
        ["--keep", "10"],
        ["--repeats", "3"],
    ],
)
def test_report_options_out_of_place_are_usage_errors(tmp_path, capsys, argv):
    path, _ = _judged(tmp_path, capsys)
    code, out, err = run(capsys, "judge", path, *argv)
    assert code == 2 and out == "" and "--" in err and "Traceback" not in err
