"""``goldpan check``: is a workspace file sound, and can goldpan use every row of it?

Read-only, in four passes: the file is goldpan's and its schema is goldpan's (the same
test every open makes), SQLite's ``integrity_check`` (pages, b-trees, indexes),
``foreign_key_check`` (labels of deleted questions and the like), and every row decoded
as the commands decode it (JSON shapes, blob lengths, grades, verdicts, retriever kinds).
A damaged workspace is reported, never repaired: goldpan refuses to write into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import BadInput
from engine.retrieve import STORED_KINDS, RetrieverError, build_retriever
from engine.retrieve.runner import run_order
from engine.workspace import (
    IDENTITY_VERSION,
    NewerWorkspace,
    NotAWorkspace,
    Workspace,
    WorkspaceError,
)

MAX_ROW_PROBLEMS = 200
"""Row problems listed before the rest are only counted."""


@dataclass
class CheckReport:
    """What ``check`` found: problems per pass (all empty: the workspace is sound)."""

    path: Path
    schema_version: int | None = None
    file: list[str] = field(default_factory=list)
    """The file is missing, not goldpan's, or its schema is damaged (nothing else is read)."""
    integrity: list[str] = field(default_factory=list)
    foreign_keys: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    rows_not_listed: int = 0
    """Row problems beyond :data:`MAX_ROW_PROBLEMS`."""

    verdict: str = "sound"
    """``sound``; ``damaged`` (a goldpan workspace with problems); ``not a workspace`` (a
    path that never was one: missing, a folder, a FIFO or device, a text file, another
    program's database: nothing to restore); ``newer`` (written by a newer goldpan)."""

    @property
    def ok(self) -> bool:
        """True when no pass found anything."""
        return not (self.file or self.integrity or self.foreign_keys or self.rows)

    def to_json(self) -> dict[str, object]:
        """Plain data for ``--json``."""
        return {
            "workspace": str(self.path),
            "ok": self.ok,
            "verdict": self.verdict,
            "schema_version": self.schema_version,
            "file": self.file,
            "integrity": self.integrity,
            "foreign_keys": self.foreign_keys,
            "rows": self.rows,
            "rows_not_listed": self.rows_not_listed,
        }


def check_workspace(path: Path) -> CheckReport:
    """Check the workspace at ``path`` without writing to it."""
    report = CheckReport(Path(path))
    try:
        ws = Workspace.inspect(path)
    except NotAWorkspace as exc:
        report.file.append(str(exc))
        report.verdict = "not a workspace"
        return report
    except NewerWorkspace as exc:
        report.file.append(str(exc))
        report.verdict = "newer"
        return report
    except WorkspaceError as exc:
        report.file.append(str(exc))
        report.verdict = "damaged"
        return report
    with ws:
        report.schema_version = ws.schema_version
        report.integrity = ws.integrity_problems()
        report.foreign_keys = ws.foreign_key_problems()
        rows = report.rows
        for problem in ws.row_problems():
            if len(rows) < MAX_ROW_PROBLEMS:
                rows.append(problem)
            else:
                report.rows_not_listed += 1
        if not rows:  # the rows decode: are they goldpan's too?
            rows.extend(_meaning_problems(ws))
    if not report.ok:
        report.verdict = "damaged"
    return report


def _meaning_problems(ws: Workspace) -> list[str]:
    """Rows that decode but that no goldpan writes.

    Unknown retriever kinds or parameters, retrievers that read their own rankings
    (themselves, or through others) or one that is gone, a missing workspace id.
    """
    out = []
    try:
        specs = ws.retrievers()
        meta = ws.meta()
    except WorkspaceError as exc:  # read a moment ago; damaged in between?
        return [str(exc)]
    for spec in specs:
        if spec.kind in STORED_KINDS:
            continue
        try:
            build_retriever(spec)
        except RetrieverError:
            continue  # an extra missing on this machine: not the workspace's fault
        except BadInput as exc:
            out.append(f"table retrievers, row name {spec.name!r}: {exc}")
    for spec in specs:
        try:
            run_order(specs, [spec])  # what every pool does first
        except WorkspaceError as exc:
            out.append(f"table retrievers, row name {spec.name!r}: {exc}")
    if ws.schema_version >= IDENTITY_VERSION and not meta.get("workspace_id"):
        out.append("table meta: the workspace_id row is missing")
    return out
