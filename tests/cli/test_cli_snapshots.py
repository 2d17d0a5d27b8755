"""goldpan snapshot and score --against on the tiny workspace: shapes, causes, files, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.types import Label
from engine.workspace import Workspace
from tests.conftest import snapshot as table_rows
from tui.cli import main


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_snapshot_forms(tiny_ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(tiny_ws)
    assert main(["snapshot", ws, "base", "--retriever", "bm25-word"]) == 0
    assert main(["snapshot", "save", ws, "second", "--retriever", "bm25-word"]) == 0
    assert main(["snapshot", ws, "base"]) == 2  # the name is taken
    assert "already exists" in capsys.readouterr().err
    assert main(["snapshot", ws, "base", "--replace", "--retriever", "bm25-word"]) == 0
    listed = run_json(capsys, ["snapshot", "list", ws, "--json"])
    assert isinstance(listed, list) and [s["name"] for s in listed] == ["second", "base"]
    shown = run_json(capsys, ["snapshot", "show", ws, "base", "--json"])
    assert isinstance(shown, dict) and shown["questions"] == 3
    assert set(shown["retrievers"]) == {"bm25-word"}
    board = run_json(capsys, ["score", ws, "--json", "--retriever", "bm25-word"])
    assert isinstance(board, dict)
    assert shown["retrievers"]["bm25-word"]["mrr"] == board["retrievers"]["bm25-word"]["mrr"]
    out = tmp_path / "base.json"
    assert main(["snapshot", "export", ws, "base", "--out", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["goldpan_snapshot"] == 1 and set(data["golds"]) == {"q1", "q2", "q3"}
    assert main(["snapshot", "remove", ws, "base"]) == 0
    assert main(["snapshot", "remove", ws, "base"]) == 2
    assert main(["snapshot", "show", ws]) == 2  # NAME missing
    assert main(["snapshot", "list", ws, "extra"]) == 2
    # the exported file still serves as --against, with nothing changed: exit 0
    argv = ["score", ws, "--against", str(out), "--fail-on-regression", "--retriever", "bm25-word"]
    assert main(argv) == 0


WORD = ["--retriever", "bm25-word"]


def test_labels_changed_is_told_apart(tiny_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(tiny_ws)
    # the snapshot's one retriever: the others, never pooled, have ranked no question
    assert main(["snapshot", ws, "base", *WORD]) == 0
    before = run_json(capsys, ["score", ws, "--against", "base", "--json", "--no-pool", *WORD])
    assert isinstance(before, dict)
    assert all(not r["regressed"] and not r["improved"] for r in before["retrievers"].values())
    # the gold of q1 moves from d1 to d4 (which no retriever ranks first)
    w = Workspace.open(tiny_ws)
    ranks_then = {r: w.runs(r)["q1"].doc_ids for r in ("bm25-word",)}
    w.write_labels([Label("q1", "d1", "mina", 0), Label("q1", "d4", "mina", 2)])
    w.close()
    after = run_json(capsys, ["score", ws, "--against", "base", "--json", "--no-pool", *WORD])
    assert isinstance(after, dict)
    assert after["labels_changed"] == ["q1"]
    word = after["retrievers"]["bm25-word"]
    moved = word["regressed"] + word["improved"]
    assert [m["question"] for m in moved] == ["q1"]
    assert moved[0]["cause"] == "labels"
    assert moved[0]["winner"] == ranks_then["bm25-word"][0]
    assert set(word["metrics"]["mrr"]) == {"now", "then", "diff", "ci95", "p_value", "verdict"}
    # a lost or worse gold fails the gate, whatever the cause
    rc = main(["score", ws, "--against", "base", "--no-pool", "--fail-on-regression", *WORD])
    assert rc == (1 if word["regressed"] else 0)


def test_bad_against_and_flags(
    tiny_ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(tiny_ws)
    before = table_rows(tiny_ws)
    assert main(["score", ws, "--against", "nothing"]) == 2
    assert "neither a snapshot" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"goldpan_snapshot": 1,\n "metrics": [}', encoding="utf-8")
    assert main(["score", ws, "--against", str(bad)]) == 2
    assert f"{bad}:2" in capsys.readouterr().err
    bad.write_text('{"goldpan_snapshot": 1, "metrics": ["mrr"], "golds": {}, '
                   '"retrievers": {"x": {"questions": {"q1": {"rank": -1}}}}}')  # fmt: skip
    assert main(["score", ws, "--against", str(bad)]) == 2
    assert "not a goldpan snapshot" in capsys.readouterr().err
    assert main(["score", ws, "--fail-on-regression"]) == 2
    assert main(["snapshot", ws, "base", "--retriever", "bm25-word"]) == 0
    assert main(["score", ws, "--against", "base", "--tolerance", "2"]) == 2
    assert main(["score", ws, "--against", "base", "--fail-under", "mrr=0.1"]) == 2
    assert main(["snapshot", "export", ws, "base"]) == 2  # --out missing
    assert main(["snapshot", ws, "two words"]) == 2
    after = table_rows(tiny_ws)
    for rows in (before, after):  # pooling logs its rankings as "ranked" events
        rows["events"] = [e for e in rows["events"] if "ranked" not in e]
    assert {k: v for k, v in after.items() if k not in ("snapshots", "runs", "bm25_counts")} == {
        k: v for k, v in before.items() if k not in ("snapshots", "runs", "bm25_counts")
    }


def test_damaged_snapshot_row_names_the_table(
    tiny_ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(tiny_ws)
    assert main(["snapshot", ws, "base", "--retriever", "bm25-word"]) == 0
    w = Workspace.open(tiny_ws)
    w.conn.execute("UPDATE snapshots SET data = '{broken' WHERE name = 'base'")
    w.conn.commit()
    w.close()
    capsys.readouterr()
    assert main(["score", ws, "--against", "base", "--no-pool"]) == 2
    assert "table snapshots, row 'base'" in capsys.readouterr().err
    assert main(["snapshot", "show", ws, "base"]) == 2
    assert main(["snapshot", "remove", ws, "base"]) == 0  # a damaged one can be removed
