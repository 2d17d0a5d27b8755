"""Analyses of ``engine.analysis.analyses`` and ``engine.analysis.noanswer``, on cases
computed by hand.

No-answer calibration tables, title/gold overlap shares, failures and their relation to
the gold document, (k1, b) sweeps against ``score_workspace`` and latency summaries.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine.analysis.analyses import (
    compare_retrievers,
    failures,
    latency,
    noanswer_calibration,
    question_overlaps,
    sweep,
)
from engine.analysis.noanswer import USABLE_BALANCED_ACCURACY, ThresholdRow, calibrate
from engine.analysis.overlap import EASY_THRESHOLD, TitleOverlap
from engine.errors import UnknownName
from engine.ingest import import_squad
from engine.retrieve import bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.scoring import score_workspace
from engine.series import relation
from engine.types import CachedRun, Doc, Label, Question, RetrieverSpec, Verdict
from engine.workspace import Workspace, WorkspaceError
from engine.workspace_setup import new_workspace
from tests.conftest import shared_data

FAST = ["bm25-word", "bm25-bigram"]  # the tiny workspace's retrievers without Kiwi

# -- no-answer calibration ------------------------------------------------------------------


def test_calibration_table_by_hand():
    cal = calibrate("r", answerable=[5, 1, 3, 7, 6], no_answer=[2, 0.5, 0.1, 4, 0.2])
    assert cal.answerable == [1.0, 3.0, 5.0, 6.0, 7.0]
    assert cal.no_answer == [0.1, 0.2, 0.5, 2.0, 4.0]
    # reject when top-1 < t; t over the distinct scores and one above the max (8)
    # balanced accuracy = (caught / 5 + (5 - rejected) / 5) / 2
    expected = [
        (0.1, 0, 0, 0.5),
        (0.2, 0, 1, 0.6),
        (0.5, 0, 2, 0.7),
        (1.0, 0, 3, 0.8),  # the best: the lowest of the three at 0.8
        (2.0, 1, 3, 0.7),
        (3.0, 1, 4, 0.8),
        (4.0, 2, 4, 0.7),
        (5.0, 2, 5, 0.8),
        (6.0, 3, 5, 0.7),
        (7.0, 4, 5, 0.6),
        (8.0, 5, 5, 0.5),  # rejects everything
    ]
    got = [
        (r.threshold, r.answerable_rejected, r.no_answer_caught, r.balanced_accuracy)
        for r in cal.table
    ]
    assert [g[:3] for g in got] == [e[:3] for e in expected]
    for g, e in zip(got, expected, strict=True):
        assert g[3] == pytest.approx(e[3], abs=1e-15)
    assert cal.best == cal.table[3]
    assert cal.best.threshold == 1.0 and cal.best.balanced_accuracy == pytest.approx(0.8)
    assert cal.usable
    data = cal.to_json()
    assert data["warning"] is None and data["usable"] is True and data["established"] is True
    assert (data["answerable"], data["no_answer"]) == (5, 5)
    assert data["best"] == {
        "threshold": 1.0,
        "answerable_rejected": 0,
        "no_answer_caught": 3,
        "balanced_accuracy": pytest.approx(0.8),
    }
    assert len(data["thresholds"]) == 11


def test_fully_overlapping_scores_are_not_usable():
    cal = calibrate("r", [1, 2, 3, 4, 5], [1, 2, 3, 4, 5])
    # every threshold rejects as many of one group as it catches of the other: 0.5
    assert [r.threshold for r in cal.table] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert all(r.balanced_accuracy == pytest.approx(0.5) for r in cal.table)
    assert cal.best is not None and cal.best.balanced_accuracy < USABLE_BALANCED_ACCURACY
    assert cal.usable is False
    data = cal.to_json()
    assert data["usable"] is False and data["established"] is True
    assert "overlap" in data["warning"]


@pytest.mark.parametrize("ans, na", [([], [1.0]), ([1.0], []), ([], [])])
def test_an_empty_group_gives_no_table(ans, na):
    cal = calibrate("r", ans, na)
    assert cal.table == [] and cal.best is None and not cal.usable
    assert cal.to_json()["thresholds"] == [] and cal.to_json()["best"] is None


def test_perfect_separation_is_balanced_accuracy_1():
    cal = calibrate("r", [4, 5, 6, 7, 8], [0, 1, 2, 3, 3.5])
    assert cal.best == ThresholdRow(4.0, 0, 5, 1.0)


@pytest.mark.parametrize("no_answer, answerable", [(4, 5), (5, 4), (1, 30)])
def test_no_threshold_is_named_below_5_and_5(no_answer, answerable):
    # a threshold "with balanced accuracy 1.000" from one no-answer question (issue 47)
    cal = calibrate("r", [10.0 + k for k in range(answerable)], [0.1 * k for k in range(no_answer)])
    assert cal.best is None and cal.table == [] and not cal.usable
    data = cal.to_json()
    assert data["established"] is False and data["best"] is None and data["thresholds"] == []
    assert data["needs"] == {
        "no_answer": {"have": no_answer, "least": 5, "more": max(0, 5 - no_answer)},
        "answerable": {"have": answerable, "least": 5, "more": max(0, 5 - answerable)},
    }
    short = "no-answer" if no_answer < 5 else "answerable"
    more = 5 - min(no_answer, answerable)
    assert data["warning"].endswith(
        f": {more} more {short} question{'s' if more > 1 else ''} needed"
    )
    assert data["warning"].startswith(
        "a no-answer threshold needs at least 5 no-answer questions and 5 answerable questions"
    )


def test_a_threshold_is_named_at_5_and_5():
    cal = calibrate("r", [10.0, 11, 12, 13, 14], [0.0, 0.1, 0.2, 0.3, 0.4])
    assert cal.best == ThresholdRow(10.0, 0, 5, 1.0)
    assert cal.to_json()["established"] is True and cal.warning() is None


def test_noanswer_calibration_on_tiny_ws(tiny_ws):
    ws = Workspace.open(tiny_ws)
    ws.write_verdicts([Verdict("q4", "mina", "no_answer")])
    refresh_runs(ws, ["bm25-word"])
    runs = ws.runs("bm25-word")
    cal = noanswer_calibration(ws, "bm25-word")
    ws.close()
    # q1-q3 labeled: their top-1 scores; q4 has no matching document: top-1 score 0
    assert cal.answerable == sorted(runs[q].scores[0] for q in ("q1", "q2", "q3"))
    assert cal.no_answer == [0.0] and runs["q4"].scores == ()
    # 3 and 1 questions: a perfect separation, and no threshold named from it
    assert cal.best is None and not cal.evidence.established
    assert cal.evidence.says() == (
        "a no-answer threshold needs at least 5 no-answer questions and 5 answerable "
        "questions; found 1 no-answer question and 3 answerable questions: 4 more no-answer "
        "questions and 2 more answerable questions needed"
    )


# -- overlap --------------------------------------------------------------------------------


def test_title_overlap_word_and_bigram_by_hand():
    ov = TitleOverlap(["감쇠 보정 원리", "금속 보정"])
    o = ov.overlap("감쇠 보정은 어떻게")
    # word: {감쇠, 보정은, 어떻게}; title 0 has 감쇠 -> 1/3 (보정은 != 보정)
    assert o.by_tokenizer["word"] == pytest.approx(1 / 3)
    # bigram: {감쇠, 보정, 정은, 어떻, 떻게}; title 0 has 감쇠 and 보정 -> 2/5
    assert o.by_tokenizer["bigram"] == pytest.approx(2 / 5)
    assert o.score == pytest.approx(2 / 5) and not o.likely_easy
    # word: {금속, 보정} both in title 1 -> 1; bigram the same tokens -> 1
    assert ov.overlap("금속 보정").by_tokenizer == {"word": 1.0, "bigram": 1.0}
    # tokens are counted once: repeating a word does not raise the share
    assert ov.overlap("금속 금속 화성").by_tokenizer["word"] == pytest.approx(1 / 2)
    # the best single title, not the union of titles: 감쇠 (t0) and 금속 (t1) -> 1/2
    assert ov.overlap("감쇠 금속 화성 탐사").by_tokenizer["word"] == pytest.approx(1 / 4)


def test_question_overlaps_on_tiny_ws(tiny_ws):
    ws = Workspace.open(tiny_ws)
    ws.write_questions([Question("q5", "감쇠 보정 원리는")])
    rows = {r.question_id: r for r in question_overlaps(ws)}
    ws.close()
    assert set(rows) == {"q1", "q2", "q3", "q4", "q5"}
    # q1 "감쇠 보정은 어떻게 하나", gold d1 only (d2 graded 0), gold text = d1's title + text
    # "감쇠 보정 원리\n감쇠 보정은 CT 영상으로 감쇠 계수를 구한다."
    #   word: {감쇠, 보정은, 어떻게, 하나}: 감쇠, 보정은 found -> 2/4
    #   bigram: {감쇠, 보정, 정은, 어떻, 떻게, 하나}: 감쇠, 보정, 정은 found -> 3/6
    assert rows["q1"].gold == pytest.approx(0.5)
    #   titles: word 감쇠 -> 1/4; bigram 감쇠, 보정 (d1 or d2) -> 2/6
    assert rows["q1"].title == pytest.approx(1 / 3)
    # q3 "0137 문서의 점검 절차", gold d3 "TD-2024-0137\n문서번호 TD-2024-0137 팬텀 점검 절차."
    #   word: 0137, 점검, 절차 of 4; bigram: {0137, 문서, 서의, 점검, 절차}: 4 of 5
    assert rows["q3"].gold == pytest.approx(4 / 5)
    assert rows["q3"].title == pytest.approx(1 / 4)  # title "TD-2024-0137": 0137 of 4 words
    # q2 "금속 때문에 생기는 문제", gold d2: word 금속 of 4, bigram 금속 of 6
    assert rows["q2"].gold == pytest.approx(1 / 4)
    # q4 has no gold: None; nothing of it in any title
    assert rows["q4"].gold is None and rows["q4"].title == 0.0
    # q5 copies d1's title: word {감쇠, 보정, 원리는} 2/3; bigram {감쇠, 보정, 원리, 리는} 3/4
    assert rows["q5"].title == pytest.approx(3 / 4) and rows["q5"].gold is None
    assert rows["q5"].high and EASY_THRESHOLD <= 3 / 4
    assert not any(rows[q].high for q in ("q1", "q2", "q3", "q4"))


# -- failures -------------------------------------------------------------------------------


def test_failures_on_tiny_ws(tiny_ws):
    ws = Workspace.open(tiny_ws)
    # q1: d1 judged not relevant, d2 relevant -> gold d2, which both retrievers rank 2nd
    # q4: gold d4, but no document shares a word with "화성 탐사선 일정": not retrieved
    ws.write_labels(
        [
            Label("q1", "d1", "mina", 0),
            Label("q1", "d2", "mina", 1),
            Label("q4", "d4", "mina", 1),
        ]
    )
    refresh_runs(ws, FAST)
    assert ws.runs("bm25-word")["q1"].doc_ids[:2] == ("d1", "d2")
    rows = failures(ws, "bm25-word")
    # q2 (d2) and q3 (d3) are at rank 1: not failures
    assert [(f.question_id, f.gold, f.gold_rank, f.top_doc) for f in rows] == [
        ("q1", ("d2",), 2, "d1"),
        ("q4", ("d4",), 0, None),
    ]
    # d1 and d2 are the same series ("ac"): neighbours; nothing retrieved: other
    assert [f.relation for f in rows] == ["neighbour", "other"]
    # a tag filter keeps only tagged questions (q1 is "easy")
    assert [f.question_id for f in failures(ws, "bm25-word", tag="easy")] == ["q1"]
    assert failures(ws, "bm25-word", tag="hard") == []
    with pytest.raises(UnknownName, match="unknown retriever"):
        failures(ws, "nope")
    ws.close()


def test_failures_empty_when_every_gold_is_first(tiny_ws):
    ws = Workspace.open(tiny_ws)
    refresh_runs(ws, ["bm25-bigram"])
    assert failures(ws, "bm25-bigram") == []
    ws.close()


def test_relation_overview_neighbour_other():
    gold = Doc("g", "감쇠 보정 원리", "본문", {"series": "ac", "number": "TD-1"})

    def kind(top: Doc) -> str:
        return relation(top, gold).kind

    # overview: a summary word in the title (any case), or the text quotes the gold's title
    assert kind(Doc("o1", "감쇠 시리즈 총정리", "...")) == "overview"
    assert kind(Doc("o2", "PET Overview", "...")) == "overview"
    assert kind(Doc("o3", "공지", "앞 글: 감쇠 보정 원리 참고")) == "overview"
    # neighbour: a shared series, number, version or article field
    assert kind(Doc("n1", "감쇠 보정 금속", "...", {"series": "ac"})) == "neighbour"
    assert kind(Doc("n2", "다른 글", "...", {"number": "TD-1"})) == "neighbour"
    # other: no shared field value, a field the gold lacks, or no fields at all
    assert kind(Doc("x1", "다른 글", "...", {"series": "mr"})) == "other"
    assert kind(Doc("x2", "다른 글", "...", {"version": "2"})) == "other"
    assert kind(Doc("x3", "다른 글", "...")) == "other"
    # an untitled gold is never "quoted"
    assert relation(Doc("x4", "다른 글", "아무 내용"), Doc("g2", "", "본문")).kind == "other"


def test_failures_name_a_title_series_and_both_titles(tmp_path: Path):
    """Posts whose front matter holds no series: the titles say it (the seed's posts)."""
    ws = new_workspace(tmp_path / "posts.db")
    ws.write_docs(
        [
            Doc("p5", "PET 원리 ⑤ 감쇠", "감쇠 보정은 CT로 한다"),
            Doc("p6", "PET 원리 ⑥ 산란", "산란 보정 감쇠 보정 감쇠 보정 이야기"),
            Doc("m0", "오개념 ⓪ 개요", "흔한 오개념 모음: 산란 보정 오해"),
            Doc("m3", "오개념 ③ 산란 보정은 필요 없다", "틀린 믿음"),
        ]
    )
    ws.write_questions([Question("q1", "감쇠 보정"), Question("q2", "산란 보정 오해")])
    ws.write_labels([Label("q1", "p5", "mina", 2), Label("q2", "m3", "mina", 1)])
    refresh_runs(ws, ["bm25-word"])
    rows = {f.question_id: f for f in failures(ws, "bm25-word")}
    assert [ws.runs("bm25-word")[q].doc_ids[0] for q in ("q1", "q2")] == ["p6", "m0"]
    q1, q2 = rows["q1"], rows["q2"]
    assert (q1.relation, q1.detail, q1.series) == (
        "neighbour",
        "neighbour in series 'PET 원리' (⑤ vs ⑥)",
        "PET 원리",
    )
    assert (q1.gold_doc, q1.gold_title, q1.top_doc, q1.top_title) == (
        "p5",
        "PET 원리 ⑤ 감쇠",
        "p6",
        "PET 원리 ⑥ 산란",
    )
    assert (q2.relation, q2.detail) == ("overview", "overview of series '오개념' (개요)")
    ws.close()


def test_failures_compare_the_winner_with_the_gold_it_relates_to(tmp_path: Path):
    """Two gold documents: the winner is named a neighbour of the one in its series,
    though the other is graded higher."""
    ws = new_workspace(tmp_path / "two.db")
    ws.write_docs(
        [
            Doc("a", "감쇠 보정 정리 노트", "감쇠"),
            Doc("b2", "SPECT QC (2) 회전 중심", "회전 중심"),
            Doc("b3", "SPECT QC (3) 콜리메이터", "감쇠 감쇠 감쇠 회전"),
        ]
    )
    ws.write_questions([Question("q", "감쇠 회전")])
    ws.write_labels([Label("q", "a", "mina", 3), Label("q", "b2", "mina", 1)])
    refresh_runs(ws, ["bm25-word"])
    (f,) = failures(ws, "bm25-word")
    assert f.top_doc == "b3" and f.gold == ("a", "b2")
    assert (f.gold_doc, f.detail) == ("b2", "neighbour in series 'SPECT QC' (2) vs (3)")
    ws.close()


# -- sweep ----------------------------------------------------------------------------------

LONG = "사과 사과 사과 a b c d e f g h i"  # 12 tokens, tf(사과) = 3


def _lucene(tf: int, dl: int, avgdl: float, k1: float, b: float) -> float:
    """The tf part of Lucene BM25 (the idf is the same for both documents below)."""
    return tf / (tf + k1 * (1 - b + b * dl / avgdl))


@pytest.fixture
def apple_ws(tmp_path: Path) -> Workspace:
    """Short doc "s" (the gold) against long doc "l": which wins depends on b."""
    ws = new_workspace(tmp_path / "apple.db")
    ws.write_docs([Doc("s", "", "사과"), Doc("l", "", LONG), Doc("z", "", "바나나")])
    ws.write_questions([Question("q1", "사과", ("easy",))])
    ws.write_labels([Label("q1", "s", "mina", 1)])
    yield ws
    ws.close()


def test_sweep_grid_by_hand(apple_ws):
    avgdl = (1 + 12 + 1) / 3
    for k1 in (1.2, 1.5):
        # b = 0: no length normalisation, tf 3 beats tf 1: gold at rank 2, MRR 1/2
        assert _lucene(3, 12, avgdl, k1, 0.0) > _lucene(1, 1, avgdl, k1, 0.0)
        # b = 0.75: the long document is penalised: gold first, MRR 1
        assert _lucene(1, 1, avgdl, k1, 0.75) > _lucene(3, 12, avgdl, k1, 0.75)
    refresh_runs(apple_ws, ["bm25-word"])  # the scored questions: those it has ranked
    cached = apple_ws.runs("bm25-word")
    cells = sweep(apple_ws, "bm25-word", [1.2, 1.5], [0.0, 0.75])
    assert len(cells) == 4
    assert [(c.k1, c.b, c.value) for c in cells] == [
        (1.2, 0.0, 0.5),
        (1.2, 0.75, 1.0),
        (1.5, 0.0, 0.5),
        (1.5, 0.75, 1.0),
    ]
    # sweeping ranks afresh: nothing is cached or stored
    assert apple_ws.runs("bm25-word") == cached


def test_sweep_own_cell_equals_score(apple_ws, tiny_ws):
    refresh_runs(apple_ws, ["bm25-word"])
    for metric in ("mrr", "ndcg@10", "hit@1"):
        (cell,) = sweep(apple_ws, "bm25-word", [1.5], [0.75], metric)
        board = score_workspace(apple_ws, metrics=[metric], retrievers=["bm25-word"])
        assert cell.value == board.retrievers["bm25-word"].means[metric]
    ws = Workspace.open(tiny_ws)
    ws.write_labels([Label("q1", "d1", "mina", 0), Label("q1", "d2", "mina", 1)])
    refresh_runs(ws, FAST)
    for name in FAST:
        for metric in ("mrr", "recall@1", "ndcg@10"):
            (cell,) = sweep(ws, name, [1.5], [0.75], metric)
            board = score_workspace(ws, metrics=[metric], retrievers=[name])
            assert cell.value == board.retrievers[name].means[metric]
    # the tag filter matches score's
    (cell,) = sweep(ws, "bm25-word", [1.5], [0.75], "mrr", tag="easy")
    board = score_workspace(ws, metrics=["mrr"], retrievers=["bm25-word"], tag="easy")
    assert cell.value == board.retrievers["bm25-word"].means["mrr"]
    ws.close()


def test_sweep_rejects_other_kinds_and_unknown_names(apple_ws):
    apple_ws.add_retriever(RetrieverSpec("dense-x", "dense", {"model": "none"}))
    with pytest.raises(WorkspaceError, match="only bm25"):
        sweep(apple_ws, "dense-x", [1.2], [0.75])
    with pytest.raises(UnknownName, match="unknown retriever"):
        sweep(apple_ws, "nope", [1.2], [0.75])
    with pytest.raises(UnknownName, match="unknown metric"):
        sweep(apple_ws, "bm25-word", [1.2], [0.75], "map")


def test_sweep_own_cell_equals_score_on_korquad(tmp_path):
    data = shared_data("korquad_v1.0_dev", "KorQuAD_v1.0_dev.json")
    ws = new_workspace(tmp_path / "kq.db")
    import_squad(ws, data, "article")
    refresh_runs(ws, ["bm25-word"])
    board = score_workspace(ws, metrics=["mrr", "ndcg@10"], retrievers=["bm25-word"])
    for metric in ("mrr", "ndcg@10"):
        (cell,) = sweep(ws, "bm25-word", [1.5], [0.75], metric)
        assert cell.value == board.retrievers["bm25-word"].means[metric]
    ws.close()


# -- compare helpers, latency, by tag -------------------------------------------------------


def test_compare_retrievers(apple_ws):
    apple_ws.add_retriever(bm25_spec("bm25-b0", "word", b=0.0))
    refresh_runs(apple_ws, ["bm25-word", "bm25-b0"])
    [c] = compare_retrievers(apple_ws, "bm25-word", "bm25-b0", "mrr", samples=100)
    assert (c.n, c.wins, c.ties, c.losses) == (1, 1, 0, 0)
    assert (c.mean_a, c.mean_b, c.diff) == (1.0, 0.5, 0.5)
    assert c.ci95 == (0.5, 0.5) and c.p_value == 1.0  # one question: nothing to test
    assert c.verdict.status == "too_few_discordant" and c.verdict.discordant == 1
    # several metrics at once, each once, in the order asked
    both = compare_retrievers(apple_ws, "bm25-word", "bm25-b0", ["hit@1", "MRR", "mrr"])
    assert [x.metric for x in both] == ["hit@1", "mrr"]
    assert both[1].to_json() == compare_retrievers(apple_ws, "bm25-word", "bm25-b0")[0].to_json()
    with pytest.raises(UnknownName, match="unknown metric"):
        compare_retrievers(apple_ws, "bm25-word", "bm25-b0", "map")


def test_latency_keys_and_order(tiny_ws):
    ws = Workspace.open(tiny_ws)
    assert latency(ws) == {}  # nothing pooled yet
    refresh_runs(ws, FAST)
    lat = latency(ws)
    board = score_workspace(ws, retrievers=FAST)
    ws.close()
    assert set(lat) == set(FAST)  # bm25-word+bigram and bm25-kiwi have no runs
    for name, row in lat.items():
        assert row.timed == 4  # four questions: every one is timed alone too
        values = (row.p50, row.p95, row.max, row.qps)
        assert all(math.isfinite(v) and v >= 0 for v in values)
        assert row.p50 <= row.p95 <= row.max
        assert board.retrievers[name].latency == row  # score reports the same


def test_latency_by_hand(tiny_ws):
    ws = Workspace.open(tiny_ws)
    ws.write_runs(
        CachedRun("bm25-word", q, (), (), 2.5, "h", 100, alone)
        for q, alone in zip(("q1", "q2", "q3", "q4"), (100.0, 2.0, 4.0, None), strict=True)
    )
    lat = latency(ws)["bm25-word"]
    ws.close()
    # alone, sorted 2, 4, 100 (q4 was not timed alone): median 4, p95 (linear) at
    # position 0.95 * 2 = 1.9: 4 + 0.9 * (100 - 4) = 90.4; four rankings of 2.5 ms each
    # in their batches: 10 ms for 4 questions, 400 questions/s
    assert (lat.p50, lat.max, lat.timed) == (4.0, 100.0, 3)
    assert lat.p95 == pytest.approx(90.4)
    assert lat.qps == pytest.approx(400.0)


def test_sweep_own_cell_equals_score_after_a_deeper_pool(tmp_path):
    ws = new_workspace(tmp_path / "deep.db")
    # 120 equal documents: ties go to the larger id, so d000 (the gold) is ranked 120th
    ws.write_docs([Doc(f"d{i:03d}", "", "사과") for i in range(120)])
    ws.write_questions([Question("q1", "사과")])
    ws.write_labels([Label("q1", "d000", "mina", 1)])
    refresh_runs(ws, ["bm25-word"], depth=200)
    board = score_workspace(ws, metrics=["mrr"], retrievers=["bm25-word"])
    assert board.retrievers["bm25-word"].means["mrr"] == pytest.approx(1 / 120)
    (cell,) = sweep(ws, "bm25-word", [1.5], [0.75], "mrr")
    ws.close()
    assert cell.value == board.retrievers["bm25-word"].means["mrr"]
