"""Run retrievers over the workspace's questions and cache their rankings.

A cached ranking is valid while its input hash (corpus, retriever kind and parameters,
question text) is unchanged and it is at least as deep as asked; only stale questions
are run again. Each retriever's new rankings are written in one transaction.

BM25 (a :class:`~engine.retrieve.BatchRanker`) ranks on a worker thread, its rankings kept
as arrays to the end, while the calling thread indexes the next retriever and stores the
previous one: the workspace's connection is only ever used by the caller. In a run of
several batched retrievers, a large batch is ranked by a helper process
(:mod:`engine.retrieve.rank_helper`) on the machine's other core, the worker thread only
waiting for it.

Two times are kept per ranking: its share of its batch's time (``latency_ms``: the pool's
throughput) and, for some questions, its time ranked alone (``alone_ms``: what a user
waits for one query). A retriever that ranks one question at a time has the second for
every question; a batched one (BM25) ranks a seeded sample of :data:`ALONE_SAMPLE` of
the stale questions again one by one, which costs a pool little. A command that ranks a
pool in one call is not run again to be timed: it is timed alone when a pool has one
question (the TUI's), else only its throughput is known.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, overload

from engine.arrays import spans
from engine.errors import BadInput
from engine.names import check_known
from engine.pooling import TopDocs
from engine.ranked import input_hashes
from engine.retrieve import (
    DEFAULT_DEPTH,
    STORED_KINDS,
    BatchRanker,
    PrepareEnv,
    Retriever,
    RetrieverError,
    bases_of,
    build_retriever,
    rank_helper,
)
from engine.retrieve.base import HasWarnings, OutsideRetriever
from engine.retrieve.rank_helper import RankHelper
from engine.trust import TrustStore, is_untrusted_kind, model_of, what_runs
from engine.types import (
    BatchRun,
    CachedRun,
    Doc,
    Question,
    RetrieverSpec,
)
from engine.workspace import Workspace, WorkspaceError

Progress = Callable[[str, int, int], None]
"""progress(retriever name, questions done, questions to do)."""

CANNOT_RUN = (RetrieverError, BadInput)
"""What a retriever that cannot run raises (it is then skipped with ``keep_going``): its
kind's own error, or parameters it refuses. Never a built-in ``ValueError``: a bug in a
retriever is a crash with its log, not a notice. A full disk or a lock held while its
rankings are written is not the retriever's: it stops the pool."""

ALONE_SAMPLE = 20
"""How many of a batched pool's questions are also timed ranked alone."""


def alone_sample(questions: Sequence[Question], n: int = ALONE_SAMPLE) -> list[Question]:
    """The questions of a pool timed alone: the ``n`` first by a hash of their id.

    Seeded by the ids, not drawn: every retriever of a pool times the same questions (a
    fused ranking's time alone adds its bases'), and a pool of the same questions times
    the same ones again.
    """
    if len(questions) <= n:
        return list(questions)

    def key(q: Question) -> str:
        return hashlib.sha256(f"goldpan-alone\0{q.id}".encode()).hexdigest()

    return sorted(questions, key=key)[:n]


@dataclass
class RunReport:
    """What a pool run did, per retriever: questions run and questions still valid."""

    ran: dict[str, int] = field(default_factory=dict)
    cached: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    """Retrievers that could not run (with ``keep_going``), and why."""
    untrusted: dict[str, str] = field(default_factory=dict)
    """Retrievers skipped because this user has not trusted them: name -> what they run or
    send (:func:`engine.trust.what_runs`: a command retriever's command)."""
    untrusted_kinds: dict[str, str] = field(default_factory=dict)
    """The kind of each of :attr:`untrusted` (``engine.trust.not_trusted`` words it)."""
    warnings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """What retrievers asked in this run say every time (TLS certificates not checked,
    questions sent unencrypted): the front end shows them."""
    how: dict[str, str] = field(default_factory=dict)
    """Per retriever brought up to date, whether its rankings were made now or are cached
    and why that is valid (``ranked now (command, no cache key)``, ``cached, inputs
    unchanged``, ``cached, inputs and index identity unchanged``): what a gate says it
    scored."""
    top: dict[str, TopDocs] = field(default_factory=dict)
    """With ``keep_top`` k: per retriever, each question ranked in this call -> its top k
    doc ids (what a report of the pool reads without reading the rankings back)."""

    def cannot_rank(self) -> set[str]:
        """The retrievers this run could not rank with: not trusted here, or failed.

        Their unranked questions hold no other retriever's out of a score
        (:func:`engine.ranked.holding`).
        """
        return set(self.errors) | set(self.untrusted)

    def failed(self) -> dict[str, str]:
        """:attr:`errors` but those of retrievers skipped as not trusted (or reading one).

        What the app says failed: a skipped command is said once, by the trust flow.
        """
        return {n: e for n, e in self.errors.items() if "not trusted" not in e}


