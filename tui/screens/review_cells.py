"""The review screen's cells and lines: a gold rank coloured, the warning about holes."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from tui.literal import visible


def holes_text(means: Mapping[str, Mapping[str, float] | None], scored: int) -> Text:
    """The gate's warning about holes (:func:`engine.ci.holes.judged_warnings`), on a line.

    A retriever without means (it cannot rank some scored question now) has no scores to
    warn about.
    """
    from engine.ci.holes import HOLE_METRIC, judged_warnings

    warned = judged_warnings(
        {
            r: (m[HOLE_METRIC], scored)
            for r, m in means.items()
            if m is not None and HOLE_METRIC in m
        }
    )
    if not warned:
        return Text()
    figures = ", ".join(f"{w.retriever.removeprefix('bm25-')} {w.judged:.0%}" for w in warned)
    return Text.assemble(
        "\n",
        (f"Judged@10 under {warned[0].min_judged:.0%}: ", "bold yellow"),
        (visible(figures), "yellow"),
        (" · lower scores there are unknown, not worse", "dim"),
    )


NOT_RANKED = "not ranked"
"""A grid cell of a retriever that has not ranked the question yet (never a miss)."""


def rank_cell(rank: int, ranked: bool = True) -> Text:
    """A gold rank, coloured: 1 green, 2-3 yellow, 4-10 orange, deeper red, missed ``-``.

    Not ``ranked`` yet (:mod:`engine.ranked`): :data:`NOT_RANKED`, whatever ``rank`` is.
    """
    if not ranked:
        return Text(NOT_RANKED, style="italic yellow", justify="right")
    if rank == 0:
        return Text("-", style="bold red", justify="right")
    style = (
        "green" if rank == 1 else "yellow" if rank <= 3 else "dark_orange" if rank <= 10 else "red"
    )
    return Text(str(rank), style=style, justify="right")
