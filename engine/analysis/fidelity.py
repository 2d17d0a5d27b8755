"""How alike two retrievers rank the same questions: top-1 agreement, rank correlation, ties.

Made for "does goldpan's BM25 predict what the engine returns?" and "is this engine's
ranking even an order?": given the cached rankings of two retrievers A and B over the
same questions, :func:`fidelity` reports

* **top-1 agreement**: the share of questions (ranked by both) whose first document is
  the same; and the same share *up to ties*, counting a question as agreeing when each
  one's first document scores as high as the other's first in its own ranking (a tie at
  the top makes "first" the doc-id tie-break's choice, not the retriever's);
* **rank correlation** per question, averaged over questions: Kendall's tau-b and
  Spearman's rho over the *union* of both top-k lists. Each retriever ranks every
  document of the union by its own score, tied scores tied; a document outside its top k
  is ranked below all of its top k, tied with the other documents it left out. tau-b and
  rho are those of ``scipy.stats.kendalltau`` (variant b) and ``spearmanr`` (average ranks
  for ties). A question whose union has fewer than two documents, or where one side gives
  every document the same rank, has no correlation (counted apart, left out of the mean);
* **tie share** of each: the share of its top-k rows whose score equals that of another
  document of its cached ranking (which is deeper than k, so a tie across the cutoff
  counts), and a warning in words when that is most of its top k: such a ranking's order
  is the doc-id tie-break's, and comparing it with anything says little (PostgreSQL's
  ``ts_rank_cd`` on short texts puts most top-10 rows in tied groups).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from engine.errors import BadInput
from engine.names import check_known
from engine.types import CachedRun, Question, RetrieverSpec

DEFAULT_K = 10
MOSTLY_TIES = 0.5
"""A tie share above this is "mostly ties" (warned about)."""


class RunSource(Protocol):
    """What fidelity reads (an open :class:`~engine.workspace.Workspace`)."""

    def retrievers(self) -> list[RetrieverSpec]:
        """Every configured retriever."""
        ...

    def questions(self) -> list[Question]:
        """Every question."""
        ...

    def runs(self, retriever: str, question_ids: Sequence[str] | None = None) -> dict[str, Any]:
        """Question id -> cached ranking."""
        ...


@dataclass(frozen=True)
class QuestionFidelity:
    """One question's figures."""

    question_id: str
    top1_a: str | None
    top1_b: str | None
    same_top1: bool | None
    """None when one of the two ranked nothing."""
    same_top1_up_to_ties: bool | None
    kendall_tau: float | None
    """None when undefined (see the module's text)."""
    spearman: float | None
    tied_a: int
    """How many of A's top-k rows sit in a tied score group."""
    tied_b: int
    rows_a: int
    """How many rows A's top k has (fewer than k when it ranked fewer documents)."""
    rows_b: int


