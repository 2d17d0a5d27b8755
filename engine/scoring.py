"""Scores of every retriever on a workspace's resolved gold.

Only questions whose status is ``labeled`` and that no retriever of the score will rank
soon (:func:`scored_set`, :mod:`engine.ranked`) are scored with ranking metrics; the
others are counted (not ranked yet, no answer, disputed, needing re-check, unlabeled), and
so are stopped questions (``stopped``, their candidates ``not_judged_stopped``,
:mod:`engine.judging.stopping`: such a candidate scores as any unjudged document does). A
retriever that cannot rank now and lacks a ranking of some scored question has no means
(:attr:`RetrieverScores.means` is None). Rankings come from the cache: scoring never runs
a retriever (``goldpan score`` pools first, see :mod:`engine.retrieve.runner`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.counters import workspace_stopped
from engine.errors import Refused
from engine.gold import COUNT_KEYS as COUNT_KEYS  # its home is engine.gold
from engine.gold import Gold, count_golds, is_scored, scored_questions
from engine.gold import workspace_golds as workspace_golds  # its home before engine.gold
from engine.metrics import (
    FloatArray,
    IntArray,
    Judged,
    first_relevant_rank,
    judge,
    judged_at_k,
    mean,
    parse_metric,
    per_question,
)
from engine.ranked import NotRanked, left_out, workspace_holding, workspace_not_ranked
from engine.types import CachedRun
from engine.workspace import Workspace

DEFAULT_KS = (1, 3, 5, 10)

HOLE_K = 10
"""The depth at which a retriever's holes are measured: Judged@10, the share of its top
10 a person judged (every board keeps it per question, whatever metrics were asked)."""

HOLE_METRICS = (f"judged@{HOLE_K}", "bpref", "judged:mrr", "judged:ndcg@10")
"""What ``goldpan score`` reports beside the plain metrics about incomplete judgments:
Judged@10, bpref, and MRR and nDCG@10 over the judged documents only."""

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
    """The metrics ``goldpan score`` reports: hit@k, mrr, recall@k, ndcg@10, the holes'."""
    names = [f"hit@{k}" for k in ks] + ["mrr"] + [f"recall@{k}" for k in ks] + ["ndcg@10"]
    names += HOLE_METRICS
    for n in names:
        parse_metric(n)
    return names


@dataclass
class RetrieverScores:
    """One retriever's scores over the scored questions."""

    name: str
    means: dict[str, float] | None
    """Metric -> mean over the scored questions; None when it has not ranked some of them
    (:attr:`lacks`): its scores are unknown, never 0 (the CLI shows ``-``, ``--json``
    null)."""
    per_question: dict[str, FloatArray]
    """Metric -> its value per scored question (NaN on a question it :attr:`lacks`)."""
    first_gold_rank: IntArray
    """Rank of the first gold document per scored question (0 = not retrieved, -1 = a
    question it :attr:`lacks`)."""
    judged: FloatArray
    """Judged@:data:`HOLE_K` per scored question (the share of the top 10 a person judged;
    NaN on a question it :attr:`lacks`)."""
    latency: Latency
    """Over every cached ranking of this retriever (not only the scored questions')."""
    missing: int
    """Scored questions its run has no ranking of, counted as misses: an imported run
    (or a given one) that lacks them (a retriever goldpan ranks leaves them out instead,
    :attr:`not_ranked`)."""
    not_ranked: tuple[str, ...] = ()
    """The questions with gold (in the score's tag) this retriever has not ranked yet
    (:mod:`engine.ranked`), never misses. When it will rank them (:attr:`ScoredSet.holding`)
    they are left out of every retriever's means; when it cannot, those among the scored
    questions are :attr:`lacks`."""
    lacks: tuple[str, ...] = ()
    """The scored questions it has not ranked and cannot rank now: its means are None."""

    @property
    def ranked(self) -> bool:
        """Whether it has ranked every scored question (its :attr:`means` are real)."""
        return self.means is not None


