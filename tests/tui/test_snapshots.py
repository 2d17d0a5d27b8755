"""A curated set of SVG snapshots; each docstring says what the picture must show.

Update them only after looking at the report and agreeing with the new picture:
``python -m pytest tests/tui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from textual.widgets import OptionList

from tests.tui.conftest import APP_SIZE, wait_for


def _pin_latency(app) -> None:
    # ms/query is measured at pooling time and varies run to run; pin it for the picture
    app.session.live.latency_ms = dict.fromkeys(app.session.live.retrievers, 0.1)


def test_questions_screen(snap_compare, app_factory):
    """The questions screen on the demo: 49 rows with Korean question text, statuses
    coloured (labeled green, disputed red, no_answer cyan), the filter line reading
    `status: all   tag: all` with the counts, and the footer offering the filters."""
    assert snap_compare(app_factory(), terminal_size=APP_SIZE)


def test_questions_filtered_to_disputed(snap_compare, app_factory):
    """After `f` five times: only the five disputed questions, `status: disputed`."""
    assert snap_compare(app_factory(), press=["f"] * 5, terminal_size=APP_SIZE)


def test_judge_screen_after_grading(snap_compare, app_factory):
    """Judging q16 (`0137 문서에서 ...`, tags hard and partial-id): the first candidate
    carries `[2]`, its text is on the right with question words highlighted, the status
    line shows the resolved gold, and the footer shows `0123 Grade` and `u Undo`."""

    async def run_before(pilot) -> None:
        pilot.app.judge("q16")
        await pilot.pause()
        await pilot.press("2")

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)


def test_review_screen(snap_compare, app_factory):
    """The review: four bm25 retrievers with Hit@1, Hit@3, Hit@5, MRR, R@5, nDCG@10 and
    ms/q (best value per column in bold green), the counts line (35 scored, 5 no answer,
    6 disputed, 3 unlabeled), the grid of gold ranks hardest first (`-` in red for
    misses) and the detail of the hardest question with each retriever's rank-1 doc."""

    async def run_before(pilot) -> None:
        _pin_latency(pilot.app)
        await pilot.press("r")

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)


def test_write_screen_warns_of_an_easy_question(snap_compare, app_factory):
    """The write screen with a question copied from a title: the overlap bar near full
    and the yellow warning `likely an easy question`; no document title anywhere."""

    async def run_before(pilot) -> None:
        await pilot.press("w")
        await pilot.press(*"감쇠 보정 원리")
        note = pilot.app.screen.query_one("#overlap-note")
        await wait_for(pilot, lambda: "likely an easy" in str(note.render()))

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)


def test_help_panel_on_the_judge_screen(snap_compare, app_factory):
    """`?` on the judge screen: the help panel on the right explains grades, pooling and
    the blinded order above the live key list."""

    async def run_before(pilot) -> None:
        pilot.app.judge("q01")
        await pilot.pause()
        await pilot.press("question_mark")

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)


def test_search_modal(snap_compare, app_factory):
    """`/` on the judge screen: the corpus search dialog over the judge screen, the query
    prefilled with the question, results with titles and ids."""

    async def run_before(pilot) -> None:
        pilot.app.judge("q16")
        await pilot.pause()
        await pilot.press("slash")
        results = pilot.app.screen.query_one(OptionList)
        await wait_for(pilot, lambda: results.option_count > 0)

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)
