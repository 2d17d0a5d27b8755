"""Workspace schema, as an ordered list of migrations.

``MIGRATIONS[i]`` takes a workspace from schema version ``i`` to ``i + 1``; the version
lives in ``PRAGMA user_version``. Only :mod:`engine.workspace` applies them. Never edit a
migration that has shipped: add a new one.
"""

from __future__ import annotations

M001_INITIAL = """
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE docs (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    fields TEXT NOT NULL DEFAULT '{}',          -- JSON object: series, date, version, ...
    hash TEXT NOT NULL                          -- sha256 of title, text and fields
);

CREATE TABLE questions (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',            -- JSON array of strings
    author TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL,
    written_blind INTEGER NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT ''
);

CREATE TABLE labels (
    question_id TEXT NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
    doc_id TEXT NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    grade INTEGER NOT NULL CHECK (grade BETWEEN 0 AND 3),
    updated TEXT NOT NULL,
    PRIMARY KEY (question_id, doc_id, annotator)
);
CREATE INDEX labels_doc ON labels(doc_id);

CREATE TABLE verdicts (
    question_id TEXT NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    verdict TEXT NOT NULL
        CHECK (verdict IN ('answerable', 'no_answer', 'ambiguous', 'skip')),
    note TEXT NOT NULL DEFAULT '',
    updated TEXT NOT NULL,
    PRIMARY KEY (question_id, annotator)
);

CREATE TABLE adjudications (
    question_id TEXT PRIMARY KEY REFERENCES questions(id) ON DELETE CASCADE,
    no_answer INTEGER NOT NULL DEFAULT 0,
    gold TEXT NOT NULL DEFAULT '{}',            -- JSON object: doc id -> grade
    by TEXT NOT NULL,
    at TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT ''
);

CREATE TABLE retrievers (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',          -- JSON object
    hash TEXT NOT NULL,                         -- sha256 of kind and params
    created TEXT NOT NULL
);

-- One row per (retriever, question): the ranking to the pooling depth, packed.
-- doc_ids is a JSON array in rank order, scores the float64 scores (little endian).
CREATE TABLE runs (
    retriever TEXT NOT NULL REFERENCES retrievers(name) ON DELETE CASCADE,
    question_id TEXT NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
    depth INTEGER NOT NULL,
    doc_ids TEXT NOT NULL,
    scores BLOB NOT NULL,
    latency_ms REAL NOT NULL,
    input_hash TEXT NOT NULL,                   -- corpus, question text, retriever params
    PRIMARY KEY (retriever, question_id)
);

CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    annotator TEXT NOT NULL,
    kind TEXT NOT NULL,                         -- label, verdict, adjudication, import, ...
    question_id TEXT,
    doc_id TEXT,
    old TEXT,
    new TEXT
);
CREATE INDEX events_question ON events(question_id);
"""

M002_EMBEDDINGS = """
-- Dense retrievers' document vectors, computed once per (model, document content):
-- a re-pool embeds only documents whose hash changed. vector is float32, little endian.
CREATE TABLE embeddings (
    model TEXT NOT NULL,                        -- the model's name or path, as configured
    doc_id TEXT NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    doc_hash TEXT NOT NULL,                     -- docs.hash when the vector was computed
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, doc_id)
);
"""

M003_BM25_COUNTS = """
-- BM25's tokenized corpus, kept so that a reopen or a new question never tokenizes the
-- corpus again: per (tokenizer, fields) key, the term x document counts of the corpus
-- whose hash is corpus_hash (a CSR matrix: indptr int64, indices int32, tf int32, all
-- little endian), the terms in row order and the doc ids in column order (JSON lists),
-- and each document's length in tokens (int64). Every BM25 variant's weights are computed
-- from it in memory. A row whose corpus_hash is not the workspace's is stale and is
-- replaced the next time that tokenizer indexes the corpus.
CREATE TABLE bm25_counts (
    key TEXT PRIMARY KEY,                       -- sha256 of tokenizer and document fields
    corpus_hash TEXT NOT NULL,
    n_docs INTEGER NOT NULL,
    n_terms INTEGER NOT NULL,
    doc_ids TEXT NOT NULL,
    terms TEXT NOT NULL,
    indptr BLOB NOT NULL,
    indices BLOB NOT NULL,
    tf BLOB NOT NULL,
    doc_len BLOB NOT NULL
);
"""

MIGRATIONS: list[str] = [M001_INITIAL, M002_EMBEDDINGS, M003_BM25_COUNTS]
"""Migration scripts; the schema version is ``len(MIGRATIONS)``."""

SCHEMA_VERSION = len(MIGRATIONS)
