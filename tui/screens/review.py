"""The review screen: live scores per retriever and the rank of the gold per question."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import ContentSwitcher, DataTable, Footer, Header, Static

from engine.analysis import (
    SweepCell,
    failures,
    noanswer_calibration,
    pool_contributions,
    question_overlaps,
    sweep,
)
from engine.compare import Comparison, FloatArray, compare, question_wins
from engine.metrics import first_gold_rank
from engine.workspace import Workspace
from tui.literal import literal, one_line, visible
from tui.messages import LabelSaved, QuestionPooled
from tui.screens.base import GoldpanScreen, cursor_key
from tui.widgets.analysis_panels import (
    comparison_text,
    contribution_rows,
    failure_rows,
    histogram_text,
    sweep_rows,
)

PANELS = ("scores", "compare", "tags", "failures", "noanswer", "sweep", "pool")
PANEL_TITLES = {
    "scores": "scores per question",
    "compare": "compare {a} vs {b}",
    "tags": "by tag and overlap",
    "failures": "failures of {a}",
    "noanswer": "no-answer calibration of {a}",
    "sweep": "k1 x b sweep of {a}",
    "pool": "what each retriever alone put in the pool (top 10)",
}
COMPARE_METRICS = ("mrr", "hit@1", "hit@5", "ndcg@10")
SWEEP_K1 = (0.9, 1.2, 1.5, 2.0)
SWEEP_B = (0.4, 0.6, 0.75, 0.9)

REVIEW_METRICS = ("hit@1", "hit@3", "hit@5", "mrr", "recall@5", "ndcg@10")
HEADERS = {
    "hit@1": "Hit@1",
    "hit@3": "Hit@3",
    "hit@5": "Hit@5",
    "mrr": "MRR",
    "recall@5": "R@5",
    "ndcg@10": "nDCG@10",
}


def rank_cell(rank: int) -> Text:
    """A gold rank, coloured: 1 green, 2-3 yellow, 4-10 orange, deeper red, missed ``-``."""
    if rank == 0:
        return Text("-", style="bold red", justify="right")
    style = (
        "green" if rank == 1 else "yellow" if rank <= 3 else "dark_orange" if rank <= 10 else "red"
    )
    return Text(str(rank), style=style, justify="right")


class ReviewScreen(GoldpanScreen):
    """How each retriever does on the labels as they are now."""

    HELP = """
## Review

The table on top scores every retriever on the **scored** questions (those with agreed
gold): Hit@k (a gold document in the top k), MRR (1 / rank of the first gold),
Recall@5, nDCG@10 (graded), and milliseconds per query. The numbers follow every label
at once; retrievers are never re-run, their cached rankings are rescored.

The grid gives, per question and retriever, the **rank of the first gold document**
(`-`: not in the cached top 100), hardest questions first. The panel on the right shows
the selected question's gold and, for each retriever, the rank-1 document that beat the
gold. `t` filters by tag, `enter` judges the selected question.

`p` cycles the analysis panels; `a` and `b` choose retrievers A and B:

- **compare**: A vs B per question: win / tie / loss, the difference of means with a
  paired bootstrap 95% interval and a randomization p-value, and the questions each wins.
  A few dozen questions make noisy numbers: trust a difference only when its interval
  excludes 0.
- **by tag**: scores on `easy` vs `hard` questions side by side, and on questions with a
  high vs low overlap with some title (an easy test hides differences).
- **failures**: questions where A does not put a gold document first, with the document
  that won and whether it is a neighbour (same series) or an overview post.
- **no-answer**: A's top-1 scores of answerable vs no-answer questions and the threshold
  that best tells them apart, or a warning that none does.
- **sweep**: A's MRR over a k1 x b grid (`*` = its own parameters). Picking the best cell
  on a few questions overfits: it is a check, not a tuning knob.
