"""Questions: reads, writes, edits and the history of their text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engine.types import (
    Question,
    canonical_json,
)
from engine.workspace import rows as decode
from engine.workspace.judgments import JudgmentTables
from engine.workspace.lifecycle import now
from engine.workspace.rows import Q_COLUMNS, WorkspaceError


class QuestionTables(JudgmentTables):
    """Questions and their text history.

    One rule for a changed text, whoever changes it (an import, an edit in the TUI):
    the judgments made for the old text no longer hold (:meth:`retext_judgments`).
    """

    def _question(self, r: Sequence[Any]) -> Question:
        return decode.question(self.path, r)

    _Q_COLUMNS = Q_COLUMNS

    def questions(self) -> list[Question]:
        """Every question, in code-point order of id."""
        found = self.conn.execute(f"SELECT {self._Q_COLUMNS} FROM questions ORDER BY id")
        return [self._question(r) for r in found]

    def question(self, question_id: str) -> Question | None:
        """One question, or None."""
        r = self.conn.execute(
            f"SELECT {self._Q_COLUMNS} FROM questions WHERE id = ?", (question_id,)
        ).fetchone()
        return self._question(r) if r else None

    def question_ids(self) -> list[str]:
        """Every question id, in code-point order."""
        return [
            decode.text_column(self.path, "questions", "id", r[0])
            for r in self.conn.execute("SELECT id FROM questions ORDER BY id")
        ]

    def write_questions(
        self, questions: Iterable[Question], *, by: str = "import"
    ) -> tuple[int, int, int]:
        """Insert or update questions; returns (added, updated, unchanged).

        A changed text keeps the old one in the question's history (as
        :meth:`edit_question` does, logged as ``by``); what happens to the judgments made
        for the old text is :meth:`retext_judgments`'s job.
        """
        with self.transaction():
            known = {
                r[0]: (r[1], r[2])
                for r in self.conn.execute("SELECT id, text, tags FROM questions")
            }
            added = updated = unchanged = 0
            stamp = now()
            for q in questions:
                tags = canonical_json(list(q.tags))
                old = known.get(q.id)
                if old == (q.text, tags):
                    unchanged += 1
                    continue
                if old is None:
                    added += 1
                else:
                    updated += 1
                    if old[0] != q.text:
                        self._event("question", by, q.id, None, old[0], q.text, stamp)
                self.conn.execute(
                    "INSERT INTO questions(id, text, tags, author, created, written_blind, note)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                    "text = excluded.text, tags = excluded.tags",
                    (q.id, q.text, tags, q.author, stamp, int(q.written_blind), q.note),
                )
            if added or updated:  # sessions reload: new rows, or tags, in every live table
                self._event(
                    "questions", by, None, None, None, f"{added} added, {updated} updated", stamp
                )
        return added, updated, unchanged

    def add_question(
        self, text: str, tags: Sequence[str], author: str, *, written_blind: bool = True
    ) -> Question:
        """Add a question written in goldpan; its id is the next free ``w0001``-style id."""
        text = text.strip()
        if not text:
            raise WorkspaceError("a question needs some text")
        with self.transaction():
            taken = {r[0] for r in self.conn.execute("SELECT id FROM questions WHERE id LIKE 'w%'")}
            n = len(taken) + 1
            while f"w{n:04d}" in taken:
                n += 1
            q = Question(f"w{n:04d}", text, tuple(tags), author, written_blind)
            stamp = now()
            self.conn.execute(
                "INSERT INTO questions(id, text, tags, author, created, written_blind, note) "
                "VALUES (?, ?, ?, ?, ?, ?, '')",
                (q.id, q.text, canonical_json(list(q.tags)), author, stamp, int(written_blind)),
            )
            self._event("question", author, q.id, None, None, q.text, stamp)
        return q

    def edit_question(
        self, question_id: str, text: str, tags: Sequence[str] | None, by: str
    ) -> Question:
        """Change a question's text (and tags); the old text stays in the event log.

        A new text retires the judgments made for the old one exactly as a re-import
        does (:meth:`retext_judgments`: kept, counted as needing re-check, no longer
        gold), in the same transaction; editing the text back brings them back.
        """
        text = text.strip()
        if not text:
            raise WorkspaceError("a question needs some text")
        with self.transaction():
            old = self.question(question_id)
            if old is None:
                raise WorkspaceError(f"no question {question_id!r}")
            new_tags = tuple(tags) if tags is not None else old.tags
            self.conn.execute(
                "UPDATE questions SET text = ?, tags = ? WHERE id = ?",
                (text, canonical_json(list(new_tags)), question_id),
            )
            if text != old.text:
                self._event("question", by, question_id, None, old.text, text, now())
                self.retext_judgments(question_id, old.text, text, by)
        return Question(question_id, text, new_tags, old.author, old.written_blind, old.note)
