"""Gold resolution: from every annotator's labels and verdicts to one status per question.

The rules (docs/numbers.md, "How the numbers are made", says the same for users):

1. An adjudication is final: its gold set, or no answer.
2. Otherwise each annotator has a view of the question:

   * ``skip`` verdict: no view (the annotator could not judge);
   * ``no_answer`` verdict: "nothing in the corpus answers it";
   * ``ambiguous`` verdict: the question needs an adjudicator;
   * labels with a grade >= 1: "these documents answer it";
   * only grade-0 labels and no verdict: no gold found yet.

3. Any ambiguous flag makes the question *ambiguous*. Annotators with a gold set or a
   no-answer verdict must agree: the same verdict and the same set of relevant documents
   (grade >= 1). The agreed gold grade of a document is the lowest grade given to it
   (the conservative choice; nDCG uses it). An annotator without gold yet disagrees only
   when they graded 0 a document that another annotator marked relevant.
4. Judgments made for an earlier text of the question (``made_for`` in the workspace, set
   when a re-import changed the text) are not read at all: a question judged only for
   an older text is *recheck* (:func:`with_recheck`), left out of scores and counted.
5. Disagreement makes the question *disputed*. Ambiguous and disputed questions are left
   out of scores until adjudicated; "no gold yet" questions too (trec_eval would score
   them 0), so a half-labeled question never drags a score down silently.
6. A labeled question that a retriever of the score has not ranked yet
   (:mod:`engine.ranked`) is left out too, counted as ``not_ranked``: a missing
   ranking is never scored as a miss (:func:`is_scored`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from engine.grades import is_relevant
from engine.types import Adjudication, Label, Verdict

if TYPE_CHECKING:
    from engine.workspace import Workspace


class Status(StrEnum):
    """Where a question stands."""

    UNLABELED = "unlabeled"
    NO_GOLD_YET = "no_gold_yet"
    LABELED = "labeled"
    NO_ANSWER = "no_answer"
    AMBIGUOUS = "ambiguous"
    DISPUTED = "disputed"
    RECHECK = "recheck"
    """Every judgment was made for an earlier text of the question (a re-import changed
    it): nothing holds for the current text until someone judges it again."""


NEEDS_ADJUDICATION = frozenset({Status.DISPUTED, Status.AMBIGUOUS})
"""What every view counts as *disputed*: annotators disagree, or one flagged the question
ambiguous; either way an adjudicator settles it (engine/counters.py)."""


COUNT_KEYS = ("scored", "not_ranked", "no_answer", "disputed", "recheck", "unlabeled")
"""The buckets of the score counts, in their order (:func:`counted_as`)."""


@dataclass(frozen=True)
class Gold:
    """The resolved state of one question."""

    question_id: str
    status: Status
    gold: Mapping[str, int] = field(default_factory=dict)
    """doc id -> grade (>= 1) when the status is ``labeled``."""
    annotators: tuple[str, ...] = ()
    adjudicated: bool = False
    judged: frozenset[str] = frozenset()
    """Every document a person judged for the question's current text, grade 0 included
    (labels of annotators who did not skip it, and the adjudication's documents). A model
    judge's grades are never judgments here."""

    @property
    def qrels(self) -> dict[str, int]:
        """Every judged document's grade: its gold grade, 0 when judged not relevant.

        What the metrics read (:func:`engine.metrics.judge`): a document absent from it
        is unjudged, which only Judged@k, bpref and the judged-only metrics tell from 0.
        """
        out = dict.fromkeys(sorted(self.judged), 0)
        out.update(self.gold)
        return out

    @property
    def count_as(self) -> str:
        """The bucket of the score counts by the gold alone (:func:`counted_as`).

        scored (labeled: gold to score a ranking against), no_answer, disputed, recheck
        or unlabeled.
        """
        if self.status is Status.LABELED:
            return "scored"
        if self.status is Status.NO_ANSWER:
            return "no_answer"
        if self.status in NEEDS_ADJUDICATION:
            return "disputed"
        if self.status is Status.RECHECK:
            return "recheck"
        return "unlabeled"


def with_recheck(gold: Gold, stale: int) -> Gold:
    """``gold``, or ``recheck`` when only judgments of an older text exist.

    ``stale`` judgments were made for an older text of the question; when none made for
    the current text gives the question a status of its own, it needs re-check.
    """
    if stale and gold.status in (Status.UNLABELED, Status.NO_GOLD_YET):
        return Gold(gold.question_id, Status.RECHECK, {}, gold.annotators, gold.adjudicated)
    return gold


def resolve(
    question_ids: Iterable[str],
    labels: Iterable[Label],
    verdicts: Iterable[Verdict],
    adjudications: Iterable[Adjudication] = (),
) -> dict[str, Gold]:
    """The :class:`Gold` of every question, by question id."""
    by_q_labels: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for lab in labels:
        by_q_labels[lab.question_id][lab.annotator][lab.doc_id] = lab.grade
    by_q_verdicts: dict[str, dict[str, str]] = defaultdict(dict)
    for v in verdicts:
        by_q_verdicts[v.question_id][v.annotator] = v.verdict
    adj = {a.question_id: a for a in adjudications}
    return {
        qid: resolve_one(qid, by_q_labels.get(qid, {}), by_q_verdicts.get(qid, {}), adj.get(qid))
        for qid in question_ids
    }


def workspace_golds(
    ws: Workspace,
    question_ids: Iterable[str] | None = None,
    *,
    labels: Iterable[Label] | None = None,
    adjudications: Iterable[Adjudication] | None = None,
) -> dict[str, Gold]:
    """Resolved gold of every question of the workspace (or of ``question_ids`` only).

    Judgments made for an earlier text of a question are not read (the workspace leaves
    them out); a question with only such judgments is ``recheck``. ``labels`` and
    ``adjudications``: the workspace's, when the caller has just read them.
    """
    ids = ws.question_ids() if question_ids is None else list(question_ids)
    some = None if question_ids is None else ids  # only their judgments are read
    golds = resolve(
        ids,
        ws.labels(some) if labels is None else labels,
        ws.verdicts(some),
        ws.adjudications(some) if adjudications is None else adjudications,
    )
    for qid, stale in ws.recheck_counts().items():
        if qid in golds:
            golds[qid] = with_recheck(golds[qid], stale)
    return golds


def resolve_one(
    question_id: str,
    labels: Mapping[str, Mapping[str, int]],
    verdicts: Mapping[str, str],
    adjudication: Adjudication | None = None,
) -> Gold:
    """Resolve one question from ``annotator -> doc -> grade`` and ``annotator -> verdict``."""
    annotators = tuple(sorted(set(labels) | set(verdicts)))
    judged = frozenset(
        d for a, graded in labels.items() if verdicts.get(a) != "skip" for d in graded
    )
    if adjudication is not None:
        if adjudication.no_answer:
            return Gold(question_id, Status.NO_ANSWER, {}, annotators, True)
        gold = {d: g for d, g in adjudication.gold.items() if is_relevant(g)}
        status = Status.LABELED if gold else Status.NO_GOLD_YET
        return Gold(question_id, status, gold, annotators, True, judged | set(adjudication.gold))
    if any(v == "ambiguous" for v in verdicts.values()):
        return Gold(question_id, Status.AMBIGUOUS, {}, annotators)
    opinions: dict[str, frozenset[str] | None] = {}  # None = no answer
    zeros: dict[str, set[str]] = {}
    for a in annotators:
        verdict = verdicts.get(a)
        if verdict == "skip":
            continue
        if verdict == "no_answer":
            opinions[a] = None
            continue
        graded = labels.get(a, {})
        relevant = frozenset(d for d, g in graded.items() if is_relevant(g))
        if relevant:
            opinions[a] = relevant
        else:
            zeros[a] = {d for d, g in graded.items() if g == 0}
    if not opinions:
        status = Status.NO_GOLD_YET if zeros else Status.UNLABELED
        return Gold(question_id, status, {}, annotators)
    distinct = set(opinions.values())
    if len(distinct) != 1:
        return Gold(question_id, Status.DISPUTED, {}, annotators)
    (agreed,) = distinct
    if agreed is None:
        return Gold(question_id, Status.NO_ANSWER, {}, annotators)
    if any(z & agreed for z in zeros.values()):
        return Gold(question_id, Status.DISPUTED, {}, annotators)
    gold = {d: min(labels[a][d] for a in opinions) for d in sorted(agreed)}
    return Gold(question_id, Status.LABELED, gold, annotators, judged=judged)


def question_counts(ws: Workspace, tag: str | None = None) -> dict[str, int]:
    """How many of the workspace's questions (with ``tag``) fall in each :data:`COUNT_KEYS`.

    By the gold alone: ``scored`` counts the questions a score is over once every
    retriever has ranked them (what a command checks before it pools); the others are
    what it leaves out.
    """
    ids = None if tag is None else [q.id for q in ws.questions() if tag in q.tags]
    return count_golds(workspace_golds(ws, ids).values())


def counted_as(gold: Gold, ranked: bool = True) -> str:
    """The bucket of :data:`COUNT_KEYS` a question falls in.

    :attr:`Gold.count_as`, except that a labeled question some retriever of the score
    has not ranked (``ranked`` False, :mod:`engine.ranked`) is ``not_ranked``, never a
    miss.
    """
    bucket = gold.count_as
    return "not_ranked" if bucket == "scored" and not ranked else bucket


def is_scored(gold: Gold, ranked: bool = True) -> bool:
    """Whether a question is scored with ranking metrics: the one definition.

    It has gold (its status is labeled) and every retriever of the score has ranked it
    for its inputs now (``ranked``: :func:`engine.ranked.left_out` does not hold it).
    Callers: :func:`scored_questions` (and through it :func:`engine.scoring.scored_set`:
    ``goldpan score``, compare, power, snapshots, failures, noanswer, sweep, the fusion
    sweep, the Python API), :class:`engine.live.LiveScores` (the review screen) and the
    pytest plugin's collection.
    """
    return counted_as(gold, ranked) == "scored"


def scored_questions(golds: Mapping[str, Gold], not_ranked: Collection[str] = ()) -> list[str]:
    """The questions of ``golds`` a score is over (:func:`is_scored`), in code-point order.

    ``not_ranked``: questions some retriever of the score has not ranked.
    """
    return sorted(q for q, g in golds.items() if is_scored(g, q not in not_ranked))


def count_golds(golds: Iterable[Gold], not_ranked: Collection[str] = ()) -> dict[str, int]:
    """How many of ``golds`` fall in each of :data:`COUNT_KEYS` (:func:`counted_as`).

    ``not_ranked``: questions some retriever of the score has not ranked.
    """
    counts = dict.fromkeys(COUNT_KEYS, 0)
    for g in golds:
        counts[counted_as(g, g.question_id not in not_ranked)] += 1
    return counts
