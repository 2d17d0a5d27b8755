"""The judging queue: spend annotators' time where the test set is least complete.

A question's pool is the union of every retriever's top ``k``. A document in the pool
that nobody has judged is a hole: if it is relevant, some retriever's score is wrong.
The queue puts first the questions with the most unjudged pooled documents, then the
disputed and ambiguous ones (they need an adjudicator, not more judging), then the
stopped ones: their holes were left on purpose (*not judged (stopped)*, see
:mod:`engine.judging.stopping`), counted but not asked for. Questions already settled as
no-answer, and adjudicated ones, are left out.

Coverage@k of a retriever is the share of its top ``k`` documents that someone has
judged, averaged over the questions it ranked: a retriever with low coverage is scored
on guesses (unjudged documents count as not relevant), so its numbers are too low.

A model judge (``goldpan judge``) feeds two more queues, for people to look at, never to
change a label by itself: where the model and the people disagree most
(:func:`disagreement_queue`), and what the model thinks relevant that no person has
judged (:func:`model_holes_queue`: the holes in the pool it points at).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from engine.gold import Gold, Status
from engine.grades import is_relevant
from engine.pooling import pooled_docs
from engine.types import Label, ModelLabel

DEFAULT_K = 10


@dataclass(frozen=True)
class QueueItem:
    """A question to work on, and why."""

    question_id: str
    status: Status
    unjudged: int
    """Pooled documents (union of every retriever's top k) nobody has judged, not stopped."""
    reason: str
    """``unjudged``, ``adjudicate`` or ``stopped``."""
    stopped: int = 0
    """Pooled documents left not judged by a stop."""


def judging_queue(
    golds: Mapping[str, Gold],
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    judged: Mapping[str, Set[str]],
    k: int = DEFAULT_K,
    *,
    pools: Mapping[str, Set[str]] | None = None,
    stopped: Mapping[str, int] | None = None,
) -> list[QueueItem]:
    """Questions with unjudged pooled documents (most first), to adjudicate, then stopped.

    ``pools``: each question's pool at depth ``k`` when already known (see
    :meth:`engine.live.LiveScores.pools`), else made from ``rankings``. ``stopped``: each
    stopped question's candidates not judged (:func:`engine.counters.stopped_per_question`).
    """
    holes, settle, stops = _queue(golds, rankings, judged, k, pools, stopped)
    return (
        [QueueItem(qid, status, -minus, "unjudged") for minus, qid, status in holes]
        + [QueueItem(qid, status, 0, "adjudicate", n) for qid, status, n in settle]
        + [QueueItem(qid, status, 0, "stopped", n) for qid, status, n in stops]
    )


def queue_order(
    golds: Mapping[str, Gold],
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    judged: Mapping[str, Set[str]],
    k: int = DEFAULT_K,
    *,
    pools: Mapping[str, Set[str]] | None = None,
    stopped: Mapping[str, int] | None = None,
) -> list[str]:
    """The question ids of :func:`judging_queue`, in its order (none of its items made).

    Handing out the next question ranks every question by it: building an item per
    question was half of that.
    """
    holes, settle, stops = _queue(golds, rankings, judged, k, pools, stopped)
    return [qid for _, qid, _ in holes] + [q for q, _, _ in settle] + [q for q, _, _ in stops]


def _queue(
    golds: Mapping[str, Gold],
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    judged: Mapping[str, Set[str]],
    k: int,
    pools: Mapping[str, Set[str]] | None,
    stopped: Mapping[str, int] | None,
) -> tuple[
    list[tuple[int, str, Status]], list[tuple[str, Status, int]], list[tuple[str, Status, int]]
]:
    """The queue's parts, in order.

    (minus unjudged, id, status); then (id, status, stopped holes) to adjudicate; then
    (id, status, stopped holes) stopped.
    """
    holes: list[tuple[int, str, Status]] = []
    settle: list[tuple[str, Status, int]] = []
    stops: list[tuple[str, Status, int]] = []
    stopped = stopped or {}
    for qid, gold in golds.items():
        status = gold.status
        if gold.adjudicated or status is Status.NO_ANSWER:
            continue
        left = stopped.get(qid)
        if left is None:
            pooled = pools[qid] if pools is not None else pooled_docs(rankings, qid, k)
            seen = judged.get(qid)
            missing = len(pooled - seen) if seen else len(pooled)
            if missing:
                holes.append((-missing, qid, status))  # ids are unique: status never compared
                continue
        if status in (Status.DISPUTED, Status.AMBIGUOUS):
            settle.append((qid, status, left or 0))
        elif left is not None:
            stops.append((qid, status, left))
    holes.sort()  # most unjudged first, then by id
    settle.sort()
    stops.sort()
    return holes, settle, stops


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


@dataclass(frozen=True)
class ModelQueueItem:
    """A question a model judge points at, and the documents why."""

    question_id: str
    status: Status
    docs: tuple[str, ...]
    """The documents: where the model and a person differ on relevance, or that the
    model graded relevant and no person judged."""
    distance: int
    """Disagreement: the sum over ``docs`` of the largest grade difference between the
    model and a person. Holes: the sum of the model's grades of ``docs``."""


def disagreement_queue(
    golds: Mapping[str, Gold],
    model: Sequence[ModelLabel],
    people: Sequence[Label],
) -> list[ModelQueueItem]:
    """Questions where one model judge and the people disagree most, most first.

    A document counts when the model's relevant-or-not (grade >= 1) differs from at
    least one person's who graded it; questions are ordered by how many such documents,
    then by the grade distance, then by id. Adjudicated questions are left out (a person
    has settled them).
    """
    mine = {(m.question_id, m.doc_id): m.grade for m in model}
    theirs: dict[tuple[str, str], list[int]] = {}
    for lab in people:
        theirs.setdefault((lab.question_id, lab.doc_id), []).append(lab.grade)
    per_q: dict[str, list[tuple[str, int]]] = {}
    for (q, d), grade in mine.items():
        others = theirs.get((q, d))
        gold = golds.get(q)
        if not others or gold is None or gold.adjudicated:
            continue
        if any(is_relevant(g) != is_relevant(grade) for g in others):
            per_q.setdefault(q, []).append((d, max(abs(g - grade) for g in others)))
    items = [
        ModelQueueItem(
            q, golds[q].status, tuple(sorted(d for d, _ in found)), sum(x for _, x in found)
        )
        for q, found in per_q.items()
    ]
    items.sort(key=lambda i: (-len(i.docs), -i.distance, i.question_id))
    return items


def model_holes_queue(
    golds: Mapping[str, Gold],
    model: Sequence[ModelLabel],
    people: Sequence[Label],
) -> list[ModelQueueItem]:
    """Questions with documents the model graded relevant that no person judged.

    Ordered by how many such documents, then the sum of the model's grades of them,
    then by id. Adjudicated questions are left out; a question settled as no answer by
    its annotators is kept (a relevant document there is worth a look).
    """
    judged = {(lab.question_id, lab.doc_id) for lab in people}
    per_q: dict[str, list[tuple[str, int]]] = {}
    for m in model:
        gold = golds.get(m.question_id)
        if m.grade < 1 or gold is None or gold.adjudicated:
            continue
        if (m.question_id, m.doc_id) not in judged:
            per_q.setdefault(m.question_id, []).append((m.doc_id, m.grade))
    items = [
        ModelQueueItem(
            q, golds[q].status, tuple(sorted(d for d, _ in found)), sum(g for _, g in found)
        )
        for q, found in per_q.items()
    ]
    items.sort(key=lambda i: (-len(i.docs), -i.distance, i.question_id))
    return items
