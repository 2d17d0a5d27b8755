"""When judging a question may stop, and what a stop leaves: the one home of both rules.

**The offer.** Judging a question's candidates in a priority order
(:mod:`engine.judging.order`) finds its relevant documents early; the rest of the list is
mostly not relevant. The Label screen offers to stop a question (it never stops by
itself) once it has a relevant document and either

* the last ``after`` judgments in the order were all not relevant (Losada, Parapar &
  Barreiro 2019 study such rules: far less judging, system rankings nearly unchanged), or
* the estimated number of relevant documents among the candidates still unjudged is
  below ``below``: each unjudged candidate counts the relevant share of the best
  retriever that pooled it, as MaxMean estimates it on this question (its judged top
  documents here, with your other questions as the prior). The estimate leans high (a
  candidate not judged yet is one the order put later), so the rule errs on judging more.

A question with no relevant document yet is never offered a stop: stopping it would leave
it without gold (judge on, use beyond-the-pool feedback, or say "no answer").

**What a stop leaves.** A question is *stopped* when some annotator's stop stands for its
current text. Its candidates that nobody judged are *not judged (stopped)*: not grade 0
(nobody said they are not relevant), left out of the judging queue, and counted by every
front end (:func:`stopped_left`). A metric scores them as it scores any unjudged document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from engine.errors import BadInput
from engine.grades import is_relevant
from engine.judging.order import PRIOR_WEIGHT, PoolView, Record, Records
from engine.types import Stop

DEFAULT_STOP_AFTER = 5
"""Offer a stop after this many not relevant judgments in a row (see benchmarks/RESULTS.md:
on Cranfield 1400 it saves about a third of the judging and changes no retriever order)."""

DEFAULT_STOP_BELOW = 0.5
"""Offer a stop when fewer relevant documents than this are estimated to be left."""


@dataclass(frozen=True)
class StopRule:
    """When a stop is offered: ``after`` not relevant in a row, or fewer than ``below`` left.

    ``after`` 0 or ``below`` 0 turns that half off; both 0: never offered.
    """

    after: int = DEFAULT_STOP_AFTER
    below: float = DEFAULT_STOP_BELOW

    def __post_init__(self) -> None:
        """Refuse what no rule can mean."""
        if self.after < 0:
            raise BadInput(f"a stop after {self.after} judgments: give 0 (off) or more")
        if not 0 <= self.below < float("inf"):
            raise BadInput(f"a stop below {self.below} relevant documents: give 0 (off) or more")

    @property
    def off(self) -> bool:
        """Never offered."""
        return self.after == 0 and self.below == 0

    def describe(self) -> str:
        """The rule in words (``goldpan judging`` and the Label screen's help)."""
        if self.off:
            return "never offered"
        parts = []
        if self.after:
            parts.append(f"after {self.after} not relevant in a row")
        if self.below:
            parts.append(f"when fewer than {self.below:g} relevant are estimated left")
        return " or ".join(parts) + " (once a relevant document is found)"


NEVER = StopRule(0, 0.0)
"""The rule that never offers a stop."""


@dataclass(frozen=True)
class Offer:
    """A stop the Label screen offers, and why."""

    reason: str
    """Why, in words: stored with the stop (``5 not relevant in a row``)."""
    left: int
    """Candidates that would be left not judged (the session counts them as every view
    does: the ones nobody judged)."""
    estimate: float
    """The estimated relevant documents among them."""


def offer(
    rule: StopRule,
    order: Sequence[str],
    grades: Mapping[str, int],
    view: PoolView,
    records: Records,
) -> Offer | None:
    """The stop to offer on a question judged in ``order`` with ``grades``, or None.

    ``order`` is the question's candidates in judging order; ``grades`` the annotator's.
    Only the judged start of the order counts (up to the first candidate not judged):
    ``after`` looks at the judgments there, the estimate at every candidate not judged.
    """
    if rule.off:
        return None
    left = [d for d in order if d not in grades]
    if not left:
        return None
    start = order[: order.index(left[0])]
    if not any(is_relevant(grades[d]) for d in start):
        return None
    run = 0
    for d in reversed(start):
        if is_relevant(grades[d]):
            break
        run += 1
    estimate = relevant_left(view, grades, records, left)
    if rule.after and run >= rule.after:
        return Offer(f"{run} not relevant in a row", len(left), estimate)
    if rule.below and estimate < rule.below:
        return Offer(f"about {estimate:.1f} relevant left (estimate)", len(left), estimate)
    return None


def relevant_left(
    view: PoolView, grades: Mapping[str, int], records: Records, left: Iterable[str]
) -> float:
    """The estimated relevant documents among ``left`` (see the module's doc)."""
    tops = view.tops()
    means = []
    for name, top in zip(view.names, tops, strict=True):
        judged = [grades[d] for d in top if d in grades]
        prior = records.get(name, Record()).share
        relevant = sum(1 for g in judged if is_relevant(g))
        means.append((PRIOR_WEIGHT * prior + relevant) / (PRIOR_WEIGHT + len(judged)))
    floor = min(means, default=0.0)
    members = [set(top) for top in tops]
    return sum(
        max((m for m, top in zip(means, members, strict=True) if d in top), default=floor)
        for d in left
    )


def stopped_left(
    candidates: Mapping[str, Set[str]],
    judged: Mapping[str, Set[str]],
    stops: Iterable[Stop],
) -> dict[str, int]:
    """Stopped question -> how many of its candidates nobody judged (*not judged (stopped)*).

    ``candidates``: each question's candidates (the pool, what anyone graded, proposals);
    ``judged``: each question's documents someone graded; ``stops``: every stop standing.
    """
    out: dict[str, int] = {}
    for qid in sorted({s.question_id for s in stops}):
        out[qid] = len(candidates.get(qid, set()) - judged.get(qid, set()))
    return out
