"""Opening a question puts the cursor on its first candidate you have not judged.

Issue 20: after auto-advance the cursor stayed on the document selected in the previous
question when that document was in the new pool too, so the first grade went to a document
nobody had read. Each test carries a document from one question's list into the next,
moves to the next question one way or another, and checks the highlighted row, the
document shown, and where the first grade key's label lands in the workspace.

The served app (`goldpan serve`: questions handed out under a lease) is tested twice: as
Pilot tests of the same App, and through the real server with keys sent over its
websocket as a browser tab's terminal sends them.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from engine.session.labeling import LabelingSession
from engine.types import Label
from engine.workspace import Workspace
from tests.tui.conftest import APP_SIZE, open_judge, plain, wait_for
from tests.tui.serve.test_serve_load import load_bench
from tests.tui.serve.test_served import unlabel
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.base import cursor_key
from tui.screens.judge import JudgeScreen
from tui.screens.questions import QuestionsScreen
from tui.screens.review import ReviewScreen
from tui.serve.served_app import Served
from tui.widgets.candidate_list import CandidateList
from tui.widgets.document_view import DocumentView

A, B = "q01", "q02"  # next to each other in the demo, with documents in both pools


def pools(path: Path, *qids: str) -> dict[str, list[str]]:
    """Each question's candidates in list order, as the engine pools them."""
    with Workspace.open(path, readonly=True) as ws:
        session = LabelingSession(ws, "probe")
        return {q: [c.doc_id for c in session.candidates(q)] for q in qids}


def first_left(path: Path, qid: str, annotator: str = "tester") -> str:
    """The first candidate ``annotator`` has not graded, in the order they see them.

    The judging order learns from their grades, so after the first row is graded the
    second row may be another document than before.
    """
    with Workspace.open(path, readonly=True) as ws:
        session = LabelingSession(ws, annotator)
        mine = session.my_grades(qid)
        return next(c.doc_id for c in session.candidates(qid) if c.doc_id not in mine)


def grades(path: Path, qid: str, annotator: str = "tester") -> dict[str, int]:
    """One annotator's grades on ``qid``, read from the workspace file."""
    with Workspace.open(path, readonly=True) as ws:
        return {lab.doc_id: lab.grade for lab in ws.labels_for(qid) if lab.annotator == annotator}


def label(path: Path, qid: str, docs: Sequence[str], annotator: str = "tester") -> None:
    """``annotator`` has graded ``docs`` of ``qid`` 0 already (an earlier session)."""
    with Workspace.open(path) as ws:
        ws.write_labels([Label(qid, d, annotator, 0) for d in docs])


def carried(source: list[str], target: list[str], *, not_at: int) -> str:
    """A document of ``source`` that ``target`` lists after row ``not_at``."""
    return next(d for d in source if d in target and target.index(d) > not_at)


def shown(screen: JudgeScreen) -> str:
    """The id of the document the document view shows (its title line ends with it)."""
    head = plain(screen.query_one(DocumentView).query_one("#doc-head", Static))
    return head.split("\n")[0].rsplit("  ", 1)[-1]


async def move_to(pilot, doc_id: str) -> None:
    """Press down until the cursor is on ``doc_id``, as an annotator would."""
    screen = pilot.app.screen
    candidates = screen.query_one(CandidateList)
    for _ in range(2 * len(candidates.candidates)):
        if candidates.current is not None and candidates.current.doc_id == doc_id:
            break
        await pilot.press("down")
    assert candidates.current is not None and candidates.current.doc_id == doc_id
    assert shown(screen) == doc_id


