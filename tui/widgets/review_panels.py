"""The review screen's analysis panels: one widget each, the slow work in thread workers.

What they share (the request, the typed messages, the worker and the caching of what is
shown) is :mod:`tui.widgets.analysis_panel`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from tui.crash import failure_notice
from tui.literal import literal, visible
from tui.render import (
    Grid,
    comparison_text,
    contributions_grid,
    doc_cell,
    failures_grid,
    histogram_text,
    sweep_grid,
)
from tui.widgets.analysis_panel import AnalysisPanel, PanelFailed, PanelReady, PanelRequest
from tui.widgets.tables import cut
from tui.widgets.tables import fill as fill_table

if TYPE_CHECKING:
    from engine.analysis.analyses import Contribution, Failure, QuestionOverlap, SweepCell
    from engine.analysis.compare import Comparison, FloatArray
    from engine.analysis.noanswer import Calibration
    from engine.workspace import Workspace

COMPARE_METRICS = ("mrr", "hit@1", "hit@5", "ndcg@10")
NO_SCORED = "No scored question yet: label some in the judge screen (l)."
NO_FAILURE = "Every scored question has its gold at rank 1."
"""What a panel over the scored questions shows when there is none (not means of 0)."""
HEADERS = {"hit@1": "Hit@1", "mrr": "MRR"}
TAG_HEADER = 7
"""The by-tag panel cuts a tag's name to this many cells over its columns (its title and
note name it whole): eight columns of two tags and the overlap groups fit 80 columns."""
FAILURE_TITLE_WIDTH = 16
"""The failures panel's table cuts titles to this many cells (the line under it and the
CLI show them whole)."""


def fill(table: DataTable[object], grid: Grid, keys: list[str] | None = None) -> None:
    """Replace a DataTable's columns and rows with a grid's (``keys``: the rows' keys).

    Each column is as wide as its widest cell from the start (:func:`tui.widgets.tables.fill`):
    measured on the table's own idle instead, a frame drawn before it (a busy processor)
    could leave every column drawn as wide as its header.
    """
    fill_table(table, grid.headers(), grid.rows, keys)


def _open(path: Path) -> Workspace:
    from engine.workspace import Workspace

    return Workspace.open(path, readonly=True)


class ComparePanel(AnalysisPanel):
    """A vs B per metric: bootstrap interval, randomization p-value, questions won."""

    TITLE = "compare {a} vs {b}"

    @dataclass
    class Ready(PanelReady):
        """Comparisons per metric, MRR wins per retriever, and the power line.

        Or why there is nothing to compare: a retriever has not ranked some scored
        question and cannot rank it now.
        """

        result: tuple[list[Comparison], dict[str, list[str]], str] | str

    def __init__(self, *, id: str, values: ValuesSource) -> None:  # noqa: A002
        """``values`` gives per-question metric values from the live scores."""
        super().__init__(id=id)
        self.values = values

    def compose(self) -> ComposeResult:
        """The comparison text, scrollable."""
        with VerticalScroll():
            yield Static(id="compare-body")

    def start(self, key: Hashable, request: PanelRequest) -> None:
        """Read the live per-question values here; resample in the worker."""
        if request.a == request.b:  # one retriever: nothing to compare it with
            self.post_message(self.Ready(key, ([], {request.a: []}, "")))
            return
        import numpy as np

        values = {m: self.values(request.a, request.b, m, request.tag) for m in COMPARE_METRICS}
        _, va, vb = values["mrr"]
        lacking = [  # NaN: a question it has not ranked and cannot rank now
            f"{r} has not ranked {n} of the scored questions"
            for r, v in ((request.a, va), (request.b, vb))
            if (n := int(np.isnan(v).sum()))
        ]
        if lacking:
            self.post_message(self.Ready(key, "; ".join(lacking) + ": nothing to compare yet"))
            return
        self._compare(key, request, values)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _compare(
        self,
        key: Hashable,
        request: PanelRequest,
        values: dict[str, tuple[list[str], FloatArray, FloatArray]],
    ) -> None:
        from engine.analysis.compare import compare, question_wins
        from engine.analysis.power import power_of, power_sentence

        a, b = request.a, request.b
        try:
            results = [compare(a, b, m, va, vb) for m, (_, va, vb) in values.items()]
            ids, va, vb = values["mrr"]
            a_wins, b_wins = question_wins(ids, va, vb)
            power = power_sentence(power_of(a, b, "mrr", va, vb))
        except Exception as exc:  # shown on the UI thread, never lost (a bug: logged)
            self.post_message(PanelFailed(key, failure_notice(exc)))
            return
        self.post_message(self.Ready(key, (results, {a: a_wins, b: b_wins}, power)))

    def waiting(self, request: PanelRequest) -> None:
        """Resampling takes a moment on many questions."""
        self.query_one("#compare-body", Static).update(Text("Resampling…", style="dim"))

    def draw(self, result: object) -> None:
        """The comparison table and the wins."""
        body = self.query_one("#compare-body", Static)
        if isinstance(result, str):
            body.update(literal(result, style="dim"))
            return
        results, wins, power = cast("tuple[list[Comparison], dict[str, list[str]], str]", result)
        if len(wins) < 2:
            body.update(
                Text("Comparing needs two retrievers; this workspace has one.", style="dim")
            )
            return
        if results and results[0].n == 0:  # means, intervals and p-values of no question
            body.update(Text(NO_SCORED, style="dim"))
            return
        from engine.analysis.compare import DEFAULT_SAMPLES  # loaded by the worker already

        a, b = list(wins)
        text = comparison_text(a, b, results, wins, samples=DEFAULT_SAMPLES, seed=0)
        text.append("\n\npower (MRR, 80%, two-sided 5%): ", style="bold")
        text.append(power)
        body.update(text)


def tag_pair(tags: list[str], first: str | None, second: str | None) -> tuple[str, str] | None:
    """The two tags the by-tag panel compares (None: the workspace has no tag).

    Those chosen, else ``easy`` and ``hard`` when the workspace has both, else its first
    two (one tag: it alone).
    """
    if not tags:
        return None
    if first in tags and second in tags:
        return first, second
    default = ("easy", "hard") if {"easy", "hard"} <= set(tags) else (tags[0], tags[1 % len(tags)])
    return (
        first if first in tags else default[0],
        second if second in tags else default[1],
    )


class TagsPanel(AnalysisPanel):
    """Scores on two tags of the workspace and on high vs low title overlap, side by side."""

    TITLE = "by tag {tags}, and title overlap"
    HINT = "1/2 tags"

    @dataclass
    class Ready(PanelReady):
        """Every question's title overlap."""

        result: list[QuestionOverlap]

    def __init__(self, *, id: str, means: MeansSource) -> None:  # noqa: A002
        """``means`` gives the live means per retriever of each group (two tags, overlap)."""
        super().__init__(id=id)
        self.means = means
        self.overlaps: list[QuestionOverlap] | None = None
        """The overlaps last drawn (the tags chosen redraw from them, computing nothing)."""

    def key(self, request: PanelRequest) -> Hashable:
        """Every retriever is shown; A, B and the tag do not matter."""
        return request.token

    def compose(self) -> ComposeResult:
        """Table and note."""
        yield DataTable(
            id="tags-table",
            cursor_type="none",
            show_cursor=False,
            header_height=2,  # the group (a tag may be long) above the metric
        )
        yield Static(id="tags-note")

    def analyse(self, request: PanelRequest) -> object:
        """Title overlap of every question (reads every title)."""
        from engine.analysis.analyses import question_overlaps

        ws = _open(request.path)
        try:
            return question_overlaps(ws)
        finally:
            ws.close()

    def ready(self, key: Hashable, result: object) -> PanelReady:
        """Typed."""
        return self.Ready(key, result)  # type: ignore[arg-type]

    def redraw(self) -> None:
        """Draw again for other tags (the overlaps are the same)."""
        if self.overlaps is not None:
            self.draw(self.overlaps)

    def draw(self, result: object) -> None:
        """Hit@1 and MRR per group; ``-`` where the group has no scored question."""
        self.overlaps = cast("list[QuestionOverlap]", result)
        high = [o.question_id for o in self.overlaps if o.high]
        low = [o.question_id for o in self.overlaps if not o.high]
        groups, retrievers = self.means(high, low)
        labels: list[str | Text] = ["retriever"]
        for name, _, _ in groups:
            for m in ("hit@1", "mrr"):
                head = cut(name, TAG_HEADER)  # whole in the panel's title and the note
                head.append(f"\n{HEADERS[m]}")
                head.justify = "right"
                labels.append(head)
        rows = []
        for r in retrievers:
            cells: list[str | Text] = [literal(r)]
            for _, means, scored in groups:
                values = means[r]  # None: it has not ranked every scored question there
                for m in ("hit@1", "mrr"):
                    shown = f"{values[m]:.3f}" if scored and values is not None else "-"
                    cells.append(Text(shown, justify="right"))
            rows.append(cells)
        fill_table(self.query_one("#tags-table", DataTable), labels, rows)
        note = Text("scored questions: ", style="dim")
        for i, (name, _, scored) in enumerate(groups):
            note.append(", " if i else "")
            note.append_text(literal(name))
            note.append(f" {scored}")
        if len(groups) == 2:
            note.append(
                ". No question has a tag yet: tag questions on Write (easy, hard, paraphrase, "
                "...) to compare them here"
            )
        from engine.analysis.overlap import EASY_THRESHOLD  # loaded by analyse, in the worker

        note.append(
            f". hi-ov: {EASY_THRESHOLD:.0%} or more of the question's words in one title; "
            "lo-ov: less. An easy test hides differences: read the columns, not only the "
            "totals."
        )
        self.query_one("#tags-note", Static).update(note)


class FailuresPanel(AnalysisPanel):
    """Where A misses rank 1, the document that won and how it relates to the gold."""

    TITLE = "failures of {a}"

    @dataclass
    class Ready(PanelReady):
        """A's failures (with both titles) and how many questions are scored.

        Or why they are unknown: A has not ranked some scored question and cannot rank it.
        """

        result: tuple[list[Failure], int] | str

    def __init__(self, *, id: str) -> None:  # noqa: A002 - Textual's own keyword
        """A panel with this DOM id."""
        super().__init__(id=id)
        self.failures: list[Failure] = []
        """The failures drawn (the line under the table shows the selected one's)."""
        self.scored = 0
        """How many questions they are of."""

    def key(self, request: PanelRequest) -> Hashable:
        """B does not matter."""
        return (request.token, request.a, request.tag)

    def compose(self) -> ComposeResult:
        """The table and the selected failure's documents; a note when they are unknown."""
        note = Static(id="failures-note")
        note.display = False
        yield note
        yield DataTable(id="failures", cursor_type="row", zebra_stripes=True)
        yield Static(id="failure-detail")

    def analyse(self, request: PanelRequest) -> object:
        """Failures of A (reads every scored question's cached ranking)."""
        from engine.analysis.analyses import failures
        from engine.scoring import NotScored, scored_set

        ws = _open(request.path)
        try:
            try:
                rows = failures(ws, request.a, tag=request.tag)
            except NotScored as exc:  # never an empty table: that would read as none
                return str(exc)
            return rows, len(scored_set(ws, [request.a], request.tag).question_ids)
        finally:
            ws.close()

    def ready(self, key: Hashable, result: object) -> PanelReady:
        """Typed."""
        return self.Ready(key, result)  # type: ignore[arg-type]

    def draw(self, result: object) -> None:
        """The failures table (titles cut to one line)."""
        note = self.query_one("#failures-note", Static)
        note.display = isinstance(result, str)
        if isinstance(result, str):
            self.failures, self.scored = [], 0
            fill(self.query_one("#failures", DataTable), failures_grid([], FAILURE_TITLE_WIDTH))
            self.query_one("#failure-detail", Static).update("")
            note.update(literal(result, style="dim"))
            return
        self.failures, self.scored = cast("tuple[list[Failure], int]", result)
        table = self.query_one("#failures", DataTable)
        keys = [f.question_id for f in self.failures]
        fill(table, failures_grid(self.failures, FAILURE_TITLE_WIDTH), keys)
        self._detail(table.cursor_row)

    @on(DataTable.RowHighlighted, "#failures")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)

    def _detail(self, row: int) -> None:
        """The failure on ``row``: the gold and the winner with their whole titles."""
        detail = self.query_one("#failure-detail", Static)
        if not 0 <= row < len(self.failures):
            detail.update(Text(NO_FAILURE if self.scored else NO_SCORED, style="dim"))
            return
        f = self.failures[row]
        out = Text.assemble((visible(f.question_id), "bold"), ("  gold: ", "dim"))
        out.append_text(doc_cell(f.gold_doc, f.gold_title))
        out.append(f" (rank {f.gold_rank or '-'})  ", style="dim")
        out.append("rank 1: ", style="dim")
        out.append_text(doc_cell(f.top_doc, f.top_title))
        detail.update(out)


