"""App-wide messages (past tense: something happened)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class LabelSaved(Message):
    """A label or verdict was committed; scores for ``question_id`` changed."""

    question_id: str


@dataclass
class QuestionPooled(Message):
    """Every retriever ranked ``question_id`` (a worker finished)."""

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