class PreparedRetrievers:
    """Indexed retrievers kept between pool runs (the TUI pools one question at a time).

    Everything is dropped when the corpus changes. Safe to share between threads: one
    retriever is indexed at a time.
    """

    def __init__(self) -> None:
        """Start empty."""
        self._lock = threading.Lock()
        self.corpus_hash: str | None = None
        self.shared: dict[Any, Any] = {}
        self._by_spec: dict[str, Retriever] = {}

    def get(
        self,
        spec: RetrieverSpec,
        corpus_hash: str,
        docs: Sequence[Doc],
        env: PrepareEnv | None = None,
    ) -> Retriever:
        """The prepared retriever for ``spec`` over the corpus with ``corpus_hash``."""
        with self._lock:
            if corpus_hash != self.corpus_hash:
                self.corpus_hash = corpus_hash
                self.shared = {}
                self._by_spec = {}
            retriever = self._by_spec.get(spec.hash)
            if retriever is None:
                retriever = build_retriever(spec)
                retriever.prepare(docs, self.shared, env or PrepareEnv())
                self._by_spec[spec.hash] = retriever
            return retriever

    def has(self, spec: RetrieverSpec, corpus_hash: str) -> bool:
        """True when ``spec`` is already indexed for this corpus."""
        return corpus_hash == self.corpus_hash and spec.hash in self._by_spec


def select_retrievers(ws: Workspace, names: Sequence[str] | None) -> list[RetrieverSpec]:
    """The named retrievers (all when ``names`` is empty), or an error naming the unknown."""
    specs = ws.retrievers()
    if not names:
        return specs
    by_name = {s.name: s for s in specs}
    check_known("retriever", names, by_name)
    return [by_name[n] for n in names]


def run_order(
    all_specs: Sequence[RetrieverSpec], chosen: Sequence[RetrieverSpec]
) -> list[RetrieverSpec]:
    """``chosen`` and every retriever they read, bases first (each once).

    Also what ``goldpan check`` asks of a workspace's retrievers (every one chosen).

    Raises:
        WorkspaceError: a retriever reads its own rankings, itself or through others (a
            file edited by hand: ``retriever add`` refuses it), or reads one the
            workspace no longer has; naming the retrievers.
    """
    by_name = {s.name: s for s in all_specs}
    order: list[RetrieverSpec] = []
    visiting: list[str] = []

    def visit(spec: RetrieverSpec) -> None:
        if spec in order:
            return
        if spec.name in visiting:
            cycle = " -> ".join([*visiting[visiting.index(spec.name) :], spec.name])
            raise WorkspaceError(
                f"retriever {spec.name!r} reads its own rankings (a cycle: {cycle})"
            )
        visiting.append(spec.name)
        for base in bases_of(spec):
            if base not in by_name:
                raise WorkspaceError(
                    f"{spec.name} reads {base!r}, which this workspace no longer has"
                )
            visit(by_name[base])
        visiting.pop()
        order.append(spec)

    for spec in chosen:
        visit(spec)
    return order


