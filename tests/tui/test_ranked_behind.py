"""Questions another process imports while the app is open are ranked behind it.

A real ``goldpan import questions`` process adds a copy of every scored question of the
demo (new ids, the same texts and gold) while the review screen is on top. Until the app
has ranked them they are *not ranked yet*: left out of every mean, counted on the counts
line, their grid cells say so. Ranked, they score exactly as the questions they copy, so
the means on screen never move: sampled at every redraw of the scores, from before the
import until the ranking lands.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from textual.widgets import DataTable, Static

from engine.gold import workspace_golds
from engine.workspace import Workspace
from tests.conftest import ROOT
from tests.tui.conftest import APP_SIZE, open_judge, plain, wait_for
from tui.screens.review import NOT_RANKED, REVIEW_METRICS, ReviewScreen


def copies_of_the_scored(path: Path, out: Path) -> list[str]:
    """A questions file copying every scored question (``k`` + id); the copies' ids."""
    with Workspace.open(path, readonly=True) as ws:
        golds = workspace_golds(ws)
        questions = [q for q in ws.questions() if golds[q.id].count_as == "scored"]
    records = [
        {
            "id": f"k{q.id}",
            "text": q.text,
            "tags": list(q.tags),
            # every judgment, grade 0 too: the copies' Judged@10 is the originals'
            "gold": [f"{d}:{g}" for d, g in golds[q.id].qrels.items()],
        }
        for q in questions
    ]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return [str(r["id"]) for r in records]


def shown_means(review: ReviewScreen) -> dict[str, list[str]]:
    """The metric cells of the scores table, per retriever, as drawn."""
    table = review.query_one("#metrics", DataTable)
    return {
        str(key.value): [str(c) for c in table.get_row(key)[1 : 1 + len(REVIEW_METRICS)]]
        for key in table.rows
    }


def grid_cells(review: ReviewScreen, qid: str) -> list[str]:
    """The grid's cells of one question (its retrievers' columns), as drawn."""
    grid = review.query_one("#grid", DataTable)
    return [str(c) for c in grid.get_row(qid)[1:]] if qid in grid.rows else []


async def test_questions_imported_beside_the_open_app_never_drop_the_means(
    app_factory, demo_ws, tmp_path
):
    copies = copies_of_the_scored(demo_ws, tmp_path / "copies.jsonl")
    n = len(copies)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        review = app.screen
        assert isinstance(review, ReviewScreen)
        counts = review.query_one("#review-counts", Static)
        before = shown_means(review)
        assert f"{n} scored" in plain(counts) and "not ranked" not in plain(counts)
        samples: list[tuple[dict[str, list[str]], str, list[str]]] = []
        redraw = review.refresh_scores

        def sampled() -> None:
            redraw()
            samples.append((shown_means(review), plain(counts), grid_cells(review, copies[0])))

        review.refresh_scores = sampled  # type: ignore[method-assign]
        importer = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tui",
            "import",
            "questions",
            str(demo_ws),
            str(tmp_path / "copies.jsonl"),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await importer.communicate()
        assert importer.returncode == 0, err.decode()
        assert f"{n} added" in out.decode()
        await wait_for(
            pilot,
            lambda: f"{2 * n} scored" in plain(counts) and "not ranked" not in plain(counts),
        )
    assert samples, "the scores were never redrawn"
    assert all(means == before for means, _, _ in samples), [s[0] for s in samples]
    waiting = [s for s in samples if f"{n} scored · {n} not ranked yet" in s[1]]
    assert waiting, [s[1] for s in samples]  # said, until the ranking landed
    assert all(c == NOT_RANKED for c in waiting[0][2]), waiting[0][2]  # never "-"
    for _, _, cells in waiting:  # as retrievers rank it, their ranks show; the rest say so
        assert NOT_RANKED in cells and all(c == NOT_RANKED or c.isdigit() for c in cells)
    _, last_counts, last_cells = samples[-1]
    assert f"{2 * n} scored" in last_counts and NOT_RANKED not in last_cells
    with Workspace.open(demo_ws, readonly=True) as ws:  # ranked by every retriever
        assert all(set(copies) <= set(ws.runs(s.name)) for s in ws.retrievers())


async def test_a_read_only_app_counts_them_everywhere_and_ranks_nothing(
    app_factory, demo_ws, tmp_path
):
    """Read-only, nothing can be ranked: the counts, the grid and Label say so, lastingly."""
    copies = copies_of_the_scored(demo_ws, tmp_path / "copies.jsonl")
    n = len(copies)
    with Workspace.open(demo_ws) as ws:
        from engine.ingest import import_questions

        import_questions(ws, tmp_path / "copies.jsonl")
    app = app_factory(readonly=True)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        review = app.screen
        assert isinstance(review, ReviewScreen)
        counts = plain(review.query_one("#review-counts", Static))
        assert f"{n} scored · {n} not ranked yet" in counts
        assert grid_cells(review, copies[-1]) == [NOT_RANKED] * len(app.session.live.retrievers)
        judge = await open_judge(pilot, copies[0])
        progress = plain(judge.query_one("#progress", Static))
        assert f"{n} not ranked yet" in progress and "(not ranked yet)" in progress
        assert "not ranked yet (read-only)" in plain(judge.query_one("#status", Static))
        assert app.ranking.ranking == ()
    with Workspace.open(demo_ws, readonly=True) as ws:
        assert not any(set(copies) & set(ws.runs(s.name)) for s in ws.retrievers())
