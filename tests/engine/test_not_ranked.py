"""No question is ever scored as a miss for lack of a ranking: the rule of "not ranked yet".

A question a retriever goldpan ranks has no ranking of, or a ranking made for other
inputs (its text, the corpus, a base's ranking), is left out of every retriever's means
and counted as ``not_ranked``; an imported run that lacks a question scores it a miss.
Every analysis of the scored questions takes the same set (engine.scoring.scored_set).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.analysis.analyses import compare_retrievers, failures, noanswer_calibration, sweep
from engine.analysis.fusion_sweep import fusion_sweep
from engine.analysis.power import workspace_power
from engine.ci.snapshots import check_snapshot, diff_against, snapshot_means, take_snapshot
from engine.gold import COUNT_KEYS, scored_questions, workspace_golds
from engine.ingest import import_questions
from engine.ranked import input_hashes, left_out, workspace_holding, workspace_not_ranked
from engine.retrieve.runner import refresh_runs
from engine.scoring import NotScored, paired_values, score_workspace, scored_set
from engine.session.labeling import LabelingSession
from engine.types import CachedRun, Doc, Label, Question, RetrieverSpec, Verdict
from engine.workspace import Workspace

FAST = ["bm25-word", "bm25-bigram"]
"""The tiny workspace's retrievers without Kiwi (the tests score only these)."""


@pytest.fixture
def ws(tiny_ws: Path):
    """The tiny workspace ranked by :data:`FAST`: q1-q3 have gold, q4 none."""
    w = Workspace.open(tiny_ws)
    refresh_runs(w, FAST)
    yield w
    w.close()


def _means(board):
    return {n: rs.means for n, rs in board.retrievers.items()}


def _add_question(path: Path, qid: str, text: str, gold: str) -> None:
    """Another process adds a question and its gold (a connection of its own)."""
    with Workspace.open(path) as other:
        other.write_questions([Question(qid, text, ("new",))])
        other.write_labels([Label(qid, gold, "imp", 2)])


def test_a_question_without_a_ranking_is_left_out_and_counted_never_a_miss(ws, tiny_ws):
    before = score_workspace(ws, retrievers=FAST)
    _add_question(tiny_ws, "q9", "금속 보정", "d2")
    board = score_workspace(ws, retrievers=FAST)
    assert board.question_ids == before.question_ids == ["q1", "q2", "q3"]
    assert _means(board) == _means(before)  # not a zero in any mean
    assert board.counts["not_ranked"] == 1
    assert board.counts["scored"] == before.counts["scored"]
    assert set(board.counts) == {*COUNT_KEYS, "stopped", "not_judged_stopped"}
    for name in FAST:  # which retriever has not ranked which question (the gate reads it)
        assert board.retrievers[name].not_ranked == ("q9",)
        assert board.retrievers[name].missing == 0
    refresh_runs(ws, FAST)  # ranked: now scored, with its true ranks
    board = score_workspace(ws, retrievers=FAST)
    assert "q9" in board.question_ids and board.counts["not_ranked"] == 0
    assert all(rs.not_ranked == () for rs in board.retrievers.values())


def test_a_ranking_made_for_an_older_text_is_not_ranked(ws, tmp_path):
    """A re-import that changes a question's text (and brings gold for the new text)."""
    path = tmp_path / "again.jsonl"
    path.write_text(
        json.dumps({"id": "q2", "text": "화성 탐사선 금속", "gold": ["d2:1"]}) + "\n",
        encoding="utf-8",
    )
    import_questions(ws, path, annotator="imp")
    assert workspace_golds(ws)["q2"].count_as == "scored"  # gold for the new text
    assert ws.runs("bm25-word")["q2"].doc_ids  # a ranking, of the old text
    board = score_workspace(ws, retrievers=FAST)
    assert "q2" not in board.question_ids and board.counts["not_ranked"] == 1
    assert workspace_not_ranked(ws, FAST) == {"bm25-word": {"q2"}, "bm25-bigram": {"q2"}}
    report = refresh_runs(ws, FAST)  # the pool ranks again exactly what is not ranked
    assert report.ran == {"bm25-word": 1, "bm25-bigram": 1}
    assert workspace_not_ranked(ws, FAST) == {"bm25-word": set(), "bm25-bigram": set()}


