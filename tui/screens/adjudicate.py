"""The adjudicate screen: settle the questions annotators disagree on."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import DataTable, Footer, Header, Static

from engine.gold import Status
from engine.grades import is_relevant
from engine.judging.queue import disagreement_queue
from tui.actions import Command, bindings
from tui.literal import literal, visible
from tui.screens.base import GoldpanScreen, cursor_key
from tui.screens.modals import PromptScreen
from tui.screens.questions import STATUS_STYLE
from tui.widgets.tables import RowTable, cut, fill, room, width

LIST_WIDTH = 25
"""The question list's width (app.tcss ``#adjudicate-list``): ids and statuses."""
NARROW_BELOW = 60
"""Below this many columns the list goes above the grades (``-narrow`` in app.tcss), so
that every grade column and ``final`` stay in view."""
LEAST_TITLE = 8
"""The title column's least width: it gives way first, so that every annotator's grade
and the final column stay on screen at 80 columns."""
ORDER = {Status.DISPUTED: 0, Status.AMBIGUOUS: 1}
MODEL_DIFFERS = 2
"""Where questions a model judge disagrees on come in the list: after the people's
disputes, before the adjudicated ones. They are not disputed (no count says so)."""
SIDE = Binding.Group("Take side", compact=True)
MODEL_STYLE = "italic magenta"
"""How a model judge's name and grades are set apart from the people's."""


