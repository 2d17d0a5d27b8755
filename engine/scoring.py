"""Scores of every retriever on a workspace's resolved gold.

Only questions whose status is ``labeled`` are scored with ranking metrics; the others
are counted (no answer, disputed, needing re-check, unlabeled). Stopped questions are
counted too (``stopped``, and their candidates ``not_judged_stopped``,
:mod:`engine.stopping`): a candidate left not judged by a stop scores as any unjudged
document does, and the counts say how many there are. Rankings come from the
cache: scoring never re-runs a retriever unless its cache is stale (see
:mod:`engine.retrieve.runner`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.counters import workspace_stopped
from engine.gold import COUNT_KEYS as COUNT_KEYS  # its home is engine.gold
from engine.gold import Gold, Status, count_golds
from engine.gold import workspace_golds as workspace_golds  # its home before engine.gold
from engine.metrics import (
    FloatArray,
    IntArray,
    Judged,
    first_relevant_rank,
    judge,
    mean,
    parse_metric,
    per_question,
)
from engine.types import CachedRun
from engine.workspace import Workspace

DEFAULT_KS = (1, 3, 5, 10)

LATENCY_HEADERS = ("ms p50", "ms p95", "q/s")
"""The latency columns of ``goldpan score`` and the review screen (:meth:`Latency.cells`)."""


@dataclass(frozen=True)
class Latency:
    """How fast a retriever answers: one question as a user waits, and a pool's throughput.

    The percentiles are of the questions timed ranked alone (``runs.alone_ms``: every
    question of a retriever that ranks one at a time, a seeded sample of a batched pool),
    never of a batch's time shared out, which is the same for every question of a batch.
    NaN when no question was timed alone.
    """

    p50: float
    """Median ms of one question ranked alone."""
    p95: float
    """95th percentile (linear) ms of one question ranked alone."""
    max: float
    """The slowest question ranked alone (ms)."""
    timed: int
    """How many questions were timed alone."""
    qps: float
    """Questions per second as the rankings were made (batched: the pool's throughput)."""

    @classmethod
    def of(cls, shares: Sequence[float], alone: Sequence[float]) -> Latency:
        """From every ranking's share of its batch's time and the times alone (ms)."""
        nan = math.nan
        total = math.fsum(shares)
        qps = len(shares) * 1000.0 / total if total > 0 else nan
        if not alone:
            return cls(nan, nan, nan, 0, qps)
        return cls(
            float(statistics.median(alone)),
            float(np.percentile(alone, 95)),
            float(max(alone)),
            len(alone),
            qps,
        )

    def cells(self) -> tuple[float, float, float]:
        """The values under :data:`LATENCY_HEADERS`."""
        return (self.p50, self.p95, self.qps)

    def as_dict(self) -> dict[str, float | int | None]:
        """The ``--json`` keys; None where nothing was measured (NaN is not JSON)."""
        return {
            "ms_p50": _json_number(self.p50),
            "ms_p95": _json_number(self.p95),
            "ms_max": _json_number(self.max),
            "timed_alone": self.timed,
            "questions_per_s": _json_number(self.qps),
        }


def metric_names(ks: Sequence[int] = DEFAULT_KS) -> list[str]:
    """The metrics ``goldpan score`` reports: hit@k, mrr, recall@k, ndcg@10."""
    names = [f"hit@{k}" for k in ks] + ["mrr"] + [f"recall@{k}" for k in ks] + ["ndcg@10"]
    for n in names:
        parse_metric(n)
    return names


@dataclass
class RetrieverScores:
    """One retriever's scores over the scored questions."""

    name: str
    means: dict[str, float]
    per_question: dict[str, FloatArray]
    first_gold_rank: IntArray
    """Rank of the first gold document per scored question (0 = not retrieved)."""
    latency: Latency
    """Over every cached ranking of this retriever (not only the scored questions')."""
    missing: int
    """Scored questions with no cached ranking (counted as misses)."""


@dataclass
class Scoreboard:
    """Everything ``goldpan score`` prints."""

    counts: dict[str, int]
    question_ids: list[str]
    """The scored questions, in code-point order (rows of the per-question arrays)."""
    retrievers: dict[str, RetrieverScores] = field(default_factory=dict)
    golds: dict[str, Gold] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """The ``--json`` shape: question counts and each retriever's means."""
        return {
            "questions": dict(self.counts),
            "retrievers": {
                name: {
                    **rs.means,
                    **rs.latency.as_dict(),
                }
                for name, rs in self.retrievers.items()
            },
        }


def score_workspace(
    ws: Workspace,
    *,
    metrics: Sequence[str] | None = None,
    retrievers: Sequence[str] | None = None,
    tag: str | None = None,
    given: Mapping[str, Mapping[str, CachedRun]] | None = None,
) -> Scoreboard:
    """Score the chosen retrievers (all by default) from their cached rankings.

    ``given``: rankings that are not in the workspace (``score --run``), per retriever name
    and question. When given, only they are scored, with the workspace's retrievers named
    in ``retrievers``; a given name that the workspace also has replaces its rankings.
    """
    # Imported here: the retrievers (numpy) are not needed by workspace_golds' callers.
    from engine.retrieve.runner import select_retrievers

    names = list(metrics) if metrics else metric_names()
    parsed = [parse_metric(m) for m in names]
    golds = workspace_golds(ws)
    if tag is not None:
        tagged = {q.id for q in ws.questions() if tag in q.tags}
        golds = {q: g for q, g in golds.items() if q in tagged}
    counts = count_golds(golds.values())
    stopped = workspace_stopped(ws, list(golds))
    counts["stopped"] = len(stopped)
    counts["not_judged_stopped"] = sum(stopped.values())
    scored = sorted(q for q, g in golds.items() if g.status is Status.LABELED)
    board = Scoreboard(counts, scored, golds=golds)
    # imported here: the retriever modules (numpy, tokenizers) are not needed to score

    if given:
        stored = [n for n in retrievers or () if n not in given]
        chosen = [s.name for s in select_retrievers(ws, stored)] if stored else []
        chosen += [n for n in given if n not in chosen]
    else:
        chosen = [s.name for s in select_retrievers(ws, retrievers)]
    for name in chosen:
        cached = dict(given[name]) if given and name in given else ws.runs(name)
        rankings = [list(cached[q].doc_ids) if q in cached else [] for q in scored]
        j: Judged = judge(rankings, [golds[q].gold for q in scored])
        values = {m.name: per_question(j, m) for m in parsed}
        timing = Latency.of(
            [r.latency_ms for r in cached.values()],
            [r.alone_ms for r in cached.values() if r.alone_ms is not None],
        )
        board.retrievers[name] = RetrieverScores(
            name=name,
            means={name: mean(v) for name, v in values.items()},
            per_question=values,
            first_gold_rank=first_relevant_rank(j),
            latency=timing,
            missing=sum(1 for q in scored if q not in cached),
        )
    return board


def _json_number(v: float) -> float | None:
    """A JSON value: None for NaN (nothing measured)."""
    return None if math.isnan(v) else v


def latency(ws: Workspace) -> dict[str, Latency]:
    """Per retriever with cached rankings: its :class:`Latency`."""
    return latency_of(ws.latencies())


def latency_of(
    timings: Mapping[str, tuple[Sequence[float], Sequence[float]]],
) -> dict[str, Latency]:
    """:func:`latency` from timings already read (:meth:`Workspace.latencies`)."""
    return {name: Latency.of(*t) for name, t in timings.items()}


def paired_values(
    ws: Workspace, a: str, b: str, metric: str, tag: str | None = None
) -> tuple[str, FloatArray, FloatArray]:
    """Retrievers A and B's per-question values of one metric, on the same scored questions.

    Returns the metric's canonical name and the two arrays (compare and power read these).
    """
    from engine.metrics import parse_metric

    name = parse_metric(metric).name
    board = score_workspace(ws, metrics=[name], retrievers=[a, b], tag=tag)
    return (
        name,
        board.retrievers[a].per_question[name],
        board.retrievers[b].per_question[name],
    )
