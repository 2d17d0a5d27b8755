"""A retriever the app cannot rank with holds no other retriever's questions out of Review.

The demo, as a colleague might send it: a ``command`` retriever ``mine`` whose rankings of
half the questions came along (made on their machine), the other half never ranked by it.
While the trust question is on screen, ``mine`` is a retriever that will rank the rest, so
they are left out of every mean (the pairing rule). Declined, it cannot rank here: every
scored question is scored again for the other retrievers, with the same means as a score of
them alone, and ``mine``'s row says it is not ranked (``-``), never 0.000.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from engine.scoring import Scoreboard, score_workspace
from engine.types import RetrieverSpec
from engine.workspace import Workspace
from tests.cli.test_trust import MARKER_SCRIPT
from tests.tui.conftest import APP_SIZE, plain, wait_for
from tests.tui.test_ranked_behind import grid_cells, shown_means
from tui.app import GoldpanApp
from tui.screens.modals import TrustScreen
from tui.screens.review import NOT_RANKED, REVIEW_METRICS, ReviewScreen
from tui.serve.served_app import Served
from tui.widgets.review_panels import FailuresPanel


def with_half_ranked_command(path: Path, tmp_path: Path) -> tuple[list[str], list[str], Path]:
    """Add ``mine`` with rankings of every other scored question; (ranked, not, marker)."""
    script = tmp_path / "payload.py"
    script.write_text(MARKER_SCRIPT, encoding="utf-8")
    marker = tmp_path / "RAN"
    with Workspace.open(path) as ws:
        scored = score_workspace(ws).question_ids
        ranked, unranked = scored[::2], scored[1::2]
        ws.add_retriever(
            RetrieverSpec("mine", "command", {"command": f"python3 {script} {marker}"})
        )
        word = ws.runs("bm25-word", ranked)
        ws.write_runs(replace(word[q], retriever="mine", input_hash="elsewhere") for q in ranked)
    return ranked, unranked, marker


async def review_scores_every_question(
    pilot: Pilot[None], app: GoldpanApp, alone: Scoreboard, n: int
) -> tuple[ReviewScreen, str]:
    """Open Review: all ``n`` questions scored, none held as not ranked, every other
    retriever's means those of ``alone`` (a score without the command), and the command's
    row ``-`` in every column, never 0.000. Review and its counts line."""
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
    review = app.screen
    assert isinstance(review, ReviewScreen)
    counts = plain(review.query_one("#review-counts", Static))
    assert f"{n} scored ·" in counts and "not ranked" not in counts
    means = shown_means(review)
    for name, rs in alone.retrievers.items():
        assert rs.means is not None
        assert means[name] == [f"{rs.means[m]:.3f}" for m in REVIEW_METRICS], name
    assert means["mine"] == ["-"] * len(REVIEW_METRICS)
    return review, counts


async def test_declining_the_trust_dialog_scores_the_others_on_every_question(
    app_factory, demo_ws, tmp_path
):
    with Workspace.open(demo_ws) as ws:
        alone = score_workspace(ws)  # the demo's retrievers, before the command came
    ranked, unranked, marker = with_half_ranked_command(demo_ws, tmp_path)
    n = len(ranked) + len(unranked)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        live = app.session.live  # asked: it will rank the rest once trusted, so they wait
        assert live.holding == {"mine"}
        assert live.counts()["scored"] == len(ranked)
        assert live.counts()["not_ranked"] == len(unranked)
        await pilot.press("escape")  # declined: it cannot rank here
        await wait_for(pilot, lambda: not isinstance(app.screen, TrustScreen))
        await wait_for(pilot, lambda: app.session.live.cannot_rank == {"mine"})
        review, _ = await review_scores_every_question(pilot, app, alone, n)
        column = list(app.session.live.retrievers).index("mine")
        assert grid_cells(review, unranked[0])[column] == NOT_RANKED
        assert grid_cells(review, ranked[0])[column].isdigit()  # what it ranked shows
        grid = review.query_one("#grid", DataTable)
        assert set(map(str, (k.value for k in grid.rows))) == set(ranked) | set(unranked)
        await pilot.press("ctrl+r")  # a reload keeps it known not to rank: nothing waits
        await pilot.pause()
        assert app.session.live.counts()["not_ranked"] == 0
        await app.workers.wait_for_complete()
    assert not marker.exists()  # declined: never run


async def test_the_panels_say_a_retriever_has_not_ranked_never_an_empty_result(
    app_factory, demo_ws
):
    """Compare with it, or its failures: "has not ranked", never a table of nothing."""
    with Workspace.open(demo_ws) as ws:
        ws.add_retriever(RetrieverSpec("mine", "command", {"command": "python3 -c pass"}))
        scored = len(score_workspace(ws).question_ids)
    said = f"mine has not ranked {scored} of the scored questions"
    app = app_factory(served=Served())  # never asks, never runs it
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        review = app.screen
        assert isinstance(review, ReviewScreen)
        mine = app.session.live.retrievers.index("mine")
        review.b = mine
        while review.panel != "compare":
            await pilot.press("p")
        body = review.query_one("#compare-body", Static)
        await wait_for(pilot, lambda: said in plain(body))
        assert plain(body) == f"{said}: nothing to compare yet"
        review.b, review.a = 0, mine
        while review.panel != "failures":
            await pilot.press("p")
        panel = review.query_one(FailuresPanel)
        note = review.query_one("#failures-note", Static)
        await wait_for(pilot, lambda: said in plain(note) and note.display)
        assert review.query_one("#failures", DataTable).row_count == 0
        assert "which of them it fails is unknown" in plain(note)
        review.a = 0  # a retriever that ranked: its failures, and no note
        await wait_for(pilot, lambda: not note.display)
        await wait_for(pilot, lambda: review.query_one("#failures", DataTable).row_count > 0)
        assert panel.computed >= 2


async def test_the_demo_with_a_command_never_run_scores_every_question_in_review(
    app_factory, demo_ws
):
    """The lead's case in the app: the demo and a command added, never trusted, never run.

    It has ranked nothing here, so it holds nothing out, while its trust dialog is up and
    after it is declined: Review's means are those of a score without it, over every scored
    question; its row reads ``-`` in every column (Judged@10 too), and the warning about
    unjudged top 10s names only the retrievers that have scores.
    """
    with Workspace.open(demo_ws) as ws:
        alone = score_workspace(ws)
        ws.add_retriever(RetrieverSpec("mine", "command", {"command": "python3 -c pass"}))
    n = len(alone.question_ids)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        live = app.session.live  # it never ranked here: nothing waits for it
        assert live.holding == frozenset() and live.counts()["scored"] == n
        assert live.means()["mine"] is None
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TrustScreen))
        review, counts = await review_scores_every_question(pilot, app, alone, n)
        warned = counts.split("Judged@10 under")[1] if "Judged@10 under" in counts else ""
        low = [r for r, rs in alone.retrievers.items() if rs.means and rs.means["judged@10"] < 0.8]
        assert all(r.removeprefix("bm25-") in warned for r in low) and "mine" not in warned
        await app.workers.wait_for_complete()