@dataclass
class Fidelity:
    """Two retrievers' agreement over the questions both have rankings for."""

    a: str
    b: str
    k: int
    questions: list[QuestionFidelity] = field(default_factory=list)
    missing: int = 0
    """Questions left out: not ranked (cached) by one of the two."""

    def _mean(self, values: Sequence[float | None]) -> float | None:
        kept = [v for v in values if v is not None]
        return math.fsum(kept) / len(kept) if kept else None

    @property
    def top1_agreement(self) -> float | None:
        """The share of questions both ranked something for whose first document agrees."""
        return self._mean(
            [None if q.same_top1 is None else float(q.same_top1) for q in self.questions]
        )

    @property
    def top1_agreement_up_to_ties(self) -> float | None:
        """The same, counting a tie at the top as agreement."""
        return self._mean(
            [
                None if q.same_top1_up_to_ties is None else float(q.same_top1_up_to_ties)
                for q in self.questions
            ]
        )

    @property
    def kendall_tau(self) -> float | None:
        """Mean Kendall tau-b over the questions where it is defined."""
        return self._mean([q.kendall_tau for q in self.questions])

    @property
    def spearman(self) -> float | None:
        """Mean Spearman rho over the questions where it is defined."""
        return self._mean([q.spearman for q in self.questions])

    @property
    def undefined_correlation(self) -> int:
        """Questions without a rank correlation."""
        return sum(q.kendall_tau is None for q in self.questions)

    def tie_share(self, which: str) -> float | None:
        """The share of ``which``'s ("a" or "b") top-k rows that sit in tied score groups."""
        rows = sum(q.rows_a if which == "a" else q.rows_b for q in self.questions)
        tied = sum(q.tied_a if which == "a" else q.tied_b for q in self.questions)
        return tied / rows if rows else None

    @property
    def warnings(self) -> list[str]:
        """Whole sentences: a retriever whose top k is mostly ties; nothing to compare."""
        out: list[str] = []
        if not self.questions:
            out.append(f"no question has rankings by both {self.a} and {self.b}: pool them first")
        for which, name in (("a", self.a), ("b", self.b)):
            share = self.tie_share(which)
            if share is not None and share > MOSTLY_TIES:
                out.append(
                    f"{name}'s top {self.k} is mostly ties: {share:.0%} of its top-{self.k} "
                    "rows share their score with another document, so their order is the "
                    "doc-id tie-break's, not the retriever's; its top-1 and rank "
                    "correlation say little (the engine itself may order those ties "
                    "differently)"
                )
        return out

    def to_json(self) -> dict[str, Any]:
        """The report as plain data (``goldpan fidelity --json``)."""
        return {
            "a": self.a,
            "b": self.b,
            "k": self.k,
            "questions": len(self.questions),
            "missing": self.missing,
            "top1_agreement": self.top1_agreement,
            "top1_agreement_up_to_ties": self.top1_agreement_up_to_ties,
            "kendall_tau_b": self.kendall_tau,
            "spearman_rho": self.spearman,
            "no_correlation": self.undefined_correlation,
            "tie_share": {self.a: self.tie_share("a"), self.b: self.tie_share("b")}
            if self.a != self.b
            else {self.a: self.tie_share("a")},
            "warnings": self.warnings,
            "per_question": [
                {
                    "question": q.question_id,
                    "top1_a": q.top1_a,
                    "top1_b": q.top1_b,
                    "same_top1": q.same_top1,
                    "same_top1_up_to_ties": q.same_top1_up_to_ties,
                    "kendall_tau_b": q.kendall_tau,
                    "spearman_rho": q.spearman,
                    "tied_a": q.tied_a,
                    "tied_b": q.tied_b,
                }
                for q in self.questions
            ],
        }


def tied_rows(run: CachedRun, k: int) -> int:
    """How many of ``run``'s top-``k`` rows share their score with another of its rows."""
    counts: dict[float, int] = {}
    for s in run.scores:
        counts[s] = counts.get(s, 0) + 1
    return sum(counts[s] > 1 for s in run.scores[:k])


def _ranks(values: np.ndarray[Any, np.dtype[np.float64]]) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Average ranks (1 = smallest), ties sharing the mean of their positions."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    sorted_vals = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of two paired samples (None when either is constant or n < 2).

    tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)) with C, D the concordant and discordant
    pairs, n0 = n(n-1)/2, n1 and n2 the pairs tied in x and in y (Kendall 1945); equal to
    ``scipy.stats.kendalltau(x, y)`` (its default variant "b").
    """
    n = len(x)
    if n < 2:
        return None
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    dx = np.sign(xa[:, None] - xa[None, :])
    dy = np.sign(ya[:, None] - ya[None, :])
    upper = np.triu_indices(n, 1)
    sx, sy = dx[upper], dy[upper]
    n0 = len(sx)
    n1 = int(np.sum(sx == 0))
    n2 = int(np.sum(sy == 0))
    denom = math.sqrt(float(n0 - n1) * float(n0 - n2))
    if denom == 0:
        return None
    return float(np.sum(sx * sy)) / denom


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho: the Pearson correlation of the average ranks (None when undefined).

    Equal to ``scipy.stats.spearmanr(x, y).statistic``.
    """
    if len(x) < 2:
        return None
    rx = _ranks(np.asarray(x, dtype=np.float64))
    ry = _ranks(np.asarray(y, dtype=np.float64))
    cx, cy = rx - rx.mean(), ry - ry.mean()
    denom = math.sqrt(float(cx @ cx) * float(cy @ cy))
    if denom == 0:
        return None
    return float(cx @ cy) / denom