async def first_grade_lands_on_first_unjudged(
    pilot, path: Path, qid: str, annotator: str = "tester"
) -> str:
    """The judge screen shows ``qid`` with the cursor and the document view on its first
    candidate ``annotator`` has not judged, and grade 2 is written for that document."""
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, JudgeScreen))
    screen = app.screen
    assert isinstance(screen, JudgeScreen)
    await wait_for(pilot, lambda: screen.question_id == qid and not screen.pooling)
    candidates = screen.query_one(CandidateList)
    ids = [c.doc_id for c in candidates.candidates]
    before = grades(path, qid, annotator)
    expected = next((d for d in ids if d not in before), ids[0])
    assert candidates.current is not None
    assert (candidates.highlighted, candidates.current.doc_id) == (ids.index(expected), expected)
    assert shown(screen) == expected
    await pilot.press("2")
    assert grades(path, qid, annotator) == {**before, expected: 2}
    return expected


async def test_auto_advance_after_the_last_candidate(app_factory, demo_ws):
    pool = pools(demo_ws, A, B)
    doc = carried(pool[A], pool[B], not_at=0)
    label(demo_ws, A, [d for d in pool[A] if d != doc])  # doc is the last one left
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_judge(pilot, A)
        await move_to(pilot, doc)
        await pilot.press("1")  # the last candidate of A: on to B
        assert grades(demo_ws, A)[doc] == 1
        assert await first_grade_lands_on_first_unjudged(pilot, demo_ws, B) == pool[B][0]


async def test_auto_advance_after_a_verdict(app_factory, demo_ws):
    pool = pools(demo_ws, A, B)
    doc = carried(pool[A], pool[B], not_at=0)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_judge(pilot, A)
        await move_to(pilot, doc)
        await pilot.press("s")  # skip A: on to B
        await first_grade_lands_on_first_unjudged(pilot, demo_ws, B)


async def test_next_question_key(app_factory, demo_ws):
    pool = pools(demo_ws, A, B)
    label(demo_ws, B, pool[B][:1])  # B's first row is judged: the cursor goes to the next
    left = first_left(demo_ws, B)
    doc = carried(pool[A], pool[B], not_at=1)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_judge(pilot, A)
        await move_to(pilot, doc)
        await pilot.press("right_square_bracket")
        assert await first_grade_lands_on_first_unjudged(pilot, demo_ws, B) == left


async def test_previous_question_key(app_factory, demo_ws):
    pool = pools(demo_ws, A, B)
    label(demo_ws, A, pool[A][:1])
    left = first_left(demo_ws, A)
    doc = carried(pool[B], pool[A], not_at=1)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_judge(pilot, B)
        await move_to(pilot, doc)
        await pilot.press("left_square_bracket")
        assert await first_grade_lands_on_first_unjudged(pilot, demo_ws, A) == left


async def test_undo_from_another_question_returns_to_the_grade_taken_back(app_factory, demo_ws):
    """Undo moves to the question it changed, with the cursor on the document whose grade
    it took back (not the first row left to judge): the next grade key re-grades it."""
    pool = pools(demo_ws, A, B)
    doc = pool[A][2]
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, A)
        await move_to(pilot, doc)
        await pilot.press("1", "right_square_bracket")
        assert screen.question_id == B and grades(demo_ws, A) == {doc: 1}
        await pilot.press("u")
        assert screen.question_id == A and grades(demo_ws, A) == {}
        candidates = screen.query_one(CandidateList)
        assert candidates.current is not None and candidates.current.doc_id == doc
        assert shown(screen) == doc
        await pilot.press("3")
        assert grades(demo_ws, A) == {doc: 3}


SCREENS = {"r": (ReviewScreen, "#grid"), "q": (QuestionsScreen, "#questions")}
SCREENS["d"] = (AdjudicateScreen, "#adjudicate-list")


async def open_from(pilot, key: str, qid: str, how: str = "enter") -> None:
    """Go to another screen (its key), put its list's cursor on ``qid``, open it in Label."""
    screen, table_id = SCREENS[key]
    await pilot.press(key)
    assert isinstance(pilot.app.screen, screen)
    table = pilot.app.screen.query_one(table_id, DataTable)
    table.move_cursor(row=table.get_row_index(qid))
    await pilot.pause()
    assert cursor_key(table) == qid
    await pilot.press(how)


