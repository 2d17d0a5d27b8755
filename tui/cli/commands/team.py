"""Commands for labeling as a team: label, verdict, merge, agreement, queue.

Each command imports the engine modules it uses when it runs (see :mod:`tui.cli`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from engine.grades import GRADE_RANGE, GRADES
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
    from engine.gold import Gold
    from engine.judging.feedback import Round
    from engine.session.labeling import LabelingSession
    from engine.types import Label, ModelLabel
    from engine.workspace import Workspace


@contextmanager
def _labeling(args: argparse.Namespace) -> Iterator[LabelingSession]:
    """``args.annotator``'s labeling session on ``args.workspace``.

    The session is what the judge screen writes through; an unknown question or document
    in the block is a usage error.
    """
    from engine.session.labeling import LabelingSession
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
    from engine.gold import workspace_golds
    from engine.team.agreement import agreement_report

    with open_workspace(args.workspace) as ws:
        models = ws.model_labels()
        golds = workspace_golds(ws) if models else None
        report = agreement_report(ws.labels(), ws.verdicts(), models, golds)
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
    if report["models"]:
        table = Table(
            title="model judges against each person and the resolved gold (models are not "
            "in the figures above)",
            title_justify="left",
        )
        for col in ("model", "against", "shared judgments", "kappa", "alpha ordinal"):
            table.add_column(col, justify="left" if col in ("model", "against") else "right")
        for m in report["models"]:
            alpha = m["alpha_ordinal"]
            table.add_row(
                literal(m["model"]),
                Text("resolved gold", style="bold") if m["gold"] else literal(m["against"]),
                str(m["n"]),
                f"{m['kappa']:.3f}",
                "-" if alpha is None else f"{alpha:.3f}",
            )
        out.print(table)


def cmd_merge(args: argparse.Namespace) -> None:
    """Bring separately labeled workspaces together (labels keep their annotators)."""
    from engine.team.merge import merge_workspaces

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
    from engine.counters import workspace_stopped
    from engine.gold import workspace_golds
    from engine.judging.queue import coverage_at_k, judged_docs, judging_queue
    from engine.retrieve import DEFAULT_DEPTH

    with open_workspace(args.workspace) as ws:
        pool_stale(ws, None, DEFAULT_DEPTH, quiet=args.json)
        golds = workspace_golds(ws)
        rankings = ws.all_runs()
        people = ws.labels()
        judged = judged_docs([(lab.question_id, lab.doc_id) for lab in people])
        model = _model_grades(ws, args.model) if args.model else None
        beyond = _beyond_pool(ws, golds, people, args.beyond_pool) if args.beyond_pool else None
        stopped = workspace_stopped(ws)
    queue = judging_queue(golds, rankings, judged, args.k, stopped=stopped)
    coverage = coverage_at_k(rankings, judged, args.k)
    model_queues = None
    if model is not None:
        from engine.judging.queue import disagreement_queue, model_holes_queue

        model_queues = (
            disagreement_queue(golds, model, people),
            model_holes_queue(golds, model, people),
        )
    if args.json:
        data: dict[str, object] = {
            "k": args.k,
            "coverage": coverage,
            "queue": [
                {
                    "question": i.question_id,
                    "status": i.status.value,
                    "unjudged": i.unjudged,
                    "stopped": i.stopped,
                    "reason": i.reason,
                }
                for i in queue
            ],
        }
        if beyond is not None:
            method, rounds = beyond
            data["beyond_pool"] = {
                "method": method,
                "proposed": sum(len(r.docs) for r in rounds),
                "questions": [
                    {"question": r.question_id, "docs": r.docs, "relevant_left": r.relevant_left}
                    for r in rounds
                ],
            }
        if model_queues is not None:
            data["model"] = args.model
            for key, items in zip(("disagree", "holes"), model_queues, strict=True):
                data[key] = [
                    {
                        "question": i.question_id,
                        "status": i.status.value,
                        "docs": list(i.docs),
                        "distance": i.distance,
                    }
                    for i in items
                ]
        print_json(data)
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
    for col in ("question", "status", "unjudged in pool", "not judged (stopped)", "why"):
        table.add_column(col, justify="right" if "judged" in col else "left")
    for i in queue:
        table.add_row(
            literal(i.question_id), i.status.value, str(i.unjudged), str(i.stopped), i.reason
        )
    out.print(table)
    if beyond is not None:
        _print_beyond(*beyond)
    if model_queues is None:
        return
    disagree, holes = model_queues
    titles = (
        f"where {args.model} and the people disagree most ({len(disagree)}): documents "
        "whose relevance they differ on",
        f"what {args.model} graded relevant that nobody judged ({len(holes)}): holes in the pool",
    )
    heads = ("grade distance", "model's grades")
    for items, title, head in zip((disagree, holes), titles, heads, strict=True):
        table = Table(title=literal(title), title_justify="left")
        for col in ("question", "status", "documents", head):
            table.add_column(col, justify="right" if col == head else "left")
        for m in items:
            shown = ", ".join(m.docs[:4]) + (
                f" and {len(m.docs) - 4} more" if len(m.docs) > 4 else ""
            )
            table.add_row(literal(m.question_id), m.status.value, literal(shown), str(m.distance))
        out.print(table)


def _beyond_pool(
    ws: Workspace, golds: Mapping[str, Gold], labels: Sequence[Label], n: int
) -> tuple[str, list[Round]]:
    """``--beyond-pool``: a feedback round for every question with a relevant document.

    The documents join their questions' candidates (written here); returns the method's
    name and each question's round.
    """
    from engine.gold import Status
    from engine.grades import is_relevant
    from engine.judging.feedback import judged_grades, load_feedback, next_round
    from engine.types import Proposal

    wanted = []
    for qid, gold in golds.items():
        grades = judged_grades(labels, qid)
        if gold.status is not Status.NO_ANSWER and any(map(is_relevant, grades.values())):
            wanted.append(qid)
    if not wanted:
        return "none: no question has a relevant document to learn from", []
    feedback = load_feedback(ws, wanted)
    proposals: dict[str, list[Proposal]] = {}
    for p in ws.proposals(wanted):
        proposals.setdefault(p.question_id, []).append(p)
    who = annotator_name(None)
    rounds = []
    for qid in sorted(wanted):
        r = next_round(feedback, qid, judged_grades(labels, qid), proposals.get(qid, []), n)
        rounds.append(r)
    ws.write_proposals(
        Proposal(r.question_id, d, feedback.method, who) for r in rounds for d in r.docs
    )
    return feedback.method, rounds


def _print_beyond(method: str, rounds: Sequence[Round]) -> None:
    """The proposals of ``--beyond-pool``, per question, with the estimate left."""
    table = Table(
        title=literal(
            f"beyond the pool ({sum(len(r.docs) for r in rounds)} documents added to the "
            f"candidates of {len(rounds)} questions; {method})"
        ),
        title_justify="left",
    )
    for col in ("question", "proposed", "relevant left (estimate)"):
        table.add_column(col, justify="left" if col == "question" else "right")
    for r in rounds:
        left = "-" if r.relevant_left is None else f"{r.relevant_left:.1f}"
        table.add_row(literal(r.question_id), str(len(r.docs)), left)
    out.print(table)
    out.print(
        Text(
            "relevant left: estimated once two rounds of proposals are judged ('-' before); "
            "judge the proposals in the Label screen, then ask again"
        )
    )


def _model_grades(ws: Workspace, name: str) -> list[ModelLabel]:
    """``--model``: the grades of a model judge the workspace has."""
    from engine.names import check_known

    check_known("model judge", name, [j.annotator for j in ws.model_judges()], given_to="--model")
    return ws.model_labels(name)
