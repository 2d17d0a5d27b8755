"""Thresholds from a model's scores to grades, fitted on people's grades
(engine.judges.calibration).

The fit is checked by hand on small cases and against an exhaustive search over every
threshold triple on random data (the dynamic programme must find the same optimum);
kappa against scikit-learn.
"""

from __future__ import annotations

import itertools
import json
import math
import random

import pytest

from engine.errors import BadInput
from engine.evidence import JUDGE_THRESHOLDS
from engine.judges.calibration import (
    Item,
    calibrate,
    check_thresholds,
    evidence,
    fit,
    grade_of,
)


def test_grade_is_how_many_thresholds_the_score_reaches():
    t = (0.2, 0.5, 0.8)
    assert [grade_of(s, t) for s in (-1.0, 0.2, 0.49, 0.5, 0.79, 0.8, 2.0)] == [0, 1, 1, 2, 2, 3, 3]
    assert grade_of(10.0, (0.2, math.inf, math.inf)) == 1  # grades 2 and 3 never given


def test_a_hand_made_fit():
    # scores in order; people's grades: 0 0 0 1 1 2 2 3 (perfectly ordered)
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9]
    grades = [0, 0, 0, 1, 1, 2, 2, 3]
    t = fit(scores, grades)
    assert t == (0.4, 0.6, 0.9)
    assert [grade_of(s, t) for s in scores] == grades


def test_a_grade_nobody_gave_gets_no_range():
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    grades = [0, 0, 1, 1, 1, 1]
    t = fit(scores, grades)
    assert t == (0.3, math.inf, math.inf)


def test_tied_scores_are_never_split():
    # the three 0.5 scores must get one grade whatever people said of them
    scores = [0.1, 0.5, 0.5, 0.5, 0.9]
    grades = [0, 0, 1, 1, 1]
    t = fit(scores, grades)
    assert len({grade_of(s, t) for s in (0.5, 0.5, 0.5)}) == 1
    assert t[0] == 0.5


def _kappa(model, people):
    from engine.team.agreement import cohen_kappa

    return cohen_kappa([int(m >= 1) for m in model], [int(p >= 1) for p in people])


def _brute(scores, grades):
    """Best kappa over every t1; then the most exact agreements above it, over every t2, t3."""
    cands = sorted(set(scores)) + [math.inf]
    best_k, t1s = -2.0, []
    for t1 in sorted(set(scores))[1:]:  # cuts between distinct scores
        k = _kappa([int(s >= t1) for s in scores], grades)
        if k > best_k + 1e-12:
            best_k, t1s = k, [t1]
        elif abs(k - best_k) <= 1e-12:
            t1s.append(t1)
    t1 = min(t1s)
    best = -1
    for t2, t3 in itertools.product(cands, cands):
        if not t1 <= t2 <= t3:
            continue
        t = (t1, t2, t3)
        hits = sum(
            1 for s, g in zip(scores, grades, strict=True) if s >= t1 and grade_of(s, t) == g
        )
        best = max(best, hits)
    return t1, best_k, best


@pytest.mark.parametrize("seed", range(12))
def test_the_fit_finds_the_exhaustive_optimum(seed):
    rng = random.Random(seed)
    n = rng.randint(8, 40)
    grades = [rng.choice([0, 0, 0, 1, 1, 2, 3]) for _ in range(n)]
    if len({g >= 1 for g in grades}) < 2:
        grades[0], grades[1] = 0, 2
    # noisy scores that rise with the grade; a few ties by rounding
    scores = [round(g + rng.gauss(0, 1.2), 1) for g in grades]
    t = fit(scores, grades)
    t1, best_k, best_hits = _brute(scores, grades)
    assert t[0] == t1
    assert _kappa([grade_of(s, t) for s in scores], grades) == pytest.approx(best_k)
    hits = sum(1 for s, g in zip(scores, grades, strict=True) if s >= t1 and grade_of(s, t) == g)
    assert hits == best_hits
    assert t[0] <= t[1] <= t[2]


def _items(n_questions=12, per=8, seed=0):
    rng = random.Random(seed)
    out = []
    for q in range(n_questions):
        for _ in range(per):
            g = rng.choice([0, 0, 0, 1, 2, 3])
            out.append(Item(f"q{q}", g + rng.gauss(0, 0.8), g))
    return out


