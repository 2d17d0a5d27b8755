"""What every goldpan command shares: consoles, errors, opening, pooling, parsing.

Light to import: the parser imports this module for every command, so the engine's heavy
parts (retrievers, numpy) and rich's progress bar load inside the functions that
use them.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from engine.errors import GoldpanError
from tui.crash import write_crash_log as write_crash_log  # tui.serve.server imports it here
from tui.literal import json_escaped, literal, visible

if TYPE_CHECKING:
    from engine.ci.gate import Floor
    from engine.ci.holes import HoleWarning
    from engine.retrieve.runner import RunReport
    from engine.workspace import Workspace

DEMO_PATH = Path("workspaces") / "demo.db"

# Tables keep their full width when written to a pipe or a CI log (rich assumes 80).
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)

err = Console(stderr=True, highlight=False, soft_wrap=True)


class UsageError(GoldpanError):
    """A command line that cannot be carried out; exit code 2."""


class GateFailed(Exception):
    """A gate failed (a floor missed, a question worse than the snapshot); exit code 1."""


EXIT_CODES = """exit codes:
  0    done
  1    only: a --fail-under floor was missed or --fail-on-regression found a question
       that got worse (score), so a CI gate can tell it apart from a crash
  2    bad input, a bad command line, a workspace that cannot be used, a gate that
       compared nothing or cannot vouch for what it compared, or a write the system
       refused (the workspace locked by another program, a full disk); the message
       names the file and, where there is one, the line or the table and row; nothing
       was written
  3    an internal error (a bug in goldpan): one line on the terminal, the full
       traceback in a log file whose path the line gives
  130  interrupted (ctrl+c); every committed change is kept"""


# -- helpers ------------------------------------------------------------------------------


def open_workspace(path: str, *, readonly: bool = False) -> Workspace:
    """Open a workspace; after an upgrade, say on stderr where the old version was copied.

    A workspace that cannot be written opens read-only: reading commands work, and the
    first change a command tries fails with the reason (exit 2), before anything is written.
    """
    from engine.workspace import Workspace

    ws = Workspace.open(Path(path), readonly=readonly)
    if ws.backup_path is not None:
        err.print(
            literal(
                f"goldpan: upgraded {path} from schema version {ws.upgraded_from} to "
                f"{ws.schema_version}; the old version was copied first to {ws.backup_path}"
            )
        )
    return ws


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar on a terminal (stderr), nothing otherwise."""
    if not enabled or not err.is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(Text(visible(name)).markup, total=total)
            bar.update(tasks[name], completed=done, total=total)

        yield update


def pool_stale(
    ws: Workspace,
    names: Sequence[str] | None,
    depth: int,
    quiet: bool,
    *,
    force: bool = False,
) -> RunReport | None:
    """Refresh stale rankings before a command reads them (not on a read-only workspace).

    ``force`` (``--refresh``) ranks every question again. Returns what was done (None
    when the workspace is read-only: nothing was run).
    """
    from engine.retrieve.runner import refresh_runs

    if ws.readonly:
        if not quiet:
            err.print(literal(f"read-only ({ws.readonly_reason}): scoring the cached rankings"))
        return None
    with progress_bar(not quiet) as progress:
        report = refresh_runs(ws, names, depth=depth, progress=progress, force=force)
    say_skipped(str(ws.path), report)
    if not quiet and any(report.ran.values()):
        ran = ", ".join(f"{n} {c}" for n, c in report.ran.items() if c)
        err.print(literal(f"pooled (questions run): {ran}"))
    return report


def check_tag(ws: Workspace, tag: str | None) -> None:
    """``--tag``: a tag some question has; else exit 2 listing the tags there are.

    A typo would otherwise select no question and print zeros with exit 0.
    """
    if tag is None:
        return
    from collections import Counter

    from engine.names import check_known

    tags = Counter(t for q in ws.questions() for t in q.tags)
    check_known("tag", tag, [t for t, _ in tags.most_common()], given_to="--tag")


def with_tag(tag: str | None) -> str:
    """`` with tag 'x'`` after a noun (nothing without ``--tag``)."""
    return f" with tag {tag!r}" if tag is not None else ""


def no_scored_question(what: str, tag: str | None, counts: dict[str, int]) -> UsageError:
    """The refusal of a score, comparison or gate over no scored question (exit 2).

    Every mean over no question reads 0, so the report would be a table of zeros (a floor
    "missed", an interval "including 0") about a test set that is empty: no labels yet,
    or a ``--tag`` whose questions have none. ``counts``: :data:`engine.gold.COUNT_KEYS`.
    """
    held = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items() if n)
    return UsageError(
        f"{what}: no question{with_tag(tag)} is scored ({held or 'no questions'}); label gold "
        "documents (or import qrels) first"
    )


def check_scored(ws: Workspace, tag: str | None, what: str) -> None:
    """Refuse (:func:`no_scored_question`) when no question (with ``tag``) is scored."""
    from engine.gold import question_counts

    counts = question_counts(ws, tag)
    if not counts["scored"]:
        raise no_scored_question(what, tag, counts)


