"""Model judges and their grades (``goldpan judge``), kept apart from people's labels.

A model judge is an annotator of its own, ``model:NAME``, whose grades live in
``model_labels``, never in ``labels``: every reader of people's judgments (gold, the
counters, scores, the judging queue, the team hand-out, merge, export) reads ``labels``
and so never sees them. Only the views that show a model beside the people (Adjudicate,
the Label screen when asked, the agreement figures, the model queues) read them here.

A judging run is one transaction: the judge's row (kind, model, thresholds and
calibration) and its grades of the questions it judged, which replace its earlier grades
of those questions. The event log gets one line per run or removal (no question named,
so an open session re-reads everything once), not one per grade.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from engine.types import ModelJudge, ModelLabel, canonical_json
from engine.workspace import rows as decode
from engine.workspace.judgments import EventLog
from engine.workspace.lifecycle import now

MODEL_JUDGED_EVENT = "model_judged"
"""The event of a judging run: ``new`` is ``{"questions", "grades"}`` (JSON)."""
MODEL_REMOVED_EVENT = "model_removed"
"""The event of a model judge and its grades removed: ``old`` is how many grades."""

_LABEL_COLUMNS = "question_id, doc_id, annotator, grade, score"


class ModelJudgeTables(EventLog):
    """The ``model_judges`` and ``model_labels`` tables."""

    def model_judges(self) -> list[ModelJudge]:
        """Every model judge, by annotator name."""
        rows = self.conn.execute(
            "SELECT annotator, kind, model, params FROM model_judges ORDER BY annotator"
        )
        return [decode.model_judge(self.path, r) for r in rows]

    def model_judge(self, annotator: str) -> ModelJudge | None:
        """One model judge, or None."""
        r = self.conn.execute(
            "SELECT annotator, kind, model, params FROM model_judges WHERE annotator = ?",
            (annotator,),
        ).fetchone()
        return decode.model_judge(self.path, r) if r else None

    def model_labels(self, annotator: str | None = None) -> list[ModelLabel]:
        """Every model grade of the questions' current texts (of one judge if named)."""
        where = "made_for IS NULL" + (" AND annotator = ?" if annotator is not None else "")
        rows = self.conn.execute(
            f"SELECT {_LABEL_COLUMNS} FROM model_labels WHERE {where} "
            "ORDER BY question_id, doc_id, annotator",
            () if annotator is None else (annotator,),
        )
        return [decode.model_label(self.path, r) for r in rows]

    def model_labels_for(self, question_id: str) -> list[ModelLabel]:
        """Every model judge's grades of one question (its current text)."""
        rows = self.conn.execute(
            f"SELECT {_LABEL_COLUMNS} FROM model_labels WHERE question_id = ? "
            "AND made_for IS NULL ORDER BY doc_id, annotator",
            (question_id,),
        )
        return [decode.model_label(self.path, r) for r in rows]

    def write_model_judgment(
        self,
        judge: ModelJudge,
        grades: Iterable[ModelLabel],
        questions: Collection[str],
    ) -> int:
        """Store a judging run: ``judge``'s row and its grades of ``questions``.

        The judge's earlier grades of those questions are replaced (a document no longer
        among the candidates loses its old grade); its grades of other questions stay.
        One transaction, one event. Returns how many grades were written.
        """
        stamp = now()
        n = 0
        with self.transaction():
            self.conn.execute(
                "INSERT INTO model_judges(annotator, kind, model, params, updated) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(annotator) DO UPDATE SET "
                "kind = excluded.kind, model = excluded.model, params = excluded.params, "
                "updated = excluded.updated",
                (
                    judge.annotator,
                    judge.kind,
                    judge.model,
                    canonical_json(dict(judge.params)),
                    stamp,
                ),
            )
            self.conn.executemany(
                "DELETE FROM model_labels WHERE annotator = ? AND question_id = ?",
                [(judge.annotator, q) for q in questions],
            )
            for g in grades:
                if g.annotator != judge.annotator or g.question_id not in questions:
                    raise ValueError(f"a grade of {g.annotator} for {g.question_id} in this run")
                self.conn.execute(
                    "INSERT INTO model_labels(question_id, doc_id, annotator, grade, score, "
                    "updated) VALUES (?, ?, ?, ?, ?, ?)",
                    (g.question_id, g.doc_id, g.annotator, g.grade, g.score, stamp),
                )
                n += 1
            summary = canonical_json({"questions": len(questions), "grades": n})
            self._event(MODEL_JUDGED_EVENT, judge.annotator, None, None, None, summary, stamp)
        return n

    def remove_model_judge(self, annotator: str) -> int | None:
        """Remove a model judge and every grade it gave; how many (None: no such judge)."""
        with self.transaction():
            count = self.conn.execute(
                "SELECT count(*) FROM model_labels WHERE annotator = ?", (annotator,)
            ).fetchone()[0]
            gone = self.conn.execute(
                "DELETE FROM model_judges WHERE annotator = ?", (annotator,)
            ).rowcount
            if not gone:
                return None
            # the foreign key's ON DELETE CASCADE removed the grades; said here as well, so
            # that a connection without foreign keys on cannot leave them behind
            self.conn.execute("DELETE FROM model_labels WHERE annotator = ?", (annotator,))
            self._event(MODEL_REMOVED_EVENT, annotator, None, None, str(count), None, now())
        return int(count)
