"""The judge screen: the pooled candidates of one question, graded from the keyboard."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Footer, Header, Static

from engine.counters import left_to_judge
from engine.grades import NOT_RELEVANT, RELEVANT, is_relevant
from engine.judging.stopping import Offer
from engine.session.labeling import QuestionState
from tui.actions import bindings, with_keys
from tui.literal import literal, visible
from tui.messages import WorkspaceChanged
from tui.screens.base import GoldpanScreen
from tui.screens.judge_beyond import FoundMore, find_more, found_notice
from tui.screens.judge_keys import JUDGE_ACTIONS, JUDGE_HELP
from tui.screens.modals import PromptScreen, SearchScreen
from tui.state import SharedState
from tui.widgets.candidate_list import CandidateList
from tui.widgets.document_view import DocumentView, question_terms
from tui.widgets.lines import Lines
from tui.widgets.progress import next_question, next_unjudged, progress_text, you_text

if TYPE_CHECKING:
    from engine.judging.feedback import Feedback


class JudgeScreen(GoldpanScreen):
    """Mark the gold documents of a question, or say the corpus cannot answer it."""

    HELP = JUDGE_HELP

    AREA = "Label"
    ACTIONS = JUDGE_ACTIONS
    BINDINGS = bindings(ACTIONS)

    question_id: reactive[str | None] = reactive(None)
    """The question on screen. The keys offered change only between none and one (see
    :meth:`watch_question_id`): the footer is not rebuilt for every next question."""
    can_undo: reactive[bool] = reactive(False, bindings=True)
    """Whether this session has a change to undo (shows `u` in the footer)."""
    pooling: reactive[bool] = reactive(False)
    """A worker is ranking this question."""
    stoppable: reactive[bool] = reactive(False, bindings=True)
    """The stopping rule offers to stop this question, or you stopped it (`x` works)."""

    def __init__(self, state: SharedState) -> None:
        """Nothing listed yet."""
        super().__init__(state)
        self.listed: str | None = None
        """The question whose candidates the list shows: another one is a move, and the
        cursor starts on its first candidate you have not judged."""
        self.show_model = False
        """Model judges' grades are shown beside yours (`g`; off until asked)."""
        self.order: list[str] = []
        """The candidates shown, in judging order."""
        self.offer: Offer | None = None
        """The stop the stopping rule offers on the question shown (None: none)."""
        self.feedback: Feedback | None = None
        """Relevance feedback's spaces, kept for the next `b` while the corpus is the same."""
        self.finding = False
        """A worker is asking feedback for more documents."""

    def compose(self) -> ComposeResult:
        """Question, candidates beside the document, status line."""
        yield Header()
        yield Static(id="question")
        with Horizontal(id="judge-body"):
            yield CandidateList(id="candidates")
            yield DocumentView(id="document")
        yield Lines(id="status")
        yield Lines(id="progress")
        yield Footer()

    def on_mount(self) -> None:
        """Show the app's current question; the document follows the cursor."""
        # A watcher, not the OptionHighlighted message: it runs in the same call that
        # moves the cursor, so no frame (and no key) sees the last row's document.
        self.watch(self.query_one(CandidateList), "highlighted", self.show_document, init=False)
        self.question_id = self.state.current_question

    def follow_current(self) -> None:
        """Another screen may have chosen a different question."""
        if self.question_id != self.state.current_question:
            self.question_id = self.state.current_question
        self.query_one(CandidateList).focus()

    def redraw(self) -> None:
        """The workspace changed: redraw the question."""
        self.show_question()

    def on_workspace_changed(self, message: WorkspaceChanged) -> None:
        """Our question was pooled: redraw it even if no ranking changed."""
        if message.pooled and message.question_id == self.question_id:
            self.pooling = False
            self.drawn = None  # the base handler (after this one) redraws when on top

    def watch_question_id(self, old: str | None, new: str | None) -> None:
        """Load the question; offer the question's keys when there is one again."""
        if (old is None) != (new is None):
            self.refresh_bindings()
        if self.question_id is not None:
            self.gp.leases.opened(self.question_id)
        self.show_question()

    # -- drawing -------------------------------------------------------------------------

    def show_question(self) -> None:
        """Redraw everything for the current question."""
        if not self.is_mounted:
            return
        super().redraw()
        session = self.gp.session
        qid = self.question_id
        candidates = self.query_one(CandidateList)
        if qid is None or session.question(qid) is None:
            self.query_one("#question", Static).update(
                Text("No question selected. Press q to pick one or w to write one.")
            )
            candidates.show([], {})
            self.listed = None
            self.query_one(DocumentView).show(None, [])
            self.query_one("#status", Lines).show("")
            self.query_one("#progress", Lines).show("")
            return
        q = session.question(qid)
        assert q is not None
        head = Text.assemble(
            (visible(f"{qid}  "), "bold"),
            (visible(" ".join(f"#{t}" for t in q.tags)), "dim"),
            "\n",
        )
        head.append_text(literal(q.text, style="bold"))
        self.query_one("#question", Static).update(head)
        cands = session.candidates(qid)
        self.order = [c.doc_id for c in cands]
        titles = {c.doc_id: self._title(c.doc_id) for c in cands}
        candidates.show(
            cands,
            titles,
            session.my_grades(qid),
            keep=qid == self.listed,
            model=self._model_marks(qid),
        )
        self.listed = qid
        pool = qid not in self.gp.pooling.tried and self.gp.readonly_reason is None
        if qid in session.live.not_ranked and not self.pooling and pool:
            self.pooling = True
            self.gp.pooling.pool(qid)
        self.show_document()
        self.show_status()
        self.can_undo = bool(session.undo_stack)

    def _model_marks(self, qid: str) -> dict[str, str] | None:
        """Doc id -> the model judges' grades (``2``, or ``2/1`` for two judges), if shown."""
        if not self.show_model:
            return None
        by_doc: dict[str, list[str]] = {}
        for m in sorted(self.gp.session.model_labels_for(qid), key=lambda m: m.annotator):
            by_doc.setdefault(m.doc_id, []).append(str(m.grade))
        return {d: "/".join(g) for d, g in by_doc.items()}

    def _title(self, doc_id: str) -> str:
        doc = self.gp.session.doc(doc_id)
        return doc.title if doc else doc_id

    def show_document(self) -> None:
        """Show the highlighted candidate's text."""
        cand = self.query_one(CandidateList).current
        q = self.gp.session.question(self.question_id) if self.question_id else None
        doc = self.gp.session.doc(cand.doc_id) if cand else None
        self.query_one(DocumentView).show(doc, question_terms(q.text) if q else [])

    def show_status(self) -> None:
        """Your verdict, the question's resolved gold, and how far along you are."""
        qid = self.question_id
        if qid is None:
            return
        session = self.gp.session
        self.query_one("#progress", Lines).show(
            progress_text(
                session,
                self.state.question_order,
                qid,
                advance=None if self.is_viewer else self.state.auto_advance,
                handed_out=self.gp.leases.assigner is not None,
                viewer=self.is_viewer,
            )
        )
        state = session.state(qid)
        gold = state.gold
        mine = state.verdict
        self.offer = None if self.is_viewer else session.stop_offer(qid, self.order)
        self.stoppable = self.offer is not None or (state.stop is not None and not self.is_viewer)
        text = Text.assemble(
            ("you: ", "dim"),
            (you_text(state, session), "bold"),
            ("   gold: ", "dim"),
            (gold.status.value, "bold"),
            (f" ({len(gold.gold)} docs)" if gold.gold else "", ""),
            ("   annotators: ", "dim"),
            (visible(", ".join(gold.annotators)) or "-", ""),
        )
        if self.pooling:
            text.append("   pooling…", style="italic yellow")
        elif self.gp.readonly_reason is not None and qid in session.live.not_ranked:
            text.append("   not ranked yet (read-only)", style="italic yellow")
        if self.show_model:
            names = sorted({m.annotator for m in session.model_labels_for(qid)})
            shown = visible(", ".join(names)) if names else "none graded this question"
            text.append(f"   model grades shown ({shown}; g hides)", style="italic magenta")
        left = session.stopped().get(qid)
        if left is not None:
            text.append(f"   stopped: {left} not judged", style="italic cyan")
            if state.stop is not None:
                text.append(
                    with_keys(" (`judge.stop` takes it back)", self.ACTIONS, code=False),
                    style="dim",
                )
        elif self.offer is not None:
            said = with_keys("`judge.stop` stops", self.ACTIONS, code=False)
            text.append(
                f"   {visible(self.offer.reason)}: {said} ({self.offer.left} left not judged)",
                style="bold cyan",
            )
        if self.finding:
            text.append("   finding more…", style="italic yellow")
        if mine and mine.note:
            text.append("\nnote: ", style="dim")
            text.append_text(literal(mine.note))
        self.query_one("#status", Lines).show(text)

    # -- actions -------------------------------------------------------------------------

    @property
    def can_judge(self) -> bool:
        """A question is on screen and this person labels (a viewer only looks)."""
        return self.has_question and not self.is_viewer

    @property
    def auto_advancing(self) -> bool:
        """Auto-advance is on (``m`` turns it off); a viewer has none."""
        return self.state.auto_advance and not self.is_viewer

    @property
    def not_auto_advancing(self) -> bool:
        """Auto-advance is off (``m`` turns it on); a viewer has none."""
        return not self.state.auto_advance and not self.is_viewer

    def _saved(self, state: QuestionState) -> None:
        """Show a committed change and tell the other screens (once)."""
        qid = state.question_id
        self.query_one(CandidateList).set_grades(state.mine)
        self.show_status()
        self.can_undo = bool(self.gp.session.undo_stack)
        self.drawn = self.gp.session.change_token()  # this screen shows it already
        self.gp.announce(qid)

    def action_grade(self, grade: int) -> None:
        """Grade the highlighted candidate (committed before the screen moves on)."""
        candidates = self.query_one(CandidateList)
        cand = candidates.current
        if cand is None or self.question_id is None:
            return
        if self.refuse_read_only("Grading a document"):
            return
        ids = [c.doc_id for c in candidates.candidates]
        # every candidate graded already: this grade corrects one, and the cursor stays
        correcting = set(ids) <= self.gp.session.my_grades(self.question_id).keys()
        state = self.gp.session.set_grade(self.question_id, cand.doc_id, grade)
        if not self.state.auto_advance or correcting:
            self._saved(state)
            return
        here = candidates.highlighted or 0
        following = next((d for d in ids[here + 1 :] + ids[:here] if d not in state.mine), None)
        if following is None:
            self._saved(state)
            self._advance_question(f"All {len(ids)} candidates of {state.question_id} judged")
            return
        # The next document first, then the grade: the new document's size is then laid
        # out in the frame that shows the grade. Shown the other way round, that frame drew
        # the new document at the old one's size and a second frame drew it again: one
        # frame per grade where there were two, and none with the document cut to a size
        # not its own.
        candidates.select(following)
        self._saved(state)

    def _advance_question(self, why: str) -> None:
        """On to the next question in the list that you have not judged yet."""
        if self.gp.leases.assigner is not None:
            self._take_handed_out(why)
            return
        qid = self.question_id
        order = self.state.question_order or self.gp.session.live.question_ids
        judged = self.gp.session.judged_questions()
        target = next_unjudged(order, qid, judged)
        if target is None:
            left = left_to_judge(order, judged)
            if not left:
                self.notify(
                    visible(f"{why}. Every question of this list is judged."),
                    title="Done with this list",
                    markup=False,
                )
                return
            named = ", ".join(left[:8]) + (f" and {len(left) - 8} more" if len(left) > 8 else "")
            self.notify(
                visible(
                    f"{why}. No question after it in this list is left to judge; "
                    f"{len(left)} earlier one(s) still are: {named} ([ walks back)."
                ),
                title="End of this list",
                markup=False,
            )
            return
        self.notify(visible(f"{why}; on to {target}."), markup=False)
        self.state.current_question = target
        self.question_id = target

    def action_stop(self) -> None:
        """Stop the question as offered, or take your stop back."""
        qid = self.question_id
        if qid is None or self.refuse_read_only("A stop"):
            return
        session = self.gp.session
        if session.state(qid).stop is not None:
            self._saved(session.unstop(qid))
            self.notify(visible(f"{qid}: stop taken back; judge on."), markup=False)
            return
        offered = self.offer
        if offered is None:
            return
        state = session.stop(qid, offered.reason)
        self._saved(state)
        why = f"{qid} stopped ({offered.left} candidates left not judged)"
        if self.state.auto_advance:
            self._advance_question(why)
        else:
            self.notify(visible(why + "."), markup=False)

    def action_beyond(self) -> None:
        """Ask relevance feedback for more documents (in a worker: the corpus is read)."""
        qid = self.question_id
        if qid is None or self.finding or self.refuse_read_only("Adding documents"):
            return
        self.finding = True
        self.show_status()
        self._find_more(qid, self.feedback)

    @work(thread=True, exclusive=True, group="beyond", exit_on_error=False)
    def _find_more(self, qid: str, known: Feedback | None) -> None:
        """One round of feedback for ``qid`` (:func:`tui.screens.judge_beyond.find_more`)."""
        self.post_message(find_more(self.gp.workspace_path, qid, known))

    def on_judge_screen_found_more(self, message: FoundMore) -> None:
        """Add what feedback found to the question's candidates, and go to the first."""
        self.finding = False
        if message.feedback is not None:
            self.feedback = message.feedback
        found = message.found
        if found is None:
            self.notify(
                visible(f"Feedback failed: {message.failure}"), severity="error", markup=False
            )
            self.show_status()
            return
        qid = message.question_id
        if not found.docs:
            self.notify("Feedback found no document left to propose.", markup=False)
            self.show_status()
            return
        listed = (
            {c.doc_id for c in self.query_one(CandidateList).candidates}
            if qid == self.question_id
            else set()
        )
        self._saved(self.gp.session.add_proposals(qid, found.docs, found.method))
        self.notify(visible(found_notice(found, qid, listed)), markup=False)
        if qid == self.question_id:
            self.show_question()
            candidates = self.query_one(CandidateList)
            candidates.highlighted = candidates.first_unjudged()

    def action_toggle_model_grades(self) -> None:
        """Show or hide the model judges' grades (hidden by default)."""
        self.show_model = not self.show_model
        qid = self.question_id
        if qid is None:
            return
        marks = self._model_marks(qid)
        self.query_one(CandidateList).set_model(marks)
        self.show_status()
        if marks is not None and not marks:
            self.notify(
                "No model judge graded this question's candidates (`goldpan judge` does).",
                markup=False,
            )

    def action_toggle_relevant(self) -> None:
        """Relevant (:data:`RELEVANT`) <-> not relevant (:data:`NOT_RELEVANT`)."""
        cand = self.query_one(CandidateList).current
        if cand is None or self.question_id is None:
            return
        grade = self.gp.session.my_grades(self.question_id).get(cand.doc_id)
        self.action_grade(NOT_RELEVANT if grade is not None and is_relevant(grade) else RELEVANT)

    def _verdict(self, verdict: str, note: str = "") -> None:
        qid = self.question_id
        assert qid is not None
        if self.refuse_read_only("A verdict"):
            return
        session = self.gp.session
        mine = session.my_verdict(qid)
        if mine is not None and mine.verdict == verdict and not note:
            self._saved(session.clear_verdict(qid))
            return
        relevant = {d: g for d, g in session.my_grades(qid).items() if is_relevant(g)}
        if verdict == "no_answer" and relevant:
            with session.grouped():  # one `u` brings both back
                session.clear_grades(qid, min_grade=RELEVANT)
                state = session.set_verdict(qid, verdict, note)
            self.notify(
                visible(
                    f"No answer: cleared your {len(relevant)} relevant grade(s) on {qid} "
                    f"({', '.join(f'{d} [{g}]' for d, g in sorted(relevant.items()))}). "
                    "Press u to undo."
                ),
                title="Grades cleared",
                severity="warning",
                markup=False,
            )
        else:
            state = session.set_verdict(qid, verdict, note)
        self._saved(state)
        if self.state.auto_advance:
            self._advance_question(f"{qid}: {verdict.replace('_', ' ')}")

    def action_no_answer(self) -> None:
        """No answer in the corpus (pressing it again takes it back)."""
        self._verdict("no_answer")

    def action_skip(self) -> None:
        """Cannot judge (pressing it again takes it back)."""
        self._verdict("skip")

    def action_set_advance(self, on: bool) -> None:
        """Auto-advance on or off (the footer shows which)."""
        self.state.auto_advance = on
        self.refresh_bindings()
        self.show_status()
        self.notify(
            "Auto-advance on: a grade moves to the next candidate; a verdict or the last "
            "candidate to the next question."
            if on
            else "Auto-advance off: the cursor stays where it is.",
            markup=False,
        )

    def action_advance_on(self) -> None:
        """Auto-advance on."""
        self.action_set_advance(True)

    def action_advance_off(self) -> None:
        """Auto-advance off."""
        self.action_set_advance(False)

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
            self._verdict("ambiguous", note.strip())

    @work
    async def action_search(self) -> None:
        """Find a document the pool missed and grade it (enter: relevant, :data:`RELEVANT`)."""
        q = self.gp.session.question(self.question_id or "")
        if q is None or self.refuse_read_only("Adding a document from the corpus"):
            return
        picked = await self.app.push_screen_wait(SearchScreen(visible(q.text)))
        if picked:
            doc_id, grade = picked
            self._saved(self.gp.session.set_grade(q.id, doc_id, grade))
            self.show_question()
            self.query_one(CandidateList).select(doc_id)
            self.notify(visible(f"Added {doc_id} with grade {grade}."), markup=False)

    @work
    async def action_edit(self) -> None:
        """Rewrite the question; it is pooled again."""
        q = self.gp.session.question(self.question_id or "")
        if q is None or self.refuse_read_only("Editing a question"):
            return
        # Control characters are edited as their pictures; an untouched text is no edit.
        shown = visible(q.text)
        text = await self.app.push_screen_wait(PromptScreen("Edit the question", shown))
        if text and text.strip() and text.strip() not in (q.text, shown.strip()):
            self.gp.session.edit_question(q.id, text, None)
            self.pooling = True
            self.gp.pooling.pool(q.id)
            self.show_question()

    def action_undo(self) -> None:
        """Undo this session's last change."""
        change = self.gp.session.undo()
        if change is None:
            return
        if change.question_id != self.question_id:
            self.state.current_question = change.question_id
            self.question_id = change.question_id
            if change.kind == "label" and change.doc_id is not None:
                # back to the grade just taken back, not the first row left to judge
                self.query_one(CandidateList).select(change.doc_id)
        else:
            self.show_question()
        if change.kind == "question":
            self.pooling = True
            self.gp.pooling.pool(change.question_id)
        self.drawn = self.gp.session.change_token()
        self.gp.announce(change.question_id)
        grouped = change.kind == "group" and isinstance(change.old, tuple)
        what = f"{len(change.old)} changes" if grouped else f"a {change.kind} change"  # type: ignore[arg-type]
        self.notify(visible(f"Undid {what} on {change.question_id}."), markup=False)

    def _step(self, delta: int) -> None:
        order = self.state.question_order or self.gp.session.live.question_ids
        if not order or self.question_id is None:
            return
        if delta > 0:
            target = next_question(order, self.question_id)
        else:
            target = next_question(order[::-1], self.question_id)
        if target is None:
            where = "last" if delta > 0 else "first"
            self.notify(
                visible(
                    f"{self.question_id} is the {where} question of this list "
                    f"({len(order)} questions). q lists them all."
                ),
                severity="warning",
                markup=False,
            )
            return
        self.state.current_question = target
        self.question_id = target

    def action_next(self) -> None:
        """Next question (says so on the last one). Served: the app hands one out."""
        if self.gp.leases.assigner is not None:
            self._take_handed_out()
            return
        self._step(1)

    def _take_handed_out(self, why: str | None = None) -> None:
        """Served to an annotator: open the question the app hands out (leased)."""
        nxt = self.gp.leases.next_question()
        if nxt is None:
            self.notify("No question is left for you right now.", title="Done")
            return
        if why is not None:
            self.notify(visible(f"{why}; on to {nxt}."), markup=False)
        self.state.current_question = nxt
        self.question_id = nxt

    def action_previous(self) -> None:
        """Previous question (says so on the first one)."""
        self._step(-1)

    def action_cursor_down(self) -> None:
        """Next candidate."""
        self.query_one(CandidateList).action_cursor_down()

    def action_cursor_up(self) -> None:
        """Previous candidate."""
        self.query_one(CandidateList).action_cursor_up()
