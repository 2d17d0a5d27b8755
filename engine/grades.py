"""The grades a label gives, and which of them count as relevant: the one home of both rules.

A grade is a whole number from :data:`MIN_GRADE` to :data:`MAX_GRADE` (0 judged not
relevant, 1 partly answers, 2 highly relevant, 3 the perfect answer: the judge screen's
keys). A document is *relevant* when its grade is :data:`RELEVANT` or more: that is what
the metrics count as a hit (trec_eval's ``rel_level`` 1), what the gold keeps, what
agreement's kappa and a model judge's calibration split on. Every check, message and help
text that names the grades or the relevance cut takes them from here; the tables' CHECK
constraints (engine/workspace/migrations.py) write them out, as a shipped migration never changes,
and a test keeps the two in agreement.
"""

from __future__ import annotations

GRADES = (0, 1, 2, 3)
"""The grades a label can give, lowest first."""

MIN_GRADE = GRADES[0]
"""The lowest grade: judged not relevant."""

MAX_GRADE = GRADES[-1]
"""The highest grade: the perfect answer."""

GRADE_RANGE = f"{MIN_GRADE}-{MAX_GRADE}"
"""The grades as messages and help write them: ``0-3``."""

RELEVANT = 1
"""The lowest grade that counts as relevant; the grade a "relevant" toggle or pick gives."""

NOT_RELEVANT = MIN_GRADE
"""The grade "judged not relevant"."""

GRADE_MEANINGS = (
    "Judged not relevant",
    "Relevant: partly answers the question",
    "Highly relevant",
    "The perfect answer",
)
"""What each grade means, in :data:`GRADES` order (the judge screen's key help)."""

GRADE_HELP = (
    "0 = judged not relevant, 1 = relevant (partly answers), 2 = highly relevant, "
    "3 = the perfect answer"
)
"""The grades' meanings in one line, for help texts."""


def is_relevant(grade: int) -> bool:
    """Whether a document graded ``grade`` is relevant (``grade >= RELEVANT``)."""
    return grade >= RELEVANT


def sql_not_a_grade(column: str = "grade") -> str:
    """An SQL condition true where ``column`` holds no grade (soundness checks)."""
    return f"typeof({column}) != 'integer' OR {column} NOT BETWEEN {MIN_GRADE} AND {MAX_GRADE}"


def sql_maybe_relevant(column: str = "grade") -> str:
    """An SQL condition true where :func:`is_relevant` may hold.

    Every relevant grade, and any value that is not an integer (the readers judge it).
    """
    return f"NOT (typeof({column}) = 'integer' AND {column} < {RELEVANT})"
