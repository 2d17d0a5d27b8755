"""Pilot tests: review since a snapshot, the compare panel's power line, the log on write."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Static

from engine.analysis.power import power_sentence, workspace_power
from engine.ci.snapshots import diff_against, save_snapshot
from engine.retrieve import bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.scoring import score_workspace
from engine.types import Label
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS, querylog_rows, question_history
from tests.tui.conftest import APP_SIZE, wait_for
from tui.screens.judge import JudgeScreen


def text(widget: Static) -> str:
    return str(widget.render())


def change_word_retriever(path: Path) -> None:
    """Snapshot the demo, then give bm25-word other parameters and pool it again."""
    ws = Workspace.open(path)
    try:
        save_snapshot(ws, "base")
        ws.remove_retriever("bm25-word")
        ws.add_retriever(bm25_spec("bm25-word", "word", "lucene", 0.3, 0.2, ["text"]))
        refresh_runs(ws, ["bm25-word"])
    finally:
        ws.close()


async def test_review_marks_cells_that_moved_since_the_snapshot(app_factory, demo_ws):
    change_word_retriever(demo_ws)
    ws = Workspace.open(demo_ws)
    diff = diff_against(ws, ws.snapshot("base") or {}, samples=20).retrievers["bm25-word"]
    ws.close()
    assert diff.regressed and diff.improved
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        screen = app.screen
        assert "since snapshot: base" in text(screen.query_one("#review-counts", Static))
        grid = screen.query_one("#grid", DataTable)
        for moved, arrow in ((diff.regressed, "▼"), (diff.improved, "▲")):
            for m in moved:
                cell = grid.get_cell(m.question, "bm25-word")
                assert str(cell).endswith(arrow), (m, str(cell))
        unmoved = {str(grid.get_cell(k.value, "bm25-bigram")) for k in grid.rows}
        assert not any(c.endswith(("▼", "▲")) for c in unmoved)
        metrics = screen.query_one("#metrics", DataTable)
        mrr = str(metrics.get_cell("bm25-word", metrics.ordered_columns[4].key))
        change = diff.metrics["mrr"]
        assert mrr.split() == [f"{change.now:.3f}", f"{change.diff:+.3f}".replace("0.", ".")]
        await pilot.press("s")  # past the only snapshot: none
        assert "since: no snapshot" in text(screen.query_one("#review-counts", Static))
        cell = grid.get_cell(diff.regressed[0].question, "bm25-word")
        assert not str(cell).endswith("▼")


async def test_no_change_is_shown_since_a_snapshot_of_no_scored_question(app_factory, tmp_path):
    # a snapshot saved before any label holds no question: its means read 0, and review
    # showed every metric "+1.00" since it
    path = tmp_path / "late.db"
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    refresh_runs(ws, ["bm25-word"])
    for spec in ws.retrievers():  # only the one ranked: no question waits for the others
        if spec.name != "bm25-word":
            ws.remove_retriever(spec.name)
    save_snapshot(ws, "before-labels")
    ws.write_labels([Label("q1", "d1", "mina", 2)])
    ws.close()
    app = app_factory(path)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        screen = app.screen
        assert "since snapshot: before-labels" in text(screen.query_one("#review-counts", Static))
        metrics = screen.query_one("#metrics", DataTable)
        cells = [str(c) for c in metrics.get_row("bm25-word")[1:7]]
        assert all(len(c.split()) == 1 for c in cells), cells  # a value, no change
        assert "1.000" in cells


async def test_the_change_since_a_snapshot_is_over_the_questions_compared(app_factory, tmp_path):
    # q4 is scored only now (labeled after the snapshot, with a gold bm25-word misses):
    # review measured the mean over every question now against the snapshot's, and
    # showed a drop that `score --against` (the same questions then and now) does not
    path = tmp_path / "later.db"
    ws = new_workspace(path)
    for spec in ws.retrievers():  # only the one pooled: the others have ranked nothing yet
        if spec.name != "bm25-word":
            ws.remove_retriever(spec.name)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.write_labels([Label("q1", "d1", "mina", 2), Label("q2", "d2", "mina", 2)])
    refresh_runs(ws, ["bm25-word"])
    save_snapshot(ws, "base")
    ws.write_labels([Label("q4", "d3", "mina", 2)])
    diff = diff_against(ws, ws.snapshot("base") or {}, samples=20).retrievers["bm25-word"]
    now = score_workspace(ws, metrics=["mrr"]).retrievers["bm25-word"].means["mrr"]
    ws.close()
    assert diff.compared == ["q1", "q2"] and diff.metrics["mrr"].diff == 0
    assert abs(now - diff.metrics["mrr"].then) > 0.01  # over every question now, it dropped
    app = app_factory(path)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        metrics = app.screen.query_one("#metrics", DataTable)
        mrr = str(metrics.get_cell("bm25-word", metrics.ordered_columns[4].key))
        assert mrr.split() == [f"{now:.3f}"]  # the value now, and no change beside it


async def test_compare_panel_shows_power(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        screen = app.screen
        while screen.panel != "compare":
            await pilot.press("p")
        body = screen.query_one("#compare-body", Static)
        await wait_for(pilot, lambda: "power" in text(body))
        ws = Workspace.open(demo_ws)
        want = power_sentence(workspace_power(ws, "bm25-word", "bm25-bigram"))
        ws.close()
        assert want in " ".join(text(body).split())


async def test_write_takes_rewrites_and_discards_log_queries(app_factory, demo_ws, tmp_path):
    from engine.querylog import import_querylog

    log = tmp_path / "log.txt"
    log.write_text("임신 종사자 선량 한도\n임신  종사자 선량 한도\n팬텀 주기\n야간 연락처\n")
    ws = Workspace.open(demo_ws)
    import_querylog(ws, log)
    ws.remove_retriever("bm25-kiwi")  # saving pools the question: no Kiwi load needed here
    ws.close()
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("w")
        await pilot.press("ctrl+n")
        editor = app.screen.query_one("#write-text", Input)
        tags = app.screen.query_one("#write-tags", Input)
        assert editor.value == "임신 종사자 선량 한도"  # the most frequent first
        assert tags.value == "from-log, head"
        await pilot.press("ctrl+t")  # discard: the next one comes up
        second = editor.value
        assert second in {"팬텀 주기", "야간 연락처"}
        assert tags.value == "from-log, torso"  # it starts at 50% of the traffic
        await pilot.press("escape", "y")  # leave, dropping the text: the query waits
        await pilot.press("w")
        assert editor.value == ""
        await pilot.press("ctrl+n")
        assert editor.value == second
        editor.value = "야간에 연락할 곳은 어디인가요"
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, JudgeScreen)
        await app.workers.wait_for_complete()
    ws = Workspace.open(demo_ws)
    rows = {r["text"]: r for r in querylog_rows(ws)}
    first = rows["임신 종사자 선량 한도"]
    assert first["status"] == "discarded" and first["count"] == 2
    assert first["question_id"] is None
    row = rows[second]
    assert row["status"] == "rewritten"
    q = ws.question(row["question_id"])
    assert q is not None and q.text == "야간에 연락할 곳은 어디인가요" and q.written_blind
    assert set(q.tags) == {"from-log", "torso"}
    assert [h[2] for h in question_history(ws, q.id)] == [second]
    third = ws.next_log_query()
    assert third is not None and third["text"] not in (second, first["text"])
    ws.close()


async def test_a_pooled_question_is_drawn_once_not_forever(app_factory, demo_ws):
    """QuestionPooled used to bubble from the screen back to the app, which sent it on to
    the screen again: after saving a question the judge screen redrew ~50 times a second
    (and the idle app used half a core)."""
    ws = Workspace.open(demo_ws)
    ws.remove_retriever("bm25-kiwi")  # no Kiwi load needed to pool one question
    ws.close()
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("w")
        app.screen.query_one("#write-text", Input).value = "야간 비상 연락처"
        await pilot.press("ctrl+s")
        judge = app.screen
        assert isinstance(judge, JudgeScreen)
        await app.workers.wait_for_complete()
        await pilot.pause(0.1)
        calls = []
        original = judge.show_question
        judge.show_question = lambda: (calls.append(1), original())[1]  # type: ignore[method-assign]
        await pilot.pause(0.3)
        assert calls == []
        assert not judge.pooling