async def test_opening_from_review(app_factory, demo_ws):
    # (no earlier grades here: a lone grade 0 would dispute B and take it off the grid)
    pool = pools(demo_ws, A, B)
    doc = carried(pool[A], pool[B], not_at=0)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_judge(pilot, A)
        await move_to(pilot, doc)
        await open_from(pilot, "r", B)
        assert isinstance(app.screen, JudgeScreen)
        await first_grade_lands_on_first_unjudged(pilot, demo_ws, B)
        # and `l` on the review, after moving its cursor back to A
        await move_to(pilot, next(d for d in pool[B] if d in pool[A][1:]))
        await open_from(pilot, "r", A, how="l")
        assert await first_grade_lands_on_first_unjudged(pilot, demo_ws, A) == pool[A][0]


async def test_opening_from_questions(app_factory, demo_ws):
    pool = pools(demo_ws, A, B)
    label(demo_ws, B, pool[B][:1])
    left = first_left(demo_ws, B)
    doc = carried(pool[A], pool[B], not_at=1)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_judge(pilot, A)
        await move_to(pilot, doc)
        await open_from(pilot, "q", B)
        assert isinstance(app.screen, JudgeScreen)
        assert await first_grade_lands_on_first_unjudged(pilot, demo_ws, B) == left


async def test_opening_from_adjudicate(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("d")
        assert isinstance(app.screen, AdjudicateScreen)
        table = app.screen.query_one("#adjudicate-list", DataTable)
        # not the first row: the cursor rests there already, so moving to it would not
        # make it the current question
        target = str(list(table.rows)[1].value)
        others = [q for q in app.session.live.question_ids if q != target]
        pool = pools(demo_ws, target, *others)
        source = next(q for q in others if any(d in pool[target][1:] for d in pool[q]))
        doc = carried(pool[source], pool[target], not_at=0)
        await open_judge(pilot, source)
        await move_to(pilot, doc)
        await open_from(pilot, "d", target, how="l")
        await first_grade_lands_on_first_unjudged(pilot, demo_ws, target)


async def test_the_document_view_follows_the_cursor_at_once(app_factory, demo_ws):
    """No frame shows one document while the cursor is on another: the view is redrawn in
    the same call that moves the cursor, not a message later."""
    pool = pools(demo_ws, A)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, A)
        candidates = screen.query_one(CandidateList)

        def in_step() -> None:
            assert candidates.current is not None
            assert shown(screen) == candidates.current.doc_id

        in_step()
        screen.action_cursor_down()  # j
        in_step()
        screen.action_grade(1)  # auto-advance to the next candidate
        in_step()
        assert candidates.current.doc_id == pool[A][2]  # type: ignore[union-attr]
        screen.action_next()
        in_step()
        screen.action_previous()
        in_step()
        assert candidates.current.doc_id == pool[A][0]  # type: ignore[union-attr]


def served_pair(path: Path) -> None:
    """Only A and B are left to hand out to ara (bo judged every other question, and one
    annotator per question is enough)."""
    unlabel(path)
    with Workspace.open(path) as ws:
        session = LabelingSession(ws, "bo")
        ids = [q for q in ws.question_ids() if q not in (A, B)]
        ws.write_labels([Label(q, session.candidates(q)[0].doc_id, "bo", 0) for q in ids])


async def test_served_next_question_is_handed_out_with_the_cursor_on_its_first_row(
    app_factory, demo_ws
):
    """The app as `goldpan serve` runs it for an annotator (tui.serve.served_app): `]` hands out."""
    served_pair(demo_ws)
    pool = pools(demo_ws, A, B)
    app = app_factory(annotator="ara", served=Served(per_question=1))
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, JudgeScreen)
        first = screen.question_id
        assert first in (A, B)
        second = B if first == A else A
        await first_grade_lands_on_first_unjudged(pilot, demo_ws, first, "ara")
        await move_to(pilot, carried(pool[first], pool[second], not_at=0))
        await pilot.press("right_square_bracket")
        assert app.leases.assigner is not None and app.leases.assigner.current == second
        graded = await first_grade_lands_on_first_unjudged(pilot, demo_ws, second, "ara")
        assert graded == pool[second][0]


