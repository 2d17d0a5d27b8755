"""Pilot tests: press keys, then assert on workspace rows and on what the screen shows."""

from __future__ import annotations

from textual.widgets import DataTable, Input, OptionList, Static

from engine.types import Doc, Label, Question
from engine.workspace import Workspace
from tests.conftest import question_history
from tests.tui.conftest import APP_SIZE, my_labels, open_judge, plain, rows, wait_for
from tui.screens.base import cursor_key
from tui.screens.judge import JudgeScreen
from tui.screens.modals import PromptScreen, SearchScreen
from tui.screens.questions import QuestionsScreen
from tui.screens.review import ReviewScreen
from tui.screens.write import WriteScreen
from tui.widgets.candidate_list import CandidateList


def my_verdict(path, qid):
    found = rows(
        path,
        "SELECT verdict, note FROM verdicts WHERE question_id = ? AND annotator = 'tester'",
        qid,
    )
    return found[0] if found else None


async def test_questions_screen_lists_filters_and_opens_judge(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        assert isinstance(app.screen, QuestionsScreen)
        table = app.screen.query_one(DataTable)
        assert table.row_count == 49
        # the easy-question hint: q05 copies most of a title (engine.analysis.analyses agrees)
        await wait_for(pilot, lambda: bool(app.screen.overlap))
        assert str(table.get_row("q05")[3]) == "86%"
        assert str(table.get_row("q47")[4]) == "-"  # no gold yet
        await pilot.press("f")  # unlabeled
        assert app.screen.status_filter.value == "unlabeled"
        assert table.row_count == 3
        assert "status: unlabeled" in plain(app.screen.query_one("#filters", Static))
        await pilot.press("f", "f", "f", "f", "f")  # ... disputed
        assert app.screen.status_filter.value == "disputed"
        assert table.row_count == 6  # 5 disputed and the ambiguous one, as the counts say
        await pilot.press("f", "f", "t")  # recheck, back to all statuses; first tag
        assert app.screen.tag_filter == "conditional"
        assert table.row_count == 3
        await pilot.press("enter")
        assert isinstance(app.screen, JudgeScreen)
        assert app.screen.question_id == "q20"
        assert "q20" in plain(app.screen.query_one("#question", Static))


async def test_judging_with_every_key_is_durable(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        app.state.auto_advance = False  # the keys alone (the flow is tested below)
        screen = await open_judge(pilot, "q04")
        cands = screen.query_one(CandidateList)
        first, second = cands.candidates[0].doc_id, cands.candidates[1].doc_id
        await pilot.press("2")
        assert my_labels(demo_ws, "q04") == {first: 2}  # committed before the next key
        await pilot.press("space")
        assert my_labels(demo_ws, "q04") == {first: 0}
        await pilot.press("space")
        assert my_labels(demo_ws, "q04") == {first: 1}
        await pilot.press("j", "3")
        assert my_labels(demo_ws, "q04") == {first: 1, second: 3}
        await pilot.press("k", "0")
        assert my_labels(demo_ws, "q04") == {first: 0, second: 3}
        assert "[3]" in str(cands.get_option_at_index(1).prompt)
        await pilot.press("1")
        # the resolved gold now disagrees with mina and jun: disputed, visible at once
        assert "gold: disputed" in plain(screen.query_one("#status", Static))
        await pilot.press("s")
        assert my_verdict(demo_ws, "q04") == ("skip", "")
        await pilot.press("s")
        assert my_verdict(demo_ws, "q04") is None
        await pilot.press("n")
        assert my_verdict(demo_ws, "q04") == ("no_answer", "")
        assert "you: no_answer" in plain(screen.query_one("#status", Static))
        await pilot.press("n")  # again: taken back
        assert my_verdict(demo_ws, "q04") is None


async def test_undo_walks_back_changes(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        app.state.auto_advance = False
        screen = await open_judge(pilot, "q05")
        assert not screen.check_action("undo", ())  # nothing to undo: not in the footer
        doc = screen.query_one(CandidateList).current.doc_id
        await pilot.press("2", "3", "n")
        # no answer on a question you graded relevant: the grade is cleared, with a notice
        assert my_labels(demo_ws, "q05") == {}
        assert my_verdict(demo_ws, "q05") == ("no_answer", "")
        assert "[3]" not in str(screen.query_one(CandidateList).get_option_at_index(0).prompt)
        assert screen.check_action("undo", ())
        await pilot.press("u")  # one undo: the verdict goes and the grade comes back
        assert my_verdict(demo_ws, "q05") is None
        assert my_labels(demo_ws, "q05") == {doc: 3}
        assert "[3]" in str(screen.query_one(CandidateList).get_option_at_index(0).prompt)
        await pilot.press("u")
        assert my_labels(demo_ws, "q05") == {doc: 2}
        await pilot.press("u")
        assert my_labels(demo_ws, "q05") == {}
        assert not screen.can_undo
        undo_events = rows(
            demo_ws,
            "SELECT count(*) FROM events WHERE question_id = 'q05' AND annotator = 'tester'",
        )[0][0]
        assert undo_events == 8  # every change and every undo is in the log


async def test_ambiguous_with_note_and_question_edit(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        app.state.auto_advance = False  # stay on q06 to edit it after the flag
        await open_judge(pilot, "q06")
        await pilot.press("a")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"R1 R2 differ", "enter")
        assert my_verdict(demo_ws, "q06") == ("ambiguous", "R1 R2 differ")
        assert isinstance(app.screen, JudgeScreen)
        await pilot.press("e")
        assert isinstance(app.screen, PromptScreen)
        field = app.screen.query_one(Input)
        field.value = "감마카메라 균일도 두 가지 차이"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert rows(demo_ws, "SELECT text FROM questions WHERE id = 'q06'")[0][0] == (
            "감마카메라 균일도 두 가지 차이"
        )
        history = question_history(Workspace.open(demo_ws), "q06")
        assert history[-1][2] == "감마카메라 균일도 intrinsic extrinsic 차이"


async def test_next_previous_follow_the_questions_order(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q10")
        await pilot.press("right_square_bracket")
        assert screen.question_id == "q11"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert screen.question_id == "q09"


async def test_corpus_search_adds_a_gold_document(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q01")
        await pilot.press("slash")
        assert isinstance(app.screen, SearchScreen)
        field = app.screen.query_one(Input)
        field.value = "TD-2024-0137 균일도 팬텀"
        results = app.screen.query_one(OptionList)
        await wait_for(
            pilot,
            lambda: results.option_count > 0 and results.get_option_at_index(0).id == "td-0137",
        )
        await pilot.press("enter")
        await pilot.pause()
        assert my_labels(demo_ws, "q01") == {"td-0137": 1}
        assert isinstance(app.screen, JudgeScreen)
        assert screen.query_one(CandidateList).current.doc_id == "td-0137"


async def test_writing_blind_saves_pools_and_opens_judging(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("w")
        assert isinstance(app.screen, WriteScreen)
        # nothing on the write screen shows a document title or text
        docs = Workspace.open(demo_ws).docs()
        shown = " ".join(plain(s) for s in app.screen.query(Static))
        assert not any(d.title in shown for d in docs)
        # global keys (q w l r) are letters: typing them must not leave the editor
        await pilot.press(*"qwlr ")
        assert isinstance(app.screen, WriteScreen)
        assert app.screen.query_one("#write-text", Input).value == "qwlr "
        app.screen.query_one("#write-text", Input).value = ""
        await pilot.press(*"감쇠 보정 원리")
        note = app.screen.query_one("#overlap-note", Static)
        await wait_for(pilot, lambda: "likely an easy question" in plain(note))
        app.screen.query_one("#write-text", Input).value = "숨 쉴 때 생기는 어긋남 고치기"
        await wait_for(pilot, lambda: "overlap (warning from 60%)" in plain(note))
        app.screen.query_one("#write-tags", Input).value = "hard, paraphrase"
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, JudgeScreen)
        assert app.screen.question_id == "w0001"
        q = rows(
            demo_ws, "SELECT text, tags, author, written_blind FROM questions WHERE id = 'w0001'"
        )[0]
        assert q == ("숨 쉴 때 생기는 어긋남 고치기", '["hard","paraphrase"]', "tester", 1)
        await app.workers.wait_for_complete()
        await pilot.pause()
        pooled = rows(demo_ws, "SELECT retriever FROM runs WHERE question_id = 'w0001'")
        assert len(pooled) == 4
        assert app.screen.query_one(CandidateList).option_count > 0


async def test_review_updates_after_a_label_change(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        assert isinstance(app.screen, ReviewScreen)
        metrics = app.screen.query_one("#metrics", DataTable)
        assert [str(c.label) for c in metrics.columns.values()][:3] == [
            "retriever",
            "Hit@1",
            "Hit@3",
        ]
        names = [str(k.value) for k in metrics.rows]
        assert names == ["bm25-word", "bm25-bigram", "bm25-word+bigram", "bm25-kiwi"]
        before = str(metrics.get_row("bm25-word")[4])  # MRR
        counts_before = plain(app.screen.query_one("#review-counts", Static))
        assert "35 scored" in counts_before
        grid = app.screen.query_one("#grid", DataTable)
        await pilot.press("down")
        selected = str(grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value)
        await pilot.press("l")  # judge the question selected on the review
        assert app.screen.question_id == selected
        await pilot.press("n")  # no answer: it leaves the scored questions
        await pilot.press("r")
        metrics = app.screen.query_one("#metrics", DataTable)
        after = str(metrics.get_row("bm25-word")[4])
        assert after != before
        assert "34 scored" in plain(app.screen.query_one("#review-counts", Static))
        # the per-question grid no longer lists it
        grid = app.screen.query_one("#grid", DataTable)
        assert selected not in [str(k.value) for k in grid.rows]


async def test_review_tag_filter_and_detail(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        screen = app.screen
        grid = screen.query_one("#grid", DataTable)
        # the cursor rests on the current question (q01, the first), hardest rows first
        assert cursor_key(grid) == app.state.current_question == "q01"
        assert str(next(iter(grid.rows)).value) == "q24"
        detail = plain(screen.query_one("#detail", Static))
        assert "q01" in detail and "rank 1:" in detail
        await pilot.press("t")
        assert screen.tag == "conditional"
        assert "tag: conditional" in plain(screen.query_one("#review-counts", Static))
        assert grid.row_count <= 3


async def test_help_toggles_and_explains(app_factory):
    from tui.help import HelpScreen

    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        judge = await open_judge(pilot, "q01")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen) and app.screen.about is judge
        await pilot.press("question_mark")
        assert app.screen is judge
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)


async def test_palette_offers_the_screens_actions(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_judge(pilot, "q01")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Label: no answer in the corpus" in titles and "Go: review" in titles
        assert "Label: undo" not in titles  # nothing to undo yet
        await pilot.press("ctrl+p")
        assert app.screen.__class__.__name__ == "CommandPalette"


async def test_markup_and_escapes_in_the_corpus_show_literally(tmp_path):
    from engine.workspace_setup import new_workspace
    from tui.app import GoldpanApp

    path = tmp_path / "m.db"
    ws = new_workspace(path)
    ws.write_docs([Doc("d[1]", "[bold red]T[/]", "[link=http://x]click[/link] \x1b[31mred")])
    ws.write_questions([Question("q[b]", "[i]click[/i] red")])
    ws.write_labels([Label("q[b]", "d[1]", "x", 1)])
    ws.close()
    app = GoldpanApp(path, annotator="tester", animations=False, blink=False, warm_indexes=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        table = app.screen.query_one(DataTable)
        assert str(table.get_row("q[b]")[5]) == "[i]click[/i] red"
        app.judge("q[b]")
        await app.workers.wait_for_complete()
        await pilot.pause()
        body = plain(app.screen.query_one("#doc-body", Static))
        assert "[link=http://x]click[/link] ␛[31mred" in body
        head = plain(app.screen.query_one("#doc-head", Static))
        assert "[bold red]T[/]" in head
        assert "[i]click[/i] red" in plain(app.screen.query_one("#question", Static))


async def test_another_annotators_label_shows_after_reload(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        other = Workspace.open(demo_ws)
        other.write_labels([Label("q47", "pet-qc-01", "kim", 2)])
        other.close()
        await pilot.press("ctrl+r")
        table = app.screen.query_one(DataTable)
        assert str(table.get_row("q47")[1]) == "labeled"


async def test_indexes_build_in_a_worker_after_the_first_paint(app_factory):
    from tui.messages import IndexesReady

    app = app_factory(warm_indexes=True)
    seen = []
    async with app.run_test(size=APP_SIZE, message_hook=seen.append) as pilot:
        # the first screen is there before the indexes (Kiwi included) are built
        assert isinstance(app.screen, QuestionsScreen)
        await wait_for(pilot, lambda: any(isinstance(m, IndexesReady) for m in seen), 3000)
        await pilot.pause()
        ws = app.ws
        assert all(app.pooling.prepared.has(s, ws.corpus_hash()) for s in ws.retrievers())


async def test_a_reopen_indexes_from_the_stored_counts_without_tokenizing(app_factory, monkeypatch):
    """The demo keeps each tokenizer's term counts: indexing at open reads them; no
    document is tokenized again (it was, on every open, while the first keys waited).
    Kiwi's model still loads there, so that no question's ranking time pays for it."""
    import engine.retrieve.bm25.retriever as bm25
    import engine.tokenize as tokenize
    from tui.messages import IndexesReady

    counted: list[str] = []
    real = bm25.token_counts
    loaded: list[str] = []
    load = tokenize.KiwiTokenizer.ready

    def spy(tokenizer, texts):
        counted.append(tokenizer.name)
        return real(tokenizer, texts)

    def ready(self):
        loaded.append(self.name)
        load(self)

    monkeypatch.setattr(bm25, "token_counts", spy)
    monkeypatch.setattr(tokenize.KiwiTokenizer, "ready", ready)
    app = app_factory(warm_indexes=True)
    seen: list[object] = []
    async with app.run_test(size=APP_SIZE, message_hook=seen.append) as pilot:
        await wait_for(pilot, lambda: any(isinstance(m, IndexesReady) for m in seen), 3000)
        ws = app.ws
        assert all(app.pooling.prepared.has(s, ws.corpus_hash()) for s in ws.retrievers())
        assert counted == []
        assert loaded == ["kiwi"]
        # and what they index ranks as the stored rankings say (the kiwi retriever too)
        question = next(q for q in ws.questions() if q.id == "q02")
        for spec in ws.retrievers():
            retriever = app.pooling.prepared.get(spec, ws.corpus_hash(), ws.docs())
            ids, _ = retriever.search(question.text, 5)
            assert ids == list(ws.runs(spec.name)["q02"].doc_ids[:5]), spec.name


async def test_annotator_view_and_queue_order(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = app.screen
        table = screen.query_one(DataTable)
        await pilot.press("v")  # jun's view: q42 is labeled (jun found a doc), not disputed
        assert screen.view == "jun"
        assert str(table.get_row("q42")[1]) == "labeled"
        assert "view: jun" in plain(screen.query_one("#filters", Static))
        await pilot.press("v")
        assert screen.view == "mina"
        assert str(table.get_row("q42")[1]) == "no_answer"
        await pilot.press("v")  # back to the resolved gold
        assert str(table.get_row("q42")[1]) == "disputed"
        await pilot.press("o")
        order = [str(k.value) for k in table.rows]
        assert order == screen.queue()[0]
        assert order[0] == "q49"  # unlabeled, most unjudged pooled documents
        assert "order: queue" in plain(screen.query_one("#filters", Static))