"""

    BINDINGS = [
        Binding(
            "t",
            "cycle_tag",
            "Tag filter",
            id="review.tag",
            tooltip="Score only questions with one tag (cycles)",
        ),
        Binding(
            "enter", "judge", "Judge", id="review.judge", tooltip="Judge the selected question"
        ),
        Binding(
            "p",
            "next_panel",
            "Panel",
            id="review.panel",
            tooltip="Next panel: scores, compare, by tag, failures, no-answer, sweep, pool",
        ),
        Binding("a", "next_a", "A", id="review.a", tooltip="Choose retriever A (cycles)"),
        Binding("b", "next_b", "B", id="review.b", tooltip="Choose retriever B (cycles)"),
    ]
    PALETTE = [
        ("cycle_tag", "Review: filter by tag", "Cycle the tag filter"),
        ("judge", "Review: judge selected question", "Open the selected question"),
        ("next_panel", "Review: next analysis panel", "Compare, by tag, failures, ..."),
    ]

    tag: reactive[str | None] = reactive(None)
    """Score only questions with this tag (None: all)."""
    panel: reactive[str] = reactive("scores")
    """The analysis panel shown under the metrics table."""
    a: reactive[int] = reactive(0)
    """Index of retriever A."""
    b: reactive[int] = reactive(1)
    """Index of retriever B."""

    @dataclass
    class Compared(Message):
        """A vs B comparisons were computed (in a worker)."""

        key: tuple[str, str, str | None]
        results: list[Comparison]

    @dataclass
    class Swept(Message):
        """A sweep finished (in a worker)."""

        retriever: str
        cells: list[SweepCell]

    def compose(self) -> ComposeResult:
        """Counts, metrics table, grid and detail."""
        yield Header()
        yield Static(id="review-counts")
        yield DataTable(id="metrics", cursor_type="none", show_cursor=False, cell_padding=2)
        yield Static(id="panel-title")
        with ContentSwitcher(initial="scores", id="panels"):
            with Horizontal(id="scores"):
                yield DataTable(id="grid", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="detail-scroll"):
                    yield Static(id="detail")
            with VerticalScroll(id="compare"):
                yield Static(id="compare-body")
            with Vertical(id="tags"):
                yield DataTable(id="tags-table", cursor_type="none", show_cursor=False)
                yield Static(id="tags-note")
            yield DataTable(id="failures", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="noanswer"):
                yield Static(id="noanswer-body")
            with Vertical(id="sweep"):
                yield Static(id="sweep-note")
                yield DataTable(id="sweep-table", cursor_type="none", show_cursor=False)
            yield DataTable(id="pool", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        """Draw."""
        self.refresh_scores()
        self.refresh_panel()
        self.query_one("#grid", DataTable).focus()

    def on_screen_resume(self) -> None:
        """Labels may have changed on another screen: rescore (cheap, cached rankings)."""
        self.gp.session.reload_if_changed()
        self.refresh_scores()

    def on_label_saved(self, _: LabelSaved) -> None:
        """A label changed."""
        self.refresh_scores()

    def on_question_pooled(self, _: QuestionPooled) -> None:
        """A question got new rankings."""
        self.refresh_scores()

    def watch_tag(self) -> None:
        """Rescore for the tag."""
        self.refresh_scores()

    def watch_panel(self) -> None:
        """Show another panel."""
        self.query_one(ContentSwitcher).current = self.panel
        self.refresh_panel()

    def watch_a(self) -> None:
        """Retriever A changed."""
        self.refresh_panel()

    def watch_b(self) -> None:
        """Retriever B changed."""
        self.refresh_panel()

    def _names(self) -> tuple[str, str]:
        names = self.gp.session.live.retrievers
        if not names:
            return "", ""
        return names[self.a % len(names)], names[self.b % len(names)]

    def action_next_panel(self) -> None:
        """Cycle the panels."""
        self.panel = PANELS[(PANELS.index(self.panel) + 1) % len(PANELS)]

    def action_next_a(self) -> None:
        """Next retriever as A."""
        self.a = (self.a + 1) % max(1, len(self.gp.session.live.retrievers))

    def action_next_b(self) -> None:
        """Next retriever as B."""
        self.b = (self.b + 1) % max(1, len(self.gp.session.live.retrievers))

    def refresh_panel(self) -> None:
        """Redraw the panel on screen (the scores panel follows refresh_scores)."""
        if not self.is_mounted:
            return
        a, b = self._names()
        title = PANEL_TITLES[self.panel].format(a=a or "-", b=b or "-")
        self.query_one("#panel-title", Static).update(
            Text.assemble(
                ("panel: ", "dim"), (visible(title), "bold"), ("   p next · a/b retrievers", "dim")
            )
        )
        if not a:
            return
        if self.panel == "compare":
            self._start_compare(a, b)
        elif self.panel == "tags":
            self._show_tags()
        elif self.panel == "failures":
            self._show_failures(a)
        elif self.panel == "noanswer":
            cal = noanswer_calibration(self.gp.session.ws, a)
            self.query_one("#noanswer-body", Static).update(histogram_text(cal))
        elif self.panel == "sweep":
            self._start_sweep(a)
        elif self.panel == "pool":
            self._show_pool()

    def _show_pool(self) -> None:
        ws = self.gp.session.ws
        contributions = pool_contributions(ws)
        table = self.query_one("#pool", DataTable)
        table.clear(columns=True)
        for col in ("retriever", "only it found", "of them gold", "for example"):
            table.add_column(col)
        for cells in contribution_rows(contributions, ws.doc):
            table.add_row(*cells)

    def _start_compare(self, a: str, b: str) -> None:
        live = self.gp.session.live
        values = {
            m: (live.values(a, m, self.tag)[1], live.values(b, m, self.tag)[1])
            for m in COMPARE_METRICS
        }
        self.query_one("#compare-body", Static).update(Text("Resampling…", style="dim"))
        self._compare((a, b, self.tag), values)

    @work(thread=True, exclusive=True, group="compare")
    def _compare(
        self, key: tuple[str, str, str | None], values: dict[str, tuple[FloatArray, FloatArray]]
    ) -> None:
        """Bootstrap and randomization for each metric, off the UI thread."""
        a, b, _ = key
        results = [compare(a, b, m, va, vb) for m, (va, vb) in values.items()]
        self.post_message(self.Compared(key, results))

    def on_review_screen_compared(self, message: ReviewScreen.Compared) -> None:
        """Show the comparison if it is still the one asked for."""
        a, b = self._names()
        if message.key != (a, b, self.tag) or self.panel != "compare":
            return
        live = self.gp.session.live
        ids, va = live.values(a, "mrr", self.tag)
        _, vb = live.values(b, "mrr", self.tag)
        a_wins, b_wins = question_wins(ids, va, vb)
        wins = {a: a_wins, b: b_wins}
        self.query_one("#compare-body", Static).update(comparison_text(a, b, message.results, wins))

    def _show_tags(self) -> None:
        live = self.gp.session.live
        overlaps = question_overlaps(self.gp.session.ws)
        high = [o.question_id for o in overlaps if o.high]
        low = [o.question_id for o in overlaps if not o.high]
        groups = {
            "easy": live.means("easy"),
            "hard": live.means("hard"),
            "hi-ov": live.means_for(high),
            "lo-ov": live.means_for(low),
        }
        table = self.query_one("#tags-table", DataTable)
        table.clear(columns=True)
        table.add_column("retriever")
        for g in groups:
            for m in ("hit@1", "mrr"):
                table.add_column(Text(f"{g} {HEADERS[m]}", justify="right"))
        for r in live.retrievers:
            cells = [literal(r)]
            for means in groups.values():
                for m in ("hit@1", "mrr"):
                    cells.append(Text(f"{means[r][m]:.3f}", justify="right"))
            table.add_row(*cells)
        scored = set(live.values(live.retrievers[0], "mrr")[0]) if live.retrievers else set()
        self.query_one("#tags-note", Static).update(
            Text(
                f"scored questions: easy {live.counts('easy')['scored']}, hard "
                f"{live.counts('hard')['scored']}, high title overlap (hi-ov, 60% or more) "
                f"{len(scored & set(high))}, low (lo-ov) {len(scored & set(low))}. An easy "
                "test hides differences: read the columns, not only the totals.",
                style="dim",
            )
        )

    def _show_failures(self, a: str) -> None:
        ws = self.gp.session.ws
        rows = failures(ws, a, tag=self.tag)
        titles = {}
        for f in rows:
            doc = ws.doc(f.top_doc) if f.top_doc else None
            titles[f.top_doc or ""] = doc.title if doc else ""
        table = self.query_one("#failures", DataTable)
        table.clear(columns=True)
        for col in ("question", "gold rank", "rank-1 document", "title", "relation"):
            table.add_column(col)
        for cells in failure_rows(rows, titles):
            table.add_row(*cells)

    def _start_sweep(self, a: str) -> None:
        spec = self.gp.session.ws.retriever(a)
        note = self.query_one("#sweep-note", Static)
        if spec is None or spec.kind != "bm25":
            note.update(literal(f"{a} has no k1 and b to sweep.", style="dim"))
            return
        note.update(Text("Ranking the scored questions for every cell…", style="dim"))
        self._sweep(a, self.tag)

    @work(thread=True, exclusive=True, group="sweep")
    def _sweep(self, retriever: str, tag: str | None) -> None:
        ws = Workspace.open(self.gp.workspace_path, readonly=True)
        try:
            cells = sweep(ws, retriever, SWEEP_K1, SWEEP_B, "mrr", tag=tag)
        finally:
            ws.close()
        self.post_message(self.Swept(retriever, cells))

    def on_review_screen_swept(self, message: ReviewScreen.Swept) -> None:
        """Draw the heat table."""
        if self.panel != "sweep" or self._names()[0] != message.retriever:
            return
        spec = self.gp.session.ws.retriever(message.retriever)
        own = (
            (float(spec.params.get("k1", 1.5)), float(spec.params.get("b", 0.75)))
            if spec
            else (0.0, 0.0)
        )
        table = self.query_one("#sweep-table", DataTable)
        table.clear(columns=True)
        table.add_column("k1 \\ b")
        for b in SWEEP_B:
            table.add_column(Text(f"b {b:g}", justify="right"))
        for row in sweep_rows(message.cells, SWEEP_K1, SWEEP_B, own):
            table.add_row(*row)
        self.query_one("#sweep-note", Static).update(
            literal(
                f"MRR of {message.retriever} over k1 x b (* = its own parameters, equal to the "
                "scores above). Choosing the best cell on a few questions overfits: this grid is "
                "a check, not a tuning knob.",
                style="dim",
            )
        )

    def refresh_scores(self) -> None:
        """Redraw the metrics table, counts and grid from the live scores."""
        if not self.is_mounted:
            return
        live = self.gp.session.live
        means = live.means(self.tag)
        counts = live.counts(self.tag)
        self.query_one("#review-counts", Static).update(
            Text.assemble(
                ("tag: ", "dim"),
                (visible(self.tag or "all"), "bold"),
                "   ",
                (str(counts["scored"]), "bold green"),
                " scored · ",
                (str(counts["no_answer"]), "bold cyan"),
                " no answer · ",
                (str(counts["disputed"]), "bold red"),
                " disputed · ",
                (str(counts["recheck"]) if counts["recheck"] else "", "bold yellow"),
                " need re-check · " if counts["recheck"] else "",
                (str(counts["unlabeled"]), "bold"),
                " unlabeled",
            )
        )
        table = self.query_one("#metrics", DataTable)
        table.clear(columns=True)
        table.add_column("retriever")
        for m in REVIEW_METRICS:
            table.add_column(Text(HEADERS[m], justify="right"))
        table.add_column(Text("ms p50", justify="right"))
        table.add_column(Text("ms p95", justify="right"))
        best = {m: max((means[r][m] for r in live.retrievers), default=0.0) for m in REVIEW_METRICS}
        for r in live.retrievers:
            cells: list[Text] = [literal(r)]
            for m in REVIEW_METRICS:
                v = means[r][m]
                style = "bold green" if v == best[m] and v > 0 else ""
                cells.append(Text(f"{v:.3f}", style=style, justify="right"))
            lat = live.latency.get(r, {})
            cells.append(Text(f"{lat.get('median', 0.0):.2f}", justify="right"))
            cells.append(Text(f"{lat.get('p95', 0.0):.2f}", justify="right"))
            table.add_row(*cells, key=r)
        self._refresh_grid()
        if self.panel != "scores":
            self.refresh_panel()

    def _refresh_grid(self) -> None:
        live = self.gp.session.live
        grid = self.query_one("#grid", DataTable)
        keep = cursor_key(grid)
        grid.clear(columns=True)
        grid.add_column("question", key="question")
        for r in live.retrievers:
            grid.add_column(literal(r.removeprefix("bm25-")), key=r)
        for row in live.rows(self.tag):
            grid.add_row(
                literal(row.question_id),
                *(rank_cell(row.ranks[r]) for r in live.retrievers),
                key=row.question_id,
            )
        if keep is not None and keep in grid.rows:
            grid.move_cursor(row=grid.get_row_index(keep))
        self._show_detail()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Follow the grid's cursor."""
        if event.data_table.id == "grid":
            self._show_detail()

    def selected_question(self) -> str | None:
        """The question under the grid's cursor."""
        return cursor_key(self.query_one("#grid", DataTable))

    def _show_detail(self) -> None:
        detail = self.query_one("#detail", Static)
        qid = self.selected_question()
        if qid is None:
            detail.update(
                Text("No scored question yet: label some in the judge screen (l).", style="dim")
            )
            return
        session = self.gp.session
        live = session.live
        q = session.ws.question(qid)
        gold = live.golds[qid]
        out = Text.assemble((visible(qid), "bold"), "  ")
        out.append_text(literal(q.text if q else ""))
        out.append("\n\ngold: ", style="dim")
        out.append_text(literal(", ".join(f"{d} ({g})" for d, g in gold.gold.items())))
        out.append("\n")
        for r in live.retrievers:
            ranking = live.rankings[r].get(qid, ())
            first = first_gold_rank(ranking, gold.gold)
            out.append("\n")
            out.append_text(literal(r, style="bold"))
            out.append("  ")
            out.append_text(rank_cell(first))
            if first != 1 and ranking:
                top = ranking[0]
                doc = session.ws.doc(top)
                out.append("\n  rank 1: ", style="dim")
                out.append_text(one_line(doc.title if doc else top, 40))
                out.append(visible(f"  {top}"), style="dim")
        detail.update(out)

    def action_cycle_tag(self) -> None:
        """Next tag."""
        self.tag = self.next_tag(self.tag)

    def action_judge(self) -> None:
        """Open the selected question in the judge screen."""
        qid = self.selected_question()
        if qid is not None:
            grid = self.query_one("#grid", DataTable)
            order = [str(k.value) for k in grid.rows]
            self.gp.judge(qid, order)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on the grid."""
        event.stop()
        self.action_judge()
