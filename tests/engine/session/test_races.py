"""Races between two sessions on one file: each loser is told, nobody's work is lost.

Two real connections (or processes) on one workspace file, as two annotators in a
terminal and a browser tab (``goldpan serve``) have them.
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any

import pytest

from engine.session.labeling import LabelingSession
from engine.workspace import Workspace
from engine.workspace.team import LogQueryDecided
from tests.conftest import querylog_rows

QUERY = {
    "text": "감쇠 보정 주기",
    "norm": "감쇠 보정 주기",
    "count": 7,
    "band": "head",
    "variants": [],
}


def keep_logged_query(path: str, who: str, ready: Any, out: Any) -> None:
    """One annotator's process: take the waiting query, wait for the other, keep it."""
    from engine.querylog import question_from_log

    ws = Workspace.open(Path(path))
    try:
        row = ws.next_log_query()
        assert row is not None
        ready.wait(timeout=60)  # both have read the query as pending
        try:
            q, status = question_from_log(ws, row, row["text"], ["from-log"], who)
            out.put((who, status, q.id))
        except LogQueryDecided as exc:
            out.put((who, "refused", str(exc)))
    finally:
        ws.close()


def test_two_processes_keeping_one_logged_query_make_one_question(tiny_ws):
    with Workspace.open(tiny_ws) as ws:
        ws.write_querylog([QUERY], "log.txt")
        (log_id,) = [r["id"] for r in querylog_rows(ws)]
    ctx = mp.get_context("spawn")
    ready, out = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(target=keep_logged_query, args=(str(tiny_ws), who, ready, out))
        for who in ("kim", "lee")
    ]
    for p in procs:
        p.start()
    results = sorted(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    outcomes = sorted(r[1] for r in results)
    assert outcomes == ["kept", "refused"], results
    winner = next(r for r in results if r[1] == "kept")
    loser = next(r for r in results if r[1] == "refused")
    assert winner[0] in loser[2] and winner[2] in loser[2]  # who kept it, as which question
    with Workspace.open(tiny_ws, readonly=True) as ws:
        from_log = [q for q in ws.questions() if q.text == QUERY["text"]]
        assert [q.id for q in from_log] == [winner[2]]
        (row,) = querylog_rows(ws)
        assert (row["id"], row["status"], row["question_id"]) == (log_id, "kept", winner[2])


def test_a_decided_logged_query_is_not_decided_again(tiny_ws):
    with Workspace.open(tiny_ws) as ws:
        ws.write_querylog([QUERY], "log.txt")
        row = ws.next_log_query()
        assert row is not None
        ws.decide_log_query(int(row["id"]), "discarded", "kim")
        with pytest.raises(LogQueryDecided, match="kim discarded"):
            ws.decide_log_query(int(row["id"]), "discarded", "lee")
        from engine.querylog import question_from_log

        n = len(ws.questions())
        with pytest.raises(LogQueryDecided, match="kim discarded"):
            question_from_log(ws, row, row["text"], [], "lee")
        assert len(ws.questions()) == n  # nothing written


def test_undo_in_one_tab_leaves_the_other_tabs_grade(tiny_ws):
    """One annotator in two tabs: two sessions, two connections, one name."""
    a = LabelingSession(Workspace.open(tiny_ws), "kim")
    b = LabelingSession(Workspace.open(tiny_ws), "kim")
    try:
        a.set_grade("q4", "d4", 2)
        a.set_grade("q4", "d3", 1)
        b.set_grade("q4", "d4", 3)  # the other tab regrades the same document
        assert a.undo() is not None  # undoes a's own d3 grade, which still stands
        assert a.undo() is None  # a's d4 grade was replaced by b's: not a's to undo
        with Workspace.open(tiny_ws, readonly=True) as ws:
            assert {(lab.doc_id, lab.grade) for lab in ws.labels_for("q4")} == {("d4", 3)}
        assert b.undo() is not None  # b undoes its own: back to a's 2
        with Workspace.open(tiny_ws, readonly=True) as ws:
            assert {(lab.doc_id, lab.grade) for lab in ws.labels_for("q4")} == {("d4", 2)}
    finally:
        a.ws.close()
        b.ws.close()


def test_undo_leaves_a_verdict_and_a_text_the_other_tab_changed(tiny_ws):
    a = LabelingSession(Workspace.open(tiny_ws), "kim")
    b = LabelingSession(Workspace.open(tiny_ws), "kim")
    try:
        a.set_verdict("q4", "no_answer")
        b.set_verdict("q4", "skip")
        a.edit_question("q2", "금속 인공물은 왜 생기나", None)
        b.edit_question("q2", "금속 인공물 보정", None)
        assert a.undo() is None
        with Workspace.open(tiny_ws, readonly=True) as ws:
            assert [v.verdict for v in ws.verdicts_for("q4")] == ["skip"]
            q = ws.question("q2")
            assert q is not None and q.text == "금속 인공물 보정"
    finally:
        a.ws.close()
        b.ws.close()
