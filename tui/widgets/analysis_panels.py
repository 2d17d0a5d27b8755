"""Renderers for the review screen's analysis panels (plain data in, Rich text out)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rich.text import Text

from engine.analysis import Contribution, Failure, SweepCell
from engine.compare import Comparison
from engine.noanswer import Calibration
from engine.types import Doc
from tui.literal import literal, one_line, visible

BAR = "█"


def comparison_text(
    a: str, b: str, results: Sequence[Comparison], wins: Mapping[str, list[str]]
) -> Text:
    """A vs B on several metrics, and the questions each one wins."""
    out = Text.assemble(
        ("A ", "dim"), (visible(a), "bold"), ("  vs  B ", "dim"), (visible(b), "bold"), "\n\n"
    )
    out.append(
        f"{'metric':<9}{'A':>8}{'B':>8}{'A-B':>9}   {'95% interval':<19}{'W/T/L':>11}{'p':>8}\n",
        style="bold",
    )
    for c in results:
        lo, hi = c.ci95
        sure = lo > 0 or hi < 0
        out.append(f"{c.metric:<9}{c.mean_a:>8.3f}{c.mean_b:>8.3f}")
        out.append(f"{c.diff:>+9.3f}", style="bold green" if sure else "")
        out.append(f"   [{lo:+.3f}, {hi:+.3f}]  ")
        out.append(f"{f'{c.wins}/{c.ties}/{c.losses}':>11}{c.p_value:>8.3f}\n")
    n = results[0].n if results else 0
    out.append(
        f"\n{n} scored questions; 10,000 paired bootstrap resamples (seed 0). "
        "A difference whose interval includes 0 is not reliable.\n",
        style="dim",
    )
    for name in (a, b):
        qs = wins.get(name, [])
        out.append("\n")
        out.append_text(literal(name, style="bold"))
        out.append(f" wins on MRR ({len(qs)}): ", style="dim")
        out.append_text(literal(", ".join(qs) if qs else "-"))
    return out


def failure_rows(failures: Sequence[Failure], titles: Mapping[str, str]) -> list[list[Text]]:
    """Rows of the failures table: question, gold rank, rank-1 doc, its title, relation."""
    style = {"overview": "magenta", "neighbour": "yellow", "other": ""}
    return [
        [
            literal(f.question_id),
            Text(str(f.gold_rank) if f.gold_rank else "-", justify="right"),
            literal(f.top_doc or "-"),
            one_line(titles.get(f.top_doc or "", ""), 40),
            Text(f.relation, style=style[f.relation]),
        ]
        for f in failures
    ]


def histogram_text(cal: Calibration, bins: int = 12, width: int = 30) -> Text:
    """Top-1 scores of answerable vs no-answer questions as side-by-side bars per bin."""
    out = Text.assemble(("no-answer calibration: ", "bold"), literal(cal.retriever, "bold"), "\n")
    out.append(
        f"{len(cal.answerable)} answerable (green), {len(cal.no_answer)} no-answer "
        "(cyan): top-1 score\n\n",
        style="dim",
    )
    values = cal.answerable + cal.no_answer
    if not cal.answerable or not cal.no_answer:
        out.append("Needs both answerable and no-answer questions to calibrate.")
        return out
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
    best = cal.best
    assert best is not None
    out.append(
        f"\nbest threshold {best.threshold:.3f}: rejects {best.answerable_rejected} of "
        f"{len(cal.answerable)} answerable, catches {best.no_answer_caught} of "
        f"{len(cal.no_answer)} no-answer (balanced accuracy {best.balanced_accuracy:.3f})\n"
    )
    if not cal.usable:
        out.append(
            "The two distributions overlap so much that no threshold separates them.",
            style="bold yellow",
        )
    return out


def heat_style(value: float, lo: float, hi: float) -> str:
    """A background from red (worst cell) to green (best cell)."""
    span = hi - lo
    x = 0.5 if span <= 0 else (value - lo) / span
    palette = ["#7f1d1d", "#9a3412", "#a16207", "#4d7c0f", "#166534"]
    return f"on {palette[min(int(x * len(palette)), len(palette) - 1)]}"


def sweep_rows(
    cells: Sequence[SweepCell], k1s: Sequence[float], bs: Sequence[float], own: tuple[float, float]
) -> list[list[Text]]:
    """Rows of the heat table: one per k1, one cell per b; ``*`` marks own parameters."""
    values = [c.value for c in cells]
    lo, hi = min(values, default=0.0), max(values, default=0.0)
    by = {(c.k1, c.b): c.value for c in cells}
    rows = []
    for k1 in k1s:
        row = [Text(f"{k1:g}", style="bold")]
        for b in bs:
            v = by[(k1, b)]
            mark = "*" if (k1, b) == own else " "
            row.append(Text(f" {v:.3f}{mark}", style=heat_style(v, lo, hi), justify="right"))
        rows.append(row)
    return rows


def contribution_rows(
    contributions: Mapping[str, Contribution | None],
    doc: Callable[[str], Doc | None],
    examples: int = 2,
) -> list[list[Text]]:
    """Rows of the pool panel: per retriever, what only it found and a few examples."""
    rows = []
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
    return rows
