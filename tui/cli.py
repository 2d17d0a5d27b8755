"""The ``goldpan`` console script: the engine's jobs from a terminal or a CI job.

Exit codes: 0 done; 1 a ``--fail-under`` floor was missed; 2 bad input or usage (the
message names the file, the line and what was expected; the workspace is unchanged).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from engine import __version__
from engine.ingest import (
    DOC_FORMATS,
    IngestError,
    import_beir,
    import_docs,
    import_labels,
    import_qrels,
    import_questions,
    import_squad,
    import_verdicts,
)
from engine.metrics import parse_metric
from engine.retrieve import DEFAULT_DEPTH, RETRIEVER_KINDS, VARIANTS, bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.scoring import DEFAULT_KS, Scoreboard, metric_names, score_workspace, workspace_golds
from engine.tokenize import TOKENIZERS
from engine.types import VERDICTS, RetrieverSpec
from engine.workspace import Workspace, WorkspaceError
from engine.workspace_setup import new_workspace

DEMO_PATH = Path("workspaces") / "demo.db"

# Tables keep their full width when written to a pipe or a CI log (rich assumes 80).
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class UsageError(Exception):
    """A command line that cannot be carried out; exit code 2."""


class GateFailed(Exception):
    """A ``--fail-under`` floor was missed; exit code 1."""


# -- helpers ------------------------------------------------------------------------------


def _open(path: str, *, readonly: bool = False) -> Workspace:
    return Workspace.open(Path(path), readonly=readonly)


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar on a terminal (stderr), nothing otherwise."""
    if not enabled or not err.is_terminal:
        yield None
        return
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
                tasks[name] = bar.add_task(Text(name).markup, total=total)
            bar.update(tasks[name], completed=done, total=total)

        yield update


def _pool(ws: Workspace, names: Sequence[str] | None, depth: int, quiet: bool) -> None:
    with _progress(not quiet) as progress:
        report = refresh_runs(ws, names, depth=depth, progress=progress)
    if not quiet and any(report.ran.values()):
        ran = ", ".join(f"{n} {c}" for n, c in report.ran.items() if c)
        err.print(Text(f"pooled (questions run): {ran}"))


def _json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def _parse_ks(raw: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in raw.split(",") if x.strip()})
    except ValueError:
        raise UsageError(f"--k {raw!r}: expected positive whole numbers, e.g. 1,3,5,10") from None
    if not ks or ks[0] < 1:
        raise UsageError(f"--k {raw!r}: expected positive whole numbers, e.g. 1,3,5,10")
    return ks


_FLOOR = re.compile(r"^(?:(?P<retriever>[^:=]+):)?(?P<metric>[^:=]+)=(?P<value>.+)$")


def _parse_floors(raw: Sequence[str]) -> list[tuple[str | None, str, float]]:
    floors = []
    for item in raw:
        m = _FLOOR.match(item.strip())
        if not m:
            raise UsageError(
                f"--fail-under {item!r}: expected METRIC=VALUE or RETRIEVER:METRIC=VALUE"
            )
        try:
            value = float(m["value"])
        except ValueError:
            raise UsageError(f"--fail-under {item!r}: {m['value']!r} is not a number") from None
        floors.append((m["retriever"], m["metric"].strip().lower(), value))
    return floors


# -- commands -----------------------------------------------------------------------------


def cmd_new(args: argparse.Namespace) -> None:
    """Create a workspace with the default retrievers."""
    ws = new_workspace(Path(args.workspace))
    names = ", ".join(s.name for s in ws.retrievers())
    ws.close()
    out.print(Text(f"created {args.workspace} with retrievers {names}"))


def cmd_import(args: argparse.Namespace) -> None:
    """Import one kind of file; one transaction."""
    with _open(args.workspace) as ws:
        path = Path(args.path)
        what = args.what
        if what == "docs":
            report = import_docs(ws, path, args.format)
        elif what == "questions":
            report = import_questions(ws, path)
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
    out.print(Text(f"imported {path.name}: {report.summary()}"))


