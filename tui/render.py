"""Renderers of the analyses, shared by the review panels and the ``goldpan`` commands.

Plain data in (the engine's results), Rich text out: a :class:`Grid` of cells that the
TUI puts in a ``DataTable`` and the CLI prints as a ``rich.table.Table``, or a ``Text``
block. Text from the workspace goes through :func:`tui.literal.literal` (never markup).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from rich.table import Table
from rich.text import Text

from engine.verdict import rule
from tui.literal import literal, one_line, visible

if TYPE_CHECKING:  # the analyses' modules load numpy and the retrievers: not at import
    from engine.analysis.analyses import Contribution, Failure, QuestionOverlap, SweepCell
    from engine.analysis.compare import Comparison
    from engine.analysis.noanswer import Calibration
    from engine.types import Doc

BAR = "█"


@dataclass(frozen=True)
class Column:
    """A column of a grid: its header and how its cells are justified."""

    header: str
    justify: Literal["left", "right"] = "left"
    no_wrap: bool = False
    """Never wrap the cells (numbers); the CLI's table keeps them whole."""


@dataclass
class Grid:
    """A table as plain cells: the same rows fill a DataTable and a printed table."""

    columns: list[Column]
    rows: list[list[Text]] = field(default_factory=list)

    def headers(self) -> list[Text]:
        """The column headers as Text (right-justified where the cells are)."""
        return [Text(c.header, justify=c.justify) for c in self.columns]

    def rich_table(self, title: str | Text | None = None, caption: str | None = None) -> Table:
        """The grid as a Rich table (the CLI prints it)."""
        table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
        for c in self.columns:
            table.add_column(c.header, justify=c.justify, no_wrap=c.no_wrap)
        for row in self.rows:
            table.add_row(*row)
        return table


def comparison_text(
    a: str,
    b: str,
    results: Sequence[Comparison],
    wins: Mapping[str, list[str]] | None = None,
    *,
    samples: int,
    seed: int,
) -> Text:
    """A vs B on several metrics with each one's verdict, and the questions each one wins.

    ``goldpan compare`` prints it and Review's compare panel shows it (with ``wins``).
    """
    out = Text.assemble(
        ("A ", "dim"), (visible(a), "bold"), ("  vs  B ", "dim"), (visible(b), "bold"), "\n\n"
    )
    w = max([7, *(len(c.metric) + 1 for c in results)])
    out.append(
        f"{'metric':<{w}}{'A':>7}{'B':>7}{'A-B':>8}  {'95% interval':<18}{'W/T/L':>8}"
        f"{'p':>7}  verdict\n",
        style="bold",
    )
    for c in results:
        lo, hi = c.ci95
        out.append(f"{c.metric:<{w}}{c.mean_a:>7.3f}{c.mean_b:>7.3f}")
        out.append(f"{c.diff:>+8.3f}", style="bold green" if c.verdict.real else "")
        out.append(f"  [{lo:+.3f}, {hi:+.3f}]  ")
        out.append(f"{f'{c.wins}/{c.ties}/{c.losses}':>8}{c.p_value:>7.3f}  ")
        out.append(c.verdict.short(), style=VERDICT_STYLE.get(c.verdict.status, ""))
        out.append("\n")
    n = results[0].n if results else 0
    out.append(
        f"\n{n} scored questions; {samples:,} paired bootstrap resamples and sign flips "
        f"(seed {seed}).\n",
        style="dim",
    )
    for c in results:
        out.append(f"{c.metric}: ", style="bold")
        out.append_text(literal(c.verdict.says(a, b)))
        out.append("\n")
    if results:
        out.append(f"The rule: {rule(results[0].verdict.level)}.\n", style="dim")
    if wins is not None:
        for name in (a, b):
            qs = wins.get(name, [])
            out.append("\n")
            out.append_text(literal(name, style="bold"))
            out.append(f" wins on MRR ({len(qs)}): ", style="dim")
            out.append_text(literal(", ".join(qs) if qs else "-"))
    return out


VERDICT_STYLE = {"real": "bold green", "tests_disagree": "yellow", "too_few_discordant": "dim"}
"""How a verdict's cell is drawn, by :attr:`engine.verdict.Verdict.status`."""


def metric_header(name: str) -> str:
    """A metric as a column header: ``hit@1`` -> ``Hit@1``, ``recall@5`` -> ``R@5``."""
    from engine.metrics import metric_label

    return metric_label(name)


