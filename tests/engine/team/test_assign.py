"""Work handed out by `goldpan serve`: leases, K annotators per question, most needed first."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from engine.errors import BadInput
from engine.team.assign import Assigner, handout_order
from engine.types import Adjudication, Label, Question, Verdict
from engine.workspace import Workspace
from engine.workspace.migrations import SCHEMA_VERSION

RANKINGS = {"bm25": {"q1": ["d1", "d2"], "q2": ["d1", "d2", "d3", "d4"], "q3": ["d3"]}}


def test_the_leases_table_comes_with_the_schema(tiny_ws: Path) -> None:
    with Workspace.open(tiny_ws) as ws:
        assert ws.schema_version == SCHEMA_VERSION
        assert ws.leases() == {}


def test_fewest_annotators_first_then_the_judging_queue() -> None:
    judges = {"q1": {"mina"}, "q3": {"mina", "jun"}}
    rank = {"q2": 0, "q1": 1}
    # q2 and q4 have nobody: q2 is in the queue, q4 is not; q1 has one, q3 two
    assert handout_order(["q1", "q2", "q3", "q4"], rank, judges) == ["q2", "q4", "q1", "q3"]


def test_two_annotators_never_hold_the_same_question(tiny_ws: Path) -> None:
    with Workspace.open(tiny_ws) as a_ws, Workspace.open(tiny_ws) as b_ws:
        a = Assigner(a_ws, "ara", per_question=2)
        b = Assigner(b_ws, "bo", per_question=2)
        qa = a.next(RANKINGS)
        qb = b.next(RANKINGS)
        assert qa is not None and qb is not None and qa != qb
        # q4 is the only question nobody has judged: the first one goes there
        assert qa == "q4"
        assert a_ws.leases() == {qa: "ara", qb: "bo"}
        # moving on gives up the old lease in the same transaction
        qa2 = a.next(RANKINGS)
        assert qa2 not in (qa, qb)
        assert a_ws.leases() == {qa2: "ara", qb: "bo"}
        # a question someone else holds is reported, not taken
        assert a.hold(qb) == "bo"
        a.release()
        assert a_ws.leases() == {qb: "bo"}


def test_k_annotators_per_question_and_never_one_already_judged(tiny_ws: Path) -> None:
    with Workspace.open(tiny_ws) as ws:
        # mina judged q1, q2, q3 (fixture); jun judges q1 and q4 too: q1 has K=2 now
        ws.write_labels([Label("q1", "d1", "jun", 1)])
        ws.write_verdicts([Verdict("q4", "jun", "no_answer")])
        ws.write_adjudication(Adjudication("q3", False, {"d3": 3}, "lead"))
        mina = Assigner(ws, "mina", per_question=2)
        assert mina.next(RANKINGS) == "q4"  # q1-q3 judged by mina; q4 by jun only
        assert mina.next(RANKINGS) is None
        jun = Assigner(ws, "jun", per_question=2)
        assert jun.next(RANKINGS) == "q2"  # q3 is adjudicated, q1 and q4 are his
        solo = Assigner(ws, "solo", per_question=1)
        assert solo.next(RANKINGS) is None  # every question has one annotator


def test_an_expired_lease_is_free_again_and_renewal_keeps_it(tiny_ws: Path) -> None:
    with Workspace.open(tiny_ws) as ws:
        gone = Assigner(ws, "gone", lease_seconds=-1)  # expired the moment it is taken
        q = gone.next(RANKINGS)
        assert q == "q4" and ws.leases() == {}
        here = Assigner(ws, "here")
        assert here.next(RANKINGS) == "q4"
        assert here.renew() == "q4"
        assert ws.leases() == {"q4": "here"}


def test_per_question_must_be_positive(tiny_ws: Path) -> None:
    with Workspace.open(tiny_ws) as ws, pytest.raises(BadInput, match="per-question"):
        Assigner(ws, "x", per_question=0)


def test_concurrent_takers_never_share_a_question(tiny_ws: Path) -> None:
    """Eight sessions (threads, own connections) ask at the same moment: distinct questions."""
    with Workspace.open(tiny_ws) as ws:
        ws.write_questions([Question(f"x{i}", f"extra question {i}") for i in range(8)])
    got: list[str | None] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def take(i: int) -> None:
        with Workspace.open(tiny_ws) as own:
            a = Assigner(own, f"ann{i}")
            start.wait()
            q = a.next({})
            with lock:
                got.append(q)

    threads = [threading.Thread(target=take, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    taken = [q for q in got if q is not None]
    assert len(taken) == 8 and len(set(taken)) == 8
    with Workspace.open(tiny_ws) as ws:
        assert len(ws.leases()) == 8
