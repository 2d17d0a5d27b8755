"""Snapshots: named JSON documents stored in the workspace (see :mod:`engine.ci.snapshots`)."""

from __future__ import annotations

import json
from typing import Any

from engine.workspace.lifecycle import WorkspaceFile
from engine.workspace.rows import WorkspaceError


class SnapshotTables(WorkspaceFile):
    """Stored snapshots."""

    def snapshots(self) -> list[tuple[str, str]]:
        """(name, created) of every stored snapshot, oldest first."""
        rows = self.conn.execute("SELECT name, created FROM snapshots ORDER BY created, name")
        return [(r[0], r[1]) for r in rows]

    def snapshot(self, name: str) -> dict[str, Any] | None:
        """A stored snapshot's JSON document, or None."""
        r = self.conn.execute("SELECT data FROM snapshots WHERE name = ?", (name,)).fetchone()
        if r is None:
            return None
        try:
            data = json.loads(r[0])
        except (TypeError, ValueError) as exc:
            raise WorkspaceError(
                f"{self.path}: table snapshots, row {name!r}: not readable JSON ({exc})"
            ) from None
        if not isinstance(data, dict):
            raise WorkspaceError(f"{self.path}: table snapshots, row {name!r}: not a JSON object")
        return data

    def save_snapshot(
        self, name: str, created: str, data: dict[str, Any], *, replace: bool = False
    ) -> None:
        """Store a snapshot; an existing name is an error unless ``replace``."""
        with self.transaction():
            exists = self.conn.execute("SELECT 1 FROM snapshots WHERE name = ?", (name,)).fetchone()
            if exists and not replace:
                raise WorkspaceError(
                    f"a snapshot named {name!r} already exists (remove it, or use --replace)"
                )
            self.conn.execute(
                "INSERT INTO snapshots(name, created, data) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET created = excluded.created, data = excluded.data",
                (name, created, json.dumps(data, ensure_ascii=False, separators=(",", ":"))),
            )

    def remove_snapshot(self, name: str) -> None:
        """Remove a snapshot."""
        with self.transaction():
            cur = self.conn.execute("DELETE FROM snapshots WHERE name = ?", (name,))
            if cur.rowcount == 0:
                raise WorkspaceError(f"no snapshot named {name!r}")
