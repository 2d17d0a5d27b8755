"""What ``goldpan score`` scored, and a gate that never passes on what it did not run.

Shared by ``score`` and ``score --against``: the rankings given on the command line
(``--run FILE[=NAME]``, ``--run-command "CMD"[=NAME]``), the pooling of the workspace's
own retrievers, a line per retriever saying whether its rankings were made now or are
cached and why that is valid, the retrievers a gate covers that were not run (exit 2),
and the CI reports (``--junit-xml``, ``--markdown``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import GoldpanError
from tui.cli.commands.common import UsageError, err, pool_stale
from tui.literal import literal

if TYPE_CHECKING:
    from engine.ci_reports import QuestionCase
    from engine.types import CachedRun
    from engine.workspace import Workspace


class GateNotRun(GoldpanError):
    """A gate covers a retriever that did not run here; exit code 2."""


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


@dataclass
class Given:
    """What the command line gave to score: name -> (what, value)."""

    files: dict[str, str] = field(default_factory=dict)
    commands: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        """True when anything was given."""
        return bool(self.files or self.commands)

    def names(self) -> set[str]:
        """The retrievers given."""
        return {*self.files, *self.commands}


def parse_given(args: argparse.Namespace) -> Given:
    """``--run`` and ``--run-command`` as names and values (names unique)."""
    given = Given()
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


@dataclass
class Rankings:
    """The rankings a score reads: given now, and how each retriever's were made."""

    given: dict[str, dict[str, CachedRun]]
    """Retriever -> question -> ranking, for the ones given on the command line."""
    how: dict[str, str]
    """Retriever -> ranked now, or cached and why that is valid."""
    not_run: dict[str, str]
    """Retrievers that did not run here and why (a gate covering one exits 2)."""


def prepare(ws: Workspace, args: argparse.Namespace, given: Given, quiet: bool) -> Rankings:
    """Pool the workspace's chosen retrievers and make the given rankings, now."""
    from engine.retrieve import DEFAULT_DEPTH, STORED_KINDS, bases_of
    from engine.trust import is_untrusted_kind, not_trusted

    specs = {s.name: s for s in ws.retrievers()}
    chosen = list(args.retriever or [])
    if given:
        chosen = [n for n in chosen if n not in given.names()]
    how: dict[str, str] = {}
    not_run: dict[str, str] = {}
    if not given or chosen:
        report = None
        if not args.no_pool:
            report = pool_stale(ws, chosen or None, DEFAULT_DEPTH, quiet, force=args.refresh)
        wanted = chosen or list(specs)
        if report is not None:
            how.update({n: w for n, w in report.how.items() if n in wanted})
            for n, what in report.untrusted.items():
                kind = report.untrusted_kinds.get(n, "command")
                not_run[n] = f"{not_trusted(kind, what)} on this machine"
            not_run.update(report.errors)
        else:
            why = (
                "--no-pool"
                if args.no_pool
                else f"the workspace is read-only ({ws.readonly_reason})"
            )

            def unvouched(name: str) -> bool:
                spec = specs.get(name)
                if spec is None or spec.kind in STORED_KINDS:
                    return False
                return is_untrusted_kind(spec.kind) or any(unvouched(b) for b in bases_of(spec))

            for n in wanted:
                kind = specs[n].kind if n in specs else ""
                how[n] = "imported run (never run)" if kind in STORED_KINDS else f"cached ({why})"
                if unvouched(n):
                    not_run[n] = f"its rankings are cached and it was not run ({why})"
        for n, reason in not_run.items():
            if n in wanted:
                how[n] = f"not run: {reason}"
    rankings: dict[str, dict[str, CachedRun]] = {}
    if given:  # reading run files imports the importers: only when there are some
        from engine.gate import rankings_from_command, rankings_from_file
    for name, path in given.files.items():
        rankings[name] = rankings_from_file(ws, Path(path), name)
        how[name] = f"run file {path} (--run)"
    for name, command in given.commands.items():
        rankings[name] = rankings_from_command(ws, command, name)
        how[name] = "ranked now (--run-command)"
    return Rankings(rankings, how, not_run)


def say_how(rankings: Rankings, scored: Collection[str]) -> None:
    """One stderr line: which rankings were scored, made now or cached and why."""
    parts = [f"{n}: {w}" for n, w in rankings.how.items() if n in scored]
    if parts:
        err.print(literal("rankings scored: " + "; ".join(parts)))


def check_covered(rankings: Rankings, covered: Collection[str], workspace: str) -> None:
    """Exit 2 when a gate covers a retriever that did not run here."""
    missed = {n: why for n, why in rankings.not_run.items() if n in covered}
    if not missed:
        return
    names = ", ".join(missed)
    reasons = "; ".join(f"{n}: {why}" for n, why in missed.items())
    raise GateNotRun(
        f"the gate covers {names}, which did not run here ({reasons}). A gate never passes "
        f"on what it did not run: trust the command in this job (`goldpan trust {workspace} "
        f"--yes` as a CI step), or give the code on the command line "
        f'(--run-command "CMD"={next(iter(missed))} or --run FILE={next(iter(missed))})'
    )


def winners(
    ws: Workspace, rankings: Rankings, names: Sequence[str], question_ids: Sequence[str]
) -> dict[str, dict[str, str | None]]:
    """Per retriever and question, the document ranked first."""
    out: dict[str, dict[str, str | None]] = {}
    for name in names:
        runs: Mapping[str, CachedRun] = rankings.given.get(name) or ws.runs(name, question_ids)
        out[name] = {
            q: (r.doc_ids[0] if (r := runs.get(q)) is not None and r.doc_ids else None)
            for q in question_ids
        }
    return out


def write_reports(
    args: argparse.Namespace,
    cases: Sequence[QuestionCase],
    markdown: str,
    workspace: Path,
    k: int | None,
) -> None:
    """Write ``--junit-xml`` and ``--markdown`` (atomically; never over the workspace)."""
    from engine.ci_reports import junit_xml
    from engine.formats.outfiles import write_atomic

    if args.junit_xml:
        suite = f"goldpan {workspace.name}"
        write_atomic(
            Path(args.junit_xml), junit_xml(cases, suite, k=k), force=True, protect=[workspace]
        )
    if args.markdown == "-":
        sys.stdout.write(markdown + "\n")
        sys.stdout.flush()
    elif args.markdown:
        write_atomic(Path(args.markdown), markdown + "\n", force=True, protect=[workspace])
