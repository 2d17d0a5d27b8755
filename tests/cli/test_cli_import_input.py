"""Imported input as untrusted: SQuAD 2.0, re-imported questions, CSV headers, ids, folders.

Every refusal asserts the exit code, the message (naming the file and line) and that the
workspace and the other files are byte-identical afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.conftest import write_jsonl
from tui.cli import main


def run(capsys, *argv):
    code = main(list(map(str, argv)))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def hashes(*roots: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for p in files:
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# -- SQuAD 2.0 ----------------------------------------------------------------------------

SQUAD2 = {
    "version": "v2.0",
    "data": [
        {
            "title": "Normans",
            "paragraphs": [
                {
                    "context": "The Normans gave their name to Normandy, a region in France.",
                    "qas": [
                        {
                            "id": "a1",
                            "question": "In what country is Normandy located?",
                            "answers": [{"text": "France", "answer_start": 55}],
                            "is_impossible": False,
                        },
                        {
                            "id": "u1",
                            "question": "Who gave their name to Normandy in the 1000s?",
                            "answers": [],
                            "plausible_answers": [{"text": "The Normans", "answer_start": 0}],
                            "is_impossible": True,
                        },
                        {
                            "id": "u2",
                            "question": "What is France a region of?",
                            "answers": [],
                            "plausible_answers": [{"text": "Normandy", "answer_start": 32}],
                        },
                    ],
                }
            ],
        }
    ],
}


def test_squad_2_unanswerable_questions_become_no_answer_verdicts(tmp_path, capsys):
    ws = tmp_path / "ws.db"
    assert run(capsys, "new", ws)[0] == 0
    path = tmp_path / "dev-v2.0.json"
    path.write_text(json.dumps(SQUAD2), encoding="utf-8")
    code, out, _ = run(capsys, "import", "squad", ws, path)
    assert code == 0
    assert "questions: 3 added" in out and "labels: 1" in out and "no-answer verdicts: 2" in out
    code, out, _ = run(capsys, "score", ws, "--json", "--quiet")
    assert code == 0
    counts = json.loads(out)["questions"]
    assert counts["scored"] == 1 and counts["no_answer"] == 2
    code, out, _ = run(capsys, "info", ws, "--json")
    assert json.loads(out)["question_status"] == {"labeled": 1, "no_answer": 2}


def test_squad_2_bad_is_impossible_is_refused(tmp_path, capsys):
    ws = tmp_path / "ws.db"
    assert run(capsys, "new", ws)[0] == 0
    bad = json.loads(json.dumps(SQUAD2))
    bad["data"][0]["paragraphs"][0]["qas"][1]["is_impossible"] = "yes"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    before = hashes(tmp_path)
    code, _, err = run(capsys, "import", "squad", ws, path)
    assert code == 2
    assert "bad.json: data[0].paragraphs[0].qas[1]" in err and "is_impossible" in err
    assert hashes(tmp_path) == before
