"""Rankings: configured retrievers, their cached runs, and stored embeddings."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn

from engine.names import check_retriever_name
from engine.types import (
    BatchRun,
    CachedRun,
    RetrieverSpec,
    canonical_json,
)
from engine.workspace import rows as decode
from engine.workspace.judgments import RANKED_EVENT, EventLog
from engine.workspace.lifecycle import now
from engine.workspace.rows import WorkspaceError

_WRITE_RUN = (
    "INSERT INTO runs(retriever, question_id, depth, doc_ids, scores, latency_ms, input_hash, "
    "alone_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT(retriever, question_id) DO UPDATE SET depth = excluded.depth, "
    "doc_ids = excluded.doc_ids, scores = excluded.scores, "
    "latency_ms = excluded.latency_ms, input_hash = excluded.input_hash, "
    "alone_ms = excluded.alone_ms"
)

_WRITE_BATCH = (
    "INSERT INTO runs(retriever, question_id, depth, doc_ids, scores, latency_ms, input_hash, "
    "alone_ms) SELECT ?1, r.value ->> 0, ?2, "
    "coalesce(substr(?3, 4 * (r.value ->> 2) + 1, 4 * ((r.value ->> 3) - (r.value ->> 2))), x''), "
    "coalesce(substr(?4, 8 * (r.value ->> 2) + 1, 8 * ((r.value ->> 3) - (r.value ->> 2))), x''), "
    "?5, r.value ->> 1, NULL FROM json_each(?6) AS r WHERE true "
    + _WRITE_RUN[_WRITE_RUN.index("ON CONFLICT") :]
)
"""One batch's rankings in one statement: its packed numbers and scores as two blobs, and
per question (in a JSON array) its id, input hash and where its ranking starts and ends
in them; the rows :data:`_WRITE_RUN` writes, byte for byte, without the times alone. (A
batch of empty rankings has empty blobs, which Python hands SQLite as NULL.)"""


RANKED_ONE_BY_ONE = 50
"""Up to this many questions ranked in one write get an event each (see ``_log_ranked``)."""


def _pack_scores(scores: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(scores)}d", *scores)


RunRow = tuple[str, str, int, bytes, bytes, float, str, float | None]
"""A ``runs`` row as stored: retriever, question id, depth, document numbers (packed
little-endian uint32, see ``doc_numbers``), scores (packed little-endian doubles), latency
(ms, its batch's share), input hash, the time ranked alone (ms, or None)."""


def _ranked(batch: BatchRun) -> Any:
    """The indices (into ``batch.ranked.doc_ids``) of the documents a batch ranks."""
    import numpy as np  # only pooling gets here; the CLI's quick commands never do

    ranked = np.zeros(len(batch.ranked.doc_ids), dtype=bool)
    ranked[batch.ranked.cols] = True
    return np.flatnonzero(ranked)


def _packed(batch: BatchRun, used: Any, numbers: Mapping[str, int]) -> tuple[bytes, bytes]:
    """A batch's rankings end to end: document numbers (uint32) and scores (doubles), packed.

    ``used`` is :func:`_ranked` of ``batch``.
    """
    import numpy as np

    ranked = batch.ranked
    number_of = np.zeros(len(ranked.doc_ids), dtype="<u4")
    number_of[used] = [numbers[ranked.doc_ids[i]] for i in used.tolist()]
    scores = np.asarray(ranked.scores, dtype="<f8")
    if not np.isfinite(scores).all():
        at = int(np.flatnonzero(~np.isfinite(scores))[0])
        qid = batch.question_ids[int(np.searchsorted(ranked.ends, at, side="right"))]
        _not_finite(batch.retriever, qid, float(scores[at]))
    return number_of[ranked.cols].tobytes(), scores.tobytes()


def _not_finite(retriever: str, question_id: str, score: float) -> NoReturn:
    """Refuse a ranking whose score is not finite: no reader could read it back."""
    raise WorkspaceError(
        f"retriever {retriever!r} gave question {question_id!r} the score {score!r}, not a "
        "finite number; its parameters may be out of range (`goldpan retriever list`). "
        "Nothing was written"
    )


def _run_rows(
    batches: Sequence[BatchRun], used: Sequence[Any], numbers: Mapping[str, int]
) -> list[RunRow]:
    """The ``runs`` rows of rankings given as arrays, documents by ``numbers``.

    ``used[i]`` is :func:`_ranked` of ``batches[i]``. Byte for byte the rows
    :meth:`RankingTables.write_runs` writes for the same rankings.
    """
    rows: list[RunRow] = []
    for b, ranked_docs in zip(batches, used, strict=True):
        ranked = b.ranked
        packed_ids, packed = _packed(b, ranked_docs, numbers)
        start = 0
        for qid, input_hash, end in zip(
            b.question_ids, b.input_hashes, ranked.ends.tolist(), strict=True
        ):
            rows.append(
                (
                    b.retriever,
                    qid,
                    b.depth,
                    packed_ids[4 * start : 4 * end],
                    packed[8 * start : 8 * end],
                    b.latency_ms,
                    input_hash,
                    b.alone_ms.get(qid),
                )
            )
            start = end
    return rows


class RankingTables(EventLog):
    """Retrievers, their cached runs and embeddings."""

    def retrievers(self) -> list[RetrieverSpec]:
        """Every configured retriever, in the order they were added."""
        rows = self.conn.execute("SELECT name, kind, params FROM retrievers ORDER BY rowid")
        return [decode.retriever(self.path, r) for r in rows]

    def retriever(self, name: str) -> RetrieverSpec | None:
        """One retriever, or None."""
        r = self.conn.execute(
            "SELECT name, kind, params FROM retrievers WHERE name = ?", (name,)
        ).fetchone()
        return decode.retriever(self.path, r) if r else None

    def add_retriever(self, spec: RetrieverSpec) -> None:
        """Add a retriever; its name must be new and pass :func:`check_retriever_name`."""
        check_retriever_name(spec.name)
        with self.transaction():
            if self.retriever(spec.name) is not None:
                raise WorkspaceError(f"a retriever named {spec.name!r} already exists")
            self.conn.execute(
                "INSERT INTO retrievers(name, kind, params, hash, created) VALUES (?, ?, ?, ?, ?)",
                (spec.name, spec.kind, canonical_json(dict(spec.params)), spec.hash, now()),
            )
            self._event("retriever", "goldpan", None, None, None, f"add {spec.name}", now())

    def remove_retriever(self, name: str) -> None:
        """Remove a retriever and its cached runs."""
        with self.transaction():
            cur = self.conn.execute("DELETE FROM retrievers WHERE name = ?", (name,))
            if cur.rowcount == 0:
                raise WorkspaceError(f"no retriever named {name!r}")
            self._event("retriever", "goldpan", None, None, None, f"remove {name}", now())

    # -- cached runs -----------------------------------------------------------------

    def run_hashes(self, retriever: str) -> dict[str, tuple[str, int]]:
        """Question id -> (input hash, depth) of every cached ranking of a retriever."""
        rows = self.conn.execute(
            "SELECT question_id, input_hash, depth FROM runs WHERE retriever = ?",
            (retriever,),
        )
        out = {}
        for r in rows:
            row = f"(retriever {decode.show(retriever)}, question {decode.show(r[0])})"
            out[decode.text_column(self.path, "runs", "question_id", r[0])] = (
                decode.text_column(self.path, "runs", "input_hash", r[1]),
                int(decode.number(self.path, "runs", row, "depth", r[2])),
            )
        return out

    def input_hashes(
        self, retrievers: Sequence[str] | None = None, question_ids: Sequence[str] | None = None
    ) -> dict[str, dict[str, str]]:
        """Retriever -> question id -> the input hash of its cached ranking.

        Every cached ranking, or those of ``retrievers`` and ``question_ids`` only (what
        :func:`engine.ranked.not_ranked` compares with the inputs now).
        """
        sql = "SELECT retriever, question_id, input_hash FROM runs WHERE true"
        params: list[str] = []
        for column, values in (("retriever", retrievers), ("question_id", question_ids)):
            if values is not None:
                sql += f" AND {column} IN (SELECT value FROM json_each(?))"
                params.append(json.dumps(list(values)))
        out: dict[str, dict[str, str]] = {}
        for r in self.conn.execute(sql, params):
            name = decode.text_column(self.path, "runs", "retriever", r[0])
            qid = decode.text_column(self.path, "runs", "question_id", r[1])
            out.setdefault(name, {})[qid] = decode.text_column(
                self.path, "runs", "input_hash", r[2]
            )
        return out

    def with_rankings(self, retrievers: Sequence[str]) -> set[str]:
        """The ``retrievers`` with a cached ranking of some question, whatever its inputs."""
        rows = self.conn.execute(
            "SELECT value FROM json_each(?) AS r"
            " WHERE EXISTS (SELECT 1 FROM runs WHERE runs.retriever = r.value)",
            (json.dumps(list(retrievers)),),
        )
        return {str(r[0]) for r in rows}

    def write_runs(self, runs: Iterable[CachedRun]) -> int:
        """Store (or replace) cached rankings."""
        runs = list(runs)
        for r in runs:  # a finite sum has only finite terms
            if not math.isfinite(sum(r.scores)):
                bad = next((x for x in r.scores if not math.isfinite(x)), None)
                if bad is not None:
                    _not_finite(r.retriever, r.question_id, bad)
        with self.transaction():
            numbers = self.doc_numbers.of({d for r in runs for d in r.doc_ids})
            rows = [
                (
                    r.retriever,
                    r.question_id,
                    r.depth,
                    struct.pack(f"<{len(r.doc_ids)}I", *[numbers[d] for d in r.doc_ids]),
                    _pack_scores(r.scores),
                    r.latency_ms,
                    r.input_hash,
                    r.alone_ms,
                )
                for r in runs
            ]
            self.conn.executemany(_WRITE_RUN, rows)
            self._log_ranked({r.question_id for r in runs})
        return len(rows)

    def _log_ranked(self, question_ids: set[str]) -> None:
        """Log that these questions' rankings changed (see :data:`RANKED_EVENT`).

        One event per question for a few (a question written and pooled), one for all
        past :data:`RANKED_ONE_BY_ONE` (a pool: sessions then reload everything anyway).
        """
        stamp = now()
        if len(question_ids) <= RANKED_ONE_BY_ONE:
            for qid in sorted(question_ids):
                self._event(RANKED_EVENT, "pool", qid, None, None, None, stamp)
        elif question_ids:
            self._event(RANKED_EVENT, "pool", None, None, None, f"{len(question_ids)}", stamp)

    def write_batches(self, batches: Sequence[BatchRun]) -> int:
        """Store (or replace) rankings given as arrays (a pool's), in one transaction.

        The documents' numbers are read for the documents ranked only (a pool of one
        question on a large corpus reads a hundred), and no list is built per ranking.
        """
        with self.transaction():
            used = [_ranked(b) for b in batches]
            ranked = {
                b.ranked.doc_ids[i] for b, u in zip(batches, used, strict=True) for i in u.tolist()
            }
            numbers = self.doc_numbers.of(ranked)
            for b, u in zip(batches, used, strict=True):
                self._write_batch(b, u, numbers)
            self._log_ranked({q for b in batches for q in b.question_ids})
        return sum(len(b.question_ids) for b in batches)

    def _write_batch(self, batch: BatchRun, used: Any, numbers: Mapping[str, int]) -> None:
        """One batch's rows (:func:`_run_rows`), in one statement where its ids allow.

        One statement instead of one per ranking: the thousands of steps of a pool's batch
        each gave Python's lock away and waited for it back while the ranking thread
        worked (a batch's write took three times as long). An id or hash holding a NUL,
        which SQLite's JSON reading would cut there, is written row by row.
        """
        ids, hashes = batch.question_ids, batch.input_hashes
        if "\0" in "".join(ids) or "\0" in "".join(hashes):
            self.conn.executemany(_WRITE_RUN, _run_rows([batch], [used], numbers))
            return
        packed_ids, packed_scores = _packed(batch, used, numbers)
        ends = batch.ranked.ends.tolist()
        where = json.dumps(
            [[q, h, a, b] for q, h, a, b in zip(ids, hashes, [0, *ends[:-1]], ends, strict=True)],
            ensure_ascii=False,
        )
        self.conn.execute(
            _WRITE_BATCH,
            (batch.retriever, batch.depth, packed_ids, packed_scores, batch.latency_ms, where),
        )
        if batch.alone_ms:
            self.conn.executemany(
                "UPDATE runs SET alone_ms = ? WHERE retriever = ? AND question_id = ?",
                [(ms, batch.retriever, qid) for qid, ms in batch.alone_ms.items()],
            )

    def write_alone_ms(self, retriever: str, alone: Mapping[str, float]) -> None:
        """Store the times alone (ms) of some of a retriever's stored rankings."""
        with self.transaction():
            self.conn.executemany(
                "UPDATE runs SET alone_ms = ? WHERE retriever = ? AND question_id = ?",
                [(ms, retriever, qid) for qid, ms in alone.items()],
            )

    def runs(
        self, retriever: str, question_ids: Sequence[str] | None = None
    ) -> dict[str, CachedRun]:
        """Question id -> cached ranking, for one retriever (only ``question_ids``' if given)."""
        sql = (
            "SELECT question_id, doc_ids, scores, latency_ms, input_hash, depth, alone_ms "
            "FROM runs WHERE retriever = ?"
        )
        params: tuple[str, ...] = (retriever,)
        if question_ids is not None:
            sql += " AND question_id IN (SELECT value FROM json_each(?))"
            params += (json.dumps(list(question_ids)),)
        rows = self.conn.execute(sql, params).fetchall()
        names = self.doc_numbers.for_rows([r[1] for r in rows])
        out = {}
        for r in rows:
            qid, ids, scores, ms, input_hash, depth = decode.run_row(
                self.path, retriever, r[:6], names
            )
            alone = self._alone_ms(retriever, qid, r[6])
            out[qid] = CachedRun(retriever, qid, ids, scores, ms, input_hash, depth, alone)
        return out

    def _alone_ms(self, retriever: str, question_id: str, value: Any) -> float | None:
        if value is None:
            return None
        row = f"(retriever {decode.show(retriever)}, question {decode.show(question_id)})"
        return decode.duration_ms(self.path, "runs", row, "alone_ms", value)

    def latencies(self) -> dict[str, tuple[list[float], list[float]]]:
        """Per retriever: batch shares and times alone (ms) of its cached rankings.

        The first list has every ranking's share of its batch's time, the second the
        times of the questions ranked alone (see ``runs.alone_ms``).
        """
        out: dict[str, tuple[list[float], list[float]]] = {}
        sound = (float, int)  # the row's name is written out only for a value refused
        top = decode.MAX_MS
        for r in self.conn.execute("SELECT retriever, question_id, latency_ms, alone_ms FROM runs"):
            shares, alone = out.get(r[0]) or out.setdefault(r[0], ([], []))
            share, by_itself = r[2], r[3]
            if (
                type(share) not in sound
                or not 0 <= share <= top
                or (
                    by_itself is not None
                    and (type(by_itself) not in sound or not 0 <= by_itself <= top)
                )
            ):
                row = f"(retriever {decode.show(r[0])}, question {decode.show(r[1])})"
                share = decode.duration_ms(self.path, "runs", row, "latency_ms", share)
                if by_itself is not None:
                    by_itself = decode.duration_ms(self.path, "runs", row, "alone_ms", by_itself)
            shares.append(float(share))
            if by_itself is not None:
                alone.append(float(by_itself))
        return out

    def all_runs(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """Cached rankings (doc ids only) by retriever, then question id."""
        out: dict[str, dict[str, tuple[str, ...]]] = {s.name: {} for s in self.retrievers()}
        version = self.data_version()  # asked first: a commit in between moves it
        rows = self.conn.execute("SELECT retriever, question_id, doc_ids FROM runs").fetchall()
        names = self.doc_numbers.for_rows([r[2] for r in rows])
        for r in rows:
            out.setdefault(r[0], {})[r[1]] = decode.run_doc_ids(self.path, r[0], r[1], r[2], names)
        numbers_now = names is not self.doc_numbers or self.doc_numbers.read_at == version
        if not self._sound and numbers_now and self.data_version() == version:
            # every number named a document as the file held them, no other connection
            # committed meanwhile, this one wrote nothing yet: the soundness gate need not
            # decode them again (a few rankings' numbers are looked up just now)
            self._runs_decoded_at = version
        return out

    def replace_retriever_runs(self, spec: RetrieverSpec, runs: Iterable[CachedRun]) -> int:
        """Add or update a retriever and replace every cached ranking of it, in one step.

        For rankings that come from outside (an imported run file): a known retriever
        keeps its place in the list and loses all its earlier rankings, so a question the
        new rankings lack has none. Returns the number of rankings written.
        """
        rows = list(runs)
        strangers = sorted({r.retriever for r in rows} - {spec.name})
        if strangers:
            raise WorkspaceError(f"rankings of {strangers[0]!r} given for {spec.name!r}")
        with self.transaction():
            cur = self.conn.execute(
                "UPDATE retrievers SET kind = ?, params = ?, hash = ? WHERE name = ?",
                (spec.kind, canonical_json(dict(spec.params)), spec.hash, spec.name),
            )
            if cur.rowcount == 0:
                self.add_retriever(spec)
            else:
                self._event("retriever", "goldpan", None, None, None, f"replace {spec.name}", now())
            self.conn.execute("DELETE FROM runs WHERE retriever = ?", (spec.name,))
            return self.write_runs(rows)

    # -- embeddings ------------------------------------------------------------------

    def write_embeddings(self, model: str, rows: Iterable[tuple[str, str, Sequence[float]]]) -> int:
        """Store (or replace) document vectors: ``(doc id, doc hash, vector)`` rows."""
        packed = []
        for doc_id, doc_hash, vector in rows:
            vec = struct.pack(f"<{len(vector)}f", *vector)
            packed.append((model, doc_id, doc_hash, len(vector), vec))
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO embeddings(model, doc_id, doc_hash, dim, vector) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(model, doc_id) DO UPDATE SET "
                "doc_hash = excluded.doc_hash, dim = excluded.dim, vector = excluded.vector",
                packed,
            )
        return len(packed)

    def embeddings(self, model: str) -> dict[str, tuple[str, bytes]]:
        """Doc id -> (doc hash, float32 little-endian vector bytes), for a model."""
        rows = self.conn.execute(
            "SELECT model, doc_id, doc_hash, dim, vector FROM embeddings WHERE model = ?", (model,)
        )
        found = (decode.embedding(self.path, r) for r in rows)
        return {doc_id: (doc_hash, vector) for doc_id, doc_hash, vector in found}

    # -- BM25 term counts ------------------------------------------------------------

    COUNT_PARTS = ("indptr", "indices", "tf", "doc_len")
    """The packed arrays of a stored term-count record (see :meth:`term_counts`)."""

    def term_counts(self, key: str, corpus_hash: str) -> dict[str, Any] | None:
        """The BM25 term counts stored under ``key`` for the corpus ``corpus_hash``, or None.

        A record: ``n_docs``, ``n_terms``, ``doc_ids`` and ``terms`` (lists of text), and
        the packed arrays of :attr:`COUNT_PARTS` (bytes). Nothing here checks that they
        fit together: the reader must (a workspace is untrusted input). A record that is
        not valid JSON reads as None.
        """
        row = self.conn.execute(
            "SELECT n_docs, n_terms, doc_ids, terms, indptr, indices, tf, doc_len "
            "FROM bm25_counts WHERE key = ? AND corpus_hash = ?",
            (key, corpus_hash),
        ).fetchone()
        if row is None:
            return None
        try:
            doc_ids, terms = json.loads(row[2]), json.loads(row[3])
        except (TypeError, ValueError):
            return None
        record: dict[str, Any] = {
            "n_docs": row[0],
            "n_terms": row[1],
            "doc_ids": doc_ids,
            "terms": terms,
        }
        record.update(zip(self.COUNT_PARTS, row[4:], strict=True))
        return record

    def write_term_counts(self, key: str, corpus_hash: str, record: dict[str, Any]) -> None:
        """Store (or replace) the term counts under ``key``, as :meth:`term_counts` reads them."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO bm25_counts(key, corpus_hash, n_docs, n_terms, doc_ids, terms, "
                "indptr, indices, tf, doc_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET corpus_hash = excluded.corpus_hash, "
                "n_docs = excluded.n_docs, n_terms = excluded.n_terms, "
                "doc_ids = excluded.doc_ids, terms = excluded.terms, "
                "indptr = excluded.indptr, indices = excluded.indices, tf = excluded.tf, "
                "doc_len = excluded.doc_len",
                (
                    key,
                    corpus_hash,
                    int(record["n_docs"]),
                    int(record["n_terms"]),
                    json.dumps(list(record["doc_ids"]), ensure_ascii=False),
                    json.dumps(list(record["terms"]), ensure_ascii=False),
                    *(bytes(record[p]) for p in self.COUNT_PARTS),
                ),
            )
