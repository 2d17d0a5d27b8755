"""`goldpan pool`'s "only it found" report comes from the rankings the pool just made."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.analysis.analyses import pool_contributions
from engine.demo import build_demo
from engine.pooling import only_found, pool
from engine.retrieve.runner import refresh_runs

WORD_LEVEL = ["bm25-word", "bm25-bigram", "bm25-word+bigram"]


def only_found_by(candidates, retriever):
    """The oracle: doc ids that only ``retriever`` put in its top k."""
    return [c.doc_id for c in candidates if set(c.ranks) == {retriever}]


def test_a_pool_keeps_each_new_ranking_top_and_the_report_reads_it(tmp_path: Path) -> None:
    ws = build_demo(tmp_path / "demo.db", pool=False, models=False)
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


def test_the_gold_count_is_every_question_resolved_whatever_made_a_document_gold(
    tmp_path: Path,
) -> None:
    """Labels, a relevant label on a document only one retriever found, and an adjudication
    that makes gold a document nobody graded: the report's gold counts equal those of the
    resolved gold of every question (the report resolves only the questions that can
    count)."""
    from engine.gold import workspace_golds
    from engine.grades import is_relevant
    from engine.types import Adjudication, Label

    ws = build_demo(tmp_path / "demo.db", pool=False, models=False)
    try:
        ws.remove_retriever("bm25-kiwi")
        report = refresh_runs(ws, depth=100, keep_top=10)
        before = pool_contributions(ws, 10, report.top)
        pairs = sorted({p for c in before.values() if c is not None for p in c.only})
        graded = {(lab.question_id, lab.doc_id) for lab in ws.labels()}
        ungraded = [p for p in pairs if p not in graded]
        assert len(ungraded) >= 2
        (q1, d1), (q2, d2) = ungraded[0], next(p for p in ungraded if p[0] != ungraded[0][0])
        ws.write_labels([Label(q1, d1, "ara", 2)])
        ws.write_adjudication(Adjudication(q2, False, {d2: 3}, "lead"))
        after = pool_contributions(ws, 10, report.top)
        golds = workspace_golds(ws)  # every question's
        for c in after.values():
            if c is None:
                continue
            brute = sum(1 for q, d in c.only if is_relevant(golds[q].gold.get(d, 0)))
            assert c.gold == brute
        total = sum(c.gold for c in after.values() if c is not None)
        assert total > sum(c.gold for c in before.values() if c is not None)
    finally:
        ws.close()


def test_maybe_relevant_pairs_keep_every_relevant_grade_and_every_value_not_a_grade(
    tmp_path: Path,
) -> None:
    from engine.grades import MAX_GRADE, NOT_RELEVANT, RELEVANT
    from engine.types import Label

    ws = build_demo(tmp_path / "demo.db", pool=False, models=False)
    try:
        qid = ws.question_ids()[0]
        docs = [d for (d,) in ws.conn.execute("SELECT id FROM docs ORDER BY id LIMIT 4")]
        ws.write_labels(
            [
                Label(qid, docs[0], "pan", NOT_RELEVANT),
                Label(qid, docs[1], "pan", RELEVANT),
                Label(qid, docs[2], "pan", MAX_GRADE),
            ]
        )
        ws.conn.execute(  # not a grade (0.5 passes the CHECK): the readers refuse it, not this
            "INSERT INTO labels(question_id, doc_id, annotator, grade, updated) "
            "VALUES (?, ?, 'pan', 0.5, '')",
            (qid, docs[3]),
        )
        pairs = {p for p in ws.maybe_relevant_pairs() if p[0] == qid}
        mine = {(qid, d) for d in docs}
        assert pairs & mine == {(qid, docs[1]), (qid, docs[2]), (qid, docs[3])}
    finally:
        ws.close()


def test_only_found_reads_a_pools_tops_as_positions_as_it_reads_doc_ids() -> None:
    """Tops kept as positions (in two corpus id lists, cut deeper than asked, questions
    not asked about, some added one by one) give the pairs the doc ids give."""
    import numpy as np

    from engine.pooling import TopDocs

    rng = np.random.default_rng(4)
    corpus = [f"d{i:03d}" for i in range(60)]
    other = list(reversed(corpus[:40]))  # another retriever's corpus order
    qids = [f"q{i}" for i in range(30)]
    for trial in range(30):
        as_ids: dict[str, dict[str, tuple[str, ...]]] = {}
        as_positions: dict[str, TopDocs] = {}
        for name, ids in (("a", corpus), ("b", corpus), ("c", other)):
            tops = TopDocs()
            plain: dict[str, tuple[str, ...]] = {}
            asked = [q for q in qids + ["elsewhere"] if rng.random() < 0.8]
            half = len(asked) // 2
            sizes = rng.integers(0, 8, half)
            cols = rng.integers(0, len(ids), int(sizes.sum()))  # repeats among them
            tops.add_ranked(asked[:half], ids, cols, np.cumsum(sizes))
            start = 0
            for q, n in zip(asked[:half], sizes.tolist(), strict=True):
                plain[q] = tuple(ids[c] for c in cols[start : start + n].tolist())
                start += n
            for q in asked[half:]:
                top = tuple(ids[c] for c in rng.integers(0, len(ids), 5).tolist())
                tops.add(q, top)
                plain[q] = top
            assert dict(tops) == plain and len(tops) == len(plain)
            as_ids[name], as_positions[name] = plain, tops
        depth = int(rng.integers(1, 9))
        got = only_found(as_positions, qids, depth)
        assert got == only_found(as_ids, qids, depth), trial
        for name in ("a", "b", "c"):  # and what each question's pool says
            want = [
                (q, d)
                for q in qids
                for d in only_found_by(
                    pool(q, {n: as_ids[n].get(q, ()) for n in as_ids}, depth), name
                )
            ]
            assert sorted(got[name]) == sorted(want)
    tops = TopDocs()
    tops.add("q1", ("d1",))
    tops.add_ranked(["q2"], corpus, np.zeros(1, np.int64), np.ones(1, np.int64))
    for again in (["q1"], ["q2"], ["q3", "q3"]):  # each is refused, and changes nothing
        with pytest.raises(ValueError, match="added twice"):
            tops.add_ranked(again, corpus, np.zeros(1, np.int64), np.ones(1, np.int64))
    with pytest.raises(ValueError, match="added twice"):
        tops.add("q2", ("d5",))
    assert dict(tops) == {"q1": ("d1",), "q2": (corpus[0],)} and "q3" not in tops
