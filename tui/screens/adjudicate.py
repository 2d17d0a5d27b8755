"""The adjudicate screen: settle the questions annotators disagree on."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import DataTable, Footer, Header, Static

from engine.agreement import agreement_report
from engine.gold import Status
from tui.actions import Command, bindings
from tui.literal import literal, visible
from tui.screens.base import GoldpanScreen, cursor_key
from tui.screens.modals import PromptScreen
from tui.screens.questions import STATUS_STYLE
from tui.widgets.tables import RowTable, cut, fill, room, width

LIST_WIDTH = 25
"""The question list's width (app.tcss ``#adjudicate-list``): ids and statuses."""
LEAST_TITLE = 8
"""The title column's least width: it gives way first, so that every annotator's grade
and the final column stay on screen at 80 columns."""
ORDER = {Status.DISPUTED: 0, Status.AMBIGUOUS: 1}
SIDE = Binding.Group("Take side", compact=True)


class AdjudicateScreen(GoldpanScreen):
    """Each annotator's labels side by side, and keys to settle the final gold."""

    HELP = """
## Adjudicate

Disputed questions (annotators marked different documents relevant, or one said no
answer) and ambiguous ones (flagged with a note) come first, then the questions already
adjudicated. On the right, every annotator's grade of every judged document side by
side, their verdicts and notes, and the **final** column: the adjudicated gold.

Take a side with `1`-`9` (the annotators in column order), `u` the union of their
relevant documents (highest grade), `i` the intersection (lowest grade), or set a
document's final grade by hand with `+` / `-`. `n` settles the question as having no
answer in the corpus. `e` rewrites the question, `x` splits off a second question.
Every decision is recorded with who and when, and the review follows at once.

At the bottom: Cohen's kappa per annotator pair and Krippendorff's alpha over all
grades, which tell how far to trust the labels.
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

    _agreement_token: object = None
    """The workspace's change token when the agreement line was last drawn."""
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
        self.place_cursor(table, self.gp.current_question)
        self.question_id = cursor_key(table)

    def candidates(self) -> list[str]:
        """Disputed and ambiguous questions first, then the adjudicated ones."""
        live = self.gp.session.live
        out = [
            q
            for q in live.question_ids
            if live.golds[q].status in ORDER or live.golds[q].adjudicated
        ]
        return sorted(
            out,
            key=lambda q: (
                ORDER.get(live.golds[q].status, 2) if not live.golds[q].adjudicated else 3,
                q,
            ),
        )

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
        """The annotators of the current question, in column order."""
        if self.question_id is None:
            return []
        return list(self.gp.session.live.golds[self.question_id].annotators)

    def grades(self) -> dict[str, dict[str, int]]:
        """Annotator -> doc -> grade for the current question."""
        out: dict[str, dict[str, int]] = {}
        if self.question_id is None:
            return out
        for lab in self.gp.session.ws.labels_for(self.question_id):
            out.setdefault(lab.annotator, {})[lab.doc_id] = lab.grade
        return out

    def final(self) -> dict[str, int]:
        """The adjudicated gold so far (empty when not adjudicated)."""
        adj = self.gp.session.ws.adjudication(self.question_id or "")
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
        q = session.ws.question(qid)
        out = Text.assemble((visible(qid), "bold"), "  ")
        out.append_text(literal(q.text if q else "", style="bold"))
        adj = session.ws.adjudication(qid)
        if adj is not None:
            settled = "no answer" if adj.no_answer else f"{len(adj.gold)} gold"
            out.append(visible(f"\nadjudicated by {adj.by}: {settled}"), style="green")
        for v in session.ws.verdicts_for(qid):
            out.append(visible(f"\n{v.annotator}: "), style="bold")
            out.append(visible(v.verdict))
            if v.note:
                out.append(" — ", style="dim")
                out.append_text(literal(v.note))
        head.update(out)
        names = self.annotators()
        grades = self.grades()
        final = self.final()
        labels: list[str | Text] = ["document", "title"]
        labels += [Text(visible(f"{i} {a}"), justify="right") for i, a in enumerate(names, 1)]
        labels.append(Text("final", justify="right"))
        docs = sorted({d for g in grades.values() for d in g} | set(final))
        fixed = [max([width(labels[0]), *(width(literal(d)) for d in docs)])]
        fixed += [width(label) for label in labels[2:]]
        right = (self.size.width or self.app.size.width) - LIST_WIDTH - 2  # its padding
        space = min(34, room(right, fixed, LEAST_TITLE))
        rows: list[list[Text]] = []
        for d in docs:
            doc = session.ws.doc(d)
            cells: list[Text] = [literal(d), cut(doc.title if doc else "", space)]
            for a in names:
                g = grades.get(a, {}).get(d)
                style = "green" if g else "dim"
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
        column_keys = ["doc", "title", *(f"a:{a}" for a in names), "final"]
        fill(sides, labels, rows, docs, column_keys=column_keys)
        self.place_cursor(sides, keep)

    def show_agreement(self) -> None:
        """Kappa per pair and alpha over everyone (how far to trust the labels).

        Reads every label: redrawn only when the workspace changed since the last time.
        """
        token = self.gp.session.change_token()
        if token == self._agreement_token:
            return
        self._agreement_token = token
        ws = self.gp.session.ws
        report = agreement_report(ws.labels(), ws.verdicts())
        out = Text("agreement  ", style="bold")
        for p in report["pairs"]:
            out.append_text(literal(f"{p['a']}–{p['b']}"))
            out.append(f" κ {p['kappa']:.2f} (n {p['n']})   ")
        alpha = report["alpha_ordinal"]
        out.append(
            f"α ordinal {'-' if alpha is None else f'{alpha:.2f}'} "
            f"over {report['units']} shared judgments"
        )
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
        if not (advance and self.gp.auto_advance):
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
        self.gp.current_question = following
        self.question_id = following
        self.show_sides()
        self.notify(visible(f"Settled {settled}; next to settle: {following}."), markup=False)

    def action_take_side(self, index: int) -> None:
        """The final gold is one annotator's relevant documents."""
        names = self.annotators()
        if index >= len(names):
            self.notify(f"This question has {len(names)} annotators.", severity="warning")
            return
        side = self.grades().get(names[index], {})
        self._settle(side, note=f"took {names[index]}'s side")

    def _relevant(self) -> list[dict[str, int]]:
        return [{d: g for d, g in gs.items() if g >= 1} for gs in self.grades().values()]

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
        q = self.gp.session.ws.question(self.question_id or "")
        if q is None or self.refuse_read_only("Rewriting a question"):
            return
        # Control characters are edited as their pictures; an untouched text is no edit.
        shown = visible(q.text)
        text = await self.app.push_screen_wait(PromptScreen("Rewrite the question", shown))
        if text and text.strip() and text.strip() not in (q.text, shown.strip()):
            self.gp.session.edit_question(q.id, text, None)
            self.gp.pool_question(q.id)
            self.show_sides()

    @work
    async def action_split(self) -> None:
        """Split off a second question, pooled at once."""
        q = self.gp.session.ws.question(self.question_id or "")
        if q is None or self.refuse_read_only("Splitting a question"):
            return
        text = await self.app.push_screen_wait(
            PromptScreen(f"Split {q.id}: the second question", placeholder="the other half")
        )
        if text and text.strip():
            new = self.gp.session.split_question(q.id, text)
            self.gp.pool_question(new.id)
            self.notify(
                visible(f"Added {new.id}, split from {q.id}; judge it with l."), markup=False
            )
            self.gp.current_question = new.id
