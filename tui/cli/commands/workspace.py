"""Commands that build and keep a workspace: new, import, pool, retriever, export, docs, info.

Each command imports the engine modules it uses when it runs (see :mod:`tui.cli`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from engine import __version__
from engine.names import is_retriever_name, retriever_name_problem
from tui.cli.commands.common import (
    UsageError,
    check_retrievers,
    err,
    open_workspace,
    out,
    print_json,
    progress_bar,
    say_skipped,
)
from tui.literal import literal

if TYPE_CHECKING:
    from engine.types import RetrieverSpec


def cmd_new(args: argparse.Namespace) -> None:
    """Create a workspace with the default retrievers."""
    from engine.workspace_setup import new_workspace

    ws = new_workspace(Path(args.workspace))
    names = ", ".join(s.name for s in ws.retrievers())
    ws.close()
    out.print(literal(f"created {args.workspace} with retrievers {names}"))


def cmd_import(args: argparse.Namespace) -> None:
    """Import one kind of file; one transaction."""
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

    with open_workspace(args.workspace) as ws:
        path = Path(args.path)
        what = args.what
        if what == "docs":
            report = import_docs(ws, path, args.format)
        elif what == "questions":
            report = import_questions(ws, path, args.annotator, replace_labels=args.replace_labels)
        elif what == "run":
            if not is_retriever_name(args.name):
                raise UsageError(retriever_name_problem(args.name, "--name", "es-prod"))
            report = import_run(ws, path, args.name, replace=args.replace)
        elif what == "qrels":
            report = import_qrels(ws, path, args.annotator)
        elif what == "labels":
            report = import_labels(ws, path)
        elif what == "verdicts":
            report = import_verdicts(ws, path)
        elif what == "beir":
            report = import_beir(
                ws, path, args.split, args.annotator, replace_labels=args.replace_labels
            )
        else:
            report = import_squad(
                ws,
                path,
                args.level,
                args.annotator,
                replace_labels=args.replace_labels,
                onto=args.onto,
            )
    for warning in report.warnings:
        err.print(literal(f"goldpan: warning: {warning}"))
    out.print(literal(f"imported {path.name}: {report.summary()}"))


def cmd_pool(args: argparse.Namespace) -> None:
    """Run retrievers over every question and cache their rankings."""
    from engine import gc_policy

    collecting = gc_policy.pause()  # a pool is a job that ends, its imports and report too
    try:
        _pool(args)
    finally:
        gc_policy.resume(collecting)


def _pool(args: argparse.Namespace) -> None:
    with open_workspace(args.workspace) as ws:
        if ws.readonly:
            raise UsageError(
                f"{args.workspace} is read-only ({ws.readonly_reason}); pooling stores rankings"
            )
        if not ws.question_ids():
            raise UsageError(f"{args.workspace} has no questions yet; import some first")
        # the first write's soundness checks read every page: they start now, beside the
        # imports (numpy) and the indexing, and that write waits for their verdict
        ws.check_soundness_behind()
        from engine.analysis.analyses import pool_contributions
        from engine.pooling import DEFAULT_POOL_DEPTH as POOL_DEPTH
        from engine.retrieve.runner import PreparedRetrievers, refresh_runs
        from tui.cli import keep_to_exit

        prepared = PreparedRetrievers()  # its indexes and token lists: freed by the exit
        keep_to_exit(prepared)
        with progress_bar(not args.quiet) as progress:
            report = refresh_runs(
                ws,
                args.retriever,
                prepared=prepared,
                depth=args.depth,
                force=args.force,
                progress=progress,
                keep_top=POOL_DEPTH,
            )
        say_skipped(args.workspace, report)
        # from the rankings just made, in memory: only those cached are read back
        adds = pool_contributions(ws, POOL_DEPTH, report.top)
        keep_to_exit(report, adds)
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
            f"top {POOL_DEPTH}; '-' for a retriever that fuses or reorders others' rankings",
            style="dim",
        )
    )


def cmd_retriever(args: argparse.Namespace) -> None:
    """Add, list or remove retrievers."""
    with open_workspace(args.workspace) as ws:
        if args.action == "list":
            specs = ws.retrievers()
            if args.json:
                print_json([{"name": s.name, "kind": s.kind, "params": s.params} for s in specs])
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
            from engine.retrieve import check_spec
            from engine.trust import TrustStore, is_local_model, model_of

            spec = _spec_from_args(args)
            check_spec(spec, ws.retrievers())
            ws.add_retriever(spec)
            out.print(literal(f"added {spec.name}; run `goldpan pool` to rank the questions"))
            model = model_of(spec)
            if model and not is_local_model(model):  # typed here: trusted by being typed
                TrustStore().trust(ws, [spec])
                out.print(
                    literal(
                        f"trusted the model name {model!r} for {args.workspace}: not a folder "
                        "on this machine, it loads from the Hugging Face hub (downloaded once)"
                    )
                )
        else:
            from engine.retrieve import dependents

            check_retrievers(ws, args.name, "retriever remove")
            readers = dependents(ws.retrievers(), args.name)
            if readers:
                raise UsageError(
                    f"{', '.join(readers)} read{'s' if len(readers) == 1 else ''} "
                    f"{args.name}'s rankings; remove {'it' if len(readers) == 1 else 'them'} first"
                )
            ws.remove_retriever(args.name)
            out.print(literal(f"removed {args.name} and its cached rankings"))


def _spec_from_args(args: argparse.Namespace) -> RetrieverSpec:
    """The spec a `retriever add` command line asks for (checked by the caller)."""
    from tui.cli.commands.retriever_options import spec_from_args

    if not is_retriever_name(args.name):
        raise UsageError(retriever_name_problem(args.name))
    return spec_from_args(args.name, args)


def cmd_export(args: argparse.Namespace) -> None:
    """Write qrels, runs, labels, questions, or a BEIR or ranx folder."""
    from engine.export import export_workspace

    if args.out and args.out_pos and args.out != args.out_pos:
        raise UsageError("give the output once: OUT or --out PATH")
    raw = args.out or args.out_pos
    if not raw:
        raise UsageError("where to write: --out PATH")
    with open_workspace(args.workspace, readonly=False) as ws:
        retrievers = [args.retriever] if args.retriever else None
        line = export_workspace(ws, args.format, Path(raw), retrievers, force=args.force)
    out.print(literal(line))


def cmd_docs(args: argparse.Namespace) -> None:
    """List the documents, or those that hold a text."""
    from rich.text import Text

    from tui.literal import highlighted
    from tui.render import doc_cell

    search = args.search
    if search is not None and not search.strip():
        raise UsageError("--search needs some text to look for")
    with open_workspace(args.workspace) as ws:
        listing = ws.list_docs(search, args.limit or None)
    if args.json:
        print_json(
            {
                "search": search,
                "total": listing.total,
                "corpus": listing.corpus,
                "docs": [
                    {
                        "id": d.id,
                        "title": d.title,
                        "length": d.length,
                        "found_in": list(d.found_in),
                        "snippet": d.snippet,
                    }
                    for d in listing.docs
                ],
            }
        )
        return
    if search is not None and not listing.total:
        out.print(
            literal(
                f"no document holds {search!r} in its id, title or text "
                f"({listing.corpus:,} documents searched)"
            )
        )
        return
    table = Table(title_justify="left", caption_justify="left")
    table.add_column("id", no_wrap=True)
    table.add_column("title")
    table.add_column("length", justify="right", no_wrap=True)
    if search is not None:
        table.add_column("found in", no_wrap=True)
        table.add_column("text around it")
    found = [search] if search is not None else []
    for d in listing.docs:
        row = [doc_cell(d.id, ""), highlighted(d.title, found, "bold"), Text(f"{d.length:,}")]
        if search is not None:
            row += [Text(", ".join(d.found_in)), highlighted(d.snippet or "", found, "bold")]
        table.add_row(*row)
    what = "documents" if search is None else f"documents holding {search!r}"
    table.title = literal(f"{what}: {listing.total:,}")
    shown = len(listing.docs)
    if shown < listing.total:
        table.caption = f"{shown:,} shown of {listing.total:,}: --limit N shows more (0: all)"
    out.print(table)


_INFO_ROWS = {
    # the counter every view calls "disputed" also holds the questions whose status is
    # ambiguous (engine.counters.is_disputed): said here, next to the status counts
    "disputed": "disputed (incl. ambiguous: to adjudicate)",
    "stopped": "stopped (questions, candidates not judged)",
}


def cmd_info(args: argparse.Namespace) -> None:
    """Counts and schema version."""
    from engine.counters import workspace_counters
    from engine.gold import workspace_golds

    with open_workspace(args.workspace) as ws:
        counts = ws.counts()
        golds = workspace_golds(ws)
        counters = workspace_counters(ws)
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
            "disputed": counters["disputed"],
            "judged_by": counters["judged_by"],
            "judgments_for_an_old_text": sum(ws.recheck_counts().values()),
            "stopped": counters["stopped"],
        }
    if args.json:
        print_json(info)
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
        table.add_row(_INFO_ROWS.get(k, k.replace("_", " ")), literal(str(v)))
    out.print(table)
