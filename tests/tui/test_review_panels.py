"""Pilot tests of the review screen's analysis panels, against the engine's numbers."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from engine.analysis.analyses import compare_retrievers, failures, noanswer_calibration
from engine.scoring import score_workspace, workspace_golds
from engine.types import Label
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS
from tests.tui.conftest import APP_SIZE, wait_for
from tui.widgets.review_panels import NO_SCORED


def text(widget: Static) -> str:
    return str(widget.render())


async def open_panel(pilot, name: str):
    await pilot.press("r")
    screen = pilot.app.screen
    while screen.panel != name:
        await pilot.press("p")
    return screen


async def test_panels_cycle_and_retrievers_change(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "scores")
        seen = []
        for _ in range(7):
            await pilot.press("p")
            seen.append(screen.panel)
        assert seen == ["compare", "tags", "failures", "noanswer", "sweep", "pool", "scores"]
        await pilot.press("a")  # B is bm25-bigram: A takes it, and B takes A's
        assert screen._names() == ("bm25-bigram", "bm25-word")
        for key in "abababab":  # never A = B, whichever is cycled
            await pilot.press(key)
            a, b = screen._names()
            assert a != b
        assert "compare" not in text(screen.query_one("#panel-title", Static))


async def test_compare_panel_equals_goldpan_compare(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "compare")
        body = screen.query_one("#compare-body", Static)
        await wait_for(pilot, lambda: "W/T/L" in text(body))
        ws = Workspace.open(demo_ws)
        [ref] = compare_retrievers(ws, "bm25-word", "bm25-bigram", "mrr")
        shown = text(body)
        lo, hi = ref.ci95
        assert f"[{lo:+.3f}, {hi:+.3f}]" in shown
        assert f"{ref.wins}/{ref.ties}/{ref.losses}" in shown
        assert f"mrr: {ref.verdict.says('bm25-word', 'bm25-bigram')}" in " ".join(shown.split())
        assert f"bm25-word wins on MRR ({ref.wins})" in shown
        assert f"bm25-bigram wins on MRR ({ref.losses})" in shown


async def test_compare_and_sweep_panels_say_nothing_is_scored_instead_of_zeros(
    app_factory, tmp_path
):
    # no label yet: compare showed means, intervals and p-values of no question, and the
    # sweep a grid of 0.000 with the retriever's own cell starred
    path = tmp_path / "unlabeled.db"
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.close()
    app = app_factory(path)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "compare")
        body = screen.query_one("#compare-body", Static)
        await wait_for(pilot, lambda: text(body) == NO_SCORED)
        while screen.panel != "sweep":
            await pilot.press("p")
        note = screen.query_one("#sweep-note", Static)
        await wait_for(pilot, lambda: text(note) == NO_SCORED)
        assert not screen.query_one("#sweep-table", DataTable).columns


async def test_tags_panel_shows_easy_and_hard_side_by_side(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "tags")
        table = screen.query_one("#tags-table", DataTable)
        headers = [str(c.label) for c in table.columns.values()]
        assert headers[:5] == [
            "retriever",
            "easy\nHit@1",
            "easy\nMRR",
            "hard\nHit@1",
            "hard\nMRR",
        ]
        ws = Workspace.open(demo_ws)
        hard = score_workspace(ws, tag="hard").retrievers["bm25-word"].means["mrr"]
        row = table.get_row_at(0)
        assert str(row[0]) == "bm25-word" and str(row[4]) == f"{hard:.3f}"
        assert "scored questions: easy" in text(screen.query_one("#tags-note", Static))


async def test_tags_panel_offers_every_tag_and_shows_a_dash_where_none_is_scored(
    app_factory, demo_ws
):
    """The panel knew only easy and hard and showed 0.000 where no question had the tag:
    `1` and `2` pick the pair from every tag of the workspace, and a tag whose questions
    are none of them scored (no-answer) shows `-`."""
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "tags")
        table = screen.query_one("#tags-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 4)
        tags = app.session.live.all_tags()
        assert {"easy", "hard", "no-answer", "paraphrase"} <= set(tags)

        def pair() -> tuple[str, str]:
            pair = screen._tags()
            assert pair is not None
            labels = [str(c.label).split("\n")[0] for c in table.ordered_columns]
            # the columns' names: each tag, cut to fit (the title names them whole)
            assert labels[1].rstrip("…") == pair[0][: len(labels[1].rstrip("…"))]
            assert labels[3].rstrip("…") == pair[1][: len(labels[3].rstrip("…"))]
            return pair

        assert pair() == ("easy", "hard")
        firsts = []
        for _ in tags:
            await pilot.press("1")
            firsts.append(pair()[0])
        assert set(firsts) == set(tags) - {"hard"}  # every tag but the second one
        while pair()[1] != "no-answer":
            await pilot.press("2")
        ws = Workspace.open(demo_ws)
        assert score_workspace(ws, tag="no-answer").counts["scored"] == 0
        row = table.get_row_at(0)
        assert [str(c) for c in row[3:5]] == ["-", "-"]  # not 0.000
        assert "no-answer 0" in text(screen.query_one("#tags-note", Static))
        title = text(screen.query_one("#panel-title", Static))
        assert f"by tag {pair()[0]} vs no-answer" in title and "1/2 tags" in title
        await pilot.press("p")  # another panel: 1 and 2 do nothing there
        assert screen.check_action("next_tag1", ()) is False


async def test_tags_panel_without_tags_says_how_to_get_them(app_factory, tmp_path):
    path = tmp_path / "untagged.db"
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions([q.__class__(q.id, q.text) for q in TINY_QUESTIONS])
    ws.write_labels([Label("q1", "d1", "mina", 1)])
    ws.close()
    app = app_factory(path)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "tags")
        note = screen.query_one("#tags-note", Static)
        await wait_for(pilot, lambda: "No question has a tag yet" in text(note))
        labels = [str(c.label) for c in screen.query_one("#tags-table", DataTable).columns.values()]
        assert labels[1:] == ["hi-ov\nHit@1", "hi-ov\nMRR", "lo-ov\nHit@1", "lo-ov\nMRR"]


async def test_failures_panel_lists_the_engines_failures(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "failures")
        table = screen.query_one("#failures", DataTable)
        expected = failures(Workspace.open(demo_ws), "bm25-word")
        assert table.row_count == len(expected) > 0
        first = table.get_row_at(0)
        assert str(first[0]) == expected[0].question_id
        assert str(first[2]) == expected[0].detail
        # q01: the gold pet-qc-01 lost to its series' summary post, both titles shown
        assert str(first[2]) == "overview of series 'pet-qc' (총정리)"
        assert str(first[3]).startswith("pet-qc-01 PET/CT 일일 QC")  # cut to fit
        assert str(first[4]).startswith("pet-qc-00 PET/CT 품질관리")


async def test_a_panel_table_is_as_wide_as_its_cells_as_soon_as_it_is_filled(app_factory, demo_ws):
    """Not only once the table's own idle has measured it: a frame drawn before that (a
    busy processor) showed every column as wide as its header ("PET/C" for a title)."""
    from tui.render import failures_grid
    from tui.widgets.review_panels import fill
    from tui.widgets.tables import PADDING, width

    ws = Workspace.open(demo_ws, readonly=True)
    rows = failures(ws, "bm25-word")
    ws.close()
    grid = failures_grid(rows, 40)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "failures")
        table = screen.query_one("#failures", DataTable)
        fill(table, grid)  # and no await: nothing idles before the widths are read
        widths = [c.get_render_width(table) for c in table.ordered_columns]
        headers = grid.headers()
        widest = [
            max([width(h), *(width(row[i]) for row in grid.rows)]) + PADDING
            for i, h in enumerate(headers)
        ]
        assert widths == widest
        assert widths[4] > width(headers[4]) + PADDING  # the titles: wider than the header


async def test_noanswer_panel_histogram_and_threshold(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "noanswer")
        body = text(screen.query_one("#noanswer-body", Static))
        cal = noanswer_calibration(Workspace.open(demo_ws), "bm25-word")
        assert f"{len(cal.answerable)} answerable" in body
        assert f"best threshold {cal.best.threshold:.3f}" in body
        assert "█" in body


async def test_sweep_panel_own_cell_equals_the_score(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "sweep")
        table = screen.query_one("#sweep-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 4)
        cells = [str(c) for r in range(4) for c in table.get_row_at(r)]
        own = [c for c in cells if c.endswith("*")]
        mrr = score_workspace(Workspace.open(demo_ws)).retrievers["bm25-word"].means["mrr"]
        assert own == [f" {mrr:.3f}*"]
        assert "overfits" in text(screen.query_one("#sweep-note", Static))


async def test_compare_follows_a_label_change(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "compare")
        body = screen.query_one("#compare-body", Static)
        await wait_for(pilot, lambda: "W/T/L" in text(body))
        assert "35 scored questions" in text(body)
        await pilot.press("l", "n", "r")  # q01: no answer
        await wait_for(pilot, lambda: "34 scored questions" in text(body))


async def test_pool_panel_counts_what_only_one_retriever_found(app_factory, demo_ws):
    ws = Workspace.open(demo_ws)
    runs = ws.all_runs()
    golds = {
        q: {d for d, grade in g.gold.items() if grade >= 1} for q, g in workspace_golds(ws).items()
    }
    ws.close()
    expected = {}
    for name, by_q in runs.items():
        only = gold = 0
        for qid, ranking in by_q.items():
            others = set()
            for other, other_q in runs.items():
                if other != name:
                    others |= set(other_q.get(qid, ())[:10])
            mine = set(ranking[:10]) - others
            only += len(mine)
            gold += len(mine & golds.get(qid, set()))
        expected[name] = (only, gold)
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "pool")
        table = screen.query_one("#pool", DataTable)
        await wait_for(pilot, lambda: table.row_count == len(expected))
        shown = {}
        for row in range(table.row_count):
            cells = [str(c) for c in table.get_row_at(row)]
            shown[cells[0]] = (int(cells[1]), int(cells[2]))
    assert shown == expected
    assert any(only for only, _ in expected.values())


async def test_panels_compute_in_a_thread_and_post_typed_results(app_factory, monkeypatch):
    import threading

    from tui.widgets.review_panels import FailuresPanel

    threads = []
    real = FailuresPanel.analyse

    def spy(self, request):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(self, request)

    monkeypatch.setattr(FailuresPanel, "analyse", spy)
    seen = []
    app = app_factory()
    async with app.run_test(size=APP_SIZE, message_hook=seen.append) as pilot:
        screen = await open_panel(pilot, "failures")
        panel = screen.query_one(FailuresPanel)
        await wait_for(pilot, lambda: panel.computed == 1)
    assert threads == [False]  # off the UI thread
    ready = [m for m in seen if isinstance(m, FailuresPanel.Ready)]
    assert len(ready) == 1 and ready[0].result[0]  # the failures, as plain data


async def test_returning_to_review_recomputes_nothing_until_the_workspace_changes(
    app_factory, demo_ws
):
    from tui.widgets.review_panels import FailuresPanel

    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "failures")
        panel = screen.query_one(FailuresPanel)
        table = screen.query_one("#failures", DataTable)
        await wait_for(pilot, lambda: panel.computed == 1)
        redraws = []
        real = screen.refresh_scores
        screen.refresh_scores = lambda: (redraws.append(1), real())[1]
        for _ in range(3):  # back and forth: nothing changed, nothing recomputed
            await pilot.press("q", "r")
            await pilot.pause(0.05)
        assert panel.computed == 1 and redraws == []
        before = table.row_count
        # another annotator settles a failing question in their own process
        failing = str(table.get_row_at(0)[0])
        other = Workspace.open(demo_ws)
        other.write_labels([Label(failing, d, "other", 0) for d in other_gold(other, failing)])
        other.close()
        await pilot.press("q", "r")
        await wait_for(pilot, lambda: panel.computed == 2)
        assert redraws == [1]
        # and a label of this session's own (no other process) counts as a change too
        await pilot.press("l", "n", "r")
        await wait_for(pilot, lambda: panel.computed == 3)
        assert table.row_count <= before


def other_gold(ws, qid):
    return [lab.doc_id for lab in ws.labels_for(qid) if lab.grade >= 1]


def test_cli_and_review_panel_render_failures_with_the_same_renderer(demo_ws, capsys, monkeypatch):
    from engine.analysis.analyses import failures as find_failures
    from tui.cli import main
    from tui.render import failures_grid

    ws = Workspace.open(demo_ws)
    rows = find_failures(ws, "bm25-word")
    ws.close()
    grid = failures_grid(rows)
    assert [c.header for c in grid.columns] == [
        "question",
        "gold rank",
        "relation",
        "gold document",
        "rank-1 document",
    ]
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["failures", str(demo_ws), "--retriever", "bm25-word"]) == 0
    out = capsys.readouterr().out
    for header in ("question", "gold rank", "relation", "gold document", "rank-1 document"):
        assert header in out
    for row in grid.rows:
        assert str(row[0]) in out and str(row[2]) in out


async def test_questions_measure_overlap_again_only_after_a_change(app_factory):
    from tui.screens.questions import QuestionsScreen

    runs = []
    real = QuestionsScreen._measure_overlap

    def counting(self):
        runs.append(1)
        return real(self)

    app = app_factory()
    QuestionsScreen._measure_overlap = counting
    try:
        async with app.run_test(size=APP_SIZE) as pilot:
            await wait_for(pilot, lambda: bool(app.screen.overlap))
            await pilot.press("r", "q", "r", "q")
            assert len(runs) == 1
            await pilot.press("l", "n", "q")  # a verdict changes the gold: measure again
            await wait_for(pilot, lambda: len(runs) == 2)
    finally:
        QuestionsScreen._measure_overlap = real


async def test_failures_panel_shows_the_selected_failures_whole_titles_and_opens_it(
    app_factory, demo_ws
):
    """The table cuts titles; the line under it shows the selected failure's gold and
    winner whole, the arrow keys move in it, and enter judges that question."""
    from tui.screens.judge import JudgeScreen

    app = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_panel(pilot, "failures")
        table = screen.query_one("#failures", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        expected = failures(Workspace.open(demo_ws), "bm25-word")
        detail = screen.query_one("#failure-detail", Static)
        assert table.has_focus
        await pilot.press("down")
        second = expected[1]
        shown = " ".join(text(detail).split())
        assert f"{second.question_id} gold: {second.gold_doc} {second.gold_title}" in shown
        assert f"rank 1: {second.top_doc} {second.top_title}" in shown
        assert app.state.current_question == second.question_id
        await pilot.press("enter")
        assert isinstance(app.screen, JudgeScreen)
        assert app.screen.question_id == second.question_id


async def test_failures_panel_over_no_scored_question_says_so(app_factory, tmp_path):
    """No failure because nothing is scored is not "every gold at rank 1"."""
    path = tmp_path / "unlabeled.db"
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.close()
    app = app_factory(path)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_panel(pilot, "failures")
        detail = screen.query_one("#failure-detail", Static)
        await wait_for(pilot, lambda: text(detail) == NO_SCORED)
        assert screen.query_one("#failures", DataTable).row_count == 0
