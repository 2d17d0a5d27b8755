"""The gate's verdict (engine/ci/gate.py) and what it may vouch for (engine/ci/rankings.py).

Every front end (the CLI, the Python API, the pytest plugin, the CI reports) presents
this verdict; these tests call the engine itself, on the tiny workspace pooled with
bm25-word: q1, q2 and q3 are scored (q4 has no label).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from engine.ci.gate import (
    MISSING_NOW,
    NOT_RUN,
    NOTHING_COMPARED,
    REFUSALS,
    REPLACED_INPUT,
    UNKNOWN_NAME,
    Floor,
    Verdict,
    floor_verdict,
    regression_verdict,
)
from engine.ci.rankings import GivenRuns, Rankings, scored_rankings
from engine.ci.snapshots import diff_against, take_snapshot
from engine.ingest import import_run
from engine.ranks import is_worse, worse_by
from engine.retrieve.runner import refresh_runs
from engine.scoring import score_workspace
from engine.types import Doc, Label, Question, RetrieverSpec
from engine.workspace import Workspace

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def ws(tiny_ws: Path) -> Workspace:
    """The tiny workspace with bm25-word pooled, open for writing."""
    w = Workspace.open(tiny_ws)
    for spec in w.retrievers():
        if spec.name != "bm25-word":
            w.remove_retriever(spec.name)
    refresh_runs(w, ["bm25-word"])
    yield w
    w.close()


def rules(verdict: Verdict) -> list[str]:
    return [r.rule.key for r in verdict.refusals]


def write_run(path: Path, first: dict[str, str]) -> Path:
    """A TREC run: per question, ``first`` at rank 1 and the other documents after it."""
    docs = ["d1", "d2", "d3", "d4"]
    lines = []
    for q in ("q1", "q2", "q3", "q4"):
        order = [first.get(q, "d4")] + [d for d in docs if d != first.get(q, "d4")]
        lines += [f"{q} Q0 {d} {i} {10 - i} today" for i, d in enumerate(order, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# -- the rule of a worse rank ---------------------------------------------------------------


def test_a_lost_gold_is_worse_than_any_rank_and_a_found_one_better():
    assert worse_by(1, 3) == 2 and worse_by(3, 1) == -2 and worse_by(2, 2) == 0
    assert worse_by(50, 0) == math.inf and worse_by(0, 50) == -math.inf
    assert is_worse(1, 3, tolerance=1) and not is_worse(1, 3, tolerance=2)
    assert is_worse(1, 0, tolerance=10**6)  # a lost gold counts whatever the tolerance


# -- floors ---------------------------------------------------------------------------------


def test_floors_are_held_or_missed_per_retriever(ws):
    board = score_workspace(ws, metrics=["mrr", "hit@1"], retrievers=["bm25-word"])
    mrr = board.retrievers["bm25-word"].means["mrr"]
    verdict = floor_verdict(
        board, [Floor(None, "mrr", mrr), Floor("bm25-word", "hit@1", 1.01)], k=1
    )
    assert not verdict.refusals and verdict.exit_code == 1
    assert verdict.failures == [
        f"bm25-word hit@1 {board.retrievers['bm25-word'].means['hit@1']:.4f} < 1.01"
    ]
    assert [q.question for q in verdict.questions] == ["q1", "q2", "q3"]  # each at k, for reports
    assert floor_verdict(board, [Floor(None, "mrr", mrr)], k=1).passed


def test_a_floor_over_no_scored_question_is_refused_not_missed(ws):
    board = score_workspace(ws, metrics=["mrr"], tag="no-answer")  # q4: no label
    verdict = floor_verdict(board, [Floor(None, "mrr", 0.1)], k=10, tag="no-answer")
    assert rules(verdict) == [NOTHING_COMPARED.key] and verdict.exit_code == 2
    assert "no question with tag 'no-answer' is scored (1 unlabeled)" in verdict.refusal_message()
    assert not verdict.failures  # a mean over no question is no "below the floor"


def test_a_floor_naming_a_retriever_not_scored_is_refused(ws):
    board = score_workspace(ws, metrics=["mrr"], retrievers=["bm25-word"])
    verdict = floor_verdict(board, [Floor("fz", "mrr", 0.1)], k=10)
    assert rules(verdict) == [UNKNOWN_NAME.key]
    assert "'fz', which is not scored here (scored: bm25-word)" in verdict.refusal_message()


def test_a_floor_over_questions_not_ranked_yet_is_refused(ws):
    ws.write_docs([Doc("d5", "새 문서", "감쇠 보정")])  # a new corpus: every ranking is stale
    board = score_workspace(ws, metrics=["mrr"])  # bm25-word will rank them: nothing scored
    verdict = floor_verdict(board, [Floor("bm25-word", "mrr", 0.0)], k=10)
    assert rules(verdict) == [NOTHING_COMPARED.key]
    assert "no question is scored (3 not ranked, 1 unlabeled)" in verdict.refusal_message()
    assert "rank them first (goldpan pool)" in verdict.refusal_message()
    left = {(q.retriever, q.question) for q in verdict.questions if q.not_compared}
    assert ("bm25-word", "q1") in left  # said, per question, as not compared
    refresh_runs(ws, ["bm25-word"])
    board = score_workspace(ws, metrics=["mrr"])
    assert floor_verdict(board, [Floor("bm25-word", "mrr", 0.0)], k=10).passed


def test_a_floor_on_a_retriever_that_never_ranked_is_refused_and_holds_no_other_out(ws):
    ws.add_retriever(RetrieverSpec("bm25-new", "bm25", {"tokenizer": "word", "k1": 1.2}))
    board = score_workspace(ws, metrics=["mrr"])  # never pooled: it holds nothing out
    assert board.question_ids == ["q1", "q2", "q3"]
    assert floor_verdict(board, [Floor("bm25-word", "mrr", 0.0)], k=10).passed
    verdict = floor_verdict(board, [Floor(None, "mrr", 0.0)], k=10)
    assert rules(verdict) == [NOTHING_COMPARED.key]
    assert verdict.refusal_message() == (
        "bm25-new has not ranked 3 of the scored questions: a floor on it compares nothing; "
        "rank them first (goldpan pool)"
    )
    assert [f.retriever for f in verdict.floors] == ["bm25-word"]  # never a 0.000 of it
    new = [q for q in verdict.questions if q.retriever == "bm25-new"]
    assert {q.not_compared for q in new} == {"not ranked now"} and not any(q.failed for q in new)


def test_a_floor_over_a_retriever_that_did_not_run_is_refused_and_not_reported(ws):
    board = score_workspace(ws, metrics=["mrr"])
    ran = Rankings(not_run={"bm25-word": "its command is not trusted on this machine"})
    verdict = floor_verdict(board, [Floor(None, "mrr", 0.0)], k=10, rankings=ran, workspace="t.db")
    assert rules(verdict) == [NOT_RUN.key]
    assert "`goldpan trust t.db --yes`" in verdict.refusal_message()
    assert verdict.questions == [] and verdict.floors == []  # nothing listed of what did not run


# -- regressions against a snapshot ---------------------------------------------------------


def test_a_question_worse_beyond_the_tolerance_fails_it(ws):
    snap = take_snapshot(ws, "base")
    ws.write_labels([Label("q1", "d1", "mina", 0), Label("q1", "d4", "mina", 2)])  # gold moves
    diff = diff_against(ws, snap, retrievers=["bm25-word"], samples=20)
    verdict = regression_verdict(diff, tolerance=0)
    worse = verdict.failed_questions()["bm25-word"]
    assert [q.question for q in worse] == ["q1"] and worse[0].rank_then == 1
    assert verdict.exit_code == 1 and verdict.failure_message().startswith(
        "regressed since base (tolerance 0 ranks): bm25-word: 1 question(s) (q1 1->"
    )
    assert {q.question for q in verdict.questions if q.not_compared is None} == {"q1", "q2", "q3"}
    lost = worse[0].rank_now == 0
    assert regression_verdict(diff, tolerance=100).passed is not lost


def test_a_snapshot_retriever_missing_now_is_refused(ws):
    snap = take_snapshot(ws, "base")
    ws.remove_retriever("bm25-word")
    ws.add_retriever(RetrieverSpec("bm25-renamed", "bm25", {"tokenizer": "word"}))
    refresh_runs(ws)
    verdict = regression_verdict(diff_against(ws, snap, samples=20))
    assert rules(verdict) == [MISSING_NOW.key]
    assert "bm25-word is in snapshot base but the workspace has no retriever bm25-word now" in (
        verdict.refusal_message()
    )
    assert verdict.not_compared == {"bm25-renamed": "not in snapshot base"}


def test_a_name_the_snapshot_lacks_is_refused(ws):
    snap = take_snapshot(ws, "base")
    given = {"search": ws.runs("bm25-word")}
    diff = diff_against(ws, snap, given=given, samples=20)
    verdict = regression_verdict(diff, named=["search"])
    assert rules(verdict) == [UNKNOWN_NAME.key]
    assert "snapshot base has no retriever search (it has: bm25-word)" in verdict.refusal_message()


def test_a_snapshot_of_another_test_set_is_refused(ws):
    snap = take_snapshot(ws, "base")
    other = {
        **snap,
        "golds": {f"x{q}": g for q, g in snap["golds"].items()},
        "retrievers": {
            r: {**body, "questions": {f"x{q}": v for q, v in body["questions"].items()}}
            for r, body in snap["retrievers"].items()
        },
    }
    verdict = regression_verdict(diff_against(ws, other, samples=20))
    assert rules(verdict) == [NOTHING_COMPARED.key]
    said = "bm25-word: no question is scored both in snapshot base and now"
    assert f"{said} (3 scored only then, 3 only now)" in verdict.refusal_message()
    assert not verdict.passed


def test_a_question_scored_only_now_is_left_out_without_refusing(ws):
    snap = take_snapshot(ws, "base")
    ws.write_labels([Label("q4", "d4", "mina", 2)])  # q4 is scored now, not then
    verdict = regression_verdict(diff_against(ws, snap, samples=20))
    assert not verdict.refusals
    left = {q.question: q.not_compared for q in verdict.questions if q.not_compared}
    assert left == {"q4": "not in snapshot base"}


def test_a_retriever_added_since_the_snapshot_is_left_out_unless_named(ws):
    snap = take_snapshot(ws, "base")
    ws.add_retriever(RetrieverSpec("bm25-new", "bm25", {"tokenizer": "word", "k1": 1.2}))
    refresh_runs(ws)
    diff = diff_against(ws, snap, samples=20)
    assert regression_verdict(diff).not_compared == {"bm25-new": "not in snapshot base"}
    assert regression_verdict(diff).passed
    assert rules(regression_verdict(diff, named=["bm25-new"])) == [UNKNOWN_NAME.key]


# -- what a gate may vouch for ----------------------------------------------------------------


def test_a_fusion_of_a_replaced_ranking_is_fused_again_from_the_given_one(ws, tmp_path):
    import_run(ws, write_run(tmp_path / "old.run", {"q1": "d1", "q2": "d2", "q3": "d3"}), "mine")
    ws.add_retriever(RetrieverSpec("fz", "rrf", {"of": ["mine", "bm25-word"]}))
    refresh_runs(ws)
    today = write_run(tmp_path / "today.run", {})  # today's code ranks d4 first everywhere
    given = GivenRuns(files={"mine": str(today)})
    ran = scored_rankings(ws, given, ["fz"], None, "read-only")
    assert ran.how["fz"] == "fused again now from the given mine" and not ran.not_run
    assert ran.given["fz"]["q1"].doc_ids != ws.runs("fz")["q1"].doc_ids  # not the cached fusion
    from engine.retrieve import build_retriever

    rrf = build_retriever(ws.retriever("fz"))
    bases = {"mine": ran.given["mine"]["q1"], "bm25-word": ws.runs("bm25-word")["q1"]}
    expected = rrf.fuse({b: (list(r.doc_ids), list(r.scores)) for b, r in bases.items()}, 100)
    assert list(ran.given["fz"]["q1"].doc_ids) == expected[0]


def test_a_fusion_is_not_made_again_from_a_base_not_ranked_for_its_inputs_now(ws, tmp_path):
    import_run(ws, write_run(tmp_path / "old.run", {"q1": "d1"}), "mine")
    ws.add_retriever(RetrieverSpec("fz", "rrf", {"of": ["mine", "bm25-word"]}))
    refresh_runs(ws)
    ws.write_questions([Question("q2", "금속 인공물", ())])  # bm25-word's q2 is stale now
    given = GivenRuns(files={"mine": str(write_run(tmp_path / "today.run", {}))})
    ran = scored_rankings(ws, given, ["fz"], None, "read-only")
    assert "fz" not in ran.given
    assert ran.not_run["fz"].startswith("it reads bm25-word, which has not ranked 1 question")
    board = score_workspace(ws, metrics=["mrr"], retrievers=["fz"], given=ran.given)
    verdict = floor_verdict(board, [Floor("fz", "mrr", 0.1)], k=10, rankings=ran)
    assert NOT_RUN.key in rules(verdict)


def test_a_reranker_of_a_replaced_ranking_is_refused(ws, tmp_path):
    import_run(ws, write_run(tmp_path / "old.run", {"q1": "d1"}), "mine")
    ws.add_retriever(RetrieverSpec("rr", "rerank", {"model": "a-local-model", "of": "mine"}))
    given = GivenRuns(files={"mine": str(write_run(tmp_path / "today.run", {}))})
    ran = scored_rankings(ws, given, ["rr"], None, "read-only")
    assert "rr" not in ran.given and set(ran.replaced) == {"rr"}
    board = score_workspace(ws, metrics=["mrr"], retrievers=["rr"], given=ran.given)
    verdict = floor_verdict(board, [Floor("rr", "mrr", 0.1)], k=10, rankings=ran)
    assert REPLACED_INPUT.key in rules(verdict)  # (and it ranked nothing: nothing compared)
    assert "it reads mine, whose rankings the command line replaced" in verdict.refusal_message()


def test_a_question_not_ranked_for_its_inputs_now_is_not_compared(ws):
    snap = take_snapshot(ws, "base")
    ws.write_questions([Question("q2", "금속 인공물", ())])  # edited since it was pooled
    ran = scored_rankings(ws, GivenRuns(), ["bm25-word"], None, "--no-pool")
    assert not ran.not_run and ran.how["bm25-word"] == "cached (--no-pool)"
    diff = diff_against(ws, snap, retrievers=["bm25-word"], samples=20)
    verdict = regression_verdict(diff, rankings=ran)
    assert verdict.passed and verdict.compared() == {"bm25-word": ["q1", "q3"]}
    left = [(q.question, q.not_compared) for q in verdict.questions if q.not_compared]
    assert left == [("q2", "not ranked yet")]
    ws.write_questions([Question(q, f"{q} edited", ()) for q in ("q1", "q3")])
    diff = diff_against(ws, snap, retrievers=["bm25-word"], samples=20)
    verdict = regression_verdict(diff, rankings=ran)  # what is left compares nothing
    assert rules(verdict) == [NOTHING_COMPARED.key]
    assert "(0 scored only then, 0 only now, 3 not ranked yet)" in verdict.refusal_message()


# -- docs/ci.md says what the engine refuses -------------------------------------------------


def test_the_documented_gate_guarantees_are_the_engine_refusals():
    heading = "## What a gate guarantees"
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = text[text.index(heading) + len(heading) :]
    section = section[: section.index("\n#")]
    listed = [m.group(1) for m in re.finditer(r"^- (.+)$", section, re.M)]
    assert listed == [r.promise for r in REFUSALS]
