"""``goldpan trust``: review and trust (or revoke) a workspace's command retrievers."""

from __future__ import annotations

import argparse
import sys

from rich.table import Table

from engine.trust import COMMAND_KIND, TrustStore, command_of
from engine.types import RetrieverSpec
from tui.cli.commands.common import UsageError, err, open_workspace, out
from tui.literal import command_shown as shown
from tui.literal import literal

WARNING = (
    "A command retriever runs a program on this machine, with your rights, each time "
    "goldpan pools questions (pool, score, compare, queue, the judge screen). Trust only "
    "commands you have read and expect; a workspace from someone else may name anything."
)


def _ask(question: str) -> bool:
    """y/N on the terminal (a script may pipe its answers; end of input is no)."""
    err.print(literal(question), end="")
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() in ("y", "yes")


def cmd_trust(args: argparse.Namespace) -> None:
    """Show each command retriever's command and ask whether to trust it."""
    store = TrustStore()
    with open_workspace(args.workspace) as ws:
        specs = [s for s in ws.retrievers() if s.kind == COMMAND_KIND]
        if args.retriever:
            unknown = [n for n in args.retriever if n not in {s.name for s in specs}]
            if unknown:
                names = ", ".join(s.name for s in specs) or "none"
                raise UsageError(
                    f"{args.workspace} has no command retriever {unknown[0]!r}; "
                    f"its command retrievers: {names}"
                )
            specs = [s for s in specs if s.name in args.retriever]
        if args.revoke:
            gone = store.revoke(ws, args.retriever)
            out.print(
                literal(
                    f"revoked trust in {len(gone)} command(s) of {args.workspace}; "
                    "they are skipped until trusted again"
                )
            )
            return
        untrusted = store.untrusted(ws, specs)
        if args.list or not untrusted:
            _table(args.workspace, specs, {s.name for s in untrusted})
            if not specs:
                out.print(literal(f"{args.workspace} has no command retrievers"))
            elif not untrusted and not args.list:
                out.print(literal("every command retriever of this workspace is trusted"))
            return
        err.print(literal(WARNING, style="yellow"))
        chosen: list[RetrieverSpec] = []
        for spec in untrusted:
            out.print(literal(f"retriever {spec.name} runs: {shown(command_of(spec))}"))
            if args.yes or _ask(f"trust this command for {args.workspace}? [y/N] "):
                chosen.append(spec)
        if chosen:
            store.trust(ws, chosen)
    left = len(untrusted) - len(chosen)
    out.print(
        literal(
            f"trusted {len(chosen)} command(s) for {args.workspace}"
            + (f"; {left} left untrusted (skipped when pooling)" if left else "")
        )
    )


def _table(workspace: str, specs: list[RetrieverSpec], untrusted: set[str]) -> None:
    table = Table(title=literal(f"command retrievers of {workspace}"), title_justify="left")
    table.add_column("retriever")
    table.add_column("trusted")
    table.add_column("command")
    for s in specs:
        table.add_row(
            literal(s.name), "no" if s.name in untrusted else "yes", literal(shown(command_of(s)))
        )
    if specs:
        out.print(table)


def add_options(s: argparse.ArgumentParser) -> None:
    """The options of ``goldpan trust``."""
    s.add_argument("--yes", action="store_true", help="trust every listed command (scripts)")
    s.add_argument("--list", action="store_true", help="show each command and whether trusted")
    s.add_argument("--revoke", action="store_true", help="forget this workspace's trust")
    s.add_argument(
        "--retriever", action="append", metavar="NAME", help="only this retriever (repeatable)"
    )
