"""When a retriever's scores rest on holes in the gold: the gate's Judged@10 warning.

Every plain metric counts a document nobody judged as not relevant. A retriever that was
pooled and judged ranks judged documents in its top 10; a new one (the team's code in
CI, a retriever added after the labeling) can rank documents no person has seen, and its
scores then read "worse" where the truth is "unknown": the unjudged documents may be
relevant. The rule, in one place for every front end: a retriever whose mean Judged@10
(:data:`engine.scoring.HOLE_K`) over the compared questions is below ``min_judged`` is
warned about. It is a warning, not a failure: the scores are shown as they are, with
bpref and the ``judged:`` metrics beside them, which leave unjudged documents out.

The default, 0.8, is two unjudged documents in an average top 10; a retriever pooled and
judged to depth 10 has 1.0. Measured on the BEIR DBPedia subset (``benchmarks/
bench_holes.py``: each of six retrievers scored on the judgments of the other five's
depth-10 pool), the one retriever under 0.8 (dense, 0.62) was the one whose MRR moved
(by 0.073; the five at 0.90-0.97 by 0.001 at most), and per question nDCG@10 moved by
0.15 on average under 0.8 against 0.09-0.10 at or above it (``docs/judged-metrics.md``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import BadInput
from engine.metrics import mean
from engine.scoring import HOLE_K, Scoreboard

DEFAULT_MIN_JUDGED = 0.8
"""The least mean Judged@10 a retriever's scores are trusted at without a warning."""

HOLE_METRIC = f"judged@{HOLE_K}"
"""The metric the warning reads, under its ``--json`` name."""


@dataclass(frozen=True)
class HoleWarning:
    """One retriever whose top 10 is too little judged for its scores to be known."""

    retriever: str
    judged: float
    """Mean Judged@10 over the compared questions."""
    questions: int
    """The compared questions."""
    min_judged: float

    def message(self) -> str:
        """What a user reads about this retriever: the figure, the threshold, what to do."""
        return warnings_text([self])

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape (stable names)."""
        return {
            "warning": "unjudged",
            "retriever": self.retriever,
            HOLE_METRIC: self.judged,
            "min_judged": self.min_judged,
            "questions": self.questions,
            "scores": "unknown",
            "message": self.message(),
        }


def check_min_judged(value: float) -> float:
    """``--min-judged``: a share from 0 (never warn) to 1.

    Raises:
        BadInput: not a finite number from 0 to 1.
    """
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise BadInput(f"--min-judged {value!r}: expected a share from 0 (never warn) to 1")
    return float(value)


def hole_warnings(
    board: Scoreboard,
    compared: Mapping[str, Collection[str]] | None = None,
    *,
    min_judged: float = DEFAULT_MIN_JUDGED,
) -> list[HoleWarning]:
    """The retrievers of ``board`` whose mean Judged@10 on the compared questions is low.

    ``compared``: per retriever, the questions a gate compared (default: every scored
    question of the board). A retriever with no compared question is not warned about:
    there is nothing its scores say (the gate says so itself), nor is one that has not
    ranked some scored question (:attr:`~engine.scoring.RetrieverScores.lacks`: it has no
    scores) on the questions it lacks.
    """
    row = {q: i for i, q in enumerate(board.question_ids)}
    judged: dict[str, tuple[float, int]] = {}
    for name, rs in board.retrievers.items():
        if compared is None and rs.means is None:
            continue  # no scores to warn about
        ids = board.question_ids if compared is None else compared.get(name, ())
        lacks = set(rs.lacks)
        idx = [row[q] for q in ids if q in row and q not in lacks]
        if idx:
            judged[name] = (mean(np.asarray(rs.judged[idx], dtype=np.float64)), len(idx))
    return judged_warnings(judged, min_judged=min_judged)


def judged_warnings(
    judged: Mapping[str, tuple[float, int]], *, min_judged: float = DEFAULT_MIN_JUDGED
) -> list[HoleWarning]:
    """The rule: per retriever ``(mean Judged@10, compared questions)``, those under the bar.

    :func:`hole_warnings` gathers the figures from a scoreboard; the review screen from
    its live scores. A retriever compared on no question is never warned about.
    """
    min_judged = check_min_judged(min_judged)
    return [
        HoleWarning(name, value, n, min_judged)
        for name, (value, n) in judged.items()
        if n > 0 and value < min_judged
    ]


def warnings_text(warnings: Sequence[HoleWarning]) -> str:
    """One sentence for every warning (a terminal prints one line, not one per retriever)."""
    if not warnings:
        return ""
    counts = {w.questions for w in warnings}
    if len(counts) == 1:
        where = f"the {counts.pop()} compared question(s)"
        figures = ", ".join(f"{w.retriever} {w.judged:.0%}" for w in warnings)
    else:
        where = "the compared questions"
        figures = ", ".join(f"{w.retriever} {w.judged:.0%} of {w.questions}" for w in warnings)
    which = "its" if len(warnings) == 1 else "their"
    return (
        f"Judged@{HOLE_K} under {warnings[0].min_judged:.0%} on {where}: "
        f"{figures}. Documents nobody judged count as not relevant, so where {which} scores "
        f"are lower they are unknown, not worse: judge {which} unjudged candidates, and read "
        "bpref and the judged: metrics meanwhile"
    )
