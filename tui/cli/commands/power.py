"""``goldpan power``: how many questions are enough to tell two retrievers apart."""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from engine.metrics import parse_metric
from engine.retrieve import DEFAULT_DEPTH
from tui.cli.commands.common import (
    check_retrievers,
    check_tag,
    open_workspace,
    out,
    pool_stale,
    print_json,
)
from tui.literal import literal


def cmd_power(args: argparse.Namespace) -> None:
    """Minimum detectable difference and questions needed for A vs B."""
    from engine.analysis.power import power_sentence, workspace_power

    metric = parse_metric(args.metric).name
    with open_workspace(args.workspace) as ws:
        check_retrievers(ws, [args.a, args.b], "power")
        check_tag(ws, args.tag)
        report = pool_stale(ws, [args.a, args.b], DEFAULT_DEPTH, quiet=args.json)
        p = workspace_power(
            ws,
            args.a,
            args.b,
            metric,
            tag=args.tag,
            cannot_rank=report.cannot_rank() if report else (),
        )
    if args.json:
        print_json(p.to_json())
        return
    table = Table(
        title=literal(f"{args.a} vs {args.b} on {metric}: power (80%, two-sided 5%)"),
        title_justify="left",
        show_header=False,
    )
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("questions", str(p.n))
    table.add_row("difference (A - B)", f"{p.diff:+.4f}")
    table.add_row("sd of the differences", f"{p.sd:.4f}")
    table.add_row("questions that differ", f"{p.discordant} (a test needs {p.least_discordant})")
    table.add_row("minimum detectable difference", "-" if p.mde is None else f"{p.mde:.4f}")
    table.add_row(
        "questions needed for the difference", "-" if p.n_needed is None else str(p.n_needed)
    )
    out.print(table)
    out.print(Text(power_sentence(p)))
