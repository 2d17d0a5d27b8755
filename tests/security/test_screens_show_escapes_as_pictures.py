"""Terminal escape sequences in the data never reach the terminal, on any screen.

Every family a terminal obeys is put in ids, titles, texts, fields, tags, annotators,
notes, a retriever's name and a query log: CSI (colour, erase the screen), OSC 52 (write
the clipboard), OSC 8 (a hyperlink), DCS, and the single-byte C1 forms of CSI and OSC,
plus a bidi override. Each check reads what the screen paints, segment by segment (the
text Textual writes between its own style codes), and the whole frame Textual would write
for it: no ESC, BEL, C1 or bidi control from the data is in either. The data still shows,
as control pictures (ESC as ``␛``, BEL as ``␇``, C1 as ``�``).

tests/tui/test_markup_literal.py does the same for text that looks like markup.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList

from engine.retrieve import bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.types import Doc, Label, Question, Verdict
from engine.workspace_setup import new_workspace
from tests.conftest import querylog_rows
from tests.tui.conftest import APP_SIZE, make_app, wait_for
from tui.app import GoldpanApp
from tui.literal import visible
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.judge import JudgeScreen
from tui.screens.modals import SearchScreen
from tui.screens.review import PANELS, ReviewScreen
from tui.screens.write import WriteScreen
from tui.textual_compat import screen_frame, screen_strips
from tui.widgets.candidate_list import CandidateList

FAMILIES = {
    "csi colour": "\x1b[31m",
    "csi erase": "\x1b[2J",
    "osc 52 clipboard": "\x1b]52;c;SGVsbG8=\x07",
    "osc 8 hyperlink": "\x1b]8;;http://x\x1b\\",
    "dcs": "\x1bPq#0;2;0;0;0\x1b\\",
    "c1 csi": "\x9b2J",
    "c1 osc": "\x9d52;c;SGVsbG8=\x9c",
    "bidi override": "\u202e",
}
EVIL = "".join(FAMILIES.values())
SHOWN = visible(EVIL)  # how the data must look on screen
assert SHOWN.startswith("␛[31m␛[2J␛]52;c;SGVsbG8=␇")

# What must never be in a segment's text: C0 but tab and newline, ESC, DEL, C1, bidi
# controls. What must never be in a frame Textual writes: OSC, DCS, APC/PM/SOS, BEL, C1
# (Textual's own output is CSI only, and OSC 8 only for a link style).
UNSAFE_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
UNSAFE_FRAME = re.compile("\x1b[]P_^X]|[\x07\x80-\x9f]")

Q1, Q2 = f"q1{FAMILIES['csi erase']}", f"q2{FAMILIES['osc 52 clipboard']}"
D1, D2 = f"d1{FAMILIES['dcs']}", f"d2{FAMILIES['c1 csi']}"
KIM, LEE = f"kim{FAMILIES['osc 8 hyperlink']}", f"lee{FAMILIES['c1 osc']}"
TAG = f"hard{EVIL}"
RETRIEVER = f"r{FAMILIES['csi colour']}"
LOG_QUERY = f"감쇠 보정 로그 {EVIL} 질문"

DOCS = [
    Doc(D1, f"감쇠 보정 T1 {EVIL}", f"감쇠 보정 원리 {EVIL} 끝", {"series": EVIL}),
    Doc(D2, f"금속 인공물 T2 {EVIL}", f"금속 인공물 {EVIL} 점검", {"date": EVIL}),
]
QUESTIONS = [
    Question(Q1, f"감쇠 보정 {EVIL}", (TAG,)),
    Question(Q2, f"금속 인공물 {EVIL}", ("easy",)),
]


@pytest.fixture
def evil_ws(tmp_path: Path) -> Path:
    """Every escape family in every kind of data; pooled; a query log waiting."""
    path = tmp_path / "evil.db"
    ws = new_workspace(path)
    ws.write_docs(DOCS)
    ws.write_questions(QUESTIONS)
    ws.write_labels(
        [
            Label(Q1, D1, KIM, 2),  # disputed
            Label(Q1, D2, LEE, 1),
            Label(Q2, D2, KIM, 2),  # agreed: scored
            Label(Q2, D2, LEE, 2),
        ]
    )
    ws.write_verdicts([Verdict(Q1, KIM, "ambiguous", f"two readings {EVIL}")])
    ws.add_retriever(bm25_spec(RETRIEVER, "bigram"))
    refresh_runs(ws)
    ws.write_querylog(
        [{"text": LOG_QUERY, "norm": "log", "count": 3, "band": "head", "variants": []}], "l"
    )
    ws.close()
    return path


def painted(app: GoldpanApp) -> str:
    """The screen's text; fails on any escape from the data in it or in the frame."""
    strips = screen_strips(app.screen)
    bad = [
        (y, seg.text)
        for y, strip in enumerate(strips)
        for seg in strip
        if UNSAFE_TEXT.search(seg.text)
    ]
    assert not bad, bad
    frame = screen_frame(app)
    assert not UNSAFE_FRAME.search(frame), UNSAFE_FRAME.findall(frame)
    return "\n".join(strip.text for strip in strips)


async def press_until(pilot, key: str, piece: str, most: int = 4) -> None:
    """Press ``key`` until the screen shows ``piece`` (a filter that cycles)."""
    for _ in range(most):
        await pilot.press(key)
        if piece in painted(pilot.app):
            return
    raise AssertionError(f"{piece!r} never shown")


