"""The judging queue: spend annotators' time where the test set is least complete.

A question's pool is the union of every retriever's top ``k``. A document in the pool
that nobody has judged is a hole: if it is relevant, some retriever's score is wrong.
The queue puts first the questions with the most unjudged pooled documents, then the
disputed and ambiguous ones (they need an adjudicator, not more judging). Questions
already settled as no-answer, and adjudicated ones, are left out.

Coverage@k of a retriever is the share of its top ``k`` documents that someone has
judged, averaged over the questions it ranked: a retriever with low coverage is scored
on guesses (unjudged documents count as not relevant), so its numbers are too low.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from engine.gold import Gold, Status

DEFAULT_K = 10


@dataclass(frozen=True)
class QueueItem:
    """A question to work on, and why."""

    question_id: str
    status: Status
    unjudged: int
    """Pooled documents (union of every retriever's top k) nobody has judged."""
    reason: str
    """``unjudged`` or ``adjudicate``."""


def judging_queue(
    golds: Mapping[str, Gold],
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    judged: Mapping[str, Set[str]],
    k: int = DEFAULT_K,
) -> list[QueueItem]:
    """Questions with unjudged pooled documents (most first), then those to adjudicate."""
    holes: list[QueueItem] = []
    settle: list[QueueItem] = []
    for qid in sorted(golds):
        gold = golds[qid]
        if gold.adjudicated or gold.status is Status.NO_ANSWER:
            continue
        pooled: set[str] = set()
        for per_question in rankings.values():
            pooled.update(per_question.get(qid, ())[:k])
        missing = len(pooled - set(judged.get(qid, ())))
        if missing:
            holes.append(QueueItem(qid, gold.status, missing, "unjudged"))
        elif gold.status in (Status.DISPUTED, Status.AMBIGUOUS):
            settle.append(QueueItem(qid, gold.status, 0, "adjudicate"))
    holes.sort(key=lambda item: (-item.unjudged, item.question_id))
    return holes + settle


def coverage_at_k(
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    judged: Mapping[str, Set[str]],
    k: int = DEFAULT_K,
) -> dict[str, float]:
    """Per retriever: the mean share of its top ``k`` that someone has judged."""
    out: dict[str, float] = {}
    for name, per_question in rankings.items():
        shares = []
        for qid, ranking in per_question.items():
            top = ranking[:k]
            if top:
                seen = judged.get(qid, set())
                shares.append(sum(1 for d in top if d in seen) / len(top))
        out[name] = sum(shares) / len(shares) if shares else 0.0
    return out


def judged_docs(labels: Sequence[tuple[str, str]]) -> dict[str, set[str]]:
    """Question id -> every document some annotator judged, from (question, doc) pairs."""
    out: dict[str, set[str]] = {}
    for qid, doc in labels:
        out.setdefault(qid, set()).add(doc)
    return out
