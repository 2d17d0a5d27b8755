"""How many questions are enough? Power of a paired comparison of two retrievers.

With ``n`` questions scored by retrievers A and B, let ``d_i`` be question *i*'s value of
A minus B's (one metric) and ``sd`` the sample standard deviation of the ``d_i``. For a
two-sided test at level ``alpha`` with power ``1 - beta`` the normal approximation of the
paired t-test (Sakai 2016, "Statistical significance, power, and sample sizes: a
systematic review of SIGIR and TOIS, 2006-2015", SIGIR; Webber, Moffat & Zobel 2008,
"Statistical power in retrieval experimentation", CIKM) gives

* the **minimum detectable difference** at the current ``n``::

      MDE = (z_{1-alpha/2} + z_{1-beta}) * sd / sqrt(n)

* the **number of questions needed** to detect a true difference ``d`` (the observed
  mean difference is the estimate)::

      n_needed = ceil(((z_{1-alpha/2} + z_{1-beta}) * sd / |d|) ** 2)

With ``alpha`` = 0.05 and power 0.8, ``z_{0.975} + z_{0.8}`` = 1.960 + 0.842 = 2.802. The
``sd`` is the one observed on the current questions: new questions are assumed to vary as
much as these. The verdict of :mod:`engine.verdict` (the randomization test and the
bootstrap interval agreeing) calls such a difference real at about the same ``n``
(tests/engine/analysis/test_power.py checks it by simulation).

A verdict also needs enough **discordant** questions (where A and B differ): with ``k``
of them no test goes below ``p = 2 ** (1 - k)``, so at 5% at least 6
(:func:`engine.verdict.least_discordant`). When the questions needed at the current
share of discordant questions, ``ceil(6 * n / k)``, are more than the formula's, those
are the questions needed.

When the differences do not vary at all (``sd`` = 0: the two score alike on every question,
or one is ahead by the same amount on every question) there is nothing to estimate from, and
neither number is given: the formulas would claim that any difference can be seen.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy.typing as npt

from engine.analysis.compare import discordant, paired_diffs
from engine.metrics import DEFAULT_METRIC
from engine.scoring import paired_values
from engine.verdict import LEVEL, least_discordant
from engine.workspace import Workspace

ALPHA = LEVEL
POWER = 0.8

STILL = 1e-12
"""A standard deviation (or mean) of the differences at most this is 0: metric values in
0..1 that agree up to floating-point rounding do not vary."""


def z_sum(alpha: float = ALPHA, power: float = POWER) -> float:
    """``z_{1-alpha/2} + z_{power}`` of the standard normal distribution."""
    z = NormalDist()
    return z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)


@dataclass(frozen=True)
class Power:
    """The ``goldpan power --json`` shape."""

    a: str
    b: str
    metric: str
    n: int
    diff: float
    """Observed mean of A - B."""
    sd: float
    """Sample standard deviation of the per-question differences."""
    mde: float | None
    """Minimum detectable difference at ``n`` (None with fewer than 2 questions, or when
    the differences do not vary: ``sd`` 0)."""
    n_needed: int | None
    """Questions needed to detect ``diff`` (None when ``diff`` or ``sd`` is 0, or ``n`` < 2)."""
    discordant: int
    """Questions where A and B differ."""
    least_discordant: int
    """The fewest discordant questions a verdict at ``alpha`` needs."""

    def to_json(self) -> dict[str, object]:
        """Plain JSON types."""
        return asdict(self)


def n_needed(diff: float, sd: float, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Questions needed to detect a true mean difference ``diff`` (None for 0)."""
    if diff == 0 or not math.isfinite(diff):
        return None
    return max(2, math.ceil((z_sum(alpha, power) * sd / abs(diff)) ** 2))


def mde(sd: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The minimum detectable difference with ``n`` questions (None for n < 2)."""
    if n < 2:
        return None
    return z_sum(alpha, power) * sd / math.sqrt(n)


def power_of(
    a_name: str,
    b_name: str,
    metric: str,
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
) -> Power:
    """MDE and questions needed from per-question values of A and B (same questions)."""
    d = paired_diffs(a, b)
    n = int(d.size)
    diff = float(d.mean()) if n else 0.0
    sd = float(d.std(ddof=1)) if n >= 2 else 0.0
    varies = n >= 2 and sd > STILL
    k = discordant(a, b)
    least = least_discordant(alpha)
    needed = n_needed(diff, sd, alpha, power) if varies else None
    if needed is not None and k:
        needed = max(needed, math.ceil(least * n / k))
    return Power(
        a=a_name,
        b=b_name,
        metric=metric,
        n=n,
        diff=diff,
        sd=sd,
        mde=mde(sd, n, alpha, power) if varies else None,
        n_needed=needed,
        discordant=k,
        least_discordant=least,
    )


def power_sentence(p: Power) -> str:
    """One line for people: what this many questions can show, and what it would take."""
    if p.n < 2:
        return f"{p.n} question{'s' if p.n != 1 else ''}: too few to say anything about power"
    if p.mde is None:  # the differences do not vary: nothing to estimate power from
        if abs(p.diff) <= STILL:
            return (
                f"at {p.n} questions {p.a} and {p.b} score the same {p.metric} on every "
                "question: no estimate of power until they differ on some"
            )
        ahead = p.a if p.diff > 0 else p.b
        return (
            f"at {p.n} questions {ahead} is ahead by {abs(p.diff):.2f} {p.metric} on every "
            "question: no estimate of power until the differences vary"
        )
    head = f"at {p.n} questions you can see differences >= {p.mde:.2f}"
    if p.n_needed is None:
        return head + f"; the observed {p.metric} difference is 0"
    if p.n_needed <= p.n:
        return head + f"; the observed {abs(p.diff):.2f} is within reach"
    line = head + f"; to confirm {abs(p.diff):.2f} you need ~{p.n_needed}"
    if p.discordant < p.least_discordant:
        line += (
            f" (a test needs {p.least_discordant} questions where they differ; "
            f"{p.discordant} of {p.n} do now)"
        )
    return line


def workspace_power(
    ws: Workspace,
    a: str,
    b: str,
    metric: str = DEFAULT_METRIC,
    *,
    tag: str | None = None,
    cannot_rank: Collection[str] = (),
) -> Power:
    """:func:`power_of` for two retrievers of a workspace on its scored questions.

    ``cannot_rank``: retrievers known not to rank now (:func:`engine.scoring.scored_set`).

    Raises:
        NotScored: A or B has not ranked some scored question and cannot rank it now.
    """
    name, va, vb = paired_values(ws, a, b, metric, tag, cannot_rank)
    return power_of(a, b, name, va, vb)
