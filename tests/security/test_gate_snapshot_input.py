"""A snapshot file is untrusted input: every number in it finite and in range, else exit 2.

A snapshot comes from a repository like any other file, and ``score --against`` reads it
before anything is compared: a number out of range is refused naming the file, its line
and the field, never left to overflow the scoring (``10**400`` was exit 3, an
``OverflowError``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.ci.snapshots import SnapshotError, load_snapshot_file
from tests.cli.test_gate_fresh import make_project, snapshot_file


def with_value(snap: Path, raw: str, out: Path) -> Path:
    """``snap`` with bm25-word's q1 mrr written as ``raw`` (JSON text), saved to ``out``."""
    data = json.loads(snap.read_text(encoding="utf-8"))
    data["retrievers"]["bm25-word"]["questions"]["q1"]["values"]["mrr"] = "@VALUE@"
    text = json.dumps(data, indent=1, sort_keys=True).replace('"@VALUE@"', raw)
    out.write_text(text, encoding="utf-8")
    return out


def test_a_snapshot_value_of_10_to_the_400_is_exit_2_naming_file_and_field(tmp_path):
    project = make_project(tmp_path)
    huge = with_value(snapshot_file(project), str(10**400), project.root / "huge.json")
    code, _, err = project.goldpan("score", project.ws, "--against", huge, "--fail-on-regression")
    assert code == 2, err
    assert f"{huge}:" in err and "retrievers.bm25-word.questions.q1.values.mrr" in err
    assert "expected a number from 0 to 1" in err and "internal error" not in err


@pytest.mark.parametrize("raw", ["1e309", "-1e309", "NaN", "Infinity", "1.5", "-0.25", "true"])
def test_a_snapshot_metric_value_outside_0_to_1_is_refused(tmp_path, raw):
    base = {
        "goldpan_snapshot": 1,
        "name": "accepted",
        "created": "",
        "metrics": ["mrr"],
        "golds": {"q1": {"d1": 2}},
        "retrievers": {"r": {"questions": {"q1": {"rank": 1, "top": "d1", "values": {}}}}},
    }
    path = tmp_path / "snap.json"
    path.write_text(
        json.dumps(base, indent=1).replace('"values": {}', f'"values": {{"mrr": {raw}}}')
    )
    with pytest.raises(SnapshotError, match=r"snap\.json:\d+: .*values\.mrr: .*from 0 to 1"):
        load_snapshot_file(path)
