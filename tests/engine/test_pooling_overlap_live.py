# subprocess: a fresh interpreter, to see which modules (numpy) the live scores import.
import pytest

from engine.analysis.analyses import latency
from engine.analysis.overlap import EASY_THRESHOLD, TitleOverlap
from engine.gold import COUNT_KEYS, resolve_one
from engine.live import LiveScores
from engine.pooling import blind_key, pool
from engine.ranked import workspace_not_ranked
from engine.retrieve.runner import PreparedRetrievers, refresh_runs
from engine.scoring import score_workspace, workspace_golds
from engine.types import Label, Verdict
from engine.workspace import Workspace
from tests.conftest import ROOT


def only_found_by(candidates, retriever):
    """The oracle: doc ids that only ``retriever`` put in its top k."""
    return [c.doc_id for c in candidates if set(c.ranks) == {retriever}]


def test_pool_is_the_union_of_top_k_in_blinded_order():
    rankings = {"a": ["d1", "d2", "d3"], "b": ["d3", "d4", "d5"]}
    cands = pool("q1", rankings, depth=2, extra=["d9", "d1"])
    assert {c.doc_id for c in cands} == {"d1", "d2", "d3", "d4", "d9"}
    by_id = {c.doc_id: c for c in cands}
    assert by_id["d3"].ranks == {"b": 1} and by_id["d1"].ranks == {"a": 1}
    assert by_id["d9"].added_by_search and not by_id["d1"].added_by_search
    # the order is the blind hash, not any retriever's rank
    assert [c.doc_id for c in cands] == sorted(by_id, key=lambda d: blind_key("q1", d))
    assert only_found_by(cands, "b") == [c.doc_id for c in cands if c.doc_id in ("d3", "d4")]


def test_title_overlap_share_of_question_tokens():
    ov = TitleOverlap(["감쇠 보정 원리", "금속 인공물 문제", "공지"])
    high = ov.overlap("감쇠 보정 원리")
    assert high.by_tokenizer["word"] == 1.0 and high.likely_easy
    # word: 1 of 3 distinct words ("감쇠") is in a title
    low = ov.overlap("감쇠 어떻게 하나")
    assert low.by_tokenizer["word"] == pytest.approx(1 / 3)
    assert not low.likely_easy and low.score < EASY_THRESHOLD
    # bigram finds 보정 inside 보정은: 2 of the 4 bigrams (감쇠, 보정) are in title 0
    assert ov.overlap("감쇠 보정은").by_tokenizer["bigram"] == pytest.approx(2 / 3)
    assert ov.overlap("").score == 0.0


POOLED = ["bm25-word", "bm25-bigram"]
"""The retrievers these tests pool (and score: the others have not ranked a question)."""


def _live(ws: Workspace) -> LiveScores:
    runs = ws.all_runs()
    return LiveScores(
        ws.question_ids(),
        workspace_golds(ws),
        {n: runs[n] for n in POOLED},
        tags={q.id: q.tags for q in ws.questions()},
        latency=latency(ws),
        not_ranked=workspace_not_ranked(ws, POOLED),
    )


def test_live_scores_follow_labels_and_equal_goldpan_score(tiny_ws):
    ws = Workspace.open(tiny_ws)
    refresh_runs(ws, POOLED)
    live = _live(ws)
    board = score_workspace(ws, retrievers=POOLED)
    assert live.means() == {n: rs.means for n, rs in board.retrievers.items()}
    before = live.means()["bm25-bigram"]["mrr"]
    # a label change: q4 gets a gold doc; only that question's row is recomputed
    ws.write_labels([Label("q4", "d4", "mina", 1)])
    live.update(resolve_one("q4", {"mina": {"d4": 1}}, {}))
    board = score_workspace(ws, retrievers=POOLED)
    assert live.counts() == {k: board.counts[k] for k in COUNT_KEYS}  # stops: the session's
    for name, rs in board.retrievers.items():
        assert live.means()[name] == rs.means
    # no answer takes it out of the scored questions again
    ws.write_verdicts([Verdict("q4", "mina", "no_answer")])
    live.update(resolve_one("q4", {"mina": {"d4": 1}}, {"mina": "no_answer"}))
    assert live.means()["bm25-bigram"]["mrr"] == before
    assert live.counts()["no_answer"] == 1


