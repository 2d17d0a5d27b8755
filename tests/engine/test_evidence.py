"""Evidence before thresholds (``engine.evidence``): one rule for every fitted number."""

from __future__ import annotations

import json

import pytest

from engine.evidence import (
    FUSION_PER_FOLD,
    JUDGE_THRESHOLDS,
    NO_ANSWER_THRESHOLD,
    Minimum,
    Rule,
    fusion_setting,
)

PAIR = Rule(
    "a split",
    (
        Minimum("left", "left item", "left items", 5),
        Minimum("right", "right item", "right items", 5),
    ),
)


@pytest.mark.parametrize(
    ("left", "right", "established"),
    [(4, 5, False), (5, 4, False), (5, 5, True), (0, 0, False), (50, 5, True)],
)
def test_established_only_when_every_minimum_is_reached(left, right, established):
    ev = PAIR.check({"left": left, "right": right})
    assert ev.established is established
    assert (ev.says() is None) is established
    data = ev.to_json()
    assert data["established"] is established
    assert data["needs"]["left"] == {"have": left, "least": 5, "more": max(0, 5 - left)}
    json.dumps(data)


def test_says_how_many_more_of_each_are_needed():
    ev = PAIR.check({"left": 1, "right": 3})
    assert ev.says() == (
        "a split needs at least 5 left items and 5 right items; found 1 left item and "
        "3 right items: 4 more left items and 2 more right items needed"
    )
    assert PAIR.check({"left": 4, "right": 9}).says() == (
        "a split needs at least 5 left items and 5 right items; found 4 left items and "
        "9 right items: 1 more left item needed"
    )


def test_the_rules_and_their_minimums():
    assert [(m.key, m.least) for m in NO_ANSWER_THRESHOLD.minimums] == [
        ("no_answer", 5),
        ("answerable", 5),
    ]
    assert [(m.key, m.least) for m in JUDGE_THRESHOLDS.minimums] == [
        ("grades", 30),
        ("relevant", 5),
        ("not_relevant", 5),
    ]
    assert FUSION_PER_FOLD == 5
    assert fusion_setting(5).least("scored") == 25
    assert fusion_setting(2).check({"scored": 10}).established
    assert not fusion_setting(2).check({"scored": 9}).established
