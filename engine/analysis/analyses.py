"""Analyses over a workspace, as plain data for the CLI and the UI.

Comparisons, failures, no-answer calibration, parameter sweeps, question overlap,
and what each retriever adds to the pool (latency is in :mod:`engine.scoring`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.analysis.compare import DEFAULT_SAMPLES, Comparison, compare
from engine.analysis.noanswer import Calibration, calibrate
from engine.analysis.overlap import TitleOverlap
from engine.errors import BadInput
from engine.gold import Status
from engine.grades import is_relevant
from engine.metrics import DEFAULT_METRIC, first_gold_rank, judge, mean, parse_metric, per_question
from engine.pooling import DEFAULT_POOL_DEPTH, TopDocs, only_found
from engine.retrieve import DEFAULT_DEPTH, BM25Retriever, bases_of, doc_text
from engine.retrieve.bm25 import MAX_BM25_PARAM
from engine.retrieve.runner import select_retrievers
from engine.scoring import latency as latency  # re-exported: it lived here
from engine.scoring import (
    not_scored,
    paired_board,
    scored_set,
    workspace_golds,
)
from engine.series import OTHER, Relation, RelationKind, relation
from engine.tokenize import bigram_tokens, word_tokens
from engine.types import Doc, RetrieverSpec
from engine.verdict import LEVEL
from engine.workspace import Workspace, WorkspaceError

# -- which retriever ---------------------------------------------------------------------


def analysed_retriever(ws: Workspace, name: str | None) -> str:
    """The retriever an analysis of one retriever looks at: ``name``, else the first.

    The first in the order the retrievers were added (``goldpan retriever list``): the
    Review screen's retriever A starts there too, so ``goldpan failures WS`` and the
    failures panel show the same retriever unless one is named.
    """
    if name is not None:
        return name
    specs = ws.retrievers()
    if not specs:
        raise BadInput("the workspace has no retriever yet: add one with `goldpan retriever add`")
    return specs[0].name


# -- compare -------------------------------------------------------------------------------


def compare_retrievers(
    ws: Workspace,
    a: str,
    b: str,
    metrics: str | Sequence[str] = DEFAULT_METRIC,
    *,
    level: float = LEVEL,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    tag: str | None = None,
    cannot_rank: Collection[str] = (),
) -> list[Comparison]:
    """Paired comparisons of two retrievers on the scored questions (with ``tag``).

    One per metric, in the order given (each metric once), each with its verdict at
    ``level``; the same resamples for every metric. ``cannot_rank``: retrievers known not
    to rank now (:func:`engine.scoring.scored_set`).

    Raises:
        NotScored: A or B has not ranked some scored question and cannot rank it now.
    """
    asked = [metrics] if isinstance(metrics, str) else list(metrics)
    names = list(dict.fromkeys(parse_metric(m).name for m in asked))
    board = paired_board(ws, a, b, names, tag, cannot_rank)
    va, vb = board.retrievers[a].per_question, board.retrievers[b].per_question
    return [compare(a, b, m, va[m], vb[m], level=level, samples=samples, seed=seed) for m in names]


# -- failures ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """A scored question whose first gold document is not at rank 1."""

    question_id: str
    gold: tuple[str, ...]
    gold_rank: int
    """Rank of the first gold document (0 = not in the cached ranking)."""
    top_doc: str | None
    relation: RelationKind
    """``overview``, ``neighbour`` or ``other`` (:func:`engine.series.relation`)."""
    detail: str = "other"
    """The relation in words: ``neighbour in series 'PET 원리' (⑤ vs ⑥)``."""
    gold_doc: str | None = None
    """The gold document the winner is compared with (the most related one, else the
    highest graded)."""
    gold_title: str = ""
    top_title: str = ""
    series: str | None = None
    """The series (or shared field value) the winner and the gold have in common."""


def _beaten(top: Doc, golds: Sequence[Doc]) -> tuple[Doc, Relation]:
    """The gold document ``top`` relates to most (golds in order of grade), and how."""
    related = [(g, relation(top, g)) for g in golds]
    return next(((g, r) for g, r in related if r.kind != "other"), related[0])


def failures(ws: Workspace, retriever: str, tag: str | None = None) -> list[Failure]:
    """Every scored question where ``retriever`` does not put a gold document first.

    Raises:
        NotScored: it has not ranked some scored question and cannot rank it now (never
            ranked here): which of them it fails is unknown, and an empty list would
            read as none.
    """
    select_retrievers(ws, [retriever])
    scope = scored_set(ws, [retriever], tag)
    if lacks := scope.lacks(retriever):
        raise not_scored(retriever, lacks, "which of them it fails is unknown")
    runs = ws.runs(retriever, scope.question_ids)
    out = []
    for qid in scope.question_ids:
        g = scope.golds[qid]
        ranking = runs[qid].doc_ids if qid in runs else ()
        rank = first_gold_rank(ranking, g.gold)
        if rank == 1:
            continue
        by_grade = sorted(g.gold, key=lambda d: (g.gold[d], d), reverse=True)
        gold_docs = [d for d in (ws.doc(i) for i in by_grade) if d is not None]
        top = ranking[0] if ranking else None
        top_doc = ws.doc(top) if top is not None else None
        gold_doc: Doc | None = gold_docs[0] if gold_docs else None
        rel = OTHER
        if top_doc is not None and gold_docs:
            gold_doc, rel = _beaten(top_doc, gold_docs)
        out.append(
            Failure(
                qid,
                tuple(sorted(g.gold)),
                rank,
                top,
                rel.kind,
                rel.detail,
                gold_doc.id if gold_doc else None,
                gold_doc.title if gold_doc else "",
                top_doc.title if top_doc else "",
                rel.series,
            )
        )
    return out


# -- no answer -----------------------------------------------------------------------------


def noanswer_calibration(ws: Workspace, retriever: str) -> Calibration:
    """Top-1 scores of answerable vs no-answer questions and the threshold table.

    Answerable: the scored questions it has ranked; no-answer: the no-answer questions
    it has ranked (one it has not ranked yet has no top-1 score, not a score of 0).
    """
    select_retrievers(ws, [retriever])
    scope = scored_set(ws, [retriever])
    unranked = scope.not_ranked.get(retriever, set())
    runs = ws.runs(retriever)

    def top1(qid: str) -> float:
        run = runs.get(qid)
        return float(run.scores[0]) if run and run.scores else 0.0

    answerable = [top1(q) for q in scope.ranked_by(retriever)]
    no_answer = [
        top1(q)
        for q, g in scope.golds.items()
        if g.status is Status.NO_ANSWER and q not in unranked
    ]
    return calibrate(retriever, answerable, no_answer)


# -- sweep ---------------------------------------------------------------------------------

SWEEP_K1 = (0.9, 1.2, 1.5, 2.0)
"""The k1 values of a BM25 sweep when none are named (``sweep --k1``, the Review panel)."""

SWEEP_B = (0.4, 0.6, 0.75, 0.9)
"""The b values of a BM25 sweep when none are named (``sweep --b``, the Review panel)."""


@dataclass(frozen=True)
class SweepCell:
    """One (k1, b) cell of a parameter sweep."""

    k1: float
    b: float
    value: float


def sweepable(ws: Workspace, retriever: str) -> RetrieverSpec:
    """The BM25 retriever named ``retriever``, whose k1 and b a sweep varies.

    Raises:
        WorkspaceError: no such retriever, or one of another kind.
    """
    (spec,) = select_retrievers(ws, [retriever])
    if spec.kind != "bm25":
        raise WorkspaceError(f"{retriever} is a {spec.kind} retriever; only bm25 has k1 and b")
    return spec


def sweep(
    ws: Workspace,
    retriever: str,
    k1s: Sequence[float],
    bs: Sequence[float],
    metric: str = DEFAULT_METRIC,
    tag: str | None = None,
) -> list[SweepCell]:
    """The metric of a BM25 retriever over a (k1, b) grid, on the scored questions.

    Nothing is cached or stored: each cell ranks the scored questions again. The cell at
    the retriever's own parameters equals ``goldpan score``.
    """
    spec = sweepable(ws, retriever)
    bad = [f"k1={k}" for k in k1s if not (math.isfinite(k) and 0 <= k <= MAX_BM25_PARAM)]
    bad += [f"b={b}" for b in bs if not (math.isfinite(b) and 0 <= b <= 1)]
    if bad:
        raise BadInput(
            f"{', '.join(bad)}: k1 must be from 0 to {MAX_BM25_PARAM:,} and b between 0 and 1"
        )
    m = parse_metric(metric)
    # rank as deep as the cached runs, so the own-parameters cell equals `goldpan score`
    depth = max((d for _, d in ws.run_hashes(retriever).values()), default=DEFAULT_DEPTH)
    scope = scored_set(ws, [retriever], tag)
    golds, scored = scope.golds, scope.question_ids
    questions = {q.id: q for q in ws.questions()}
    docs = ws.docs()
    shared: dict[Any, Any] = {}
    cells = []
    for k1 in k1s:
        for b in bs:
            params = {**spec.params, "k1": float(k1), "b": float(b)}
            r = BM25Retriever(RetrieverSpec(spec.name, "bm25", params))
            r.prepare(docs, shared)
            rankings = [r.search(questions[q].text, depth)[0] for q in scored]
            j = judge(rankings, [golds[q].qrels for q in scored])
            cells.append(SweepCell(float(k1), float(b), mean(per_question(j, m))))
    return cells


# -- overlap -------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuestionOverlap:
    """How much of a question's words come from titles and from its gold documents."""

    question_id: str
    title: float
    """Highest share of the question's tokens found in one title (word or bigram)."""
    gold: float | None
    """Share of the question's tokens found in its gold documents' text (None: no gold)."""

    @property
    def high(self) -> bool:
        """Likely an easy question (copies a title)."""
        from engine.analysis.overlap import EASY_THRESHOLD

        return self.title >= EASY_THRESHOLD