def refresh_runs(
    ws: Workspace,
    names: Sequence[str] | None = None,
    *,
    depth: int = DEFAULT_DEPTH,
    force: bool = False,
    progress: Progress | None = None,
    question_ids: Sequence[str] | None = None,
    prepared: PreparedRetrievers | None = None,
    keep_going: bool = False,
    trust: TrustStore | None = None,
    keep_top: int = 0,
) -> RunReport:
    """Bring every chosen retriever's cached rankings up to date.

    Retrievers that read others' rankings (rrf, rerank, idboost) have those brought up to
    date first, even when not named; an imported run is never run again.

    Args:
        ws: the workspace (its connection is used from this thread only).
        names: retrievers to run; all when None or empty.
        depth: ranking depth to cache.
        force: run every question again even when its cache is valid.
        progress: called as questions are done (for BM25, from the ranking thread).
        question_ids: only these questions (default: all).
        prepared: indexed retrievers to reuse (and fill) across calls.
        keep_going: when a retriever cannot run, note why in the report and go on with
            the others (those that read it are skipped) instead of raising.
        trust: the user's record of trusted retrievers (default: the one in the user's
            config folder). A retriever of a kind that runs a program or sends questions
            out (:data:`engine.trust.UNTRUSTED_KINDS`), or that loads a model from the hub
            (:data:`engine.trust.MODEL_KINDS`), that this user has not trusted for this
            workspace is never run: it is listed in :attr:`RunReport.untrusted`, and
            the retrievers that read it are skipped.
        keep_top: keep each ranking's top ``keep_top`` doc ids in :attr:`RunReport.top`.

    Raises:
        RetrieverError: a retriever could not run (missing extra, bad command output);
            rankings written before it stay.
        BadInput: a retriever's stored parameters are refused by its kind.
    """
    all_specs = ws.retrievers()
    specs = run_order(all_specs, select_retrievers(ws, names))
    report = RunReport()
    questions = ws.questions()
    if question_ids is not None:
        wanted = set(question_ids)
        questions = [q for q in questions if q.id in wanted]
    if not specs or not questions:
        return report
    if not ws.readonly:
        # the first write's soundness gate reads every page: it runs beside the
        # indexing and ranking instead of after them (same checks, same verdict)
        ws.check_soundness_behind()
    need: dict[str, int] = {}  # how deep each base must be cached for its readers
    batched: set[str] = set()  # retrievers that rank a batch as arrays (BM25)
    for spec in specs:
        try:
            reader = build_retriever(spec) if spec.kind not in STORED_KINDS else None
        except CANNOT_RUN:
            continue  # reported when its turn comes
        if reader is not None:
            for base in reader.bases:
                need[base] = max(need.get(base, depth), reader.base_depth or depth)
            if isinstance(reader, BatchRanker) and not reader.bases:
                batched.add(spec.name)
    counts = _CountsLater(ws)
    corpus_hash = ws.corpus_hash()
    store = trust if trust is not None else TrustStore()
    run = _PoolRun(
        ws,
        questions,
        None if question_ids is None else [q.id for q in questions],
        force,
        corpus_hash,
        PrepareEnv(
            store=ws,
            progress=progress,
            index_store=counts,
            corpus_hash=corpus_hash,
            hub_models=store.hub_models(ws) if any(model_of(s) for s in specs) else frozenset(),
        ),
        prepared if prepared is not None else PreparedRetrievers(),
        report,
        {s.name: max(depth, need.get(s.name, depth)) for s in specs},
        keep_going,
        counts,
        keep_top,
        frozenset(batched),
    )
    for spec in store.untrusted(ws, specs):
        report.untrusted[spec.name] = what_runs(spec)
        report.untrusted_kinds[spec.name] = spec.kind
    collecting = gc.isenabled()
    gc.disable()  # a pool makes hundreds of thousands of short-lived objects, no cycles
    try:
        for spec in specs:
            if spec.name in report.untrusted:
                continue
            if bases_of(spec):
                run.flush()  # its bases' rankings are read from the workspace
            untrusted = [b for b in bases_of(spec) if b in report.untrusted]
            if untrusted:
                report.errors[spec.name] = f"reads {untrusted[0]}, which is not trusted"
                continue
            broken = [b for b in bases_of(spec) if b in report.errors]
            if broken:
                report.errors[spec.name] = f"reads {broken[0]}, which could not run"
                continue
            try:
                run.refresh(spec)
            except CANNOT_RUN as exc:
                if not keep_going:
                    run.flush()  # what ranked before it is kept, as if run one by one
                    raise
                report.errors[spec.name] = str(exc)
        run.flush()
    finally:
        run.close()
        if collecting:
            gc.enable()
    return report


def _how(
    spec: RetrieverSpec, stale: int, total: int, asked: bool, volatile: bool, key_words: str
) -> str:
    """What :attr:`RunReport.how` says of one retriever (``key_words``: its outside key's)."""
    if asked:
        return "ranked now (--refresh)"
    if volatile:
        return f"ranked now ({spec.kind}, no {key_words or 'cache key'})"
    keyed = f" and {key_words}" if key_words else ""
    if stale == 0:
        return f"cached, inputs{keyed} unchanged"
    if stale == total:
        return f"ranked now (inputs{keyed} changed or not ranked yet)"
    return f"ranked now for {stale} of {total} questions (inputs changed), the rest cached"


