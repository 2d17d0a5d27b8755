"""Commands that read scores: score, compare, failures, noanswer, sweep, overlap.

Each command imports the engine modules it uses when it runs (see :mod:`tui.cli`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from tui.cli.commands.common import (
    UsageError,
    check_retrievers,
    check_scored,
    check_tag,
    err,
    open_workspace,
    out,
    parse_floats,
    parse_floors,
    parse_ks,
    pool_stale,
    print_json,
    say_warnings,
    with_tag,
)
from tui.literal import literal
from tui.render import (
    comparison_text,
    failures_grid,
    overlap_grid,
    scores_grid,
    sweep_grid,
    threshold_grid,
)

if TYPE_CHECKING:
    from engine.scoring import Scoreboard


def score_table(
    board: Scoreboard, names: Sequence[str], tag: str | None, asked: Sequence[str] = ()
) -> Table:
    """The score table: one row per retriever, best value per column highlighted.

    Recall below @5 is left out (it is in ``--json``) unless it is among ``asked``.
    """
    title = "scores" + (f" (tag {tag})" if tag else "")
    c = board.counts
    caption = (
        f"{c['scored']} scored · "
        + (f"{c['not_ranked']} not ranked yet · " if c.get("not_ranked") else "")
        + f"{c['no_answer']} no answer · {c['disputed']} disputed · "
        + (f"{c['recheck']} need re-check (text changed) · " if c.get("recheck") else "")
        + f"{c['unlabeled']} unlabeled"
        + (
            f" · {c['stopped']} stopped ({c['not_judged_stopped']} candidates not judged)"
            if c.get("stopped")
            else ""
        )
    )
    from engine.scoring import HOLE_METRICS, LATENCY_HEADERS

    shown = [
        n
        for n in names
        if n in asked
        or not (n in HOLE_METRICS or n.startswith("recall@") and int(n.split("@")[1]) < 5)
    ]

    grid = scores_grid(
        {name: rs.means for name, rs in board.retrievers.items()},
        shown,
        {name: rs.latency.cells() for name, rs in board.retrievers.items()},
        LATENCY_HEADERS,
    )
    table = grid.rich_table(literal(title), caption)
    table.columns[0].min_width = max((len(n) for n in board.retrievers), default=9)
    return table


def say_not_ranked(board: Scoreboard) -> None:
    """On stderr: the questions each retriever has not ranked, and what the score did.

    Those of a retriever that will rank them are left out of every mean; a retriever
    that cannot rank now holds nothing out and has no means (``-``) while it lacks some.
    """
    n = len(board.question_ids)
    lines = {
        "not ranked yet (left out of every retriever's means until ranked, never counted "
        "as misses; goldpan pool ranks them)": [
            f"{r} {len(rs.not_ranked)}"
            for r, rs in board.retrievers.items()
            if rs.not_ranked and r in board.holding
        ],
        "no means (-): has not ranked every scored question and cannot rank now (the "
        "others are scored without it)": [
            f"{r} {len(rs.lacks)} of {n}" for r, rs in board.retrievers.items() if rs.lacks
        ],
    }
    for head, said in lines.items():
        if said:
            err.print(literal(f"{head}: {', '.join(said)}"))


def holes_table(board: Scoreboard, names: Sequence[str], asked: Sequence[str] = ()) -> Table | None:
    """How much of each retriever's scores rests on judgments: Judged@10, bpref, judged:.

    The default hole metrics that :func:`score_table` leaves out (None when none is left).
    """
    from engine.scoring import HOLE_K, HOLE_METRICS

    shown = [n for n in names if n in HOLE_METRICS and n not in asked]
    if not shown or not board.retrievers:
        return None
    grid = scores_grid({name: rs.means for name, rs in board.retrievers.items()}, shown, {}, ())
    table = grid.rich_table(
        "incomplete judgments",
        f"Judged@{HOLE_K}: the share of the top {HOLE_K} a person judged; bpref and "
        "judged: metrics leave unjudged documents out, the others count them as not relevant",
    )
    table.columns[0].min_width = max((len(n) for n in board.retrievers), default=9)
    return table


def cmd_score(args: argparse.Namespace) -> None:
    """Score every retriever; optionally gate on floors (or diff with a snapshot)."""
    if getattr(args, "against", None):
        from tui.cli.commands.snapshots import cmd_score_against

        cmd_score_against(args)
        return
    if getattr(args, "fail_on_regression", False) or getattr(args, "tolerance", None):
        raise UsageError("--fail-on-regression and --tolerance need --against NAME_OR_FILE")
    from engine.ci.gate import floor_verdict
    from engine.ci.holes import hole_warnings
    from engine.scoring import metric_names, score_workspace

    ks = parse_ks(args.k)
    floors = parse_floors(args.fail_under or [])
    asked = _metrics(args.metric or [])
    names = metric_names(ks)
    names += [m for m in asked if m not in names]
    for f in floors:
        if f.metric not in names:
            raise UsageError(
                f"--fail-under names {f.metric!r}; score reports {', '.join(names)} "
                "(add its k to --k, or the metric with --metric)"
            )
    from tui.cli.commands import gate

    given = gate.parse_given(args)
    gate.check_report_paths(args, Path(args.workspace))
    quiet = args.json or args.quiet or args.markdown == "-"
    verdict = None
    with open_workspace(args.workspace, readonly=bool(given)) as ws:
        check_tag(ws, args.tag)  # --retriever: checked with the --run names it may add
        rankings = gate.prepare(ws, args, given, quiet)
        board = score_workspace(
            ws,
            metrics=names,
            retrievers=args.retriever,
            tag=args.tag,
            given=rankings.given,
            cannot_rank=rankings.cannot_rank(),
        )
        warnings = hole_warnings(board, min_judged=args.min_judged)
        how = {n: w for n, w in rankings.how.items() if n in board.retrievers}
        if floors or args.junit_xml or args.markdown:
            verdict = floor_verdict(
                board,
                floors,
                k=max(ks),
                rankings=rankings,
                tag=args.tag,
                workspace=args.workspace,
                min_judged=args.min_judged,
            )
        if verdict is not None and (args.junit_xml or args.markdown):
            from engine.ci.rankings import winners
            from engine.ci.reports import junit_xml, markdown_scores, question_cases

            texts = {q.id: q.text for q in ws.questions()}
            tops = winners(ws, rankings, verdict.retrievers, board.question_ids)
            cases = question_cases(verdict, board, texts, tops)
            title = f"goldpan score {args.workspace}"
            gate.write_reports(
                args,
                ws.path,
                junit_xml(cases, f"goldpan {ws.path.name}", verdict),
                markdown_scores(board, names, verdict, cases, how, title),
            )
    if args.json:
        gated = {"gate": verdict.to_json()} if verdict is not None and floors else {}
        unjudged = {"warnings": [w.to_json() for w in warnings]}
        print_json({**board.to_json(), "rankings": how, **gated, **unjudged})
    elif args.markdown != "-":
        out.print(score_table(board, names, args.tag, asked))
        holes = holes_table(board, names, asked)
        if holes is not None:
            out.print(holes)
    if not args.json:
        gate.say_how(rankings, board.retrievers)
        if not (floors and verdict is not None):  # else the verdict says it (gate.present)
            say_warnings(warnings)
    if not args.json and not board.question_ids and not floors:
        todo = (
            "rank them (goldpan pool)"
            if board.counts["not_ranked"]
            else "label gold documents (or import qrels) to score"
        )
        err.print(
            literal(
                f"no question{with_tag(args.tag)} is scored yet: the metric columns are means "
                f"over no question (shown as 0); {todo}"
            )
        )
    if not args.json and args.markdown != "-":
        say_not_ranked(board)
        absent = {n: rs.missing for n, rs in board.retrievers.items() if rs.missing}
        if absent:
            said = ", ".join(f"{n} {m}" for n, m in absent.items())
            err.print(literal(f"not in the imported run (counted as misses): {said}"))
    if floors and verdict is not None:
        gate.present(verdict)


def _metrics(raw: Sequence[str]) -> list[str]:
    """``--metric`` values as canonical names (``success@5`` is ``hit@5``), each once."""
    from engine.errors import UnknownName
    from engine.metrics import parse_metric

    names: list[str] = []
    for item in raw:
        try:
            name = parse_metric(item).name
        except UnknownName as exc:
            raise UsageError(f"--metric: {exc}") from None
        if name not in names:
            names.append(name)
    return names


def cmd_compare(args: argparse.Namespace) -> None:
    """Paired comparison of two retrievers on one metric or several, each with its verdict."""
    from engine.analysis.analyses import compare_retrievers
    from engine.ci.holes import HOLE_METRIC, hole_warnings
    from engine.metrics import DEFAULT_METRIC, mean
    from engine.retrieve import DEFAULT_DEPTH
    from engine.scoring import paired_board
    from engine.verdict import check_level

    # a bad metric or level fails before anything is pooled
    asked = args.metric or [DEFAULT_METRIC]
    metrics = _metrics([m.strip() for raw in asked for m in raw.split(",") if m.strip()])
    if not metrics:
        raise UsageError("--metric: name at least one metric, e.g. --metric mrr,hit@1")
    check_level(args.level, args.samples)
    with open_workspace(args.workspace) as ws:
        check_retrievers(ws, [args.a, args.b], "compare")
        check_tag(ws, args.tag)
        check_scored(ws, args.tag, "compare")
        report = pool_stale(
            ws, [args.a, args.b], DEFAULT_DEPTH, quiet=args.json, force=args.refresh
        )
        cannot_rank = report.cannot_rank() if report else ()
        results = compare_retrievers(
            ws,
            args.a,
            args.b,
            metrics,
            level=args.level,
            samples=args.samples,
            seed=args.seed,
            tag=args.tag,
            cannot_rank=cannot_rank,
        )
        holes = paired_board(
            ws, args.a, args.b, [HOLE_METRIC], tag=args.tag, cannot_rank=cannot_rank
        )
    warnings = hole_warnings(holes, min_judged=args.min_judged)
    # both ranked every compared question (paired_board refuses otherwise)
    judged = {name: mean(rs.per_question[HOLE_METRIC]) for name, rs in holes.retrievers.items()}
    if args.json:
        shown = [
            {**r.to_json(), HOLE_METRIC: judged, "warnings": [w.to_json() for w in warnings]}
            for r in results
        ]
        print_json(shown[0] if len(shown) == 1 else shown)
        return
    if args.tag:
        out.print(literal(f"questions with tag {args.tag}", style="dim"))
    out.print(comparison_text(args.a, args.b, results, samples=args.samples, seed=args.seed))
    out.print(
        literal(
            f"{HOLE_METRIC.capitalize()}: "
            + ", ".join(f"{name} {share:.3f}" for name, share in judged.items())
        )
    )
    say_warnings(warnings)


def cmd_failures(args: argparse.Namespace) -> None:
    """Questions whose gold is not at rank 1, and what beat it."""
    from engine.analysis.analyses import analysed_retriever, failures
    from engine.retrieve import DEFAULT_DEPTH

    with open_workspace(args.workspace) as ws:
        check_retrievers(ws, args.retriever)
        name = analysed_retriever(ws, args.retriever)
        check_tag(ws, args.tag)
        check_scored(ws, args.tag, "failures")
        pool_stale(ws, [name], DEFAULT_DEPTH, quiet=args.json)
        rows = failures(ws, name, tag=args.tag)
    if args.json:
        print_json(
            [
                {
                    "question": f.question_id,
                    "gold": list(f.gold),
                    "gold_rank": f.gold_rank,
                    "top_doc": f.top_doc,
                    "relation": f.relation,
                    "relation_detail": f.detail,
                    "series": f.series,
                    "gold_doc": f.gold_doc,
                    "gold_title": f.gold_title,
                    "top_title": f.top_title,
                }
                for f in rows
            ]
        )
        return
    grid = failures_grid(rows)
    out.print(grid.rich_table(literal(f"{name}: gold not at rank 1 ({len(rows)})")))


def cmd_noanswer(args: argparse.Namespace) -> None:
    """Can a threshold on the top-1 score tell no-answer questions apart?"""
    from engine.analysis.analyses import analysed_retriever, noanswer_calibration
    from engine.retrieve import DEFAULT_DEPTH

    with open_workspace(args.workspace) as ws:
        check_retrievers(ws, args.retriever)
        name = analysed_retriever(ws, args.retriever)
        pool_stale(ws, [name], DEFAULT_DEPTH, quiet=args.json)
        cal = noanswer_calibration(ws, name)
    if args.json:
        print_json(cal.to_json())
        return
    out.print(
        literal(
            f"{name}: {len(cal.answerable)} answerable, {len(cal.no_answer)} no-answer questions"
        )
    )
    if cal.best is not None:
        out.print(threshold_grid(cal).rich_table("reject when the top-1 score is below"))
        out.print(
            Text(
                f"best threshold {cal.best.threshold:.4f} "
                f"(balanced accuracy {cal.best.balanced_accuracy:.3f})"
            )
        )
    warning = cal.warning()
    if warning is not None:
        out.print(Text(f"warning: {warning}", style="bold yellow"))


def cmd_sweep(args: argparse.Namespace) -> None:
    """A (k1, b) grid for one BM25 retriever, or a two-retriever fusion's weights."""
    from engine.analysis.analyses import SWEEP_B, SWEEP_K1, sweep, sweepable
    from engine.metrics import parse_metric
    from engine.retrieve import DEFAULT_DEPTH

    if args.fusion is not None:
        if args.retriever is not None or args.k1 is not None or args.b is not None:
            raise UsageError("sweep --fusion takes no --retriever, --k1 or --b")
        cmd_fusion_sweep(args)
        return
    fusion_only = [f for f in ("weights", "k", "norm") if getattr(args, f) is not None]
    if fusion_only:
        raise UsageError(f"--{fusion_only[0]} goes with --fusion A,B")
    if args.retriever is None:
        raise UsageError("sweep needs --retriever NAME (a k1 x b grid) or --fusion A,B")
    k1s = parse_floats(args.k1, "--k1") if args.k1 else list(SWEEP_K1)
    bs = parse_floats(args.b, "--b") if args.b else list(SWEEP_B)
    metric = parse_metric(args.metric).name
    with open_workspace(args.workspace) as ws:
        check_retrievers(ws, args.retriever)
        check_tag(ws, args.tag)
        check_scored(ws, args.tag, "sweep")
        sweepable(ws, args.retriever)  # before it is pooled for nothing
        # the grid is over the questions `score` scores: those the retriever has ranked
        pool_stale(ws, [args.retriever], DEFAULT_DEPTH, quiet=args.json)
        cells = sweep(ws, args.retriever, k1s, bs, metric, tag=args.tag)
        spec = ws.retriever(args.retriever)
    cells_word = "cell" if len(cells) == 1 else "cells"
    note = (
        f"{len(cells)} {cells_word} on the scored questions; choosing the best cell on a few "
        "questions overfits: treat the grid as a check, not a tuning knob"
    )
    if args.json:
        print_json(
            {
                "retriever": args.retriever,
                "metric": metric,
                "grid": [c.__dict__ for c in cells],
                "note": note,
            }
        )
        return
    own = (spec.params.get("k1"), spec.params.get("b")) if spec else (None, None)
    grid = sweep_grid(cells, k1s, bs, own)
    out.print(grid.rich_table(literal(f"{args.retriever}: {metric} over k1 x b")))
    out.print(Text(f"* the retriever's own parameters. {note}."))


