"""The counters every view shows, each defined once: judged, disputed, left to judge.

The label and questions screens, the served (browser) app and ``goldpan info`` count
with these functions, so a number means the same wherever it appears:

* **judged by an annotator**: they gave the question a verdict (no answer, ambiguous,
  skip, answerable), or graded every one of its candidates (the pooled documents plus
  any document someone added from corpus search), or their grades of it came from a gold
  import (qrels, a questions file's gold, BEIR, SQuAD: such a file states the question's
  whole gold, :data:`engine.workspace.GOLD_IMPORT_EVENT`). One grade out of eighteen is
  not a judged question.
* **disputed**: the question needs an adjudicator: annotators disagree, or one flagged
  it ambiguous (:data:`engine.gold.NEEDS_ADJUDICATION`); an adjudicated question is not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from engine.gold import NEEDS_ADJUDICATION, Gold, workspace_golds
from engine.pooling import DEFAULT_POOL_DEPTH, pooled_docs
from engine.types import Label, Verdict

if TYPE_CHECKING:
    from engine.workspace import Workspace

Rankings = Mapping[str, Mapping[str, Sequence[str]]]
"""Retriever name -> question id -> doc ids in rank order."""


def candidate_ids(
    question_id: str,
    rankings: Rankings,
    graded: Iterable[str] = (),
    depth: int = DEFAULT_POOL_DEPTH,
) -> set[str]:
    """The documents to judge on a question (the label screen's candidates).

    Every retriever's top ``depth`` (the question's pool, :func:`engine.pooling.pooled_docs`),
    and every document anyone graded: the documents of :func:`engine.pooling.pool`, without
    its blinded order (a hash per document), which a set does not need.
    """
    return set(graded).union(pooled_docs(rankings, question_id, depth))


def is_judged(
    grades: Mapping[str, int],
    has_verdict: bool,
    candidates: Iterable[str],
    gold_imported: bool = False,
) -> bool:
    """Whether one annotator has judged a question (see the module doc).

    A verdict, every candidate graded, or grades from a gold import.
    ``grades`` are that annotator's (doc id -> grade), ``candidates`` the question's
    documents to judge (:func:`candidate_ids`), ``gold_imported`` whether a gold import
    wrote their judgments of it. A question with no candidate and no verdict is not
    judged, nor one whose imported grades are all gone.
    """
    if has_verdict or (gold_imported and grades):
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
    out: dict[str, set[str]] = {}
    for q in question_ids:
        by = grades.get(q, {})
        who = set(by) | said.get(q, set())
        if not who:
            continue
        docs = candidate_ids(q, rankings, {d for g in by.values() for d in g}, depth)
        for a in who:
            if is_judged(by.get(a, {}), a in said.get(q, set()), docs, (q, a) in imported):
                out.setdefault(a, set()).add(q)
    return out


def left_to_judge(order: Sequence[str], judged: set[str]) -> list[str]:
    """The questions of ``order`` not in ``judged``, in order (named at a list's end)."""
    return [q for q in order if q not in judged]


def workspace_counters(ws: Workspace) -> dict[str, object]:
    """What ``goldpan info`` shows: questions judged per annotator and disputed ones."""
    qids = ws.question_ids()
    golds = workspace_golds(ws)
    judged = judged_by(
        qids, ws.all_runs(), ws.labels(), ws.verdicts(), gold_imported=ws.gold_imported()
    )
    return {
        "judged_by": {a: len(judged.get(a, set())) for a in sorted(ws.annotators())},
        "disputed": sum(1 for g in golds.values() if is_disputed(g)),
    }
