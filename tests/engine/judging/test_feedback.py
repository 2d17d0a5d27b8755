"""engine.judging.feedback: Rocchio over the workspace's tokens and stored vectors, and its
estimate."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest

from engine.judging.feedback import (
    MAX_RATIO,
    judged_grades,
    load_feedback,
    next_round,
    relevant_left,
    rounds_of,
)
from engine.types import Doc, Label, Proposal, Question, RetrieverSpec
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace

DOCS = [
    Doc("c1", "cats", "cat food for older cats and kittens"),
    Doc("c2", "cats", "kittens need cat food with more protein"),
    Doc("c3", "cats", "dry cat food or wet cat food for a cat"),
    Doc("g1", "dogs", "dog walking in the park every morning"),
    Doc("g2", "dogs", "training a dog to walk on a lead"),
    Doc("b1", "birds", "bird seed for garden birds in winter"),
]


@pytest.fixture
def pets(tmp_path: Path) -> Path:
    path = tmp_path / "pets.db"
    ws = new_workspace(path)
    ws.write_docs(DOCS)
    ws.write_questions([Question("q1", "food for my kitten"), Question("q2", "walking")])
    ws.close()
    return path


def test_feedback_proposes_documents_like_the_relevant_ones_first(pets):
    with Workspace.open(pets) as ws:
        feedback = load_feedback(ws, ["q1"])
    assert feedback.method == "rocchio (bigram tokens)"
    # c2 judged relevant, g1 not: the other cat documents come first, the judged never
    got = feedback.propose("q1", {"c2": 1, "g1": 0}, set(), 3)
    assert set(got[:2]) == {"c1", "c3"} and "c2" not in got and "g1" not in got
    # a document waiting to be judged (proposed already) is not proposed again
    assert "c1" not in feedback.propose("q1", {"c2": 1}, {"c1"}, 2)


def test_a_question_with_nothing_judged_is_ranked_by_its_own_words(pets):
    with Workspace.open(pets) as ws:
        feedback = load_feedback(ws, ["q2"])
    # the bigram tokens keep English words whole: "walking" meets only g1's "walking"
    assert feedback.propose("q2", {}, set(), 1) == ["g1"]


def test_a_dense_retrievers_stored_vectors_are_a_space_of_their_own(pets):
    pytest.importorskip("sentence_transformers")
    with Workspace.open(pets) as ws:
        spec = RetrieverSpec("dense", "dense", {"model": "some-model"})
        ws.add_retriever(spec)
        from engine.retrieve import build_retriever

        key = build_retriever(spec).store_key
        # cats along x, dogs along y, the bird along z; one NaN is read as 0
        vec = {"c": [1, 0.1, 0], "g": [0, 1, 0], "b": [0, 0, 1]}
        rows = [(d.id, d.hash, vec[d.id[0]]) for d in DOCS]
        ws.write_embeddings(key, rows)
        feedback = load_feedback(ws, ["q1"])
        assert feedback.method == "rocchio (bigram tokens, dense embeddings)"
        assert set(feedback.propose("q1", {"c1": 1}, set(), 2)) == {"c2", "c3"}
        # a vector made for another text of a document: the space is left out
        ws.write_embeddings(key, [("c1", "stale-hash", [1.0, 0.0, 0.0])])
        assert load_feedback(ws).method == "rocchio (bigram tokens)"
        nan = struct.pack("<3f", math.nan, 1.0, 0.0)
        ws.conn.execute("UPDATE embeddings SET vector = ? WHERE doc_id = 'g1'", (nan,))
        ws.write_embeddings(key, [("c1", DOCS[0].hash, [1.0, 0.1, 0.0])])
        space = load_feedback(ws).spaces[1]
        assert np.isfinite(space.matrix).all()


def test_relevant_left_extrapolates_the_decay_of_the_rounds_shares():
    assert relevant_left([]) is None and relevant_left([(5, 2)]) is None
    # shares (2.5/6, 1.5/6, 0.5/6): a ratio of exp(slope of their logs), at most MAX_RATIO
    shares = np.array([2.5, 1.5, 0.5]) / 6
    ratio = math.exp(np.polyfit([0, 1, 2], np.log(shares), 1)[0])
    expected = shares[-1] * 5 * ratio / (1 - ratio)
    assert relevant_left([(5, 2), (5, 1), (5, 0)]) == pytest.approx(expected)
    flat = relevant_left([(5, 1), (5, 1)])  # no decay seen: the cap
    assert flat == pytest.approx((1.5 / 6) * 5 * MAX_RATIO / (1 - MAX_RATIO))


def test_rounds_are_the_proposals_made_at_one_time_with_their_judged_grades():
    proposals = [
        Proposal("q1", "a", "m", "x", "2024-01-01T00:00:00"),
        Proposal("q1", "b", "m", "x", "2024-01-01T00:00:00"),
        Proposal("q1", "c", "m", "x", "2024-01-02T00:00:00"),
        Proposal("q1", "d", "m", "x", "2024-01-02T00:00:00"),
    ]
    assert rounds_of(proposals, {"a": 2, "b": 0, "c": 1}) == [(2, 1), (1, 1)]


def test_judged_grades_keep_each_documents_highest_grade():
    labels = [Label("q1", "a", "x", 0), Label("q1", "a", "y", 2), Label("q2", "b", "x", 1)]
    assert judged_grades(labels, "q1") == {"a": 2}


def test_next_round_leaves_out_what_waits_and_says_what_it_expects(pets):
    with Workspace.open(pets) as ws:
        feedback = load_feedback(ws, ["q1"])
    waiting = [Proposal("q1", "c1", "m", "x", "t1")]
    got = next_round(feedback, "q1", {"c2": 1}, waiting, 2)
    assert "c1" not in got.docs and len(got.docs) == 2 and got.relevant_left is None
    assert got.method == feedback.method
