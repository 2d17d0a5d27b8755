"""Commands that build and keep a workspace.

new, import, pool, retriever, export, info, demo and open.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from rich.table import Table

from engine import __version__
from engine.analysis import pool_contributions
from engine.ingest import (
    import_beir,
    import_docs,
    import_labels,
    import_qrels,
    import_questions,
    import_run,
    import_squad,
    import_verdicts,
)
from engine.pooling import DEFAULT_POOL_DEPTH as POOL_DEPTH
from engine.retrieve import DEFAULT_DEPTH, check_spec, dependents
from engine.retrieve.runner import refresh_runs
from engine.scoring import DEFAULT_KS, metric_names, score_workspace, workspace_golds
from engine.types import RetrieverSpec
from engine.workspace_setup import new_workspace
from tui.commands.common import (
    UsageError,
    _annotator,
    _json,
    _open,
    _pool,
    _progress,
    err,
    out,
)
from tui.commands.retriever_options import spec_from_args
from tui.commands.scores import score_table
from tui.literal import literal


def cmd_new(args: argparse.Namespace) -> None:
    """Create a workspace with the default retrievers."""
    ws = new_workspace(Path(args.workspace))
    names = ", ".join(s.name for s in ws.retrievers())
    ws.close()
    out.print(literal(f"created {args.workspace} with retrievers {names}"))


def cmd_import(args: argparse.Namespace) -> None:
    """Import one kind of file; one transaction."""
    with _open(args.workspace) as ws:
        path = Path(args.path)
        what = args.what
        if what == "docs":
            report = import_docs(ws, path, args.format)
        elif what == "questions":
            report = import_questions(ws, path, args.annotator)
        elif what == "run":
            if not _NAME.match(args.name):
                raise UsageError(
                    f"--name {args.name!r}: use no spaces, ':', '=' or ',' (e.g. es-prod)"
                )
            report = import_run(ws, path, args.name, replace=args.replace)
        elif what == "qrels":
            report = import_qrels(ws, path, args.annotator)
        elif what == "labels":
            report = import_labels(ws, path)
        elif what == "verdicts":
            report = import_verdicts(ws, path)
        elif what == "beir":
            report = import_beir(ws, path, args.split, args.annotator)
        else:
            report = import_squad(ws, path, args.level, args.annotator)
    out.print(literal(f"imported {path.name}: {report.summary()}"))


def cmd_pool(args: argparse.Namespace) -> None:
    """Run retrievers over every question and cache their rankings."""
    if args.depth < 1:
        raise UsageError("--depth must be at least 1")
    with _open(args.workspace) as ws:
        if ws.readonly:
            raise UsageError(
                f"{args.workspace} is read-only ({ws.readonly_reason}); pooling stores rankings"
            )
        if not ws.question_ids():
            raise UsageError(f"{args.workspace} has no questions yet; import some first")
        with _progress(not args.quiet) as progress:
            report = refresh_runs(
                ws, args.retriever, depth=args.depth, force=args.force, progress=progress
            )
        adds = pool_contributions(ws, POOL_DEPTH)
    table = Table(title="pool", title_justify="left")
    columns = (
        "retriever",
        "questions run",
        "cached and valid",
        "seconds",
        f"only it found (top {POOL_DEPTH})",
        "of them gold",
    )
    for col in columns:
        table.add_column(col, justify="left" if col == "retriever" else "right")
    for name in report.ran:
        secs = report.seconds.get(name)
        add = adds.get(name)
        table.add_row(
            literal(name),
            str(report.ran[name]),
            str(report.cached[name]),
            "-" if secs is None else f"{secs:.2f}",
            "-" if add is None else str(len(add.only)),
            "-" if add is None else str(add.gold),
        )
    out.print(table)
    err.print(
        literal(
            "only it found: pooled documents no other first-stage retriever ranked in its "
            f"top {POOL_DEPTH} (kinds that read other rankings: -)",
            style="dim",
        )
    )


def cmd_retriever(args: argparse.Namespace) -> None:
    """Add, list or remove retrievers."""
    with _open(args.workspace) as ws:
        if args.action == "list":
            specs = ws.retrievers()
            if args.json:
                _json([{"name": s.name, "kind": s.kind, "params": s.params} for s in specs])
                return
            table = Table(title="retrievers", title_justify="left")
            table.add_column("name")
            table.add_column("kind")
            table.add_column("parameters")
            for s in specs:
                params = " ".join(f"{k}={v}" for k, v in sorted(s.params.items()))
                table.add_row(literal(s.name), literal(s.kind), literal(params))
            out.print(table)
        elif args.action == "add":
            spec = _spec_from_args(args)
            check_spec(spec, ws.retrievers())
            ws.add_retriever(spec)
            out.print(literal(f"added {spec.name}; run `goldpan pool` to rank the questions"))
        else:
            readers = dependents(ws.retrievers(), args.name)
            if readers:
                raise UsageError(
                    f"{', '.join(readers)} read{'s' if len(readers) == 1 else ''} "
                    f"{args.name}'s rankings; remove {'it' if len(readers) == 1 else 'them'} first"
                )
            ws.remove_retriever(args.name)
            out.print(literal(f"removed {args.name} and its cached rankings"))


_NAME = re.compile(r"^[^\s:=,]+$")


def _spec_from_args(args: argparse.Namespace) -> RetrieverSpec:
    """The spec a `retriever add` command line asks for (checked by the caller)."""
    if not _NAME.match(args.name):
        raise UsageError(
            f"retriever name {args.name!r}: use no spaces, ':', '=' or ',' (e.g. bm25-word)"
        )
    return spec_from_args(args.name, args)


def cmd_export(args: argparse.Namespace) -> None:
    """Write qrels, runs, labels, questions, or a BEIR or ranx folder."""
    from engine.formats import export_workspace

    if args.out and args.out_pos and args.out != args.out_pos:
        raise UsageError("give the output once: OUT or --out PATH")
    raw = args.out or args.out_pos
    if not raw:
        raise UsageError("where to write: --out PATH")
    with _open(args.workspace, readonly=False) as ws:
        retrievers = [args.retriever] if args.retriever else None
        line = export_workspace(ws, args.format, Path(raw), retrievers)
    out.print(literal(line))


def cmd_info(args: argparse.Namespace) -> None:
    """Counts and schema version."""
    with _open(args.workspace) as ws:
        counts = ws.counts()
        golds = workspace_golds(ws)
        status: dict[str, int] = {}
        for g in golds.values():
            status[g.status.value] = status.get(g.status.value, 0) + 1
        info = {
            "workspace": str(args.workspace),
            "schema_version": ws.schema_version,
            "goldpan_version": __version__,
            "docs": counts["docs"],
            "questions": counts["questions"],
            "labels": counts["labels"],
            "verdicts": counts["verdicts"],
            "retrievers": counts["retrievers"],
            "cached_runs": counts["runs"],
            "annotators": ws.annotators(),
            "question_status": dict(sorted(status.items())),
        }
    if args.json:
        _json(info)
        return
    table = Table(title=literal(str(args.workspace)), title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    for k, v in info.items():
        if k == "workspace":
            continue
        if isinstance(v, dict):
            v = ", ".join(f"{a} {b}" for a, b in v.items())
        elif isinstance(v, list):
            v = ", ".join(v) or "-"
        table.add_row(k.replace("_", " "), literal(str(v)))
    out.print(table)


def _run_app(path: Path, annotator: str | None, *, readonly: bool = False) -> None:
    from tui.app import GoldpanApp

    # a clear error (exit 2) before the screen is taken over; an upgrade happens here
    with _open(str(path), readonly=readonly) as ws:
        backup = ws.backup_path
    GoldpanApp(path, annotator=_annotator(annotator), readonly=readonly, backup=backup).run()


def cmd_open(args: argparse.Namespace) -> None:
    """Open a workspace in the TUI."""
    _run_app(Path(args.workspace), args.annotator, readonly=args.read_only)


def cmd_demo(args: argparse.Namespace) -> None:
    """Build the demo workspace if needed, then show its scores."""
    from engine.demo import build_demo

    path = Path(args.path)
    if args.force or not path.exists():
        with _progress(True) as progress:
            build_demo(path, force=args.force, progress=progress).close()
        err.print(literal(f"built the demo workspace at {path}"))
    with _open(str(path)) as ws:
        _pool(ws, None, DEFAULT_DEPTH, quiet=False)
        if args.no_open:
            board = score_workspace(ws)
    if args.no_open:
        out.print(score_table(board, metric_names(DEFAULT_KS), None))
    else:
        _run_app(path, args.annotator)