def scores_grid(
    means: Mapping[str, Mapping[str, float] | None],
    metrics: Sequence[str],
    latency: Mapping[str, Sequence[float]],
    latency_headers: Sequence[str],
    compact: bool = False,
) -> Grid:
    """One row per retriever: means per metric, then its latency columns.

    The best value of each metric column is bold green. A retriever without means (it
    has not ranked some scored question: :mod:`engine.ranked`) has ``-`` in each.
    ``compact`` gives the latency three significant figures (``65.2``, ``158``), for a
    narrow terminal.
    """
    grid = Grid(
        [
            Column("retriever", no_wrap=True),
            *(Column(metric_header(m), "right", no_wrap=True) for m in metrics),
            *(Column(h, "right", no_wrap=True) for h in latency_headers),
        ]
    )
    real = [v for v in means.values() if v is not None]
    best = {m: max((v[m] for v in real), default=0.0) for m in metrics}
    for r, values in means.items():
        row = [literal(r)]
        for m in metrics:
            if values is None:
                row.append(Text("-", style="dim", justify="right"))
                continue
            v = values[m]
            style = "bold green" if v == best[m] and v > 0 else ""
            row.append(Text(f"{v:.3f}", style=style, justify="right"))
        lat = latency.get(r, ())
        speed = _speed_compact if compact else _speed
        row.extend(Text(speed(v), justify="right") for v in lat)
        grid.rows.append(row)
    return grid


def _speed(v: float) -> str:
    """A latency or throughput cell: two decimals, whole numbers from 1,000, - unmeasured."""
    if v != v:  # NaN: nothing was measured
        return "-"
    return f"{v:.2f}" if v < 1000 else f"{v:,.0f}"


def _speed_compact(v: float) -> str:
    """A latency or throughput cell in three significant figures (whole from 100), - unmeasured."""
    if v != v:
        return "-"
    return f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:,.0f}"


def doc_cell(doc_id: str | None, title: str, title_width: int | None = None) -> Text:
    """A document as its id (bold) and title.

    ``title_width`` cuts the title to one line of that many terminal cells (a Hangul
    syllable takes two).
    """
    if doc_id is None:
        return Text("-")
    out = Text.assemble((visible(doc_id), "bold"))
    if title:
        shown = literal(title)
        if title_width is not None:
            shown = one_line(title)
            shown.truncate(title_width, overflow="ellipsis")
        out.append(" ")
        out.append_text(shown)
    return out


RELATION_STYLE = {"overview": "magenta", "neighbour": "yellow", "other": ""}


def failures_grid(failures: Sequence[Failure], title_width: int | None = None) -> Grid:
    """Questions whose gold is not at rank 1: gold rank, how the winner relates, both titles.

    ``title_width`` cuts titles to one line of that many cells (None: whole titles).
    """
    grid = Grid(
        [
            Column("question"),
            Column("gold rank", "right"),
            Column("relation", no_wrap=True),
            Column("gold document"),
            Column("rank-1 document"),
        ]
    )
    for f in failures:
        grid.rows.append(
            [
                literal(f.question_id),
                Text(str(f.gold_rank) if f.gold_rank else "-", justify="right"),
                literal(f.detail, RELATION_STYLE[f.relation]),
                doc_cell(f.gold_doc, f.gold_title, title_width),
                doc_cell(f.top_doc, f.top_title, title_width),
            ]
        )
    return grid


def histogram_text(cal: Calibration, bins: int = 12, width: int = 30) -> Text:
    """Top-1 scores of answerable vs no-answer questions as side-by-side bars per bin."""
    out = Text.assemble(("no-answer calibration: ", "bold"), literal(cal.retriever, "bold"), "\n")
    out.append(
        f"{len(cal.answerable)} answerable (green), {len(cal.no_answer)} no-answer "
        "(cyan): top-1 score\n\n",
        style="dim",
    )
    if cal.answerable and cal.no_answer:
        _histogram(out, cal, bins, width)
    best = cal.best
    if best is not None:
        out.append(
            f"\nbest threshold {best.threshold:.3f}: rejects {best.answerable_rejected} of "
            f"{len(cal.answerable)} answerable, catches {best.no_answer_caught} of "
            f"{len(cal.no_answer)} no-answer (balanced accuracy {best.balanced_accuracy:.3f})\n"
        )
    warning = cal.warning()
    if warning is not None:
        out.append(f"\n{warning[0].upper()}{warning[1:]}.", style="bold yellow")
    return out


