"""The demo workspace is shaped like what the seed studies found hard (issue: demo data)."""

import statistics
from collections import Counter

import pytest

from engine.demo import build_demo, demo_data
from engine.formats.labels import read_labels_csv
from engine.formats.markdown import read_markdown_docs
from engine.formats.questions import read_questions
from engine.gold import Status
from engine.scoring import score_workspace, workspace_golds


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    ws = build_demo(path)
    yield ws
    ws.close()


def test_corpus_shape():
    docs = read_markdown_docs(demo_data() / "docs")
    assert len(docs) >= 40
    series = Counter(d.fields.get("series") for d in docs)
    assert len(series) >= 4 and all(n >= 2 for n in series.values())
    # an overview post per series
    overviews = {d.fields["series"] for d in docs if d.id.endswith("-00")}
    assert overviews == set(series)
    # document numbers such as TD-2024-0137
    numbers = [d.fields["number"] for d in docs if "number" in d.fields]
    assert "TD-2024-0137" in numbers and len(numbers) >= 5
    # a manual in versions R1 and R2
    versions = {d.fields.get("version") for d in docs if d.fields.get("series") == "safety-manual"}
    assert {"R1", "R2"} <= versions
    # one-line notices beside long posts: lengths differ 7x or more
    notices = [
        len(d.text) for d in docs if d.fields.get("series") == "notice" and d.id != "notice-00"
    ]
    longest = max(len(d.text) for d in docs)
    assert longest >= 7 * min(notices)
    assert statistics.median(len(d.text) for d in docs) > 3 * statistics.median(notices)


def test_questions_and_labels_shape(demo):
    questions = read_questions(demo_data() / "questions.jsonl")
    assert len(questions) >= 30
    tags = Counter(t for q in questions for t in q.tags)
    for tag in ("easy", "hard", "paraphrase", "partial-id", "conditional", "english-name"):
        assert tags[tag] >= 1, tag
    annotators = {lab.annotator for lab, _ in read_labels_csv(demo_data() / "labels.csv")}
    assert annotators == {"mina", "jun"}
    golds = workspace_golds(demo)
    status = Counter(g.status for g in golds.values())
    assert status[Status.NO_ANSWER] >= 4
    assert status[Status.AMBIGUOUS] == 1
    assert status[Status.DISPUTED] >= 3
    assert status[Status.UNLABELED] >= 1
    assert sum(1 for g in golds.values() if len(g.gold) >= 2) >= 2


def test_demo_is_pooled_and_scored(demo):
    board = score_workspace(demo)
    assert set(board.retrievers) == {
        *("bm25-word", "bm25-bigram", "bm25-word+bigram", "bm25-kiwi"),
        *("e5", "hybrid", "hybrid+id"),  # vector, its hybrid with word+bigram, + id boost
    }
    assert board.counts["scored"] >= 25
    for rs in board.retrievers.values():
        assert rs.missing == 0
        assert 0 < rs.means["hit@1"] <= rs.means["hit@5"] <= rs.means["hit@10"] <= 1
    # the hard questions separate the retrievers; word is not the best on them
    hard = score_workspace(demo, tag="hard")
    assert hard.retrievers["bm25-word"].means["mrr"] < hard.retrievers["bm25-bigram"].means["mrr"]


def test_partial_number_finds_the_document_with_kiwi_only(demo):
    questions = {q.id: q for q in demo.questions()}
    partial = [q for q in questions.values() if "partial-id" in q.tags and "0137" in q.text]
    assert partial, "the demo needs a question with a partial number such as 0137"
    q = partial[0]
    kiwi = demo.runs("bm25-kiwi")[q.id]
    assert "td-0137" in kiwi.doc_ids[:3]