class AdjudicateScreen(GoldpanScreen):
    """Each annotator's labels side by side, and keys to settle the final gold."""

    HELP = """
## Adjudicate

Disputed questions (annotators marked different documents relevant, or one said no
answer) and ambiguous ones (flagged with a note) come first, then the questions already
adjudicated. On the right, every annotator's grade of every judged document side by
side, their verdicts and notes, and the **final** column: the adjudicated gold.

Take a side with `adjudicate.side1` (the annotators in column order),
`adjudicate.union` the union of their relevant documents (highest grade),
`adjudicate.intersection` the intersection (lowest grade), or set a document's final
grade by hand with `adjudicate.raise` / `adjudicate.lower`. `adjudicate.no_answer`
settles the question as having no answer in the corpus. `adjudicate.edit` rewrites the
question, `adjudicate.split` splits off a second question.
Every decision is recorded with who and when, and the review follows at once.

Model judges (`goldpan judge`, in italics) follow the people; never gold unless you take
their side or adopt a grade with `adjudicate.adopt_model`. "model differs": a model
disagrees with people.

At the bottom: Cohen's kappa per annotator pair and Krippendorff's alpha over all
grades, which tell how far to trust the labels (and each model against the gold).
"""

    AREA = "Adjudicate"
    ACTIONS = (
        *(
            Command(
                str(i),
                f"take_side({i - 1})",
                "Take side",
                f"Final gold: annotator {i}'s relevant documents",
                f"adjudicate.side{i}",
                title=f"Adjudicate: take annotator {i}'s side",
                show=i <= 2,
                group=SIDE,
                when="has_question",
                doc_key="1-9",
                doc_help="Final gold: annotator N's relevant documents (N = the column)",
            )
            for i in range(1, 10)
        ),
        Command(
            "u",
            "union",
            "Union",
            "Final gold: every document anyone marked relevant (highest grade)",
            "adjudicate.union",
            title="Adjudicate: take the union",
            when="has_question",
        ),
        Command(
            "i",
            "intersection",
            "Intersection",
            "Final gold: documents everyone marked relevant (lowest grade)",
            "adjudicate.intersection",
            title="Adjudicate: take the intersection",
            when="has_question",
        ),
        Command(
            "plus",
            "raise_grade",
            "Grade +",
            "Raise the selected document's final grade",
            "adjudicate.raise",
            title="Adjudicate: raise the final grade",
            when="has_question",
        ),
        Command(
            "minus",
            "lower_grade",
            "Grade -",
            "Lower the selected document's final grade",
            "adjudicate.lower",
            title="Adjudicate: lower the final grade",
            show=False,
            when="has_question",
        ),
        Command(
            "g",
            "adopt_model_grade",
            "Adopt model grade",
            "Final grade of the selected document: the first model judge's",
            "adjudicate.adopt_model",
            title="Adjudicate: adopt the model's grade",
            show=False,
            when="has_model_grades",
        ),
        Command(
            "n",
            "no_answer",
            "No answer",
            "Settle: nothing in the corpus answers this question",
            "adjudicate.no_answer",
            title="Adjudicate: no answer",
            when="has_question",
        ),
        Command(
            "e",
            "edit",
            "Rewrite",
            "Rewrite the question (its old text is kept)",
            "adjudicate.edit",
            title="Adjudicate: rewrite question",
            show=False,
            when="has_question",
        ),
        Command(
            "x",
            "split",
            "Split",
            "Split off a second question (written here, pooled at once)",
            "adjudicate.split",
            title="Adjudicate: split question",
            show=False,
            when="has_question",
        ),
    )
    BINDINGS = bindings(ACTIONS)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]

    _agreement_token: object = None
    """The workspace's change token when the agreement line was last drawn."""
    _differs: tuple[object, set[str]] = (None, set())
    """(change token, the questions a model judge and the people disagree on)."""
    question_id: reactive[str | None] = reactive(None, bindings=True)
    """The question on the right."""

    def compose(self) -> ComposeResult:
        """Question list beside the side-by-side labels; agreement at the bottom."""
        yield Header()
        with Horizontal(id="adjudicate-body"):
            yield RowTable(id="adjudicate-list", cursor_type="row", zebra_stripes=True)
            with Vertical(id="adjudicate-right"):
                yield Static(id="adjudicate-question")
                yield RowTable(id="sides", cursor_type="row", zebra_stripes=True)
        yield Static(id="agreement")
        yield Footer()

    def on_mount(self) -> None:
        """Fill the list."""
        table = self.query_one("#adjudicate-list", DataTable)
        self.redraw()
        table.focus()

    def on_resize(self) -> None:
        """The title column takes the width the grades leave: cut the titles anew."""
        self.show_sides()

    def redraw(self) -> None:
        """The workspace changed: redraw the list, the sides and the agreement."""
        super().redraw()
        self.refresh_list()
        self.show_agreement()

    def follow_current(self) -> None:
        """Rest the list's cursor on the current question when it is listed."""
        table = self.query_one("#adjudicate-list", DataTable)
        self.place_cursor(table, self.state.current_question)
        self.question_id = cursor_key(table)

    def model_differs(self) -> set[str]:
        """Questions not adjudicated where a model judge and the people disagree."""
        token = self.gp.session.change_token()
        if self._differs[0] != token:
            session = self.gp.session
            models = session.model_labels()
            found: set[str] = set()
            if models:
                golds, people = session.live.golds, session.labels()
                found = {i.question_id for i in disagreement_queue(golds, models, people)}
            self._differs = (token, found)
        return self._differs[1]

    def candidates(self) -> list[str]:
        """Disputed and ambiguous questions, those a model differs on, then the adjudicated."""
        live = self.gp.session.live
        differs = self.model_differs()

        def rank(q: str) -> int:
            gold = live.golds[q]
            if gold.adjudicated:
                return 3
            return ORDER.get(gold.status, MODEL_DIFFERS)

        out = [
            q
            for q in live.question_ids
            if live.golds[q].status in ORDER or live.golds[q].adjudicated or q in differs
        ]
        return sorted(out, key=lambda q: (rank(q), q))

    def refresh_list(self) -> None:
        """Redraw the list, keeping the selection."""
        if not self.is_mounted:
            return
        table = self.query_one("#adjudicate-list", DataTable)
        keep = cursor_key(table) or self.question_id
        live = self.gp.session.live
        listed = self.candidates()
        rows = []
        for q in listed:
            gold = live.golds[q]
            label = "adjudicated" if gold.adjudicated else gold.status.value
            style = "green" if gold.adjudicated else STATUS_STYLE[gold.status]
            if not gold.adjudicated and gold.status not in ORDER:
                label, style = "model differs", MODEL_STYLE
            rows.append([literal(q), Text(label, style=style)])
        fill(table, ("question", "status"), rows, listed)
        self.place_cursor(table, keep)
        self.question_id = cursor_key(table)
        self.show_sides()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Follow the list."""
        if event.data_table.id == "adjudicate-list":
            self.question_id = self.cursor_moved(event.data_table)
            self.show_sides()

    def annotators(self) -> list[str]:
        """The people of the current question, in column order (the models follow)."""
        if self.question_id is None:
            return []
        return list(self.gp.session.live.golds[self.question_id].annotators)

    def grades(self) -> dict[str, dict[str, int]]:
        """Person -> doc -> grade for the current question."""
        out: dict[str, dict[str, int]] = {}
        if self.question_id is None:
            return out
        for lab in self.gp.session.labels_for(self.question_id):
            out.setdefault(lab.annotator, {})[lab.doc_id] = lab.grade
        return out

    def model_grades(self) -> dict[str, dict[str, int]]:
        """Model judge -> doc -> grade for the current question (columns after people's)."""
        out: dict[str, dict[str, int]] = {}
        if self.question_id is None:
            return out
        for m in self.gp.session.model_labels_for(self.question_id):
            out.setdefault(m.annotator, {})[m.doc_id] = m.grade
        return out

    @property
    def has_model_grades(self) -> bool:
        """A model judge graded the current question (`g` adopts its grade)."""
        return self.question_id is not None and bool(
            self.gp.session.model_labels_for(self.question_id)
        )

    def final(self) -> dict[str, int]:
        """The adjudicated gold so far (empty when not adjudicated)."""
        adj = self.gp.session.adjudication(self.question_id or "")
        return dict(adj.gold) if adj and not adj.no_answer else {}

    def show_sides(self) -> None:
        """Redraw the right side for the current question."""
        head = self.query_one("#adjudicate-question", Static)
        sides = self.query_one("#sides", DataTable)
        keep = cursor_key(sides)
        qid = self.question_id
        if qid is None:
            sides.clear(columns=True)
            head.update(
                Text("Nothing to adjudicate: no disputed or ambiguous question.", style="dim")
            )
            return
        session = self.gp.session
        q = session.question(qid)
        out = Text.assemble((visible(qid), "bold"), "  ")
        out.append_text(literal(q.text if q else "", style="bold"))
        adj = session.adjudication(qid)
        if adj is not None:
            settled = "no answer" if adj.no_answer else f"{len(adj.gold)} gold"
            out.append(visible(f"\nadjudicated by {adj.by}: {settled}"), style="green")
        for v in session.verdicts_for(qid):
            out.append(visible(f"\n{v.annotator}: "), style="bold")
            out.append(visible(v.verdict))
            if v.note:
                out.append(" — ", style="dim")
                out.append_text(literal(v.note))
        head.update(out)
        names = self.annotators()
        grades = self.grades()
        models = self.model_grades()
        model_names = sorted(models)
        final = self.final()
        labels: list[str | Text] = ["document", "title"]
        labels += [Text(visible(f"{i} {a}"), justify="right") for i, a in enumerate(names, 1)]
        labels += [
            Text(visible(f"{i} {a}"), justify="right", style=MODEL_STYLE)
            for i, a in enumerate(model_names, len(names) + 1)
        ]
        labels.append(Text("final", justify="right"))
        # the documents people judged; a model's grades only beside those (its other
        # candidates are holes for the judging queue, not for settling)
        docs = sorted({d for g in grades.values() for d in g} | set(final))
        fixed = [max([width(labels[0]), *(width(literal(d)) for d in docs)])]
        fixed += [width(label) for label in labels[2:]]
        total = self.size.width or self.app.size.width
        # beside the list, or below it on a narrow screen; less the padding either way
        right = total - 2 - (0 if total < NARROW_BELOW else LIST_WIDTH)
        space = min(34, room(right, fixed, LEAST_TITLE))
        rows: list[list[Text]] = []
        for d in docs:
            doc = session.doc(d)
            cells: list[Text] = [literal(d), cut(doc.title if doc else "", space)]
            for a in names:
                g = grades.get(a, {}).get(d)
                style = "green" if g else "dim"
                cells.append(Text("·" if g is None else str(g), style=style, justify="right"))
            for a in model_names:
                g = models[a].get(d)
                style = MODEL_STYLE if g else "dim italic"
                cells.append(Text("·" if g is None else str(g), style=style, justify="right"))
            f = final.get(d)
            cells.append(
                Text(
                    "·" if f is None else str(f),
                    style="bold green" if f else "dim",
                    justify="right",
                )
            )
            rows.append(cells)
        column_keys = [
            "doc",
            "title",
            *(f"a:{a}" for a in names),
            *(f"m:{a}" for a in model_names),
            "final",
        ]
        fill(sides, labels, rows, docs, column_keys=column_keys)
        self.place_cursor(sides, keep)

    def show_agreement(self) -> None:
        """Kappa per pair and alpha over everyone (how far to trust the labels).

        Reads every label: redrawn only when the workspace changed since the last time.
        """
        from engine.team.agreement import agreement_report  # numpy: loaded here, not at start

        token = self.gp.session.change_token()
        if token == self._agreement_token:
            return
        self._agreement_token = token
        session = self.gp.session
        models = session.model_labels()
        golds = session.live.golds if models else None
        report = agreement_report(session.labels(), session.verdicts(), models, golds)
        out = Text("agreement  ", style="bold")
        for p in report["pairs"]:
            out.append_text(literal(f"{p['a']}–{p['b']}"))
            out.append(f" κ {p['kappa']:.2f} (n {p['n']})   ")
        alpha = report["alpha_ordinal"]
        out.append(
            f"α ordinal {'-' if alpha is None else f'{alpha:.2f}'} "
            f"over {report['units']} shared judgments"
        )
        for m in report["models"]:
            if m["gold"]:
                out.append("   ")
                out.append_text(literal(f"{m['model']}–gold", style=MODEL_STYLE))
                out.append(f" κ {m['kappa']:.2f} (n {m['n']})")
        self.query_one("#agreement", Static).update(out)

    # -- decisions -----------------------------------------------------------------------

    def _settle(
        self,
        gold: dict[str, int],
        *,
        no_answer: bool = False,
        note: str = "",
        advance: bool = True,
    ) -> None:
        """Record the decision; with ``advance`` (and auto-advance on), on to the next one."""
        assert self.question_id is not None
        if self.refuse_read_only("Adjudicating"):
            return
        settled = self.question_id
        live = self.gp.session.live
        pending = [q for q in self.candidates() if not live.golds[q].adjudicated]
        self.gp.session.adjudicate(settled, gold, no_answer=no_answer, note=note)
        self.redraw()
        self.gp.announce(settled)
        if not (advance and self.state.auto_advance):
            return
        # on to the next question still to settle (the settled one moved down the list)
        later = pending[pending.index(settled) + 1 :] if settled in pending else []
        following = next((q for q in later + pending if q != settled), None)
        if following is None:
            self.notify(
                visible(f"Settled {settled}; nothing else is left to settle."), markup=False
            )
            return
        self.place_cursor(self.query_one("#adjudicate-list", DataTable), following)
        self.state.current_question = following
        self.question_id = following
        self.show_sides()
        self.notify(visible(f"Settled {settled}; next to settle: {following}."), markup=False)

    def action_take_side(self, index: int) -> None:
        """The final gold is one annotator's relevant documents (a model's: adopted by you)."""
        names = self.annotators()
        models = self.model_grades()
        columns = [*names, *sorted(models)]
        if index >= len(columns):
            self.notify(f"This question has {len(columns)} columns.", severity="warning")
            return
        if index < len(names):
            side = self.grades().get(names[index], {})
            self._settle(side, note=f"took {names[index]}'s side")
            return
        model = columns[index]
        people = {d for g in self.grades().values() for d in g}
        side = {d: g for d, g in models[model].items() if d in people}
        self._settle(side, note=f"took {model}'s side (a model judge's grades, adopted)")

    def action_adopt_model_grade(self) -> None:
        """The selected document's final grade: the first model judge's grade of it."""
        doc = cursor_key(self.query_one("#sides", DataTable))
        models = self.model_grades()
        if doc is None or not models:
            return
        model = sorted(models)[0]
        grade = models[model].get(doc)
        if grade is None:
            self.notify(visible(f"{model} did not grade {doc}."), severity="warning", markup=False)
            return
        final = self.final()
        final[doc] = grade
        self._settle(final, note=f"adopted {model}'s grade {grade} of {doc}", advance=False)

    def _relevant(self) -> list[dict[str, int]]:
        return [{d: g for d, g in gs.items() if is_relevant(g)} for gs in self.grades().values()]

    def action_union(self) -> None:
        """Every document anyone marked relevant, at the highest grade given."""
        gold: dict[str, int] = {}
        for side in self._relevant():
            for d, g in side.items():
                gold[d] = max(g, gold.get(d, 0))
        self._settle(gold, note="union")

    def action_intersection(self) -> None:
        """Documents every annotator marked relevant, at the lowest grade given."""
        sides = self._relevant()
        common = set.intersection(*(set(s) for s in sides)) if sides else set()
        self._settle({d: min(s[d] for s in sides) for d in common}, note="intersection")

    def _bump(self, delta: int) -> None:
        doc = cursor_key(self.query_one("#sides", DataTable))
        if doc is None:
            return
        final = self.final()
        final[doc] = min(3, max(0, final.get(doc, 0) + delta))
        self._settle(final, note="set by hand", advance=False)

    def action_raise_grade(self) -> None:
        """Raise the selected document's final grade."""
        self._bump(1)

    def action_lower_grade(self) -> None:
        """Lower the selected document's final grade."""
        self._bump(-1)

    def action_no_answer(self) -> None:
        """Settle as no answer in the corpus."""
        self._settle({}, no_answer=True, note="no answer")

    @work
    async def action_edit(self) -> None:
        """Rewrite the question; it is pooled again."""
        q = self.gp.session.question(self.question_id or "")
        if q is None or self.refuse_read_only("Rewriting a question"):
            return
        # Control characters are edited as their pictures; an untouched text is no edit.
        shown = visible(q.text)
        text = await self.app.push_screen_wait(PromptScreen("Rewrite the question", shown))
        if text and text.strip() and text.strip() not in (q.text, shown.strip()):
            self.gp.session.edit_question(q.id, text, None)
            self.gp.pooling.pool(q.id)
            self.show_sides()

    @work
    async def action_split(self) -> None:
        """Split off a second question, pooled at once."""
        q = self.gp.session.question(self.question_id or "")
        if q is None or self.refuse_read_only("Splitting a question"):
            return
        text = await self.app.push_screen_wait(
            PromptScreen(f"Split {q.id}: the second question", placeholder="the other half")
        )
        if text and text.strip():
            new = self.gp.session.split_question(q.id, text)
            self.gp.pooling.pool(new.id)
            self.notify(
                visible(f"Added {new.id}, split from {q.id}; judge it with l."), markup=False
            )
            self.state.current_question = new.id