class NoAnswerPanel(AnalysisPanel):
    """A's top-1 scores of answerable vs no-answer questions, and the best threshold."""

    TITLE = "no-answer calibration of {a}"

    @dataclass
    class Ready(PanelReady):
        """A's calibration."""

        result: Calibration

    def key(self, request: PanelRequest) -> Hashable:
        """Only A matters (calibration uses every answerable and no-answer question)."""
        return (request.token, request.a)

    def compose(self) -> ComposeResult:
        """The histogram, scrollable."""
        with VerticalScroll():
            yield Static(id="noanswer-body")

    def analyse(self, request: PanelRequest) -> object:
        """Calibrate A's top-1 scores."""
        from engine.analysis.analyses import noanswer_calibration

        ws = _open(request.path)
        try:
            return noanswer_calibration(ws, request.a)
        finally:
            ws.close()

    def ready(self, key: Hashable, result: object) -> PanelReady:
        """Typed."""
        return self.Ready(key, result)  # type: ignore[arg-type]

    def draw(self, result: object) -> None:
        """The histogram."""
        calibration = cast("Calibration", result)
        self.query_one("#noanswer-body", Static).update(histogram_text(calibration))


class SweepPanel(AnalysisPanel):
    """A's MRR over a k1 x b grid (a check, not a tuning knob)."""

    TITLE = "k1 x b sweep of {a}"

    @dataclass
    class Ready(PanelReady):
        """The grid's cells and A's own parameters (None: A is not BM25)."""

        result: tuple[str, list[SweepCell], tuple[float, float] | None]

    def key(self, request: PanelRequest) -> Hashable:
        """B does not matter."""
        return (request.token, request.a, request.tag)

    def compose(self) -> ComposeResult:
        """Note above the heat table."""
        yield Static(id="sweep-note")
        yield DataTable(id="sweep-table", cursor_type="none", show_cursor=False)

    def waiting(self, request: PanelRequest) -> None:
        """Ranking every cell takes a while."""
        self.query_one("#sweep-note", Static).update(
            Text("Ranking the scored questions for every cell…", style="dim")
        )

    def analyse(self, request: PanelRequest) -> object:
        """Rank the scored questions with A for every (k1, b)."""
        from engine.analysis.analyses import SWEEP_B, SWEEP_K1, sweep
        from engine.gold import question_counts

        ws = _open(request.path)
        try:
            spec = ws.retriever(request.a)
            if spec is None or spec.kind != "bm25":
                return request.a, [], None
            own = (float(spec.params.get("k1", 1.5)), float(spec.params.get("b", 0.75)))
            if not question_counts(ws, request.tag)["scored"]:
                return request.a, [], own  # a grid of 0.000 over no question
            cells = sweep(ws, request.a, SWEEP_K1, SWEEP_B, "mrr", tag=request.tag)
            return request.a, cells, own
        finally:
            ws.close()

    def ready(self, key: Hashable, result: object) -> PanelReady:
        """Typed."""
        return self.Ready(key, result)  # type: ignore[arg-type]

    def draw(self, result: object) -> None:
        """The heat table, or why there is none."""
        name, cells, own = cast("tuple[str, list[SweepCell], tuple[float, float] | None]", result)
        table = self.query_one("#sweep-table", DataTable)
        note = self.query_one("#sweep-note", Static)
        if own is None:
            table.clear(columns=True)
            note.update(literal(f"{name} has no k1 and b to sweep.", style="dim"))
            return
        if not cells:
            table.clear(columns=True)
            note.update(Text(NO_SCORED, style="dim"))
            return
        from engine.analysis.analyses import SWEEP_B, SWEEP_K1  # loaded by analyse, in the worker

        fill(table, sweep_grid(cells, SWEEP_K1, SWEEP_B, own))
        note.update(
            literal(
                f"MRR of {name} over k1 x b (* = its own parameters, equal to the scores "
                "above). Choosing the best cell on a few questions overfits: this grid is a "
                "check, not a tuning knob.",
                style="dim",
            )
        )