def assert_shown(app: GoldpanApp, *pieces: str) -> str:
    text = painted(app)
    missing = [p for p in pieces if p not in text]
    assert not missing, (missing, text)
    return text


async def test_questions_screen(evil_ws):
    app = make_app(evil_ws)
    async with app.run_test(size=APP_SIZE, notifications=True) as pilot:
        await pilot.pause()
        # annotators' names: the table's right columns give way to the question's text;
        # the view line below shows each name
        assert_shown(app, visible(Q1), visible(Q2), "감쇠 보정 ␛[31m␛[2J")
        await press_until(pilot, "v", f"view: {visible(KIM)[:8]}")  # an annotator's view
        await press_until(pilot, "v", f"view: {visible(LEE)[:8]}")
        await press_until(pilot, "t", f"tag: {visible(TAG)[:20]}")  # the tag filter
        await pilot.press("o")  # queue order: a notice names every retriever
        await pilot.pause()
        assert_shown(app, "coverage@10", visible(RETRIEVER))


async def test_a_notice_never_carries_an_escape(evil_ws):
    app = make_app(evil_ws)
    async with app.run_test(size=APP_SIZE, notifications=True) as pilot:
        app.notify(f"file {EVIL}.jsonl", title=f"t {EVIL}")  # say, a file name in a notice
        app.screen.notify(f"from a screen {EVIL}", markup=False)
        await pilot.pause()
        assert_shown(app, "file", "from a screen", "␛[31m␛[2J␛]52;c;SGVsbG8=␇", ".jsonl")


async def test_write_screen_tag_hint_and_query_log(evil_ws):
    app = make_app(evil_ws)
    async with app.run_test(size=APP_SIZE, notifications=True) as pilot:
        await pilot.press("w")
        assert isinstance(app.screen, WriteScreen)
        await pilot.pause()
        tags = app.screen.query_one("#write-tags", Input)
        assert not UNSAFE_TEXT.search(tags.placeholder), tags.placeholder
        assert_shown(app, visible(TAG)[:10])  # the tag hint (placeholder)
        await pilot.press("ctrl+n")  # the logged query goes into the editor
        await pilot.pause()
        editor = app.screen.query_one("#write-text", Input)
        assert editor.value == visible(LOG_QUERY)
        assert_shown(app, "감쇠 보정 로그 ␛[31m␛[2J␛]52;c;SGVsbG8=␇", "From the log")
        await pilot.press("ctrl+s")  # saved untouched: the user's text, kept as typed
        await wait_for(pilot, lambda: isinstance(app.screen, JudgeScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert_shown(app, "감쇠 보정 로그 ␛[31m")
        (row,) = querylog_rows(app.ws)
        assert row["status"] == "kept"
        assert app.ws.question(row["question_id"]).text == LOG_QUERY


async def test_label_screen_documents_and_search(evil_ws):
    app = make_app(evil_ws)
    async with app.run_test(size=APP_SIZE, notifications=True) as pilot:
        app.judge(Q1)
        await pilot.pause()
        assert isinstance(app.screen, JudgeScreen)
        assert_shown(app, visible(Q1), f"#{visible(TAG)[:10]}", visible(KIM), visible(LEE))
        candidates = app.screen.query_one(CandidateList)
        seen = set()
        for c in candidates.candidates:  # each document's head, fields and body
            candidates.select(c.doc_id)
            await pilot.pause()
            text = painted(app)
            for d, word in ((D1, "원리"), (D2, "점검")):
                if word in text:
                    assert visible(d) in text
                    seen.add(d)
        assert seen == {D1, D2}
        app.state.auto_advance = False
        await pilot.press("1")  # a grade: the status line and the candidate's mark
        await pilot.pause()
        painted(app)
        await pilot.press("slash")  # corpus search: results and the preview
        assert isinstance(app.screen, SearchScreen)
        results = app.screen.query_one("#search-results", OptionList)
        await wait_for(pilot, lambda: results.option_count >= 2)
        assert_shown(app, "감쇠 보정 T1", visible(D1), visible(D2))
        await pilot.press("down")  # the first result in the preview
        await pilot.pause()
        assert_shown(app, "감쇠 보정 원리")
        await pilot.press("escape")


async def test_adjudicate_screen(evil_ws):
    app = make_app(evil_ws)
    async with app.run_test(size=APP_SIZE, notifications=True) as pilot:
        app.state.current_question = Q1
        app.state.auto_advance = False
        await pilot.press("d")
        assert isinstance(app.screen, AdjudicateScreen)
        await pilot.pause()
        assert_shown(app, visible(Q1), f"1 {visible(KIM)}", visible(D1), "감쇠 보정 T1 ␛")
        await pilot.press("u")  # settle by the union: a notice names the question
        await pilot.pause()
        painted(app)
        table = app.screen.query_one("#adjudicate-list", DataTable)
        table.move_cursor(row=0)
        await pilot.pause()
        painted(app)


async def test_review_screen_and_every_panel(evil_ws):
    app = make_app(evil_ws)
    async with app.run_test(size=APP_SIZE, notifications=True) as pilot:
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await pilot.pause()
        assert_shown(app, visible(RETRIEVER), visible(Q2))
        while screen._names()[0] != RETRIEVER:
            await pilot.press("a")
        for panel in PANELS[1:]:
            await pilot.press("p")
            assert screen.panel == panel
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert_shown(app, visible(RETRIEVER))
        await pilot.press("p")
        await press_until(pilot, "t", f"tag: {visible(TAG)[:10]}")  # the filter names it
