"""The demo workspace: an original Korean corpus with English terms, shipped as package data.

``build_demo`` imports ``engine/samples/demo`` (Markdown documents, questions, two
annotators' labels and verdicts) into a new workspace and pools every default retriever.
Tests use the same data.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from engine.formats.outfiles import atomic_database, not_regular
from engine.ingest import import_docs, import_labels, import_questions, import_verdicts
from engine.retrieve import DEFAULT_DEPTH
from engine.retrieve.runner import Progress, refresh_runs
from engine.types import RetrieverSpec
from engine.workspace import Workspace, WorkspaceError, held, identify
from engine.workspace_setup import new_workspace


def demo_data() -> Path:
    """The folder holding the demo's files."""
    return Path(str(resources.files("engine") / "samples" / "demo"))


def loads_kiwi(spec: RetrieverSpec) -> bool:
    """True when ``spec`` tokenizes with Kiwi (seconds to load, then slow to tokenize)."""
    return "kiwi" in str(spec.params.get("tokenizer", ""))


def _refuse_if_open(path: Path) -> None:
    """Refuse to replace ``path`` while another goldpan has it open.

    Its labels would go on into the replaced file.
    """
    if held.open_elsewhere(path):
        raise WorkspaceError(
            f"{path} is open in another goldpan (an app, `goldpan serve` or a command); "
            "close it first, then rebuild with --force. It was left as it is"
        )


def build_demo(
    path: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
    pool: bool = True,
    kiwi: bool = True,
) -> Workspace:
    """Build the demo workspace at ``path`` and pool it; returns it open.

    Without ``kiwi`` the retrievers that tokenize with Kiwi are left to pool later (the
    app pools them in a worker once it shows: ``goldpan demo`` opens in a few seconds,
    not after Kiwi's).

    With ``force`` an existing ``path`` is replaced, but only when it is a goldpan
    workspace (an older demo): anything else (a text file, another program's database, a
    device or FIFO) is refused and left as it is, before anything is written. The new demo
    is built in a temporary file beside ``path`` and renamed into place when it is
    complete (:func:`engine.formats.outfiles.atomic_database`), so a failed build leaves
    the old file as it was.

    Raises:
        WorkspaceError: ``path`` exists (without ``force``), or is not a goldpan workspace.
        IngestError: ``path`` cannot be written (see
            :func:`engine.formats.outfiles.check_target`).
    """
    if path.exists() or path.is_symlink():
        if not force:
            raise WorkspaceError(f"{path} already exists (use --force to rebuild it)")
        odd = not_regular(path)
        if odd is not None:
            raise WorkspaceError(
                f"{path} {odd}; demo --force replaces only a goldpan workspace, so it was "
                "left as it is"
            )
        try:
            identify(path)
        except WorkspaceError as exc:
            raise WorkspaceError(
                f"{path} exists, and demo --force replaces only a goldpan workspace (an "
                f"older demo): it was left as it is; choose another --path. {exc}"
            ) from None
        _refuse_if_open(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = demo_data()
    # and again just before the new file replaces it: one may have opened it meanwhile
    # (a goldpan that did anyway is refused its next write: see Workspace.transaction)
    again = functools.partial(_refuse_if_open, path)
    with atomic_database(path, replace=force, label="demo", before_replace=again) as tmp:
        ws = new_workspace(tmp)
        try:
            with ws.transaction():
                import_docs(ws, data / "docs", "markdown")
                import_questions(ws, data / "questions.jsonl")
                import_labels(ws, data / "labels.csv")
                import_verdicts(ws, data / "verdicts.csv")
            if pool:
                names = [s.name for s in ws.retrievers() if kiwi or not loads_kiwi(s)]
                if names:
                    refresh_runs(ws, names, depth=DEFAULT_DEPTH, progress=progress)
            ws.checkpoint()  # every page in the file itself: the -wal is not moved with it
        finally:
            ws.close()
    return Workspace.open(path)
