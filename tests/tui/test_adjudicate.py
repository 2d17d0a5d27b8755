"""Pilot tests of the adjudicate screen on the demo's disputes."""

from __future__ import annotations

import sqlite3

from textual.widgets import DataTable, Input, Static

from tests.tui.conftest import APP_SIZE
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.modals import PromptScreen


def adjudication(path, qid):
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT no_answer, gold, by, note FROM adjudications WHERE question_id = ?", (qid,)
        ).fetchone()
    finally:
        conn.close()


async def open_adjudicate(pilot, qid: str | None = None) -> AdjudicateScreen:
    await pilot.press("d")
    screen = pilot.app.screen
    assert isinstance(screen, AdjudicateScreen)
    if qid is not None:
        table = screen.query_one("#adjudicate-list", DataTable)
        table.move_cursor(row=table.get_row_index(qid))
        await pilot.pause()
    return screen


async def test_disputes_come_first_with_both_sides(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_adjudicate(pilot)
        listed = [str(k.value) for k in screen.query_one("#adjudicate-list", DataTable).rows]
        assert listed == ["q32", "q33", "q34", "q35", "q42", "q36"]  # disputed, then ambiguous
        sides = screen.query_one("#sides", DataTable)
        headers = [str(c.label) for c in sides.columns.values()]
        assert headers == ["document", "title", "1 jun", "2 mina", "final"]
        # q32: jun marks pet-qc-08 relevant, mina judged it 0
        row = sides.get_row("pet-qc-08")
        assert (str(row[2]), str(row[3]), str(row[4])) == ("1", "0", "·")
        assert "κ" in str(screen.query_one("#agreement", Static).render())


async def test_take_a_side_union_intersection_by_hand(app_factory, demo_ws):
    app = app_factory(annotator="lee")
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_adjudicate(pilot, "q35")
        # jun: R1 2, R2 3; mina: R1 0, R2 3
        await pilot.press("2")  # mina's side: R2 only
        no_answer, gold, by, note = adjudication(demo_ws, "q35")
        assert (no_answer, gold, by, note) == (0, '{"manual-r2":3}', "lee", "took mina's side")
        # settled: the cursor moved on to the next question to settle
        assert screen.question_id == "q42" == app.state.current_question
        assert "q42" in str(screen.query_one("#adjudicate-question", Static).render())
        app.state.auto_advance = False  # stay on q35 for the other decisions
        await open_adjudicate(pilot, "q35")
        await pilot.press("u")  # union: R1 (jun's 2) and R2
        assert adjudication(demo_ws, "q35")[1] == '{"manual-r1":2,"manual-r2":3}'
        await pilot.press("i")  # intersection: R2 only
        assert adjudication(demo_ws, "q35")[1] == '{"manual-r2":3}'
        sides = screen.query_one("#sides", DataTable)
        sides.move_cursor(row=sides.get_row_index("manual-r1"))
        await pilot.press("plus")  # R1 by hand: 0 -> 1
        assert adjudication(demo_ws, "q35")[1] == '{"manual-r1":1,"manual-r2":3}'
        await pilot.press("minus")  # back to 0: not gold
        assert adjudication(demo_ws, "q35")[1] == '{"manual-r2":3}'
        assert str(sides.get_row("manual-r2")[-1]) == "3"
        # settled: it leaves the disputed group, and the review counts it as scored
        assert str(screen.query_one("#adjudicate-list", DataTable).get_row("q35")[1]) == (
            "adjudicated"
        )
        assert app.session.live.counts()["disputed"] == 5


async def test_no_answer_and_split(app_factory, demo_ws):
    app = app_factory(annotator="lee")
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_adjudicate(pilot, "q42")
        await pilot.press("n")
        assert adjudication(demo_ws, "q42")[0] == 1
        assert app.session.live.golds["q42"].status.value == "no_answer"
        await pilot.press("x")
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = "R2에서 바뀐 오염 검사 주기"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        conn = sqlite3.connect(demo_ws)
        row = conn.execute("SELECT text, tags FROM questions WHERE id = 'w0001'").fetchone()
        runs = conn.execute("SELECT count(*) FROM runs WHERE question_id = 'w0001'").fetchone()
        conn.close()
        assert row[0] == "R2에서 바뀐 오염 검사 주기" and "split" in row[1]
        assert runs[0] == 4  # pooled at once
