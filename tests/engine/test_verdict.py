"""The one verdict rule (``engine.verdict``) on crafted pairs of per-question values.

Each case is a pair of value lists whose discordant questions, sign-flip p-value and
bootstrap interval are known by hand; the verdict must follow the rule: real only when
both tests agree at the level, and no verdict at all where too few questions differ.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engine.analysis.compare import compare, paired_tests, verdict_of
from engine.errors import BadInput
from engine.verdict import (
    LEVEL,
    NO_QUESTIONS,
    NOT_SHOWN,
    REAL,
    STATUSES,
    TESTS_DISAGREE,
    TOO_FEW,
    check_level,
    decide,
    least_discordant,
    least_p,
    rule,
)

# Issue 47's study: bigram vs word on 31 posts, W/T/L 4/27/0. Bigram ranks the gold first
# everywhere; word ranks it 4th, 5th, 2nd and 6th on four questions (reciprocal ranks
# below), first on the other 27.
WORD_RR = [1 / 4, 1 / 5, 1 / 2, 1 / 6] + [1.0] * 27
BIGRAM_RR = [1.0] * 31


def test_least_p_is_two_to_the_one_minus_k():
    assert [least_p(k) for k in range(7)] == [1.0, 1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125]
    # p < 0.05 needs 6 questions that differ; p < 0.01 needs 8 (2^-7 = 0.0078)
    assert least_discordant(0.05) == 6
    assert least_discordant(0.01) == 8
    assert least_discordant(0.5) == 3  # 2^-1 = 0.5 is not below 0.5


def test_the_issue_case_gets_no_verdict_where_the_interval_excluded_0():
    c = compare("bigram", "word", "mrr", np.array(BIGRAM_RR), np.array(WORD_RR))
    assert (c.wins, c.ties, c.losses) == (4, 27, 0)
    lo, hi = c.ci95
    # the interval the issue quotes, and the p-value: they disagreed
    assert round(lo, 3) == 0.016 and round(hi, 3) == 0.186
    assert 0.11 < c.p_value < 0.14
    v = c.verdict
    assert v.status == TOO_FEW and not v.real and v.higher is None
    assert v.discordant == 4 and v.least_p == 0.125
    assert v.says("bigram", "word") == (
        "4 questions differ: no test on 4 can reach p < 0.05 (the least p is 0.125)"
    )
    assert "excludes 0" not in v.says()
    assert v.short() == "too few (4)"


def test_no_discordant_question():
    x = np.array([1.0, 0.5, 0.0, 1 / 3] * 8)
    v = verdict_of(x, x.copy())
    assert (v.status, v.discordant, v.real) == (TOO_FEW, 0, False)
    assert v.interval == (0.0, 0.0) and v.p_value == 1.0
    assert v.says("A", "B") == "A and B are equal on every question: there is no difference to test"


def test_every_question_discordant_in_one_direction_is_real():
    # 31 questions, A ahead by 0.5 on each: every flip but two is less extreme
    a = np.full(31, 1.0)
    b = np.full(31, 0.5)
    c = compare("A", "B", "mrr", a, b)
    v = c.verdict
    assert (c.wins, c.ties, c.losses) == (31, 0, 0)
    assert v.status == REAL and v.real and v.higher == "a"
    assert v.p_value == 1 / (10_000 + 1)  # no flip as extreme (2/2^31): p's floor
    assert v.interval == (0.5, 0.5)
    assert v.says("A", "B").startswith("real: A is higher (p = 0.0001 < 0.05")
    # and the other way round
    assert verdict_of(b, a).higher == "b"


def test_every_question_discordant_both_ways_is_not_shown():
    # 32 questions, A ahead on half by 0.5 and behind on the other half by 0.5: mean 0
    a = np.array([1.0, 0.5] * 16)
    b = np.array([0.5, 1.0] * 16)
    v = verdict_of(a, b)
    assert v.discordant == 32 and v.status == NOT_SHOWN
    lo, hi = v.interval
    assert lo < 0 < hi and v.p_value > 0.5
    assert v.says().startswith("no real difference shown (p = ")


def test_near_equal_values_are_ties_not_discordant():
    # 0.1 + 0.2 is not 0.3 to the last bit: an nDCG summed in another order differs so
    a = np.array([0.1 + 0.2] * 6 + [1.0] * 4)
    b = np.array([0.3] * 6 + [0.0] * 4)
    c = compare("A", "B", "ndcg@10", a, b)
    assert (c.wins, c.ties, c.losses) == (4, 6, 0)
    assert c.verdict.discordant == 4 and c.verdict.status == TOO_FEW


def test_six_discordant_can_be_real_five_cannot():
    five = verdict_of([1.0] * 5 + [0.5] * 20, [0.0] * 5 + [0.5] * 20)
    assert five.status == TOO_FEW and five.least_p == 0.0625
    six = verdict_of([1.0] * 6 + [0.5] * 20, [0.0] * 6 + [0.5] * 20)
    # the only flips as extreme are all-plus and all-minus: p ~ 2/64 = 0.031 < 0.05
    assert six.status == REAL and six.p_value < LEVEL


def test_tests_disagree_is_not_real_either_way():
    lo_hi = (0.016, 0.186)
    v = decide(31, 9, 0.07, lo_hi)  # the interval excludes 0, p does not reach 0.05
    assert v.status == TESTS_DISAGREE and not v.real
    assert "the tests disagree" in v.says()
    assert "excludes 0 but the randomization test gives p = 0.07, not below 0.05" in v.says()
    w = decide(31, 9, 0.03, (-0.01, 0.2))  # p reaches it, the interval includes 0
    assert w.status == TESTS_DISAGREE and not w.real
    assert "p = 0.03 < 0.05 but the 95% interval [-0.010, +0.200] includes 0" in w.says()
    assert decide(31, 9, 0.03, (0.01, 0.2)).status == REAL
    assert decide(31, 9, 0.3, (-0.01, 0.2)).status == NOT_SHOWN


def test_level_changes_interval_and_threshold():
    rng = np.random.default_rng(5)
    a = rng.random(40)
    b = a - 0.08 + rng.normal(0, 0.15, 40)
    tests = paired_tests(a, b)
    loose = tests.verdict(0, 0.2)
    strict = tests.verdict(0, 0.01)
    lo80, hi80 = loose.interval
    lo99, hi99 = strict.interval
    assert lo99 < lo80 and hi80 < hi99  # a 99% interval is wider than an 80% one
    assert loose.p_value == strict.p_value
    assert "the 99% interval" in strict.says() and "p < 0.01" not in loose.says()


def test_no_questions():
    v = verdict_of([], [])
    assert v.status == NO_QUESTIONS and v.says() == "no question to compare"


def test_json_names_are_stable():
    c = compare("bigram", "word", "mrr", np.array(BIGRAM_RR), np.array(WORD_RR))
    data = c.to_json()["verdict"]
    assert set(data) == {
        "status",
        "real",
        "higher",
        "level",
        "questions",
        "discordant",
        "least_p",
        "p_value",
        "interval",
        "says",
    }
    assert data["status"] in STATUSES
    assert (data["discordant"], data["least_p"], data["real"]) == (4, 0.125, False)
    json.dumps(c.to_json())


def test_the_same_verdict_whichever_columns_are_tested_together():
    # Review tests six metrics at once, compare one: the same resamples and flips per column
    rng = np.random.default_rng(1)
    a = rng.random((37, 3))
    b = rng.random((37, 3))
    together = paired_tests(a, b)
    for k in range(3):
        alone, with_others = paired_tests(a[:, k], b[:, k]).verdict(0), together.verdict(k)
        assert (alone.status, alone.p_value) == (with_others.status, with_others.p_value)
        # a matrix product sums in another order than a vector product: equal to rounding
        assert alone.interval == pytest.approx(with_others.interval, abs=1e-15)


def test_an_interval_ending_at_0_up_to_rounding_includes_0():
    # differences that cancel exactly can resample to a mean of 1e-17, not 0
    assert decide(31, 9, 0.01, (1e-17, 0.2)).status == TESTS_DISAGREE
    assert decide(31, 9, 0.01, (-0.2, -1e-17)).status == TESTS_DISAGREE
    assert decide(31, 9, 0.01, (1e-9, 0.2)).status == REAL


def test_check_level():
    check_level(0.05, 10_000)
    for level in (0.0, 1.0, -0.1, math.nan, math.inf):
        with pytest.raises(BadInput, match="between 0 and 1"):
            check_level(level, 10_000)
    # with B sign flips no p-value goes below 1 / (B + 1)
    with pytest.raises(BadInput, match="use at least 20"):
        check_level(0.05, 19)
    check_level(0.05, 20)


def test_the_rule_in_words():
    assert rule() == (
        "a difference is real only when the randomization test and the bootstrap interval "
        "agree (p < 0.05 and the 95% interval excludes 0); with k questions that differ no "
        "test can go below p = 2^(1-k)"
    )
    assert "p < 0.01 and the 99% interval" in rule(0.01)
