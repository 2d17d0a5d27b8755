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

M003_LEASES = """
-- `goldpan serve`: who is judging which question right now. A short lease, renewed while
-- the question is open and released when the annotator moves on or leaves (an expired one
-- is free again). One row per question, so two sessions can never hold the same question.
-- holder is one app session (a random id): one person may have two tabs open.
CREATE TABLE leases (
    question_id TEXT PRIMARY KEY REFERENCES questions(id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    holder TEXT NOT NULL UNIQUE,
    taken TEXT NOT NULL,
    expires TEXT NOT NULL                       -- UTC ISO 8601, compared as text
);
"""

M004_SNAPSHOTS = """
-- Snapshots of the scores (issue 14): what every retriever scored on every scored question
-- and the gold it was scored against, so a later `score --against NAME` can say which
-- questions moved and whether the retriever or the labels changed. data is the JSON
-- document `snapshot export` writes (engine.ci.snapshots describes its shape).
CREATE TABLE snapshots (
    name TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    data TEXT NOT NULL
);
"""

M005_QUERYLOG = """
-- A query log imported without --sample (issue 14): one row per group of duplicate and
-- near-duplicate queries, waiting on the write screen to be kept, rewritten or discarded.
CREATE TABLE querylog (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT NOT NULL,                         -- the group's most frequent original form
    norm TEXT NOT NULL UNIQUE,                  -- NFKC, whitespace collapsed, case-folded
    count INTEGER NOT NULL,                     -- occurrences in the log, variants included
    band TEXT NOT NULL CHECK (band IN ('head', 'torso', 'tail')),
    variants TEXT NOT NULL DEFAULT '[]',        -- JSON array: the other original forms
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'kept', 'rewritten', 'discarded')),
    question_id TEXT REFERENCES questions(id) ON DELETE SET NULL,
    source TEXT NOT NULL DEFAULT '',            -- the file it came from (its name)
    imported TEXT NOT NULL,
    decided TEXT,
    by TEXT
);
CREATE INDEX querylog_pending ON querylog(status, count);
"""

# Judgments made for an earlier text of their question (issue 12: a re-imported question
# whose text changed). made_for is NULL for a judgment of the question's current text,
# else the sha256 (engine.types.sha256_text) of the older text it was made for. Such a
# judgment is kept, shown and counted as needing re-check, and never counts as gold.
M006_MADE_FOR = """
ALTER TABLE labels ADD COLUMN made_for TEXT;
ALTER TABLE verdicts ADD COLUMN made_for TEXT;
ALTER TABLE adjudications ADD COLUMN made_for TEXT;
"""

GOLDPAN_APPLICATION_ID = int.from_bytes(b"GoPn", "big")
"""``PRAGMA application_id`` of every goldpan workspace (0x476F506E, the bytes ``GoPn``).

``file(1)`` and other programs read it from the header; goldpan refuses to write into an
SQLite file that carries another program's id.
"""

M007_IDENTITY = f"""
-- Own files only: the header says the file is goldpan's (older workspaces have 0 there and
-- are recognised by their schema), and a random id names this workspace in the user's
-- trust record of command retrievers (a copy keeps the id, so trust is also keyed by path).
PRAGMA application_id = {GOLDPAN_APPLICATION_ID};
INSERT OR IGNORE INTO meta(key, value) VALUES ('workspace_id', lower(hex(randomblob(16))));
"""

