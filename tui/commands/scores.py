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


def score_table(board: Scoreboard, names: Sequence[str], tag: str | None) -> Table:
    """The score table: one row per retriever, best value per column highlighted."""
    title = "scores" + (f" (tag {tag})" if tag else "")
    c = board.counts
    caption = (
        f"{c['scored']} scored · {c['no_answer']} no answer · {c['disputed']} disputed · "
        + (f"{c['recheck']} need re-check (text changed) · " if c.get("recheck") else "")
        + f"{c['unlabeled']} unlabeled"
    )
    table = Table(
        title=literal(title), title_justify="left", caption=caption, caption_justify="left"
    )
    widest = max((len(n) for n in board.retrievers), default=9)
    table.add_column("retriever", no_wrap=True, min_width=widest)
    shown = [n for n in names if not n.startswith("recall@") or int(n.split("@")[1]) >= 5]
    for n in shown:
        table.add_column(
            n.replace("hit", "Hit")
            .replace("mrr", "MRR")
            .replace("recall", "R")
            .replace("ndcg", "nDCG"),
            justify="right",
            no_wrap=True,
        )
    table.add_column("ms/q", justify="right", no_wrap=True)
    table.add_column("p95 ms", justify="right", no_wrap=True)
    best = {n: max((rs.means[n] for rs in board.retrievers.values()), default=0.0) for n in shown}
    for name, rs in board.retrievers.items():
        cells: list[Text | str] = [literal(name)]
        for n in shown:
            v = rs.means[n]
            cells.append(Text(f"{v:.3f}", style="bold green" if v == best[n] and v > 0 else ""))
        cells.append(f"{rs.ms_per_query:.2f}")
        cells.append(f"{rs.ms_p95:.2f}")
        table.add_row(*cells)
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
    table = Table(
        title=literal(
            f"{args.a} vs {args.b} on {result.metric}" + (f" (tag {args.tag})" if args.tag else "")
        ),
        title_justify="left",
        show_header=False,
    )
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("questions", str(result.n))
    table.add_row(literal(f"mean {args.a}"), f"{result.mean_a:.4f}")
    table.add_row(literal(f"mean {args.b}"), f"{result.mean_b:.4f}")
    table.add_row("difference (A - B)", f"{result.diff:+.4f}")
    table.add_row("95% bootstrap interval", f"[{lo:+.4f}, {hi:+.4f}]")
    table.add_row("win / tie / loss (A)", f"{result.wins} / {result.ties} / {result.losses}")
    table.add_row("randomization p-value", f"{result.p_value:.4f}")
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
    table = Table(
        title=literal(f"{args.retriever}: gold not at rank 1 ({len(rows)})"), title_justify="left"
    )
    for col in ("question", "gold rank", "rank-1 document", "title", "relation"):
        table.add_column(col, justify="right" if col == "gold rank" else "left")
    for f in rows:
        table.add_row(
            literal(f.question_id),
            str(f.gold_rank or "-"),
            literal(f.top_doc or "-"),
            literal(titles.get(f.top_doc, "")),
            f.relation,
        )
    out.print(table)


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
    table = Table(title="reject when the top-1 score is below", title_justify="left")
    for col in ("threshold", "answerable rejected", "no-answer caught", "balanced accuracy"):
        table.add_column(col, justify="right")
    for row in cal.table:
        style = "bold green" if row is cal.best else ""
        table.add_row(
            f"{row.threshold:.4f}",
            str(row.answerable_rejected),
            str(row.no_answer_caught),
            Text(f"{row.balanced_accuracy:.3f}", style=style),
        )
    out.print(table)
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
    table = Table(title=literal(f"{args.retriever}: {metric} over k1 x b"), title_justify="left")
    table.add_column("k1 \\ b")
    for b in bs:
        table.add_column(f"{b:g}", justify="right")
    own = (spec.params.get("k1"), spec.params.get("b")) if spec else (None, None)
    for k1 in k1s:
        row: list[Text | str] = [f"{k1:g}"]
        for b in bs:
            cell = next(c for c in cells if c.k1 == k1 and c.b == b)
            mark = "*" if (k1, b) == own else ""
            row.append(f"{cell.value:.3f}{mark}")
        table.add_row(*row)
    out.print(table)
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
    table = Table(title="question overlap (share of the question's words)", title_justify="left")
    for col in ("question", "nearest title", "gold text", ""):
        table.add_column(col, justify="left" if col == "question" else "right")
    for r in rows:
        table.add_row(
            literal(r.question_id),
            f"{r.title:.0%}",
            "-" if r.gold is None else f"{r.gold:.0%}",
            Text("likely easy", style="yellow") if r.high else "",
        )
    out.print(table)


# -- parser -------------------------------------------------------------------------------
