"""A labeling session: one annotator's changes to a workspace, with undo and live scores.

The judge screen (and ``goldpan label``) go through this object: every change is one small
transaction, committed before the call returns, and the question's resolved gold and its
row in the live scores are updated at once. Undo walks back this session's own changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.analysis import latency
from engine.gold import Gold, resolve_one, with_recheck
from engine.live import LiveScores
from engine.pooling import DEFAULT_POOL_DEPTH, Candidate, pool
from engine.scoring import workspace_golds
from engine.types import VERDICTS, Adjudication, Label, Question, Verdict
from engine.workspace import Workspace, WorkspaceError


@dataclass(frozen=True)
class Change:
    """One change this session made, with what it replaced (for undo)."""

    kind: str
    """``label``, ``verdict`` or ``question``."""
    question_id: str
    doc_id: str | None
    old: object
    """The previous grade, (verdict, note) or question text; None when there was none."""


class LabelingSession:
    """One annotator working on one workspace (main-thread connection)."""

    def __init__(self, ws: Workspace, annotator: str) -> None:
        """Load gold and cached rankings into live scores."""
        if not annotator.strip():
            raise WorkspaceError("an annotator name is needed")
        self.ws = ws
        self.annotator = annotator
        self.undo_stack: list[Change] = []
        self._data_version = -1
        self.live = self._load_live()

    # -- loading -------------------------------------------------------------------------

    def _load_live(self) -> LiveScores:
        ws = self.ws
        self._data_version = self.data_version()
        questions = ws.questions()
        golds = workspace_golds(ws)
        return LiveScores(
            [q.id for q in questions],
            golds,
            ws.all_runs(),
            tags={q.id: q.tags for q in questions},
            latency=latency(ws),
        )

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: changes when another connection commits."""
        return int(self.ws.conn.execute("PRAGMA data_version").fetchone()[0])

    def reload(self) -> None:
        """Re-read everything (another annotator or process changed the workspace)."""
        self.live = self._load_live()

    def reload_if_changed(self) -> bool:
        """Reload when another connection has committed since the last load."""
        if self.data_version() != self._data_version:
            self.reload()
            return True
        return False

    # -- reading -------------------------------------------------------------------------

    def gold(self, question_id: str) -> Gold:
        """The resolved gold of one question, read from the workspace now."""
        labels: dict[str, dict[str, int]] = {}
        for lab in self.ws.labels_for(question_id):
            labels.setdefault(lab.annotator, {})[lab.doc_id] = lab.grade
        verdicts = {v.annotator: v.verdict for v in self.ws.verdicts_for(question_id)}
        gold = resolve_one(question_id, labels, verdicts, self.ws.adjudication(question_id))
        return with_recheck(gold, self.ws.recheck_counts(question_id).get(question_id, 0))

    def my_grades(self, question_id: str) -> dict[str, int]:
        """This annotator's grades of one question."""
        return {
            lab.doc_id: lab.grade
            for lab in self.ws.labels_for(question_id)
            if lab.annotator == self.annotator
        }

    def my_verdict(self, question_id: str) -> Verdict | None:
        """This annotator's verdict on one question."""
        for v in self.ws.verdicts_for(question_id):
            if v.annotator == self.annotator:
                return v
        return None

    def candidates(self, question_id: str, depth: int = DEFAULT_POOL_DEPTH) -> list[Candidate]:
        """The pooled candidates of a question, with every document anyone judged."""
        rankings = {r: self.live.rankings[r].get(question_id, ()) for r in self.live.retrievers}
        judged = [lab.doc_id for lab in self.ws.labels_for(question_id)]
        return pool(question_id, rankings, depth, extra=judged)

    # -- changing ------------------------------------------------------------------------

    def _refresh(self, question_id: str) -> Gold:
        gold = self.gold(question_id)
        self.live.update(gold)
        self._data_version = self.data_version()
        return gold

    def set_grade(self, question_id: str, doc_id: str, grade: int) -> Gold:
        """Grade a document (0-3) for a question; committed when this returns."""
        if not 0 <= grade <= 3:
            raise WorkspaceError(f"grade {grade} is out of range; expected 0-3")
        old = self.my_grades(question_id).get(doc_id)
        if old == grade:
            return self.gold(question_id)
        self.ws.write_labels([Label(question_id, doc_id, self.annotator, grade)])
        self.undo_stack.append(Change("label", question_id, doc_id, old))
        return self._refresh(question_id)

    def set_verdict(self, question_id: str, verdict: str, note: str = "") -> Gold:
        """Give a verdict on a question (no answer, ambiguous, skip, answerable)."""
        if verdict not in VERDICTS:
            raise WorkspaceError(f"unknown verdict {verdict!r}; expected one of {VERDICTS}")
        old = self.my_verdict(question_id)
        self.ws.write_verdicts([Verdict(question_id, self.annotator, verdict, note)])
        self.undo_stack.append(
            Change("verdict", question_id, None, None if old is None else (old.verdict, old.note))
        )
        return self._refresh(question_id)

    def clear_verdict(self, question_id: str) -> Gold:
        """Take back this annotator's verdict on a question."""
        old = self.my_verdict(question_id)
        if old is None:
            return self.gold(question_id)
        self.ws.delete_verdict(question_id, self.annotator)
        self.undo_stack.append(Change("verdict", question_id, None, (old.verdict, old.note)))
        return self._refresh(question_id)

    def adjudicate(
        self, question_id: str, gold: dict[str, int], *, no_answer: bool = False, note: str = ""
    ) -> Gold:
        """Settle a question: the final gold (grades >= 1 kept) or no answer; logged."""
        final = {d: g for d, g in gold.items() if g >= 1}
        self.ws.write_adjudication(
            Adjudication(question_id, no_answer, {} if no_answer else final, self.annotator, note)
        )
        return self._refresh(question_id)

    def split_question(self, question_id: str, text: str) -> Question:
        """Split a question: a new question with the same tags plus ``split``."""
        old = self.ws.question(question_id)
        if old is None:
            raise WorkspaceError(f"no question {question_id!r}")
        tags = [*old.tags, "split"] if "split" not in old.tags else list(old.tags)
        q = self.add_question(text, tags)
        self.ws.log_event("split", self.annotator, f"{question_id} -> {q.id}")
        return q

    def add_question(self, text: str, tags: Sequence[str]) -> Question:
        """A question written blind in goldpan."""
        q = self.ws.add_question(text, tags, self.annotator, written_blind=True)
        self.live = self._load_live()
        return q

    def edit_question(self, question_id: str, text: str, tags: Sequence[str] | None) -> Question:
        """Rewrite a question (the old text stays in the event log)."""
        old = self.ws.question(question_id)
        q = self.ws.edit_question(question_id, text, tags, self.annotator)
        if old is not None and old.text != q.text:
            self.undo_stack.append(Change("question", question_id, None, old.text))
        self.live.tags[question_id] = q.tags
        return q

    def undo(self) -> Change | None:
        """Revert this session's last change; None when there is nothing to undo."""
        if not self.undo_stack:
            return None
        change = self.undo_stack.pop()
        q = change.question_id
        if change.kind == "label":
            assert change.doc_id is not None
            if change.old is None:
                self.ws.delete_label(q, change.doc_id, self.annotator)
            else:
                grade = int(str(change.old))
                self.ws.write_labels([Label(q, change.doc_id, self.annotator, grade)])
        elif change.kind == "verdict":
            if change.old is None:
                self.ws.delete_verdict(q, self.annotator)
            else:
                old = change.old
                assert isinstance(old, tuple)
                self.ws.write_verdicts([Verdict(q, self.annotator, str(old[0]), str(old[1]))])
        else:
            self.ws.edit_question(q, str(change.old), None, self.annotator)
        self._refresh(q)
        return change