def check_retrievers(
    ws: Workspace, names: str | Sequence[str] | None, given_to: str = "--retriever"
) -> None:
    """Retriever names given on the command line: each one the workspace has."""
    from engine.names import check_known

    check_known("retriever", names, [s.name for s in ws.retrievers()], given_to=given_to)


def check_question(ws: Workspace, question_id: str, given_to: str = "QID") -> None:
    """A question id given on the command line: one the workspace has."""
    if ws.question(question_id) is None:
        from engine.names import unknown_name

        raise unknown_name(
            "question", question_id, [q.id for q in ws.questions()], given_to=given_to
        )


def say_skipped(workspace: str, report: RunReport) -> None:
    """Name every retriever skipped as untrusted, what it runs or sends, how to trust it.

    Said on stderr even with --quiet or --json: a skipped retriever changes the numbers.
    So is what a retriever asked says on every run (TLS certificates not checked).
    """
    from engine.trust import not_trusted

    for name, what in report.untrusted.items():
        clause = not_trusted(report.untrusted_kinds.get(name, "command"), what)
        err.print(
            literal(
                f"goldpan: skipped retriever {name}: {clause} for {workspace}. goldpan runs "
                "a workspace's commands, sends its questions out and loads its models from "
                "the hub only once you have trusted them: review them with "
                f"`goldpan trust {workspace}`"
            )
        )
    for lines in report.warnings.values():
        for line in lines:
            err.print(literal(f"goldpan: warning: {line}", style="yellow"))
    for name, why in report.errors.items():
        if "not trusted" in why:
            err.print(literal(f"goldpan: skipped retriever {name}: it {why}"))


def print_json(value: Any) -> None:
    """JSON on stdout; what json leaves raw and a terminal obeys (C1, bidi) escaped."""
    sys.stdout.write(json_escaped(json.dumps(value, ensure_ascii=False, indent=2)) + "\n")


def parse_ks(raw: str) -> list[int]:
    """``--k 1,3,5,10``: the cutoffs, sorted, each once (1 to ``values.MAX_RANKS``)."""
    from tui.cli.values import MAX_RANKS, whole_value

    try:
        ks = sorted({whole_value(x, 1, MAX_RANKS) for x in raw.split(",") if x.strip()})
    except ValueError as exc:
        raise UsageError(f"--k {raw!r}: {exc}, e.g. 1,3,5,10") from None
    if not ks:
        raise UsageError(f"--k {raw!r}: expected positive whole numbers, e.g. 1,3,5,10")
    return ks


_FLOOR = re.compile(r"^(?:(?P<retriever>[^:=]+):)?(?P<metric>[^:=]+)=(?P<value>.+)$")


def parse_floors(raw: Sequence[str]) -> list[Floor]:
    """``--fail-under [RETRIEVER:]METRIC=VALUE`` items as floors (retriever None: every one).

    A floor is a finite number: ``mrr=nan`` would be a gate that never fails.
    """
    from engine.ci.gate import Floor
    from tui.cli.values import finite_value

    floors = []
    for item in raw:
        m = _FLOOR.match(item.strip())
        if not m:
            raise UsageError(
                f"--fail-under {item!r}: expected METRIC=VALUE or RETRIEVER:METRIC=VALUE"
            )
        try:
            value = finite_value(m["value"])
        except ValueError as exc:
            raise UsageError(f"--fail-under {item!r}: {exc}") from None
        floors.append(Floor(m["retriever"], m["metric"].strip().lower(), value))
    return floors


def parse_floats(raw: str, flag: str, high: float | None = None) -> list[float]:
    """A comma-separated list of non-negative finite numbers (at most ``high``) for ``flag``."""
    from tui.cli.values import finite_value

    try:
        values = [finite_value(x, 0, high) for x in raw.split(",") if x.strip()]
    except ValueError as exc:
        raise UsageError(
            f"{flag} {raw!r}: expected numbers separated by commas, each finite and "
            f"non-negative ({exc})"
        ) from None
    if not values:
        raise UsageError(f"{flag} {raw!r}: expected non-negative numbers separated by commas")
    return values


def annotator_name(name: str | None) -> str:
    """--annotator, else $GOLDPAN_ANNOTATOR, else the login name, checked.

    The check is the one person-name rule (:func:`engine.names.check_person_name`), the
    same that ``serve`` applies to the names it hands links to.
    """
    import getpass

    from engine.names import check_person_name

    if name:
        return check_person_name(name, "--annotator")
    if os.environ.get("GOLDPAN_ANNOTATOR"):
        return check_person_name(os.environ["GOLDPAN_ANNOTATOR"], "$GOLDPAN_ANNOTATOR")
    try:
        return check_person_name(getpass.getuser(), "your login name (give --annotator)")
    except Exception:  # no login name in this environment (some containers), or an odd one
        return "annotator"


def say_warnings(warnings: Sequence[HoleWarning]) -> None:
    """The gate's warnings about holes, in one line on stderr."""
    from engine.ci.holes import warnings_text

    if warnings:
        err.print(literal(f"warning: {warnings_text(warnings)}", style="yellow"))
