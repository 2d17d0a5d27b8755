"""The Label screen shows no rank, score or retriever name in any judging order, and a
stopped question counts as stopped everywhere (Questions, Review, score, queue, info)."""

from __future__ import annotations

import json
import re

import pytest
from textual.widgets import DataTable, Static

from engine.judging.order import ORDERS
from engine.judging.settings import set_judging
from engine.workspace import Workspace
from tests.conftest import run_cli
from tests.tui.conftest import APP_SIZE, open_judge, plain, wait_for
from tui.screens.questions import QuestionsScreen
from tui.screens.review import ReviewScreen
from tui.widgets.candidate_list import CandidateList
from tui.widgets.lines import Lines

QUESTION = "q16"


@pytest.mark.parametrize("order", ORDERS)
async def test_the_label_screen_shows_no_rank_score_or_retriever_in_any_order(
    order, app_factory, demo_ws
):
    with Workspace.open(demo_ws) as ws:
        set_judging(ws, order=order, by="test")
        names = [s.name for s in ws.retrievers()]
        titles = {d.id: d.title for d in ws.docs()}
        runs = ws.all_runs()
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, QUESTION)
        await pilot.press("1", "0")  # feedback for the adaptive orders
        candidates = screen.query_one(CandidateList)
        await wait_for(pilot, lambda: candidates.option_count > 0)
        assert app.session.judging.order == order
        prompts = []
        for i, c in enumerate(candidates.candidates):
            shown = str(candidates.get_option_at_index(i).prompt)
            prompts.append(shown)
            # the grade mark, the title and the id: nothing else (no rank, no score)
            assert re.fullmatch(r"\[[ 0-3]\] .*  \S+( \+)?", shown), shown
            assert shown.split("] ", 1)[1].startswith(titles[c.doc_id][:20].split("\n")[0])
        svg = app.export_screenshot()
        for name in names:
            assert name not in svg  # no retriever name anywhere on the screen
        text = plain(screen.query_one("#status", Lines)) + "\n".join(prompts)
        for word in ("rank", "score", "bm25", "dense"):
            assert word not in text.lower()
        # the order is a priority order of the pool (every pooled document, once)
        pooled = {d for per in runs.values() for d in per[QUESTION][:10]}
        assert pooled <= {c.doc_id for c in candidates.candidates}


async def test_a_stopped_question_counts_as_stopped_everywhere(app_factory, demo_ws, capsys):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, QUESTION)
        await pilot.press("1")
        for _ in range(12):  # not relevant until the stop is offered
            if screen.offer is not None:
                break
            await pilot.press("0")
        assert screen.offer is not None and screen.stoppable
        status = plain(screen.query_one("#status", Lines))
        assert "x stops" in status
        left = screen.offer.left
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.question_id != QUESTION)  # auto-advance
        assert app.session.stopped() == {QUESTION: left}
        # Questions: the status cell and the counts line
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuestionsScreen))
        table = app.screen.query_one(DataTable)
        row = table.get_row(QUESTION)
        assert str(row[1]).endswith(" stopped")
        assert f"1 stopped ({left} not judged)" in plain(app.screen.query_one("#filters", Lines))
        # Review: the counts line
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        counts = plain(app.screen.query_one("#review-counts", Static))
        assert f"1 stopped ({left} not judged)" in counts
    # and the command line, on the same file
    score = json.loads(run_cli(capsys, "score", demo_ws, "--json", "--no-pool")[1])
    assert (score["questions"]["stopped"], score["questions"]["not_judged_stopped"]) == (1, left)
    info = json.loads(run_cli(capsys, "info", demo_ws, "--json")[1])
    assert info["stopped"] == {"questions": 1, "candidates": left}
    queue = json.loads(run_cli(capsys, "queue", demo_ws, "--json")[1])["queue"]
    mine = [i for i in queue if i["question"] == QUESTION]
    assert mine and mine[0]["stopped"] == left and mine[0]["reason"] in ("stopped", "adjudicate")