def _share(question: str, text: str) -> float:
    best = 0.0
    for tok in (word_tokens, bigram_tokens):
        q = set(tok(question))
        if q:
            best = max(best, len(q & set(tok(text))) / len(q))
    return best


def question_overlaps(ws: Workspace) -> list[QuestionOverlap]:
    """Every question's overlap with the nearest title and with its gold text."""
    docs = {d.id: d for d in ws.docs()}
    titles = TitleOverlap([d.title for d in docs.values()])
    golds = workspace_golds(ws)
    out = []
    for q in ws.questions():
        g = golds.get(q.id)
        gold_text = " ".join(
            doc_text(docs[d], ("title", "text")) for d in (g.gold if g else {}) if d in docs
        )
        out.append(
            QuestionOverlap(
                q.id, titles.overlap(q.text).score, _share(q.text, gold_text) if gold_text else None
            )
        )
    return out


# -- pool contributions --------------------------------------------------------------------


@dataclass(frozen=True)
class Contribution:
    """What one first-stage retriever alone put in the pool."""

    retriever: str
    only: list[tuple[str, str]]
    """(question id, doc id) pairs in its top k that no other first-stage retriever has."""
    gold: int
    """How many of them are gold (graded relevant in the resolved gold)."""


def _covers(top: Mapping[str, Sequence[str]], question_ids: Sequence[str]) -> bool:
    """Whether ``top`` has every one of ``question_ids``."""
    if isinstance(top, TopDocs):
        return top.covers(question_ids)
    return len(top) >= len(question_ids) and all(q in top for q in question_ids)


