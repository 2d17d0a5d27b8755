"""Run retrievers over the workspace's questions and cache their rankings.

A cached ranking is valid while its input hash (corpus, retriever kind and parameters,
question text) is unchanged and it is at least as deep as asked; only stale questions
are run again. Each retriever's new rankings are written in one transaction.

BM25 (a :class:`~engine.retrieve.BatchRanker`) ranks on a worker thread, its rankings kept
as arrays to the end, while the calling thread indexes the next retriever and stores the
previous one: the workspace's connection is only ever used by the caller
(:mod:`engine.retrieve.batched`). Every other retriever is ranked here, on the caller's
thread.

Two times are kept per ranking: its share of its batch's time (``latency_ms``: the pool's
throughput) and, for some questions, its time ranked alone (``alone_ms``: what a user
waits for one query). A retriever that ranks one question at a time has the second for
every question; a batched one (BM25) ranks a seeded sample of :data:`ALONE_SAMPLE` of
the stale questions again one by one, which costs a pool little. A command that ranks a
pool in one call is not run again to be timed: it is timed alone when a pool has one
question (the TUI's), else only its throughput is known (:mod:`engine.retrieve.timing`).

The report (:class:`RunReport`, :data:`CANNOT_RUN`, :data:`Progress`) is defined in
:mod:`engine.retrieve.report`, and the times alone in :mod:`engine.retrieve.timing`; all
are exported from here, where callers import them.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from engine import gc_policy
from engine.names import check_known
from engine.pooling import TopDocs
from engine.ranked import input_hashes
from engine.retrieve import (
    DEFAULT_DEPTH,
    STORED_KINDS,
    BatchRanker,
    PrepareEnv,
    Retriever,
    bases_of,
    build_retriever,
)
from engine.retrieve.base import HasWarnings, OutsideRetriever
from engine.retrieve.batched import BatchedRanking, CountsLater
from engine.retrieve.report import CANNOT_RUN, Progress, RunReport
from engine.retrieve.timing import ALONE_SAMPLE, alone_sample, with_alone
from engine.trust import TrustStore, is_untrusted_kind, model_of, what_runs
from engine.types import CachedRun, Doc, Question, RetrieverSpec
from engine.workspace import Workspace, WorkspaceError

__all__ = [
    "ALONE_SAMPLE",
    "CANNOT_RUN",
    "PreparedRetrievers",
    "Progress",
    "RunReport",
    "alone_sample",
    "refresh_runs",
    "run_order",
    "select_retrievers",
]


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
    for spec in specs:
        try:
            reader = build_retriever(spec) if spec.kind not in STORED_KINDS else None
        except CANNOT_RUN:
            continue  # reported when its turn comes
        if reader is not None:
            for base in reader.bases:
                need[base] = max(need.get(base, depth), reader.base_depth or depth)
    counts = CountsLater(ws)
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
    )
    for spec in store.untrusted(ws, specs):
        report.untrusted[spec.name] = what_runs(spec)
        report.untrusted_kinds[spec.name] = spec.kind
    collecting = gc_policy.pause()  # a pool is a job that ends
    try:
        for spec in specs:
            if spec.name in report.untrusted:
                continue
            if bases_of(spec):
                run.batched.flush()  # its bases' rankings are read from the workspace
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
                    run.batched.flush()  # what ranked before it is kept, as if run one by one
                    raise
                report.errors[spec.name] = str(exc)
        run.batched.flush()
    finally:
        run.batched.close()
        gc_policy.resume(collecting)
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
    counts: CountsLater
    """BM25's term counts, written with the next rankings."""
    keep_top: int = 0
    """How many of each new ranking's doc ids to keep in the report (0: none)."""
    _docs: _LazyDocs | None = None
    batched: BatchedRanking = field(init=False)
    """The ranking thread of the batched retrievers (:mod:`engine.retrieve.batched`)."""
    _samples: dict[tuple[str, ...], list[Question]] = field(default_factory=dict)
    """:meth:`sample`'s draws, by the ids of the questions drawn from."""

    def __post_init__(self) -> None:
        """Start the batched path's state (its thread starts with its first retriever)."""
        self.batched = BatchedRanking(
            self.ws, self.report, self.keep_going, self.counts, self.env.progress, self.keep_top
        )

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
        docs = [] if prepared.has(spec, corpus_hash) else self.docs()
        retriever = prepared.get(spec, corpus_hash, docs, env)
        if isinstance(retriever, BatchRanker) and not bases:
            # ranked on a worker thread while this thread stores the retriever before it
            # and indexes the next one (numpy and SQLite work without the GIL)
            timed = len(stale) > 1 and retriever.batch_size > 1
            sample = self.sample(stale) if timed else None
            self.batched.send(spec.name, started, retriever, stale, spec_depth, hashes, sample)
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
        results = [with_alone(r, alone, bases, base_runs) for r in results]
        if self.keep_top:
            k = self.keep_top
            top = report.top.setdefault(spec.name, TopDocs())
            for r in results:
                top.add(r.question_id, r.doc_ids[:k])
        with ws.transaction():
            self.counts.write_held()
            ws.write_runs(results)
        report.seconds[spec.name] = time.perf_counter() - started