class PoolPanel(AnalysisPanel):
    """What each retriever alone put in the pool (top 10), and how much of it is gold."""

    TITLE = "what each retriever alone put in the pool (top 10)"

    @dataclass
    class Ready(PanelReady):
        """Per retriever: what only it found, with example titles."""

        result: tuple[Mapping[str, Contribution | None], dict[str, str]]

    def key(self, request: PanelRequest) -> Hashable:
        """Every retriever is shown; only the workspace matters."""
        return request.token

    def compose(self) -> ComposeResult:
        """One table."""
        yield DataTable(id="pool", cursor_type="row", zebra_stripes=True)

    def analyse(self, request: PanelRequest) -> object:
        """Pool every question and attribute each pooled document."""
        from engine.analysis.analyses import pool_contributions

        ws = _open(request.path)
        try:
            contributions = pool_contributions(ws)
            titles = {}
            for c in contributions.values():
                for _, doc_id in c.only[:2] if c else ():
                    doc = ws.doc(doc_id)
                    titles[doc_id] = doc.title if doc and doc.title else doc_id
        finally:
            ws.close()
        return contributions, titles

    def ready(self, key: Hashable, result: object) -> PanelReady:
        """Typed."""
        return self.Ready(key, result)  # type: ignore[arg-type]

    def draw(self, result: object) -> None:
        """The contributions table."""
        from engine.types import Doc

        contributions, titles = cast(
            "tuple[Mapping[str, Contribution | None], dict[str, str]]", result
        )

        def doc(doc_id: str) -> Doc | None:
            return Doc(doc_id, titles.get(doc_id, doc_id), "")

        fill(self.query_one("#pool", DataTable), contributions_grid(contributions, doc))


if TYPE_CHECKING:
    from collections.abc import Callable

    ValuesSource = Callable[[str, str, str, str | None], tuple[list[str], FloatArray, FloatArray]]
    """(a, b, metric, tag) -> question ids and A's and B's per-question values."""
    MeansSource = Callable[
        [list[str], list[str]],
        tuple[list[tuple[str, dict[str, dict[str, float] | None], int]], list[str]],
    ]
    """(high-overlap ids, low-overlap ids) -> each group's name, means per retriever and
    scored questions (the two tags compared, then hi-ov and lo-ov), and the retrievers."""
