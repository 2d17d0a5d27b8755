"""Work handed out to a team labeling one workspace at once (``goldpan serve``).

Each annotator's next question is one they have not judged, that fewer than ``K``
annotators have judged, that is not adjudicated, and that nobody else is judging right
now. Among those, the most needed comes first: the fewest annotators so far, then the
judging queue's order (:mod:`engine.judging.queue`: most unjudged pooled documents first).

"Nobody else is judging it" is a lease in the workspace: taken in one transaction with
the choice (so two annotators choosing at the same moment never get the same question),
renewed while the question is open, given up when the annotator moves on or leaves, and
free again once it expires (a session that vanished without a word).
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Mapping, Sequence, Set

from engine.errors import BadInput
from engine.gold import Gold, workspace_golds
from engine.judging.queue import DEFAULT_K, judged_docs, queue_order
from engine.workspace import LeaseState, Workspace

DEFAULT_PER_QUESTION = 2
"""How many annotators judge each question unless told otherwise."""

LEASE_SECONDS = 90.0
"""How long a lease lasts without renewal; an open question renews it every third of that."""


def handout_order(
    question_ids: Sequence[str],
    queue_rank: Mapping[str, int],
    judges: Mapping[str, Collection[str]],
) -> list[str]:
    """Questions by need: fewest annotators first, then the judging queue, then id."""
    last = len(queue_rank)
    return sorted(question_ids, key=lambda q: (len(judges.get(q, ())), queue_rank.get(q, last), q))


def eligible(question_id: str, annotator: str, per_question: int, state: LeaseState) -> bool:
    """Whether ``annotator`` may be handed ``question_id`` now."""
    judges = state.judges.get(question_id, set())
    return (
        question_id not in state.adjudicated
        and question_id not in state.held
        and annotator not in judges
        and len(judges) < per_question
    )


class Assigner:
    """One annotator's session: the question leased to it, and the next one on request."""

    def __init__(
        self,
        ws: Workspace,
        annotator: str,
        *,
        per_question: int = DEFAULT_PER_QUESTION,
        lease_seconds: float = LEASE_SECONDS,
        k: int = DEFAULT_K,
    ) -> None:
        """Hand out ``ws``'s questions to ``annotator``; ``k`` is the judging queue's depth."""
        if per_question < 1:
            raise BadInput("--per-question must be at least 1")
        self.ws = ws
        self.annotator = annotator
        self.per_question = per_question
        self.lease_seconds = lease_seconds
        self.k = k
        self.holder = secrets.token_hex(8)
        """This session's id on its lease (not a secret: it grants nothing)."""
        self.current: str | None = None
        """The question this session holds a lease on."""
        self.passed: set[str] = set()
        """Questions this session moved on from: not handed to it again."""

    def queue_rank(
        self,
        rankings: Mapping[str, Mapping[str, Sequence[str]]],
        *,
        golds: Mapping[str, Gold] | None = None,
        pools: Mapping[str, Set[str]] | None = None,
    ) -> dict[str, int]:
        """Each question's place in the judging queue (questions not in it are left out).

        ``golds`` and ``pools`` (every question's, at depth ``k``) when the caller keeps
        them current already (a labeling session's live scores); else read and made here.
        """
        ws = self.ws
        judged = judged_docs([(lab.question_id, lab.doc_id) for lab in ws.labels()])
        golds = workspace_golds(ws) if golds is None else golds
        stopped = dict.fromkeys({s.question_id for s in ws.stops()}, 0)  # only which ones
        order = queue_order(golds, rankings, judged, self.k, pools=pools, stopped=stopped)
        return {qid: i for i, qid in enumerate(order)}

    def next(
        self,
        rankings: Mapping[str, Mapping[str, Sequence[str]]],
        *,
        golds: Mapping[str, Gold] | None = None,
        pools: Mapping[str, Set[str]] | None = None,
    ) -> str | None:
        """Move on: lease the most needed question for this annotator (None: nothing left).

        The question held until now counts as passed, and its lease is given up in the same
        transaction. ``golds`` and ``pools``: as for :meth:`queue_rank`.
        """
        if self.current is not None:
            self.passed.add(self.current)
        # a stale order only changes who goes first
        rank = self.queue_rank(rankings, golds=golds, pools=pools)
        ids = self.ws.question_ids()

        def pick(state: LeaseState) -> str | None:
            for qid in handout_order(ids, rank, state.judges):
                if qid not in self.passed and eligible(
                    qid, self.annotator, self.per_question, state
                ):
                    return qid
            return None

        self.current = self.ws.take_lease(self.holder, self.annotator, self.lease_seconds, pick)
        return self.current

    def hold(self, question_id: str) -> str:
        """Lease a question the annotator opened themselves; returns who holds it now."""
        holder = self.ws.hold_lease(question_id, self.annotator, self.holder, self.lease_seconds)
        if holder == self.annotator:
            self.current = question_id
        return holder

    def renew(self) -> str | None:
        """Keep the lease of the open question; None when it had expired (it is taken again)."""
        renewed = self.ws.renew_lease(self.holder, self.lease_seconds)
        if (
            renewed is None
            and self.current is not None
            and self.hold(self.current) != self.annotator
        ):
            self.current = None
        return renewed

    def release(self) -> None:
        """Give up the lease (the annotator left)."""
        self.ws.release_lease(self.holder)
        self.current = None
