"""A curated set of SVG snapshots; each docstring says what the picture must show.

Update them only after looking at the report and agreeing with the new picture:
``python -m pytest tests/tui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from textual.widgets import DataTable, OptionList

from tests.tui.conftest import APP_SIZE, wait_for
from tui.textual_compat import table_measured


def _pin_latency(app) -> None:
    # latency is measured at pooling time and varies run to run; pin it for the picture
    from engine.scoring import Latency

    app.session.live.latency = {
        r: Latency(0.1, 0.2, 0.3, 20, 2500.0) for r in app.session.live.retrievers
    }


async def _overlap_measured(pilot) -> None:
    screen = pilot.app.screen
    await wait_for(pilot, lambda: bool(screen.overlap))


def test_questions_screen(snap_compare, app_factory):
    """The questions screen on the demo: 49 rows with Korean question text (the column
    after the overlaps, with the tags beside it and the annotators after), statuses
    coloured (labeled green, disputed red, no_answer cyan), the title-overlap column
    (yellow from 60%: likely easy), the filter line reading `status: all   tag: all`
    with the counts, and the footer offering the filters. The cursor is on q22, whose
    text the question column cuts: the line under the table shows it whole (`지금 기준으로
    FDG 찍은 환자한테 아기랑 몇 시간 떨어져 있으라고 안내해요?` with its tags), and the
    progress line reads `you: 0/49 questions judged · q22: 0/N candidates judged ·
    ] opens q23`."""

    async def run_before(pilot) -> None:
        await _overlap_measured(pilot)
        table = pilot.app.screen.query_one("#questions")
        table.move_cursor(row=table.get_row_index("q22"))
        await pilot.pause()

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)


def test_questions_filtered_to_disputed(snap_compare, app_factory):
    """After `f` six times, `status: disputed`: the six questions the counts line calls
    disputed (five disputed and the ambiguous q36, both waiting for an adjudicator); the
    selected one's full text under the table, and the progress line."""

    async def run_before(pilot) -> None:
        await _overlap_measured(pilot)
        await pilot.press(*["f"] * 6)

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)


def test_judge_screen_after_grading(snap_compare, app_factory):
    """Judging q16 (`0137 문서에서 ...`, tags hard and partial-id): the candidates in the
    judging order (MaxMean: td-0137, the gold, first); the first carries `[2]` and
    auto-advance moved the cursor to the second, whose text is on the
    right with question words highlighted; the status line reads `you: 1 relevant so far`
    and the resolved gold; the
    progress line reads `you: 0/49 questions judged · q16: 1/N candidates judged ·
    ] opens q17 · auto-advance on (m)`; the footer shows `0123 Grade`, `u Undo` and
    `m Auto-advance: on`."""

    async def run_before(pilot) -> None:
        pilot.app.judge("q16")
        await pilot.pause()
        await pilot.press("2")

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)


def test_review_screen(snap_compare, app_factory):
    """The review: four bm25 retrievers with Hit@1, Hit@3, Hit@5, MRR, R@5, nDCG@10,
    Judged@10, ms p50, ms p95 and q/s (best value per column in bold green), the counts
    line (35 scored, 5 no answer, 6 disputed, 3 unlabeled) and under it the warning that
    every retriever's top 10 is under 80% judged (the demo's gold is thin), the panel
    line (`panel: scores per question`, drawn once the screen is mounted), the grid of
    gold ranks hardest first (`-` in red for misses) with the cursor on the current
    question (q01, the questions screen's first row), and its detail with each
    retriever's rank-1 doc."""

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


def test_help_on_the_label_screen(snap_compare, app_factory):
    """`?` on the Label screen at 120x40, nothing clipped: first the screens line
    (q Questions · w Write · l Label (here) · r Review · d Adjudicate) and how to leave;
    then, on the left, every Label key (0-3 grades, space, n, /, u greyed because there
    is nothing to undo, ], [, a, s, e, x greyed because no stop is offered, b, g, j, k)
    and the keys that work everywhere; on the right the Label text explaining pooling,
    the blind judging order, the grades and what a stop leaves."""

    async def run_before(pilot) -> None:
        pilot.app.judge("q01")
        await pilot.pause()
        await pilot.press("question_mark")

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)


def test_search_modal(snap_compare, app_factory):
    """`/` then one `down` on the judge screen: the corpus search dialog over the judge
    screen, the query prefilled with the question, results with titles and ids, the
    first highlighted and previewed on the right (title, id, fields, text with the
    question's words highlighted); the top line says enter adds it as relevant and
    0-3 with a grade."""

    async def run_before(pilot) -> None:
        pilot.app.judge("q16")
        await pilot.pause()
        await pilot.press("slash")
        results = pilot.app.screen.query_one(OptionList)
        await wait_for(pilot, lambda: results.option_count > 0)
        await pilot.press("down")
        await pilot.pause()

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=APP_SIZE)


def _panel(name: str):
    async def run_before(pilot) -> None:
        _pin_latency(pilot.app)
        await pilot.press("r")
        screen = pilot.app.screen
        while screen.panel != name:
            await pilot.press("p")
        panel = screen.current_panel()
        await wait_for(pilot, lambda: panel.computed == 1)  # its worker finished
        # a table measures its columns on its own idle: on a busy machine the picture was
        # once taken before, every column as wide as its header ("PET/C" for a title)
        tables = list(panel.query(DataTable))
        await wait_for(
            pilot,
            lambda: all(table_measured(t) for t in tables),
        )
        await pilot.pause()

    return run_before