def test_a_new_corpus_leaves_every_ranking_not_ranked(ws):
    ws.write_docs([Doc("d5", "새 문서", "감쇠 보정 금속")])
    nr = workspace_not_ranked(ws, FAST)
    assert left_out(nr, workspace_holding(ws, nr)) == set(ws.question_ids())
    board = score_workspace(ws, retrievers=FAST)
    assert board.question_ids == [] and board.counts["not_ranked"] == 3


def test_an_imported_run_that_lacks_a_question_scores_it_a_miss(ws):
    made = {q: r for q, r in ws.runs("bm25-word").items() if q != "q1"}
    ws.replace_retriever_runs(
        RetrieverSpec("ext", "external", {"source": "x.run"}),
        [CachedRun("ext", q, r.doc_ids, r.scores, 0.0, "", 100) for q, r in made.items()],
    )
    assert "ext" not in workspace_not_ranked(ws)  # it will never rank q1: trec_eval's miss
    board = score_workspace(ws, retrievers=["ext", "bm25-word"])
    assert board.question_ids == ["q1", "q2", "q3"]
    ext = board.retrievers["ext"]
    assert ext.missing == 1 and ext.not_ranked == ()
    assert ext.per_question["mrr"][0] == 0.0  # q1, scored as a miss
    assert board.retrievers["bm25-word"].per_question["mrr"][0] > 0


def test_an_outside_retriever_is_not_ranked_only_without_a_ranking(ws):
    """A command's ranking holds a key only the command can give: the rule never runs it."""
    ws.add_retriever(RetrieverSpec("tool", "command", {"command": "false", "timeout": 5.0}))
    assert workspace_not_ranked(ws, ["tool"]) == {"tool": {"q1", "q2", "q3", "q4"}}
    ws.write_runs([CachedRun("tool", "q1", ("d1",), (1.0,), 1.0, "made elsewhere", 10)])
    assert workspace_not_ranked(ws, ["tool"]) == {"tool": {"q2", "q3", "q4"}}


def test_a_fusion_is_not_ranked_when_a_base_was_ranked_again(ws):
    ws.add_retriever(RetrieverSpec("fused", "rrf", {"of": FAST}))
    refresh_runs(ws, ["fused"])
    assert workspace_not_ranked(ws, ["fused"]) == {"fused": set()}
    word = ws.runs("bm25-word")["q3"]  # another process ranks q3 again, differently made
    ws.write_runs([CachedRun("bm25-word", "q3", word.doc_ids, word.scores, 1.0, "other", 100)])
    nr = workspace_not_ranked(ws, ["bm25-word", "fused"])
    assert nr == {"bm25-word": {"q3"}, "fused": {"q3"}}


def test_input_hashes_are_what_the_pool_stores(ws):
    corpus = ws.corpus_hash()
    for spec in ws.retrievers():
        if spec.name in FAST:
            stored = {q: h for q, (h, _) in ws.run_hashes(spec.name).items()}
            assert input_hashes(corpus, spec, ws.questions(), {}) == stored


def test_one_retriever_not_ranked_leaves_the_question_out_for_all(ws):
    """Paired: the means of one table are over the same questions."""
    word = ws.runs("bm25-word")["q1"]
    ws.write_runs([CachedRun("bm25-word", "q1", word.doc_ids, word.scores, 1.0, "stale", 100)])
    board = score_workspace(ws, retrievers=FAST)
    assert board.question_ids == ["q2", "q3"]
    assert board.retrievers["bm25-word"].not_ranked == ("q1",)
    assert board.retrievers["bm25-bigram"].not_ranked == ()  # it ranked q1; still left out
    alone = score_workspace(ws, retrievers=["bm25-bigram"])  # a score of the other alone
    assert alone.question_ids == ["q1", "q2", "q3"]


