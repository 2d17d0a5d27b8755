"""Latency as a user waits for it: one question ranked alone, apart from a pool's throughput.

BM25 ranks a pool's questions in batches; each question's share of a batch's time is the
same for every question of the batch, so percentiles of it say nothing (p50 = p95 for
every retriever). The percentiles come from questions timed ranked alone (a seeded
sample of a batched pool), and the batches give the throughput (questions/s).

The retriever here is the real BM25 with a known cost per question added: every question
takes 1 ms, and one of them 40 ms more, whether ranked in a batch or alone.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

import pytest

from engine.retrieve import RETRIEVER_KINDS
from engine.retrieve.bm25 import BM25Retriever
from engine.retrieve.runner import ALONE_SAMPLE, alone_sample, refresh_runs
from engine.scoring import latency, score_workspace
from engine.types import Label, Question, RankedBatch, RetrieverSpec
from engine.workspace import Workspace
from tests.conftest import TINY_QUESTIONS

SLOW_MS = 40.0
N_QUESTIONS = 2 * ALONE_SAMPLE


class CostlyBM25(BM25Retriever):
    """BM25 whose questions cost a known time each (the slow one 40 ms more)."""

    slow: str = ""

    def __init__(self, spec: RetrieverSpec) -> None:
        super().__init__(spec)

    def rank_batch(self, questions: Sequence[Question], depth: int) -> RankedBatch:
        ms = sum(1.0 + (SLOW_MS if q.id == self.slow else 0.0) for q in questions)
        time.sleep(ms / 1000.0)
        return super().rank_batch(questions, depth)


@pytest.fixture
def costly(monkeypatch: pytest.MonkeyPatch, tiny_ws):
    """The tiny workspace with 40 more questions, BM25 made costly; the slow question's id."""
    monkeypatch.setitem(RETRIEVER_KINDS, "bm25", CostlyBM25)
    with Workspace.open(tiny_ws) as ws:
        ws.write_questions(
            Question(f"p{i:02d}", f"감쇠 보정 점검 {i}", ()) for i in range(N_QUESTIONS)
        )
        ws.write_labels([Label(f"p{i:02d}", "d1", "mina", 1) for i in range(N_QUESTIONS)])
        sampled = alone_sample(ws.questions())
        slow = next(q.id for q in sampled if q.id.startswith("p"))
    monkeypatch.setattr(CostlyBM25, "slow", slow)
    return tiny_ws, slow, {q.id for q in sampled}


def test_percentiles_come_from_questions_ranked_alone(costly):
    path, slow, sampled = costly
    with Workspace.open(path) as ws:
        refresh_runs(ws, ["bm25-word"])
        runs = ws.runs("bm25-word")
        board = score_workspace(ws, retrievers=["bm25-word"])
        lat = latency(ws)["bm25-word"]
    assert len(runs) == N_QUESTIONS + 4 and len(sampled) == ALONE_SAMPLE
    # one batch: every question's share of it is the same
    assert len({r.latency_ms for r in runs.values()}) == 1
    # a seeded sample of them was timed ranked alone, the rest was not
    assert {q for q, r in runs.items() if r.alone_ms is not None} == sampled
    assert runs[slow].alone_ms is not None and runs[slow].alone_ms >= SLOW_MS
    others = [r.alone_ms for q, r in runs.items() if q != slow and r.alone_ms is not None]
    # a plain question takes its 1 ms and BM25's own time: under load that can be tens of
    # ms, so what is asserted is what the percentiles below rest on, the slow one is slower
    assert max(others) < runs[slow].alone_ms
    # the slow question is the maximum and lifts the p95 (linear over 20 values: 5% of
    # the way from the 19th to the 20th) above every other question's time
    assert lat.timed == ALONE_SAMPLE and lat.max == runs[slow].alone_ms
    assert lat.p50 <= max(others) < lat.p95 < lat.max
    assert lat.p50 != lat.p95
    # throughput is the batch's: questions over the time they were ranked in
    batch_ms = next(iter(runs.values())).latency_ms * len(runs)
    assert lat.qps == pytest.approx(len(runs) * 1000.0 / batch_ms)
    assert board.retrievers["bm25-word"].latency == lat


def test_a_fused_ranking_alone_waits_for_its_bases(costly):
    path, slow, sampled = costly
    with Workspace.open(path) as ws:
        ws.add_retriever(RetrieverSpec("fused", "rrf", {"of": ["bm25-word", "bm25-bigram"]}))
        refresh_runs(ws, ["fused"])
        base = ws.runs("bm25-word")
        fused = ws.runs("fused")
    # rrf ranks one question at a time: its own time alone is known for every question,
    # and it counts where its bases' are known too (the sample)
    assert {q for q, r in fused.items() if r.alone_ms is not None} == sampled
    assert fused[slow].alone_ms is not None and base[slow].alone_ms is not None
    assert fused[slow].alone_ms >= 2 * SLOW_MS  # both bases are costly BM25
    assert fused[slow].alone_ms > base[slow].alone_ms


def test_the_score_json_names_the_latency_columns(costly):
    path, _, _ = costly
    with Workspace.open(path) as ws:
        refresh_runs(ws, ["bm25-word"])  # what `goldpan score` pools first
        board = json.loads(json.dumps(score_workspace(ws, retrievers=["bm25-word"]).to_json()))
    row = board["retrievers"]["bm25-word"]
    assert {"ms_p50", "ms_p95", "ms_max", "timed_alone", "questions_per_s"} <= set(row)
    assert "ms_median" not in row and "ms_per_query" not in row
    assert row["timed_alone"] == ALONE_SAMPLE and row["ms_max"] >= SLOW_MS
    assert row["ms_p50"] < row["ms_p95"]


def test_a_pool_of_one_question_is_timed_alone_once(costly):
    path, slow, _ = costly
    with Workspace.open(path) as ws:
        refresh_runs(ws, ["bm25-word"], question_ids=[slow])
        run = ws.runs("bm25-word")[slow]
    # the one-question batch is the question alone: its time is both
    assert run.alone_ms == run.latency_ms >= SLOW_MS


def test_rankings_written_before_alone_times_read_as_unmeasured(tiny_ws):
    with Workspace.open(tiny_ws) as ws:
        refresh_runs(ws, ["bm25-word"])
        ws.conn.execute("UPDATE runs SET alone_ms = NULL")
        ws.conn.commit()
        lat = latency(ws)["bm25-word"]
    assert lat.timed == 0 and lat.p50 != lat.p50  # NaN: nothing to say
    assert lat.qps > 0


@pytest.mark.parametrize(
    ("column", "value"), [("latency_ms", "'fast'"), ("alone_ms", "x'00'"), ("alone_ms", "'slow'")]
)
def test_a_time_that_is_not_a_number_is_refused_naming_its_row(tiny_ws, column, value):
    from engine.workspace.rows import BadRow

    with Workspace.open(tiny_ws) as ws:
        refresh_runs(ws, ["bm25-word"])
        good = ws.latencies()["bm25-word"]
        assert len(good[0]) == len(TINY_QUESTIONS) and all(type(v) is float for v in good[0])
        ws.conn.execute(f"UPDATE runs SET {column} = {value} WHERE question_id = 'q2'")
        ws.conn.commit()
        with pytest.raises(BadRow) as refused:
            ws.latencies()
    assert "question 'q2'" in str(refused.value) and column in str(refused.value)
