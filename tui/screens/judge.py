"""The judge screen: the pooled candidates of one question, graded from the keyboard."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Footer, Header, OptionList, Static

from engine.gold import Gold
from tui.actions import Command, bindings
from tui.literal import literal, visible
from tui.messages import LabelSaved, QuestionPooled
from tui.screens.base import GoldpanScreen
from tui.screens.modals import PromptScreen, SearchScreen
from tui.widgets.candidate_list import CandidateList
from tui.widgets.document_view import DocumentView, question_terms

GRADE = Binding.Group("Grade", compact=True)


class JudgeScreen(GoldpanScreen):
    """Mark the gold documents of a question, or say the corpus cannot answer it."""

    HELP = """
## Label

The question is on top; below it the **pooled candidates**: the union of every
retriever's top 10, in a blinded order that shows neither retriever names nor ranks, so
no method is favoured. The selected document's text is on the right with the question's
words highlighted.

**Grades**: 0 = judged not relevant, 1 = relevant (partly answers), 2 = highly relevant,
3 = the perfect answer. `space` toggles 1 and 0. Mark several documents when several
answer. `n` says the corpus has no answer; `a` flags the question as ambiguous (with a
note) for an adjudicator; `s` skips it (you cannot judge it).

`/` searches the whole corpus for a document the pool missed. Every change is saved the
moment you make it; `u` undoes your last change.
"""

    AREA = "Label"
    ACTIONS = (
        *(
            Command(
                str(grade),
                f"grade({grade})",
                "Grade",
                meaning,
                f"judge.grade{grade}",
                title=f"Label: grade {grade} ({meaning.split(':')[0].lower()})",
                group=GRADE,
                when="has_question",
            )
            for grade, meaning in enumerate(
                (
                    "Judged not relevant",
                    "Relevant: partly answers the question",
                    "Highly relevant",
                    "The perfect answer",
                )
            )
        ),
        Command(
            "space",
            "toggle_relevant",
            "Relevant",
            "Toggle relevant (grade 1) and not relevant (grade 0)",
            "judge.toggle",
            title="Label: toggle relevant",
            when="has_question",
        ),
        Command(
            "n",
            "no_answer",
            "No answer",
            "Nothing in the corpus answers this question (again: take back)",
            "judge.no_answer",
            title="Label: no answer in the corpus",
            when="has_question",
        ),
        Command(
            "slash",
            "search",
            "Search",
            "Search the whole corpus for a document the pool missed",
            "judge.search",
            title="Label: search the corpus",
            when="has_question",
        ),
        Command(
            "u",
            "undo",
            "Undo",
            "Undo your last change",
            "judge.undo",
            title="Label: undo",
            when="can_undo",
        ),
        Command(
            "right_square_bracket",
            "next",
            "Next",
            "Next question",
            "judge.next",
            title="Label: next question",
            when="has_question",
        ),
        Command(
            "left_square_bracket",
            "previous",
            "Previous",
            "Previous question",
            "judge.previous",
            title="Label: previous question",
            show=False,
            when="has_question",
        ),
        Command(
            "a",
            "ambiguous",
            "Ambiguous",
            "Flag the question as ambiguous, with a note for the adjudicator",
            "judge.ambiguous",
            title="Label: flag ambiguous",
            show=False,
            when="has_question",
        ),
        Command(
            "s",
            "skip",
            "Skip",
            "You cannot judge this question",
            "judge.skip",
            title="Label: skip question",
            show=False,
            when="has_question",
        ),
        Command(
            "e",
            "edit",
            "Edit question",
            "Rewrite the question (its old text is kept)",
            "judge.edit",
            title="Label: edit question",
            show=False,
            when="has_question",
        ),
        Command(
            "j",
            "cursor_down",
            "Down",
            "Next candidate",
            "judge.down",
            title="Label: next candidate",
            show=False,
        ),
        Command(
            "k",
            "cursor_up",
            "Up",
            "Previous candidate",
            "judge.up",
            title="Label: previous candidate",
            show=False,
        ),
    )
    BINDINGS = bindings(ACTIONS)

    question_id: reactive[str | None] = reactive(None, bindings=True)
    """The question on screen."""
    can_undo: reactive[bool] = reactive(False, bindings=True)
    """Whether this session has a change to undo (shows `u` in the footer)."""
    pooling: reactive[bool] = reactive(False)
    """A worker is ranking this question."""

    def compose(self) -> ComposeResult:
        """Question, candidates beside the document, status line."""
        yield Header()
        yield Static(id="question")
        with Horizontal(id="judge-body"):
            yield CandidateList(id="candidates")
            yield DocumentView(id="document")
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        """Show the app's current question."""
        self.question_id = self.gp.current_question

    def on_screen_resume(self) -> None:
        """Another screen may have chosen a different question."""
        self.gp.session.reload_if_changed()
        if self.question_id != self.gp.current_question:
            self.question_id = self.gp.current_question
        else:
            self.show_question()
        self.query_one(CandidateList).focus()

    def watch_question_id(self) -> None:
        """Load the question."""
        self.show_question()

    # -- drawing -------------------------------------------------------------------------

    def show_question(self) -> None:
        """Redraw everything for the current question."""
        if not self.is_mounted:
            return
        session = self.gp.session
        qid = self.question_id
        candidates = self.query_one(CandidateList)
        if qid is None or session.ws.question(qid) is None:
            self.query_one("#question", Static).update(
                Text("No question selected. Press q to pick one or w to write one.")
            )
            candidates.show([], {})
            self.query_one(DocumentView).show(None, [])
            self.query_one("#status", Static).update("")
            return
        q = session.ws.question(qid)
        assert q is not None
        head = Text.assemble(
            (visible(f"{qid}  "), "bold"),
            (visible(" ".join(f"#{t}" for t in q.tags)), "dim"),
            "\n",
        )
        head.append_text(literal(q.text, style="bold"))
        self.query_one("#question", Static).update(head)
        cands = session.candidates(qid)
        titles = {c.doc_id: self._title(c.doc_id) for c in cands}
        candidates.show(cands, titles, session.my_grades(qid))
        from engine.retrieve import STORED_KINDS  # not at import: the retrievers load scipy

        imported = {s.name for s in session.ws.retrievers() if s.kind in STORED_KINDS}
        missing = [
            r
            for r in session.live.retrievers
            if r not in imported and qid not in session.live.rankings[r]
        ]
        pool = qid not in self.gp.pool_tried and self.gp.readonly_reason is None
        if missing and not self.pooling and pool:
            self.pooling = True
            self.gp.pool_question(qid)
        self.show_document()
        self.show_status()
        self.can_undo = bool(session.undo_stack)

    def _title(self, doc_id: str) -> str:
        doc = self.gp.session.ws.doc(doc_id)
        return doc.title if doc else doc_id

    def show_document(self) -> None:
        """Show the highlighted candidate's text."""
        cand = self.query_one(CandidateList).current
        q = self.gp.session.ws.question(self.question_id) if self.question_id else None
        doc = self.gp.session.ws.doc(cand.doc_id) if cand else None
        self.query_one(DocumentView).show(doc, question_terms(q.text) if q else [])

    def show_status(self) -> None:
        """Your verdict and the question's resolved gold."""
        qid = self.question_id
        if qid is None:
            return
        session = self.gp.session
        gold: Gold = session.live.golds[qid]
        mine = session.my_verdict(qid)
        text = Text.assemble(
            ("you: ", "dim"),
            (mine.verdict if mine else "-", "bold"),
            ("   gold: ", "dim"),
            (gold.status.value, "bold"),
            (f" ({len(gold.gold)} docs)" if gold.gold else "", ""),
            ("   annotators: ", "dim"),
            (visible(", ".join(gold.annotators)) or "-", ""),
        )
        if self.pooling:
            text.append("   pooling…", style="italic yellow")
        elif self.gp.readonly_reason is not None and any(
            qid not in session.live.rankings[r] for r in session.live.retrievers
        ):
            text.append("   not pooled (read-only)", style="italic yellow")
        if mine and mine.note:
            text.append("\nnote: ", style="dim")
            text.append_text(literal(mine.note))
        self.query_one("#status", Static).update(text)

    def on_option_list_option_highlighted(self, _: OptionList.OptionHighlighted) -> None:
        """Follow the cursor."""
        self.show_document()

    def on_question_pooled(self, message: QuestionPooled) -> None:
        """The worker ranked a question: redraw if it is ours."""
        if message.question_id == self.question_id:
            self.pooling = False
            self.show_question()

    # -- actions -------------------------------------------------------------------------

    def _saved(self, gold: Gold) -> None:
        qid = gold.question_id
        self.query_one(CandidateList).set_grades(self.gp.session.my_grades(qid))
        self.show_status()
        self.can_undo = bool(self.gp.session.undo_stack)
        self.post_message(LabelSaved(qid))

    def action_grade(self, grade: int) -> None:
        """Grade the highlighted candidate (committed before the screen moves on)."""
        cand = self.query_one(CandidateList).current
        if cand is None or self.question_id is None:
            return
        if self.refuse_read_only("Grading a document"):
            return
        self._saved(self.gp.session.set_grade(self.question_id, cand.doc_id, grade))

    def action_toggle_relevant(self) -> None:
        """Relevant (1) <-> not relevant (0)."""
        cand = self.query_one(CandidateList).current
        if cand is None or self.question_id is None:
            return
        grade = self.gp.session.my_grades(self.question_id).get(cand.doc_id)
        self.action_grade(0 if grade else 1)

    def _verdict(self, verdict: str, note: str = "") -> None:
        assert self.question_id is not None
        if self.refuse_read_only("A verdict"):
            return
        session = self.gp.session
        mine = session.my_verdict(self.question_id)
        if mine is not None and mine.verdict == verdict and not note:
            gold = session.clear_verdict(self.question_id)
        else:
            gold = session.set_verdict(self.question_id, verdict, note)
        self._saved(gold)

    def action_no_answer(self) -> None:
        """No answer in the corpus (pressing it again takes it back)."""
        self._verdict("no_answer")

    def action_skip(self) -> None:
        """Cannot judge (pressing it again takes it back)."""
        self._verdict("skip")

    @work
    async def action_ambiguous(self) -> None:
        """Flag ambiguous, with a note."""
        if self.refuse_read_only("Flagging a question"):
            return
        note = await self.app.push_screen_wait(
            PromptScreen(
                "Why is this question ambiguous? (a note for the adjudicator)",
                placeholder="e.g. R1 and R2 give different answers",
            )
        )
        if note is not None and self.question_id is not None:
            self.gp.session.set_verdict(self.question_id, "ambiguous", note.strip())
            self._saved(self.gp.session.gold(self.question_id))

    @work
    async def action_search(self) -> None:
        """Find a document the pool missed; it becomes relevant (grade 1)."""
        q = self.gp.session.ws.question(self.question_id or "")
        if q is None or self.refuse_read_only("Adding a document from the corpus"):
            return
        doc_id = await self.app.push_screen_wait(SearchScreen(visible(q.text)))
        if doc_id:
            self._saved(self.gp.session.set_grade(q.id, doc_id, 1))
            self.show_question()
            self.query_one(CandidateList).select(doc_id)
            self.show_document()

    @work
    async def action_edit(self) -> None:
        """Rewrite the question; it is pooled again."""
        q = self.gp.session.ws.question(self.question_id or "")
        if q is None or self.refuse_read_only("Editing a question"):
            return
        # Control characters are edited as their pictures; an untouched text is no edit.
        shown = visible(q.text)
        text = await self.app.push_screen_wait(PromptScreen("Edit the question", shown))
        if text and text.strip() and text.strip() not in (q.text, shown.strip()):
            self.gp.session.edit_question(q.id, text, None)
            self.pooling = True
            self.gp.pool_question(q.id)
            self.show_question()

    def action_undo(self) -> None:
        """Undo this session's last change."""
        change = self.gp.session.undo()
        if change is None:
            return
        if change.question_id != self.question_id:
            self.gp.current_question = change.question_id
            self.question_id = change.question_id
        else:
            self.show_question()
        if change.kind == "question":
            self.pooling = True
            self.gp.pool_question(change.question_id)
        self.post_message(LabelSaved(change.question_id))
        self.notify(visible(f"Undid a {change.kind} change on {change.question_id}."), markup=False)

    def _step(self, delta: int) -> None:
        order = self.gp.question_order or self.gp.session.live.question_ids
        if not order or self.question_id is None:
            return
        i = order.index(self.question_id) if self.question_id in order else -1
        j = min(max(i + delta, 0), len(order) - 1)
        self.gp.current_question = order[j]
        self.question_id = order[j]

    def action_next(self) -> None:
        """Next question."""
        self._step(1)

    def action_previous(self) -> None:
        """Previous question."""
        self._step(-1)

    def action_cursor_down(self) -> None:
        """Next candidate."""
        self.query_one(CandidateList).action_cursor_down()

    def action_cursor_up(self) -> None:
        """Previous candidate."""
        self.query_one(CandidateList).action_cursor_up()
