"""Commands of the regression workflow: ``snapshot`` and ``score --against``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from engine.ci.snapshots import (
    RetrieverDiff,
    SnapshotDiff,
    SnapshotError,
    check_name,
    diff_against,
    resolve_snapshot,
    save_snapshot,
)
from engine.retrieve import DEFAULT_DEPTH
from engine.verdict import rule
from tui.cli.commands.common import (
    UsageError,
    check_retrievers,
    check_tag,
    err,
    open_workspace,
    out,
    pool_stale,
    print_json,
)
from tui.cli.declarations.snapshot import SNAPSHOT_ACTIONS
from tui.literal import literal

CAUSES = {
    "retriever": "the retriever changed",
    "labels": "the labels changed",
    "both": "retriever and labels changed",
}


# -- snapshot ------------------------------------------------------------------------------


def _snapshot_words(words: list[str]) -> tuple[str, str, str | None]:
    """(action, workspace, name) from the positional words."""
    if words[0] in SNAPSHOT_ACTIONS:
        action, rest = words[0], words[1:]
    else:
        action, rest = "save", words
    needs_name = action != "list"
    want = 2 if needs_name else 1
    if len(rest) != want:
        shape = "WS NAME" if needs_name else "WS"
        raise UsageError(f"snapshot {action}: expected {shape}, got {' '.join(rest) or 'nothing'}")
    return action, rest[0], rest[1] if needs_name else None


def cmd_snapshot(args: argparse.Namespace) -> None:
    """Save, list, show, remove or export snapshots."""
    action, path, name = _snapshot_words(args.words)
    if (args.out or args.force) and action != "export":
        raise UsageError("--out and --force are for `snapshot export`")
    with open_workspace(path) as ws:
        if action == "save":
            assert name is not None
            check_name(name)
            if ws.snapshot(name) is not None and not args.replace:
                raise SnapshotError(
                    f"a snapshot named {name!r} already exists (remove it, or use --replace)"
                )
            check_retrievers(ws, args.retriever)
            report = None
            if not args.no_pool:
                report = pool_stale(ws, args.retriever, DEFAULT_DEPTH, quiet=True)
            data = save_snapshot(
                ws,
                name,
                replace=args.replace,
                retrievers=args.retriever,
                cannot_rank=report.cannot_rank() if report else (),
            )
            n = len(data["golds"])
            rets = ", ".join(data["retrievers"]) or "no retrievers"
            out.print(literal(f"saved snapshot {name}: {n} scored questions; {rets}"))
            return
        if action == "list":
            rows = ws.snapshots()
            if args.json:
                print_json([{"name": n, "created": c} for n, c in rows])
                return
            if not rows:
                out.print(Text("no snapshots yet: goldpan snapshot WS NAME"))
                return
            table = Table(title="snapshots", title_justify="left")
            table.add_column("name")
            table.add_column("created (UTC)")
            for snap_name, created in rows:
                table.add_row(literal(snap_name), created)
            out.print(table)
            return
        assert name is not None
        if action == "remove":  # without reading it: a damaged snapshot can be removed too
            ws.remove_snapshot(name)
            out.print(literal(f"removed snapshot {name}"))
            return
        stored = ws.snapshot(name)
        if stored is None:
            known = ", ".join(n for n, _ in ws.snapshots()) or "none"
            raise SnapshotError(f"no snapshot named {name!r} in {path}; snapshots: {known}")
        data = stored
        if action == "export":
            if not args.out:
                raise UsageError("snapshot export: where to write: --out FILE")
            _write_json(Path(args.out), data, force=args.force, workspace=Path(path))
            out.print(literal(f"wrote snapshot {name} to {args.out}"))
        else:
            _show(data, as_json=args.json)


def _write_json(path: Path, data: dict[str, Any], *, force: bool, workspace: Path) -> None:
    """Write atomically (``outfiles.write_atomic``), never over the workspace or a database.

    Nor over a device, FIFO or socket, or without ``force`` an existing file.
    """
    from engine.formats.outfiles import write_atomic

    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    write_atomic(path, text, force=force, protect=[workspace])


def _show(data: dict[str, Any], *, as_json: bool) -> None:
    from engine.ci.snapshots import snapshot_means

    means = snapshot_means(data)
    if as_json:
        print_json(
            {
                "name": data["name"],
                "created": data["created"],
                "questions": len(data["golds"]),
                "retrievers": means,
            }
        )
        return
    metrics = data["metrics"]
    table = Table(
        title=literal(f"snapshot {data['name']} ({data['created']}, {len(data['golds'])} scored)"),
        title_justify="left",
    )
    table.add_column("retriever")
    for m in metrics:
        table.add_column(m, justify="right")
    for r, vals in means.items():
        table.add_row(literal(r), *(f"{vals[m]:.3f}" for m in metrics))
    out.print(table)


# -- score --against -----------------------------------------------------------------------


def cmd_score_against(args: argparse.Namespace) -> None:
    """Scores now vs a snapshot, per question; exit 1 on a regression when asked."""
    if args.fail_under:
        raise UsageError("--fail-under and --against are separate gates; run score twice")
    if args.tolerance is not None and not args.fail_on_regression:
        raise UsageError("--tolerance goes with --fail-on-regression")
    tolerance = args.tolerance or 0  # --tolerance and --samples: checked as parsed
    from engine.ci.gate import regression_verdict
    from tui.cli.commands import gate
    from tui.cli.commands.common import say_warnings

    given = gate.parse_given(args)
    gate.check_report_paths(args, Path(args.workspace))
    quiet = args.json or args.quiet or args.markdown == "-"
    with open_workspace(args.workspace, readonly=bool(given)) as ws:
        check_tag(ws, args.tag)
        snap = resolve_snapshot(ws, args.against)
        rankings = gate.prepare(ws, args, given, quiet)
        diff = diff_against(
            ws,
            snap,
            retrievers=args.retriever,
            tag=args.tag,
            samples=args.samples,
            given=rankings.given,
            cannot_rank=rankings.cannot_rank(),
            min_judged=args.min_judged,
        )
        verdict = regression_verdict(
            diff,
            tolerance=tolerance,
            rankings=rankings,
            named=given.names() | set(args.retriever or ()),
            workspace=args.workspace,
        )
        how = {n: w for n, w in rankings.how.items() if n in diff.scored_now}
        if args.junit_xml or args.markdown:
            from engine.ci.rankings import winners
            from engine.ci.reports import junit_xml, markdown_against, question_cases
            from engine.scoring import score_workspace

            board = score_workspace(
                ws,
                metrics=["mrr"],
                retrievers=args.retriever,
                tag=args.tag,
                given=rankings.given,
                cannot_rank=rankings.cannot_rank(),
            )
            texts = {q.id: q.text for q in ws.questions()}
            tops = winners(ws, rankings, verdict.retrievers, board.question_ids)
            cases = question_cases(verdict, board, texts, tops)
            title = f"goldpan score {args.workspace} against {diff.against}"
            gate.write_reports(
                args,
                ws.path,
                junit_xml(cases, f"goldpan {ws.path.name}", verdict),
                markdown_against(diff, verdict, cases, how, title),
            )
    if args.json:
        gated = {"gate": verdict.to_json()} if args.fail_on_regression else {}
        print_json({**diff.to_json(), "rankings": how, **gated})
    elif args.markdown != "-":
        _print_diff(diff)
    if not args.json:
        gate.say_how(rankings, diff.scored_now)
        if not args.fail_on_regression:  # else the verdict's warnings say it (gate.present)
            say_warnings(diff.warnings)
    if args.fail_on_regression:
        gate.present(verdict)


def _rank(r: int) -> str:
    return str(r) if r else "-"


def _print_diff(diff: SnapshotDiff) -> None:
    out.print(literal(f"against snapshot {diff.against} ({diff.created})", style="bold"))
    if diff.labels_changed:
        out.print(
            literal(
                f"labels changed since then on {len(diff.labels_changed)} question(s): "
                + ", ".join(diff.labels_changed[:10])
                + (" ..." if len(diff.labels_changed) > 10 else "")
            )
        )
    for r in diff.missing:
        err.print(literal(f"{r} is in the snapshot but not in the workspace now"))
    for r, d in diff.retrievers.items():
        title = f"{r}: {d.paired} questions scored then and now"
        if d.changed_config:
            title += " (its configuration changed)"
        if not d.paired:  # a table of zeros (means over no question) would say nothing true
            out.print(literal(title + ": nothing to compare"))
            _say_not_compared(r, d)
            continue
        table = Table(
            title=literal(title),
            title_justify="left",
            caption=f"verdict: {rule()}",
            caption_justify="left",
        )
        for col in ("metric", "then", "now", "diff", "95% interval", "p", "verdict"):
            table.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
        for m, c in d.metrics.items():
            lo, hi = c.ci95
            style = ("bold green" if c.diff > 0 else "bold red") if c.verdict.real else ""
            table.add_row(
                m,
                f"{c.then:.3f}",
                f"{c.now:.3f}",
                Text(f"{c.diff:+.3f}", style=style),
                f"[{lo:+.3f}, {hi:+.3f}]",
                f"{c.p_value:.3f}",
                c.verdict.short(),
            )
        out.print(table)
        for label, rows, style in (
            ("got worse", d.regressed, "red"),
            ("got better", d.improved, "green"),
        ):
            if not rows:
                out.print(literal(f"{r}: no question {label}", style="dim"))
                continue
            t = Table(title=literal(f"{r}: {len(rows)} question(s) {label}"), title_justify="left")
            for col in ("question", "rank then", "rank now", "rank 1 now", "because"):
                t.add_column(col, justify="right" if col.startswith("rank ") else "left")
            for mv in rows:
                t.add_row(
                    literal(mv.question),
                    _rank(mv.rank_then),
                    Text(_rank(mv.rank_now), style=style),
                    literal(mv.winner or "-"),
                    CAUSES[mv.cause],
                )
            out.print(t)
        if d.only_now or d.only_then:
            _say_not_compared(r, d)


def _say_not_compared(retriever: str, d: RetrieverDiff) -> None:
    """The questions scored on one side only (not in the comparison)."""
    out.print(
        literal(
            f"{retriever}: not compared: {len(d.only_now)} question(s) scored only now, "
            f"{len(d.only_then)} only then",
            style="dim",
        )
    )
