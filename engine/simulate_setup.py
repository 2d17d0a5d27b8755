"""What ``goldpan simulate`` replays and what a replay yields, as plain data.

The questions one annotator judged (:class:`Question`, read by :func:`load` into a
:class:`Setup`), one question judged by one policy (:class:`Trace`), and a policy's
figures (:class:`Figures`, whose ``--json`` shape is :meth:`Figures.to_json`).
:mod:`engine.simulate` replays and reports; the figures are described in its doc.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.errors import BadInput
from engine.grades import is_relevant
from engine.judging.order import PoolView
from engine.pooling import DEFAULT_POOL_DEPTH

if TYPE_CHECKING:
    from engine.workspace import Workspace


@dataclass(frozen=True)
class Question:
    """One question as the simulation sees it."""

    view: PoolView
    truth: Mapping[str, int]
    """The assessor's grades (every other document is not relevant)."""
    relevant: int
    """The assessor's relevant documents, pooled or not."""

    @property
    def id(self) -> str:
        """The question id."""
        return self.view.question_id

    def grade(self, doc_id: str) -> int:
        """The assessor's grade of a document (0 when they did not judge it)."""
        return self.truth.get(doc_id, 0)


@dataclass
class Setup:
    """What a simulation reads from a workspace (plain data)."""

    assessor: str
    depth: int
    questions: list[Question]
    rankings: Mapping[str, Mapping[str, Sequence[str]]]
    """Retriever -> question id -> cached ranking (for the metrics)."""
    first_stage: list[str]
    """The retrievers that rank by themselves (no fusion or reranking of others)."""

    @property
    def retrievers(self) -> list[str]:
        """Every retriever, sorted."""
        return sorted(self.rankings)


def load(ws: Workspace, assessor: str, depth: int = DEFAULT_POOL_DEPTH) -> Setup:
    """The questions ``assessor`` judged (a grade or a verdict), with every cached ranking.

    Raises:
        BadInput: nobody of that name judged anything, or nothing is ranked.
    """
    from engine.retrieve import bases_of

    labels = [lab for lab in ws.labels() if lab.annotator == assessor]
    said = {v.question_id for v in ws.verdicts() if v.annotator == assessor}
    if not labels and not said:
        known = ", ".join(ws.annotators()) or "nobody"
        raise BadInput(f"{assessor!r} judged nothing in {ws.path} (annotators: {known})")
    truth: dict[str, dict[str, int]] = {q: {} for q in said}
    for lab in labels:
        truth.setdefault(lab.question_id, {})[lab.doc_id] = lab.grade
    runs = ws.all_runs()
    if not runs or not any(runs.values()):
        raise BadInput(f"{ws.path} has no ranking to pool: run `goldpan pool` first")
    rankings = {name: dict(per_q) for name, per_q in runs.items()}
    questions = []
    for qid in sorted(truth):
        view = PoolView(qid, {n: rankings[n].get(qid, ()) for n in rankings}, depth)
        relevant = sum(1 for g in truth[qid].values() if is_relevant(g))
        questions.append(Question(view, truth[qid], relevant))
    specs = [s for s in ws.retrievers() if s.name in rankings]
    first_stage = [s.name for s in specs if not bases_of(s)]
    return Setup(assessor, depth, questions, rankings, first_stage)


@dataclass
class Trace:
    """One question judged by one policy."""

    order: list[str]
    """Every pooled candidate in the order it would be judged (the whole walk)."""
    judged: list[str]
    """What was judged: the order up to the stop, then any feedback beyond the pool."""
    pool: int
    """Pooled candidates."""
    rounds: list[tuple[int, int]] = field(default_factory=list)
    """Feedback rounds: (documents proposed, relevant among them)."""


@dataclass
class Figures:
    """A policy's figures (see the module's doc); the ``--json`` shape is :meth:`to_json`."""

    name: str
    order: str
    stop: bool
    beyond_pool: int | None
    first: list[int]
    last: list[int]
    last_share: list[float]
    judged: int
    pooled: int
    pooled_relevant: int
    pooled_relevant_found: int
    found_at: dict[int, float]
    tau: dict[str, tuple[float | None, float | None, float | None]] = field(default_factory=dict)
    swapped: dict[str, int] = field(default_factory=dict)
    gap_first: float | None = None
    gap_all: float | None = None
    left: list[tuple[float, int]] = field(default_factory=list)
    """Feedback: (estimated relevant left, relevant truly left) per question estimated."""

    @property
    def first_mean(self) -> float:
        """Mean judgments to the first relevant document."""
        return statistics.fmean(self.first) if self.first else math.nan

    @property
    def all_share(self) -> float:
        """Mean share of the pool judged until every pooled relevant document is found."""
        return statistics.fmean(self.last_share) if self.last_share else math.nan

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (NaN and undefined values as null)."""
        return {
            "name": self.name,
            "order": self.order,
            "stop": self.stop,
            "beyond_pool": self.beyond_pool,
            "first_relevant": {
                "mean": _num(self.first_mean),
                "median": _num(statistics.median(self.first) if self.first else math.nan),
                "gap_closed": _num(self.gap_first),
            },
            "all_found": {
                "judgments": _num(statistics.fmean(self.last) if self.last else math.nan),
                "share": _num(self.all_share),
                "gap_closed": _num(self.gap_all),
            },
            "judged_share": _num(self.judged / self.pooled if self.pooled else math.nan),
            "saved": _num(1 - self.judged / self.pooled if self.pooled else math.nan),
            "pooled_relevant_found": _num(
                self.pooled_relevant_found / self.pooled_relevant
                if self.pooled_relevant
                else math.nan
            ),
            "found_at": {str(b): _num(v) for b, v in self.found_at.items()},
            "tau": {
                m: {"tau": _num(t), "low": _num(lo), "high": _num(hi)}
                for m, (t, lo, hi) in self.tau.items()
            },
            "real_pairs_swapped": dict(self.swapped),
            "relevant_left": None
            if not self.left
            else {
                "questions": len(self.left),
                "estimate": _num(statistics.fmean(e for e, _ in self.left)),
                "true": _num(statistics.fmean(t for _, t in self.left)),
                "mean_abs_error": _num(statistics.fmean(abs(e - t) for e, t in self.left)),
            },
        }


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)
