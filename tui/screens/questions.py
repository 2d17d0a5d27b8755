"""The questions screen: every question, its status, tags, gold count and annotators."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable, Footer, Header, Static

from engine.analysis.overlap import EASY_THRESHOLD
from engine.counters import is_disputed
from engine.gold import Gold, Status, resolve_one
from engine.judging.queue import DEFAULT_K, coverage_at_k, judged_docs, judging_queue
from engine.workspace import Workspace
from tui.actions import Command, bindings, by_id
from tui.literal import literal, one_line, visible
from tui.screens.base import GoldpanScreen, cursor_key
from tui.widgets.lines import Lines
from tui.widgets.progress import progress_text, stopped_text
from tui.widgets.tables import PADDING, RowTable, cut, fill, room, two_lines, width

if TYPE_CHECKING:
    from tui.app import GoldpanApp


STATUS_STYLE = {
    Status.UNLABELED: "dim",
    Status.NO_GOLD_YET: "yellow",
    Status.LABELED: "green",
    Status.NO_ANSWER: "cyan",
    Status.AMBIGUOUS: "magenta",
    Status.DISPUTED: "bold red",
    Status.RECHECK: "bold yellow",
}
STATUS_FILTERS: list[Status | None] = [None, *Status]
COLUMNS = ("id", "status", "gold", "title ov.", "gold ov.", "question", "tags", "by")
QUESTION_COLUMN = 5
"""The question text comes before tags and annotators and takes the width left over, so
a narrow terminal loses those columns off the right edge, never the question."""
LEAST_QUESTION = 20
"""The question column's least width (a narrower terminal scrolls sideways)."""
MOST_TAGS = 24
"""The tags column's widest (longer tags are cut; the line under the table has them all)."""
LEAST_TAGS = 10
"""The tags column's least width beside the question on a narrow terminal."""


