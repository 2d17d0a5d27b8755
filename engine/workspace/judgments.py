"""Judgments: labels, verdicts, adjudications and the event log.

Includes the ``made_for`` re-check marking when a question's text changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.grades import sql_maybe_relevant
from engine.types import (
    Adjudication,
    Label,
    Verdict,
    canonical_json,
    sha256_text,
)
from engine.workspace import rows as decode
from engine.workspace.lifecycle import JUDGMENT_TABLES, WorkspaceFile, now

RANKED_EVENT = "ranked"
"""The event of cached rankings written: for the named question, or (no question) for many
at once. Logged so that long-lived sessions know which questions' rankings to re-read."""

GOLD_IMPORT_EVENT = "gold-import"
"""The event of a label or verdict written by an import that states questions' gold: a
qrels file, a questions file's gold, a BEIR folder, a SQuAD file. Such a file holds a
question's whole gold (every document it does not list is not relevant, as trec_eval
reads it), so the question counts as judged by that annotator
(:func:`engine.counters.is_judged`). goldpan's labels CSV logs plain ``import``: it holds
one annotator's grades as they were, judged or not."""

STOP_EVENT = "stop"
"""The event of a stop written or taken back (:mod:`engine.workspace.completeness`)."""

PROPOSAL_EVENT = "proposal"
"""The event of documents proposed beyond the pool for the named question."""

# Events that touch a question but are not a verdict (verdicts have no doc id either).
_NOT_VERDICT_KINDS = frozenset({"question", "adjudication", RANKED_EVENT})

_NOT_JUDGMENT_KINDS = frozenset({STOP_EVENT, PROPOSAL_EVENT})
"""Events of a question that are neither a label, a verdict nor an adjudication."""


def _adjudication_event(adj: Adjudication) -> str:
    """The ``new`` text :meth:`JudgmentTables.write_adjudication` logs for ``adj``."""
    return "no_answer" if adj.no_answer else canonical_json(dict(adj.gold))


def _time_if(event: tuple[str, str | None] | None, value: str) -> str | None:
    return event[0] if event is not None and event[1] == value else None


@dataclass(frozen=True)
class JudgmentTimes:
    """When each label, verdict and adjudication last got its current value, from the event log.

    Read once (:meth:`EventLog.judgment_times`); each lookup answers None when the log's
    newest event for that key does not record the value asked about (the row was changed
    without an event, or the log was cut).
    """

    labels: dict[tuple[str, str, str], tuple[str, str | None]]
    """(question id, doc id, annotator) -> (at, new) of the newest label event."""
    verdicts: dict[tuple[str, str], tuple[str, str | None]]
    """(question id, annotator) -> (at, new) of the newest verdict event."""
    adjudications: dict[str, tuple[str, str | None]]
    """question id -> (at, new) of the newest adjudication event."""

    def label_time(self, lab: Label) -> str | None:
        """When this label got its grade, or None when the log does not say."""
        key = (lab.question_id, lab.doc_id, lab.annotator)
        return _time_if(self.labels.get(key), str(lab.grade))

    def verdict_time(self, v: Verdict) -> str | None:
        """When this verdict was last written, or None when the log does not say."""
        return _time_if(self.verdicts.get((v.question_id, v.annotator)), v.verdict)

    def adjudication_time(self, adj: Adjudication) -> str | None:
        """When this adjudication was last written, or None when the log does not say."""
        return _time_if(self.adjudications.get(adj.question_id), _adjudication_event(adj))


