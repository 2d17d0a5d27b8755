"""When a first-gold rank got worse: the one home of that rule.

A first-gold rank is the position of a question's first gold document in a ranking,
from 1, or 0 when no gold was ranked at all. 0 is worse than any rank: a gold that
fell out of the ranking is the worst change there is, whatever the tolerance.

Callers: :class:`engine.ci.snapshots.Moved` (which questions moved, and which way),
:func:`engine.ci.gate.regression_verdict` (a regression beyond ``--tolerance``) and the
review screen's "since snapshot" cells (``tui.widgets.snapshot_diff.marked_rank``).
"""

from __future__ import annotations

import math

NOT_RANKED = 0
"""The first-gold rank of a ranking that holds no gold."""


def worse_by(then: int, now: int) -> float:
    """How many ranks worse ``now`` is than ``then``: negative when better, 0 when equal.

    A gold lost (``now`` 0, ``then`` not) is infinitely worse; a gold found again
    (``then`` 0, ``now`` not) infinitely better.
    """
    if now == then:
        return 0.0
    if now == NOT_RANKED:
        return math.inf
    if then == NOT_RANKED:
        return -math.inf
    return float(now - then)


def is_worse(then: int, now: int, tolerance: float = 0) -> bool:
    """True when ``now`` is more than ``tolerance`` ranks worse than ``then``."""
    return worse_by(then, now) > tolerance
