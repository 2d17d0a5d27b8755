"""A model judge's grades in the app: beside the people in Adjudicate, on the Label screen
only when asked, never gold until a person adopts them."""

from __future__ import annotations

import json
import sqlite3

from textual.widgets import DataTable, Static

from engine.types import ModelJudge, ModelLabel
from engine.workspace import Workspace
from tests.tui.conftest import APP_SIZE, open_judge, plain
from tests.tui.test_adjudicate import adjudication, open_adjudicate
from tui.widgets.candidate_list import CandidateList

MODEL = "model:fake"


def judge_demo(path, grades: dict[tuple[str, str], int]) -> None:
    """Store a model judge's grades as `goldpan judge` does (one run)."""
    with Workspace.open(path) as ws:
        judge = ModelJudge(MODEL, "command", "fake-judge", {})
        labels = [ModelLabel(q, d, MODEL, g) for (q, d), g in grades.items()]
        ws.write_model_judgment(judge, labels, {q for q, _ in grades})


def prompts(screen) -> list[str]:
    cands = screen.query_one(CandidateList)
    return [str(cands.get_option_at_index(i).prompt) for i in range(cands.option_count)]


async def test_adjudicate_shows_the_model_beside_the_people_and_adopting_is_a_persons_act(
    app_factory, demo_ws
):
    # q35 is disputed (jun: manual-r1 2, manual-r2 3; mina: manual-r1 0, manual-r2 3).
    # q01 is labeled by both people; the model says its gold document is not relevant.
    with Workspace.open(demo_ws) as ws:
        q01 = {lab.doc_id: lab.grade for lab in ws.labels_for("q01")}
    gold01 = next(d for d, g in q01.items() if g >= 1)
    judge_demo(
        demo_ws,
        {("q35", "manual-r1"): 0, ("q35", "manual-r2"): 2, ("q01", gold01): 0},
    )
    app = app_factory(annotator="lee")
    async with app.run_test(size=APP_SIZE) as pilot:
        disputed = app.session.live.counts()["disputed"]
        screen = await open_adjudicate(pilot)
        table = screen.query_one("#adjudicate-list", DataTable)
        listed = [str(k.value) for k in table.rows]
        # the people's disputes first, then the question the model differs on
        assert listed[:6] == ["q32", "q33", "q34", "q35", "q42", "q36"]
        assert listed[6] == "q01" and str(table.get_row("q01")[1]) == "model differs"
        assert app.session.live.counts()["disputed"] == disputed  # not counted as disputed
        await open_adjudicate(pilot, "q35")
        sides = screen.query_one("#sides", DataTable)
        headers = [c.label for c in sides.columns.values()]
        assert [str(h) for h in headers] == [
            "document",
            "title",
            "1 jun",
            "2 mina",
            f"3 {MODEL}",
            "final",
        ]
        assert "italic" in str(headers[4].style)  # set apart from the people
        row = sides.get_row("manual-r2")
        assert (str(row[2]), str(row[3]), str(row[4])) == ("3", "3", "2")
        assert f"{MODEL}–gold" in plain(screen.query_one("#agreement", Static))
        assert adjudication(demo_ws, "q35") is None
        app.state.auto_advance = False
        await pilot.press("3")  # the model's side, adopted by lee
        no_answer, gold, by, note = adjudication(demo_ws, "q35")
        assert (no_answer, json.loads(gold), by) == (0, {"manual-r2": 2}, "lee")
        assert MODEL in note and "adopted" in note
        assert app.session.gold("q35").adjudicated
        # `g`: one document's final grade from the model, on q01
        await open_adjudicate(pilot, "q01")
        sides.move_cursor(row=sides.get_row_index(gold01))
        await pilot.press("g")
        assert json.loads(adjudication(demo_ws, "q01")[1]) == {}  # the model said 0
        assert app.session.gold("q01").adjudicated


async def test_the_label_screen_shows_model_grades_only_when_asked(app_factory, demo_ws):
    with Workspace.open(demo_ws) as ws:
        docs = sorted({lab.doc_id for lab in ws.labels_for("q01")})
    judge_demo(demo_ws, {("q01", docs[0]): 3, ("q01", docs[1]): 1})
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q01")
        before = prompts(screen)
        assert not any(" m" in p.split("]")[1][:3] for p in before)  # nothing by default
        assert "model" not in plain(screen.query_one("#status"))
        await pilot.press("g")
        shown = prompts(screen)
        marks = {p.split()[-1]: p.split("]")[1].split()[0] for p in shown}
        assert marks[docs[0]] == "m3" and marks[docs[1]] == "m1"
        assert all(m == "m·" for d, m in marks.items() if d not in docs[:2])
        assert f"model grades shown ({MODEL}" in plain(screen.query_one("#status"))
        # another question keeps them shown while asked; g hides them again
        await pilot.press("right_square_bracket")
        assert all("m·" in p for p in prompts(screen))
        await pilot.press("g")
        assert prompts(screen)[0].split("]")[1][:3] != " m·"
        assert "model" not in plain(screen.query_one("#status"))
    conn = sqlite3.connect(demo_ws)
    try:  # looking changed nothing
        assert conn.execute("SELECT count(*) FROM model_labels").fetchone() == (2,)
    finally:
        conn.close()
