"""``goldpan import querylog``: questions from real users' queries."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table
from rich.text import Text

from tui.cli.commands.common import open_workspace, out, print_json
from tui.literal import literal


def cmd_import_querylog(args: argparse.Namespace) -> None:
    """Read a query log; sample questions from it, or store it for the write screen."""
    from engine.querylog import DEFAULT_SIMILARITY, band_summary, import_querylog

    # --similarity, --sample and --min-count are checked as they are parsed (tui.cli.values)
    similarity = DEFAULT_SIMILARITY if args.similarity is None else args.similarity
    with open_workspace(args.workspace) as ws:
        report = import_querylog(
            ws,
            Path(args.path),
            sample=args.sample,
            seed=args.seed,
            min_count=args.min_count,
            similarity=similarity,
            fmt=args.format,
        )
    if args.json:
        print_json(report.to_json())
        return
    g = report.grouping
    out.print(
        literal(
            f"read {report.source}: {g.lines} lines, {g.queries} queries, {g.distinct} distinct "
            f"after normalization, {len(g.groups) + len(g.existing)} groups with "
            f"near-duplicates (3-gram Jaccard >= {report.similarity:g})"
        )
    )
    bands = band_summary(g.groups + [x for x, _ in g.existing])
    table = Table(title="frequency bands (groups by count, cumulative share of traffic)")
    for col in ("band", "cut", "groups", "traffic", "counts"):
        table.add_column(col, justify="left" if col == "band" else "right")
    for name, b in bands.items():
        lo, hi = b["cut"]
        table.add_row(
            name,
            f"{lo:.0%}-{hi:.0%}",
            str(b["groups"]),
            f"{b['traffic']:.0%}",
            f"{b['min_count']}-{b['max_count']}" if b["groups"] else "-",
        )
    out.print(table)
    near = [x for x in g.groups if x.near]
    if near:
        t = Table(title=f"near-duplicates grouped ({len(near)} groups)", title_justify="left")
        t.add_column("kept as")
        t.add_column("count", justify="right")
        t.add_column("merged (similarity)")
        for x in near[:20]:
            t.add_row(
                literal(x.text),
                str(x.count),
                literal("; ".join(f"{txt} ({s:.2f})" for txt, s in x.near)),
            )
        out.print(t)
        if len(near) > 20:
            out.print(Text(f"... and {len(near) - 20} more (--json lists all)", style="dim"))
    if g.existing:
        out.print(
            literal(
                f"left out {len(g.existing)} near-duplicate(s) of existing questions: "
                + "; ".join(f"{x.text} ~ {q}" for x, q in g.existing[:5])
                + (" ..." if len(g.existing) > 5 else "")
            )
        )
    dropped = len(g.groups) - len(report.kept)
    if dropped:
        out.print(literal(f"skipped {dropped} group(s) seen fewer than {report.min_count} times"))
    if report.stored is not None:
        added, merged = report.stored
        out.print(
            literal(
                f"stored {added} new queries in the workspace's log ({merged} already there: "
                "counts added); open the write screen and press ctrl+n for the next one"
            )
        )
    else:
        by_band = {b: sum(1 for x, _ in report.sampled if x.band == b) for b in bands}
        out.print(
            literal(
                f"sampled {len(report.sampled)} questions (seed {report.seed}): "
                + ", ".join(f"{b} {n}" for b, n in by_band.items())
                + "; tagged from-log and their band"
            )
        )
