"""What ``score`` and ``score --against`` share: the code given, pooling, the reports.

The decisions are the engine's: which rankings were made now and which cannot be
vouched for (:mod:`engine.ci.rankings`), and the gate's verdict (:mod:`engine.ci.gate`).
This module reads the command line (``--run FILE[=NAME]``, ``--run-command
"CMD"[=NAME]``), pools the workspace's own retrievers with a progress bar, says which
rankings were scored, writes the CI reports (``--junit-xml``, ``--markdown``) once the
verdict is known, and turns the verdict into an exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from tui.cli.commands.common import GateFailed, UsageError, err, pool_stale
from tui.literal import literal

if TYPE_CHECKING:
    from engine.ci.gate import Verdict
    from engine.ci.rankings import GivenRuns, Rankings
    from engine.workspace import Workspace


def _split_name(raw: str, flag: str, *, is_file: bool) -> tuple[str, str | None]:
    """``VALUE[=NAME]`` as (value, name or None)."""
    from engine.names import is_retriever_name

    if is_file and Path(raw).exists():
        return raw, None
    value, eq, name = raw.rpartition("=")
    if eq and value.strip() and is_retriever_name(name):
        return value, name
    if not raw.strip():
        raise UsageError(f"{flag}: expected a value")
    return raw, None


def parse_given(args: argparse.Namespace) -> GivenRuns:
    """``--run`` and ``--run-command`` as names and values (names unique)."""
    from engine.ci.rankings import GivenRuns

    given = GivenRuns()
    seen: set[str] = set()
    for raw in getattr(args, "run", None) or []:
        value, name = _split_name(raw, "--run", is_file=True)
        name = name or Path(value).stem or "run"
        if name in seen:
            raise UsageError(f"--run: the name {name!r} is given twice; add =NAME to one")
        seen.add(name)
        given.files[name] = value
    for i, raw in enumerate(getattr(args, "run_command", None) or []):
        value, name = _split_name(raw, "--run-command", is_file=False)
        name = name or ("command" if i == 0 else f"command-{i + 1}")
        if name in seen:
            raise UsageError(f"--run-command: the name {name!r} is given twice; add =NAME")
        seen.add(name)
        given.commands[name] = value
    return given


def prepare(ws: Workspace, args: argparse.Namespace, given: GivenRuns, quiet: bool) -> Rankings:
    """Pool the workspace's chosen retrievers, make the given rankings, say how each was made.

    With ``--run`` / ``--run-command`` only they and the ``--retriever`` ones are scored.
    """
    from engine.ci.rankings import scored_rankings
    from engine.retrieve import DEFAULT_DEPTH

    chosen = [n for n in args.retriever or [] if n not in given.names()]
    wanted = chosen or ([] if given else [s.name for s in ws.retrievers()])
    report = None
    if wanted and not args.no_pool:
        report = pool_stale(ws, chosen or None, DEFAULT_DEPTH, quiet, force=args.refresh)
    why = "--no-pool" if args.no_pool else f"the workspace is read-only ({ws.readonly_reason})"
    return scored_rankings(ws, given, wanted, report, why)


def say_how(rankings: Rankings, scored: Collection[str]) -> None:
    """One stderr line: which rankings were scored, made now or cached and why."""
    parts = [f"{n}: {w}" for n, w in rankings.how.items() if n in scored]
    if parts:
        err.print(literal("rankings scored: " + "; ".join(parts)))


def check_report_paths(args: argparse.Namespace, workspace: Path) -> None:
    """Refuse a report path before anything runs (:func:`engine.formats.outfiles.check_target`).

    An existing file without ``--force``, the workspace, a database, a device.
    """
    from engine.formats.outfiles import check_target

    for path in (args.junit_xml, None if args.markdown == "-" else args.markdown):
        if path:
            check_target(Path(path), force=args.force, protect=[workspace])


def write_reports(args: argparse.Namespace, workspace: Path, junit: str, markdown: str) -> None:
    """Write ``--junit-xml`` and ``--markdown`` (atomically, as every output is).

    Called once the verdict is known: a report never says more than what ran.
    """
    from engine.formats.outfiles import write_atomic

    if args.junit_xml:
        write_atomic(Path(args.junit_xml), junit, force=args.force, protect=[workspace])
    if args.markdown == "-":
        sys.stdout.write(markdown + "\n")
        sys.stdout.flush()
    elif args.markdown:
        write_atomic(Path(args.markdown), markdown + "\n", force=args.force, protect=[workspace])


def present(verdict: Verdict) -> None:
    """The verdict as the exit code: 2 refused, 1 failed, 0 passed (warnings on stderr)."""
    from engine.ci.gate import GateRefused

    for w in verdict.warnings:
        err.print(literal(f"goldpan: warning: {w}", style="yellow"))
    if verdict.refusals:
        raise GateRefused(verdict)
    if verdict.failures:
        raise GateFailed(verdict.failure_message())