def cmd_pool(args: argparse.Namespace) -> None:
    """Run retrievers over every question and cache their rankings."""
    if args.depth < 1:
        raise UsageError("--depth must be at least 1")
    with _open(args.workspace) as ws:
        if not ws.question_ids():
            raise UsageError(f"{args.workspace} has no questions yet; import some first")
        with _progress(not args.quiet) as progress:
            report = refresh_runs(
                ws, args.retriever, depth=args.depth, force=args.force, progress=progress
            )
    table = Table(title="pool", title_justify="left")
    for col in ("retriever", "questions run", "cached and valid", "seconds"):
        table.add_column(col, justify="left" if col == "retriever" else "right")
    for name in report.ran:
        secs = report.seconds.get(name)
        table.add_row(
            Text(name),
            str(report.ran[name]),
            str(report.cached[name]),
            "-" if secs is None else f"{secs:.2f}",
        )
    out.print(table)


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
                table.add_row(Text(s.name), Text(s.kind), Text(params))
            out.print(table)
        elif args.action == "add":
            spec = _spec_from_args(args)
            ws.add_retriever(spec)
            out.print(Text(f"added {spec.name}; run `goldpan pool` to rank the questions"))
        else:
            ws.remove_retriever(args.name)
            out.print(Text(f"removed {args.name} and its cached rankings"))


_NAME = re.compile(r"^[^\s:=,]+$")


def _spec_from_args(args: argparse.Namespace) -> RetrieverSpec:
    if not _NAME.match(args.name):
        raise UsageError(
            f"retriever name {args.name!r}: use no spaces, ':', '=' or ',' (e.g. bm25-word)"
        )
    if args.kind != "bm25":
        raise UsageError(
            f"kind {args.kind!r} is not available; known kinds: {', '.join(RETRIEVER_KINDS)}"
        )
    fields = [f.strip() for f in args.fields.split(",") if f.strip()]
    return bm25_spec(args.name, args.tokenizer, args.variant, args.k1, args.b, fields)


def _score_table(board: Scoreboard, names: Sequence[str], tag: str | None) -> Table:
    title = "scores" + (f" (tag {tag})" if tag else "")
    c = board.counts
    caption = (
        f"{c['scored']} scored · {c['no_answer']} no answer · {c['disputed']} disputed · "
        f"{c['unlabeled']} unlabeled"
    )
    table = Table(title=Text(title), title_justify="left", caption=caption, caption_justify="left")
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
        )
    table.add_column("ms/q", justify="right")
    best = {n: max((rs.means[n] for rs in board.retrievers.values()), default=0.0) for n in shown}
    for name, rs in board.retrievers.items():
        cells: list[Text | str] = [Text(name)]
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
    if args.json:
        _json(board.to_json())
    else:
        out.print(_score_table(board, names, args.tag))
        missing = {n: rs.missing for n, rs in board.retrievers.items() if rs.missing}
        if missing:
            err.print(Text(f"not pooled yet (counted as misses): {missing}"))
    failures = []
    for retriever, metric, floor in floors:
        if retriever is not None and retriever not in board.retrievers:
            raise UsageError(f"--fail-under names unknown retriever {retriever!r}")
        for name, rs in board.retrievers.items():
            if retriever in (None, name) and rs.means[metric] < floor:
                failures.append(f"{name} {metric} {rs.means[metric]:.4f} < {floor:g}")
    if failures:
        raise GateFailed("below the floor: " + "; ".join(failures))