class EventLog(WorkspaceFile):
    """The append-only event log."""

    def _event(
        self,
        kind: str,
        annotator: str,
        question_id: str | None,
        doc_id: str | None,
        old: str | None,
        new: str | None,
        at: str,
    ) -> None:
        self.conn.execute(
            "INSERT INTO events(at, annotator, kind, question_id, doc_id, old, new) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (at, annotator, kind, question_id, doc_id, old, new),
        )

    def log_event(self, kind: str, annotator: str, new: str) -> None:
        """Append a workspace-level event (an import, say) to the log."""
        with self.transaction():
            self._event(kind, annotator, None, None, None, new, now())

    def events(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The event log, newest first."""
        sql = "SELECT id, at, annotator, kind, question_id, doc_id, old, new FROM events "
        sql += "ORDER BY id DESC" + (f" LIMIT {int(limit)}" if limit else "")
        return [decode.event(self.path, r) for r in self.conn.execute(sql)]

    def gold_imported(self, annotator: str | None = None) -> set[tuple[str, str]]:
        """(question id, annotator) pairs whose judgments a gold import wrote.

        Of one ``annotator`` only, when given (a labeling session asks for its own).
        """
        who = "" if annotator is None else " AND annotator = ?"
        rows = self.conn.execute(
            "SELECT DISTINCT question_id, annotator FROM events WHERE kind = ? "
            f"AND question_id IS NOT NULL{who}",
            (GOLD_IMPORT_EVENT,) if annotator is None else (GOLD_IMPORT_EVENT, annotator),
        )
        return {
            (
                decode.text_column(self.path, "events", "question_id", q),
                decode.text_column(self.path, "events", "annotator", a),
            )
            for q, a in rows
        }

    def last_event_id(self) -> int:
        """The id of the newest event (0 when the log is empty)."""
        return int(self.conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])

    def changes_after(self, event_id: int) -> list[tuple[int, str, str | None]]:
        """``(id, kind, question id)`` of every event after ``event_id``, oldest first.

        What a long-lived session reads to take in other connections' commits.
        """
        rows = self.conn.execute(
            "SELECT id, kind, question_id FROM events WHERE id > ? ORDER BY id", (event_id,)
        ).fetchall()
        out = []
        for r in rows:  # id is the INTEGER PRIMARY KEY: an int
            kind = decode.text_column(self.path, "events", "kind", r[1])
            qid = r[2] if r[2] is None else decode.text_column(self.path, "events", "q", r[2])
            out.append((int(r[0]), kind, qid))
        return out

    def judgment_times(self) -> JudgmentTimes:
        """The newest event of every label, verdict and adjudication (what merge compares)."""
        labels: dict[tuple[str, str, str], tuple[str, str | None]] = {}
        verdicts: dict[tuple[str, str], tuple[str, str | None]] = {}
        adjudications: dict[str, tuple[str, str | None]] = {}
        for e in reversed(self.events()):  # oldest first: the newest event wins
            q, d, at, new = e["question_id"], e["doc_id"], e["at"], e["new"]
            if q is None or e["kind"] in _NOT_JUDGMENT_KINDS:
                continue
            if d is not None:
                labels[(q, d, e["annotator"])] = (at, new)
            elif e["kind"] == "adjudication":
                adjudications[q] = (at, new)
            elif e["kind"] not in _NOT_VERDICT_KINDS:
                verdicts[(q, e["annotator"])] = (at, new)
        return JudgmentTimes(labels, verdicts, adjudications)


class JudgmentTables(EventLog):
    """Labels, verdicts and adjudications, and their re-check when a question changes."""

    def retext_judgments(
        self, question_id: str, old_text: str, new_text: str, by: str, *, replace: bool = False
    ) -> int:
        """The question's text changed from ``old_text``: its judgments no longer hold.

        Every current label, verdict and adjudication of the question is marked as made
        for the old text (``made_for`` = its hash): kept, and counted as needing
        re-check, but no longer gold. With ``replace`` they are deleted instead (each
        deletion logged). Judgments earlier marked as made for ``new_text`` (the text
        came back) become current again. Returns how many judgments were marked or
        deleted.
        """
        old_hash, new_hash = sha256_text(old_text), sha256_text(new_text)
        n = 0
        with self.transaction():
            for table in JUDGMENT_TABLES:
                if replace:
                    n += self._delete_current(table, question_id, by)
                else:
                    n += self.conn.execute(
                        f"UPDATE {table} SET made_for = ? WHERE question_id = ? "
                        "AND made_for IS NULL",
                        (old_hash, question_id),
                    ).rowcount
            self._retext_stops(question_id, old_hash, replace=replace)
            for table in (*JUDGMENT_TABLES, "stops"):
                # a judgment made for the text now back, unless one for it exists anew
                self.conn.execute(
                    f"UPDATE OR IGNORE {table} SET made_for = NULL WHERE question_id = ? "
                    "AND made_for = ?",
                    (question_id, new_hash),
                )
            self._retext_model_grades(question_id, old_hash, new_hash, replace=replace)
        return n

    def _retext_stops(self, question_id: str, old_hash: str, *, replace: bool) -> None:
        """A stop follows the question's text as labels do (it is not counted as one)."""
        if replace:
            rows = self.conn.execute(
                "DELETE FROM stops WHERE question_id = ? AND made_for IS NULL "
                "RETURNING annotator, rule",
                (question_id,),
            ).fetchall()
            stamp = now()
            for annotator, rule in rows:
                self._event(STOP_EVENT, annotator, question_id, None, rule, None, stamp)
        else:
            self.conn.execute(
                "UPDATE stops SET made_for = ? WHERE question_id = ? AND made_for IS NULL",
                (old_hash, question_id),
            )

    def _retext_model_grades(
        self, question_id: str, old_hash: str, new_hash: str, *, replace: bool
    ) -> None:
        """Model judges' grades follow the question's text as people's do.

        They are not counted among the judgments to re-check (a model's grade is no
        judgment of a person: it never makes a question need re-check), nor logged one by
        one; the judge grades the new text on its next run.
        """
        if replace:
            self.conn.execute(
                "DELETE FROM model_labels WHERE question_id = ? AND made_for IS NULL",
                (question_id,),
            )
        else:
            self.conn.execute(
                "UPDATE model_labels SET made_for = ? WHERE question_id = ? AND made_for IS NULL",
                (old_hash, question_id),
            )
        self.conn.execute(
            "UPDATE OR IGNORE model_labels SET made_for = NULL WHERE question_id = ? "
            "AND made_for = ?",
            (question_id, new_hash),
        )

    def _delete_current(self, table: str, question_id: str, by: str) -> int:
        stamp = now()
        if table == "labels":
            rows = self.conn.execute(
                "DELETE FROM labels WHERE question_id = ? AND made_for IS NULL "
                "RETURNING doc_id, annotator, grade",
                (question_id,),
            ).fetchall()
            for doc, annotator, grade in rows:
                self._event("label", annotator, question_id, doc, str(grade), None, stamp)
        elif table == "verdicts":
            rows = self.conn.execute(
                "DELETE FROM verdicts WHERE question_id = ? AND made_for IS NULL "
                "RETURNING annotator, verdict",
                (question_id,),
            ).fetchall()
            for annotator, verdict in rows:
                self._event("verdict", annotator, question_id, None, verdict, None, stamp)
        else:
            rows = self.conn.execute(
                "DELETE FROM adjudications WHERE question_id = ? AND made_for IS NULL "
                "RETURNING by, no_answer, gold",
                (question_id,),
            ).fetchall()
            for who, no_answer, gold in rows:
                old = "no_answer" if no_answer else gold
                self._event("adjudication", who, question_id, None, old, None, stamp)
        return len(rows)

    def recheck_counts(self, question_id: str | None = None) -> dict[str, int]:
        """Question id -> how many of its judgments were made for an earlier text."""
        where = "made_for IS NOT NULL" + (" AND question_id = ?" if question_id else "")
        args = (question_id,) if question_id else ()
        sql = " UNION ALL ".join(
            f"SELECT question_id FROM {t} WHERE {where}" for t in JUDGMENT_TABLES
        )
        out: dict[str, int] = {}
        for (qid,) in self.conn.execute(sql, args * len(JUDGMENT_TABLES)):
            out[qid] = out.get(qid, 0) + 1
        return out

    def labels(self, question_ids: Iterable[str] | None = None) -> list[Label]:
        """Every label of every annotator (of the questions ``question_ids`` only)."""
        where, args = of_questions(question_ids)
        rows = self.conn.execute(
            "SELECT question_id, doc_id, annotator, grade FROM labels WHERE made_for IS NULL "
            f"{where} ORDER BY question_id, doc_id, annotator",
            args,
        )
        return [decode.label(self.path, r) for r in rows]

    def maybe_relevant_pairs(self) -> set[tuple[str, str]]:
        """(question id, doc id) of every label that may be relevant, undecoded: a superset.

        Each label :func:`~engine.grades.sql_maybe_relevant` keeps (so also a row the
        readers would refuse): what to resolve to learn which documents are gold, without
        decoding every label.
        """
        rows = self.conn.execute(
            f"SELECT question_id, doc_id FROM labels WHERE made_for IS NULL "
            f"AND {sql_maybe_relevant()}"
        )
        return set(rows.fetchall())

    def adjudicated_ids(self) -> set[str]:
        """The ids of the questions an adjudication settles (for their current text)."""
        rows = self.conn.execute("SELECT question_id FROM adjudications WHERE made_for IS NULL")
        return {r[0] for r in rows}

    def write_labels(self, labels: Iterable[Label], *, event: str = "label") -> int:
        """Set labels (replacing the same annotator's earlier grade); logs each change."""
        stamp = now()
        n = 0
        with self.transaction():
            for lab in labels:
                old = self.conn.execute(
                    "SELECT grade FROM labels WHERE question_id = ? AND doc_id = ? "
                    "AND annotator = ?",
                    (lab.question_id, lab.doc_id, lab.annotator),
                ).fetchone()
                self.conn.execute(
                    "INSERT INTO labels(question_id, doc_id, annotator, grade, updated) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(question_id, doc_id, annotator) "
                    "DO UPDATE SET grade = excluded.grade, updated = excluded.updated, "
                    "made_for = NULL",
                    (lab.question_id, lab.doc_id, lab.annotator, lab.grade, stamp),
                )
                self._event(
                    event,
                    lab.annotator,
                    lab.question_id,
                    lab.doc_id,
                    None if old is None else str(old[0]),
                    str(lab.grade),
                    stamp,
                )
                n += 1
        return n

    def labels_for(self, question_id: str) -> list[Label]:
        """Every annotator's labels of one question."""
        rows = self.conn.execute(
            "SELECT question_id, doc_id, annotator, grade FROM labels WHERE question_id = ? "
            "AND made_for IS NULL ORDER BY doc_id, annotator",
            (question_id,),
        )
        return [decode.label(self.path, r) for r in rows]

    def delete_label(self, question_id: str, doc_id: str, annotator: str) -> None:
        """Remove one annotator's label (undo of a first judgment); logged."""
        with self.transaction():
            old = self.conn.execute(
                "DELETE FROM labels WHERE question_id = ? AND doc_id = ? AND annotator = ? "
                "RETURNING grade",
                (question_id, doc_id, annotator),
            ).fetchone()
            if old is not None:
                self._event("label", annotator, question_id, doc_id, str(old[0]), None, now())

    def verdicts_for(self, question_id: str) -> list[Verdict]:
        """Every annotator's verdict on one question."""
        rows = self.conn.execute(
            "SELECT question_id, annotator, verdict, note FROM verdicts WHERE question_id = ? "
            "AND made_for IS NULL ORDER BY annotator",
            (question_id,),
        )
        return [decode.verdict(self.path, r) for r in rows]

    def delete_verdict(self, question_id: str, annotator: str) -> None:
        """Remove one annotator's verdict; logged."""
        with self.transaction():
            old = self.conn.execute(
                "DELETE FROM verdicts WHERE question_id = ? AND annotator = ? RETURNING verdict",
                (question_id, annotator),
            ).fetchone()
            if old is not None:
                self._event("verdict", annotator, question_id, None, old[0], None, now())

    def adjudication(self, question_id: str) -> Adjudication | None:
        """The adjudication of one question, or None."""
        r = self.conn.execute(
            "SELECT question_id, no_answer, gold, by, note FROM adjudications "
            "WHERE question_id = ? AND made_for IS NULL",
            (question_id,),
        ).fetchone()
        return decode.adjudication(self.path, r) if r else None

    def verdicts(self, question_ids: Iterable[str] | None = None) -> list[Verdict]:
        """Every verdict of every annotator (on the questions ``question_ids`` only)."""
        where, args = of_questions(question_ids)
        rows = self.conn.execute(
            "SELECT question_id, annotator, verdict, note FROM verdicts WHERE made_for IS NULL "
            f"{where} ORDER BY question_id, annotator",
            args,
        )
        return [decode.verdict(self.path, r) for r in rows]

    def write_verdicts(self, verdicts: Iterable[Verdict], *, event: str = "verdict") -> int:
        """Set verdicts (one per question and annotator); logs each change."""
        stamp = now()
        n = 0
        with self.transaction():
            for v in verdicts:
                old = self.conn.execute(
                    "SELECT verdict FROM verdicts WHERE question_id = ? AND annotator = ?",
                    (v.question_id, v.annotator),
                ).fetchone()
                self.conn.execute(
                    "INSERT INTO verdicts(question_id, annotator, verdict, note, updated) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(question_id, annotator) DO UPDATE "
                    "SET verdict = excluded.verdict, note = excluded.note, "
                    "updated = excluded.updated, made_for = NULL",
                    (v.question_id, v.annotator, v.verdict, v.note, stamp),
                )
                self._event(
                    event,
                    v.annotator,
                    v.question_id,
                    None,
                    None if old is None else old[0],
                    v.verdict,
                    stamp,
                )
                n += 1
        return n

    def adjudications(self, question_ids: Iterable[str] | None = None) -> list[Adjudication]:
        """Every adjudication (of the questions ``question_ids`` only)."""
        where, args = of_questions(question_ids)
        rows = self.conn.execute(
            "SELECT question_id, no_answer, gold, by, note FROM adjudications "
            f"WHERE made_for IS NULL {where} ORDER BY question_id",
            args,
        )
        return [decode.adjudication(self.path, r) for r in rows]

    def write_adjudication(self, adj: Adjudication) -> None:
        """Record (or replace) the final word on a question."""
        stamp = now()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO adjudications(question_id, no_answer, gold, by, at, note) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(question_id) DO UPDATE SET "
                "no_answer = excluded.no_answer, gold = excluded.gold, by = excluded.by, "
                "at = excluded.at, note = excluded.note, made_for = NULL",
                (
                    adj.question_id,
                    int(adj.no_answer),
                    canonical_json(dict(adj.gold)),
                    adj.by,
                    stamp,
                    adj.note,
                ),
            )
            new = _adjudication_event(adj)
            self._event("adjudication", adj.by, adj.question_id, None, None, new, stamp)

    def annotators(self) -> list[str]:
        """Everyone who labeled or gave a verdict, sorted."""
        rows = self.conn.execute(
            "SELECT annotator FROM labels UNION SELECT annotator FROM verdicts ORDER BY 1"
        )
        return [decode.text_column(self.path, "labels", "annotator", r[0]) for r in rows]


def of_questions(question_ids: Iterable[str] | None) -> tuple[str, tuple[str, ...]]:
    """SQL (``AND ...``) and its argument keeping the rows of ``question_ids`` (all: none)."""
    if question_ids is None:
        return "", ()
    return "AND question_id IN (SELECT value FROM json_each(?))", (json.dumps(list(question_ids)),)