def test_review_compare_panel(snap_compare, app_factory):
    """Review, compare panel: bm25-word (A) vs bm25-bigram (B) on MRR, Hit@1, Hit@5 and
    nDCG@10 with differences, 95% bootstrap intervals, W/T/L, p-values and the verdict
    (not shown; too few (2) for Hit@5), a sentence per metric with its discordant count,
    the rule, then the questions each one wins and the power line."""
    assert snap_compare(app_factory(), run_before=_panel("compare"), terminal_size=APP_SIZE)


def test_review_tags_panel(snap_compare, app_factory):
    """Review, by-tag panel: Hit@1 and MRR of every retriever on easy vs hard questions
    (the pair chosen when the workspace has both; `1/2 tags` in the panel line) and on
    high vs low title-overlap questions side by side, each group's name over its metric
    in two-line headers, with the question counts."""
    assert snap_compare(app_factory(), run_before=_panel("tags"), terminal_size=APP_SIZE)


def test_review_failures_panel(snap_compare, app_factory):
    """Review, failures panel for bm25-word: each question whose gold is not first, its
    gold rank (`-` when missed), how the rank-1 document relates to the gold in words
    (`overview of series 'pet-qc' (총정리)` in magenta, `neighbour in series 'spect' (4)
    vs (1)` in yellow, `other`), the gold and the rank-1 documents with their titles cut
    short, and under the table the selected q01's two documents with their whole titles."""
    assert snap_compare(app_factory(), run_before=_panel("failures"), terminal_size=APP_SIZE)


def test_review_noanswer_panel(snap_compare, app_factory):
    """Review, no-answer panel for bm25-word: a histogram of top-1 scores, answerable in
    green and no-answer in cyan per score bin, and the best threshold with what it
    rejects and catches."""
    assert snap_compare(app_factory(), run_before=_panel("noanswer"), terminal_size=APP_SIZE)


def test_review_sweep_panel(snap_compare, app_factory):
    """Review, sweep panel for bm25-word: MRR over k1 (rows) x b (columns) as a heat
    table from red (worst) to green (best), `*` on its own k1 1.5 / b 0.75 cell, and the
    note that picking the best cell on a few questions overfits."""
    assert snap_compare(app_factory(), run_before=_panel("sweep"), terminal_size=APP_SIZE)


def test_adjudicate_screen(snap_compare, app_factory):
    """The adjudicate screen on the demo: the five disputed questions then the ambiguous
    one on the left (the six the counts call disputed); for q32 each annotator's grades
    side by side (1 jun, 2 mina) with an empty final column, their verdicts above, and
    kappa / alpha at the bottom."""
    assert snap_compare(app_factory(), press=["d"], terminal_size=APP_SIZE)


# -- 80x24: every screen usable on a small terminal ------------------

SMALL = (80, 24)


def test_questions_screen_small(snap_compare, app_factory):
    """Questions at 80x24: the id, status, gold and overlap columns (`title ov.` and
    `gold ov.` on two lines), then the question text cut to the width left beside the
    tags (`easy`, `easy, multi-gold`: readable, not one letter; the annotators off the
    right edge); the selected q01's whole text under the table, the progress line, and
    the compact footer whole, up to `? Help`."""

    async def run_before(pilot) -> None:
        await _overlap_measured(pilot)

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=SMALL)


def test_judge_screen_small(snap_compare, app_factory):
    """Label at 80x24, q16 after one `2`: the question, the blinded candidates (the first
    `[2]`) beside the second's text, the status line, the progress line (`1/N candidates
    judged`, q16 not yet judged), `you: 1 relevant so far`, and the compact footer whole
    from `0123 Grade` to `? Help`, `u Undo` and `m Auto-advance: on` among them."""

    async def run_before(pilot) -> None:
        pilot.app.judge("q16")
        await pilot.pause()
        await pilot.press("2")

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=SMALL)


def test_adjudicate_screen_small(snap_compare, app_factory):
    """Adjudicate at 80x24: the list of the six questions to adjudicate, and for q32 the
    document ids, titles cut short, both annotators' grade columns (1 jun, 2 mina) and
    the final column, all on screen; the compact footer offers the sides, whole."""
    assert snap_compare(app_factory(), press=["d"], terminal_size=SMALL)


def test_review_screen_small(snap_compare, app_factory):
    """Review at 80x24: the counts and the Judged@10 warning (which names each share, so
    the table leaves its column out), the metrics table with every column on screen (one
    cell of padding; `nDCG @10`, `ms p50` and `ms p95` headers on two lines, so that q/s
    is there too), and the grid of gold ranks across the full width with
    every retriever's column on screen; the detail of the current question under it."""

    async def run_before(pilot) -> None:
        _pin_latency(pilot.app)
        await pilot.press("r")

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=SMALL)


def test_write_screen_small(snap_compare, app_factory):
    """Write at 80x24 with a question copied from a title: the question and tags
    fields, the overlap bar and the yellow warning `likely an easy question`; the
    compact footer."""

    async def run_before(pilot) -> None:
        await pilot.press("w")
        await pilot.press(*"감쇠 보정 원리")
        note = pilot.app.screen.query_one("#overlap-note")
        await wait_for(pilot, lambda: "likely an easy" in str(note.render()))

    assert snap_compare(app_factory(), run_before=run_before, terminal_size=SMALL)