def test_every_analysis_takes_the_same_scored_questions(ws, tiny_ws):
    _add_question(tiny_ws, "q9", "금속 보정", "d2")  # not ranked by anyone yet
    with Workspace.open(tiny_ws) as other:
        other.write_questions([Question("q8", "화성 일정", ())])
        other.write_verdicts([Verdict("q8", "imp", "no_answer")])  # no-answer, not ranked
    scope = scored_set(ws, FAST)
    scored = scope.question_ids
    assert scored == ["q1", "q2", "q3"] == score_workspace(ws, retrievers=FAST).question_ids
    assert scored == scored_questions(scope.golds, left_out(scope.not_ranked, scope.holding))
    _, va, vb = paired_values(ws, *FAST, "mrr")
    assert len(va) == len(vb) == len(scored)
    assert compare_retrievers(ws, *FAST, samples=50)[0].n == len(scored)
    assert workspace_power(ws, *FAST).n == len(scored)
    assert {f.question_id for f in failures(ws, "bm25-word")} <= set(scored)
    cal = noanswer_calibration(ws, "bm25-word")
    assert len(cal.answerable) == len(scored)
    assert cal.no_answer == []  # q8 is not ranked: it has no top-1 score (not a score of 0)
    refresh_runs(ws, ["bm25-word"], question_ids=["q8"])
    assert len(noanswer_calibration(ws, "bm25-word").no_answer) == 1
    (cell,) = sweep(ws, "bm25-word", [1.5], [0.75])
    own = score_workspace(ws, retrievers=["bm25-word"]).retrievers["bm25-word"].means["mrr"]
    assert cell.value == own
    assert fusion_sweep(ws, FAST, [0.5], None, folds=2, samples=50).n == len(scored)
    assert sorted(take_snapshot(ws, "s", retrievers=FAST)["golds"]) == scored


def test_the_live_scores_leave_out_and_take_in_as_the_score_does(tiny_ws):
    with Workspace.open(tiny_ws) as w:
        refresh_runs(w, FAST)
    with Workspace.open(tiny_ws) as w:  # the session scores every retriever: pool the rest
        for spec in w.retrievers():
            if spec.name not in FAST:
                w.remove_retriever(spec.name)
    session = LabelingSession(Workspace.open(tiny_ws), "kim")
    try:
        means = session.live.means()
        _add_question(tiny_ws, "q9", "금속 보정", "d1")  # d2 ranks first: a harder question
        assert session.reload_if_changed()
        live = session.live  # loaded again: a new question
        assert live.means() == means  # never dropped by the question it cannot score
        board = score_workspace(session.ws).counts
        assert live.counts() == {k: board[k] for k in COUNT_KEYS}  # stops: the session's
        assert live.counts()["not_ranked"] == 1 and live.unranked() == ["q9"]
        assert live.not_ranked["q9"] == frozenset(FAST)
        rows = live.rows()
        assert rows[-1].question_id == "q9" and rows[-1].not_ranked == frozenset(FAST)
        reloads = session.reloads
        with Workspace.open(tiny_ws) as other:  # another process ranks it
            refresh_runs(other, FAST, question_ids=["q9"])
        assert session.reload_if_changed()
        assert session.reloads == reloads and session.live is live  # taken in, no reload
        board = score_workspace(session.ws)
        assert live.unranked() == [] and live.counts() == {k: board.counts[k] for k in COUNT_KEYS}
        assert live.means() == _means(board) != means
        session.edit_question("q9", "금속 보정은 어떻게", None)  # a new text: not ranked
        assert session.live.not_ranked["q9"] == frozenset(FAST)
    finally:
        session.ws.close()


# -- a retriever that cannot rank holds nothing out ---------------------------------------

TOOL = RetrieverSpec("tool", "command", {"command": "false", "timeout": 5.0})
"""A command never trusted in these tests: the rule never runs it."""


def _tool_ranks(w: Workspace, *qids: str) -> None:
    """Rankings of the command, made elsewhere (a colleague's machine that trusts it)."""
    w.write_runs(
        [CachedRun("tool", q, ("d3", "d1"), (2.0, 1.0), 1.0, "elsewhere", 10) for q in qids]
    )


