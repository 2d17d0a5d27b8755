"""``goldpan judge``: a model grades the pooled candidates, beside the people, never as gold.

The engine does the work (:mod:`engine.judges.run`, :mod:`engine.judges.calibration`); this module
reads the command line and prints the calibration: for each grade, the model's score
range and how many grades people gave there agree.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from rich.table import Table

from tui.cli.commands.common import (
    UsageError,
    err,
    open_workspace,
    out,
    pool_stale,
    print_json,
    progress_bar,
)
from tui.literal import command_shown, literal

if TYPE_CHECKING:
    from engine.judges.calibration import Calibration
    from engine.judges.report import ReportCard
    from engine.judges.run import JudgeReport
    from engine.workspace import Workspace


def cmd_judge(args: argparse.Namespace) -> None:
    """Grade the candidates with a model, remove a judge, or list them."""
    from engine.judges.run import remove_judge

    if args.report:
        clash = [
            f for f in ("model", "command", "remove", "list", "thresholds") if getattr(args, f)
        ]
        if clash:
            raise UsageError(f"--report reads a stored judge: give no --{clash[0]}")
        _report(args)
        return
    card_only = [f for f in ("keep", "repeats", "samples", "consistency") if getattr(args, f)]
    if card_only:
        raise UsageError(f"--{card_only[0]} goes with --report")
    if args.list:
        with open_workspace(args.workspace, readonly=True) as ws:
            _list(ws, args.json)
        return
    if args.remove:
        if args.model or args.command:
            raise UsageError("--remove takes no --model or --command")
        with open_workspace(args.workspace) as ws:
            n = remove_judge(ws, args.remove)
        if args.json:
            print_json({"removed": args.remove, "grades": n})
        else:
            out.print(literal(f"removed {args.remove} and its {n:,} grades from {args.workspace}"))
        return
    _judge(args)


def _judge(args: argparse.Namespace) -> None:
    from engine.judges.calibration import check_thresholds
    from engine.judges.run import make_judge, run_judge, stored_judge
    from tui.cli.values import finite_value

    thresholds = None
    if args.thresholds is not None:
        thresholds = check_thresholds(
            [finite_value(x) for x in args.thresholds.split(",") if x.strip()]
        )
    with open_workspace(args.workspace) as ws:
        if args.command is not None:
            if args.model is not None or args.kind not in (None, "command"):
                raise UsageError("--command is a command judge's: give no --model or other --kind")
            judge = make_judge("command", args.command, args.annotator)
            typed = True
        elif args.model is not None:
            if args.kind == "command":
                raise UsageError('a command judge takes --command "CMD", not --model')
            fields = args.fields.split(",") if args.fields else None
            judge = make_judge(args.kind or "dense", args.model, args.annotator, fields)
            typed = True
        elif args.annotator is not None:
            judge = stored_judge(ws, args.annotator)
            typed = False
        else:
            raise UsageError(
                'give --model NAME_OR_PATH (or --command "CMD"), --annotator model:NAME to '
                "run a stored judge again, --remove model:NAME or --list"
            )
        if not args.no_pool:
            from engine.retrieve import DEFAULT_DEPTH

            pool_stale(ws, None, DEFAULT_DEPTH, quiet=args.quiet or args.json)
        kwargs: dict[str, Any] = {}
        if args.timeout is not None:
            kwargs["timeout"] = args.timeout
        with progress_bar(not args.quiet and not args.json) as progress:
            report = run_judge(
                ws,
                judge,
                questions=args.questions,
                thresholds=thresholds,
                progress=progress,
                typed=typed,
                **kwargs,
            )
    if args.json:
        print_json(_report_json(report))
        return
    _print_report(report, args.workspace)


def _report_json(report: JudgeReport) -> dict[str, Any]:
    j = report.judge
    return {
        "annotator": j.annotator,
        "kind": j.kind,
        "model": j.model,
        "questions": report.questions,
        "grades": report.grades,
        "counts": list(report.counts),
        "unpooled": list(report.unpooled),
        "calibration": report.calibration.to_json(),
    }


def _number(x: float) -> str:
    return f"{x:.4g}"


def _range_text(c: Calibration, grade: int) -> str:
    r = c.ranges[grade]
    if c.thresholds is None:
        return "its own grade"
    if r.never:
        if c.fitted and c.people[grade] == 0:
            return f"never given (no person gave a {grade} to calibrate on)"
        return "never given"
    if r.low is None and r.high is None:
        return "any score"
    if r.low is None:
        return f"below {_number(r.high or 0.0)}"
    if r.high is None:
        return f"{_number(r.low)} and up"
    return f"{_number(r.low)} to below {_number(r.high)}"


def calibration_table(c: Calibration, title: str) -> Table:
    """Per grade: the model's score range, people's grades there, and how many agree."""
    table = Table(title=literal(title), title_justify="left")
    table.add_column("grade", justify="right")
    table.add_column("model score" if c.thresholds is not None else "model grade")
    table.add_column("people's grades there: 0 / 1 / 2 / 3", justify="right")
    table.add_column("people agree", justify="right")
    for r in c.ranges:
        total = c.people[r.grade]
        agree = f"{r.agree:,} of {total:,} {r.grade}s" if total else "-"
        table.add_row(
            str(r.grade),
            _range_text(c, r.grade),
            " / ".join(f"{n:,}" for n in r.people),
            agree,
        )
    return table


def kappa_line(c: Calibration) -> str:
    """Kappa in words: in sample (optimistic when fitted) and held out."""
    if c.kappa is None:
        return "no person graded any pair this judge graded: nothing to compare it with"
    line = f"kappa on relevant or not, model vs people: {c.kappa:.3f} on these {c.items:,} grades"
    if c.fitted:
        line += " (optimistic: the thresholds were fitted on them)"
        if c.held_out_kappa is not None:
            line += f"; {c.held_out_kappa:.3f} held out ({c.folds} folds over questions)"
        else:
            line += "; too few questions for a held-out figure"
    return line


def _print_report(report: JudgeReport, workspace: str) -> None:
    j = report.judge
    c = report.calibration
    what = command_shown(j.model) if j.kind == "command" else j.model
    counts = ", ".join(f"{n:,} x {g}" for g, n in enumerate(report.counts))
    out.print(
        literal(
            f"{j.annotator} ({j.kind}, {what}) graded {report.grades:,} candidates of "
            f"{report.questions:,} questions: {counts}"
        )
    )
    if report.unpooled:
        shown = ", ".join(report.unpooled[:5]) + (" ..." if len(report.unpooled) > 5 else "")
        err.print(
            literal(
                f"goldpan: {len(report.unpooled)} question(s) have no candidates (not pooled, "
                f"nothing graded): {shown}; run `goldpan pool {workspace}` first"
            )
        )
    if c.thresholds is not None:
        how = "fitted on" if c.fitted else "given; compared with"
        title = (
            f"calibration: thresholds {how} {c.items:,} grades people gave "
            f"({c.questions:,} questions)"
        )
    else:
        title = (
            f"{j.annotator}'s grades beside {c.items:,} grades people gave "
            f"({c.questions:,} questions)"
        )
    out.print(calibration_table(c, title))
    out.print(literal(kappa_line(c)))
    out.print(
        literal(
            f"These grades are {j.annotator}'s own: no score, count or gold reads them until a "
            "person adopts one in Adjudicate. `goldpan agreement` and `goldpan queue --model` "
            "compare them with people's."
        )
    )


def _list(ws: Workspace, as_json: bool) -> None:
    from engine.judges.calibration import stored_calibration

    judges = ws.model_judges()
    counts: dict[str, int] = {}
    for m in ws.model_labels():
        counts[m.annotator] = counts.get(m.annotator, 0) + 1
    rows = [(j, stored_calibration(j.params) or {}) for j in judges]
    if as_json:
        print_json(
            [
                {
                    "annotator": j.annotator,
                    "kind": j.kind,
                    "model": j.model,
                    "grades": counts.get(j.annotator, 0),
                    "thresholds": cal.get("thresholds"),
                    "kappa": cal.get("kappa"),
                    "held_out_kappa": cal.get("held_out_kappa"),
                }
                for j, cal in rows
            ]
        )
        return
    if not rows:
        out.print(literal(f"{ws.path} has no model judges (add one with `goldpan judge`)"))
        return
    table = Table(title="model judges", title_justify="left")
    for col in ("annotator", "kind", "model", "grades", "thresholds", "kappa", "held out"):
        table.add_column(col, justify="right" if col in ("grades", "kappa", "held out") else "left")
    for j, cal in rows:
        t = cal.get("thresholds")
        shown_t = (
            "-"
            if not isinstance(t, list)
            else ", ".join("never" if x is None else _number(float(x)) for x in t)
        )
        table.add_row(
            literal(j.annotator),
            j.kind,
            literal(command_shown(j.model) if j.kind == "command" else j.model),
            f"{counts.get(j.annotator, 0):,}",
            shown_t,
            _maybe(cal.get("kappa")),
            _maybe(cal.get("held_out_kappa")),
        )
    out.print(table)


def _maybe(x: object) -> str:
    if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x):
        return f"{x:.3f}"
    return "-"


def _report(args: argparse.Namespace) -> None:
    """``judge --report``: the stored judge's report card (reads only; may ask a command)."""
    from engine.judges.report import report_card

    kwargs: dict[str, Any] = {"seed": args.seed}
    if args.keep is not None:
        kwargs["keep"] = [float(x) / 100 for x in args.keep.split(",") if x.strip()]
    for flag, name in (
        ("repeats", "repeats"),
        ("samples", "samples"),
        ("consistency", "consistency_pairs"),
        ("timeout", "timeout"),
    ):
        if getattr(args, flag) is not None:
            kwargs[name] = getattr(args, flag)
    with open_workspace(args.workspace, readonly=True) as ws:
        card = report_card(ws, args.annotator, **kwargs)
    if args.json:
        print_json(card.to_json())
        return
    _print_card(card)


