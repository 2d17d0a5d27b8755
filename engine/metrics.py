"""Ranking metrics, vectorized over a matrix of graded relevance by rank.

Every metric is computed per question from ``rel``, an integer matrix with one row per
question and one column per rank (the grade of the document at that rank, 0 when it is
not relevant or unjudged, and 0 past the end of a short ranking), ``judged`` (whether a
person judged the document at that rank, grade 0 included), plus the question's judged
grades (its qrels: the gold grades, and 0 for a document judged not relevant). A
document is relevant when its grade is >= 1. The definitions are trec_eval's
(``trec_eval -c``: a question in the gold whose ranking is empty scores 0):

* ``hit@k`` = trec_eval ``success.k``: 1 if a relevant document is in the top k.
* ``mrr`` = trec_eval ``recip_rank``: 1 / rank of the first relevant document over the
  whole (cached) ranking, 0 if none; ``mrr@k`` cuts the ranking at k first.
* ``recall@k`` = trec_eval ``recall.k``: relevant documents in the top k / all relevant.
* ``p@k`` = trec_eval ``P.k``: relevant documents in the top k / k (also when the ranking
  is shorter than k).
* ``ndcg@k`` = trec_eval ``ndcg_cut.k`` (Järvelin & Kekäläinen 2002, linear gain):
  ``DCG = sum_{i<=k} grade(i) / log2(i + 1)``; the ideal DCG sorts every gold grade
  descending and cuts at k.

Three more say how much of a score rests on judgments (incomplete gold: a document nobody
judged counts as not relevant above, and a retriever that ranks unjudged documents high
is then scored low whether they are relevant or not):

* ``judged@k`` = ir_measures ``Judged@k``: the share of the top ``min(k, n)`` documents
  (n the ranking's length) that a person judged; 0 for an empty ranking (ir_measures
  counts a question missing from the run as 0).
* ``bpref`` = trec_eval ``bpref`` (Buckley & Voorhees 2004, as corrected in trec_eval
  8.0): ``1/R * sum over the relevant retrieved r of (1 - min(n_r, R) / min(N, R))``,
  n_r the judged non-relevant documents ranked above r (the term is 1 when n_r is 0), R
  the relevant and N the judged non-relevant documents of the question; unjudged
  documents are skipped; 0 when R is 0. Over the whole (cached) ranking.
* ``judged:M`` for M one of the metrics above the line (``judged:mrr``,
  ``judged:ndcg@10``): M on the *condensed* ranking, the ranking with every unjudged
  document removed (Sakai 2007), as ``trec_eval -J`` computes it; a cutoff is applied to
  the condensed ranking (``judged:ndcg@10`` is the first 10 judged documents).

Question means are plain arithmetic means, as trec_eval's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from engine.errors import UnknownName
from engine.grades import RELEVANT, is_relevant

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

JUDGED_ONLY = "judged:"
"""The prefix of a judged-only metric (``judged:ndcg@10``): the ranking condensed to the
documents a person judged. A word, not Sakai's prime (``nDCG'``), so that nobody reads it
for the plain metric and a shell needs no quotes around it."""

_METRIC = re.compile(r"^(judged:)?(hit|mrr|recall|p|ndcg|judged|bpref)(?:@([1-9][0-9]*))?$")
_K_DIGITS = 100
"""The most digits a cutoff k may have (any k past a ranking's length counts the same)."""
_NEEDS_K = frozenset({"hit", "recall", "p", "ndcg", "judged"})
_CONDENSABLE = ("hit@k", "mrr", "mrr@k", "recall@k", "p@k", "ndcg@k")
METRIC_FAMILIES = (*_CONDENSABLE, "judged@k", "bpref", f"{JUDGED_ONLY}M")
"""Every metric family :func:`parse_metric` takes (``k`` a cutoff, ``M`` one of the first
six); help texts list these."""

DEFAULT_METRIC = "mrr"
"""The metric a comparison, a sweep or a power figure uses when none is named."""


@dataclass(frozen=True)
class Metric:
    """A parsed metric name such as ``ndcg@10`` or ``judged:mrr``."""

    family: str
    k: int | None
    judged_only: bool = False
    """Computed on the ranking condensed to judged documents (``judged:`` names)."""

    @property
    def name(self) -> str:
        """The canonical name."""
        plain = self.family if self.k is None else f"{self.family}@{self.k}"
        return JUDGED_ONLY + plain if self.judged_only else plain


_LABELS = {
    "hit": "Hit",
    "mrr": "MRR",
    "recall": "R",
    "p": "P",
    "ndcg": "nDCG",
    "judged": "Judged",
    "bpref": "bpref",
}


def metric_label(name: str) -> str:
    """A metric's column header in the CLI's and the TUI's tables.

    ``Hit@5``, ``MRR``, ``MRR@10``, ``R@10`` (recall), ``P@5``, ``nDCG@10``,
    ``Judged@10``, ``bpref``, ``judged:nDCG@10``.
    """
    m = parse_metric(name)
    plain = _LABELS[m.family] + ("" if m.k is None else f"@{m.k}")
    return JUDGED_ONLY + plain if m.judged_only else plain


def parse_metric(name: str) -> Metric:
    """Parse a metric name: ``hit@5``, ``ndcg@10``, ``judged@10``, ``bpref``, ``judged:mrr``.

    The families are :data:`METRIC_FAMILIES`; ``judged:`` goes before one of the first
    six (``hit@k``, ``mrr``, ``mrr@k``, ``recall@k``, ``p@k``, ``ndcg@k``).

    Raises:
        UnknownName: naming the metric families goldpan knows.
    """
    m = _METRIC.match(name.strip().lower().replace("success@", "hit@"))
    prefix, family, k = (m.group(1), m.group(2), m.group(3)) if m else (None, "", None)
    why = ""
    if m is not None and prefix and family in ("judged", "bpref"):
        why = (
            f"; {family}{'@k' if family == 'judged' else ''} has no judged-only variant "
            f"({JUDGED_ONLY} goes before {', '.join(_CONDENSABLE)})"
        )
    if k is not None and len(k) > _K_DIGITS:  # int() refuses 4,300 digits with a ValueError
        why = f"; k has at most {_K_DIGITS} digits, not {len(k):,}"
    cutoff_wrong = family != "mrr" and (family in _NEEDS_K) != (k is not None)
    if m is None or why or cutoff_wrong:
        raise UnknownName(
            f"unknown metric {name!r}; known metrics: {', '.join(METRIC_FAMILIES)} "
            f"(k a positive whole number; {JUDGED_ONLY}M is M over the judged documents "
            f"only, M one of {', '.join(_CONDENSABLE)}){why}"
        )
    return Metric(family, int(k) if k else None, bool(prefix))


@dataclass(frozen=True)
class Judged:
    """Relevance of the cached rankings of a set of questions, ready for any metric."""

    rel: IntArray
    """questions x depth: grade of the document at each rank (0 past the ranking)."""
    ideal: IntArray
    """questions x depth: each question's gold grades sorted descending, 0-padded."""
    n_rel: IntArray
    """Number of relevant (grade >= 1) gold documents of each question."""
    judged: BoolArray
    """questions x depth: a person judged the document at each rank (False past it)."""
    n_ret: IntArray
    """Length of each question's ranking."""
    n_nonrel: IntArray
    """Number of documents of each question judged not relevant (grade 0)."""

    @property
    def depth(self) -> int:
        """Columns of the matrices."""
        return int(self.rel.shape[1])

    @cached_property
    def condensed(self) -> Judged:
        """The same questions with every unjudged document taken out of the rankings.

        The judged documents keep their order (``trec_eval -J``, Sakai's condensed lists).
        """
        rows, cols = np.nonzero(self.judged)
        to = np.cumsum(self.judged, axis=1)[rows, cols] - 1  # its rank among the judged
        rel = np.zeros_like(self.rel)
        rel[rows, to] = self.rel[rows, cols]
        judged = np.zeros_like(self.judged)
        judged[rows, to] = True
        n_ret = self.judged.sum(axis=1).astype(np.int64)
        return Judged(rel, self.ideal, self.n_rel, judged, n_ret, self.n_nonrel)


def judge(
    rankings: Sequence[Sequence[str]], qrels: Sequence[Mapping[str, int]], depth: int | None = None
) -> Judged:
    """Build the relevance matrices for rankings and qrels given in the same order.

    ``qrels``: per question, every judged document's grade (a relevant one's gold grade,
    0 for one judged not relevant); a document absent from it is unjudged.
    """
    if len(rankings) != len(qrels):
        raise ValueError("rankings and qrels must have one entry per question")
    longest = max((len(r) for r in rankings), default=0)
    most_judged = max((len(g) for g in qrels), default=0)
    width = max(depth or 0, longest, most_judged, 1)
    n = len(rankings)
    raw = np.full((n, width), -1, dtype=np.int64)  # -1: unjudged, or past the ranking
    ideal = np.zeros((n, width), dtype=np.int64)
    n_rel = np.zeros(n, dtype=np.int64)
    n_nonrel = np.zeros(n, dtype=np.int64)
    n_ret = np.fromiter((len(r) for r in rankings), dtype=np.int64, count=n)
    for i, (ranking, g) in enumerate(zip(rankings, qrels, strict=True)):
        if g:
            row = [g.get(d, -1) for d in ranking]
            if row:
                raw[i, : len(row)] = row
            grades = sorted((v for v in g.values() if is_relevant(v)), reverse=True)
            ideal[i, : len(grades)] = grades
            n_rel[i] = len(grades)
            n_nonrel[i] = sum(1 for v in g.values() if 0 <= v < RELEVANT)
    judged = raw >= 0
    return Judged(np.maximum(raw, 0), ideal, n_rel, judged, n_ret, n_nonrel)


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


def judged_at_k(j: Judged, k: int) -> FloatArray:
    """ir_measures ``Judged@k`` per question: judged share of the top min(k, n); 0 if n = 0."""
    shown = np.minimum(j.n_ret, min(k, j.depth)).astype(np.float64)  # k may pass int64
    judged = j.judged[:, :k].sum(axis=1).astype(np.float64)
    out: FloatArray = np.zeros_like(judged)
    np.divide(judged, shown, out=out, where=shown > 0)
    return out


def bpref(j: Judged) -> FloatArray:
    """trec_eval ``bpref`` per question (see the module's description); 0 when R is 0."""
    relevant = j.rel >= RELEVANT  # a relevant grade is a judgment
    nonrel = j.judged & ~relevant
    above: IntArray = np.cumsum(nonrel, axis=1) - nonrel  # judged non-relevant ranked above
    r = j.n_rel[:, None].astype(np.float64)
    denom = np.minimum(j.n_nonrel[:, None], j.n_rel[:, None]).astype(np.float64)
    wrong = np.zeros(above.shape)
    np.divide(np.minimum(above, r), denom, out=wrong, where=relevant & (above > 0))
    terms = np.where(relevant, 1.0 - wrong, 0.0)
    total = np.cumsum(terms, axis=1)[:, -1]  # rank by rank, in order, as trec_eval adds
    out: FloatArray = np.zeros_like(total)
    np.divide(total, j.n_rel, out=out, where=j.n_rel > 0)
    return out


def per_question(j: Judged, metric: Metric | str) -> FloatArray:
    """Per-question values of one metric."""
    m = parse_metric(metric) if isinstance(metric, str) else metric
    if m.family == "bpref":
        return bpref(j)
    if m.judged_only:
        j = j.condensed
    if m.family == "mrr":
        return reciprocal_rank(j, m.k)
    assert m.k is not None
    if m.family == "judged":
        return judged_at_k(j, m.k)
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