def union_scores(a: CachedRun, b: CachedRun, k: int) -> tuple[list[str], list[float], list[float]]:
    """The union of both top-k lists, and each side's value for each of its documents.

    Only the order of each side's values matters to a rank correlation: a document in a
    side's top k has its score, one left out a value below all of them (the same for all
    it left out: they are tied).
    """
    top_a = dict(zip(a.doc_ids[:k], a.scores[:k], strict=True))
    top_b = dict(zip(b.doc_ids[:k], b.scores[:k], strict=True))
    union = list(dict.fromkeys([*top_a, *top_b]))
    return union, _with_floor(top_a, union), _with_floor(top_b, union)


def _with_floor(top: Mapping[str, float], union: Sequence[str]) -> list[float]:
    low = min(top.values(), default=0.0)
    floor = low - (abs(low) + 1.0)  # finite, and strictly below every score of ``top``
    return [top.get(d, floor) for d in union]


def _first_ties(run: CachedRun) -> set[str]:
    """The documents tied with ``run``'s first one."""
    if not run.doc_ids:
        return set()
    top = run.scores[0]
    return {d for d, s in zip(run.doc_ids, run.scores, strict=True) if s == top}


def question_fidelity(qid: str, a: CachedRun, b: CachedRun, k: int) -> QuestionFidelity:
    """One question's figures (see the module's text)."""
    top1_a = a.doc_ids[0] if a.doc_ids else None
    top1_b = b.doc_ids[0] if b.doc_ids else None
    both = top1_a is not None and top1_b is not None
    same = top1_a == top1_b if both else None
    up_to_ties = (top1_b in _first_ties(a) or top1_a in _first_ties(b)) if both else None
    _, xa, xb = union_scores(a, b, k)
    return QuestionFidelity(
        qid,
        top1_a,
        top1_b,
        same,
        up_to_ties,
        kendall_tau_b(xa, xb),
        spearman_rho(xa, xb),
        tied_rows(a, k),
        tied_rows(b, k),
        min(k, len(a.doc_ids)),
        min(k, len(b.doc_ids)),
    )


def fidelity_of(
    a: str,
    b: str,
    runs_a: Mapping[str, CachedRun],
    runs_b: Mapping[str, CachedRun],
    question_ids: Sequence[str],
    k: int = DEFAULT_K,
) -> Fidelity:
    """The report for two retrievers' cached rankings of ``question_ids``."""
    if k < 1:
        raise BadInput(f"fidelity --k must be at least 1, not {k}")
    report = Fidelity(a, b, k)
    for qid in question_ids:
        ra, rb = runs_a.get(qid), runs_b.get(qid)
        if ra is None or rb is None:
            report.missing += 1
            continue
        report.questions.append(question_fidelity(qid, ra, rb, k))
    return report


def fidelity(
    ws: RunSource, a: str, b: str, *, k: int = DEFAULT_K, tag: str | None = None
) -> Fidelity:
    """Top-1 agreement, rank correlation and tie share of retrievers ``a`` and ``b``.

    Reads their cached rankings (pool first for fresh ones) of every question (with
    ``tag`` only, when given).

    Raises:
        UnknownName: ``a`` or ``b`` is no retriever of the workspace (exit 2).
        BadInput: ``k`` below 1.
    """
    names = [s.name for s in ws.retrievers()]
    check_known("retriever", [a, b], names, given_to="fidelity")
    qids = [q.id for q in ws.questions() if tag is None or tag in q.tags]
    return fidelity_of(a, b, ws.runs(a), ws.runs(b), qids, k)
