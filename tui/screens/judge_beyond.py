"""Beyond the pool (`b` on the Label screen): one round of relevance feedback for a question.

The round reads the corpus, so the screen runs :func:`find_more` in a worker thread and
handles the :class:`FoundMore` it posts (``JudgeScreen.on_judge_screen_found_more``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from tui.crash import failure_notice

if TYPE_CHECKING:
    from engine.judging.feedback import Feedback, Round


class FoundMore(Message, namespace="judge_screen"):
    """Feedback's next documents for a question (or why there are none)."""

    def __init__(
        self,
        question_id: str,
        found: Round | None,
        feedback: Feedback | None,
        failure: str | None,
    ) -> None:
        super().__init__()
        self.question_id = question_id
        self.found = found
        self.feedback = feedback
        self.failure = failure


def find_more(workspace_path: Path, qid: str, known: Feedback | None) -> FoundMore:
    """One round of feedback for ``qid``, on a connection of this thread's own."""
    from engine.judging.feedback import judged_grades, load_feedback, next_round
    from engine.workspace import Workspace

    try:
        ws = Workspace.open(workspace_path, readonly=True)
        try:
            feedback = known
            if feedback is None or feedback.corpus_hash != ws.corpus_hash():
                feedback = load_feedback(ws)
            feedback.learn_questions(ws, [qid])
            grades = judged_grades(ws.labels([qid]), qid)
            found = next_round(feedback, qid, grades, ws.proposals([qid]))
        finally:
            ws.close()
    except Exception as exc:  # shown on the UI thread, never lost (a bug: logged)
        return FoundMore(qid, None, None, failure_notice(exc))
    return FoundMore(qid, found, feedback, None)


def found_notice(found: Round, qid: str, listed: set[str]) -> str:
    """What a round of feedback did, in words.

    How many documents came from beyond the pool, and how many of the candidates
    ``listed`` it moved up (feedback ranks both: :func:`engine.judging.feedback.next_round`).
    """
    new = sum(doc not in listed for doc in found.docs)
    what = (
        f"{len(found.docs)} more documents for {qid}"
        if new == len(found.docs)
        else f"{len(found.docs)} documents first for {qid} ({new} beyond the pool, "
        f"{len(found.docs) - new} of its candidates moved up)"
    )
    left = (
        "relevant left: not estimated yet (after two rounds)"
        if found.relevant_left is None
        else f"about {found.relevant_left:.1f} relevant left"
    )
    return f"{what} ({left}; {found.method})."
