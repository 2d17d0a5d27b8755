"""The review screen: live scores per retriever and the rank of the gold per question."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.widgets import ContentSwitcher, DataTable, Footer, Header, Static

from tui.actions import bindings
from tui.crash import failure_notice
from tui.literal import literal, one_line, visible
from tui.render import scores_grid
from tui.screens.base import GoldpanScreen, cursor_key
from tui.screens.review_cells import NOT_RANKED, holes_text, rank_cell
from tui.screens.review_keys import REVIEW_ACTIONS, REVIEW_HELP
from tui.widgets.analysis_panel import AnalysisPanel, PanelRequest
from tui.widgets.progress import stopped_text
from tui.widgets.review_panels import (
    NO_SCORED,
    ComparePanel,
    FailuresPanel,
    NoAnswerPanel,
    PoolPanel,
    SweepPanel,
    TagsPanel,
    tag_pair,
)
from tui.widgets.snapshot_diff import (
    Baseline,
    ChangesJudged,
    Verdicts,
    judge_changes,
    marked_rank,
    metric_cell,
    since_text,
    snapshot_choices,
)
from tui.widgets.tables import fill, fitted

if TYPE_CHECKING:  # numpy and the metrics load when the screen first scores, not at start
    from engine.analysis.compare import FloatArray

    ChangesNow = dict[str, tuple[list[str], dict[str, FloatArray]]]
    """Per retriever: the scored question ids and each metric's values in their order."""

PANELS = ("scores", "compare", "tags", "failures", "noanswer", "sweep", "pool")
REVIEW_METRICS = ("hit@1", "hit@3", "hit@5", "mrr", "recall@5", "ndcg@10", "judged@10")
NARROW_METRICS = REVIEW_METRICS[:-1]
"""Below 100 columns the table leaves Judged@10 to the line above it, which names every
retriever under the threshold, so that the latency columns stay on screen at 80."""
NARROW_WIDTH = 100
METRICS_PADDING = 2
"""The metrics table's cell padding where it fits (a narrow terminal takes less)."""