def _time_sample(
    retriever: BatchRanker, sample: Sequence[Question], depth: int
) -> dict[str, float]:
    """Each question's time (ms) ranked by itself, as one user's query is."""
    alone = {}
    for q in sample:
        t0 = time.perf_counter()
        retriever.rank_batch([q], depth)
        alone[q.id] = (time.perf_counter() - t0) * 1000.0
    return alone


def _with_alone_batch(batch: BatchRun, alone: dict[str, float]) -> BatchRun:
    """``batch`` with the times alone of those of its questions that have one."""
    mine = {i: alone[i] for i in batch.question_ids if i in alone}
    return dataclasses.replace(batch, alone_ms=mine) if mine else batch


def _with_alone(
    run: CachedRun,
    alone: dict[str, float],
    bases: Sequence[str],
    base_runs: dict[str, dict[str, CachedRun]],
) -> CachedRun:
    """``run`` with its time ranked alone, when it and every base's were measured."""
    own = alone.get(run.question_id)
    if own is None:
        return run
    for b in bases:  # a fused or reranked ranking waits for its bases too
        r = base_runs[b].get(run.question_id)
        if r is None or r.alone_ms is None:
            return run
        own += r.alone_ms
    return dataclasses.replace(run, alone_ms=own)


def _keep_top(top: TopDocs, batches: Sequence[BatchRun], k: int) -> None:
    """Each question's top ``k`` of ``batches``, into ``top``.

    Kept as the rankings' positions in the corpus's ids (numpy picks the top ``k`` of
    each): no doc id string is made until the report reads one.
    """
    import numpy as np

    for b in batches:
        ends = b.ranked.ends
        starts = np.concatenate((np.zeros(1, dtype=ends.dtype), ends[:-1]))
        counts = np.minimum(ends - starts, k)
        cols = b.ranked.cols[spans(starts, counts)]
        top.add_ranked(b.question_ids, b.ranked.doc_ids, cols, np.cumsum(counts))


class _CountsLater:
    """The workspace as BM25's index store, holding new term counts back.

    They are stored with the next rankings, in their transaction (one commit where there
    were two).

    Counts still held are read back from here, so a retriever prepared after another
    finds them as if they were stored.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.readonly = ws.readonly
        self.held: dict[str, tuple[str, dict[str, Any]]] = {}

    def term_counts(self, key: str, corpus_hash: str) -> dict[str, Any] | None:
        """The record held or stored under ``key`` for this corpus, or None."""
        held = self.held.get(key)
        if held is not None and held[0] == corpus_hash:
            return held[1]
        return self.ws.term_counts(key, corpus_hash)

    def write_term_counts(self, key: str, corpus_hash: str, record: dict[str, Any]) -> None:
        """Hold a record until :meth:`write_held`."""
        self.held[key] = (corpus_hash, record)

    def write_held(self) -> None:
        """Store every record held (inside the caller's transaction)."""
        for key, (corpus_hash, record) in self.held.items():
            self.ws.write_term_counts(key, corpus_hash, record)
        self.held.clear()


class _LazyDocs(Sequence[Doc]):
    """The workspace's documents, read from it the first time they are looked at."""

    def __init__(self, ws: Workspace) -> None:
        self._ws = ws
        self._docs: list[Doc] | None = None

    def _all(self) -> list[Doc]:
        if self._docs is None:
            if not self._ws.readonly:
                # indexing the corpus ends in a write, whose soundness gate reads every
                # row too: it runs first, so the two never hold a large document at once
                # (once per connection: after an import in this process it is done)
                self._ws.ensure_sound()
            self._docs = self._ws.docs()
        return self._docs

    def __len__(self) -> int:
        return len(self._all())

    @overload
    def __getitem__(self, i: int) -> Doc: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Doc]: ...

    def __getitem__(self, i: int | slice) -> Doc | Sequence[Doc]:
        return self._all()[i]

    def __iter__(self) -> Iterator[Doc]:
        return iter(self._all())