def test_live_scores_asked_for_after_labels_equal_those_kept_from_the_start(tiny_ws):
    """Nothing is scored until a score is asked for (the labeling screens never ask): the
    first score, asked after labels and a new ranking, is the one kept up from the start,
    bit for bit, and goldpan score's."""
    import subprocess
    import sys

    ws = Workspace.open(tiny_ws)
    refresh_runs(ws, POOLED)
    kept, late = _live(ws), _live(ws)
    kept.means()
    ws.write_labels([Label("q4", "d4", "mina", 1)])
    for live in (kept, late):
        live.update(resolve_one("q4", {"mina": {"d4": 1}}, {}))
        live.set_ranking("bm25-word", "q4", ["d4", "d1"])
    assert not late._scored_once  # the labels and the ranking scored nothing
    assert late.means() == kept.means()
    assert late.rows() == kept.rows()
    assert late.values("bm25-word", "mrr")[0] == kept.values("bm25-word", "mrr")[0]
    board = score_workspace(ws, retrievers=POOLED).counts
    assert late.counts() == {k: board[k] for k in COUNT_KEYS}
    assert late.latency == latency(ws)
    code = (
        "import sys; from engine.session.labeling import LabelingSession; "
        "from engine.workspace import Workspace; "
        f"s = LabelingSession(Workspace.open({str(tiny_ws)!r}), 'a'); "
        "s.live.golds, s.live.counts(), s.live.rankings; "
        "print('numpy' in sys.modules, len(s.live.means()) > 0, 'numpy' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split() == ["False", "True", "True"], out.stderr


def test_live_rows_hardest_first_and_tag_filter(tiny_ws):
    ws = Workspace.open(tiny_ws)
    refresh_runs(ws, POOLED)
    live = _live(ws)
    rows = live.rows()
    assert {r.question_id for r in rows} == {"q1", "q2", "q3"}
    missed = [sum(1 for v in r.ranks.values() if v == 0) for r in rows]
    assert missed == sorted(missed, reverse=True)
    assert [r.question_id for r in live.rows(tag="easy")] == ["q1"]
    assert live.counts("easy") == {
        "scored": 1,
        "not_ranked": 0,
        "no_answer": 0,
        "disputed": 0,
        "recheck": 0,
        "unlabeled": 0,
    }
    assert "partial-id" in live.all_tags()


def test_prepared_retrievers_pool_one_question_without_reindexing(tiny_ws):
    ws = Workspace.open(tiny_ws)
    prepared = PreparedRetrievers()
    refresh_runs(ws, ["bm25-bigram"], prepared=prepared)
    q = ws.add_question("금속 인공물", ["hard"], "mina")
    assert q.id == "w0001"
    retriever = prepared.get(ws.retriever("bm25-bigram"), ws.corpus_hash(), [])
    report = refresh_runs(ws, ["bm25-bigram"], question_ids=[q.id], prepared=prepared)
    assert report.ran == {"bm25-bigram": 1}
    assert prepared.get(ws.retriever("bm25-bigram"), ws.corpus_hash(), []) is retriever
    assert ws.runs("bm25-bigram")[q.id].doc_ids[0] == "d2"


def test_change_token_moves_with_own_and_other_writes_only(tiny_ws):
    from engine.session.labeling import LabelingSession

    ws = Workspace.open(tiny_ws)
    session = LabelingSession(ws, "jun")
    token = session.change_token()
    hash(token)  # caches key on it
    session.gold("q1")
    ws.labels()
    assert session.change_token() == token  # reading changes nothing
    session.set_grade("q1", "d3", 1)  # this session's own write
    own = session.change_token()
    assert own != token
    other = Workspace.open(tiny_ws)  # another annotator, another connection
    other.write_labels([Label("q2", "d1", "mina", 2)])
    other.close()
    assert session.change_token() not in (token, own)
    ws.close()
