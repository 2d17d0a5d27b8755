"""The corpus: documents, their hash, and the row counts of the main tables."""

from __future__ import annotations

from collections.abc import Iterable

from engine import rows as decode
from engine.types import (
    Doc,
    canonical_json,
    sha256_text,
)
from engine.workspace.lifecycle import WorkspaceFile


class CorpusTables(WorkspaceFile):
    """Documents and the corpus hash, and the row counts of the main tables."""

    def doc_count(self) -> int:
        """Number of documents."""
        return int(self.conn.execute("SELECT count(*) FROM docs").fetchone()[0])

    def doc_ids(self) -> list[str]:
        """Every document id, in code-point order."""
        return [
            decode.text_column(self.path, "docs", "id", r[0])
            for r in self.conn.execute("SELECT id FROM docs ORDER BY id")
        ]

    def docs(self) -> list[Doc]:
        """Every document, in code-point order of id."""
        found = self.conn.execute("SELECT id, title, text, fields FROM docs ORDER BY id")
        return [decode.doc(self.path, r) for r in found]

    def titles(self) -> list[str]:
        """Every document title (for the title-overlap meter; no text is read)."""
        return [
            decode.text_column(self.path, "docs", "title", r[0])
            for r in self.conn.execute("SELECT title FROM docs ORDER BY id")
        ]

    def doc(self, doc_id: str) -> Doc | None:
        """One document, or None."""
        r = self.conn.execute(
            "SELECT id, title, text, fields FROM docs WHERE id = ?", (doc_id,)
        ).fetchone()
        return decode.doc(self.path, r) if r else None

    def write_docs(self, docs: Iterable[Doc]) -> tuple[int, int, int]:
        """Insert or replace documents; returns (added, updated, unchanged).

        Call inside :meth:`transaction` to make it part of a larger import.
        """
        with self.transaction():
            known = dict(self.conn.execute("SELECT id, hash FROM docs").fetchall())
            added = updated = unchanged = 0
            rows = []
            for d in docs:
                h = d.hash
                old = known.get(d.id)
                if old == h:
                    unchanged += 1
                    continue
                if old is None:
                    added += 1
                else:
                    updated += 1
                rows.append((d.id, d.title, d.text, canonical_json(dict(d.fields)), h))
            self.conn.executemany(
                "INSERT INTO docs(id, title, text, fields, hash) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET title = excluded.title, "
                "text = excluded.text, fields = excluded.fields, hash = excluded.hash",
                rows,
            )
            # a new document gets its number now, for good (see doc_numbers)
            self.conn.executemany(
                "INSERT OR IGNORE INTO doc_numbers(id) VALUES (?)",
                [(r[0],) for r in rows if r[0] not in known],
            )
            if rows:
                self._set_meta("corpus_hash", self._compute_corpus_hash())
        return added, updated, unchanged

    def _compute_corpus_hash(self) -> str:
        hashes = self.conn.execute("SELECT hash FROM docs ORDER BY id").fetchall()
        return sha256_text(*(h[0] for h in hashes))

    def corpus_hash(self) -> str:
        """A hash of every document's content; cached runs depend on it."""
        return self.meta().get("corpus_hash", sha256_text())

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables."""
        tables = (
            "docs",
            "questions",
            "labels",
            "verdicts",
            "adjudications",
            "retrievers",
            "runs",
            "events",
        )
        return {
            t: int(self.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in tables
        }
