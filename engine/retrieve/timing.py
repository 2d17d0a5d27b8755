"""How long a ranking takes when its question is ranked alone (what a user waits for).

A pool keeps two times per ranking: its share of its batch's time (``latency_ms``: the
pool's throughput) and, for some questions, its time ranked alone (``alone_ms``). A
batched retriever (BM25) ranks a seeded sample of :data:`ALONE_SAMPLE` of the stale
questions again one by one (:func:`alone_sample`, :func:`time_sample`); the functions here
draw that sample, time it, and put the times onto the rankings
(:mod:`engine.retrieve.runner` says when).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Sequence

from engine.retrieve import BatchRanker
from engine.types import BatchRun, CachedRun, Question

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


def time_sample(retriever: BatchRanker, sample: Sequence[Question], depth: int) -> dict[str, float]:
    """Each question's time (ms) ranked by itself, as one user's query is."""
    alone = {}
    for q in sample:
        t0 = time.perf_counter()
        retriever.rank_batch([q], depth)
        alone[q.id] = (time.perf_counter() - t0) * 1000.0
    return alone


def with_alone_batch(batch: BatchRun, alone: dict[str, float]) -> BatchRun:
    """``batch`` with the times alone of those of its questions that have one."""
    mine = {i: alone[i] for i in batch.question_ids if i in alone}
    return dataclasses.replace(batch, alone_ms=mine) if mine else batch


def with_alone(
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
