"""The batched path of a pool: rankings made on a worker thread and kept as arrays.

A :class:`~engine.retrieve.BatchRanker` (BM25) that reads no other retriever's rankings
ranks on one worker thread, its rankings kept as arrays to the end, while the calling
thread indexes the next retriever and stores the previous one: the workspace's connection
is only ever used by the caller (:class:`BatchedRanking`). BM25's new term counts are held
back meanwhile and stored with the next rankings (:class:`CountsLater`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from engine.arrays import spans
from engine.pooling import TopDocs
from engine.retrieve import BatchRanker
from engine.retrieve.report import CANNOT_RUN, Progress, RunReport
from engine.retrieve.timing import time_sample, with_alone_batch
from engine.types import BatchRun, Question
from engine.workspace import Workspace


def keep_top_of(top: TopDocs, batches: Sequence[BatchRun], k: int) -> None:
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


class CountsLater:
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


@dataclass
class BatchedRanking:
    """One pool's ranking thread: the batched retrievers sent to it and their samples."""

    ws: Workspace
    report: RunReport
    keep_going: bool
    counts: CountsLater
    """BM25's term counts, written with the next rankings."""
    progress: Progress | None = None
    keep_top: int = 0
    """How many of each new ranking's doc ids to keep in the report (0: none)."""
    _ranker: ThreadPoolExecutor | None = None
    _pending: list[tuple[str, float, Future[list[BatchRun]]]] = field(default_factory=list)
    """Retrievers ranking on :attr:`_ranker` (name, start time, their rankings), in order."""
    _to_time: dict[str, tuple[BatchRanker, list[Question], int]] = field(default_factory=dict)
    """Batched retrievers whose sample is to be timed alone when they are stored."""

    def send(
        self,
        name: str,
        started: float,
        retriever: BatchRanker,
        stale: Sequence[Question],
        depth: int,
        hashes: dict[str, str],
        sample: list[Question] | None,
    ) -> None:
        """Rank ``stale`` on the ranking thread; store what is ranked already meanwhile.

        ``sample``: the questions to time alone once the rankings are stored (None: none).
        """
        if self._ranker is None:
            self._ranker = ThreadPoolExecutor(1, thread_name_prefix="goldpan-rank")
        ranking = self._ranker.submit(self._rank_batches, name, retriever, stale, depth, hashes)
        self._pending.append((name, started, ranking))
        if sample is not None:
            self._to_time[name] = (retriever, sample, depth)
        self.flush(waiting=False)

    def _rank_batches(
        self,
        name: str,
        retriever: BatchRanker,
        stale: Sequence[Question],
        depth: int,
        hashes: dict[str, str],
    ) -> list[BatchRun]:
        """Rank ``stale`` in batches kept as arrays.

        Runs on the ranking thread: no SQL here.
        """
        progress = self.progress
        batches: list[BatchRun] = []
        chunk = max(1, retriever.batch_size)
        done = 0
        alone: dict[str, float] = {}
        for start in range(0, len(stale), chunk):
            batch = stale[start : start + chunk]
            t0 = time.perf_counter()
            ranked = retriever.rank_batch(batch, depth)
            ms = (time.perf_counter() - t0) * 1000.0 / len(batch)
            if len(batch) == 1:
                alone[batch[0].id] = ms
            ids = [q.id for q in batch]
            batches.append(BatchRun(name, ids, [hashes[i] for i in ids], ms, depth, ranked))
            done += len(batch)
            if progress:
                progress(name, done, len(stale))
        return [with_alone_batch(b, alone) for b in batches] if alone else batches

    def _time_alone(self, name: str, batches: list[BatchRun]) -> list[BatchRun]:
        """``batches`` with the times alone of their retriever's sample, timed now.

        Called on this thread while nothing else ranks or indexes: a question timed while
        the ranking thread works, or while this one tokenizes, would wait for the
        processor as no user's query does.
        """
        todo = self._to_time.pop(name, None)
        if todo is None:
            return batches
        alone = time_sample(*todo)
        return [with_alone_batch(b, alone) for b in batches]

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
                keep_top_of(self.report.top.setdefault(name, TopDocs()), batches, self.keep_top)
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
            timed[name] = time_sample(retriever, sample, depth)
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

    def close(self) -> None:
        """Stop the ranking thread (after the ranking it is doing, if any)."""
        if self._ranker is not None:
            self._ranker.shutdown(wait=True, cancel_futures=True)
            self._ranker = None
