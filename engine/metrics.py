"""Ranking metrics, vectorized over a matrix of graded relevance by rank.

Every metric is computed per question from ``rel``, an integer matrix with one row per
question and one column per rank (the grade of the document at that rank, 0 when it is
not relevant or unjudged, and 0 past the end of a short ranking), plus the question's
gold grades. A document is relevant when its grade is >= 1. The definitions are
trec_eval's (``trec_eval -c``: a question in the gold whose ranking is empty scores 0):

* ``hit@k`` = trec_eval ``success.k``: 1 if a relevant document is in the top k.
* ``mrr`` = trec_eval ``recip_rank``: 1 / rank of the first relevant document over the
  whole (cached) ranking, 0 if none; ``mrr@k`` cuts the ranking at k first.
* ``recall@k`` = trec_eval ``recall.k``: relevant documents in the top k / all relevant.
* ``p@k`` = trec_eval ``P.k``: relevant documents in the top k / k (also when the ranking
  is shorter than k).
* ``ndcg@k`` = trec_eval ``ndcg_cut.k`` (Järvelin & Kekäläinen 2002, linear gain):
  ``DCG = sum_{i<=k} grade(i) / log2(i + 1)``; the ideal DCG sorts every gold grade
  descending and cuts at k.

Question means are plain arithmetic means, as trec_eval's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from engine.errors import UnknownName
from engine.grades import RELEVANT, is_relevant

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_METRIC = re.compile(r"^(hit|mrr|recall|p|ndcg)(?:@([1-9][0-9]*))?$")
METRIC_FAMILIES = ("hit@k", "mrr", "mrr@k", "recall@k", "p@k", "ndcg@k")
"""Every metric family :func:`parse_metric` takes (``k`` a cutoff); help texts list these."""

DEFAULT_METRIC = "mrr"
"""The metric a comparison, a sweep or a power figure uses when none is named."""


@dataclass(frozen=True)
class Metric:
    """A parsed metric name such as ``ndcg@10``."""

    family: str
    k: int | None

    @property
    def name(self) -> str:
        """The canonical name."""
        return self.family if self.k is None else f"{self.family}@{self.k}"


_LABELS = {"hit": "Hit", "mrr": "MRR", "recall": "R", "p": "P", "ndcg": "nDCG"}


def metric_label(name: str) -> str:
    """A metric's column header in the CLI's and the TUI's tables.

    ``Hit@5``, ``MRR``, ``MRR@10``, ``R@10`` (recall), ``P@5``, ``nDCG@10``.
    """
    m = parse_metric(name)
    return _LABELS[m.family] + ("" if m.k is None else f"@{m.k}")


def parse_metric(name: str) -> Metric:
    """Parse ``hit@5``, ``mrr``, ``mrr@10``, ``recall@5``, ``p@5`` or ``ndcg@10``.

    Raises:
        UnknownName: naming the metric families goldpan knows.
    """
    m = _METRIC.match(name.strip().lower().replace("success@", "hit@"))
    if not m or (m.group(1) != "mrr" and m.group(2) is None):
        raise UnknownName(
            f"unknown metric {name!r}; known metrics: {', '.join(METRIC_FAMILIES)} "
            "(k a positive whole number)"
        )
    return Metric(m.group(1), int(m.group(2)) if m.group(2) else None)


@dataclass(frozen=True)
class Judged:
    """Relevance of the cached rankings of a set of questions, ready for any metric."""

    rel: IntArray
    """questions x depth: grade of the document at each rank (0 past the ranking)."""
    ideal: IntArray
    """questions x depth: each question's gold grades sorted descending, 0-padded."""
    n_rel: IntArray
    """Number of relevant (grade >= 1) gold documents of each question."""

    @property
    def depth(self) -> int:
        """Columns of the matrices."""
        return int(self.rel.shape[1])


def judge(
    rankings: Sequence[Sequence[str]], gold: Sequence[Mapping[str, int]], depth: int | None = None
) -> Judged:
    """Build the relevance matrices for rankings and gold sets given in the same order."""
    if len(rankings) != len(gold):
        raise ValueError("rankings and gold must have one entry per question")
    longest = max((len(r) for r in rankings), default=0)
    most_gold = max((len(g) for g in gold), default=0)
    width = max(depth or 0, longest, most_gold, 1)
    n = len(rankings)
    rel = np.zeros((n, width), dtype=np.int64)
    ideal = np.zeros((n, width), dtype=np.int64)
    n_rel = np.zeros(n, dtype=np.int64)
    for i, (ranking, g) in enumerate(zip(rankings, gold, strict=True)):
        if g:
            row = [g.get(d, 0) for d in ranking]
            if row:
                rel[i, : len(row)] = row
            grades = sorted((v for v in g.values() if is_relevant(v)), reverse=True)
            ideal[i, : len(grades)] = grades
            n_rel[i] = len(grades)
    return Judged(rel, ideal, n_rel)


