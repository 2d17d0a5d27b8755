import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.gold import Gold, Status
from engine.judging.queue import coverage_at_k, judged_docs, judging_queue, queue_order
from engine.live import LiveScores

GOLDS = {
    "q1": Gold("q1", Status.LABELED, {"d1": 1}),
    "q2": Gold("q2", Status.DISPUTED),
    "q3": Gold("q3", Status.UNLABELED),
    "q4": Gold("q4", Status.NO_ANSWER),  # settled: left out
    "q5": Gold("q5", Status.AMBIGUOUS),
    "q6": Gold("q6", Status.LABELED, {"d1": 1}, adjudicated=True),  # settled
}
RANKINGS = {
    "a": {
        "q1": ["d1", "d2", "d9"],
        "q2": ["d1"],
        "q3": ["d1", "d2"],
        "q4": ["d7"],
        "q5": ["d1"],
        "q6": ["d8"],
    },
    "b": {"q1": ["d3"], "q3": ["d3", "d4", "d5"]},
}
JUDGED = judged_docs([("q1", "d1"), ("q2", "d1"), ("q5", "d1")])


def test_queue_orders_holes_first_then_disputes():
    queue = judging_queue(GOLDS, RANKINGS, JUDGED, k=2)
    # q3: pool {d1,d2} u {d3,d4} = 4 unjudged; q1: pool {d1,d2} u {d3} minus d1 = 2
    assert [(i.question_id, i.unjudged, i.reason) for i in queue] == [
        ("q3", 4, "unjudged"),
        ("q1", 2, "unjudged"),
        ("q2", 0, "adjudicate"),
        ("q5", 0, "adjudicate"),
    ]


def test_pools_kept_by_the_live_scores_give_the_same_queue_and_follow_a_new_ranking():
    live = LiveScores(list(GOLDS), GOLDS, RANKINGS)
    pools = live.pools(2)
    assert pools["q3"] == {"d1", "d2", "d3", "d4"}
    assert judging_queue(GOLDS, RANKINGS, JUDGED, k=2, pools=pools) == judging_queue(
        GOLDS, RANKINGS, JUDGED, k=2
    )
    assert live.pools(2) is pools and live.pools(3)["q3"] == {"d1", "d2", "d3", "d4", "d5"}
    live.set_ranking("b", "q3", ["d1"])  # q3 ranked again: its pools are made again
    assert live.pools(2)["q3"] == {"d1", "d2"} and live.pools(3)["q3"] == {"d1", "d2"}
    assert live.pools(2)["q1"] == {"d1", "d2", "d3"}  # the others kept


def test_coverage_is_the_judged_share_of_each_top_k():
    rankings = {"a": {"q1": ["d1", "d2"], "q2": ["d3", "d4"]}, "b": {"q1": ["d9"]}}
    judged = judged_docs([("q1", "d1"), ("q2", "d3"), ("q2", "d4")])
    # a: q1 1/2, q2 2/2 -> 0.75; b: q1 0/1 -> 0
    assert coverage_at_k(rankings, judged, k=2) == {"a": pytest.approx(0.75), "b": 0.0}


STATUSES = list(Status)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([f"q{i}" for i in range(12)]),
        st.tuples(
            st.sampled_from(STATUSES),
            st.booleans(),
            st.lists(st.sampled_from([f"d{i}" for i in range(6)]), max_size=5),
            st.lists(st.sampled_from([f"d{i}" for i in range(6)]), max_size=5),
        ),
    )
)
def test_the_queue_is_most_unjudged_first_then_id_then_those_to_adjudicate(cases) -> None:
    """Against the rule written out once more: holes by (-unjudged, id), then disputes by id."""
    golds = {q: Gold(q, status, adjudicated=adj) for q, (status, adj, _, _) in cases.items()}
    rankings = {"a": {q: ranking for q, (_, _, ranking, _) in cases.items()}}
    judged = {q: set(seen) for q, (_, _, _, seen) in cases.items() if seen}
    expected_holes, expected_settle = [], []
    for q in sorted(golds):
        gold = golds[q]
        if gold.adjudicated or gold.status is Status.NO_ANSWER:
            continue
        missing = len(set(rankings["a"][q][:3]) - judged.get(q, set()))
        if missing:
            expected_holes.append((q, missing, "unjudged"))
        elif gold.status in (Status.DISPUTED, Status.AMBIGUOUS):
            expected_settle.append((q, 0, "adjudicate"))
    expected_holes.sort(key=lambda item: (-item[1], item[0]))
    queue = judging_queue(golds, rankings, judged, k=3)
    assert [(i.question_id, i.unjudged, i.reason) for i in queue] == (
        expected_holes + expected_settle
    )
    assert [i.status for i in queue] == [golds[i.question_id].status for i in queue]
    assert queue_order(golds, rankings, judged, k=3) == [i.question_id for i in queue]
