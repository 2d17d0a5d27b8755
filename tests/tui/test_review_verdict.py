"""Pilot tests: Review presents the engine's verdict and evidence rules, never its own.

The workspace is issue 47's study (:mod:`tests.verdict_study`): imported runs ``bigram``,
``word`` (4 of 31 questions differ), ``second`` (all 31 differ) and ``twin`` (none).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Static

from engine.analysis.analyses import compare_retrievers
from engine.ci.snapshots import save_snapshot
from engine.ingest import import_docs, import_questions, import_run
from engine.workspace import Workspace
from tests.tui.conftest import APP_SIZE, wait_for
from tests.verdict_study import RANK_OF_GOLD, no_answer_questions, study_files


def text(widget: Static) -> str:
    return " ".join(str(widget.render()).split())


@pytest.fixture
def study_ws(tmp_path: Path) -> Path:
    """The study as a workspace with its four imported runs and no other retriever."""
    path = tmp_path / "study.db"
    docs, questions, runs = study_files(tmp_path)
    ws = Workspace.create(path)
    try:
        import_docs(ws, docs)
        import_questions(ws, questions)
        for name, run in runs.items():
            import_run(ws, run, name)
    finally:
        ws.close()
    return path


async def compare_panel(pilot, a: str, b: str) -> str:
    """Review's compare panel for A and B, once it has drawn their comparison."""
    await pilot.press("r")
    screen = pilot.app.screen
    names = list(screen.gp.session.live.retrievers)
    screen.a, screen.b = names.index(a), names.index(b)
    while screen.panel != "compare":
        await pilot.press("p")
    body = screen.query_one("#compare-body", Static)
    await wait_for(pilot, lambda: f"A {a} vs B {b}" in text(body) and "W/T/L" in text(body))
    return text(body)


async def test_the_issue_case_shows_no_verdict(app_factory, study_ws):
    async with app_factory(study_ws).run_test(size=APP_SIZE) as pilot:
        shown = await compare_panel(pilot, "bigram", "word")
    assert (
        "mrr: 4 questions differ: no test on 4 can reach p < 0.05 (the least p is 0.125)" in shown
    )
    assert "[+0.016, +0.186]" in shown and "too few (4)" in shown
    assert "excludes 0 (" not in shown
    ws = Workspace.open(study_ws, readonly=True)
    ref = compare_retrievers(ws, "bigram", "word", ["mrr", "hit@1", "hit@5", "ndcg@10"])
    ws.close()
    for c in ref:  # every metric's verdict is the engine's, word for word
        assert f"{c.metric}: {c.verdict.says('bigram', 'word')}" in shown


async def test_no_question_differs(app_factory, study_ws):
    async with app_factory(study_ws).run_test(size=APP_SIZE) as pilot:
        shown = await compare_panel(pilot, "bigram", "twin")
    assert "mrr: bigram and twin are equal on every question" in shown
    assert "0/31/0" in shown and "too few (0)" in shown


async def test_every_question_differs(app_factory, study_ws):
    async with app_factory(study_ws).run_test(size=APP_SIZE) as pilot:
        shown = await compare_panel(pilot, "second", "bigram")
    assert "mrr: real: bigram is higher (p = 0.0001 < 0.05" in shown
    assert "31 questions differ)" in shown and "0/0/31" in shown


async def test_a_reaches_every_retriever_and_swaps_with_b(app_factory, study_ws):
    # issue 47: `a` skipped whatever `b` held (with two retrievers it could not move at all)
    async with app_factory(study_ws).run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        screen = pilot.app.screen
        names = list(screen.gp.session.live.retrievers)
        assert sorted(names) == sorted(RANK_OF_GOLD)
        for key, side in (("a", 0), ("b", 1)):
            seen = set()
            for _ in names:
                before = screen._names()
                await pilot.press(key)
                now = screen._names()
                assert now[0] != now[1]
                seen.add(now[side])
                if now[side] == before[1 - side]:  # landed on the other's: it took ours
                    assert now[1 - side] == before[side]
                else:
                    assert now[1 - side] == before[1 - side]
            assert seen == set(names)


@pytest.mark.parametrize(("no_answer", "named"), [(4, False), (5, True)])
async def test_noanswer_panel_names_a_threshold_from_5_and_5(
    app_factory, study_ws, tmp_path, no_answer, named
):
    ws = Workspace.open(study_ws)
    import_questions(ws, no_answer_questions(tmp_path, no_answer))
    ws.close()
    async with app_factory(study_ws).run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        screen = pilot.app.screen
        screen.a = list(screen.gp.session.live.retrievers).index("bigram")
        while screen.panel != "noanswer":
            await pilot.press("p")
        body = screen.query_one("#noanswer-body", Static)
        await wait_for(pilot, lambda: f"31 answerable (green), {no_answer} no-answer" in text(body))
        shown = text(body)
    if named:
        assert "best threshold 100.000: rejects 0 of 31 answerable, catches 5 of 5" in shown
        assert "needed" not in shown
    else:
        assert "best threshold" not in shown
        assert shown.endswith(
            "A no-answer threshold needs at least 5 no-answer questions and 5 answerable "
            "questions; found 4 no-answer questions and 31 answerable questions: 1 more "
            "no-answer question needed."
        )


def _delta_style(cell: Text) -> str:
    """The style of the change drawn after a metric's value (the cell's last span)."""
    return str(cell.spans[-1].style) if cell.spans else ""


async def test_changes_since_a_snapshot_are_coloured_only_when_real(app_factory, study_ws):
    ws = Workspace.open(study_ws)
    save_snapshot(ws, "base")
    # word now ranks the gold 2nd everywhere: MRR changes on all 31 questions (real),
    # Hit@5 on q03 only (ranked 6th then), too few to test
    import_run(ws, study_ws.parent / "second.run", "word", replace=True)
    ws.close()
    async with app_factory(study_ws).run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        screen = pilot.app.screen
        metrics = screen.query_one("#metrics", DataTable)
        columns = [str(c.label) for c in metrics.ordered_columns]

        def cell(metric: str) -> Text:
            return metrics.get_cell("word", metrics.ordered_columns[columns.index(metric)].key)

        await wait_for(pilot, lambda: _delta_style(cell("MRR")) == "red")
        assert str(cell("MRR")).split()[1] == "-.407"  # 0.907 then, 0.500 now
        assert _delta_style(cell("Hit@5")) == "dim" and str(cell("Hit@5")).split()[1] == "+.032"
        assert _delta_style(cell("Hit@1")) == "red"  # 27 of 31 questions lost rank 1
