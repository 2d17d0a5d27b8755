"""One meaning per counter: sessions, screens and `goldpan info` agree.

"Judged by you" is a verdict or every candidate graded (not one grade); "disputed" takes
in the ambiguous ones everywhere; the end of a list names the questions left to judge.
"""

from __future__ import annotations

import json
import subprocess
import sys

from textual.widgets import Static

from engine.session.labeling import LabelingSession
from engine.workspace import Workspace
from tests.tui.conftest import APP_SIZE, open_judge, plain, wait_for
from tui.textual_compat import notification_messages
from tui.widgets.candidate_list import CandidateList


def info(path) -> dict:
    """`goldpan info --json`, run as the user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "tui", "info", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def grade_all(s: LabelingSession, qid: str, grade: int) -> None:
    for c in s.candidates(qid):
        s.set_grade(qid, c.doc_id, grade)


def test_two_sessions_counters_agree_with_goldpan_info(demo_ws):
    """Three annotators: grades (one, and all of a pool), verdicts, an adjudication."""
    ann = LabelingSession(Workspace.open(demo_ws), "ann")
    bo = LabelingSession(Workspace.open(demo_ws), "bo")
    cy = LabelingSession(Workspace.open(demo_ws), "cy")
    try:
        first = ann.candidates("q01")[0].doc_id
        ann.set_grade("q01", first, 2)  # one grade of many: not judged
        grade_all(ann, "q02", 0)  # every candidate: judged
        ann.set_verdict("q03", "no_answer")  # a verdict: judged
        grade_all(bo, "q02", 0)
        bo.set_grade("q02", ann.candidates("q02")[0].doc_id, 3)  # bo disagrees with ann
        bo.set_verdict("q04", "ambiguous", "two readings")
        cy.set_verdict("q05", "skip")
        cy.adjudicate("q32", {"pet-qc-08": 2})  # a demo dispute settled
        cy.set_grade("q06", cy.candidates("q06")[0].doc_id, 1)
        for s in (ann, bo, cy):
            s.reload_if_changed()
        told = info(demo_ws)
        assert "q01" not in ann.judged_questions()  # one grade was "judged" before
        assert {"q02", "q03"} <= ann.judged_questions()
        for s in (ann, bo, cy):
            assert len(s.judged_questions()) == told["judged_by"][s.annotator], s.annotator
        assert ann.live.counts()["disputed"] == bo.live.counts()["disputed"]
        assert ann.live.counts()["disputed"] == told["disputed"]
        statuses = told["question_status"]
        assert told["disputed"] == statuses.get("disputed", 0) + statuses.get("ambiguous", 0)
    finally:
        for s in (ann, bo, cy):
            s.ws.close()


async def test_the_screens_count_as_the_engine_does(app_factory, demo_ws):
    """The progress line's count is judged_questions(); the disputed filter lists as
    many questions as the counts line says; one grade does not make a question judged."""
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = app.screen
        await pilot.press(*["f"] * 6)  # the disputed filter
        counts = app.session.live.counts()
        assert screen.query_one("#questions").row_count == counts["disputed"]
        assert f"{counts['disputed']} disputed" in plain(screen.query_one("#filters", Static))
        judge = await open_judge(pilot, "q16")
        await pilot.press("2")
        line = plain(judge.query_one("#progress", Static))
        assert "q16" not in app.session.judged_questions()
        mine = len(app.session.judged_questions())
        assert f"you: {mine}/49 questions judged" in line


async def test_correcting_a_complete_question_stays_and_the_end_names_whats_left(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        app.state.question_order = ["q01", "q02", "q03"]
        judge = await open_judge(pilot, "q03")
        cands = judge.query_one(CandidateList)
        for _ in cands.candidates:
            await pilot.press("0")
        # the last candidate judged: on to the next unjudged one, but none is after q03
        assert judge.question_id == "q03"
        await wait_for(pilot, lambda: any("q01, q02" in n for n in notification_messages(app)))
        assert "q03" in app.session.judged_questions()
        cands.highlighted = 0
        await pilot.press("3")  # a correction: the cursor stays on it, the question too
        assert judge.question_id == "q03" and cands.highlighted == 0


def test_a_gold_import_judges_its_questions_and_a_labels_csv_as_it_was(tmp_path):
    """`info` said "judged by import 0" after an import of 22 gold labels: a gold file
    (qrels, a questions file's gold) states a question's whole gold, so its questions are
    judged by its annotator; a labels CSV holds one annotator's grades as they were."""
    from tests.cli.test_cli_exit import goldpan
    from tests.conftest import TINY_DOCS, write_jsonl

    ws = tmp_path / "w.db"
    write_jsonl(
        tmp_path / "docs.jsonl", [{"id": d.id, "title": d.title, "text": d.text} for d in TINY_DOCS]
    )
    write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"id": "q1", "text": "감쇠 보정은 어떻게 하나", "gold": ["d1:2"]},
            {"id": "q2", "text": "금속 때문에 생기는 문제", "gold": ["d2:1"]},
            {"id": "q3", "text": "화성 탐사선 일정", "no_answer": True},
            {"id": "q4", "text": "점검 공지"},
        ],
    )
    (tmp_path / "qrels.txt").write_text("q4 0 d4 1\n", encoding="utf-8")
    (tmp_path / "labels.csv").write_text(
        "question_id,doc_id,annotator,grade\nq1,d1,jun,2\n", encoding="utf-8"
    )
    for argv in (
        ["new", ws],
        ["import", "docs", ws, tmp_path / "docs.jsonl"],
        ["import", "questions", ws, tmp_path / "q.jsonl"],
        ["import", "qrels", ws, tmp_path / "qrels.txt", "--annotator", "trec"],
        ["import", "labels", ws, tmp_path / "labels.csv"],
        ["pool", ws, "--retriever", "bm25-word", "--quiet"],
    ):
        assert goldpan(tmp_path, *argv).returncode == 0, argv
    told = info(ws)
    # q1, q2 by their gold, q3 by its no-answer verdict; q4's qrels line by trec; jun
    # graded one of q1's candidates in a labels CSV: not a judged question
    assert told["judged_by"] == {"import": 3, "jun": 0, "trec": 1}
    session = LabelingSession(Workspace.open(ws), "import")
    try:
        assert session.judged_questions() == {"q1", "q2", "q3"}
        session.set_grade("q1", "d1", 3)  # a correction keeps the question judged
        assert "q1" in session.judged_questions()
    finally:
        session.ws.close()


async def test_you_reads_what_your_grades_add_up_to(app_factory):
    """Label's "you:" read "-" after every candidate was graded: it names your verdict,
    else how many you found relevant and whether the question is judged (the progress
    line's rule)."""
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        judge = await open_judge(pilot, "q03")
        status = judge.query_one("#status", Static)
        assert plain(status).startswith("you: -   gold:")
        await pilot.press("m")  # auto-advance off: the question stays on screen
        cands = judge.query_one(CandidateList)
        await pilot.press("2")
        assert plain(status).startswith("you: 1 relevant so far   gold:")
        while judge.question_id == "q03" and "q03" not in app.session.judged_questions():
            await pilot.press("down", "0")
        assert judge.question_id == "q03" and len(cands.candidates) > 2
        assert plain(status).startswith("you: judged, 1 relevant   gold:")
        await pilot.press("n")  # a verdict is what you said
        assert plain(status).startswith("you: no_answer   gold:")
