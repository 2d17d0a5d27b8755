"""`goldpan pool`'s "only it found" report comes from the rankings the pool just made."""

from __future__ import annotations

from pathlib import Path

from engine.analysis import pool_contributions
from engine.demo import build_demo
from engine.pooling import only_found, only_found_by, pool
from engine.retrieve.runner import refresh_runs

WORD_LEVEL = ["bm25-word", "bm25-bigram", "bm25-word+bigram"]


def test_a_pool_keeps_each_new_ranking_top_and_the_report_reads_it(tmp_path: Path) -> None:
    ws = build_demo(tmp_path / "demo.db", pool=False)
    try:
        ws.remove_retriever("bm25-kiwi")  # no Kiwi here: the word-level retrievers suffice
        report = refresh_runs(ws, depth=100, keep_top=10)
        qids = ws.question_ids()
        for name in WORD_LEVEL:
            stored = ws.runs(name)
            assert report.top[name] == {q: stored[q].doc_ids[:10] for q in qids}
        from_memory = pool_contributions(ws, 10, report.top)
        read_back = pool_contributions(ws, 10)
        assert from_memory == read_back
        # and both are what the blinded pools say, question by question
        runs = {n: ws.runs(n) for n in WORD_LEVEL}
        for name in WORD_LEVEL:
            expected = sorted(
                (q, d)
                for q in qids
                for d in only_found_by(
                    pool(q, {n: runs[n][q].doc_ids if q in runs[n] else () for n in runs}),
                    name,
                )
            )
            assert from_memory[name] is not None
            assert from_memory[name].only == expected
        assert any(c is not None and c.only for c in from_memory.values())
        # a second pool ranks nothing: what it reports is read back, the same
        again = refresh_runs(ws, depth=100, keep_top=10)
        assert again.top == {}
        assert pool_contributions(ws, 10, again.top) == read_back
    finally:
        ws.close()


def test_only_found_counts_a_document_once_per_retriever() -> None:
    rankings = {"a": {"q": ("d1", "d1", "d2")}, "b": {"q": ("d2", "d3")}, "c": {}}
    assert only_found(rankings, ["q"], 10) == {"a": [("q", "d1")], "b": [("q", "d3")], "c": []}
    assert only_found(rankings, ["q"], 1) == {"a": [("q", "d1")], "b": [("q", "d2")], "c": []}