def test_a_retriever_that_never_ranked_holds_no_question_out(ws):
    """Added and never pooled, or a command never trusted: the others are scored as before."""
    alone = score_workspace(ws, retrievers=FAST)
    ws.add_retriever(TOOL)
    ws.add_retriever(RetrieverSpec("bm25-new", "bm25", {"tokenizer": "word", "k1": 0.9}))
    board = score_workspace(ws, retrievers=[*FAST, "tool", "bm25-new"])
    assert board.question_ids == alone.question_ids == ["q1", "q2", "q3"]
    assert board.counts == alone.counts and board.counts["not_ranked"] == 0
    assert board.holding == frozenset()
    for name in FAST:
        assert board.retrievers[name].means == alone.retrievers[name].means
    for name in ("tool", "bm25-new"):
        rs = board.retrievers[name]
        assert rs.means is None and not rs.ranked  # never 0.000
        assert rs.lacks == rs.not_ranked == ("q1", "q2", "q3")
        assert all(v != v for v in rs.per_question["mrr"])  # NaN: no value, not a miss
        assert rs.first_gold_rank.tolist() == [-1, -1, -1]
        shown = board.to_json()["retrievers"][name]
        assert shown["mrr"] is None and shown["hit@1"] is None and shown["not_ranked"] == 3


def test_a_retriever_that_ranked_some_holds_the_rest_out_until_it_cannot_rank(ws):
    ws.add_retriever(TOOL)
    _tool_ranks(ws, "q1")  # it ranks here: it will rank q2 and q3 (q4 has no gold)
    names = [*FAST, "tool"]
    board = score_workspace(ws, retrievers=names)
    assert board.holding == {"tool"}
    assert board.question_ids == ["q1"] and board.counts["not_ranked"] == 2
    assert all(rs.ranked for rs in board.retrievers.values())  # paired over q1
    assert board.retrievers["tool"].not_ranked == ("q2", "q3")
    # not trusted on this machine, or it failed: it will not rank them, so they are scored
    board = score_workspace(ws, retrievers=names, cannot_rank={"tool"})
    alone = score_workspace(ws, retrievers=FAST)
    assert board.holding == frozenset() and board.question_ids == ["q1", "q2", "q3"]
    assert {n: board.retrievers[n].means for n in FAST} == {
        n: alone.retrievers[n].means for n in FAST
    }
    tool = board.retrievers["tool"]
    assert tool.means is None and tool.lacks == ("q2", "q3")
    assert tool.first_gold_rank.tolist() == [2, -1, -1]  # q1 ranked: d3, then the gold d1
    _tool_ranks(ws, "q2", "q3")  # every scored question: its means are real, q4 or not
    board = score_workspace(ws, retrievers=names, cannot_rank={"tool"})
    assert board.retrievers["tool"].ranked and board.retrievers["tool"].lacks == ()
    assert (
        board.retrievers["tool"].means["mrr"] == (1 / 2 + 0 + 1) / 3
    )  # q1 rank 2, q2 missed, q3 rank 1


def test_compare_power_fusion_failures_refuse_a_retriever_that_has_not_ranked(ws):
    ws.add_retriever(TOOL)
    with pytest.raises(NotScored, match=r"^tool has not ranked 3 of the scored questions"):
        paired_values(ws, "bm25-word", "tool", "mrr")
    with pytest.raises(NotScored, match="tool has not ranked 3"):
        compare_retrievers(ws, "tool", "bm25-word", samples=50)
    with pytest.raises(NotScored, match="tool has not ranked 3"):
        workspace_power(ws, "bm25-word", "tool")
    with pytest.raises(NotScored, match="tool has not ranked 3 .*: a fusion with it"):
        fusion_sweep(ws, ["bm25-word", "tool"], [0.5], None, folds=2, samples=50)
    with pytest.raises(NotScored, match="tool has not ranked 3 .*: which of them it fails"):
        failures(ws, "tool")  # never an empty list, which would read as none
    _tool_ranks(ws, "q1")
    with pytest.raises(NotScored, match="tool has not ranked 2"):
        compare_retrievers(ws, "tool", "bm25-word", samples=50, cannot_rank={"tool"})
    assert compare_retrievers(ws, "tool", "bm25-word", samples=50)[0].n == 1  # it will rank