@dataclass
class Scoreboard:
    """Everything ``goldpan score`` prints."""

    counts: dict[str, int]
    question_ids: list[str]
    """The scored questions, in code-point order (rows of the per-question arrays)."""
    retrievers: dict[str, RetrieverScores] = field(default_factory=dict)
    golds: dict[str, Gold] = field(default_factory=dict)
    holding: frozenset[str] = frozenset()
    """The retrievers whose :attr:`RetrieverScores.not_ranked` questions are left out of
    every mean until they rank them (:attr:`ScoredSet.holding`)."""

    def to_json(self) -> dict[str, object]:
        """The ``--json`` shape: question counts and each retriever's means.

        A retriever without means has null for each metric; ``not_ranked`` counts the
        questions with gold it has not ranked.
        """
        return {
            "questions": dict(self.counts),
            "retrievers": {
                name: {
                    **(rs.means if rs.means is not None else dict.fromkeys(rs.per_question)),
                    "not_ranked": len(rs.not_ranked),
                    **rs.latency.as_dict(),
                }
                for name, rs in self.retrievers.items()
            },
        }


class NotScored(Refused):
    """A retriever without means where a number is needed (a floor, a comparison); exit 2.

    It has not ranked some scored question and cannot rank it now (:mod:`engine.ranked`).
    """


def lacking(name: str, lacks: Collection[str], consequence: str) -> str:
    """Why a retriever that ``lacks`` scored questions cannot be used: who, how many, why."""
    return f"{name} has not ranked {len(lacks)} of the scored questions: {consequence}"


def not_scored(name: str, lacks: Collection[str], consequence: str) -> NotScored:
    """The refusal to use a retriever that ``lacks`` scored questions (:func:`lacking`)."""
    return NotScored(lacking(name, lacks, consequence))


@dataclass(frozen=True)
class ScoredSet:
    """The questions a score over some retrievers is over, and what it leaves out."""

    golds: dict[str, Gold]
    """Every question's resolved gold (with the tag, when there is one)."""
    not_ranked: NotRanked
    """Per retriever of the score that goldpan ranks: the questions it has not ranked."""
    holding: frozenset[str]
    """The retrievers that will rank theirs (:func:`engine.ranked.holding`): those
    questions are left out of every mean."""
    question_ids: list[str]
    """The scored questions (:func:`engine.gold.scored_questions`), in code-point order."""
    counts: dict[str, int]
    """How many questions fall in each :data:`engine.gold.COUNT_KEYS` bucket."""

    def lacks(self, retriever: str) -> list[str]:
        """The scored questions ``retriever`` has not ranked (it cannot rank them now)."""
        unranked = self.not_ranked.get(retriever, set())
        return [q for q in self.question_ids if q in unranked]

    def ranked_by(self, retriever: str) -> list[str]:
        """The scored questions ``retriever`` has ranked (all, unless it cannot rank now)."""
        unranked = self.not_ranked.get(retriever, set())
        return [q for q in self.question_ids if q not in unranked]


def scored_set(
    ws: Workspace,
    retrievers: Sequence[str],
    tag: str | None = None,
    cannot_rank: Collection[str] = (),
) -> ScoredSet:
    """The questions (with ``tag``) a score of ``retrievers`` is over: one rule for all.

    Labeled, and not waiting for a ranking (:mod:`engine.ranked`): a question one of them
    will rank soon is left out of all their means (they stay paired) and counted as
    ``not_ranked``. One that cannot rank now holds nothing out: it has no means while it
    lacks a scored question. ``cannot_rank``: the retrievers the caller knows cannot rank
    now (not trusted on this machine, failed, skipped). Every score, comparison, power
    estimate, snapshot and analysis of the scored questions reads its questions here.
    """
    ids = None if tag is None else [q.id for q in ws.questions() if tag in q.tags]
    golds = workspace_golds(ws, ids)
    not_ranked = workspace_not_ranked(ws, retrievers, ids)
    holds = workspace_holding(ws, not_ranked, cannot_rank)
    out = left_out(not_ranked, holds)
    return ScoredSet(
        golds,
        not_ranked,
        frozenset(holds),
        scored_questions(golds, out),
        count_golds(golds.values(), out),
    )


