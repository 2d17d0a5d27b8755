"""Commands that read scores: score, compare, failures, noanswer, sweep, overlap."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from engine.metrics import parse_metric
from engine.retrieve import DEFAULT_DEPTH, STORED_KINDS
from engine.scoring import Scoreboard, metric_names, score_workspace
from tui.commands.common import (
    GateFailed,
    UsageError,
    _floats,
    _json,
    _open,
    _parse_floors,
    _parse_ks,
    _pool,
    err,
    out,
)
from tui.literal import literal
from tui.render import (
    comparison_facts,
    failures_grid,
    overlap_grid,
    scores_grid,
    sweep_grid,
    threshold_grid,
)


def score_table(board: Scoreboard, names: Sequence[str], tag: str | None) -> Table:
    """The score table: one row per retriever, best value per column highlighted."""
    title = "scores" + (f" (tag {tag})" if tag else "")
    c = board.counts
    caption = (
        f"{c['scored']} scored · {c['no_answer']} no answer · {c['disputed']} disputed · "
        f"{c['unlabeled']} unlabeled"
    )
    shown = [n for n in names if not n.startswith("recall@") or int(n.split("@")[1]) >= 5]
    grid = scores_grid(
        {name: rs.means for name, rs in board.retrievers.items()},
        shown,
        {name: (rs.ms_per_query, rs.ms_p95) for name, rs in board.retrievers.items()},
        ("ms/q", "p95 ms"),
    )
    table = grid.rich_table(literal(title), caption)
    table.columns[0].min_width = max((len(n) for n in board.retrievers), default=9)
    return table


def cmd_score(args: argparse.Namespace) -> None:
    """Score every retriever; optionally gate on floors."""
    ks = _parse_ks(args.k)
    floors = _parse_floors(args.fail_under or [])
    names = metric_names(ks)
    for _, metric, _ in floors:
        if metric not in names:
            raise UsageError(
                f"--fail-under names {metric!r}; score reports {', '.join(names)} "
                "(add its k to --k)"
            )
    with _open(args.workspace) as ws:
        if not args.no_pool:
            _pool(ws, args.retriever, DEFAULT_DEPTH, quiet=args.json or args.quiet)
        board = score_workspace(ws, metrics=names, retrievers=args.retriever, tag=args.tag)
        imported = {s.name for s in ws.retrievers() if s.kind in STORED_KINDS}
    if args.json:
        _json(board.to_json())
    else:
        out.print(score_table(board, names, args.tag))
        missing = {n: rs.missing for n, rs in board.retrievers.items() if rs.missing}
        unpooled = {n: m for n, m in missing.items() if n not in imported}
        absent = {n: m for n, m in missing.items() if n in imported}
        if unpooled:
            err.print(literal(f"not pooled yet (counted as misses): {unpooled}"))
        if absent:
            err.print(literal(f"not in the imported run (counted as misses): {absent}"))
    failures = []
    for retriever, metric, floor in floors:
        if retriever is not None and retriever not in board.retrievers:
            raise UsageError(f"--fail-under names unknown retriever {retriever!r}")
        for name, rs in board.retrievers.items():
            if retriever in (None, name) and rs.means[metric] < floor:
                failures.append(f"{name} {metric} {rs.means[metric]:.4f} < {floor:g}")
    if failures:
        raise GateFailed("below the floor: " + "; ".join(failures))


def cmd_compare(args: argparse.Namespace) -> None:
    """Paired comparison of two retrievers."""
    from engine.analysis import compare_retrievers

    if args.samples < 1:
        raise UsageError("--samples must be at least 1")
    parse_metric(args.metric)  # a bad metric fails before anything is pooled
    with _open(args.workspace) as ws:
        _pool(ws, [args.a, args.b], DEFAULT_DEPTH, quiet=args.json)
        result = compare_retrievers(
            ws, args.a, args.b, args.metric, samples=args.samples, seed=args.seed, tag=args.tag
        )
    if args.json:
        _json(result.to_json())
        return
    lo, hi = result.ci95
    table = comparison_facts(args.a, args.b, result).rich_table(
        literal(
            f"{args.a} vs {args.b} on {result.metric}" + (f" (tag {args.tag})" if args.tag else "")
        )
    )
    table.show_header = False
    out.print(table)
    verdict = (
        "the interval excludes 0"
        if lo > 0 or hi < 0
        else "the interval includes 0: no reliable difference on these questions"
    )
    out.print(Text(f"{verdict} ({args.samples} resamples, seed {args.seed})"))


def cmd_failures(args: argparse.Namespace) -> None:
    """Questions whose gold is not at rank 1, and what beat it."""
    from engine.analysis import failures

    with _open(args.workspace) as ws:
        _pool(ws, [args.retriever], DEFAULT_DEPTH, quiet=args.json)
        rows = failures(ws, args.retriever, tag=args.tag)
        titles: dict[str | None, str] = {}
        for f in rows:
            doc = ws.doc(f.top_doc) if f.top_doc else None
            titles[f.top_doc] = doc.title if doc else ""
    if args.json:
        _json(
            [
                {
                    "question": f.question_id,
                    "gold": list(f.gold),
                    "gold_rank": f.gold_rank,
                    "top_doc": f.top_doc,
                    "relation": f.relation,
                }
                for f in rows
            ]
        )
        return
    grid = failures_grid(rows, {d or "": t for d, t in titles.items()})
    out.print(grid.rich_table(literal(f"{args.retriever}: gold not at rank 1 ({len(rows)})")))


def cmd_noanswer(args: argparse.Namespace) -> None:
    """Can a threshold on the top-1 score tell no-answer questions apart?"""
    from engine.analysis import noanswer_calibration

    with _open(args.workspace) as ws:
        _pool(ws, [args.retriever], DEFAULT_DEPTH, quiet=args.json)
        cal = noanswer_calibration(ws, args.retriever)
    if args.json:
        _json(cal.to_json())
        return
    out.print(
        literal(
            f"{args.retriever}: {len(cal.answerable)} answerable, "
            f"{len(cal.no_answer)} no-answer questions"
        )
    )
    if cal.best is None:
        out.print(Text("needs both answerable and no-answer questions to calibrate"))
        return
    out.print(threshold_grid(cal).rich_table("reject when the top-1 score is below"))
    out.print(
        Text(
            f"best threshold {cal.best.threshold:.4f} "
            f"(balanced accuracy {cal.best.balanced_accuracy:.3f})"
        )
    )
    if not cal.usable:
        out.print(
            Text(
                "warning: the two distributions overlap so much that no threshold separates them",
                style="bold yellow",
            )
        )


def cmd_sweep(args: argparse.Namespace) -> None:
    """A (k1, b) grid for one BM25 retriever."""
    from engine.analysis import sweep

    k1s = _floats(args.k1, "--k1")
    bs = _floats(args.b, "--b")
    metric = parse_metric(args.metric).name
    with _open(args.workspace) as ws:
        cells = sweep(ws, args.retriever, k1s, bs, metric, tag=args.tag)
        spec = ws.retriever(args.retriever)
    cells_word = "cell" if len(cells) == 1 else "cells"
    note = (
        f"{len(cells)} {cells_word} on the scored questions; choosing the best cell on a few "
        "questions overfits: treat the grid as a check, not a tuning knob"
    )
    if args.json:
        _json(
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


def cmd_overlap(args: argparse.Namespace) -> None:
    """Each question's overlap with the nearest title and with its gold text."""
    from engine.analysis import question_overlaps

    with _open(args.workspace) as ws:
        rows = question_overlaps(ws)
    if args.json:
        _json(
            [
                {"question": r.question_id, "title": r.title, "gold": r.gold, "high": r.high}
                for r in rows
            ]
        )
        return
    out.print(overlap_grid(rows).rich_table("question overlap (share of the question's words)"))


# -- parser -------------------------------------------------------------------------------
