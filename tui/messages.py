"""App-wide messages (past tense: something happened)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class WorkspaceChanged(Message, bubble=False):
    """Something was committed (``question_id``: where, when one question is concerned).

    The app sends one to each live screen; it never bubbles, so it cannot come back to
    the app. A screen compares ``LabelingSession.change_token()`` with the one it last
    drew under, redraws now when it is the screen on top, and otherwise when it resumes.
    """

    question_id: str | None
    pooled: bool = False
    """The question was (re)ranked by every retriever."""


@dataclass
class QuestionPooled(Message, bubble=False):
    """Every retriever ranked ``question_id`` (a worker finished; for the app alone)."""

    question_id: str
    cannot_rank: frozenset[str] = frozenset()
    """The retrievers that could not rank it (not trusted here, failed)."""
    ranked: frozenset[str] = frozenset()
    """The retrievers that ranked it now."""


@dataclass
class QuestionsRanked(Message, bubble=False):
    """A worker ranked the questions that were not ranked yet (for the app alone)."""

    question_ids: tuple[str, ...]
    cannot_rank: frozenset[str] = frozenset()
    """The retrievers that could not rank them (not trusted here, failed)."""
    ranked: frozenset[str] = frozenset()
    """The retrievers that ranked some of them now."""


@dataclass
class PoolFailed(Message):
    """Pooling ``question_id`` failed; ``error`` says why."""

    question_id: str
    error: str


@dataclass
class IndexesReady(Message):
    """The retrievers' indexes (Kiwi included) are built; pooling a question is fast now."""

    seconds: float
