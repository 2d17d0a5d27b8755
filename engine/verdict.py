"""When is a difference between two paired sets of values real? The one rule.

Two retrievers scored on the same questions (or one retriever now and at a snapshot)
differ on some questions and agree on the others. A difference of means is called
**real** at level ``alpha`` (:data:`LEVEL`, 5% two-sided) only when both paired tests of
:mod:`engine.analysis.compare` say so:

* the paired randomization (sign-flip) test gives ``p < alpha``, and
* the paired bootstrap ``1 - alpha`` percentile interval of the mean difference excludes 0.

The two usually agree; where they do not, nothing is called real (the issue that led to
this rule: an interval of [+0.016, +0.186] read as "excludes 0" beside p = 0.12).

Before either test, the **discordant** questions are counted: those where the two values
differ (by more than rounding, :func:`discordant`). Questions where they agree carry no
sign to flip, so with ``k`` discordant questions no two-sided paired test can give a
p-value below ``2 ** (1 - k)`` (every sign the same: 2 of the ``2 ** k`` flips are as
extreme). When that least p-value is not below ``alpha`` (``k <= 5`` at 5%), no verdict
is given at all and the answer says why ("4 questions differ: no test on 4 can reach
p < 0.05 (the least p is 0.125)").

Every front end presents a :class:`Verdict`, none decides: ``goldpan compare`` and
Review's compare panel (:func:`engine.analysis.compare.compare`), ``score --against``, Review's
snapshot diff and the CI summaries (:mod:`engine.ci.snapshots`), ``sweep --fusion``'s
table and warnings (:mod:`engine.analysis.fusion_sweep`), ``goldpan power``'s questions needed
(:func:`least_discordant`), and ``goldpan simulate``'s pairs of retrievers whose difference
is real under the full judgments (:mod:`engine.simulate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.errors import BadInput

LEVEL = 0.05
"""The default level: two-sided 5%, a 95% interval."""

TIE = 1e-12
"""Two values closer than this (relative to the larger, at least 1) are equal: metric
values computed in a different order agree only up to rounding."""

REAL = "real"
NOT_SHOWN = "not_shown"
TESTS_DISAGREE = "tests_disagree"
TOO_FEW = "too_few_discordant"
NO_QUESTIONS = "no_questions"
STATUSES = (REAL, NOT_SHOWN, TESTS_DISAGREE, TOO_FEW, NO_QUESTIONS)
"""Every :attr:`Verdict.status`, the names ``--json`` carries."""


def least_p(discordant: int) -> float:
    """The least two-sided p-value any paired test can give on ``discordant`` questions."""
    return 1.0 if discordant <= 1 else 2.0 ** (1 - discordant)


def least_discordant(level: float = LEVEL) -> int:
    """The fewest discordant questions on which a test can reach ``p < level``."""
    k = 1
    while least_p(k) >= level:
        k += 1
    return k


def _excludes_0(lo: float, hi: float) -> bool:
    """Whether the interval lies above or below 0 by more than rounding.

    A resampled mean of differences that cancel exactly can come out as 1e-17, not 0.
    """
    return min(abs(lo), abs(hi)) > TIE * max(1.0, abs(lo), abs(hi)) and (lo > 0 or hi < 0)


def check_level(level: float, samples: int) -> None:
    """Refuse a level no verdict can be given at.

    Raises:
        BadInput: ``level`` is not between 0 and 1, or ``samples`` sign flips cannot give
            a p-value below it (the least is ``1 / (samples + 1)``).
    """
    if not (math.isfinite(level) and 0 < level < 1):
        raise BadInput(f"level {level!r}: expected a number between 0 and 1, such as {LEVEL}")
    if samples < 1 or 1 / (samples + 1) >= level:
        least = math.floor(1 / level)
        raise BadInput(
            f"{samples} resamples cannot give a p-value below {level:g} (the least is "
            f"1 / (resamples + 1)): use at least {least}"
        )


def _pct(level: float) -> str:
    return f"{(1 - level) * 100:g}%"


def _questions(k: int) -> str:
    return f"{k} question{'' if k == 1 else 's'}"


def rule(level: float = LEVEL) -> str:
    """The rule in one sentence, for the foot of a table of verdicts."""
    return (
        "a difference is real only when the randomization test and the bootstrap interval "
        f"agree (p < {level:g} and the {_pct(level)} interval excludes 0); with k questions "
        f"that differ no test can go below p = 2^(1-k)"
    )


@dataclass(frozen=True)
class Verdict:
    """Whether A's and B's values differ for real, and why (the ``--json`` ``verdict``)."""

    status: str
    """One of :data:`STATUSES`."""
    level: float
    """Two-sided level of both tests (the interval is ``1 - level``)."""
    questions: int
    """Paired questions."""
    discordant: int
    """Questions where the two values differ."""
    p_value: float
    """The paired randomization test's two-sided p-value."""
    interval: tuple[float, float]
    """The paired bootstrap ``1 - level`` percentile interval of mean(A) - mean(B)."""

    @property
    def real(self) -> bool:
        """Both tests agree that the difference is real."""
        return self.status == REAL

    @property
    def higher(self) -> str | None:
        """``"a"`` or ``"b"``: whose mean is higher when the difference is real."""
        if not self.real:
            return None
        return "a" if self.interval[0] > 0 else "b"

    @property
    def least_p(self) -> float:
        """The least p-value a test on :attr:`discordant` questions can give."""
        return least_p(self.discordant)

    def _interval(self) -> str:
        lo, hi = self.interval
        return f"the {_pct(self.level)} interval [{lo:+.3f}, {hi:+.3f}]"

    def says(self, a: str = "A", b: str = "B") -> str:
        """The verdict in one sentence, naming the two sides ``a`` and ``b``."""
        k, alpha = self.discordant, f"{self.level:g}"
        differ = f"{_questions(k)} differ" if k != 1 else "1 question differs"
        if self.status == NO_QUESTIONS:
            return "no question to compare"
        if self.status == TOO_FEW:
            if k == 0:
                return f"{a} and {b} are equal on every question: there is no difference to test"
            return (
                f"{differ}: no test on {k} can reach p < {alpha} (the least p is {self.least_p:g})"
            )
        interval = self._interval()
        p = f"p = {self.p_value:.3g}"
        excludes = _excludes_0(*self.interval)
        if self.status == REAL:
            return (
                f"real: {a if self.higher == 'a' else b} is higher ({p} < {alpha} and "
                f"{interval} excludes 0; {differ})"
            )
        if self.status == TESTS_DISAGREE:
            said = (
                f"{interval} excludes 0 but the randomization test gives {p}, not below {alpha}"
                if excludes
                else f"the randomization test gives {p} < {alpha} but {interval} includes 0"
            )
            return f"not called real: the tests disagree ({said}; {differ})"
        return f"no real difference shown ({p}, {interval} includes 0; {differ})"

    def short(self) -> str:
        """A table cell: ``real``, ``not shown``, ``disagree``, ``too few (4)``, ``-``."""
        if self.status == TOO_FEW:
            return f"too few ({self.discordant})"
        return {REAL: "real", NOT_SHOWN: "not shown", TESTS_DISAGREE: "disagree"}.get(
            self.status, "-"
        )

    def to_json(self, a: str = "A", b: str = "B") -> dict[str, object]:
        """Plain JSON types under stable names (``says`` names the sides ``a`` and ``b``)."""
        return {
            "status": self.status,
            "real": self.real,
            "higher": self.higher,
            "level": self.level,
            "questions": self.questions,
            "discordant": self.discordant,
            "least_p": self.least_p,
            "p_value": self.p_value,
            "interval": list(self.interval),
            "says": self.says(a, b),
        }


def decide(
    questions: int,
    discordant: int,
    p_value: float,
    interval: tuple[float, float],
    level: float = LEVEL,
) -> Verdict:
    """The rule: real only when the sign-flip test and the interval agree at ``level``.

    ``p_value`` and ``interval`` are the paired randomization test's p-value and the
    paired bootstrap ``1 - level`` interval of the same differences
    (:func:`engine.analysis.compare.paired_tests` computes all three inputs).
    """
    lo, hi = interval
    if not (0 < level < 1 and math.isfinite(lo) and math.isfinite(hi) and 0 < p_value <= 1):
        raise ValueError(f"not a test's result: level {level}, p {p_value}, interval {interval}")
    if questions == 0:
        status = NO_QUESTIONS
    elif least_p(discordant) >= level:
        status = TOO_FEW
    else:
        by_p = p_value < level
        by_interval = _excludes_0(lo, hi)
        status = (
            REAL if by_p and by_interval else TESTS_DISAGREE if by_p or by_interval else NOT_SHOWN
        )
    return Verdict(status, level, questions, discordant, p_value, interval)
