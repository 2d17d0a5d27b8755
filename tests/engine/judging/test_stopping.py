"""engine.judging.stopping: when a stop is offered, and what a stop leaves not judged."""

from __future__ import annotations

import pytest

from engine.errors import BadInput
from engine.judging.order import PoolView, Record
from engine.judging.stopping import NEVER, StopRule, offer, relevant_left, stopped_left
from engine.types import Stop

DOCS = [f"d{i}" for i in range(1, 11)]
VIEW = PoolView("q1", {"a": DOCS}, 10)


def test_a_stop_is_offered_after_n_not_relevant_in_a_row_once_one_is_relevant():
    rule = StopRule(after=3, below=0)
    grades = {"d1": 1, "d2": 0, "d3": 0}
    assert offer(rule, DOCS, grades, VIEW, {}) is None  # two in a row
    grades["d4"] = 0
    got = offer(rule, DOCS, grades, VIEW, {})
    assert got is not None and got.reason == "3 not relevant in a row" and got.left == 6


def test_no_stop_is_offered_before_a_relevant_document_nor_when_all_are_judged():
    rule = StopRule(after=2, below=0)
    assert offer(rule, DOCS, dict.fromkeys(DOCS[:5], 0), VIEW, {}) is None
    assert offer(rule, DOCS, {d: 1 if d == "d1" else 0 for d in DOCS}, VIEW, {}) is None


def test_only_the_judged_start_of_the_order_counts():
    rule = StopRule(after=2, below=0)
    # d1 relevant, d3 and d4 not relevant, but d2 is not judged: the start is d1 alone
    assert offer(rule, DOCS, {"d1": 1, "d3": 0, "d4": 0}, VIEW, {}) is None


def test_the_estimate_half_counts_each_unjudged_candidate_at_its_best_arm_mean():
    # one arm, 4 judged (1 relevant), prior share 0.5 (no record): (2*0.5 + 1) / (2 + 4)
    grades = {"d1": 1, "d2": 0, "d3": 0, "d4": 0}
    mean = (2 * 0.5 + 1) / (2 + 4)
    assert relevant_left(VIEW, grades, {}, DOCS[4:]) == pytest.approx(6 * mean)
    # a poor record on other questions lowers it: prior (0 + 1) / (20 + 2)
    poor = {"a": Record(relevant=0, judged=20)}
    low = (2 * (1 / 22) + 1) / (2 + 4)
    assert relevant_left(VIEW, grades, poor, DOCS[4:]) == pytest.approx(6 * low)
    rule = StopRule(after=0, below=2.0)
    got = offer(rule, DOCS, grades, VIEW, poor)
    assert got is not None and got.estimate == pytest.approx(6 * low) and "estimate" in got.reason
    assert offer(StopRule(after=0, below=1.9), DOCS, grades, VIEW, {}) is None  # 2.0 left


def test_a_rule_with_both_halves_off_never_offers_and_says_so():
    assert NEVER.off and NEVER.describe() == "never offered"
    assert offer(NEVER, DOCS, {"d1": 1, **dict.fromkeys(DOCS[1:9], 0)}, VIEW, {}) is None
    assert "after 5 not relevant in a row" in StopRule().describe()


@pytest.mark.parametrize("after, below", [(-1, 0.5), (5, -0.1), (5, float("nan")), (5, 1e309)])
def test_a_rule_no_one_can_mean_is_refused(after, below):
    with pytest.raises(BadInput):
        StopRule(after, below)


def test_stopped_left_counts_the_candidates_nobody_judged_of_stopped_questions():
    candidates = {"q1": {"d1", "d2", "d3"}, "q2": {"d1", "d2"}, "q3": {"d5"}}
    judged = {"q1": {"d1"}, "q2": {"d1", "d2"}}
    stops = [Stop("q1", "mina", "r"), Stop("q1", "jun", "r"), Stop("q2", "mina", "r")]
    assert stopped_left(candidates, judged, stops) == {"q1": 2, "q2": 0}