def score_workspace(
    ws: Workspace,
    *,
    metrics: Sequence[str] | None = None,
    retrievers: Sequence[str] | None = None,
    tag: str | None = None,
    given: Mapping[str, Mapping[str, CachedRun]] | None = None,
    cannot_rank: Collection[str] = (),
) -> Scoreboard:
    """Score the chosen retrievers (all by default) from their cached rankings.

    ``given``: rankings that are not in the workspace (``score --run``), per retriever name
    and question. When given, only they are scored, with the workspace's retrievers named
    in ``retrievers``; a given name that the workspace also has replaces its rankings.
    ``cannot_rank``: the retrievers the caller knows cannot rank now (:func:`scored_set`).
    """
    # Imported here: the retrievers (numpy) are not needed by workspace_golds' callers.
    from engine.retrieve.runner import select_retrievers

    names = list(metrics) if metrics else metric_names()
    parsed = [parse_metric(m) for m in names]
    if given:
        stored = [n for n in retrievers or () if n not in given]
        chosen = [s.name for s in select_retrievers(ws, stored)] if stored else []
        chosen += [n for n in given if n not in chosen]
    else:
        chosen = [s.name for s in select_retrievers(ws, retrievers)]
    stored = [n for n in chosen if not (given and n in given)]
    scope = scored_set(ws, stored, tag, cannot_rank)
    golds, scored = scope.golds, scope.question_ids
    stopped = workspace_stopped(ws, list(golds))
    counts = {**scope.counts, "stopped": len(stopped), "not_judged_stopped": sum(stopped.values())}
    board = Scoreboard(counts, scored, golds=golds, holding=scope.holding)
    with_gold = {q for q, g in golds.items() if is_scored(g)}  # scored once ranked
    qrels = [golds[q].qrels for q in scored]
    for name in chosen:
        cached = dict(given[name]) if given and name in given else ws.runs(name)
        rankings = [list(cached[q].doc_ids) if q in cached else [] for q in scored]
        j: Judged = judge(rankings, qrels)
        values = {m.name: per_question(j, m) for m in parsed}
        first = first_relevant_rank(j)
        judged = judged_at_k(j, HOLE_K)
        unranked = scope.not_ranked.get(name, set())
        lacks = scope.lacks(name)
        if lacks:  # it cannot rank them now (it would hold them out otherwise)
            rows = np.isin(scored, lacks)
            for v in values.values():
                v[rows] = math.nan
            judged[rows] = math.nan
            first[rows] = -1
        timing = Latency.of(
            [r.latency_ms for r in cached.values()],
            [r.alone_ms for r in cached.values() if r.alone_ms is not None],
        )
        board.retrievers[name] = RetrieverScores(
            name=name,
            means=None if lacks else {name: mean(v) for name, v in values.items()},
            per_question=values,
            first_gold_rank=first,
            judged=judged,
            latency=timing,
            missing=sum(1 for q in scored if q not in cached and q not in unranked),
            not_ranked=tuple(sorted(unranked & with_gold)),
            lacks=tuple(lacks),
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


def paired_board(
    ws: Workspace,
    a: str,
    b: str,
    metrics: Sequence[str],
    tag: str | None = None,
    cannot_rank: Collection[str] = (),
) -> Scoreboard:
    """The scores of retrievers A and B on the same scored questions (compare, power).

    Raises:
        NotScored: A or B has not ranked some scored question and cannot rank it now.
    """
    board = score_workspace(
        ws, metrics=list(metrics), retrievers=[a, b], tag=tag, cannot_rank=cannot_rank
    )
    for rs in board.retrievers.values():
        if not rs.ranked:
            raise not_scored(
                rs.name, rs.lacks, "a comparison with it would pair questions it has no score on"
            )
    return board


def paired_values(
    ws: Workspace,
    a: str,
    b: str,
    metric: str,
    tag: str | None = None,
    cannot_rank: Collection[str] = (),
) -> tuple[str, FloatArray, FloatArray]:
    """Retrievers A and B's per-question values of one metric (:func:`paired_board`).

    Returns the metric's canonical name and the two arrays (power reads these).

    Raises:
        NotScored: A or B has not ranked some scored question and cannot rank it now.
    """
    from engine.metrics import parse_metric

    name = parse_metric(metric).name
    board = paired_board(ws, a, b, [name], tag, cannot_rank)
    return (
        name,
        board.retrievers[a].per_question[name],
        board.retrievers[b].per_question[name],
    )
