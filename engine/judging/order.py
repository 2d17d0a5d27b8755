"""The order a question's candidates are judged in: gold first, and still blind.

The Label screen shows the pooled candidates (every retriever's top ``depth``) without any
retriever name, rank or score. Their *order* may still use what the retrievers said and
what the annotator judged, so that relevant documents come first and fewer judgments find
them. Every order here is a function of those two things only: the retrievers' cached
rankings and this annotator's grades. None reads a document's id, title, text or fields
(ties and the ``hash`` order use a hash of question and document id, which says nothing
about the document), so the order carries no information about a document that the
annotator could read as a hint, beyond "some retrievers put it high".

The orders (:data:`ORDERS`):

* ``hash``: a hash of (question id, doc id): goldpan's first order, unrelated to any
  ranking (it behaves like a random order).
* ``fused``: reciprocal rank fusion of every retriever's cached ranking (Cormack, Clarke
  & Büttcher 2009: score = sum of 1 / (60 + rank)), highest first. Static.
* ``mtf``: move-to-front (Cormack, Palmer & Clarke 1998): judge the next document of the
  retriever with the highest priority; a non-relevant judgment lowers its priority by
  one, so judging moves to another retriever. Equal priorities go to the retriever whose
  top documents held the most gold on your other questions ("global" MTF).
* ``maxmean``: the MaxMean bandit (Losada, Parapar & Barreiro 2016, 2017; NIST used it for
  TREC 2017 Common Core): each retriever is an arm whose mean is the relevant share of
  its judged top documents under a Beta prior; the next document is the top unjudged one
  of the arm with the highest mean. The prior is centred on the arm's relevant share on
  your other questions (weight of two judgments, the uniform prior's weight), so a new
  question starts with the retriever that has found the most gold so far.

An adaptive order (``mtf``, ``maxmean``) is a walk: each step picks a document and learns
its grade, when there is one. The Label screen walks with the grades given so far (a
document not judged yet teaches nothing), so the documents judged in the order keep their
places and only the rows after a new grade may move; :mod:`engine.simulate` walks with an
assessor's grades, which is how the figures of ``goldpan simulate`` are made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from engine.grades import is_relevant
from engine.pooling import blind_key
from engine.types import JUDGING_ORDERS

RRF_K = 60
"""The rank offset of reciprocal rank fusion (the same as the ``rrf`` retriever's)."""

PRIOR_WEIGHT = 2.0
"""How many judgments the cross-question prior of an arm weighs (Beta(1, 1)'s two)."""

ORDERS = JUDGING_ORDERS
"""Every judging order; the first is the default."""

DEFAULT_ORDER = ORDERS[0]
"""Chosen by ``goldpan simulate`` on Cranfield 1400 and BEIR DBPedia (benchmarks/RESULTS.md):
MaxMean found the first relevant document and all pooled ones soonest on both."""

GradeOf = Callable[[str], int | None]
"""A document's grade, or None when it has none (yet)."""


@dataclass(frozen=True)
class Record:
    """A retriever's judged top documents on other questions: how many, how many relevant."""

    relevant: int = 0
    judged: int = 0

    def __add__(self, other: Record) -> Record:
        """Both records together."""
        return Record(self.relevant + other.relevant, self.judged + other.judged)

    def __sub__(self, other: Record) -> Record:
        """This record without ``other`` (a part of it)."""
        return Record(self.relevant - other.relevant, self.judged - other.judged)

    @property
    def share(self) -> float:
        """The relevant share with a uniform prior: (relevant + 1) / (judged + 2)."""
        return (self.relevant + 1) / (self.judged + 2)


Records = Mapping[str, Record]
"""Retriever name -> its :class:`Record` on the other questions."""


@dataclass(frozen=True)
class PoolView:
    """What an order may read of one question: the retrievers' rankings, nothing else."""

    question_id: str
    rankings: Mapping[str, Sequence[str]]
    """Retriever name -> its cached ranking of the question (doc ids, best first)."""
    depth: int
    """How many of each ranking are pooled."""
    extra: Sequence[str] = ()
    """Candidates in no retriever's top ``depth`` (added by corpus search, proposed by
    feedback): judged after the pool, in fused order."""
    names: tuple[str, ...] = field(init=False)
    """The retrievers, sorted (arms are taken in this order when all else is equal)."""

    def __post_init__(self) -> None:
        """Fix the retrievers' order."""
        object.__setattr__(self, "names", tuple(sorted(self.rankings)))

    def tops(self) -> list[list[str]]:
        """Each retriever's pooled documents, in its rank order (in :attr:`names` order)."""
        return [list(dict.fromkeys(self.rankings[n][: self.depth])) for n in self.names]

    def pooled(self) -> list[str]:
        """The pool: every retriever's top ``depth``, each document once."""
        return list(dict.fromkeys(d for top in self.tops() for d in top))

    def extras(self) -> list[str]:
        """The candidates in no retriever's top ``depth``, each once."""
        pooled = set(self.pooled())
        return [d for d in dict.fromkeys(self.extra) if d not in pooled]

    def fused(self, docs: Sequence[str]) -> list[str]:
        """``docs`` by reciprocal rank fusion of the full cached rankings, ties by hash."""
        score: dict[str, float] = dict.fromkeys(docs, 0.0)
        for name in self.names:
            for rank, d in enumerate(self.rankings[name], start=1):
                if d in score:
                    score[d] += 1.0 / (RRF_K + rank)
        q = self.question_id
        return sorted(docs, key=lambda d: (-score[d], blind_key(q, d)))


def record_of(view: PoolView, grade_of: GradeOf) -> dict[str, Record]:
    """Each retriever's record on this question alone (its judged top documents)."""
    out: dict[str, Record] = {}
    for name, top in zip(view.names, view.tops(), strict=True):
        grades = [g for g in map(grade_of, top) if g is not None]
        out[name] = Record(sum(1 for g in grades if is_relevant(g)), len(grades))
    return out


def walk(order: str, view: PoolView, grade_of: GradeOf, records: Records) -> Iterator[str]:
    """Every candidate of ``view`` once, in ``order``, learning each grade as it goes.

    ``grade_of`` answers a document's grade (None: not judged, nothing learned);
    ``records`` are the retrievers' records on the other questions (for ``mtf`` and
    ``maxmean``; an unknown retriever has an empty one).
    """
    if order == "hash":
        q = view.question_id
        yield from sorted(view.pooled(), key=lambda d: blind_key(q, d))
        yield from sorted(view.extras(), key=lambda d: blind_key(q, d))
        return
    if order == "fused":
        yield from view.fused(view.pooled())
    elif order == "mtf":
        yield from _move_to_front(view, grade_of, records)
    elif order == "maxmean":
        yield from _maxmean(view, grade_of, records)
    else:
        raise ValueError(f"unknown judging order {order!r}; known: {', '.join(ORDERS)}")
    yield from view.fused(view.extras())


def candidate_order(
    order: str, view: PoolView, grades: Mapping[str, int], records: Records
) -> list[str]:
    """The Label screen's order: :func:`walk` with the grades given so far."""
    return list(walk(order, view, grades.get, records))


def _move_to_front(view: PoolView, grade_of: GradeOf, records: Records) -> Iterator[str]:
    """Cormack et al.'s move-to-front over the retrievers' tops."""
    tops = view.tops()
    prior = [records.get(n, Record()).share for n in view.names]
    priority = [0] * len(tops)
    at = [0] * len(tops)
    done: set[str] = set()
    while True:
        for i, top in enumerate(tops):
            while at[i] < len(top) and top[at[i]] in done:
                at[i] += 1
        live = [i for i, top in enumerate(tops) if at[i] < len(top)]
        if not live:
            return
        i = max(live, key=lambda i: (priority[i], prior[i], -i))
        d = tops[i][at[i]]
        done.add(d)
        yield d
        grade = grade_of(d)
        if grade is not None and not is_relevant(grade):
            priority[i] -= 1


def _maxmean(view: PoolView, grade_of: GradeOf, records: Records) -> Iterator[str]:
    """Losada et al.'s MaxMean over the retrievers' tops, with cross-question priors."""
    tops = view.tops()
    prior = [records.get(n, Record()).share for n in view.names]
    members = [set(top) for top in tops]
    relevant = [0] * len(tops)
    judged = [0] * len(tops)
    done: set[str] = set()

    def mean(i: int) -> float:
        return (PRIOR_WEIGHT * prior[i] + relevant[i]) / (PRIOR_WEIGHT + judged[i])

    while True:
        live = [i for i, top in enumerate(tops) if not members[i] <= done]
        if not live:
            return
        i = max(live, key=lambda i: (mean(i), prior[i], -i))
        d = next(d for d in tops[i] if d not in done)
        done.add(d)
        yield d
        grade = grade_of(d)
        if grade is None:
            continue
        for j, m in enumerate(members):
            if d in m:  # a document's grade is evidence on every retriever that found it
                judged[j] += 1
                relevant[j] += is_relevant(grade)
