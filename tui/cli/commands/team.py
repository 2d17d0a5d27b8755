"""Commands for labeling as a team: label, verdict, merge, agreement, queue.

Each command imports the engine modules it uses when it runs (see :mod:`tui.cli`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from engine.types import GRADE_RANGE, GRADES
from tui.cli.commands.common import (
    UsageError,
    annotator_name,
    check_question,
    err,
    open_workspace,
    out,
    pool_stale,
    print_json,
)
from tui.literal import command_shown, literal

if TYPE_CHECKING:
    from engine.session import LabelingSession


@contextmanager
def _labeling(args: argparse.Namespace) -> Iterator[LabelingSession]:
    """``args.annotator``'s labeling session on ``args.workspace``.

    The session is what the judge screen writes through; an unknown question or document
    in the block is a usage error.
    """
    from engine.session import LabelingSession
    from engine.workspace import WorkspaceError

    who = annotator_name(args.annotator)
    with open_workspace(args.workspace) as ws:
        ws.ensure_sound()  # the session reads the question's labels before it writes
        check_question(ws, args.question)
        session = LabelingSession(ws, who)
        try:
            yield session
        except WorkspaceError as exc:
            raise UsageError(str(exc)) from None


def cmd_label(args: argparse.Namespace) -> None:
    """Grade one document for one question (what the judge screen's keys do)."""
    if args.grade not in GRADES:
        raise UsageError(f"grade {args.grade} is out of range; expected {GRADE_RANGE}")
    with _labeling(args) as session:
        session.set_grade(args.question, args.doc, args.grade)
    out.print(literal(f"{session.annotator}: {args.question} {args.doc} = {args.grade}"))


def cmd_verdict(args: argparse.Namespace) -> None:
    """Give a verdict on a question (no answer, ambiguous, skip, answerable)."""
    with _labeling(args) as session:
        session.set_verdict(args.question, args.verdict, args.note)
    out.print(literal(f"{session.annotator}: {args.question} is {args.verdict}"))


def cmd_agreement(args: argparse.Namespace) -> None:
    """Cohen's kappa per annotator pair, Krippendorff's alpha, verdict agreement."""
    from engine.agreement import agreement_report

    with open_workspace(args.workspace) as ws:
        report = agreement_report(ws.labels(), ws.verdicts())
    if args.json:
        print_json(report)
        return
    table = Table(
        title="Cohen's kappa on relevant or not, per annotator pair", title_justify="left"
    )
    for col in ("annotator A", "annotator B", "shared judgments", "kappa"):
        table.add_column(col, justify="right" if col in ("kappa", "shared judgments") else "left")
    for p in report["pairs"]:
        table.add_row(literal(p["a"]), literal(p["b"]), str(p["n"]), f"{p['kappa']:.3f}")
    out.print(table)
    alpha = report["alpha_ordinal"]
    out.print(
        Text(
            f"Krippendorff's alpha (ordinal, grades {GRADE_RANGE}) over {report['units']} "
            f"(question, document) pairs judged twice or more: "
            + ("-" if alpha is None else f"{alpha:.3f}")
        )
    )
    table = Table(title="agreement on answerable vs no answer", title_justify="left")
    for col in ("annotator A", "annotator B", "questions", "agreement", "kappa"):
        table.add_column(col, justify="left" if col.startswith("annotator") else "right")
    for v in report["verdicts"]:
        table.add_row(
            literal(v["a"]),
            literal(v["b"]),
            str(v["n"]),
            f"{v['agreement']:.0%}",
            f"{v['kappa']:.3f}",
        )
    out.print(table)


def cmd_merge(args: argparse.Namespace) -> None:
    """Bring separately labeled workspaces together (labels keep their annotators)."""
    from engine.merge import merge_workspaces

    report = merge_workspaces(Path(args.out), [Path(p) for p in args.inputs])
    out.print(literal(f"merged into {args.out}: {report.summary()}"))
    for conflict in report.conflicts:
        err.print(literal(f"conflict: {conflict}"))
    for name, command in report.commands_added:
        err.print(
            literal(
                f"goldpan: {args.out} now has retriever {name}, which runs "
                f"{command_shown(command)}; it is not trusted there and is skipped until you "
                f"review it with `goldpan trust {args.out}`"
            )
        )


def cmd_queue(args: argparse.Namespace) -> None:
    """What to judge next, and how much of each retriever's top k is judged."""
    from engine.gold import workspace_golds
    from engine.queue import coverage_at_k, judged_docs, judging_queue
    from engine.retrieve import DEFAULT_DEPTH

    with open_workspace(args.workspace) as ws:
        pool_stale(ws, None, DEFAULT_DEPTH, quiet=args.json)
        golds = workspace_golds(ws)
        rankings = ws.all_runs()
        judged = judged_docs([(lab.question_id, lab.doc_id) for lab in ws.labels()])
    queue = judging_queue(golds, rankings, judged, args.k)
    coverage = coverage_at_k(rankings, judged, args.k)
    if args.json:
        print_json(
            {
                "k": args.k,
                "coverage": coverage,
                "queue": [
                    {
                        "question": i.question_id,
                        "status": i.status.value,
                        "unjudged": i.unjudged,
                        "reason": i.reason,
                    }
                    for i in queue
                ],
            }
        )
        return
    table = Table(
        title=f"coverage@{args.k}: share of each top {args.k} that is judged", title_justify="left"
    )
    table.add_column("retriever")
    table.add_column(f"coverage@{args.k}", justify="right")
    for name, share in coverage.items():
        table.add_row(literal(name), f"{share:.0%}")
    out.print(table)
    table = Table(title=f"judging queue ({len(queue)})", title_justify="left")
    for col in ("question", "status", "unjudged in pool", "why"):
        table.add_column(col, justify="right" if col.startswith("unjudged") else "left")
    for i in queue:
        table.add_row(literal(i.question_id), i.status.value, str(i.unjudged), i.reason)
    out.print(table)