async def test_served_auto_advance_after_the_last_candidate(app_factory, demo_ws):
    served_pair(demo_ws)
    pool = pools(demo_ws, A, B)
    app = app_factory(annotator="ara", served=Served(per_question=1))
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, JudgeScreen)
        first = screen.question_id
        assert first in (A, B)
        second = B if first == A else A
        doc = carried(pool[first], pool[second], not_at=0)
        # start just after doc: auto-advance walks round the list and grades doc last
        after = pool[first][(pool[first].index(doc) + 1) % len(pool[first])]
        await move_to(pilot, after)
        for _ in pool[first][:-1]:
            await pilot.press("0")
        assert screen.query_one(CandidateList).current.doc_id == doc  # type: ignore[union-attr]
        await pilot.press("0")  # the last one: the app hands out the other question
        assert set(grades(demo_ws, first, "ara")) == set(pool[first])
        graded = await first_grade_lands_on_first_unjudged(pilot, demo_ws, second, "ara")
        assert graded == pool[second][0]


@pytest.mark.timeout(180)
async def test_goldpan_serve_next_question_takes_the_first_grade_on_its_first_row(
    demo_ws, tmp_path
):
    """The real `goldpan serve`, keys sent over its websocket as a browser tab's terminal
    sends them: after `]` the first grade lands on the handed-out question's first row,
    not on the document the last question had selected."""
    aiohttp = pytest.importorskip("aiohttp")
    served_pair(demo_ws)
    pool = pools(demo_ws, A, B)
    server = load_bench().start_server(
        demo_ws, ["--annotator", "ara", "--per-question", "1"], tmp_path
    )
    db = sqlite3.connect(demo_ws, timeout=30)

    def lease() -> str | None:
        row = db.execute("SELECT question_id FROM leases WHERE annotator = 'ara'").fetchone()
        return None if row is None else str(row[0])

    def labels(qid: str) -> dict[str, int]:
        rows = db.execute(
            "SELECT doc_id, grade FROM labels WHERE annotator = 'ara' AND question_id = ?",
            (qid,),
        )
        return dict(rows.fetchall())

    async def until(check, timeout: float = 30.0):  # type: ignore[no-untyped-def]
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = check()
            if value:
                return value
            await asyncio.sleep(0.02)
        raise AssertionError(f"timed out; the server said:\n{server.output()}")

    url = f"ws://127.0.0.1:{server.port}/ws/{server.tokens['ara']}?width=120&height=40"
    try:
        async with aiohttp.ClientSession() as http, http.ws_connect(url, max_msg_size=0) as ws:
            screen: list[str] = []  # what the terminal was sent, escape codes and all

            async def drain() -> None:
                async for message in ws:
                    data = message.data
                    screen.append(
                        data.decode(errors="replace") if isinstance(data, bytes) else data
                    )

            reader = asyncio.create_task(drain())
            await ws.send_json(["resize", {"width": 120, "height": 40}])
            first = await until(lease, 60)
            assert first in (A, B)
            second = B if first == A else A
            # one key only once the question is drawn (a key sent earlier waits, and a
            # retried one would grade a second row)
            await until(lambda: f"{first}  " in "".join(screen), 60)
            await ws.send_json(["stdin", "1"])
            assert await until(lambda: labels(first)) == {pool[first][0]: 1}
            doc = carried(pool[first][1:], pool[second], not_at=0)
            for _ in range(pool[first].index(doc) - 1):  # from row 2, where auto-advance went
                await ws.send_json(["stdin", "j"])
            await ws.send_json(["stdin", "]"])
            await until(lambda: lease() == second)
            await ws.send_json(["stdin", "2"])
            assert await until(lambda: labels(second)) == {pool[second][0]: 2}
            await ws.close()
            reader.cancel()
    finally:
        db.close()
        server.stop()
    assert "Traceback" not in server.output()