def _histogram(out: Text, cal: Calibration, bins: int, width: int) -> None:
    values = cal.answerable + cal.no_answer
    lo, hi = min(values), max(values)
    step = (hi - lo) / bins or 1.0
    counts_a = [0] * bins
    counts_n = [0] * bins
    for x in cal.answerable:
        counts_a[min(int((x - lo) / step), bins - 1)] += 1
    for x in cal.no_answer:
        counts_n[min(int((x - lo) / step), bins - 1)] += 1
    top = max(counts_a + counts_n) or 1
    for i in range(bins):
        edge = lo + i * step
        out.append(f"{edge:>8.2f} ", style="dim")
        out.append(BAR * round(counts_a[i] / top * width), style="green")
        out.append(f" {counts_a[i]}\n" if counts_a[i] else "\n")
        out.append(" " * 9)
        out.append(BAR * round(counts_n[i] / top * width), style="cyan")
        out.append(f" {counts_n[i]}\n" if counts_n[i] else "\n")


def heat_style(value: float, lo: float, hi: float) -> str:
    """A background from red (worst cell) to green (best cell)."""
    span = hi - lo
    x = 0.5 if span <= 0 else (value - lo) / span
    palette = ["#7f1d1d", "#9a3412", "#a16207", "#4d7c0f", "#166534"]
    return f"on {palette[min(int(x * len(palette)), len(palette) - 1)]}"


def sweep_grid(
    cells: Sequence[SweepCell],
    k1s: Sequence[float],
    bs: Sequence[float],
    own: tuple[float | None, float | None],
) -> Grid:
    """The heat table: one row per k1, one cell per b; ``*`` marks the own parameters."""
    values = [c.value for c in cells]
    lo, hi = min(values, default=0.0), max(values, default=0.0)
    by = {(c.k1, c.b): c.value for c in cells}
    grid = Grid([Column("k1 \\ b"), *(Column(f"b {b:g}", "right") for b in bs)])
    for k1 in k1s:
        row = [Text(f"{k1:g}", style="bold")]
        for b in bs:
            v = by[(k1, b)]
            mark = "*" if (k1, b) == own else " "
            row.append(Text(f" {v:.3f}{mark}", style=heat_style(v, lo, hi), justify="right"))
        grid.rows.append(row)
    return grid


def contributions_grid(
    contributions: Mapping[str, Contribution | None],
    doc: Callable[[str], Doc | None],
    examples: int = 2,
) -> Grid:
    """What each retriever alone put in the pool, how much of it is gold, a few examples."""
    grid = Grid(
        [
            Column("retriever"),
            Column("only it found", "right"),
            Column("of them gold", "right"),
            Column("for example"),
        ]
    )
    rows = grid.rows
    for name, c in contributions.items():
        if c is None:
            rows.append(
                [
                    literal(name),
                    Text("-", justify="right"),
                    Text("-", justify="right"),
                    Text("reads other rankings", "dim"),
                ]
            )
            continue
        shown = Text()
        for qid, doc_id in c.only[:examples]:
            d = doc(doc_id)
            if shown:
                shown.append("  ·  ", "dim")
            shown.append(f"{qid} ", "bold")
            shown.append_text(one_line(d.title if d and d.title else doc_id, 32))
        style = "bold green" if c.gold else ""
        rows.append(
            [
                literal(name),
                Text(str(len(c.only)), justify="right"),
                Text(str(c.gold), style=style, justify="right"),
                shown,
            ]
        )
    return grid


def threshold_grid(cal: Calibration) -> Grid:
    """Every candidate threshold on the top-1 score; the best one in bold green."""
    grid = Grid(
        [
            Column("threshold", "right"),
            Column("answerable rejected", "right"),
            Column("no-answer caught", "right"),
            Column("balanced accuracy", "right"),
        ]
    )
    for row in cal.table:
        style = "bold green" if row is cal.best else ""
        grid.rows.append(
            [
                Text(f"{row.threshold:.4f}"),
                Text(str(row.answerable_rejected)),
                Text(str(row.no_answer_caught)),
                Text(f"{row.balanced_accuracy:.3f}", style=style),
            ]
        )
    return grid


def overlap_grid(overlaps: Sequence[QuestionOverlap]) -> Grid:
    """Each question's overlap with the nearest title and with its gold text.

    ``likely easy`` says yes where the title overlap reaches
    :data:`engine.analysis.overlap.EASY_THRESHOLD`.
    """
    grid = Grid(
        [
            Column("question"),
            Column("nearest title", "right"),
            Column("gold text", "right"),
            Column("likely easy"),
        ]
    )
    for r in overlaps:
        grid.rows.append(
            [
                literal(r.question_id),
                Text(f"{r.title:.0%}"),
                Text("-" if r.gold is None else f"{r.gold:.0%}"),
                Text("yes", style="yellow") if r.high else Text("-", style="dim"),
            ]
        )
    return grid