def _share(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _print_card(card: ReportCard) -> None:
    j = card.judge
    what = command_shown(j.model) if j.kind == "command" else j.model
    out.print(literal(f"report card of {j.annotator} ({j.kind}, {what})", style="bold"))
    k = card.kappa
    grades = (
        "its held-out grades (each question graded by thresholds fitted on the other folds)"
        if k.held_out
        else "its grades as stored"
    )
    ci = "" if k.ci95 is None else f", 95% interval {k.ci95[0]:.3f} to {k.ci95[1]:.3f}"
    out.print(
        literal(
            f"agreement with people on relevant or not: kappa {_num(k.kappa)}{ci} "
            f"({k.samples:,} resamples of the {k.questions:,} questions, seed {k.seed}), on "
            f"{k.items:,} grades people gave to pairs it graded, against {grades}. Base rates: "
            f"people call {_share(k.people_relevant)} of these pairs relevant, the judge "
            f"{_share(k.judge_relevant)}"
        )
    )
    c = card.consistency
    if c.asked:
        out.print(
            literal(
                f"asked twice: the same grade for {_share(c.same)} of {c.pairs:,} pairs, "
                f"kappa {_num(c.kappa)} between the runs ({c.how})"
            )
        )
    else:
        out.print(literal(f"self-consistency: {c.reason}", style="dim"))
    for r in card.rankings:
        table = Table(
            title=literal(
                f"the {len(r.people)} retrievers ranked by {r.metric} on {card.scored:,} scored "
                "questions: Kendall tau against people's judgments, the judge grading the rest"
            ),
            title_justify="left",
        )
        for col in ("people's judgments kept", "draws", "tau (mean)", "least", "most"):
            table.add_column(col, justify="right")
        for kept in r.kept:
            avg, lo, hi = kept.summary()
            table.add_row(f"{kept.share:.0%}", str(len(kept.taus)), _num(avg), _num(lo), _num(hi))
        out.print(table)
    for w in card.warnings:
        err.print(literal(f"warning: {w}", style="yellow"))
