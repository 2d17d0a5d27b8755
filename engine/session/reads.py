"""What the app's screens read from the workspace, through the labeling session.

The screens never hold the session's connection (``session.ws``): every read they make is
one of these, so a reader sees in one place what a screen may ask of the workspace, and
every write goes through :class:`~engine.session.labeling.LabelingSession`'s own methods (each
checks for other processes' commits and keeps the live scores). Each read is the
workspace's, on the session's connection (the UI thread's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.types import Adjudication, Doc, Label, ModelLabel, Question, Verdict
    from engine.workspace import Workspace


class SessionReads:
    """The reads of a session's workspace that the screens make (a mixin of the session)."""

    ws: Workspace

    def question(self, question_id: str) -> Question | None:
        """One question (None when there is no such question)."""
        return self.ws.question(question_id)

    def questions(self) -> list[Question]:
        """Every question, in id order."""
        return self.ws.questions()

    def doc(self, doc_id: str) -> Doc | None:
        """One document of the corpus (None when there is no such document)."""
        return self.ws.doc(doc_id)

    def doc_count(self) -> int:
        """How many documents the corpus has."""
        return self.ws.doc_count()

    def labels(self) -> list[Label]:
        """Every annotator's labels."""
        return self.ws.labels()

    def labels_for(self, question_id: str) -> list[Label]:
        """Every annotator's labels of one question."""
        return self.ws.labels_for(question_id)

    def verdicts(self) -> list[Verdict]:
        """Every annotator's question verdicts (no answer, ...)."""
        return self.ws.verdicts()

    def verdicts_for(self, question_id: str) -> list[Verdict]:
        """Every annotator's verdicts on one question."""
        return self.ws.verdicts_for(question_id)

    def model_labels(self) -> list[ModelLabel]:
        """Every model judge's grades."""
        return self.ws.model_labels()

    def model_labels_for(self, question_id: str) -> list[ModelLabel]:
        """The model judges' grades of one question."""
        return self.ws.model_labels_for(question_id)

    def adjudication(self, question_id: str) -> Adjudication | None:
        """How a disputed question was settled (None: not settled)."""
        return self.ws.adjudication(question_id)

    def annotators(self) -> list[str]:
        """Everyone who labeled in this workspace."""
        return self.ws.annotators()

    def leases(self) -> dict[str, str]:
        """Served: question id -> the annotator judging it now."""
        return self.ws.leases()

    def next_log_query(self) -> dict[str, Any] | None:
        """The query log's next query waiting for a decision (None: none waits)."""
        return self.ws.next_log_query()

    def snapshots(self) -> list[tuple[str, str]]:
        """The stored snapshots: (name, when), oldest first."""
        return self.ws.snapshots()

    def snapshot(self, name: str) -> dict[str, Any] | None:
        """A stored snapshot's JSON document (None when there is none of that name)."""
        return self.ws.snapshot(name)