class QuestionsScreen(GoldpanScreen):
    """Pick a question to judge; filter by status and tag."""

    HELP = """
## Questions

Every question of the workspace with its **status**:

- *unlabeled*: nobody has judged it yet;
- *no_gold_yet*: judged documents are all grade 0 (left out of scores);
- *labeled*: has gold documents (scored);
- *no_answer*: the corpus cannot answer it (scored apart);
- *ambiguous*: flagged for an adjudicator;
- *disputed*: annotators disagree (left out of scores until adjudicated); the counts
  and the `disputed` filter take in the *ambiguous* ones too: both wait for an
  adjudicator.
- *recheck*: a re-import changed the question's text; its judgments were made for the
  old text (kept, left out of scores): judge it again.

A status followed by *stopped*: someone stopped judging the question when the stopping
rule offered it; its candidates nobody judged are *not judged (stopped)*, counted, not
grade 0.

**title ov.** is the highest share of the question's words found in one document title
(whole words or Hangul bigrams); yellow from 60%: likely an easy question. **gold ov.**
is the share found in its gold documents' text (a question that copies its answer).

`questions.judge` judges the selected question. `questions.status` cycles the status
filter, `questions.tag` the tag filter. `questions.view` shows one annotator's view
(statuses from their labels alone); `questions.queue` orders by the
**judging queue**: questions whose pooled documents (every retriever's top 10) are
least judged first, then the ones to adjudicate; it also shows each retriever's
coverage@10, the share of its top 10 that someone has judged.
Under the table: the selected question's full text (the column cuts long ones) and
your progress: a question is *judged* by you once you gave it a verdict or graded
every one of its candidates (or a gold file imported under your name gave its gold).
The selected question is the current one on every screen: the Label screen opens it.
"""

    AREA = "Questions"
    ACTIONS = (
        Command(
            "enter",
            "judge",
            "Judge",
            "Judge the selected question's pooled candidates",
            "questions.judge",
            title="Questions: judge selected",
        ),
        Command(
            "f",
            "cycle_status",
            "Status filter",
            "Show only questions of one status (cycles)",
            "questions.status",
            title="Questions: filter by status",
        ),
        Command(
            "t",
            "cycle_tag",
            "Tag filter",
            "Show only questions with one tag (cycles)",
            "questions.tag",
            title="Questions: filter by tag",
        ),
        Command(
            "v",
            "cycle_view",
            "Annotator view",
            "Show statuses as one annotator's labels alone make them (cycles)",
            "questions.view",
            title="Questions: annotator view",
        ),
        Command(
            "o",
            "toggle_queue",
            "Queue order",
            "Order by the judging queue: most unjudged pooled documents first",
            "questions.queue",
            title="Questions: queue order",
        ),
    )
    BINDINGS = bindings(ACTIONS)

    status_filter: reactive[Status | None] = reactive(None)
    """Only questions of this status (None: all)."""
    tag_filter: reactive[str | None] = reactive(None)
    """Only questions with this tag (None: all)."""
    view: reactive[str | None] = reactive(None)
    """Show one annotator's view of every question (None: the resolved gold)."""
    _overlap_token: object = None
    """The workspace's change token when the overlaps were last measured."""
    _overlap_after_paint = False
    """The first paint is done: overlaps are measured from then on."""
    _rows_width = 0
    """The width the rows were last cut for (the question column takes what is left)."""
    queue_order: reactive[bool] = reactive(False)
    """Order rows by the judging queue instead of by id."""

    def compose(self) -> ComposeResult:
        """Header, filter line, table, footer."""
        yield Header()
        yield Lines(id="filters")
        yield RowTable(id="questions", cursor_type="row", zebra_stripes=True)
        yield Static(id="first-steps")
        yield Lines(id="question-full")
        yield Lines(id="progress")
        yield Footer()

    @dataclass
    class OverlapMeasured(Message):
        """Each question's overlap with the nearest title and with its gold text (0-1)."""

        overlap: dict[str, tuple[float, float | None]]

    def on_mount(self) -> None:
        """Build the table; measure title overlap in a worker once the table is painted.

        (The worker loads the retrievers' modules: started sooner, it would take the CPU
        from the first paint.)
        """
        self.overlap: dict[str, tuple[float, float | None]] = {}
        """Question id -> (share of its words in the nearest title, in its gold text)."""
        self.redraw()
        self.call_after_refresh(self._painted)

    def _painted(self) -> None:
        """The table is on screen: measure the overlaps (and from now on, on change)."""
        self._overlap_after_paint = True
        self.measure_overlap()

    def measure_overlap(self) -> None:
        """Measure the overlaps again when the workspace changed since the last measure."""
        if not self._overlap_after_paint:
            return  # the first paint measures (on_mount)
        token = self.gp.session.change_token()
        if token != self._overlap_token:
            self._overlap_token = token
            self._measure_overlap()

    @work(thread=True, exclusive=True, group="overlap")
    def _measure_overlap(self) -> None:
        """Title overlap of every question (titles are read here, never shown)."""
        from engine.analysis.analyses import question_overlaps  # loads the retrievers: not at start

        ws = Workspace.open(self.gp.workspace_path, readonly=True)
        try:
            overlap = {o.question_id: (o.title, o.gold) for o in question_overlaps(ws)}
        finally:
            ws.close()
        self.post_message(self.OverlapMeasured(overlap))

    def on_questions_screen_overlap_measured(self, message: OverlapMeasured) -> None:
        """Show the overlap column; under another screen, when this one is back on top.

        (Redrawing the rows sets the order `]` walks: under the label screen, opened
        from another list, that would change what `]` opens.)
        """
        self.overlap = message.overlap
        if self.is_current:
            self.refresh_rows()
        else:
            self.drawn = None  # redrawn on resume

    def redraw(self) -> None:
        """The workspace changed: redraw the rows."""
        super().redraw()
        self.refresh_rows()
        self.measure_overlap()  # gold overlap follows the labels; nothing new: no work

    def follow_current(self) -> None:
        """Rest the cursor on the current question (chosen on any screen)."""
        self.place_cursor(self.query_one(DataTable), self.state.current_question)
        self.show_selected()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The selected row is the current question; show its full text."""
        self.cursor_moved(event.data_table)
        self.show_selected()

    def show_selected(self) -> None:
        """The selected question's full text (the column cuts it) and the progress line."""
        if not self.is_mounted:
            return
        session = self.gp.session
        qid = cursor_key(self.query_one(DataTable))
        q = session.question(qid) if qid else None
        full = self.query_one("#question-full", Lines)
        if q is None:
            full.show(Text("No question selected.", style="dim"))
        else:
            text = Text.assemble((visible(q.id), "bold"), "  ")
            text.append_text(literal(q.text))
            if q.tags:
                text.append(visible("  " + " ".join(f"#{t}" for t in q.tags)), style="dim")
            full.show(text)
        self.query_one("#progress", Lines).show(
            progress_text(
                session,
                self.state.question_order,
                qid,
                handed_out=self.gp.leases.assigner is not None,
                viewer=self.is_viewer,
            )
        )

    def on_resize(self) -> None:
        """The question column takes the width left: cut its text anew (a new width)."""
        if (self.size.width or self.app.size.width) != self._rows_width:
            self.refresh_rows()

    def watch_status_filter(self) -> None:
        """Re-filter."""
        self.refresh_rows()

    def watch_tag_filter(self) -> None:
        """Re-filter."""
        self.refresh_rows()

    def watch_view(self) -> None:
        """Redraw as another annotator sees it."""
        self.refresh_rows()

    def watch_queue_order(self) -> None:
        """Re-order."""
        self.refresh_rows()

    def golds(self) -> dict[str, Gold]:
        """The resolved gold, or one annotator's view of it (their labels alone)."""
        live = self.gp.session.live
        if self.view is None:
            return live.golds
        session = self.gp.session
        labels: dict[str, dict[str, int]] = {}
        for lab in session.labels():
            if lab.annotator == self.view:
                labels.setdefault(lab.question_id, {})[lab.doc_id] = lab.grade
        verdicts = {
            v.question_id: v.verdict for v in session.verdicts() if v.annotator == self.view
        }
        return {
            q: resolve_one(
                q,
                {self.view: labels[q]} if q in labels else {},
                {self.view: verdicts[q]} if q in verdicts else {},
            )
            for q in live.question_ids
        }

    def queue(self) -> tuple[list[str], dict[str, int], dict[str, float]]:
        """The judging queue order, unjudged counts and coverage@10 per retriever."""
        live = self.gp.session.live
        judged = judged_docs([(lab.question_id, lab.doc_id) for lab in self.gp.session.labels()])
        items = judging_queue(
            live.golds,
            live.rankings,
            judged,
            pools=live.pools(DEFAULT_K),
            stopped=self.gp.session.stopped(),
        )
        return (
            [i.question_id for i in items],
            {i.question_id: i.unjudged for i in items},
            coverage_at_k(live.rankings, judged),
        )

    def visible_ids(self, golds: dict[str, Gold] | None = None) -> list[str]:
        """The question ids the table shows, in order."""
        live = self.gp.session.live
        golds = golds if golds is not None else self.golds()
        order = self.queue()[0] if self.queue_order else live.question_ids
        out = []
        for q in order:
            gold = golds[q]
            if self.status_filter is not None and not self._shows(gold):
                continue
            if self.tag_filter is not None and self.tag_filter not in live.tags[q]:
                continue
            out.append(q)
        return out

    def _shows(self, gold: Gold) -> bool:
        """Whether ``gold`` passes the status filter.

        `disputed` is the counters' meaning (:func:`engine.counters.is_disputed`:
        ambiguous ones too), so the filter lists as many questions as the counts line
        says are disputed.
        """
        if self.status_filter is Status.DISPUTED:
            return is_disputed(gold)
        return gold.status is self.status_filter

    def refresh_rows(self) -> None:
        """Redraw the table from the session's live state, keeping the cursor."""
        if not self.is_mounted:
            return
        table = self.query_one(DataTable)
        session = self.gp.session
        keep = cursor_key(table)
        texts = {q.id: q.text for q in session.questions()}
        golds = self.golds()
        shown = self.visible_ids(golds)
        self.state.question_order = shown  # what `]` walks on the label screen
        served = self.gp.served is not None
        on = session.leases() if served else {}  # served: who is judging what now
        heads: list[list[str | Text]] = []
        stopped = session.stopped()
        for qid in shown:
            gold = golds[qid]
            extra = [Text(visible(on.get(qid, "")), style="bold yellow")] if served else []
            cell = Text(gold.status.value, style=STATUS_STYLE[gold.status])
            if qid in stopped:
                cell.append(" stopped", style="dim italic")
            heads.append(
                [
                    literal(qid),
                    cell,
                    *extra,
                    str(len(gold.gold)) if gold.gold else "-",
                    *self._overlap_cells(qid),
                ]
            )
        columns = (*COLUMNS[:2], "on", *COLUMNS[2:]) if served else COLUMNS
        lead = QUESTION_COLUMN + (1 if served else 0)
        tags = {qid: ", ".join(session.live.tags[qid]) for qid in shown}
        widest = max([width(columns[lead + 1]), *(width(one_line(t)) for t in tags.values())])
        self._rows_width = self.size.width or self.app.size.width
        labels, space, tag_space = self._fit(columns, heads, lead, min(widest, MOST_TAGS))
        rows = [
            [
                *head,
                cut(texts.get(qid, ""), space),
                cut(tags[qid], tag_space),
                one_line(", ".join(golds[qid].annotators), 14),
            ]
            for qid, head in zip(shown, heads, strict=True)
        ]
        fill(table, labels, rows, shown, column_keys=columns)
        self._show_first_steps(not session.live.question_ids)
        self.place_cursor(table, self.state.current_question, keep)
        self.show_selected()
        status = self.status_filter.value if self.status_filter else "all"
        counts = session.live.counts()
        self.query_one("#filters", Lines).show(
            Text.assemble(
                ("status: ", "dim"),
                (status, "bold"),
                ("   tag: ", "dim"),
                (visible(self.tag_filter or "all"), "bold"),
                ("   view: ", "dim"),
                (visible(self.view or "gold"), "bold"),
                ("   order: ", "dim"),
                ("queue" if self.queue_order else "id", "bold"),
                ("   ", ""),
                (
                    f"{table.row_count} shown · {counts['scored']} scored · "
                    + (f"{counts['not_ranked']} not ranked yet · " if counts["not_ranked"] else "")
                    + f"{counts['no_answer']} no answer · {counts['disputed']} disputed · "
                    + (f"{counts['recheck']} recheck · " if counts["recheck"] else "")
                    + f"{counts['unlabeled']} unlabeled"
                    + stopped_text(stopped),
                    "dim",
                ),
            )
        )

    def _fit(
        self, columns: tuple[str, ...], heads: list[list[str | Text]], lead: int, tags: int
    ) -> tuple[list[str | Text], int, int]:
        """The headers, and the widths of the question and tags columns.

        The tags stay on screen beside the question (``tags``: their widest cell): when
        the question would get less than :data:`LEAST_QUESTION` beside them, the headers
        wider than their cells go on two lines (``title ov.`` over ``title`` / ``ov.``),
        and then the tags are cut to what is left (:data:`LEAST_TAGS` at least; less room
        scrolls sideways).
        """
        table = self.query_one(DataTable)
        cells = [max((width(r[i]) for r in heads), default=0) for i in range(lead)]
        for split in (False, True):
            labels: list[str | Text] = [
                two_lines(c) if split and width(c) > cells[i] else c
                for i, c in enumerate(columns[:lead])
            ]
            widths = [max(width(labels[i]), cells[i]) for i in range(lead)]
            # the question and the tags share what the lead columns leave
            both = room(self._rows_width, widths, 0) - PADDING
            if both - tags >= LEAST_QUESTION or split:
                table.header_height = 2 if labels != list(columns[:lead]) else 1
                shown = max(LEAST_TAGS, min(tags, both - LEAST_QUESTION))
                return [*labels, *columns[lead:]], max(LEAST_QUESTION, both - shown), shown
        raise AssertionError("unreachable: the split headers always return")

    def _show_first_steps(self, empty: bool) -> None:
        """In a workspace without questions, what to do first instead of an empty table."""
        steps = self.query_one("#first-steps", Static)
        self.query_one("#questions", DataTable).display = not empty
        steps.display = empty
        if empty:
            steps.update(first_steps(self.gp, self.gp.session.doc_count()))

    def _overlap_cells(self, qid: str) -> tuple[Text, Text]:
        measured = self.overlap.get(qid)
        if measured is None:
            return Text("…", style="dim", justify="right"), Text("…", style="dim", justify="right")
        title, gold = measured
        style = "bold yellow" if title >= EASY_THRESHOLD else "dim"
        return (
            Text(f"{title:.0%}", style=style, justify="right"),
            Text("-" if gold is None else f"{gold:.0%}", style="dim", justify="right"),
        )

    def action_judge(self) -> None:
        """Judge the selected question."""
        qid = cursor_key(self.query_one(DataTable))
        if qid is None:
            self.notify("No question to judge here.", severity="warning")
            return
        self.gp.judge(qid, self.visible_ids())

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row (DataTable consumes enter itself)."""
        event.stop()
        self.action_judge()

    def action_cycle_status(self) -> None:
        """Next status filter."""
        i = STATUS_FILTERS.index(self.status_filter)
        self.status_filter = STATUS_FILTERS[(i + 1) % len(STATUS_FILTERS)]

    def action_cycle_view(self) -> None:
        """Next annotator's view (then back to the resolved gold)."""
        views: list[str | None] = [None, *self.gp.session.annotators()]
        i = views.index(self.view) if self.view in views else 0
        self.view = views[(i + 1) % len(views)]

    def action_toggle_queue(self) -> None:
        """Queue order on / off; coverage@10 of each retriever is shown."""
        self.queue_order = not self.queue_order
        if self.queue_order:
            coverage = self.queue()[2]
            shares = ", ".join(f"{r} {v:.0%}" for r, v in coverage.items())
            self.notify(f"coverage@10 (share of each top 10 judged): {shares}", markup=False)

    def action_cycle_tag(self) -> None:
        """Next tag filter."""
        self.tag_filter = self.next_tag(self.tag_filter)


