"""From a model's scores to grades 0-3, by thresholds calibrated on people's grades.

A model judge (:mod:`engine.judges.run`) scores each (question, document) pair; its grade is
how many of the three thresholds ``t1 <= t2 <= t3`` the score reaches (``score >= t``).
The thresholds are fitted on the pairs people have graded, each person's grade one item
(a document two people graded counts twice):

1. ``t1``, relevant or not, is the cut that maximises Cohen's kappa between "score >= t1"
   and "the person graded it 1-3", over every cut between two distinct scores (ties go
   to the lowest cut). Kappa, not accuracy: most pooled documents are not relevant, and
   the cut that is right most often calls nearly everything 0. (On the BEIR DBPedia
   subset with all-MiniLM-L6-v2, fitted on half the questions: held-out kappa 0.35 for
   the kappa cut, 0.29 for the accuracy cut.)
2. ``t2`` and ``t3`` split the documents at or above ``t1`` into grades 1, 2 and 3 so
   that as many people's grades as possible fall in their own grade's range (exact, by
   a dynamic programme over the cuts). On a tie the higher grade's range stays smaller,
   so a grade nobody gave gets no range at all: its threshold is infinite (never given).

The fit is also checked out of sample: the questions are dealt into seeded folds, each
fold's items are graded by thresholds fitted on the other folds, and kappa over those
grades is the held-out figure shown beside the in-sample one (which is optimistic: the
thresholds were chosen on the same grades).

Thresholds are fitted only on enough grades (:data:`engine.evidence.JUDGE_THRESHOLDS`:
30, of them 5 relevant and 5 not), the one rule every fitted number of goldpan follows.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import BadInput
from engine.evidence import JUDGE_THRESHOLDS, Evidence
from engine.grades import GRADES, RELEVANT, is_relevant
from engine.team.agreement import cohen_kappa

FOLDS = 5
"""Folds of the held-out check (over questions)."""

Thresholds = tuple[float, float, float]
"""``(t1, t2, t3)``: grade = how many of them the score reaches; ``inf``: never given."""


@dataclass(frozen=True)
class Item:
    """One person's grade of a pair the model scored."""

    question_id: str
    score: float
    grade: int


@dataclass(frozen=True)
class GradeRange:
    """One model grade: its score range and the people's grades of the pairs in it."""

    grade: int
    low: float | None
    """The least score given this grade (None: no lower end, or not a score judge)."""
    high: float | None
    """Scores from here up get a higher grade (None: no upper end)."""
    people: tuple[int, int, int, int]
    """How many people's grades 0, 1, 2, 3 fall on pairs the model gave this grade."""
    never: bool = False
    """The model never gives this grade (its range is empty)."""

    @property
    def agree(self) -> int:
        """People's grades equal to this grade, of pairs the model gave this grade."""
        return self.people[self.grade]


