"""Hostile input to judging: received settings, stops and vectors; bad numbers and names."""

from __future__ import annotations

import json
import math
import sqlite3
import struct
from pathlib import Path

import pytest

from engine.types import Label, RetrieverSpec, Verdict
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS, run_cli, snapshot


@pytest.fixture
def pooled(tmp_path: Path, capsys) -> Path:
    path = tmp_path / "ws.db"
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.write_labels([Label("q1", "d1", "mina", 2), Label("q2", "d2", "mina", 1)])
    ws.close()
    assert run_cli(capsys, "pool", path, "--retriever", "bm25-word", "--quiet")[0] == 0
    return path


def _sql(path: Path, statement: str) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def test_a_received_workspace_with_an_unknown_judging_order_is_refused_naming_the_row(
    pooled, capsys
):
    _sql(pooled, "INSERT INTO meta(key, value) VALUES ('judging_order', '[bold]evil')")
    before = snapshot(pooled)
    code, _, err = run_cli(capsys, "judging", pooled, "--order", "fused")
    assert code == 2 and "table meta" in err and "judging_order" in err
    assert "[bold]evil" in err  # shown as text, not markup
    assert snapshot(pooled) == before
    code, out, _ = run_cli(capsys, "check", pooled)
    assert code == 2 and "judging_order" in out


@pytest.mark.parametrize(
    "args",
    [
        ["--stop-after", "99999999999"],
        ["--stop-after", "-1"],
        ["--stop-below", "nan"],
        ["--stop-below", "1e400"],
        ["--stop-below", "-0.5"],
        ["--order", "../evil"],
    ],
)
def test_a_judging_setting_no_one_can_mean_is_refused_and_nothing_is_written(pooled, capsys, args):
    before = snapshot(pooled)
    code, _, err = run_cli(capsys, "judging", pooled, *args)
    assert code == 2 and err and snapshot(pooled) == before


def test_simulate_refuses_an_assessor_who_judged_nothing(pooled, capsys):
    code, _, err = run_cli(capsys, "simulate", pooled, "--assessor", "[red]nobody")
    assert code == 2 and "judged nothing" in err and "[red]nobody" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--stop", "5,inf"],
        ["--stop", "99999999999"],
        ["--stop", "5,-1"],
        ["--beyond-pool", "1000000000000"],
        ["--seeds", "1000000000"],
        ["--depth", "0"],
        ["--samples", "10"],  # too few for a verdict at 0.05: no p-value below 1/11
    ],
)
def test_simulate_refuses_non_finite_and_huge_numbers(pooled, capsys, args):
    code, _, err = run_cli(capsys, "simulate", pooled, "--assessor", "mina", *args)
    assert code == 2 and err


def test_simulate_on_a_workspace_never_pooled_says_so(tmp_path, capsys):
    path = tmp_path / "raw.db"
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.write_labels([Label("q1", "d1", "mina", 2)])
    ws.close()
    code, _, err = run_cli(capsys, "simulate", path, "--assessor", "mina")
    assert code == 2 and "goldpan pool" in err


def test_simulate_of_an_assessor_with_no_relevant_document_compares_nothing_and_says_so(
    pooled, capsys
):
    with Workspace.open(pooled) as ws:
        ws.write_verdicts([Verdict("q4", "lee", "no_answer", "")])
    code, out, _ = run_cli(capsys, "simulate", pooled, "--assessor", "lee", "--seeds", "2",
                           "--samples", "20", "--json")  # fmt: skip
    data = json.loads(out)
    assert code == 0 and data["questions_with_pooled_relevant"] == 0
    fused = next(p for p in data["policies"] if p["name"] == "fused")
    assert fused["first_relevant"] == {"mean": None, "median": None, "gap_closed": None}


def test_non_finite_vectors_in_a_received_workspace_never_reach_the_proposals(pooled, monkeypatch):
    """A dense retriever's stored vectors holding NaN and infinity: read as zeros (the
    engine is called directly: pooling a dense retriever would load its model)."""
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from engine.judging.feedback import load_feedback

    with Workspace.open(pooled) as ws:
        spec = RetrieverSpec("dense", "dense", {"model": "no-such-model"})
        ws.add_retriever(spec)
        from engine.retrieve import build_retriever

        key = build_retriever(spec).store_key
        ws.write_embeddings(key, [(d.id, d.hash, [1.0, 0.0]) for d in TINY_DOCS])
        bad = struct.pack("<2f", math.nan, math.inf)
        ws.conn.execute("UPDATE embeddings SET vector = ? WHERE doc_id = 'd3'", (bad,))
        ws.conn.commit()
        feedback = load_feedback(ws, ["q1"])
    assert "dense embeddings" in feedback.method
    scores = feedback.scores("q1", {"d1": 2})
    assert all(math.isfinite(x) for x in scores)
    assert set(feedback.propose("q1", {"d1": 2}, set(), 3)) <= {d.id for d in TINY_DOCS}
