"""How far judging went: stops, and documents proposed beyond the pool.

A stop records that an annotator ended a question's judging before every candidate was
graded (the stopping rule offered it): the candidates nobody judged are then *not judged
(stopped)*, counted apart from grade 0. A stop is made for one text of its question
(``made_for``, as labels are) and logged as the event ``stop``.

A proposal is a document outside the pool that feedback on the judgments found likely
relevant: it joins the question's candidates. Proposals are logged as one event
``proposal`` per question and write.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from engine.types import JUDGING_KEYS, Proposal, Stop
from engine.workspace import rows as decode
from engine.workspace.judgments import PROPOSAL_EVENT, STOP_EVENT, EventLog, of_questions
from engine.workspace.lifecycle import now

JUDGING_EVENT = "judging"
"""The event of the judging settings changed (every open session reads them again)."""


class CompletenessTables(EventLog):
    """Stops, proposals and the judging settings they follow."""

    def judging_settings(self) -> dict[str, str]:
        """The judging settings stored (``goldpan judging``): key -> value, checked."""
        return {k: v for k, v in self.meta().items() if k in JUDGING_KEYS}

    def set_judging_settings(self, values: Mapping[str, str], by: str) -> None:
        """Store judging settings (keys of :data:`~engine.types.JUDGING_KEYS`); logged."""
        with self.transaction():
            for key, value in values.items():
                self._set_meta(key, value)
            said = " ".join(f"{k}={v}" for k, v in sorted(values.items()))
            self._event(JUDGING_EVENT, by, None, None, None, said, now())

    def stops(self, question_ids: Iterable[str] | None = None) -> list[Stop]:
        """Every stop made for its question's current text (of ``question_ids`` only)."""
        where, args = of_questions(question_ids)
        rows = self.conn.execute(
            "SELECT question_id, annotator, rule FROM stops WHERE made_for IS NULL "
            f"{where} ORDER BY question_id, annotator",
            args,
        )
        return [decode.stop(self.path, r) for r in rows]

    def write_stop(self, stop: Stop) -> None:
        """Record (or replace) an annotator's stop of a question; logged."""
        stamp = now()
        with self.transaction():
            old = self.conn.execute(
                "SELECT rule FROM stops WHERE question_id = ? AND annotator = ? "
                "AND made_for IS NULL",
                (stop.question_id, stop.annotator),
            ).fetchone()
            self.conn.execute(
                "INSERT INTO stops(question_id, annotator, rule, updated) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(question_id, annotator) DO UPDATE SET rule = excluded.rule, "
                "updated = excluded.updated, made_for = NULL",
                (stop.question_id, stop.annotator, stop.rule, stamp),
            )
            self._event(
                STOP_EVENT,
                stop.annotator,
                stop.question_id,
                None,
                None if old is None else str(old[0]),
                stop.rule,
                stamp,
            )

    def delete_stop(self, question_id: str, annotator: str) -> None:
        """Take back an annotator's stop of a question (undo); logged."""
        with self.transaction():
            old = self.conn.execute(
                "DELETE FROM stops WHERE question_id = ? AND annotator = ? RETURNING rule",
                (question_id, annotator),
            ).fetchone()
            if old is not None:
                self._event(STOP_EVENT, annotator, question_id, None, str(old[0]), None, now())

    def proposals(self, question_ids: Iterable[str] | None = None) -> list[Proposal]:
        """Every document proposed beyond the pool (of ``question_ids`` only).

        In the order they were proposed (best first within a round).
        """
        where, args = of_questions(question_ids)
        rows = self.conn.execute(
            "SELECT question_id, doc_id, method, by, proposed FROM proposals WHERE 1 "
            f"{where} ORDER BY question_id, rowid",
            args,
        )
        return [decode.proposal(self.path, r) for r in rows]

    def write_proposals(self, proposals: Iterable[Proposal]) -> int:
        """Add documents to their questions' candidates; returns how many were new.

        A document already proposed for the question is left as it is. One event per
        question that gained a document.
        """
        stamp = now()
        added: dict[str, list[str]] = {}
        asked: dict[str, str] = {}
        with self.transaction():
            for p in proposals:
                cur = self.conn.execute(
                    "INSERT INTO proposals(question_id, doc_id, method, by, proposed) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(question_id, doc_id) DO NOTHING",
                    (p.question_id, p.doc_id, p.method, p.by, stamp),
                )
                if cur.rowcount:
                    added.setdefault(p.question_id, []).append(p.doc_id)
                    asked[p.question_id] = p.by
            for qid, docs in added.items():
                self._event(PROPOSAL_EVENT, asked[qid], qid, None, None, str(len(docs)), stamp)
        return sum(len(d) for d in added.values())
