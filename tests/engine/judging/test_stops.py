# subprocess: a process that saves stops is killed with kill -9 (an engine entry, python -c).
"""Stops and proposals through the labeling session: saved at once, shared, undone, kept."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.counters import workspace_stopped
from engine.judging.settings import set_judging, workspace_judging
from engine.session.labeling import LabelingSession
from engine.types import Question
from engine.workspace import Workspace
from tests.engine.test_crash import kill_after_lines

RUNS = {"q1": ["d1", "d2", "d3", "d4"], "q2": ["d2", "d3"]}


@pytest.fixture
def pooled(tiny_ws: Path) -> Path:
    """tiny_ws with one retriever's rankings of q1 and q2 (no labels of annotator ara)."""
    from engine.types import CachedRun

    with Workspace.open(tiny_ws) as ws:
        ws.write_runs(
            CachedRun(
                "bm25-word",
                q,
                tuple(docs),
                tuple(float(9 - i) for i in range(len(docs))),
                1.0,
                "h",
                100,
            )
            for q, docs in RUNS.items()
        )
    return tiny_ws


def test_a_stop_is_saved_counted_undone_and_seen_by_another_session(pooled):
    with Workspace.open(pooled) as ws, Workspace.open(pooled) as other_ws:
        me, other = LabelingSession(ws, "ara"), LabelingSession(other_ws, "bo")
        me.set_grade("q1", "d1", 1)
        me.stop("q1", "5 not relevant in a row")
        assert "q1" in me.judged_questions()  # a stop judges the question for its annotator
        # d1 judged (by mina and ara), d2 judged by mina: d3 and d4 are not judged (stopped)
        assert workspace_stopped(ws) == {"q1": 2} and me.stopped() == {"q1": 2}
        other.reload_if_changed()
        assert other.state("q1").stopped and other.state("q1").stop is None  # not bo's
        assert other.stopped() == {"q1": 2}
        change = me.undo()
        assert change is not None and change.kind == "stop"
        assert not me.state("q1").stopped and workspace_stopped(ws) == {}
        other.reload_if_changed()
        assert not other.state("q1").stopped


def test_a_new_question_text_leaves_the_stop_to_the_old_text_and_undo_brings_it_back(pooled):
    with Workspace.open(pooled) as ws:
        me = LabelingSession(ws, "ara")
        me.stop("q1", "r")
        me.edit_question("q1", "감쇠 보정 원리는?", None)
        assert workspace_stopped(ws) == {} and not me.state("q1").stopped
        me.undo()
        assert workspace_stopped(ws) == {"q1": 2}


def test_proposals_join_the_candidates_first_among_those_not_judged(pooled):
    with Workspace.open(pooled) as ws:
        me = LabelingSession(ws, "ara")
        me.set_grade("q2", "d2", 1)
        me.add_proposals("q2", ["d4", "d1"], "rocchio (test)")
        shown = me.candidates("q2")
        assert [c.doc_id for c in shown][:3] == ["d2", "d4", "d1"]
        assert {c.doc_id for c in shown if c.found_by_feedback} == {"d4", "d1"}
        assert not any(c.added_by_search for c in shown if c.found_by_feedback)  # no mark
        assert "q2" not in me.judged_questions()  # the proposals are to judge too
        for d in ("d4", "d1", "d3"):
            me.set_grade("q2", d, 0)
        assert "q2" in me.judged_questions()


def test_the_order_follows_the_workspaces_setting(pooled):
    with Workspace.open(pooled) as ws:
        assert workspace_judging(ws).order == "maxmean"
        set_judging(ws, order="hash", stop_after=3, stop_below=0, by="ara")
        me = LabelingSession(ws, "ara")
        assert me.judging.order == "hash" and me.judging.rule.after == 3
        from engine.pooling import blind_key

        assert [c.doc_id for c in me.candidates("q1")] == sorted(
            RUNS["q1"], key=lambda d: blind_key("q1", d)
        )


def test_a_stop_shown_as_saved_survives_kill_9(pooled, tmp_path):
    """A process stops questions round and round, printing each stop once saved; killed.

    Every stop printed is in the file, or a later one of the same question (the write in
    flight when the signal came may have committed)."""
    with Workspace.open(pooled) as ws:
        ws.write_questions([Question(f"s{i}", f"question {i}") for i in range(200)])
    log = tmp_path / "stopper.log"
    script = textwrap.dedent(
        f"""
        import itertools
        from pathlib import Path
        from engine.session.labeling import LabelingSession
        from engine.workspace import Workspace
        ws = Workspace.open(Path({str(pooled)!r}))
        s = LabelingSession(ws, "ara")
        for i in itertools.count():
            s.stop(f"s{{i % 200}}", f"round {{i}}")
            print("saved", f"s{{i % 200}}", i, flush=True)
        """
    )
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=err, cwd=Path.cwd()
        )
        seen = kill_after_lines(proc, 20, log)
    saved: dict[str, int] = {}
    for line in seen:
        parts = line.split()
        if line.endswith("\n") and len(parts) == 3 and parts[0] == "saved":
            saved[parts[1]] = int(parts[2])
    with Workspace.open(pooled, readonly=True) as ws:
        stored = {s.question_id: int(s.rule.split()[1]) for s in ws.stops() if s.annotator == "ara"}
    assert saved and all(stored.get(q, -1) >= i for q, i in saved.items())