@dataclass
class _PoolRun:
    """One :func:`refresh_runs` call's shared state."""

    ws: Workspace
    questions: Sequence[Question]
    question_ids: Sequence[str] | None
    """The questions' ids when they are a subset (the TUI pools one question at a time)."""
    force: bool
    corpus_hash: str
    env: PrepareEnv
    prepared: PreparedRetrievers
    report: RunReport
    depths: dict[str, int]
    """Per retriever, how deep to cache (deeper when a reranker reads it)."""
    keep_going: bool
    counts: _CountsLater
    """BM25's term counts, written with the next rankings."""
    keep_top: int = 0
    """How many of each new ranking's doc ids to keep in the report (0: none)."""
    batched: frozenset[str] = frozenset()
    """The retrievers that rank on :attr:`_ranker` (:class:`BatchRanker` without bases)."""
    _docs: _LazyDocs | None = None
    _helper: RankHelper | None = None
    """The process that ranks large batches (:mod:`engine.retrieve.rank_helper`), started
    by :meth:`helper` for the first batched retriever with a large batch."""
    _ranker: ThreadPoolExecutor | None = None
    _pending: list[tuple[str, float, Future[list[BatchRun]]]] = field(default_factory=list)
    """Retrievers ranking on :attr:`_ranker` (name, start time, their rankings), in order."""
    _to_time: dict[str, tuple[BatchRanker, list[Question], int]] = field(default_factory=dict)
    """Batched retrievers whose sample is to be timed alone when they are stored."""
    _samples: dict[tuple[str, ...], list[Question]] = field(default_factory=dict)
    """:meth:`sample`'s draws, by the ids of the questions drawn from."""

    def sample(self, stale: Sequence[Question]) -> list[Question]:
        """:func:`alone_sample` of ``stale``, drawn once per set of questions in this pool.

        Every retriever of a whole pool has the same questions: each is hashed once.
        """
        key = tuple(q.id for q in stale)
        found = self._samples.get(key)
        if found is None:
            found = self._samples[key] = alone_sample(stale)
        return found

    def docs(self) -> Sequence[Doc]:
        """The corpus, read once (on first use) for every retriever that must index it.

        A retriever whose index is stored (BM25's term counts) never reads it.
        """
        if self._docs is None:
            self._docs = _LazyDocs(self.ws)
        return self._docs

    def refresh(self, spec: RetrieverSpec) -> None:
        """Bring one retriever's cached rankings up to date."""
        ws, questions, report = self.ws, self.questions, self.report
        corpus_hash, env, prepared = self.corpus_hash, self.env, self.prepared
        progress = env.progress
        started = time.perf_counter()
        known = ws.run_hashes(spec.name)
        if spec.kind in STORED_KINDS:  # an imported run: what it has is all there is
            report.cached[spec.name] = sum(q.id in known for q in questions)
            report.ran[spec.name] = 0
            report.how[spec.name] = "imported run (never run)"
            return
        spec_depth = self.depths[spec.name]
        bases = bases_of(spec)
        base_runs = {b: ws.runs(b, self.question_ids) for b in bases}
        # what a cached ranking depends on (engine.ranked.input_hashes, the same hash
        # that says which questions are not ranked yet); for the team's own code (a
        # command) or engine (a URL), also what it says its output depends on (a
        # declared cache key, the index's identity), else nothing can vouch for a
        # cache: a one-off hash makes every ranking (and its readers') new
        force, volatile, key_words = self.force, "", ""
        if is_untrusted_kind(spec.kind):
            outside = build_retriever(spec)
            key_words = "cache key"
            key = None
            if isinstance(outside, HasWarnings) and outside.warnings:
                report.warnings[spec.name] = outside.warnings
            if isinstance(outside, OutsideRetriever):
                key_words = outside.key_words
                key = outside.cache_key()
            if key is None:
                force, volatile = True, f"volatile {uuid.uuid4()}"
            else:
                volatile = f"cache key {key}"
        base_hashes = {b: {q: r.input_hash for q, r in r_b.items()} for b, r_b in base_runs.items()}
        hashes = input_hashes(corpus_hash, spec, questions, base_hashes, volatile)
        stale = [
            q
            for q in questions
            if force or known.get(q.id, ("", 0))[0] != hashes[q.id] or known[q.id][1] < spec_depth
        ]
        report.cached[spec.name] = len(questions) - len(stale)
        report.ran[spec.name] = len(stale)
        report.how[spec.name] = _how(
            spec, len(stale), len(questions), self.force, force and not self.force, key_words
        )
        if not stale:
            if progress:
                progress(spec.name, len(questions), len(questions))
            return
        if progress:
            progress(spec.name, 0, len(stale))
        helper = self.helper(len(stale)) if spec.name in self.batched else None
        docs = [] if prepared.has(spec, corpus_hash) else self.docs()
        retriever = prepared.get(spec, corpus_hash, docs, env)
        if isinstance(retriever, BatchRanker) and not bases:
            # ranked on a worker thread while this thread stores the retriever before it
            # and indexes the next one (numpy and SQLite work without the GIL)
            if self._ranker is None:
                # with the helper, a second thread makes the next retriever's questions
                # ready while the helper ranks the one before
                threads = 1 if helper is None else 2
                self._ranker = ThreadPoolExecutor(threads, thread_name_prefix="goldpan-rank")
            ranking = self._ranker.submit(
                self._rank_batches, spec.name, retriever, stale, spec_depth, hashes, helper
            )
            self._pending.append((spec.name, started, ranking))
            if len(stale) > 1 and retriever.batch_size > 1:
                self._to_time[spec.name] = (retriever, self.sample(stale), spec_depth)
            self.flush(waiting=False)
            return
        results: list[CachedRun] = []
        chunk = max(1, retriever.batch_size)
        step = max(1, len(stale) // 100)
        alone: dict[str, float] = {}  # each question's own time ranked by itself
        for start in range(0, len(stale), chunk):
            batch = stale[start : start + chunk]
            base_rankings = [
                {
                    b: (list(r.doc_ids), list(r.scores))
                    for b in bases
                    if (r := base_runs[b].get(q.id)) is not None
                }
                for q in batch
            ]
            t0 = time.perf_counter()
            rankings = retriever.rank(batch, spec_depth, base_rankings)
            ms = (time.perf_counter() - t0) * 1000.0 / len(batch)
            if len(batch) == 1:
                alone[batch[0].id] = ms
            for q, (ids, scores) in zip(batch, rankings, strict=True):
                # a fused or reranked ranking costs its bases' time too
                total_ms = ms + sum(
                    r.latency_ms for b in bases if (r := base_runs[b].get(q.id)) is not None
                )
                results.append(
                    CachedRun(
                        spec.name,
                        q.id,
                        tuple(ids),
                        tuple(scores),
                        total_ms,
                        hashes[q.id],
                        spec_depth,
                    )
                )
                done = len(results)
                if progress and (done % step == 0 or done == len(stale)):
                    progress(spec.name, done, len(stale))
        # ranked several at a time: time a sample again, one by one, in this process (a
        # command is the team's program, an engine the team's server: neither is asked
        # again only to be timed)
        if chunk > 1 and len(stale) > 1 and not is_untrusted_kind(spec.kind):
            for q in self.sample(stale):
                base_q = {
                    b: (list(r.doc_ids), list(r.scores))
                    for b in bases
                    if (r := base_runs[b].get(q.id)) is not None
                }
                t0 = time.perf_counter()
                retriever.rank([q], spec_depth, [base_q])
                alone[q.id] = (time.perf_counter() - t0) * 1000.0
        results = [_with_alone(r, alone, bases, base_runs) for r in results]
        if self.keep_top:
            k = self.keep_top
            top = report.top.setdefault(spec.name, TopDocs())
            for r in results:
                top.add(r.question_id, r.doc_ids[:k])
        with ws.transaction():
            self.counts.write_held()
            ws.write_runs(results)
        report.seconds[spec.name] = time.perf_counter() - started

    def _rank_batches(
        self,
        name: str,
        retriever: BatchRanker,
        stale: Sequence[Question],
        depth: int,
        hashes: dict[str, str],
        helper: RankHelper | None,
    ) -> list[BatchRun]:
        """Rank ``stale`` in batches kept as arrays (a large batch by ``helper``).

        Runs on the ranking thread: no SQL here.
        """
        progress = self.env.progress
        batches: list[BatchRun] = []
        chunk = max(1, retriever.batch_size)
        done = 0
        alone: dict[str, float] = {}
        for start in range(0, len(stale), chunk):
            batch = stale[start : start + chunk]
            t0 = time.perf_counter()
            ranked = retriever.rank_batch(batch, depth, helper)
            ms = (time.perf_counter() - t0) * 1000.0 / len(batch)
            if len(batch) == 1:
                alone[batch[0].id] = ms
            ids = [q.id for q in batch]
            batches.append(BatchRun(name, ids, [hashes[i] for i in ids], ms, depth, ranked))
            done += len(batch)
            if progress:
                progress(name, done, len(stale))
        return [_with_alone_batch(b, alone) for b in batches] if alone else batches

    def _time_alone(self, name: str, batches: list[BatchRun]) -> list[BatchRun]:
        """``batches`` with the times alone of their retriever's sample, timed now.

        Called on this thread while nothing else ranks or indexes: a question timed while
        the ranking thread works, or while this one tokenizes, would wait for the
        processor as no user's query does.
        """
        todo = self._to_time.pop(name, None)
        if todo is None:
            return batches
        alone = _time_sample(*todo)
        return [_with_alone_batch(b, alone) for b in batches]

    def flush(self, *, waiting: bool = True) -> None:
        """Store the rankings of the retrievers sent to the ranking thread.

        Each retriever's rankings are written in one transaction, on this thread (the
        workspace's connection never leaves it), in the order the retrievers ran. Without
        ``waiting``, only those already ranked are stored (this thread goes on indexing
        the next retriever meanwhile). One that failed raises here, or is noted in the
        report with ``keep_going``.
        """
        while self._pending and (waiting or self._pending[0][2].done()):
            name, started, ranking = self._pending.pop(0)
            try:
                batches = ranking.result()
            except CANNOT_RUN as exc:
                if not self.keep_going:
                    self._pending.clear()
                    self._write_held()  # the counts are sound; only the ranking failed
                    raise
                self._to_time.pop(name, None)
                self.report.errors[name] = str(exc)
                continue
            earlier: dict[str, dict[str, float]] = {}
            if not self._pending:  # the ranking thread is idle: time the samples now
                batches = self._time_alone(name, batches)
                earlier = self._timed_alone()  # stored in this write: one commit, not two
            if self.keep_top:
                _keep_top(self.report.top.setdefault(name, TopDocs()), batches, self.keep_top)
            with self.ws.transaction():
                self.counts.write_held()
                self.ws.write_batches(batches)
                for other, alone in earlier.items():
                    self.ws.write_alone_ms(other, alone)
            self.report.seconds[name] = time.perf_counter() - started
        if not self._pending and self._to_time:
            self._write_alone()  # samples of retrievers stored while another was ranking
        if waiting:
            self._write_held()

    def _timed_alone(self) -> dict[str, dict[str, float]]:
        """Time the samples still waiting (of rankings stored already), by retriever."""
        timed = {}
        for name in list(self._to_time):
            retriever, sample, depth = self._to_time.pop(name)
            timed[name] = _time_sample(retriever, sample, depth)
        return timed

    def _write_alone(self) -> None:
        """Time the samples still waiting and store them onto their stored rankings."""
        timed = self._timed_alone()
        with self.ws.transaction():
            for name, alone in timed.items():
                self.ws.write_alone_ms(name, alone)

    def _write_held(self) -> None:
        if self.counts.held:
            with self.ws.transaction():
                self.counts.write_held()

    def helper(self, questions: int) -> RankHelper | None:
        """The ranking helper, started now if a batched pool of ``questions`` is worth it.

        It is where this thread has other retrievers to index or store while one ranks
        (two batched retrievers or more in the run: with one, nothing would run beside
        its ranking, and the helper only costs its start), and the batch is large. It
        loads while this thread counts the terms. Once started, it is handed to every
        batched retriever of the run: each batch decides by its own size
        (:meth:`~engine.retrieve.bm25.BM25Index.rank_flat`).
        """
        if self._helper is None:
            if len(self.batched) < 2:
                return None
            if questions * self.ws.doc_count() < rank_helper.HELPER_CELLS:
                return None
            self._helper = RankHelper()
            self._helper.start()
        return self._helper

    def close(self) -> None:
        """Stop the ranking thread (after the ranking it is doing, if any), and the helper."""
        if self._ranker is not None:
            self._ranker.shutdown(wait=True, cancel_futures=True)
            self._ranker = None
        if self._helper is not None:
            self._helper.close()