class ReviewScreen(GoldpanScreen):
    """How each retriever does on the labels as they are now."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    """Below 100 columns the grid takes the full width and the detail goes under it
    (app.tcss), so that every retriever's rank column is on screen."""

    HELP = REVIEW_HELP

    AREA = "Review"
    ACTIONS = REVIEW_ACTIONS
    BINDINGS = bindings(ACTIONS)

    tag: reactive[str | None] = reactive(None)
    """Score only questions with this tag (None: all)."""
    panel: reactive[str] = reactive("scores")
    """The analysis panel shown under the metrics table."""
    a: reactive[int] = reactive(0)
    """Index of retriever A."""
    b: reactive[int] = reactive(1)
    """Index of retriever B."""
    tag1: reactive[str | None] = reactive(None)
    """The first tag the by-tag panel compares (None: :func:`tag_pair`'s choice)."""
    tag2: reactive[str | None] = reactive(None)
    """The second tag the by-tag panel compares."""
    since: reactive[int] = reactive(0)
    """Index of the snapshot compared with, newest first (past the last: none)."""
    _baseline_cache: Baseline | None = None
    _fitted_width = 0
    """The width the metrics table was last fitted to (:func:`tui.widgets.tables.fitted`)."""
    _snapshot_count = 0
    _verdicts: Verdicts | None = None
    """The verdicts of the changes since the snapshot, for :attr:`_verdicts_key`."""
    _verdicts_key: Hashable = None
    """What the verdicts shown (or being computed) are for: change token, snapshot, tag."""

    def compose(self) -> ComposeResult:
        """Counts, metrics table, grid and detail."""
        yield Header()
        yield Static(id="review-counts")
        yield DataTable(
            id="metrics",
            cursor_type="none",
            show_cursor=False,
            cell_padding=METRICS_PADDING,
        )
        yield Static(id="panel-title")
        with ContentSwitcher(initial="scores", id="panels"):
            with Horizontal(id="scores"):
                yield DataTable(id="grid", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="detail-scroll"):
                    yield Static(id="detail")
            yield ComparePanel(id="panel-compare", values=self._values)
            yield TagsPanel(id="panel-tags", means=self._group_means)
            yield FailuresPanel(id="panel-failures")
            yield NoAnswerPanel(id="panel-noanswer")
            yield SweepPanel(id="panel-sweep")
            yield PoolPanel(id="panel-pool")
        yield Footer()

    def on_mount(self) -> None:
        """Draw."""
        self.redraw()
        if self.panel == "scores":  # its title line: once mounted (refresh_panel waits for it)
            self.call_after_refresh(self.refresh_panel)
        self.query_one("#grid", DataTable).focus()

    def _tagged(self) -> set[str] | None:
        """The questions the tag filter keeps (None: every question)."""
        tags = self.gp.session.live.tags
        return None if self.tag is None else {q for q, t in tags.items() if self.tag in t}

    def redraw(self) -> None:
        """The workspace changed: rescore (cheap, cached rankings) and redraw."""
        super().redraw()
        self._baseline_cache = None  # a snapshot may have been taken meanwhile
        self.refresh_scores()

    def on_resize(self) -> None:
        """Another width: fit the metrics table to it."""
        if (self.size.width or self.app.size.width) != self._fitted_width:
            self.refresh_scores()

    def follow_current(self) -> None:
        """Rest the grid's cursor on the current question when it is scored."""
        self.place_cursor(self.query_one("#grid", DataTable), self.state.current_question)

    def watch_tag(self) -> None:
        """Rescore for the tag."""
        self.refresh_scores()

    def watch_since(self) -> None:
        """Compare with another snapshot."""
        self.refresh_scores()

    @property
    def has_snapshots(self) -> bool:
        """The workspace has a snapshot to compare with (``s`` cycles through them)."""
        return self._snapshot_count > 0

    def action_next_since(self) -> None:
        """Next snapshot (newest first), then none."""
        self.since = (self.since + 1) % (len(snapshot_choices(self.gp.session)) + 1)

    def _baseline(self) -> tuple[Baseline | None, int]:
        """The snapshot compared with (cached), and how many there are."""
        choices = snapshot_choices(self.gp.session)
        name = choices[self.since] if self.since < len(choices) else None
        cached = self._baseline_cache
        if name is None:
            cached = None
        elif cached is None or cached.name != name:
            cached = Baseline.load(self.gp.session, name)
        self._baseline_cache = cached
        if len(choices) != self._snapshot_count:
            self._snapshot_count = len(choices)
            self.refresh_bindings()
        return cached, len(choices)

    def watch_panel(self) -> None:
        """Show another panel (the by-tag panel's keys come and go with it).

        The arrow keys go to what is on screen: the grid, or a panel's list of rows
        (failures, pool).
        """
        self.refresh_bindings()
        self.query_one(ContentSwitcher).current = (
            "scores" if self.panel == "scores" else f"panel-{self.panel}"
        )
        panel = self.current_panel()
        rows = (
            [self.query_one("#grid", DataTable)]
            if panel is None
            else [t for t in panel.query(DataTable) if t.cursor_type == "row"]
        )
        if rows:
            rows[0].focus()
        self.refresh_panel()

    @property
    def on_tags_panel(self) -> bool:
        """The by-tag panel is on screen (its keys choose the tags it compares)."""
        return self.panel == "tags"

    def _tags(self) -> tuple[str, str] | None:
        return tag_pair(self.gp.session.live.all_tags(), self.tag1, self.tag2)

    def _next_tag(self, mine: str | None, other: str | None) -> str | None:
        """The tag after ``mine`` in the workspace's, never ``other`` when there are two."""
        tags = self.gp.session.live.all_tags()
        i = tags.index(mine) if mine in tags else -1
        for step in range(1, len(tags) + 1):
            candidate = tags[(i + step) % len(tags)]
            if candidate != other or len(tags) == 1:
                return candidate
        return mine

    def action_next_tag1(self) -> None:
        """Compare another first tag."""
        pair = self._tags()
        if pair is not None:
            self.tag1, self.tag2 = self._next_tag(pair[0], pair[1]), pair[1]

    def action_next_tag2(self) -> None:
        """Compare another second tag."""
        pair = self._tags()
        if pair is not None:
            self.tag1, self.tag2 = pair[0], self._next_tag(pair[1], pair[0])

    def watch_tag1(self) -> None:
        """Other tags: the by-tag panel draws again from what it has."""
        self._tags_chosen()

    def watch_tag2(self) -> None:
        """Other tags: the by-tag panel draws again from what it has."""
        self._tags_chosen()

    def _tags_chosen(self) -> None:
        if self.is_mounted:
            self.query_one(TagsPanel).redraw()
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

    def _cycled(self, index: int, other: int) -> tuple[int, int]:
        """The retriever after ``index``, and what ``other`` becomes.

        Landing on ``other``'s retriever, the two swap: each key reaches every retriever
        and A and B always differ (with two retrievers, ``a`` swaps them).
        """
        n = len(self.gp.session.live.retrievers)
        if n < 2:
            return index, other
        nxt = (index + 1) % n
        return nxt, (index % n if nxt == other % n else other)

    def action_next_a(self) -> None:
        """Next retriever as A (B takes A's when A lands on it)."""
        a, b = self._cycled(self.a, self.b)
        self.set_reactive(ReviewScreen.b, b)  # one refresh, for the new pair: watch_a's
        self.a = a

    def action_next_b(self) -> None:
        """Next retriever as B (A takes B's when B lands on it)."""
        b, a = self._cycled(self.b, self.a)
        self.set_reactive(ReviewScreen.a, a)
        self.b = b

    def current_panel(self) -> AnalysisPanel | None:
        """The analysis panel on screen (None on the scores panel)."""
        if self.panel == "scores":
            return None
        return self.query_one(f"#panel-{self.panel}", AnalysisPanel)

    def refresh_panel(self) -> None:
        """Show the panel on screen for A, B and the tag (computed only when new)."""
        if not self.is_mounted:
            return
        a, b = self._names()
        panel = self.current_panel()
        title = "scores per question" if panel is None else panel.TITLE
        tags = " vs ".join(dict.fromkeys(self._tags() or ("no tags",)))
        self.query_one("#panel-title", Static).update(
            Text.assemble(
                ("panel: ", "dim"),
                (visible(title.format(a=a or "-", b=b or "-", tags=tags)), "bold"),
                (f"   p next · {AnalysisPanel.HINT if panel is None else panel.HINT}", "dim"),
            )
        )
        if panel is None or not a:
            return
        panel.show(PanelRequest(self.gp.workspace_path, self._token(), a, b, self.tag))

    def _token(self) -> object:
        return self.gp.session.change_token()

    def _values(
        self, a: str, b: str, metric: str, tag: str | None
    ) -> tuple[list[str], FloatArray, FloatArray]:
        """Per-question values of A and B from the live scores (for the compare panel)."""
        live = self.gp.session.live
        ids, va = live.values(a, metric, tag)
        _, vb = live.values(b, metric, tag)
        return list(ids), va, vb

    def _group_means(
        self, high: list[str], low: list[str]
    ) -> tuple[list[tuple[str, dict[str, dict[str, float] | None], int]], list[str]]:
        """Live means on the two tags compared and on high / low title overlap questions.

        None for a retriever that cannot rank now and lacks some of a group's questions.
        """
        live = self.gp.session.live
        scored = set(live.values(live.retrievers[0], "mrr")[0]) if live.retrievers else set()
        groups = [
            (tag, live.means(tag), live.counts(tag)["scored"])
            for tag in dict.fromkeys(self._tags() or ())
        ]
        groups += [
            ("hi-ov", live.means_for(high), len(scored & set(high))),
            ("lo-ov", live.means_for(low), len(scored & set(low))),
        ]
        return groups, list(live.retrievers)

    def refresh_scores(self) -> None:
        """Redraw the metrics table, counts and grid from the live scores."""
        if not self.is_mounted:
            return
        live = self.gp.session.live
        means = live.means(self.tag)
        counts = live.counts(self.tag)
        baseline, n_snapshots = self._baseline()
        changes = self._changes(baseline, means) if baseline else {}
        self.query_one("#review-counts", Static).update(
            Text.assemble(
                ("tag: ", "dim"),
                (visible(self.tag or "all"), "bold"),
                "   ",
                (str(counts["scored"]), "bold green"),
                " scored · ",
                (str(counts["not_ranked"]) if counts["not_ranked"] else "", "bold yellow"),
                " not ranked yet · " if counts["not_ranked"] else "",
                (str(counts["no_answer"]), "bold cyan"),
                " no answer · ",
                (str(counts["disputed"]), "bold red"),
                " disputed · ",
                (str(counts["recheck"]) if counts["recheck"] else "", "bold yellow"),
                " need re-check · " if counts["recheck"] else "",
                (str(counts["unlabeled"]), "bold"),
                " unlabeled",
                stopped_text(self.gp.session.stopped(), self._tagged()),
                since_text(baseline.name if baseline else None, n_snapshots),
                holes_text(means, counts["scored"]),
            )
        )
        from engine.scoring import LATENCY_HEADERS

        latency = {r: live.latency[r].cells() for r in live.retrievers if r in live.latency}
        room = self.size.width or self.app.size.width
        narrow = room < NARROW_WIDTH
        shown = NARROW_METRICS if narrow else REVIEW_METRICS
        grid = scores_grid(
            {r: means[r] for r in live.retrievers}, shown, latency, LATENCY_HEADERS, narrow
        )
        verdicts = self._judge_changes(baseline)
        for r, row in zip(live.retrievers, grid.rows, strict=True):
            now = means[r]
            for j, m in enumerate(shown, start=1):
                diff = changes.get(r, {}).get(m)
                if diff is not None and now is not None:  # the change, beside the value
                    verdict = verdicts.get((r, m))
                    row[j] = metric_cell(now[m], diff, str(row[j].style), verdict)
        metrics = self.query_one("#metrics", DataTable)
        self._fitted_width = room
        labels, metrics.cell_padding, metrics.header_height = fitted(
            grid.headers(), grid.rows, self._fitted_width, METRICS_PADDING
        )
        fill(metrics, labels, grid.rows, live.retrievers)
        self._refresh_grid(baseline)
        if self.panel != "scores":
            self.refresh_panel()

    def _changes(
        self, baseline: Baseline, means: dict[str, dict[str, float] | None]
    ) -> dict[str, dict[str, float]]:
        """Per retriever and metric, now minus then, over the same questions on both sides.

        Those compared with the snapshot: scored both then and now (with the tag). A
        retriever without means now (it has not ranked some of them) has no change.
        """
        live = self.gp.session.live
        if not live.retrievers:
            return {}
        scored = live.values(live.retrievers[0], REVIEW_METRICS[0], self.tag)[0]
        # ``means`` is over every question scored now: when all of them are compared (no
        # question added since the snapshot), they are the means over those compared
        now_over: dict[tuple[str, ...], dict[str, dict[str, float] | None]] = {tuple(scored): means}
        out: dict[str, dict[str, float]] = {}
        for r in live.retrievers:
            since = baseline.since(r, scored)
            if since is None:
                continue
            if since.compared not in now_over:  # the retrievers usually share their questions
                now_over[since.compared] = live.means_for(since.compared)
            now = now_over[since.compared][r]
            if now is not None:
                out[r] = {m: now[m] - then for m, then in since.then.items() if m in now}
        return out

    def _judge_changes(self, baseline: Baseline | None) -> Verdicts:
        """The verdicts known for the changes since ``baseline``; start them when new."""
        if baseline is None:
            return {}
        key = (self._token(), baseline.name, self.tag)
        if key != self._verdicts_key:
            self._verdicts_key, self._verdicts = key, None
            live = self.gp.session.live
            now: ChangesNow = {}
            for r in live.retrievers:
                if live.lacks(r, self.tag):  # no means, so no change to judge (never NaN)
                    continue
                values = {m: live.values(r, m, self.tag) for m in REVIEW_METRICS}
                ids = next(iter(values.values()))[0]
                now[r] = (ids, {m: v for m, (_, v) in values.items()})
            self._judge(key, baseline.data, now)
        return self._verdicts or {}

    @work(thread=True, exclusive=True, group="since-verdicts", exit_on_error=False)
    def _judge(self, key: Hashable, data: Mapping[str, Any], now: ChangesNow) -> None:
        try:
            verdicts = judge_changes(data, now)
        except Exception as exc:  # shown on the UI thread, never lost (a bug: logged)
            notice = f"The verdicts since the snapshot failed: {failure_notice(exc)}"
            self.app.call_from_thread(self.notify, notice, severity="error", markup=False)
            return
        self.post_message(ChangesJudged(key, verdicts))

    @on(ChangesJudged)
    def _judged(self, message: ChangesJudged) -> None:
        if message.key == self._verdicts_key:
            self._verdicts = message.verdicts
            self.refresh_scores()

    def _refresh_grid(self, baseline: Baseline | None = None) -> None:
        live = self.gp.session.live
        grid = self.query_one("#grid", DataTable)
        keep = cursor_key(grid)
        shown = live.rows(self.tag)
        fill(
            grid,
            ["question", *(literal(r.removeprefix("bm25-")) for r in live.retrievers)],
            [
                [
                    literal(row.question_id),
                    *(
                        rank_cell(row.ranks[r], ranked=False)
                        if r in row.not_ranked
                        else marked_rank(
                            rank_cell(row.ranks[r]),
                            row.ranks[r],
                            baseline.rank(r, row.question_id) if baseline else None,
                        )
                        for r in live.retrievers
                    ),
                ]
                for row in shown
            ],
            [row.question_id for row in shown],
            column_keys=["question", *live.retrievers],
        )
        self.place_cursor(grid, self.state.current_question, keep)
        self._show_detail()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Follow the grid's cursor (and the failures panel's: its question is current)."""
        if event.data_table.id == "grid":
            self.cursor_moved(event.data_table)
            self._show_detail()
        elif event.data_table.id == "failures" and event.data_table.has_focus:
            self.cursor_moved(event.data_table)

    def selected_question(self) -> str | None:
        """The question under the grid's cursor."""
        return cursor_key(self.query_one("#grid", DataTable))

    def _show_detail(self) -> None:
        detail = self.query_one("#detail", Static)
        qid = self.selected_question()
        if qid is None:
            detail.update(Text(NO_SCORED, style="dim"))
            return
        from engine.metrics import first_gold_rank

        session = self.gp.session
        live = session.live
        q = session.question(qid)
        gold = live.golds[qid]
        out = Text.assemble((visible(qid), "bold"), "  ")
        out.append_text(literal(q.text if q else ""))
        out.append("\n\ngold: ", style="dim")
        out.append_text(literal(", ".join(f"{d} ({g})" for d, g in gold.gold.items())))
        out.append("\n")
        waiting = live.not_ranked.get(qid, frozenset())
        for r in live.retrievers:
            ranking = live.rankings[r].get(qid, ())
            first = first_gold_rank(ranking, gold.gold)
            out.append("\n")
            out.append_text(literal(r, style="bold"))
            out.append("  ")
            if r in waiting:  # "yet" when it will rank it; else it cannot rank now
                out.append(NOT_RANKED + (" yet" if r in live.holding else ""), "italic yellow")
                continue
            out.append_text(rank_cell(first))
            if first != 1 and ranking:
                top = ranking[0]
                doc = session.doc(top)
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
        """Enter on the grid, or on a failure: judge that question."""
        event.stop()
        table = event.data_table
        if table.id == "failures":
            qid = cursor_key(table)
            if qid is not None:
                self.gp.judge(qid, [str(k.value) for k in table.rows])
            return
        self.action_judge()
