"""The counters every view shows, each defined once: judged, disputed, left to judge.

The label and questions screens, the served (browser) app and ``goldpan info`` count
with these functions, so a number means the same wherever it appears:

* **judged by an annotator**: they gave the question a verdict (no answer, ambiguous,
  skip, answerable), stopped it (:mod:`engine.judging.stopping`), or graded every one of its
  candidates (the pooled documents, any document someone added from corpus search and
  any proposed beyond the pool), or their grades of it came from a gold import (qrels,
  a questions file's gold, BEIR, SQuAD: such a file states the question's whole gold,
  :data:`engine.workspace.GOLD_IMPORT_EVENT`). One grade out of eighteen is not a
  judged question.
* **disputed**: the question needs an adjudicator: annotators disagree, or one flagged
  it ambiguous (:data:`engine.gold.NEEDS_ADJUDICATION`); an adjudicated question is not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from engine.gold import NEEDS_ADJUDICATION, Gold, workspace_golds
from engine.judging.stopping import stopped_left
from engine.pooling import DEFAULT_POOL_DEPTH, pooled_docs
from engine.types import Label, Proposal, Stop, Verdict

if TYPE_CHECKING:
    from engine.workspace import Workspace

Rankings = Mapping[str, Mapping[str, Sequence[str]]]
"""Retriever name -> question id -> doc ids in rank order."""


def candidate_ids(
    question_id: str,
    rankings: Rankings,
    extra: Iterable[str] = (),
    depth: int = DEFAULT_POOL_DEPTH,
) -> set[str]:
    """The documents to judge on a question (the label screen's candidates).

    Every retriever's top ``depth`` (the question's pool, :func:`engine.pooling.pooled_docs`),
    and ``extra``: every document anyone graded and every one proposed beyond the pool (the
    documents of :func:`engine.pooling.pool`, without the judging order, which a set does
    not need).
    """
    return set(extra).union(pooled_docs(rankings, question_id, depth))


def is_judged(
    grades: Mapping[str, int],
    has_verdict: bool,
    candidates: Iterable[str],
    gold_imported: bool = False,
    stopped: bool = False,
) -> bool:
    """Whether one annotator has judged a question (see the module doc).

    A verdict, a stop, every candidate graded, or grades from a gold import.
    ``grades`` are that annotator's (doc id -> grade), ``candidates`` the question's
    documents to judge (:func:`candidate_ids`), ``gold_imported`` whether a gold import
    wrote their judgments of it, ``stopped`` whether they stopped it. A question with no
    candidate and no verdict is not judged, nor one whose imported grades are all gone.
    """
    if has_verdict or stopped or (gold_imported and grades):
        return True
    docs = set(candidates)
    return bool(docs) and docs <= grades.keys()


def is_disputed(gold: Gold) -> bool:
    """Whether a question needs an adjudicator (disputed or flagged ambiguous)."""
    return gold.status in NEEDS_ADJUDICATION


def judged_by(
    question_ids: Iterable[str],
    rankings: Rankings,
    labels: Iterable[Label],
    verdicts: Iterable[Verdict],
    depth: int = DEFAULT_POOL_DEPTH,
    gold_imported: Collection[tuple[str, str]] = (),
    *,
    stops: Iterable[Stop] = (),
    proposals: Iterable[Proposal] = (),
) -> dict[str, set[str]]:
    """Annotator -> the questions they judged (:func:`is_judged`), over every annotator.

    ``gold_imported`` holds the (question id, annotator) pairs a gold import wrote
    (:meth:`engine.workspace.Workspace.gold_imported`).
    """
    grades: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for lab in labels:
        grades[lab.question_id][lab.annotator][lab.doc_id] = lab.grade
    said: dict[str, set[str]] = defaultdict(set)
    for v in verdicts:
        said[v.question_id].add(v.annotator)
    imported = set(gold_imported)
    stopped: dict[str, set[str]] = defaultdict(set)
    for s in stops:
        stopped[s.question_id].add(s.annotator)
    proposed: dict[str, set[str]] = defaultdict(set)
    for p in proposals:
        proposed[p.question_id].add(p.doc_id)
    out: dict[str, set[str]] = {}
    for q in question_ids:
        by = grades.get(q, {})
        who = set(by) | said.get(q, set()) | stopped.get(q, set())
        if not who:
            continue
        extra = {d for g in by.values() for d in g} | proposed.get(q, set())
        docs = candidate_ids(q, rankings, extra, depth)
        for a in who:
            judged = is_judged(
                by.get(a, {}),
                a in said.get(q, set()),
                docs,
                gold_imported=(q, a) in imported,
                stopped=a in stopped.get(q, ()),
            )
            if judged:
                out.setdefault(a, set()).add(q)
    return out


def left_to_judge(order: Sequence[str], judged: set[str]) -> list[str]:
    """The questions of ``order`` not in ``judged``, in order (named at a list's end)."""
    return [q for q in order if q not in judged]


def workspace_counters(ws: Workspace) -> dict[str, object]:
    """What ``goldpan info`` shows: questions judged per annotator and disputed ones."""
    qids = ws.question_ids()
    golds = workspace_golds(ws)
    runs = ws.all_runs()
    judged = judged_by(
        qids,
        runs,
        ws.labels(),
        ws.verdicts(),
        gold_imported=ws.gold_imported(),
        stops=ws.stops(),
        proposals=ws.proposals(),
    )
    left = workspace_stopped(ws, qids, runs)
    return {
        "judged_by": {a: len(judged.get(a, set())) for a in sorted(ws.annotators())},
        "disputed": sum(1 for g in golds.values() if is_disputed(g)),
        "stopped": {"questions": len(left), "candidates": sum(left.values())},
    }


def workspace_stopped(
    ws: Workspace,
    question_ids: Iterable[str] | None = None,
    rankings: Rankings | None = None,
) -> dict[str, int]:
    """Stopped question -> its candidates not judged (stopped), over the workspace.

    Only ``question_ids`` when given (a tag's questions); ``rankings``: the workspace's
    cached ones when the caller holds them already (a session's live scores).
    """
    ids = ws.question_ids() if question_ids is None else list(question_ids)
    stops = ws.stops(ids)
    if not stops:
        return {}
    wanted = sorted({s.question_id for s in stops})
    runs = ws.all_runs() if rankings is None else rankings
    return stopped_per_question(wanted, runs, ws.labels(wanted), stops, ws.proposals(wanted))


def stopped_per_question(
    question_ids: Iterable[str],
    rankings: Rankings,
    labels: Iterable[Label],
    stops: Iterable[Stop],
    proposals: Iterable[Proposal],
    depth: int = DEFAULT_POOL_DEPTH,
) -> dict[str, int]:
    """Stopped question -> its candidates nobody judged.

    Per :func:`engine.judging.stopping.stopped_left`.
    """
    ids = set(question_ids)
    stops = [s for s in stops if s.question_id in ids]
    wanted = {s.question_id for s in stops}
    judged: dict[str, set[str]] = defaultdict(set)
    for lab in labels:
        if lab.question_id in wanted:
            judged[lab.question_id].add(lab.doc_id)
    proposed: dict[str, set[str]] = defaultdict(set)
    for p in proposals:
        if p.question_id in wanted:
            proposed[p.question_id].add(p.doc_id)
    candidates = {q: candidate_ids(q, rankings, judged[q] | proposed[q], depth) for q in wanted}
    return stopped_left(candidates, judged, stops)
