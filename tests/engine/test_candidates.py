"""The documents to judge on a question are the label screen's candidates, as a set."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.counters import candidate_ids
from engine.pooling import pool

DOCS = st.sampled_from([f"d{i}" for i in range(30)])
RANKING = st.lists(DOCS, unique=True, max_size=25)


@given(
    rankings=st.dictionaries(
        st.sampled_from(["bm25", "dense", "fused"]),
        st.dictionaries(st.sampled_from(["q1", "q2"]), RANKING, max_size=2),
        max_size=3,
    ),
    graded=st.sets(DOCS, max_size=6),
    depth=st.integers(1, 20),
)
def test_candidate_ids_are_the_pooled_candidates(rankings, graded, depth):
    shown = pool("q1", {n: by_q.get("q1", ()) for n, by_q in rankings.items()}, depth, list(graded))
    assert candidate_ids("q1", rankings, graded, depth) == {c.doc_id for c in shown}
