"""No-answer calibration: can a threshold on the top-1 score reject unanswerable questions?

A retriever always returns something; whether "nothing relevant" can be told apart
depends on its scores. For one retriever this module takes the top-1 score of every
answerable (scored) question and every no-answer question and, for each candidate
threshold ``t`` (rejecting a question when its top-1 score is below ``t``), counts the
answerable questions wrongly rejected and the no-answer questions caught. The best
threshold maximises balanced accuracy, the mean of the two recalls (no-answer caught
and answerable kept), which does not reward a threshold for the larger class's size.
When even the best threshold stays below :data:`USABLE_BALANCED_ACCURACY`, the two
distributions overlap too much for any threshold to work (the seed studies' reranker
case), and the result says so.

A threshold is named only on enough questions of both kinds
(:data:`engine.evidence.NO_ANSWER_THRESHOLD`: 5 and 5): below that the result has no
table and no best threshold, and says how many more questions are needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.evidence import NO_ANSWER_THRESHOLD, Evidence

USABLE_BALANCED_ACCURACY = 0.75
"""Below this best balanced accuracy, no threshold separates the two groups usefully."""


@dataclass(frozen=True)
class ThresholdRow:
    """What rejecting every question whose top-1 score is below ``threshold`` does."""

    threshold: float
    answerable_rejected: int
    no_answer_caught: int
    balanced_accuracy: float


@dataclass
class Calibration:
    """Top-1 scores of both groups and the threshold table."""

    retriever: str
    answerable: list[float]
    no_answer: list[float]
    table: list[ThresholdRow] = field(default_factory=list)
    best: ThresholdRow | None = None

    @property
    def evidence(self) -> Evidence:
        """Whether there are enough questions of both kinds to name a threshold."""
        return NO_ANSWER_THRESHOLD.check(
            {"no_answer": len(self.no_answer), "answerable": len(self.answerable)}
        )

    @property
    def usable(self) -> bool:
        """True when a threshold is established and separates the groups well enough."""
        return self.best is not None and self.best.balanced_accuracy >= USABLE_BALANCED_ACCURACY

    def warning(self) -> str | None:
        """Why no threshold can be used (None: the best one can)."""
        if self.usable:
            return None
        return self.evidence.says() or (
            "the top-1 scores of answerable and no-answer questions overlap so much "
            "that no threshold separates them"
        )

    def to_json(self) -> dict[str, object]:
        """Plain JSON types (``established`` false: no threshold is named)."""
        evidence = self.evidence.to_json()
        return {
            "retriever": self.retriever,
            "answerable": len(self.answerable),
            "no_answer": len(self.no_answer),
            "answerable_top1": self.answerable,
            "no_answer_top1": self.no_answer,
            "established": evidence["established"],
            "needs": evidence["needs"],
            "thresholds": [row.__dict__ for row in self.table],
            "best": None if self.best is None else self.best.__dict__,
            "usable": self.usable,
            "warning": self.warning(),
        }


def calibrate(
    retriever: str, answerable: Sequence[float], no_answer: Sequence[float]
) -> Calibration:
    """The threshold table over every distinct top-1 score (and one above them all).

    Empty (no table, no best) until :data:`~engine.evidence.NO_ANSWER_THRESHOLD` is met.
    """
    ans = sorted(float(x) for x in answerable)
    na = sorted(float(x) for x in no_answer)
    cal = Calibration(retriever, ans, na)
    if not cal.evidence.established:
        return cal
    candidates = sorted(set(ans) | set(na))
    candidates.append(candidates[-1] + 1.0)  # reject everything
    for t in candidates:
        rejected = sum(1 for x in ans if x < t)
        caught = sum(1 for x in na if x < t)
        ba = (caught / len(na) + (len(ans) - rejected) / len(ans)) / 2
        cal.table.append(ThresholdRow(t, rejected, caught, ba))
    cal.best = max(cal.table, key=lambda r: (r.balanced_accuracy, -r.threshold))
    return cal