def _discounts(k: int) -> FloatArray:
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def hit_at_k(j: Judged, k: int) -> FloatArray:
    """trec_eval ``success.k`` per question."""
    out: FloatArray = np.asarray((j.rel[:, :k] >= RELEVANT).any(axis=1), dtype=np.float64)
    return out


def reciprocal_rank(j: Judged, k: int | None = None) -> FloatArray:
    """trec_eval ``recip_rank`` per question (cut at k when given)."""
    rel = (j.rel if k is None else j.rel[:, :k]) >= RELEVANT
    found = rel.any(axis=1)
    first = (rel.argmax(axis=1) + 1).astype(np.float64)
    out: FloatArray = np.where(found, 1.0 / first, 0.0).astype(np.float64)
    return out


def recall_at_k(j: Judged, k: int) -> FloatArray:
    """trec_eval ``recall.k`` per question (0 when there is no relevant document)."""
    hits = (j.rel[:, :k] >= RELEVANT).sum(axis=1).astype(np.float64)
    out: FloatArray = np.zeros_like(hits)
    np.divide(hits, j.n_rel, out=out, where=j.n_rel > 0)
    return out


def precision_at_k(j: Judged, k: int) -> FloatArray:
    """trec_eval ``P.k`` per question."""
    out: FloatArray = (j.rel[:, :k] >= RELEVANT).sum(axis=1).astype(np.float64) / k
    return out


def ndcg_at_k(j: Judged, k: int) -> FloatArray:
    """trec_eval ``ndcg_cut.k`` per question (linear gain)."""
    width = min(k, j.depth)
    disc = _discounts(width)
    # Sum rank by rank, as trec_eval does, so values agree to the last bit or close.
    gains = j.rel[:, :width].astype(np.float64)
    ideal = j.ideal[:, :width].astype(np.float64)
    dcg = np.zeros(gains.shape[0])
    idcg = np.zeros(gains.shape[0])
    for i in range(width):
        dcg += gains[:, i] * disc[i]
        idcg += ideal[:, i] * disc[i]
    out: FloatArray = np.zeros_like(dcg)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def per_question(j: Judged, metric: Metric | str) -> FloatArray:
    """Per-question values of one metric."""
    m = parse_metric(metric) if isinstance(metric, str) else metric
    if m.family == "mrr":
        return reciprocal_rank(j, m.k)
    assert m.k is not None
    if m.family == "hit":
        return hit_at_k(j, m.k)
    if m.family == "recall":
        return recall_at_k(j, m.k)
    if m.family == "p":
        return precision_at_k(j, m.k)
    return ndcg_at_k(j, m.k)


def first_relevant_rank(j: Judged) -> IntArray:
    """Rank (1-based) of the first relevant document per question; 0 when none."""
    rel = j.rel >= RELEVANT
    out: IntArray = np.where(rel.any(axis=1), rel.argmax(axis=1) + 1, 0)
    return out


def first_gold_rank(ranking: Sequence[str], gold: Mapping[str, int]) -> int:
    """Rank (1-based) of the first relevant document of one ranking; 0 when none."""
    return next((i for i, d in enumerate(ranking, 1) if is_relevant(gold.get(d, 0))), 0)


def mean(values: FloatArray) -> float:
    """Arithmetic mean with a correctly rounded sum (``math.fsum``), 0 for no questions.

    The exact sum makes the mean independent of question order, so the live review and
    ``goldpan score`` give bit-identical numbers however they gather the questions.
    """
    if values.size == 0:
        return 0.0
    return math.fsum(values.tolist()) / values.size


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str],
) -> dict[str, dict[str, float]]:
    """Per-question metrics for plain qrels and run dicts (ranx / pytrec_eval shape).

    The run is ranked by score descending, then doc id descending (trec_eval's order);
    every question of ``qrels`` is evaluated, a question missing from ``run`` scoring 0
    (``trec_eval -c``). Grades < 1 are not relevant.
    """
    qids = sorted(qrels)
    rankings = [
        [d for d, _ in sorted(run.get(q, {}).items(), key=lambda x: (x[1], x[0]), reverse=True)]
        for q in qids
    ]
    j = judge(rankings, [qrels[q] for q in qids])
    parsed = [parse_metric(m) for m in metrics]
    values = {m.name: per_question(j, m) for m in parsed}
    return {q: {name: float(v[i]) for name, v in values.items()} for i, q in enumerate(qids)}
