"""Corpus, question, tag and annotator text that looks like Rich markup, Textual content
markup, ``$variables`` or ANSI escape sequences shows literally on every screen.

Every check reads what the screen would paint (the compositor's strips), so it sees
exactly the characters that would reach the terminal: the literal markup must be there,
and no ESC byte from the data (control characters show as their pictures, ESC as ``␛``).

tests/security/test_screens_show_escapes_as_pictures.py checks every escape family.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input

from engine.retrieve import bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.types import Doc, Label, Question, Verdict
from engine.workspace_setup import new_workspace
from tests.tui.conftest import APP_SIZE, wait_for
from tui.app import GoldpanApp
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.judge import JudgeScreen
from tui.screens.modals import PromptScreen, SearchScreen
from tui.screens.review import PANELS, ReviewScreen
from tui.screens.write import WriteScreen
from tui.textual_compat import screen_text

CLEAR = "\x1b[2J"  # erase the screen, if a terminal ever received it from the data
RED = "\x1b[31m"

Q1, Q2, Q3 = "[i]q1[/i]", f"q{CLEAR}2", "$q3"
D1, D2, D3 = "[b]d1[/b]", "$d2", f"d{RED}3"
KIM, LEE = "[b]kim[/b]", f"lee{CLEAR}"
RETRIEVER = f"[red]r[/red]{CLEAR}"

DOCS = [
    Doc(D1, "[bold red]T1[/]", "감쇠 보정 원리 [link=https://e.x]y[/link] 끝", {"series": "[s]"}),
    Doc(D2, "[link=https://e.x]T2[/link]", f"금속 인공물 $accent [$accent]z[/] {RED}red", {}),
    Doc(D3, f"$accent T3 {RED}x", "점검 공지 [@click=app.quit]quit[/] 절차", {}),
]
QUESTIONS = [
    Question(Q1, "감쇠 보정 [bold]x[/] $accent", ("[red]hard[/red]",)),
    Question(Q2, f"금속 인공물 {RED}red [link=https://e.x]y[/link]", ("easy",)),
    Question(Q3, "점검 공지 [@click=app.quit]q[/]", ()),
]


@pytest.fixture
def hostile_ws(tmp_path: Path) -> Path:
    """Markup and escapes in ids, titles, text, tags, annotators and notes; pooled."""
    path = tmp_path / "hostile.db"
    ws = new_workspace(path)
    ws.write_docs(DOCS)
    ws.write_questions(QUESTIONS)
    ws.write_labels(
        [
            Label(Q1, D1, KIM, 2),  # kim and lee disagree on Q1: disputed
            Label(Q1, D2, LEE, 1),
            Label(Q2, D3, KIM, 2),  # they agree on Q2 (scored), and D2 beats D3 at rank 1
            Label(Q2, D3, LEE, 2),
            Label(Q3, D3, KIM, 1),
        ]
    )
    ws.write_verdicts([Verdict(Q3, KIM, "ambiguous", f"[b]two readings[/b] {RED}")])
    ws.add_retriever(bm25_spec(RETRIEVER, "bigram"))
    refresh_runs(ws)
    ws.close()
    return path


def painted(app: GoldpanApp) -> str:
    """What the current screen paints, line by line; never an ESC from the data."""
    text = screen_text(app.screen)
    assert "\x1b" not in text, [line for line in text.splitlines() if "\x1b" in line]
    return text


def assert_shown(app: GoldpanApp, *pieces: str) -> str:
    text = painted(app)
    missing = [p for p in pieces if p not in text]
    assert not missing, (missing, text)
    return text


async def test_questions_screen(app_factory, hostile_ws):
    app = app_factory(hostile_ws)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        assert_shown(
            app,
            Q1,
            "q␛[2J2",
            Q3,
            "감쇠 보정 [bold]x[/] $accent",
            "금속 인공물 ␛[31mred [link=https://e.",  # the column is 70 cells wide
            "점검 공지 [@click=app.quit]q[/]",
            "[red]hard[/red]",
        )  # the annotators' column gives way to the question's text: the view line shows KIM
        await pilot.press("t")  # the tag filter names the tag
        assert_shown(app, "tag: [red]hard[/red]")
        await pilot.press("t", "t", "v")  # back to all tags; kim's view
        assert_shown(app, f"view: {KIM}")
        await pilot.press("v")
        assert_shown(app, "view: lee␛[2J")


async def test_judge_screen_search_and_prompts(app_factory, hostile_ws):
    app = app_factory(hostile_ws)
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge(Q1)
        await pilot.pause()
        assert isinstance(app.screen, JudgeScreen)
        assert_shown(app, Q1, "#[red]hard[/red]", "감쇠 보정 [bold]x[/] $accent", KIM, "lee␛[2J")
        # every pooled candidate, and each document's head and body in turn
        marker = {D1: "원리", D2: "인공물", D3: "절차"}  # words of one body only
        shown: dict[str, str] = {}
        for qid in (Q1, Q3):
            await pilot.press("q")
            app.judge(qid)
            await pilot.pause()
            for _ in range(len(DOCS)):
                head = painted(app)
                shown.update({d: head for d, word in marker.items() if word in head})
                await pilot.press("j")
        assert set(shown) == {D1, D2, D3}
        assert "[bold red]T1[/]  [b]d1[/b]" in shown[D1]
        assert "감쇠 보정 원리 [link=https://e.x]y[/link] 끝" in shown[D1]
        assert "series: [s]" in shown[D1]
        assert "[link=https://e.x]T2[/link]  $d2" in shown[D2]
        assert "금속 인공물 $accent [$accent]z[/] ␛[31mred" in shown[D2]
        assert "$accent T3 ␛[31mx  d␛[31m3" in shown[D3]
        assert "점검 공지 [@click=app.quit]quit[/] 절차" in shown[D3]
        app.state.auto_advance = False  # stay on the question to read its note
        await pilot.press("k", "k", "1")  # a label and a note that look like markup
        await pilot.press("a")
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = "[b]note[/b] $accent"
        await pilot.press("enter")
        assert isinstance(app.screen, JudgeScreen)
        assert_shown(app, "you: ambiguous", "note: [b]note[/b] $accent")
        await pilot.press("e")  # the question's text to edit
        assert isinstance(app.screen, PromptScreen)
        field = app.screen.query_one(Input)
        assert field.value == "점검 공지 [@click=app.quit]q[/]"
        await pilot.press("escape", "q")
        app.judge(Q2)
        await pilot.pause()
        assert_shown(app, "q␛[2J2", "금속 인공물 ␛[31mred [link=https://e.x]y[/link]")
        await pilot.press("e")  # control characters are edited as their pictures
        field = app.screen.query_one(Input)
        assert field.value == "금속 인공물 ␛[31mred [link=https://e.x]y[/link]"
        await pilot.press("enter")  # unchanged: no edit is recorded
        await pilot.pause()
        assert app.ws.question(Q2).text == QUESTIONS[1].text
        await pilot.press("slash")
        assert isinstance(app.screen, SearchScreen)
        results = app.screen.query_one("#search-results")
        await wait_for(pilot, lambda: results.option_count >= 2)
        assert_shown(app, "[link=https://e.x]T2[/link]", D2)
        await pilot.press("escape")


async def test_writing_a_question_that_looks_like_markup(app_factory, hostile_ws):
    app = app_factory(hostile_ws)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("w")
        assert isinstance(app.screen, WriteScreen)
        app.screen.query_one("#write-text", Input).value = "[bold]w[/bold] $accent [@click=x]y[/]"
        app.screen.query_one("#write-tags", Input).value = "[red]t[/red]"
        await pilot.pause()
        painted(app)
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, JudgeScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert_shown(app, "[bold]w[/bold] $accent [@click=x]y[/]", "#[red]t[/red]")


async def test_review_screen_and_every_panel(app_factory, hostile_ws):
    app = app_factory(hostile_ws)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        # Q2 is the one scored question: its id, text, gold and the rank-1 document
        assert_shown(
            app,
            "[red]r[/red]␛[2J",
            "q␛[2J2",
            "금속 인공물 ␛[31mred",
            "[link=https://e.x]y[/link]",
            "gold: d␛[31m3 (2)",
            "rank 1: [bold red]T1[/]  [b]d1[/b]",
        )
        while screen._names()[0] != RETRIEVER:  # the hostile retriever as A
            await pilot.press("a")
        for panel in PANELS[1:]:
            await pilot.press("p")
            assert screen.panel == panel
            await app.workers.wait_for_complete()
            await pilot.pause()
            text = painted(app)
            if panel == "compare":
                assert "A [red]r[/red]␛[2J" in text and "wins on MRR" in text
            elif panel == "failures":
                assert "failures of [red]r[/red]␛[2J" in text
                assert "q␛[2J2" in text and D1 in text and "[bold red]T1[/]" in text
            elif panel == "noanswer":
                assert "no-answer calibration: [red]r[/red]␛[2J" in text
            elif panel == "sweep":
                assert "MRR of [red]r[/red]␛[2J over k1 x b" in text
        await pilot.press("p")
        assert screen.panel == "scores"
        await pilot.press("t")  # a tag filter whose name is markup
        assert_shown(app, "tag: [red]hard[/red]")


async def test_adjudicate_screen(app_factory, hostile_ws):
    app = app_factory(hostile_ws)
    async with app.run_test(size=APP_SIZE) as pilot:
        app.state.current_question = Q1  # the adjudicate list opens on the current question
        app.state.auto_advance = False  # and stays on it after settling
        await pilot.press("d")
        assert isinstance(app.screen, AdjudicateScreen)
        await pilot.pause()
        assert_shown(
            app,
            Q1,
            "$q3",
            "감쇠 보정 [bold]x[/] $accent",
            f"1 {KIM}",
            "2 lee␛[2J",
            D1,
            D2,
            "[bold red]T1[/]",
            "[link=https://e.x]T2[/link]",
            f"{KIM}–lee␛[2J",
        )
        await pilot.press("u")  # settle Q1 by the union
        await pilot.pause()
        assert_shown(app, "adjudicated by tester")
        table = app.screen.query_one("#adjudicate-list", DataTable)
        table.move_cursor(row=table.get_row_index(Q3))
        await pilot.pause()
        assert_shown(
            app, "점검 공지 [@click=app.quit]q[/]", f"{KIM}: ambiguous", "[b]two readings[/b] ␛[31m"
        )
        await pilot.press("x")
        assert isinstance(app.screen, PromptScreen)
        assert_shown(app, "Split $q3: the second question")
        await pilot.press("escape")
