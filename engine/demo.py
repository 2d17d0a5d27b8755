"""The demo workspace: an original Korean corpus with English terms, shipped as package data.

``build_demo`` imports ``engine/samples/demo`` (Markdown documents, questions, two
annotators' labels and verdicts) into a new workspace and pools every default retriever.
Tests use the same data.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from engine.ingest import import_docs, import_labels, import_questions, import_verdicts
from engine.retrieve import DEFAULT_DEPTH
from engine.retrieve.runner import Progress, refresh_runs
from engine.workspace import Workspace, WorkspaceError
from engine.workspace_setup import new_workspace


def demo_data() -> Path:
    """The folder holding the demo's files."""
    return Path(str(resources.files("engine") / "samples" / "demo"))


def build_demo(
    path: Path, *, force: bool = False, progress: Progress | None = None, pool: bool = True
) -> Workspace:
    """Build the demo workspace at ``path`` (replaced when ``force``) and pool it."""
    if path.exists():
        if not force:
            raise WorkspaceError(f"{path} already exists (use --force to rebuild it)")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = demo_data()
    ws = new_workspace(path)
    try:
        with ws.transaction():
            import_docs(ws, data / "docs", "markdown")
            import_questions(ws, data / "questions.jsonl")
            import_labels(ws, data / "labels.csv")
            import_verdicts(ws, data / "verdicts.csv")
        if pool:
            refresh_runs(ws, depth=DEFAULT_DEPTH, progress=progress)
    except BaseException:
        ws.close()
        raise
    return ws
