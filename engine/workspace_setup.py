"""Creating a workspace ready to use: the file plus the default retrievers."""

from __future__ import annotations

from pathlib import Path

from engine.retrieve import DEFAULT_RETRIEVERS
from engine.workspace import Workspace


def new_workspace(path: Path) -> Workspace:
    """Create a workspace with the default retrievers (``bm25-word``, ``-bigram``, ...)."""
    ws = Workspace.create(path)
    with ws.transaction():
        for spec in DEFAULT_RETRIEVERS:
            ws.add_retriever(spec)
    return ws