def pool_contributions(
    ws: Workspace,
    depth: int = DEFAULT_POOL_DEPTH,
    ranked: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> dict[str, Contribution | None]:
    """Per retriever, the pooled documents only it found (None for fusion and rerank kinds).

    Only first-stage retrievers (those that read no other retriever's rankings) count:
    a fusion or a reranker reorders what its bases found, so a document it "alone" found
    would be its bases' too. This is the pool-bias check of TREC: a retriever whose unique
    documents turn out gold is one the test set would be unfair to without it.

    ``ranked`` (retriever -> question id -> at least its top ``depth`` doc ids) is what a
    pool just made (:attr:`~engine.retrieve.runner.RunReport.top`): a retriever it holds
    for every question is not read back from the workspace.
    """
    specs = ws.retrievers()
    first = [s.name for s in specs if not bases_of(s)]
    qids = ws.question_ids()
    ranked = ranked or {}
    rankings: dict[str, Mapping[str, Sequence[str]]] = {}
    for name in first:
        mine = ranked.get(name)
        if mine is not None and _covers(mine, qids):
            rankings[name] = mine
        else:
            rankings[name] = {q: r.doc_ids for q, r in ws.runs(name).items()}
    only = only_found(rankings, qids, depth)  # each retriever's pairs sorted
    # a document is gold for a question only where someone graded it relevant there or an
    # adjudication settled the question: only those questions' judgments are read
    graded, settled = ws.maybe_relevant_pairs(), ws.adjudicated_ids()
    needed = (
        {q for pairs in only.values() for q, d in pairs if (q, d) in graded or q in settled}
        if graded or settled
        else set()
    )
    golds = workspace_golds(ws, sorted(needed)) if needed else {}
    out: dict[str, Contribution | None] = {}
    for spec in specs:
        pairs = only.get(spec.name)
        if pairs is None:
            out[spec.name] = None
            continue
        gold = (
            sum(1 for q, d in pairs if q in golds and is_relevant(golds[q].gold.get(d, 0)))
            if golds
            else 0
        )
        out[spec.name] = Contribution(spec.name, pairs, gold)
    return out
