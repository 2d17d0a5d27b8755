"""When is a fitted number established? Evidence before thresholds: the one rule.

A number fitted on the data (a threshold that best separates two groups, a setting that
scores best) is always *some* number, even when it was fitted on one example: a no-answer
threshold "with balanced accuracy 1.000" from a single no-answer question says nothing.
So a fitted number is named only when the data it is fitted on reach fixed minimums,
counted per kind of evidence; below them the answer says how many more of each are
needed (:meth:`Evidence.says`) and names no number.

Each fit has one :class:`Rule`, defined here with its minimums, and its caller applies it:

* :data:`NO_ANSWER_THRESHOLD`: 5 no-answer and 5 answerable questions,
  :func:`engine.analysis.noanswer.calibrate` (``goldpan noanswer``, Review's no-answer panel);
* :data:`JUDGE_THRESHOLDS`: 30 grades people gave, 5 of them relevant and 5 not,
  :func:`engine.judges.calibration.calibrate` (``goldpan judge``'s model thresholds);
* :func:`fusion_setting`: :data:`FUSION_PER_FOLD` scored questions per fold of the
  held-out check, :func:`engine.analysis.fusion_sweep.fusion_sweep` (``sweep --fusion``'s tuned
  setting).

The minimums are deliberately small: they keep a number from being named on no evidence,
they do not make it precise (a threshold on 5 + 5 questions is still rough, and the
outputs around it show how rough).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.grades import MAX_GRADE, NOT_RELEVANT, RELEVANT


@dataclass(frozen=True)
class Minimum:
    """The fewest items of one kind a fit needs."""

    key: str
    """A stable name (the ``--json`` key)."""
    one: str
    """The kind, singular: ``no-answer question``."""
    many: str
    """The kind, plural: ``no-answer questions``."""
    least: int

    def noun(self, n: int) -> str:
        """``no-answer question`` for 1, ``no-answer questions`` for any other ``n``."""
        return self.one if n == 1 else self.many

    def count(self, n: int) -> str:
        """``1 no-answer question``, ``4 no-answer questions``."""
        return f"{n} {self.noun(n)}"


@dataclass(frozen=True)
class Count:
    """How many items of one kind there are, against the minimum."""

    minimum: Minimum
    have: int

    @property
    def more(self) -> int:
        """How many more are needed (0: enough)."""
        return max(0, self.minimum.least - self.have)


def _and(parts: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass(frozen=True)
class Evidence:
    """Whether a fit has enough data behind it, and if not, what it lacks."""

    fits: str
    """What is fitted: ``a no-answer threshold``."""
    counts: tuple[Count, ...]

    @property
    def established(self) -> bool:
        """Every minimum is reached: the fitted number may be named."""
        return all(c.more == 0 for c in self.counts)

    def says(self) -> str | None:
        """Why the number is not named, and how many more are needed (None: established)."""
        if self.established:
            return None
        least = _and([c.minimum.count(c.minimum.least) for c in self.counts])
        found = _and([c.minimum.count(c.have) for c in self.counts])
        more = _and([f"{c.more} more {c.minimum.noun(c.more)}" for c in self.counts if c.more])
        return f"{self.fits} needs at least {least}; found {found}: {more} needed"

    def to_json(self) -> dict[str, object]:
        """``{"established", "needs": {key: {"have", "least", "more"}}, "says"}``."""
        return {
            "established": self.established,
            "needs": {
                c.minimum.key: {"have": c.have, "least": c.minimum.least, "more": c.more}
                for c in self.counts
            },
            "says": self.says(),
        }


@dataclass(frozen=True)
class Rule:
    """A fit and the minimums its data must reach before the fitted number is named."""

    fits: str
    minimums: tuple[Minimum, ...]

    def check(self, have: Mapping[str, int]) -> Evidence:
        """The evidence for counts ``have`` (one per minimum's key)."""
        return Evidence(self.fits, tuple(Count(m, int(have[m.key])) for m in self.minimums))

    def least(self, key: str) -> int:
        """The minimum of one kind."""
        return next(m.least for m in self.minimums if m.key == key)


NO_ANSWER_THRESHOLD = Rule(
    "a no-answer threshold",
    (
        Minimum("no_answer", "no-answer question", "no-answer questions", 5),
        Minimum("answerable", "answerable question", "answerable questions", 5),
    ),
)
"""A threshold on the top-1 score that tells no-answer questions apart."""

_RELEVANT = f"({RELEVANT}-{MAX_GRADE})"
_NOT = f"({NOT_RELEVANT})"
JUDGE_THRESHOLDS = Rule(
    "calibrating",
    (
        Minimum("grades", "grade given by people", "grades given by people", 30),
        Minimum("relevant", f"relevant grade {_RELEVANT}", f"relevant grades {_RELEVANT}", 5),
        Minimum("not_relevant", f"not-relevant grade {_NOT}", f"not-relevant grades {_NOT}", 5),
    ),
)
"""A model judge's grade thresholds, fitted on the grades people gave."""

FUSION_PER_FOLD = 5
"""Scored questions per fold a fusion sweep needs before it names a tuned setting."""


def fusion_setting(folds: int) -> Rule:
    """The tuned setting of a fusion sweep with ``folds`` held-out folds."""
    return Rule(
        f"naming a tuned setting ({FUSION_PER_FOLD} questions in each of {folds} folds)",
        (Minimum("scored", "scored question", "scored questions", FUSION_PER_FOLD * folds),),
    )
