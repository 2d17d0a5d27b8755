"""The review screen: live scores per retriever and the rank of the gold per question."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.widgets import DataTable, Footer, Header, Static

from tui.literal import literal, one_line
from tui.messages import LabelSaved, QuestionPooled
from tui.screens.base import GoldpanScreen, cursor_key

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
    ]
    PALETTE = [
        ("cycle_tag", "Review: filter by tag", "Cycle the tag filter"),
        ("judge", "Review: judge selected question", "Open the selected question"),
    ]

    tag: reactive[str | None] = reactive(None)
    """Score only questions with this tag (None: all)."""

    def compose(self) -> ComposeResult:
        """Counts, metrics table, grid and detail."""
        yield Header()
        yield Static(id="review-counts")
        yield DataTable(id="metrics", cursor_type="none", show_cursor=False)
        with Horizontal(id="review-body"):
            yield DataTable(id="grid", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="detail-scroll"):
                yield Static(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        """Draw."""
        self.refresh_scores()
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
                (self.tag or "all", "bold"),
                "   ",
                (str(counts["scored"]), "bold green"),
                " scored · ",
                (str(counts["no_answer"]), "bold cyan"),
                " no answer · ",
                (str(counts["disputed"]), "bold red"),
                " disputed · ",
                (str(counts["unlabeled"]), "bold"),
                " unlabeled",
            )
        )
        table = self.query_one("#metrics", DataTable)
        table.clear(columns=True)
        table.add_column("retriever")
        for m in REVIEW_METRICS:
            table.add_column(Text(HEADERS[m], justify="right"))
        table.add_column(Text("ms/q", justify="right"))
        best = {m: max((means[r][m] for r in live.retrievers), default=0.0) for m in REVIEW_METRICS}
        for r in live.retrievers:
            cells: list[Text] = [literal(r)]
            for m in REVIEW_METRICS:
                v = means[r][m]
                style = "bold green" if v == best[m] and v > 0 else ""
                cells.append(Text(f"{v:.3f}", style=style, justify="right"))
            cells.append(Text(f"{live.latency_ms.get(r, 0.0):.2f}", justify="right"))
            table.add_row(*cells, key=r)
        self._refresh_grid()

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
                Text(row.question_id),
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
        out = Text.assemble((qid, "bold"), "  ")
        out.append_text(literal(q.text if q else ""))
        out.append("\n\ngold: ", style="dim")
        out.append(", ".join(f"{d} ({g})" for d, g in gold.gold.items()))
        out.append("\n")
        for r in live.retrievers:
            ranking = live.rankings[r].get(qid, ())
            first = next((i + 1 for i, d in enumerate(ranking) if d in gold.gold), 0)
            out.append("\n")
            out.append_text(literal(r, style="bold"))
            out.append("  ")
            out.append_text(rank_cell(first))
            if first != 1 and ranking:
                top = ranking[0]
                doc = session.ws.doc(top)
                out.append("\n  rank 1: ", style="dim")
                out.append_text(one_line(doc.title if doc else top, 40))
                out.append(f"  {top}", style="dim")
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
