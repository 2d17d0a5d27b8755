"""``goldpan fidelity WS A B``: how alike two retrievers rank the same questions."""

from __future__ import annotations

import argparse

from rich.table import Table

from tui.cli.commands.common import (
    check_retrievers,
    check_tag,
    err,
    open_workspace,
    out,
    pool_stale,
    print_json,
)
from tui.literal import literal


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def cmd_fidelity(args: argparse.Namespace) -> None:
    """Top-1 agreement, rank correlation and tie share of A and B."""
    from engine.analysis.fidelity import fidelity
    from engine.retrieve import DEFAULT_DEPTH

    with open_workspace(args.workspace) as ws:
        check_retrievers(ws, [args.a, args.b], "fidelity")
        check_tag(ws, args.tag)
        depth = max(DEFAULT_DEPTH, args.k)
        pool_stale(ws, [args.a, args.b], depth, quiet=args.json, force=args.refresh)
        report = fidelity(ws, args.a, args.b, k=args.k, tag=args.tag)
    if args.json:
        print_json(report.to_json())
        return
    title = f"{args.a} vs {args.b}: top {args.k}" + (f" (tag {args.tag})" if args.tag else "")
    table = Table(title=literal(title), title_justify="left", show_header=False)
    table.add_column("figure")
    table.add_column("value", justify="right")
    kept = len(report.questions)
    rows = [
        ("questions ranked by both", str(kept)),
        ("top-1 agreement", _share(report.top1_agreement)),
        ("top-1 agreement up to ties", _share(report.top1_agreement_up_to_ties)),
        (f"Kendall tau-b over the union of the top {args.k} (mean)", _number(report.kendall_tau)),
        (f"Spearman rho over the union of the top {args.k} (mean)", _number(report.spearman)),
        (f"{args.a}: top-{args.k} rows in tied groups", _share(report.tie_share("a"))),
        (f"{args.b}: top-{args.k} rows in tied groups", _share(report.tie_share("b"))),
    ]
    for name, value in rows:
        table.add_row(literal(name), literal(value))
    out.print(table)
    notes = []
    if report.missing:
        notes.append(f"{report.missing} question(s) left out: not ranked by both")
    if report.undefined_correlation:
        notes.append(
            f"{report.undefined_correlation} question(s) without a rank correlation "
            "(fewer than two documents, or one side ranks them all alike)"
        )
    for note in notes:
        out.print(literal(note))
    for warning in report.warnings:
        err.print(literal(f"warning: {warning}", style="yellow"))