def cmd_export(args: argparse.Namespace) -> None:
    """Write qrels, runs or labels."""
    from engine.formats import write_labels_csv, write_trec_qrels, write_trec_run
    from engine.retrieve.runner import select_retrievers

    target = Path(args.out)
    with _open(args.workspace, readonly=False) as ws:
        if args.format == "trec-qrels":
            golds = workspace_golds(ws)
            gold = {q: g.gold for q, g in golds.items() if g.gold}
            with target.open("w", encoding="utf-8", newline="\n") as f:
                n = write_trec_qrels(f, gold)
        elif args.format == "trec-run":
            specs = select_retrievers(ws, [args.retriever] if args.retriever else None)
            runs = [r for s in specs for r in ws.runs(s.name).values()]
            with target.open("w", encoding="utf-8", newline="\n") as f:
                n = write_trec_run(f, runs)
        else:
            with target.open("w", encoding="utf-8", newline="") as f:
                n = write_labels_csv(f, ws.labels())
    out.print(Text(f"wrote {n} lines to {target}"))


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
    table = Table(title=Text(str(args.workspace)), title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    for k, v in info.items():
        if k == "workspace":
            continue
        if isinstance(v, dict):
            v = ", ".join(f"{a} {b}" for a, b in v.items())
        elif isinstance(v, list):
            v = ", ".join(v) or "-"
        table.add_row(k.replace("_", " "), Text(str(v)))
    out.print(table)


def _run_app(path: Path, annotator: str | None) -> None:
    from tui.app import make_app

    Workspace.open(path).close()  # a clear error (exit 2) before the screen is taken over
    make_app(path, annotator=_annotator(annotator)).run()


def cmd_open(args: argparse.Namespace) -> None:
    """Open a workspace in the TUI."""
    _run_app(Path(args.workspace), args.annotator)


def cmd_demo(args: argparse.Namespace) -> None:
    """Build the demo workspace if needed, then show its scores."""
    from engine.demo import build_demo

    path = Path(args.path)
    if args.force or not path.exists():
        with _progress(True) as progress:
            build_demo(path, force=args.force, progress=progress).close()
        err.print(Text(f"built the demo workspace at {path}"))
    with _open(str(path)) as ws:
        _pool(ws, None, DEFAULT_DEPTH, quiet=False)
        if args.no_open:
            board = score_workspace(ws)
    if args.no_open:
        out.print(_score_table(board, metric_names(DEFAULT_KS), None))
    else:
        _run_app(path, args.annotator)


def _floats(raw: str, flag: str) -> list[float]:
    try:
        values = [float(x) for x in raw.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"{flag} {raw!r}: expected numbers separated by commas") from None
    if not values or not all(math.isfinite(v) and v >= 0 for v in values):
        raise UsageError(f"{flag} {raw!r}: expected non-negative numbers separated by commas")
    return values


def _annotator(name: str | None) -> str:
    """--annotator, else $GOLDPAN_ANNOTATOR, else the login name."""
    import getpass

    if name:
        return name
    if os.environ.get("GOLDPAN_ANNOTATOR"):
        return os.environ["GOLDPAN_ANNOTATOR"]
    try:
        return getpass.getuser()
    except Exception:  # no login name in this environment (some containers)
        return "annotator"


def cmd_label(args: argparse.Namespace) -> None:
    """Grade one document for one question (what the judge screen's keys do)."""
    from engine.types import Label

    if not 0 <= args.grade <= 3:
        raise UsageError(f"grade {args.grade} is out of range; expected 0-3")
    who = _annotator(args.annotator)
    with _open(args.workspace) as ws:
        if ws.question(args.question) is None:
            raise UsageError(f"unknown question {args.question!r}")
        if ws.doc(args.doc) is None:
            raise UsageError(f"unknown document {args.doc!r}")
        ws.write_labels([Label(args.question, args.doc, who, args.grade)])
    out.print(Text(f"{who}: {args.question} {args.doc} = {args.grade}"))


def cmd_verdict(args: argparse.Namespace) -> None:
    """Give a verdict on a question (no answer, ambiguous, skip, answerable)."""
    from engine.types import Verdict

    who = _annotator(args.annotator)
    with _open(args.workspace) as ws:
        if ws.question(args.question) is None:
            raise UsageError(f"unknown question {args.question!r}")
        ws.write_verdicts([Verdict(args.question, who, args.verdict, args.note)])
    out.print(Text(f"{who}: {args.question} is {args.verdict}"))


def cmd_agreement(args: argparse.Namespace) -> None:
    """Cohen's kappa per annotator pair, Krippendorff's alpha, verdict agreement."""
    from engine.agreement import agreement_report

    with _open(args.workspace) as ws:
        report = agreement_report(ws.labels(), ws.verdicts())
    if args.json:
        _json(report)
        return
    table = Table(
        title="Cohen's kappa on relevant or not, per annotator pair", title_justify="left"
    )
    for col in ("annotator A", "annotator B", "shared judgments", "kappa"):
        table.add_column(col, justify="right" if col in ("kappa", "shared judgments") else "left")
    for p in report["pairs"]:
        table.add_row(Text(p["a"]), Text(p["b"]), str(p["n"]), f"{p['kappa']:.3f}")
    out.print(table)
    alpha = report["alpha_ordinal"]
    out.print(
        Text(
            f"Krippendorff's alpha (ordinal, grades 0-3) over {report['units']} "
            f"(question, document) pairs judged twice or more: "
            + ("-" if alpha is None else f"{alpha:.3f}")
        )
    )
    table = Table(title="agreement on answerable vs no answer", title_justify="left")
    for col in ("annotator A", "annotator B", "questions", "agreement", "kappa"):
        table.add_column(col, justify="left" if col.startswith("annotator") else "right")
    for v in report["verdicts"]:
        table.add_row(
            Text(v["a"]), Text(v["b"]), str(v["n"]), f"{v['agreement']:.0%}", f"{v['kappa']:.3f}"
        )
    out.print(table)


def cmd_merge(args: argparse.Namespace) -> None:
    """Bring separately labeled workspaces together (labels keep their annotators)."""
    from engine.merge import merge_workspaces

    report = merge_workspaces(Path(args.out), [Path(p) for p in args.inputs])
    out.print(Text(f"merged into {args.out}: {report.summary()}"))
    for conflict in report.conflicts:
        err.print(Text(f"conflict: {conflict}"))


def cmd_queue(args: argparse.Namespace) -> None:
    """What to judge next, and how much of each retriever's top k is judged."""
    from engine.queue import coverage_at_k, judged_docs, judging_queue

    if args.k < 1:
        raise UsageError("--k must be at least 1")
    with _open(args.workspace) as ws:
        _pool(ws, None, DEFAULT_DEPTH, quiet=args.json)
        golds = workspace_golds(ws)
        rankings = ws.all_runs()
        judged = judged_docs([(lab.question_id, lab.doc_id) for lab in ws.labels()])
    queue = judging_queue(golds, rankings, judged, args.k)
    coverage = coverage_at_k(rankings, judged, args.k)
    if args.json:
        _json(
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
        table.add_row(Text(name), f"{share:.0%}")
    out.print(table)
    table = Table(title=f"judging queue ({len(queue)})", title_justify="left")
    for col in ("question", "status", "unjudged in pool", "why"):
        table.add_column(col, justify="right" if col.startswith("unjudged") else "left")
    for i in queue:
        table.add_row(Text(i.question_id), i.status.value, str(i.unjudged), i.reason)
    out.print(table)


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
        title=Text(
            f"{args.a} vs {args.b} on {result.metric}" + (f" (tag {args.tag})" if args.tag else "")
        ),
        title_justify="left",
        show_header=False,
    )
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("questions", str(result.n))
    table.add_row(Text(f"mean {args.a}"), f"{result.mean_a:.4f}")
    table.add_row(Text(f"mean {args.b}"), f"{result.mean_b:.4f}")
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
        title=Text(f"{args.retriever}: gold not at rank 1 ({len(rows)})"), title_justify="left"
    )
    for col in ("question", "gold rank", "rank-1 document", "title", "relation"):
        table.add_column(col, justify="right" if col == "gold rank" else "left")
    for f in rows:
        table.add_row(
            Text(f.question_id),
            str(f.gold_rank or "-"),
            Text(f.top_doc or "-"),
            Text(titles.get(f.top_doc, "")),
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
        Text(
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
    table = Table(title=Text(f"{args.retriever}: {metric} over k1 x b"), title_justify="left")
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
            Text(r.question_id),
            f"{r.title:.0%}",
            "-" if r.gold is None else f"{r.gold:.0%}",
            Text("likely easy", style="yellow") if r.high else "",
        )
    out.print(table)


# -- parser -------------------------------------------------------------------------------


def _command(
    sub: Any,
    name: str,
    help_text: str,
    func: Callable[[argparse.Namespace], None],
    *,
    workspace: bool = True,
    json_flag: bool = False,
) -> argparse.ArgumentParser:
    """A subcommand that takes the workspace first and, optionally, ``--json``."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
    if workspace:
        parser.add_argument("workspace", metavar="WS")
    if json_flag:
        parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=func)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    p = argparse.ArgumentParser(
        prog="goldpan",
        description="Make retrieval test sets that are hard and honest, and score "
        "retrievers on them.",
    )
    p.add_argument("--version", action="version", version=f"goldpan {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = _command(sub, "new", "create a workspace with the default BM25 retrievers", cmd_new)

    imp = sub.add_parser("import", help="import docs, questions, qrels, labels, BEIR or SQuAD")
    isub = imp.add_subparsers(dest="what", required=True, metavar="WHAT")
    s = isub.add_parser("docs", help="a Markdown folder, JSONL (BEIR corpus shape) or CSV")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s.add_argument("--format", choices=DOC_FORMATS, default="auto")
    s = isub.add_parser("questions", help="JSONL (_id/id, text, tags) or CSV (id,text,tags)")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s = isub.add_parser("qrels", help="TREC qrels or a BEIR qrels TSV, as one annotator's labels")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s.add_argument("--annotator", default="import")
    s = isub.add_parser("labels", help="CSV question_id,doc_id,annotator,grade")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s = isub.add_parser("verdicts", help="CSV question_id,annotator,verdict,note")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s = isub.add_parser("beir", help="a BEIR folder: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="DIR")
    s.add_argument("--split", default="test")
    s.add_argument("--annotator", default="import")
    s = isub.add_parser("squad", help="SQuAD 1.1 JSON (e.g. KorQuAD); source doc = gold")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="FILE")
    s.add_argument("--level", choices=("article", "paragraph"), default="article")
    s.add_argument("--annotator", default="import")
    imp.set_defaults(func=cmd_import)

    s = _command(sub, "pool", "run retrievers over every question and cache rankings", cmd_pool)
    s.add_argument("--retriever", action="append", metavar="NAME", help="repeatable; default all")
    s.add_argument("--depth", type=int, default=DEFAULT_DEPTH)
    s.add_argument("--force", action="store_true", help="run again even when cached")
    s.add_argument("--quiet", action="store_true", help="no progress bar")

    r = sub.add_parser("retriever", help="add, list or remove retrievers")
    rsub = r.add_subparsers(dest="action", required=True, metavar="ACTION")
    s = rsub.add_parser("list", help="the configured retrievers")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("--json", action="store_true")
    s = rsub.add_parser("add", help="add a retriever")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("name", metavar="NAME")
    s.add_argument("--kind", default="bm25", help=f"one of {', '.join(RETRIEVER_KINDS)}")
    s.add_argument("--tokenizer", default="word", choices=sorted(TOKENIZERS))
    s.add_argument("--variant", default="lucene", choices=list(VARIANTS))
    s.add_argument("--k1", type=float, default=1.5)
    s.add_argument("--b", type=float, default=0.75)
    s.add_argument("--fields", default="text", help="indexed fields: text, title or title,text")
    s = rsub.add_parser("remove", help="remove a retriever and its cached rankings")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("name", metavar="NAME")
    r.set_defaults(func=cmd_retriever)

    s = _command(
        sub, "score", "Hit@k, MRR, Recall@k, nDCG@10 per retriever", cmd_score, json_flag=True
    )
    s.add_argument("--k", default="1,3,5,10", help="cutoffs for Hit@k and Recall@k")
    s.add_argument("--tag", help="only questions with this tag")
    s.add_argument("--retriever", action="append", metavar="NAME", help="repeatable; default all")
    s.add_argument(
        "--fail-under",
        action="append",
        metavar="[RETRIEVER:]METRIC=VALUE",
        help="exit 1 when a metric is below VALUE (repeatable)",
    )
    s.add_argument("--no-pool", action="store_true", help="do not refresh stale rankings")
    s.add_argument("--quiet", action="store_true", help="no progress bar")

    s = _command(
        sub, "label", "grade a document for a question (0-3), as the judge keys do", cmd_label
    )
    s.add_argument("question", metavar="QID")
    s.add_argument("doc", metavar="DOC")
    s.add_argument("grade", type=int, metavar="GRADE")
    s.add_argument("--annotator", help="default: $GOLDPAN_ANNOTATOR or your login")

    s = _command(
        sub, "verdict", "answerable, no_answer, ambiguous or skip for a question", cmd_verdict
    )
    s.add_argument("question", metavar="QID")
    s.add_argument("verdict", choices=VERDICTS)
    s.add_argument("--note", default="")
    s.add_argument("--annotator", help="default: $GOLDPAN_ANNOTATOR or your login")

    s = sub.add_parser("merge", help="merge separately labeled workspaces (same corpus)")
    s.add_argument("out", metavar="OUT", help="the merged workspace (created when missing)")
    s.add_argument("inputs", nargs="+", metavar="IN")
    s.set_defaults(func=cmd_merge)

    s = _command(
        sub,
        "agreement",
        "inter-annotator agreement: kappa, alpha, verdicts",
        cmd_agreement,
        json_flag=True,
    )

    s = _command(
        sub, "queue", "what to judge next; coverage@k of each retriever", cmd_queue, json_flag=True
    )
    s.add_argument("--k", type=int, default=10, help="pool depth per retriever (default 10)")

    s = _command(
        sub,
        "compare",
        "paired comparison of two retrievers (bootstrap, p-value)",
        cmd_compare,
        json_flag=True,
    )
    s.add_argument("a", metavar="A")
    s.add_argument("b", metavar="B")
    s.add_argument("--metric", default="mrr", help="mrr, hit@k, recall@k, ndcg@k, p@k")
    s.add_argument("--samples", type=int, default=10_000)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--tag", help="only questions with this tag")

    s = _command(
        sub,
        "failures",
        "questions whose gold is not at rank 1, and what won",
        cmd_failures,
        json_flag=True,
    )
    s.add_argument("--retriever", required=True, metavar="NAME")
    s.add_argument("--tag", help="only questions with this tag")

    s = _command(
        sub,
        "noanswer",
        "calibrate a top-1 score threshold for no-answer",
        cmd_noanswer,
        json_flag=True,
    )
    s.add_argument("--retriever", required=True, metavar="NAME")

    s = _command(
        sub, "sweep", "a BM25 retriever's metric over a k1 x b grid", cmd_sweep, json_flag=True
    )
    s.add_argument("--retriever", required=True, metavar="NAME")
    s.add_argument("--k1", default="0.9,1.2,1.5,2.0", metavar="LIST")
    s.add_argument("--b", default="0.4,0.6,0.75,0.9", metavar="LIST")
    s.add_argument("--metric", default="mrr")
    s.add_argument("--tag", help="only questions with this tag")

    s = _command(
        sub,
        "overlap",
        "each question's overlap with titles and gold text",
        cmd_overlap,
        json_flag=True,
    )

    s = _command(sub, "export", "write TREC qrels, a TREC run or the labels CSV", cmd_export)
    s.add_argument("--format", required=True, choices=("trec-qrels", "trec-run", "labels"))
    s.add_argument("out", metavar="OUT")
    s.add_argument("--retriever", metavar="NAME", help="trec-run: one retriever (default all)")

    s = _command(sub, "info", "counts, annotators and schema version", cmd_info, json_flag=True)

    s = sub.add_parser("demo", help="build the demo workspace and open it")
    s.add_argument("--path", default=str(DEMO_PATH))
    s.add_argument("--force", action="store_true", help="rebuild it")
    s.add_argument("--no-open", action="store_true", help="print the scores instead of opening")
    s.add_argument("--annotator", help="your name on labels (default: $GOLDPAN_ANNOTATOR or login)")
    s.set_defaults(func=cmd_demo)

    s = _command(sub, "open", "open a workspace in the terminal UI", cmd_open)
    s.add_argument("--annotator", help="your name on labels (default: $GOLDPAN_ANNOTATOR or login)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except GateFailed as exc:
        err.print(Text(f"goldpan: {exc}"))
        return 1
    except (IngestError, WorkspaceError, UsageError, ValueError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        err.print(Text(f"goldpan: error: {msg}"))
        return 2
    except KeyboardInterrupt:
        err.print(Text("goldpan: interrupted; the workspace keeps what was committed"))
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
