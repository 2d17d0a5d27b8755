"""What a labeling session holds of one question, and the changes it can undo.

:class:`QuestionState` is one question's judgments as committed, seen by one annotator;
:class:`Change` is one change a :class:`~engine.session.labeling.LabelingSession` made, with what
it replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.gold import Gold, resolve_one, with_recheck
from engine.types import Adjudication, Label, Proposal, Stop, Verdict
from engine.workspace import PROPOSAL_EVENT, STOP_EVENT

if TYPE_CHECKING:
    from engine.workspace import Workspace


@dataclass(frozen=True)
class Change:
    """One change this session made, with what it replaced (for undo)."""

    kind: str
    """``label``, ``verdict``, ``stop``, ``question`` or ``group``."""
    question_id: str
    doc_id: str | None
    old: object
    """The previous grade, (verdict, note), stop rule or question text; None when there was
    none."""
    new: object = None
    """What this session wrote (same forms as ``old``; None: it removed the row).

    Undo reverts only while the workspace still holds it: the same annotator in another
    tab may have changed the row since, and that change is not this session's to undo.
    """


@dataclass(frozen=True)
class QuestionState:
    """Everything judged on one question, as committed, seen by one annotator."""

    question_id: str
    annotator: str
    labels: tuple[Label, ...]
    """Every annotator's labels of the question."""
    verdicts: tuple[Verdict, ...]
    """Every annotator's verdict on the question."""
    adjudication: Adjudication | None
    gold: Gold
    """The question's resolved gold."""
    stale: int = 0
    """Judgments made for an older text of the question (``recheck`` when only these)."""
    stops: tuple[Stop, ...] = ()
    """Every annotator's stop of the question."""
    proposals: tuple[Proposal, ...] = ()
    """Documents proposed beyond the pool, in the order they were proposed."""

    @classmethod
    def of(
        cls,
        question_id: str,
        annotator: str,
        labels: Sequence[Label],
        verdicts: Sequence[Verdict],
        adjudication: Adjudication | None,
        stale: int = 0,
        stops: Sequence[Stop] = (),
        proposals: Sequence[Proposal] = (),
    ) -> QuestionState:
        """Resolve the gold of these rows (``stale``: judgments of an older text)."""
        by: dict[str, dict[str, int]] = {}
        for lab in labels:
            by.setdefault(lab.annotator, {})[lab.doc_id] = lab.grade
        said = {v.annotator: v.verdict for v in verdicts}
        gold = with_recheck(resolve_one(question_id, by, said, adjudication), stale)
        return cls(
            question_id,
            annotator,
            tuple(labels),
            tuple(verdicts),
            adjudication,
            gold,
            stale,
            tuple(stops),
            tuple(proposals),
        )

    def _again(self, **changed: Any) -> QuestionState:
        """The state with some rows replaced, its gold resolved again."""
        rows: dict[str, Any] = {
            "labels": self.labels,
            "verdicts": self.verdicts,
            "adjudication": self.adjudication,
            "stops": self.stops,
            "proposals": self.proposals,
        }
        rows.update(changed)
        return QuestionState.of(
            self.question_id,
            self.annotator,
            rows["labels"],
            rows["verdicts"],
            rows["adjudication"],
            self.stale,
            rows["stops"],
            rows["proposals"],
        )

    @property
    def mine(self) -> dict[str, int]:
        """This annotator's grades: doc id -> grade."""
        return {lab.doc_id: lab.grade for lab in self.labels if lab.annotator == self.annotator}

    @property
    def verdict(self) -> Verdict | None:
        """This annotator's verdict, or None."""
        return next((v for v in self.verdicts if v.annotator == self.annotator), None)

    @property
    def judged(self) -> list[str]:
        """Every document anyone graded, in order."""
        return list(dict.fromkeys(lab.doc_id for lab in self.labels))

    @property
    def proposed(self) -> list[str]:
        """Every document proposed beyond the pool, in the order proposed."""
        return [p.doc_id for p in self.proposals]

    @property
    def stop(self) -> Stop | None:
        """This annotator's stop, or None."""
        return next((s for s in self.stops if s.annotator == self.annotator), None)

    @property
    def stopped(self) -> bool:
        """Someone stopped the question: its candidates nobody judged are not judged (stopped)."""
        return bool(self.stops)

    def with_label(self, doc_id: str, grade: int | None) -> QuestionState:
        """The state after this annotator set (or, with None, removed) one grade."""
        labels = [
            lab
            for lab in self.labels
            if not (lab.annotator == self.annotator and lab.doc_id == doc_id)
        ]
        if grade is not None:
            labels.append(Label(self.question_id, doc_id, self.annotator, grade))
        labels.sort(key=lambda lab: (lab.doc_id, lab.annotator))
        return self._again(labels=labels)

    def with_verdict(self, verdict: Verdict | None) -> QuestionState:
        """The state after this annotator set (or, with None, took back) a verdict."""
        verdicts = [v for v in self.verdicts if v.annotator != self.annotator]
        if verdict is not None:
            verdicts.append(verdict)
        verdicts.sort(key=lambda v: v.annotator)
        return self._again(verdicts=verdicts)

    def with_adjudication(self, adjudication: Adjudication) -> QuestionState:
        """The state after an adjudication."""
        return self._again(adjudication=adjudication)

    def with_stop(self, stop: Stop | None) -> QuestionState:
        """The state after this annotator stopped the question (None: took the stop back)."""
        stops = [s for s in self.stops if s.annotator != self.annotator]
        if stop is not None:
            stops.append(stop)
        stops.sort(key=lambda s: s.annotator)
        return self._again(stops=stops)


JUDGMENT_EVENTS = frozenset(
    {"label", "verdict", "adjudication", "querylog", STOP_EVENT, PROPOSAL_EVENT}
)
"""Event kinds whose change is the named question's judgments only (its labels, verdicts,
adjudication, stops, proposals, query-log status): a session takes them in by re-reading
that question."""


class SessionHost:
    """What the session's mixins read of the session itself, declared once.

    For the type checker only (:mod:`engine.session.questions`, :mod:`engine.session.undo`):
    nothing here exists at run time but the class.
    """

    ws: Workspace
    annotator: str
    undo_stack: list[Change]

    if TYPE_CHECKING:

        def _commit(
            self,
            question_id: str,
            write: Callable[[], object],
            after: Callable[[QuestionState], QuestionState] | None,
        ) -> QuestionState: ...
