"""App-wide messages (past tense: something happened)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class LabelSaved(Message):
    """A label or verdict was committed; scores for ``question_id`` changed."""

    question_id: str


@dataclass
class QuestionPooled(Message, bubble=False):
    """Every retriever ranked ``question_id`` (a worker finished).

    It does not bubble: the app hands it on to the current screen, and bubbling back up
    to the app would hand it on again, forever (the judge screen redrew about 50 times a
    second after a question was saved).
    """

    question_id: str
    rankings: dict[str, tuple[str, ...]]


@dataclass
class PoolFailed(Message):
    """Pooling ``question_id`` failed; ``error`` says why."""

    question_id: str
    error: str


@dataclass
class IndexesReady(Message):
    """The retrievers' indexes (Kiwi included) are built; pooling a question is fast now."""

    seconds: float
