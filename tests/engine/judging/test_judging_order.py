"""engine.judging.order: each order by hand, and what no order may read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.judging.order import (
    ORDERS,
    RRF_K,
    PoolView,
    Record,
    candidate_order,
    record_of,
    walk,
)
from engine.pooling import blind_key

# two retrievers, depth 3: a = [d1 d2 d3], b = [d4 d1 d5]; a ranks d4 at 5 (outside its top)
RANKINGS = {"a": ["d1", "d2", "d3", "d6", "d4"], "b": ["d4", "d1", "d5"]}
VIEW = PoolView("q1", RANKINGS, 3)


def test_hash_order_is_the_blind_key_order_and_extras_come_last():
    view = PoolView("q1", RANKINGS, 3, extra=("d9", "d1"))  # d1 is pooled already
    order = candidate_order("hash", view, {}, {})
    pooled = sorted(["d1", "d2", "d3", "d4", "d5"], key=lambda d: blind_key("q1", d))
    assert order == [*pooled, "d9"]


def test_fused_order_sums_reciprocal_ranks_over_the_full_cached_rankings():
    order = candidate_order("fused", VIEW, {}, {})
    score = {
        "d1": 1 / (RRF_K + 1) + 1 / (RRF_K + 2),
        "d4": 1 / (RRF_K + 1) + 1 / (RRF_K + 5),  # a's rank 5 counts, though not pooled
        "d2": 1 / (RRF_K + 2),
        "d3": 1 / (RRF_K + 3),
        "d5": 1 / (RRF_K + 3),
    }
    expected = sorted(score, key=lambda d: (-score[d], blind_key("q1", d)))
    assert order == expected
    assert order[:2] == ["d1", "d4"]  # d3 and d5 tie: the hash decides


def test_maxmean_starts_with_the_arm_your_other_questions_favour_and_follows_the_gold():
    # b found more gold on other questions: its top comes first
    records = {"a": Record(relevant=1, judged=10), "b": Record(relevant=6, judged=10)}
    assert candidate_order("maxmean", VIEW, {}, records)[:3] == ["d4", "d1", "d5"]
    # a judged not-relevant d4 and d5 and a relevant d1 move a ahead:
    # a: d1 relevant -> (2 * 2/12 + 1) / 3 = 0.44; b: 1 of 3 -> (2 * 7/12 + 1) / 5 = 0.43
    grades = {"d4": 0, "d1": 1, "d5": 0}
    assert candidate_order("maxmean", VIEW, grades, records) == ["d4", "d1", "d5", "d2", "d3"]


def test_maxmean_without_records_takes_the_arms_in_name_order_then_learns():
    # equal priors: a first (d1, d2, ...); d1 not relevant for a makes b's mean higher
    assert candidate_order("maxmean", VIEW, {}, {}) == ["d1", "d2", "d3", "d4", "d5"]
    # d1 graded 0: a (0 of 1) and b (0 of 1) equal again -> a goes on with d2; d2 graded 0:
    # a 0 of 2 (mean 1/4) below b 0 of 1 (1/3): b's d4
    assert candidate_order("maxmean", VIEW, {"d1": 0, "d2": 0}, {})[:3] == ["d1", "d2", "d4"]


def test_move_to_front_leaves_a_retriever_at_its_first_non_relevant_document():
    # a first (equal priors: the first name); d1 relevant keeps a; d2 not relevant: a's
    # priority drops to -1, b's 0 is higher: b's next unjudged d4, d5
    grades = {"d1": 2, "d2": 0}
    assert candidate_order("mtf", VIEW, grades, {}) == ["d1", "d2", "d4", "d5", "d3"]
    # b favoured by the records of other questions: it starts
    records = {"b": Record(relevant=5, judged=5)}
    assert candidate_order("mtf", VIEW, {}, records)[:3] == ["d4", "d1", "d5"]


@pytest.mark.parametrize("order", ORDERS)
def test_every_order_lists_every_candidate_once_and_extras_after_the_pool(order):
    view = PoolView("q1", RANKINGS, 3, extra=("d8", "d7"))
    got = candidate_order(order, view, {"d1": 1}, {"a": Record(2, 3)})
    assert sorted(got) == ["d1", "d2", "d3", "d4", "d5", "d7", "d8"]
    assert set(got[-2:]) == {"d7", "d8"}


def test_an_unknown_order_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="maxmean, fused, mtf, hash"):
        list(walk("best", VIEW, {}.get, {}))


def test_record_of_a_question_counts_each_retrievers_judged_top():
    assert record_of(VIEW, {"d1": 2, "d4": 0, "d2": 0}.get) == {
        "a": Record(relevant=1, judged=2),
        "b": Record(relevant=1, judged=2),
    }


IDS = st.sampled_from([f"d{i}" for i in range(12)])
docs = st.lists(IDS, min_size=1, max_size=8, unique=True)


@settings(max_examples=60, deadline=None)
@given(
    a=docs,
    b=docs,
    graded=st.dictionaries(IDS, st.integers(0, 3)),
    order=st.sampled_from(["fused", "mtf", "maxmean"]),
)
def test_an_order_reads_no_document_identity_beyond_its_tie_break(a, b, graded, order):
    """Renaming every document (the same renaming in every ranking and grade) renames the
    order: nothing of a document but where the retrievers put it, and its grade, counts.
    The renaming keeps each document's hash key, so ties fall the same way."""
    rename = {f"d{i}": f"doc-{i:02d}" for i in range(12)}
    key = {d: blind_key("q", d) for d in rename}
    renamed_key = {rename[d]: k for d, k in key.items()}
    view = PoolView("q", {"a": a, "b": b}, 5)
    twin = PoolView("q", {"a": [rename[d] for d in a], "b": [rename[d] for d in b]}, 5)
    grades = {d: g for d, g in graded.items()}
    twin_grades = {rename[d]: g for d, g in graded.items()}

    import engine.judging.order as jo

    original = jo.blind_key
    try:
        jo.blind_key = lambda q, d: renamed_key.get(d) or key[d]  # the same tie-break
        got = candidate_order(order, view, grades, {})
        got_twin = candidate_order(order, twin, twin_grades, {})
    finally:
        jo.blind_key = original
    assert [rename[d] for d in got] == got_twin


def test_judged_rows_keep_their_places_when_grades_follow_the_order():
    """Grading in the order shown moves only the rows after the new grade."""
    records = {"a": Record(0, 4), "b": Record(3, 4)}
    grades: dict[str, int] = {}
    shown = candidate_order("maxmean", VIEW, grades, records)
    truth = {"d4": 0, "d1": 1, "d5": 0, "d2": 1, "d3": 0}
    for i in range(len(shown)):
        grades[shown[i]] = truth[shown[i]]
        again = candidate_order("maxmean", VIEW, grades, records)
        assert again[: i + 1] == shown[: i + 1]
        shown = again