M008_BM25_COUNTS = """
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

M009_DOC_NUMBERS = """
-- Every document numbered once for good. A cached ranking (runs.doc_ids) written from
-- this version on is these numbers as a blob of uint32 (little endian) in rank order:
-- 400 bytes for a ranking of 100 documents, where their ids as a JSON array took about
-- 1,800, and nothing to build or parse per ranking. Rows written before keep their JSON
-- array of ids, which the readers still take. A number is never changed or given to
-- another document (documents are never deleted, and an INTEGER PRIMARY KEY keeps its values
-- through VACUUM), and goldpan numbers each new document in the transaction that adds it.
CREATE TABLE doc_numbers (
    n INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE
);
INSERT INTO doc_numbers(id) SELECT id FROM docs ORDER BY id;
"""

M010_ALONE_MS = """
-- What a user waits for one question. runs.latency_ms is a ranking's share of the time of
-- the batch it was ranked in (BM25 ranks a pool's questions a thousand at a time): the
-- pool's throughput, the same for every question of a batch. alone_ms is the time of this
-- question ranked by itself, as a user's query is: measured for every question a
-- retriever ranks one at a time, and for a seeded sample of a batched pool (see
-- engine.retrieve.runner), NULL where it was not measured. Latency percentiles are read
-- from alone_ms only.
ALTER TABLE runs ADD COLUMN alone_ms REAL;
"""


M011_MODEL_JUDGES = """
-- Model judges (`goldpan judge`): a local model, or a team's own command, grades pooled
-- documents as an annotator of its own, named model:NAME. Its grades live in a table of
-- their own, not in labels: no gold, count, score or hand-out to people reads them, so a
-- model's grade never becomes gold by itself (a person adopts one in Adjudicate, which
-- records an adjudication by that person). model is the model's name or folder, or the
-- command (kind command). params (JSON object) holds what the grades were made with: the
-- document fields, the thresholds from scores to grades and the calibration shown then.
CREATE TABLE model_judges (
    annotator TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    model TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',
    updated TEXT NOT NULL
);
-- One model grade per (question, document, judge). score is the model's raw score (NULL
-- for a command's grade). made_for as in labels (see M006).
CREATE TABLE model_labels (
    question_id TEXT NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
    doc_id TEXT NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    annotator TEXT NOT NULL REFERENCES model_judges(annotator) ON DELETE CASCADE,
    grade INTEGER NOT NULL CHECK (grade BETWEEN 0 AND 3),
    score REAL,
    updated TEXT NOT NULL,
    made_for TEXT,
    PRIMARY KEY (question_id, doc_id, annotator)
);
CREATE INDEX model_labels_annotator ON model_labels(annotator);
"""


M012_STOPS_AND_PROPOSALS = """
-- Complete gold for less judging (issue 49). A stop: an annotator ended the judging of a
-- question before every candidate was graded, when the stopping rule offered it (rule:
-- why it was offered, as shown). The candidates nobody judged are then "not judged
-- (stopped)": not grade 0, not forgotten, and counted. made_for as in labels (see M006).
CREATE TABLE stops (
    question_id TEXT NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    rule TEXT NOT NULL,
    updated TEXT NOT NULL,
    made_for TEXT,
    PRIMARY KEY (question_id, annotator)
);
-- Gold beyond the pool: documents outside the pool that feedback on the judgments so far
-- found likely relevant (method: how it was found, by: who asked). A proposal joins the
-- question's candidates, judged blind like any other, and is no judgment.
CREATE TABLE proposals (
    question_id TEXT NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
    doc_id TEXT NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    method TEXT NOT NULL,
    by TEXT NOT NULL,
    proposed TEXT NOT NULL,
    PRIMARY KEY (question_id, doc_id)
);
CREATE INDEX proposals_doc ON proposals(doc_id);
"""


MIGRATIONS: list[str] = [
    M001_INITIAL,
    M002_EMBEDDINGS,
    M003_LEASES,
    M004_SNAPSHOTS,
    M005_QUERYLOG,
    M006_MADE_FOR,
    M007_IDENTITY,
    M008_BM25_COUNTS,
    M009_DOC_NUMBERS,
    M010_ALONE_MS,
    M011_MODEL_JUDGES,
    M012_STOPS_AND_PROPOSALS,
]
"""Migration scripts; the schema version is ``len(MIGRATIONS)``."""

SCHEMA_VERSION = len(MIGRATIONS)