def first_steps(app: GoldpanApp, docs: int) -> Group:
    """What a workspace without questions says: write one, or import from a terminal."""
    write = by_id(app.ACTIONS, "write").keys
    reload = by_id(app.ACTIONS, "reload").keys
    name = shlex.quote(app.workspace_path.name)  # a name with a space, as a shell takes it
    head = Text("No questions yet.\n", style="bold")
    if not docs:
        head.append("The workspace has no documents yet: import your corpus first.\n", "yellow")
    head.append("\nPress ")
    head.append(write, style="bold reverse")
    head.append(" to write your first question (blind: no document in sight).\n\n")
    head.append("Or import from a terminal (", style="dim")
    head.append(reload, style="bold")
    head.append(" here then shows what was added):", style="dim")
    commands = Table.grid(padding=(0, 2))
    commands.add_column(no_wrap=True)
    commands.add_column(style="dim")
    for command, what in (
        (f"goldpan import docs {name} PATH", "a folder of Markdown, JSONL or CSV"),
        (f"goldpan import questions {name} FILE", "questions, with their gold"),
        (f"goldpan import squad {name} FILE --onto", "SQuAD questions onto your documents"),
        (f"goldpan import querylog {name} FILE", "users' queries to keep or rewrite"),
        (f"goldpan docs {name} --search TEXT", "find a document"),
    ):
        commands.add_row(literal("  " + command, style="bold"), what)
    return Group(head, commands)
