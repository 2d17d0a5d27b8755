"""The corpus: documents, their hash, and the row counts of the main tables."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from engine.types import (
    Doc,
    canonical_json,
    sha256_text,
)
from engine.workspace import rows as decode
from engine.workspace.lifecycle import WorkspaceFile

SNIPPET_CONTEXT = 30
"""Characters of text shown on each side of a search's first match in a document."""


@dataclass(frozen=True)
class FoundDoc:
    """A document as ``goldpan docs`` lists it."""

    id: str
    title: str
    length: int
    """Characters of its text."""
    found_in: tuple[str, ...] = ()
    """Where the search text is: ``id``, ``title``, ``text`` (empty without a search)."""
    snippet: str | None = None
    """The text around the first match in the text (one line), when it is there."""


@dataclass(frozen=True)
class DocListing:
    """The documents listed or found, at most a limit of them, and how many there are."""

    docs: list[FoundDoc]
    total: int
    """How many documents are listed or match, in all."""
    corpus: int
    """How many documents the workspace has."""


def _fold(text: str) -> str:
    """Text as a search compares it: NFC (Hangul typed or pasted alike), case-folded."""
    return unicodedata.normalize("NFC", text).casefold()


def _snippet(text: str, folded: str, at: int, size: int) -> str:
    """``text`` around ``at`` (an index in ``folded``), on one line, cut with an ellipsis."""
    source = text if len(text) == len(folded) else folded  # casefold may lengthen (ß: ss)
    start, end = max(0, at - SNIPPET_CONTEXT), min(len(source), at + size + SNIPPET_CONTEXT)
    piece = " ".join(source[start:end].split())
    return ("…" if start else "") + piece + ("…" if end < len(source) else "")


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

    def list_docs(self, search: str | None = None, limit: int | None = None) -> DocListing:
        """Documents in id order, or those whose id, title or text holds ``search``.

        The search ignores case (and the Unicode form of Hangul); ``limit`` documents at
        most are returned (None: all), and :attr:`DocListing.total` says how many there
        are. Rows are read one at a time: a search of a large corpus holds one text.
        """
        cap = "" if limit is None else f" LIMIT {int(limit)}"
        if search is None:
            rows = self.conn.execute(f"SELECT id, title, text FROM docs ORDER BY id{cap}")
            docs = []
            for r in rows:
                doc_id, title, text = decode.doc_text_row(self.path, r)
                docs.append(FoundDoc(doc_id, title, len(text)))
            count = self.doc_count()
            return DocListing(docs, count, count)
        wanted = _fold(search)
        found: list[FoundDoc] = []
        total = corpus = 0
        for r in self.conn.execute("SELECT id, title, text FROM docs ORDER BY id"):
            corpus += 1
            doc_id, title, text = decode.doc_text_row(self.path, r)
            folded = _fold(text)
            at = folded.find(wanted)
            where = tuple(
                name
                for name, hit in (
                    ("id", wanted in _fold(doc_id)),
                    ("title", wanted in _fold(title)),
                    ("text", at >= 0),
                )
                if hit
            )
            if not where:
                continue
            total += 1
            if limit is None or len(found) < limit:
                snippet = _snippet(text, folded, at, len(wanted)) if at >= 0 else None
                found.append(FoundDoc(doc_id, title, len(text), where, snippet))
        return DocListing(found, total, corpus)

    def doc_titles(self) -> list[tuple[str, str]]:
        """(id, title) of every document, in id order (no text is read)."""
        return [
            (
                decode.text_column(self.path, "docs", "id", r[0]),
                decode.text_column(self.path, "docs", "title", r[1]),
            )
            for r in self.conn.execute("SELECT id, title FROM docs ORDER BY id")
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