def test_calibrate_counts_people_per_range_and_kappa_equals_sklearn():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    items = _items()
    c = calibrate(items)
    assert c.fitted and c.items == len(items) and c.questions == 12
    model = [grade_of(i.score, c.thresholds) for i in items]
    for r in c.ranges:
        mine = [i.grade for i, m in zip(items, model, strict=True) if m == r.grade]
        assert r.people == tuple(mine.count(g) for g in range(4))
        assert r.agree == mine.count(r.grade)
    assert sum(sum(r.people) for r in c.ranges) == len(items)
    assert c.people == tuple(sum(1 for i in items if i.grade == g) for g in range(4))
    want = sklearn_metrics.cohen_kappa_score([m >= 1 for m in model], [i.grade >= 1 for i in items])
    assert c.kappa == pytest.approx(want, abs=1e-12)
    assert c.held_out_kappa is not None and c.folds == 5
    assert c.held_out_kappa <= c.kappa + 0.2  # out of sample is no better than fitted, much
    # the thresholds as JSON (inf as null)
    data = json.loads(json.dumps(c.to_json()))
    assert data["thresholds"] == [t if math.isfinite(t) else None for t in c.thresholds]


def test_the_held_out_figure_grades_each_fold_by_the_others():
    items = _items(n_questions=10, per=10, seed=3)
    a = calibrate(items, seed=0)
    b = calibrate(items, seed=0)
    c = calibrate(items, seed=1)
    assert a.held_out_kappa == b.held_out_kappa  # seeded
    assert a.kappa == c.kappa  # the fit itself uses every item
    # by hand for seed 0: each fold's items graded by a fit on the others
    questions = sorted({i.question_id for i in items})
    random.Random(0).shuffle(questions)
    fold = {q: n % 5 for n, q in enumerate(questions)}
    model, people = [], []
    for f in range(5):
        t = fit(
            [i.score for i in items if fold[i.question_id] != f],
            [i.grade for i in items if fold[i.question_id] != f],
        )
        for i in items:
            if fold[i.question_id] == f:
                model.append(grade_of(i.score, t))
                people.append(i.grade)
    assert a.held_out_kappa == pytest.approx(_kappa(model, people))


def test_too_few_grades_are_refused_with_how_many_are_needed():
    few = [Item("q1", 0.1 * k, 1 if k > 20 else 0) for k in range(25)]
    why = evidence(few).says()
    assert why == (
        "calibrating needs at least 30 grades given by people, 5 relevant grades (1-3) and "
        "5 not-relevant grades (0); found 25 grades given by people, 4 relevant grades (1-3) "
        "and 21 not-relevant grades (0): 5 more grades given by people and 1 more relevant "
        "grade (1-3) needed"
    )
    assert JUDGE_THRESHOLDS.least("grades") == 30
    with pytest.raises(BadInput, match="calibrating needs"):
        calibrate(few)
    one_sided = [Item("q1", float(k), 0) for k in range(40)]
    assert "found 40 grades given by people, 0 relevant grades" in (
        evidence(one_sided).says() or ""
    )
    # at the boundary: 30 grades, 5 of them relevant, 25 not
    enough = [Item(f"q{k}", 0.1 * k, 1 if k >= 25 else 0) for k in range(30)]
    assert evidence(enough).established and evidence(enough).says() is None
    assert not evidence(enough[1:]).established  # 29 grades
    # given thresholds need no people at all, and are described against whatever there is
    c = calibrate(few, (0.5, 1.0, 2.0))
    assert not c.fitted and c.thresholds == (0.5, 1.0, 2.0) and c.held_out_kappa is None
    assert calibrate([], (0.5, 1.0, 2.0)).kappa is None


def test_thresholds_option_is_checked():
    assert check_thresholds([0.1, 0.2, 0.2]) == (0.1, 0.2, 0.2)
    with pytest.raises(BadInput, match="three numbers"):
        check_thresholds([0.1, 0.2])
    with pytest.raises(BadInput, match="T1 <= T2 <= T3"):
        check_thresholds([0.3, 0.2, 0.4])
