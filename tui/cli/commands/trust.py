"""``goldpan trust``: review and trust (or revoke) what a workspace's retrievers run or send."""

from __future__ import annotations

import argparse
import sys

from rich.table import Table

from engine.trust import TrustStore, needs_trust, what_runs, whole_texts
from engine.types import RetrieverSpec
from tui.cli.commands.common import UsageError, err, open_workspace, out
from tui.literal import command_shown as shown
from tui.literal import literal

WARNING = (
    "A command retriever runs a program on this machine, with your rights, each time "
    "goldpan pools questions (pool, score, compare, queue, the judge screen); a search "
    "engine retriever (opensearch, elasticsearch, http) sends every question there, with "
    "the credentials held by the environment variables it names; a postgres retriever runs "
    "the workspace's SQL on the database its environment variable connects to; a dense or "
    "rerank retriever whose model is not a folder on this machine downloads that model "
    "from the Hugging Face hub (a request the hub sees, and weights the workspace chose). "
    "Trust only "
    "what you have read and expect; a workspace from someone else may name anything."
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
    """Show what each retriever runs or sends and ask whether to trust it."""
    store = TrustStore()
    with open_workspace(args.workspace) as ws:
        specs = [s for s in ws.retrievers() if needs_trust(s)]
        if args.retriever:
            unknown = [n for n in args.retriever if n not in {s.name for s in specs}]
            if unknown:
                names = ", ".join(s.name for s in specs) or "none"
                raise UsageError(
                    f"{args.workspace} has no retriever {unknown[0]!r} that needs trust; "
                    "its retrievers that run a command, send questions out or load a model by "
                    f"name: {names}"
                )
            specs = [s for s in specs if s.name in args.retriever]
        if args.revoke:
            gone = store.revoke(ws, args.retriever)
            out.print(
                literal(
                    f"revoked trust in {len(gone)} retriever(s) of {args.workspace}; "
                    "they are skipped until trusted again"
                )
            )
            return
        untrusted = store.untrusted(ws, specs)
        if args.list or not untrusted:
            _table(args.workspace, specs, {s.name for s in untrusted})
            if not specs:
                out.print(
                    literal(
                        f"{args.workspace} has no retrievers that run a command, send "
                        "questions out or load a model by name"
                    )
                )
            elif not untrusted and not args.list:
                out.print(literal("every retriever of this workspace that needs trust is trusted"))
            return
        err.print(literal(WARNING, style="yellow"))
        chosen: list[RetrieverSpec] = []
        for spec in untrusted:
            out.print(literal(f"retriever {spec.name} runs: {shown(what_runs(spec))}"))
            _texts(spec)
            if args.yes or _ask(f"trust this for {args.workspace}? [y/N] "):
                chosen.append(spec)
        if chosen:
            store.trust(ws, chosen)
    left = len(untrusted) - len(chosen)
    out.print(
        literal(
            f"trusted {len(chosen)} retriever(s) for {args.workspace}"
            + (f"; {left} left untrusted (skipped when pooling)" if left else "")
        )
    )


def _table(workspace: str, specs: list[RetrieverSpec], untrusted: set[str]) -> None:
    table = Table(title=literal(f"retrievers of {workspace} that need trust"), title_justify="left")
    table.add_column("retriever")
    table.add_column("trusted")
    table.add_column("runs or sends to", overflow="fold")  # in full, never cut with "…"
    for s in specs:
        table.add_row(
            literal(s.name), "no" if s.name in untrusted else "yes", literal(shown(what_runs(s)))
        )
    if specs:
        out.print(table)
    for s in specs:
        _texts(s, f"retriever {s.name}: ")


def _texts(spec: RetrieverSpec, lead: str = "") -> None:
    """Each template the line names by its hash, in full: every line of it, made visible.

    Control and invisible characters show as pictures (``␛``, ``⟨U+202E⟩``), so nothing
    in a template can hide what it holds; a line break is a line break, each line marked.
    """
    for option, text in whole_texts(spec):
        out.print(literal(f"  {lead}{option} holds:"))
        lines = text.replace("\r\n", "\n").split("\n")  # any other break stays visible
        for line in lines[:-1] if len(lines) > 1 and not lines[-1] else lines:
            out.print(literal(f"    | {line}"))