@dataclass(frozen=True)
class Calibration:
    """How a judge's grades relate to people's: the ranges, counts and kappa."""

    thresholds: Thresholds | None
    """None for a judge that gives grades itself (a command)."""
    ranges: tuple[GradeRange, ...]
    items: int
    """People's grades compared (pairs the model graded that a person graded too)."""
    questions: int
    """Questions those grades belong to."""
    people: tuple[int, int, int, int]
    """People's grades 0, 1, 2, 3 among the items."""
    kappa: float | None
    """Cohen's kappa on relevant or not, model vs people, on these items (None: none)."""
    held_out_kappa: float | None = None
    """The same with each fold graded by thresholds fitted on the others (None: not run)."""
    folds: int = 0
    fitted: bool = False
    """The thresholds were fitted here (else given, or the judge grades by itself)."""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready (infinite thresholds and open ends as null)."""
        return {
            "thresholds": None
            if self.thresholds is None
            else [None if math.isinf(t) else t for t in self.thresholds],
            "fitted": self.fitted,
            "items": self.items,
            "questions": self.questions,
            "people": list(self.people),
            "kappa": self.kappa,
            "held_out_kappa": self.held_out_kappa,
            "folds": self.folds,
            "grades": [
                {
                    "grade": r.grade,
                    "low": r.low,
                    "high": r.high,
                    "never": r.never,
                    "people": list(r.people),
                    "agree": r.agree,
                }
                for r in self.ranges
            ],
        }


def grade_of(score: float, thresholds: Thresholds) -> int:
    """The grade of ``score``: how many thresholds it reaches."""
    return sum(1 for t in thresholds if score >= t)


def check_thresholds(values: Sequence[float]) -> Thresholds:
    """``--thresholds T1,T2,T3``: three finite numbers, each at least the one before."""
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise BadInput(
            f"--thresholds: expected three numbers T1,T2,T3 (the least score of grades 1, "
            f"2 and 3), got {len(values)}"
        )
    if not values[0] <= values[1] <= values[2]:
        raise BadInput(f"--thresholds {values}: expected T1 <= T2 <= T3")
    return (float(values[0]), float(values[1]), float(values[2]))


def evidence(items: Sequence[Item]) -> Evidence:
    """Whether ``items`` are enough to fit thresholds on (:data:`JUDGE_THRESHOLDS`)."""
    relevant = sum(1 for i in items if is_relevant(i.grade))
    return JUDGE_THRESHOLDS.check(
        {"grades": len(items), "relevant": relevant, "not_relevant": len(items) - relevant}
    )


def fit(scores: Sequence[float], grades: Sequence[int]) -> Thresholds:
    """The thresholds that fit people's ``grades`` of pairs with these ``scores`` best.

    See the module's description. Needs both relevant and not relevant grades.
    """
    order = np.argsort(np.asarray(scores, dtype=np.float64), kind="stable")
    ss = np.asarray(scores, dtype=np.float64)[order]
    gg = np.asarray(grades, dtype=np.int64)[order]
    n = len(ss)
    # cut i: items [i, n) are at or above it; only between two distinct scores
    cuts = np.flatnonzero(ss[1:] != ss[:-1]) + 1
    rel = (gg >= RELEVANT).astype(np.float64)
    before = np.concatenate(([0.0], np.cumsum(rel)))  # relevant among the first i
    total = before[-1]
    if len(cuts) == 0:
        return (math.inf, math.inf, math.inf)  # one score for everything: it tells nothing
    i = cuts.astype(np.float64)
    tp = total - before[cuts]
    fn = before[cuts]
    tn = i - fn
    chance = (n - i) * total + i * (n - total)  # n^2 p_e
    kappa = (n * (tp + tn) - chance) / (n * n - chance)
    i1 = int(cuts[int(np.argmax(kappa))])

    # grades 1-3 over [i1, n): t2 at i2, t3 at i3, i1 <= i2 <= i3 <= n
    steps = np.concatenate(([i1], cuts[cuts > i1], [n])).astype(np.int64)
    counts = {g: np.concatenate(([0], np.cumsum(gg == g))) for g in (1, 2, 3)}
    a1, a2, a3 = (counts[g][steps] for g in (1, 2, 3))
    # for each i2, the best i3 >= i2 (ties: the largest, keeping grade 3's range small)
    three = a2 - a3
    best3 = np.empty(len(steps), dtype=np.int64)
    best = len(steps) - 1
    for k in range(len(steps) - 1, -1, -1):
        if three[k] > three[best]:
            best = k
        best3[k] = best
    value = a1 - a2 + three[best3]
    k2 = len(value) - 1 - int(np.argmax(value[::-1]))  # ties: the largest i2
    i2, i3 = int(steps[k2]), int(steps[best3[k2]])

    def at(c: int) -> float:
        return float(ss[c]) if c < n else math.inf

    return (at(i1), at(i2), at(i3))


def ranges_of(
    thresholds: Thresholds | None, model: Sequence[int], people: Sequence[int]
) -> tuple[GradeRange, ...]:
    """Each model grade's range and the people's grades of the pairs given it."""
    counts = [[0] * len(GRADES) for _ in GRADES]
    for m, p in zip(model, people, strict=True):
        counts[m][p] += 1
    out = []
    for g in GRADES:
        if thresholds is None:
            low: float | None = None
            high: float | None = None
            never = False
        else:
            bounds = (-math.inf, *thresholds, math.inf)
            lo, hi = bounds[g], bounds[g + 1]
            never = not lo < hi
            low = None if math.isinf(lo) else lo
            high = None if math.isinf(hi) else hi
        c = counts[g]
        out.append(GradeRange(g, low, high, (c[0], c[1], c[2], c[3]), never))
    return tuple(out)


def _kappa(model: Sequence[int], people: Sequence[int]) -> float | None:
    if not model:
        return None
    return cohen_kappa([int(is_relevant(m)) for m in model], [int(is_relevant(p)) for p in people])


def held_out_grades(items: Sequence[Item], folds: int = FOLDS, seed: int = 0) -> list[int] | None:
    """Each item's grade by thresholds fitted on the other folds' items (None: too few).

    The questions are dealt into ``folds`` seeded folds; an item is graded by the
    thresholds :func:`fit` finds on the items of every other fold, so no grade is judged
    by thresholds chosen on it. None when there are fewer than two questions, or a fold's
    training part lacks relevant or not relevant grades.
    """
    questions = sorted({i.question_id for i in items})
    k = min(folds, len(questions))
    if k < 2:
        return None
    random.Random(seed).shuffle(questions)
    fold_of = {q: n % k for n, q in enumerate(questions)}
    out = [0] * len(items)
    for f in range(k):
        train = [i for i in items if fold_of[i.question_id] != f]
        if len({is_relevant(i.grade) for i in train}) < 2:
            return None  # a fold's training part without both kinds of grade
        t = fit([i.score for i in train], [i.grade for i in train])
        for n, i in enumerate(items):
            if fold_of[i.question_id] == f:
                out[n] = grade_of(i.score, t)
    return out


def _held_out(items: Sequence[Item], folds: int, seed: int) -> tuple[float | None, int]:
    """Kappa of each fold graded by thresholds fitted on the others (None: too few)."""
    grades = held_out_grades(items, folds, seed)
    if grades is None:
        return None, 0
    return _kappa(grades, [i.grade for i in items]), min(folds, len({i.question_id for i in items}))


def calibrate(
    items: Sequence[Item],
    thresholds: Thresholds | None = None,
    *,
    folds: int = FOLDS,
    seed: int = 0,
) -> Calibration:
    """Fit thresholds on ``items`` (or take the given ones) and describe the fit.

    Raises:
        BadInput: no thresholds were given and the items are too few (:func:`evidence`).
    """
    fitted = thresholds is None
    if thresholds is None:
        why = evidence(items).says()
        if why is not None:
            raise BadInput(why)
        thresholds = fit([i.score for i in items], [i.grade for i in items])
    held, k = _held_out(items, folds, seed) if fitted else (None, 0)
    model = [grade_of(i.score, thresholds) for i in items]
    return _described(thresholds, items, model, held, k, fitted)


def compare_grades(items: Sequence[tuple[str, int, int]]) -> Calibration:
    """A judge that grades by itself (a command): ``(question, model grade, person's grade)``."""
    model = [m for _, m, _ in items]
    theirs = [p for _, _, p in items]
    totals = [sum(1 for p in theirs if p == g) for g in GRADES]
    return Calibration(
        None,
        ranges_of(None, model, theirs),
        len(items),
        len({q for q, _, _ in items}),
        (totals[0], totals[1], totals[2], totals[3]),
        _kappa(model, theirs),
    )


def _described(
    thresholds: Thresholds,
    items: Sequence[Item],
    model: Sequence[int],
    held: float | None,
    folds: int,
    fitted: bool,
) -> Calibration:
    people = [i.grade for i in items]
    totals = [sum(1 for p in people if p == g) for g in GRADES]
    return Calibration(
        thresholds,
        ranges_of(thresholds, model, people),
        len(items),
        len({i.question_id for i in items}),
        (totals[0], totals[1], totals[2], totals[3]),
        _kappa(model, people),
        held,
        folds,
        fitted,
    )


def stored_calibration(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The calibration a judge's stored parameters hold (as :meth:`Calibration.to_json`)."""
    value = params.get("calibration")
    return value if isinstance(value, dict) else None
