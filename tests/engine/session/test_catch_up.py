"""A session takes in other connections' commits from the event log, not by reloading.

Two sessions (two connections, as two annotators' processes) on one file: what one
commits, the other shows after ``reload_if_changed`` — the same states, gold and live
scores as a session that reads everything afresh — while its count of full reloads stays
put for grades, verdicts, adjudications and a question pooled by another connection, and
moves for what the log cannot say per question (a new retriever, an import).
"""

from __future__ import annotations

import pytest

from engine.retrieve import bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.session.labeling import LabelingSession
from engine.types import Adjudication, CachedRun, Doc, Question
from engine.workspace import Workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS


@pytest.fixture
def pooled(tmp_path):
    path = tmp_path / "ws.db"
    ws = Workspace.create(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.add_retriever(bm25_spec("bm25-word", "word"))
    refresh_runs(ws)
    ws.close()
    return path


def fresh_view(path, annotator):
    """What a session that reads everything now shows: states, judged set, live means."""
    ws = Workspace.open(path, readonly=True)
    try:
        s = LabelingSession(ws, annotator)
        qids = ws.question_ids()
        return (
            {q: (s.state(q).labels, s.state(q).verdicts, s.state(q).gold) for q in qids},
            s.judged_questions(),
            s.live.means(),
            {r: dict(s.live.rankings[r]) for r in s.live.retrievers},
        )
    finally:
        ws.close()


def view(s):
    qids = s.ws.question_ids()
    return (
        {q: (s.state(q).labels, s.state(q).verdicts, s.state(q).gold) for q in qids},
        s.judged_questions(),
        s.live.means(),
        {r: {q: tuple(d) for q, d in s.live.rankings[r].items()} for r in s.live.retrievers},
    )


def test_foreign_grades_verdicts_adjudications_are_taken_in_without_a_reload(pooled):
    a = LabelingSession(Workspace.open(pooled), "mina")
    b = LabelingSession(Workspace.open(pooled), "jun")
    try:
        assert view(b) == fresh_view(pooled, "jun")  # loaded (states and live scores)
        reloads = b.reloads
        a.set_grade("q1", "d1", 3)
        a.set_grade("q2", "d3", 2)
        assert b.reload_if_changed()
        assert view(b) == fresh_view(pooled, "jun")
        a.set_verdict("q4", "no_answer")
        b.set_grade("q1", "d2", 1)  # b's own write notices a's commit before it
        a.ws.write_adjudication(Adjudication("q3", False, {"d3": 2}, "lee"))
        b.reload_if_changed()
        assert view(b) == fresh_view(pooled, "jun")
        a.set_grade("q1", "d2", 0)  # jun in another tab would be `b`; mina here
        b.reload_if_changed()
        assert view(b) == fresh_view(pooled, "jun")
        assert b.reloads == reloads, "a grade, verdict or adjudication reloaded everything"
    finally:
        a.ws.close()
        b.ws.close()


def test_a_question_pooled_elsewhere_is_rescored_without_a_reload(pooled):
    b = LabelingSession(Workspace.open(pooled), "jun")
    try:
        b.set_grade("q2", "d4", 3)
        before = view(b)
        reloads = b.reloads
        other = Workspace.open(pooled)
        try:  # another process re-ranks one question: d4 now first (same inputs)
            made_for = other.run_hashes("bm25-word")["q2"][0]
            run = CachedRun("bm25-word", "q2", ("d4", "d1"), (2.0, 1.0), 1.0, made_for, 10)
            other.write_runs([run])
        finally:
            other.close()
        assert b.reload_if_changed()
        after = view(b)
        assert after == fresh_view(pooled, "jun")
        assert after[3]["bm25-word"]["q2"] == ("d4", "d1") != before[3]["bm25-word"]["q2"]
        assert after[2] != before[2]  # the live means moved with the new ranking
        assert b.reloads == reloads
    finally:
        b.ws.close()


def test_what_the_log_cannot_say_per_question_reloads(pooled):
    b = LabelingSession(Workspace.open(pooled), "jun")
    try:
        _ = b.live  # loaded
        reloads = b.reloads
        other = Workspace.open(pooled)
        try:
            other.add_retriever(bm25_spec("bm25-bigram", "bigram"))
            refresh_runs(other)
        finally:
            other.close()
        b.reload_if_changed()
        assert b.reloads == reloads + 1
        assert "bm25-bigram" in b.live.retrievers
        assert view(b) == fresh_view(pooled, "jun")
        other = Workspace.open(pooled)
        try:
            other.write_docs([Doc("d9", "new", "text")])
            other.write_questions([Question("q9", "new question")])
        finally:
            other.close()
        b.reload_if_changed()
        assert b.reloads == reloads + 2
        assert "q9" in b.live.golds
        assert view(b) == fresh_view(pooled, "jun")
    finally:
        b.ws.close()


def test_commits_that_change_nothing_shown_cost_no_reload(pooled):
    b = LabelingSession(Workspace.open(pooled), "jun")
    try:
        _ = b.live
        reloads = b.reloads
        other = Workspace.open(pooled)
        try:
            with other.transaction():  # a commit with no event (a lease renewed, say)
                other.conn.execute("INSERT INTO meta(key, value) VALUES ('probe', '1')")
        finally:
            other.close()
        assert b.reload_if_changed()
        assert b.reloads == reloads
        assert view(b) == fresh_view(pooled, "jun")
    finally:
        b.ws.close()
