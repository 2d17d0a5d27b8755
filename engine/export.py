"""A workspace to files: ``goldpan export`` in any of :data:`engine.formats.EXPORT_FORMATS`.

The writers live by format in :mod:`engine.formats`; this module gathers what they write
from a workspace and writes it atomically (:mod:`engine.formats.outfiles`).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from engine.errors import BadInput, UnknownName
from engine.formats import EXPORT_FORMATS, FOLDER_FORMATS
from engine.formats.beir import write_beir
from engine.formats.errors import IngestError
from engine.formats.labels import write_labels_csv
from engine.formats.outfiles import atomic_database, atomic_folder, check_target, write_atomic
from engine.formats.questions import write_questions_csv, write_questions_jsonl
from engine.formats.ranx import write_ranx
from engine.formats.sqlite_copy import write_sqlite_copy
from engine.formats.trec import write_trec_qrels, write_trec_run
from engine.gold import Status
from engine.retrieve.runner import select_retrievers
from engine.scoring import workspace_golds
from engine.workspace import Workspace

# -- a workspace to files ------------------------------------------------------------------


def _owned(fmt: str, split: str = "test") -> Callable[[Path], bool]:
    """Which entries of an existing folder a ``fmt`` export writes (and so may replace)."""

    def owned(rel: Path) -> bool:
        parts = rel.parts
        if fmt == "beir":
            return parts in (("corpus.jsonl",), ("queries.jsonl",), ("qrels",)) or (
                len(parts) == 2 and parts[0] == "qrels" and parts[1].endswith(".tsv")
            )
        return len(parts) == 1 and (
            parts[0] == "qrels.json" or (parts[0].startswith("run-") and parts[0].endswith(".json"))
        )

    return owned


def export_workspace(
    ws: Workspace,
    fmt: str,
    target: Path,
    retrievers: Sequence[str] | None = None,
    *,
    force: bool = False,
) -> str:
    """Write the workspace in ``fmt`` to ``target``; returns one line saying what was written.

    ``target`` is a file, or a folder for ``beir`` and ``ranx``. Everything is built in
    memory or in a temporary file or folder beside ``target`` and renamed into place
    (:mod:`engine.formats.outfiles`): a failure leaves no partial output and an older ``target``
    intact. An existing ``target`` is replaced only with ``force`` (a folder only when it
    holds nothing but this format's files); the workspace itself, any SQLite file and
    devices are never written. ``sqlite`` is written only where nothing is, not even a
    symbolic link, whatever ``force`` says (a database is never written over).
    ``retrievers`` limits ``trec-run`` and ``ranx`` (default: all).

    Raises:
        UnknownName: unknown format.
        IngestError: a target that cannot be written as asked, ids the format cannot hold,
            or a failed write; the message names ``target`` and says why.
    """
    if fmt not in EXPORT_FORMATS:
        raise UnknownName(f"unknown format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}")
    protect = [ws.path]
    folder = fmt in FOLDER_FORMATS
    if fmt == "sqlite" and os.path.lexists(target):
        raise IngestError(
            target,
            None,
            "already exists; a sqlite export is written only at a new path, never over a "
            "file or through a link, even with --force (it was left as it is)",
        )
    check_target(target, force=force, protect=protect, folder=folder)  # before any work
    try:
        return _export(ws, fmt, target, retrievers, force=force, protect=protect)
    except IngestError:
        raise  # names its file already (the target, or a file inside it)
    except BadInput as exc:
        raise IngestError(target, None, str(exc)) from None


def _export(
    ws: Workspace,
    fmt: str,
    target: Path,
    retrievers: Sequence[str] | None,
    *,
    force: bool,
    protect: Sequence[Path],
) -> str:
    golds = workspace_golds(ws)
    gold = {q: g.gold for q, g in golds.items() if g.status is Status.LABELED and g.gold}
    specs = select_retrievers(ws, retrievers)
    if fmt == "beir":
        with atomic_folder(target, force=force, protect=protect, owned=_owned(fmt)) as tmp:
            c = write_beir(tmp, ws.docs(), ws.questions(), golds)
        return (
            f"wrote {c['docs']} documents, {c['queries']} queries and {c['qrels']} qrels "
            f"lines to {target}"
        )
    if fmt == "ranx":
        with atomic_folder(target, force=force, protect=protect, owned=_owned(fmt)) as tmp:
            export = write_ranx(tmp, gold, {s.name: ws.runs(s.name) for s in specs})
        line = f"wrote qrels.json and {len(export.runs)} runs to {target}"
        if export.skipped:
            line += f" (no ranking of a scored question: {', '.join(export.skipped)})"
        return line
    if fmt == "sqlite":
        with atomic_database(target, protect=protect, label="exporting") as tmp:
            c = write_sqlite_copy(tmp, ws.docs(), ws.questions(), ws.labels(), golds)
        return (
            f"wrote {c['docs']} documents, {c['questions']} questions, {c['labels']} labels "
            f"and {c['qrels']} qrels rows to {target}"
        )
    buf = io.StringIO(newline="")
    if fmt == "trec-qrels":  # every judgment the scores read: bpref and -J need the 0s
        judged = {q: golds[q].qrels for q in gold}
        n = write_trec_qrels(buf, judged)
    elif fmt == "trec-run":
        n = write_trec_run(buf, [r for s in specs for r in ws.runs(s.name).values()])
    elif fmt in ("labels", "labels-csv"):
        n = write_labels_csv(buf, ws.labels())
    elif fmt == "questions-jsonl":
        n = write_questions_jsonl(buf, ws.questions(), golds)
    else:
        n = write_questions_csv(buf, ws.questions(), golds)
    write_atomic(target, buf.getvalue(), force=force, protect=protect)
    what = "questions" if fmt.startswith("questions") else "lines"
    return f"wrote {n} {what} to {target}"
