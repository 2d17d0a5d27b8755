"""A labeling session's questions: added, split, made from the query log, rewritten.

A mixin of :class:`~engine.session.labeling.LabelingSession`: each change goes through the
session's commit (or reloads it), and a rewrite joins the undo stack.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from engine.session.state import Change, SessionHost
from engine.workspace import WorkspaceError

if TYPE_CHECKING:
    from engine.live import LiveScores
    from engine.types import Question


class SessionQuestions(SessionHost):
    """The questions a session adds and edits (a mixin of the session)."""

    _writes: int
    _live: LiveScores | None

    if TYPE_CHECKING:

        def _take_rankings(self, question_ids: Collection[str]) -> None: ...

        def reload(self) -> None:
            """Read everything again (the session's own)."""

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
        self._writes += 1
        self.reload()  # a new row in every live score table
        return q

    def question_from_log(
        self, row: dict[str, Any], text: str, tags: Sequence[str]
    ) -> tuple[Question, str]:
        """A logged query made a question by this annotator; everything is read again.

        As :func:`engine.querylog.question_from_log` makes it (``kept`` or ``rewritten``).
        """
        from engine.querylog import question_from_log  # scipy: not before the first paint

        made = question_from_log(self.ws, row, text, tags, self.annotator)
        self.reload()
        return made

    def discard_log_query(self, log_id: int) -> None:
        """This annotator discards a logged query (another's decision first: it stands)."""
        self.ws.decide_log_query(log_id, "discarded", self.annotator)

    def edit_question(self, question_id: str, text: str, tags: Sequence[str] | None) -> Question:
        """Rewrite a question (the old text stays in the event log).

        A new text marks every judgment of the question as made for the old one (needing
        re-check, no longer gold), as a re-import does; :meth:`undo` brings them back.
        """
        old = self.ws.question(question_id)
        q = self._edit(question_id, text, tags)
        if old is not None and old.text != q.text:
            self.undo_stack.append(Change("question", question_id, None, old.text, q.text))
        return q

    def _edit(self, question_id: str, text: str, tags: Sequence[str] | None) -> Question:
        done: list[Question] = []
        # read back, not derived: a new text marks the question's judgments for re-check
        self._commit(
            question_id,
            lambda: done.append(self.ws.edit_question(question_id, text, tags, self.annotator)),
            None,
        )
        if self._live is not None:
            self._live.tags[question_id] = done[0].tags
            self._take_rankings([question_id])  # a new text: its rankings are of the old
        return done[0]