def cmd_fusion_sweep(args: argparse.Namespace) -> None:
    """The fusion of two retrievers over a weight (x RRF k) grid, with a held-out figure."""
    from engine.analysis.fusion_sweep import DEFAULT_NORM, DEFAULT_WEIGHTS, fusion_sweep
    from engine.metrics import parse_metric
    from engine.retrieve import DEFAULT_DEPTH

    bases = [b.strip() for b in args.fusion.split(",") if b.strip()]
    if len(bases) != 2:
        raise UsageError(f"--fusion {args.fusion!r}: name two retrievers, A,B")
    weights = (
        parse_floats(args.weights, "--weights", 1.0) if args.weights else list(DEFAULT_WEIGHTS)
    )
    ks = parse_floats(args.k, "--k") if args.k is not None else None
    if ks is not None and args.norm is not None:
        raise UsageError("--norm goes with a score fusion; --k sweeps RRF, which has none")
    metric = parse_metric(args.metric).name
    with open_workspace(args.workspace) as ws:
        check_retrievers(ws, bases, "sweep --fusion")
        check_tag(ws, args.tag)
        check_scored(ws, args.tag, "sweep")
        pool_stale(ws, bases, DEFAULT_DEPTH, quiet=args.json)
        result = fusion_sweep(
            ws,
            bases,
            weights,
            ks,
            norm=args.norm or DEFAULT_NORM,
            metric=metric,
            tag=args.tag,
            folds=args.folds,
            seed=args.seed,
            samples=args.samples,
        )
    if args.json:
        print_json(result.to_json())
        return
    a, b = result.bases
    how = "RRF over k" if result.method == "rrf" else f"weighted sum of {result.norm} scores"
    table = Table(
        title=literal(f"{a} x w + {b} x (1 - w): {metric}, {how}"),
        caption=literal(
            f"{result.n} scored questions; interval: paired bootstrap of the setting minus "
            f"{result.single} ({result.single_value:.3f}), the better single retriever"
        ),
    )
    for col in ("setting", metric, f"vs {result.single}", "95% CI", "verdict"):
        table.add_column(literal(col), justify="left" if col in ("setting", "verdict") else "right")
    for i, st in enumerate(result.settings):
        lo, hi = st.ci95
        table.add_row(
            st.label() + (" *" if i == result.best else ""),
            f"{st.value:.3f}",
            f"{st.diff:+.3f}",
            f"{lo:+.3f} to {hi:+.3f}",
            st.verdict.short(),
            style="bold" if i == result.best else None,
        )
    out.print(table)
    c = result.held_out_vs_single
    lo, hi = c.ci95
    tuned = (
        "no tuned setting (too few questions)"
        if result.tuned is None
        else f"tuned (* best on all {result.n} questions): {result.tuned:.3f}"
    )
    out.print(
        Text(
            f"{tuned}; held out ({result.folds} folds, seed {result.seed}, each scored by the "
            f"setting picked on the others): {result.held_out:.3f} vs "
            f"{result.held_out_single:.3f} for the single retriever picked the same way "
            f"({c.diff:+.3f}, 95% CI {lo:+.3f} to {hi:+.3f}, {c.verdict.short()}); folds "
            f"picked {', '.join(result.picks)}"
        )
    )
    for w in result.warnings:
        out.print(Text(f"warning: {w}"))


def cmd_overlap(args: argparse.Namespace) -> None:
    """Each question's overlap with the nearest title and with its gold text."""
    from engine.analysis.analyses import question_overlaps

    with open_workspace(args.workspace) as ws:
        rows = question_overlaps(ws)
    if args.json:
        print_json(
            [
                {"question": r.question_id, "title": r.title, "gold": r.gold, "high": r.high}
                for r in rows
            ]
        )
        return
    from engine.analysis.overlap import EASY_THRESHOLD

    out.print(
        overlap_grid(rows).rich_table(
            "question overlap (share of the question's words)",
            f"likely easy: {EASY_THRESHOLD:.0%} or more of the question's words are in one "
            "title (whole words or Hangul bigrams)",
        )
    )