def test_a_snapshot_records_what_a_retriever_has_not_ranked_never_zeros(ws):
    ws.add_retriever(TOOL)
    _tool_ranks(ws, "q1")
    snap = take_snapshot(ws, "s", retrievers=[*FAST, "tool"], cannot_rank={"tool"})
    tool = snap["retrievers"]["tool"]
    assert sorted(snap["golds"]) == ["q1", "q2", "q3"]
    assert list(tool["questions"]) == ["q1"] and tool["not_ranked"] == ["q2", "q3"]
    assert "not_ranked" not in snap["retrievers"]["bm25-word"]
    assert check_snapshot(json.loads(json.dumps(snap)), "s") == snap
    means = snapshot_means(snap)
    assert "tool" not in means and set(means) == set(FAST)  # no mean over other questions
    assert snapshot_means(snap, ["q1"])["tool"]["mrr"] == 0.5
    diff = diff_against(ws, snap, retrievers=[*FAST, "tool"], cannot_rank={"tool"})
    d = diff.retrievers["tool"]
    assert d.paired == 1 and d.only_now == [] and d.only_then == []
    assert diff.retrievers["bm25-word"].paired == 3


def test_the_live_scores_follow_which_retrievers_will_rank(tiny_ws):
    """A retriever's first ranking holds its other questions out; unable to rank, it holds
    none: at each step the live means and counts are the score's, kept exactly."""
    with Workspace.open(tiny_ws) as w:
        refresh_runs(w, FAST)
        for spec in w.retrievers():
            if spec.name not in FAST:
                w.remove_retriever(spec.name)
        w.add_retriever(TOOL)
    session = LabelingSession(Workspace.open(tiny_ws), "kim")

    def same(cannot: set[str] | frozenset[str] = frozenset()):
        board = score_workspace(session.ws, cannot_rank=cannot)
        assert session.live.means() == _means(board)
        assert session.live.counts() == {k: board.counts[k] for k in COUNT_KEYS}
        assert session.live.holding == board.holding
        return board

    try:
        live = session.live
        first = same()  # never ranked: it holds nothing, and has no means
        assert first.question_ids == ["q1", "q2", "q3"]
        assert live.means()["tool"] is None and live.lacks("tool") == 3
        assert [r.question_id for r in live.rows()] == first.question_ids
        with Workspace.open(tiny_ws) as other:  # its first ranking, made elsewhere
            _tool_ranks(other, "q1")
        assert session.reload_if_changed() and session.live is live  # taken in, no reload
        board = same()
        assert board.question_ids == ["q1"] and live.held() == {"q2", "q3", "q4"}
        assert [r.question_id for r in live.rows()] == ["q1", "q2", "q3"]  # q2, q3 wait
        session.ranked_with({"tool"}, ())  # a pool found it cannot rank here
        board = same({"tool"})
        assert board.question_ids == ["q1", "q2", "q3"] and live.held() == set()
        assert {n: live.means()[n] for n in FAST} == {n: first.retrievers[n].means for n in FAST}
        assert live.means()["tool"] is None and live.lacks("tool") == 2
        session.reload()  # ctrl+r: still known not to rank, nothing held out meanwhile
        assert session.live is not live and session.live.cannot_rank == {"tool"}
        same({"tool"})
        with Workspace.open(tiny_ws) as other:
            _tool_ranks(other, "q2", "q3")
        assert session.reload_if_changed()
        board = same({"tool"})
        assert board.retrievers["tool"].ranked and session.live.means()["tool"] is not None
        session.ranked_with((), {"tool"})  # it ranked again: it would hold what it lacks
        assert session.live.cannot_rank == frozenset()
        same()
    finally:
        session.ws.close()
