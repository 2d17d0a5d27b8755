"""A labeling session: one annotator's changes to a workspace, with undo and live scores.

The judge screen (and ``goldpan label``) go through this object: every change is one small
transaction, committed before the call returns, and the question's resolved gold and its
row in the live scores are updated at once. Undo walks back this session's own changes.

The session is one idea per module: what it holds of a question and its changes
(:mod:`engine.session.state`), its undo (:mod:`engine.session.undo`), the questions it
adds and edits (:mod:`engine.session.questions`) and what the screens read
(:mod:`engine.session.reads`); this module loads, catches up and judges.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from engine.counters import candidate_ids, is_judged, judged_by, workspace_stopped
from engine.gold import Gold, workspace_golds
from engine.grades import GRADE_RANGE, GRADES, is_relevant
from engine.judging.order import PoolView, Record, candidate_order, record_of
from engine.judging.settings import JudgingSettings, workspace_judging
from engine.judging.stopping import Offer, offer
from engine.pooling import DEFAULT_POOL_DEPTH, Candidate, pool
from engine.ranked import not_ranked
from engine.session.questions import SessionQuestions
from engine.session.reads import SessionReads
from engine.session.state import JUDGMENT_EVENTS, Change, QuestionState
from engine.session.undo import SessionUndo
from engine.types import VERDICTS, Adjudication, Label, Proposal, Stop, Verdict
from engine.workspace import RANKED_EVENT, Workspace, WorkspaceError

__all__ = ["JUDGMENT_EVENTS", "Change", "LabelingSession", "QuestionState"]

if TYPE_CHECKING:
    from engine.live import LiveScores
    from engine.scoring import Latency

Timings = Mapping[str, tuple[Sequence[float], Sequence[float]]]
"""Per retriever: batch shares and times alone (ms), as :meth:`Workspace.latencies` reads
them and :func:`engine.scoring.latency_of` takes them."""


class LabelingSession(SessionQuestions, SessionUndo, SessionReads):
    """One annotator working on one workspace (main-thread connection).

    Another process (an annotator on the same file, ``goldpan label``, a pooling worker)
    may commit at any time. The session notices through SQLite's ``PRAGMA data_version``,
    which moves when *another* connection commits: every write checks it before and after
    its own commit, so no one else's change is ever absorbed. It then takes in what the
    event log says changed since the last event it applied (:meth:`catch_up`): a grade,
    verdict or adjudication re-reads that question alone; a ranking re-reads that
    question's rankings; anything the log cannot say per question (an import, a new
    question or retriever, a schema change) reloads everything.
    """

    def __init__(self, ws: Workspace, annotator: str) -> None:
        """Start a session; live scores load on first use (the CLI never needs them)."""
        if not annotator.strip():
            raise WorkspaceError("an annotator name is needed")
        self.ws = ws
        self.annotator = annotator
        self.undo_stack: list[Change] = []
        self._seen = self.data_version()
        """``data_version`` when the session last read the workspace."""
        self._event = ws.last_event_id()
        """The newest event this session has taken in (read after ``_seen``)."""
        self._schema = ws.schema_version
        self.reloads = 0
        """Full reloads so far (the event log could not say what changed)."""
        self._writes = 0
        """Commits made through this session (they do not move ``data_version``)."""
        self._states: dict[str, QuestionState] = {}
        """Per-question rows read since the last reload, kept current by own writes."""
        self._live: LiveScores | None = None
        self._cannot_rank: set[str] = set()
        """Retrievers a pool of this session found unable to rank (not trusted here,
        failed): kept across reloads, so their questions hold no one's out meanwhile."""
        self._judged: dict[str, bool] | None = None
        """Question id -> judged by this annotator (read once, then kept by own writes, by
        :meth:`catch_up` and by :meth:`take_rankings`)."""
        self._gold_imported: set[str] = set()
        """The questions a gold import judged as this annotator (read with ``_judged``)."""
        self._judging: JudgingSettings | None = None
        self._stopped: tuple[tuple[int, int, int], dict[str, int]] | None = None
        self._records: dict[str, dict[str, Record]] | None = None
        """Question id -> each retriever's record on it, from this annotator's grades (read
        once, then kept by :meth:`_rejudge`): the judging order's cross-question prior."""

    # -- loading -------------------------------------------------------------------------

    @property
    def live(self) -> LiveScores:
        """Every retriever's live scores over the labels as they are (loaded once)."""
        if self._live is None:
            self._live = self._load_live()
        return self._live

    def _load_live(self) -> LiveScores:
        # imported here: `goldpan label` never needs them; the scores (numpy) and the
        # latencies are computed when first shown (the review screen), not before the
        # first paint
        from engine.live import LiveScores

        ws = self.ws
        questions = ws.questions()
        golds = workspace_golds(ws)
        latencies = ws.latencies()  # read now: the rankings below are of this moment
        latency = self._latency_later(lambda: latencies)
        rankings = ws.all_runs()
        unranked = not_ranked(ws.retrievers(), ws.corpus_hash(), questions, ws.input_hashes())
        return LiveScores(
            [q.id for q in questions],
            golds,
            rankings,
            tags={q.id: q.tags for q in questions},
            latency=latency,
            not_ranked=unranked,
            cannot_rank=self._cannot_rank,
        )

    @staticmethod
    def _latency_later(read: Callable[[], Timings]) -> Callable[[], dict[str, Latency]]:
        """The latencies of what ``read`` gives (:meth:`Workspace.latencies`), on first use."""

        def latency() -> dict[str, Latency]:
            from engine.scoring import latency_of

            return latency_of(read())

        return latency

    def _latency_again(self) -> None:
        """Rankings were (re)made and timed: the live latencies are read again when shown."""
        if self._live is not None:
            self._live.latency = self._latency_later(self.ws.latencies)

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: changes when another connection commits."""
        return self.ws.data_version()

    def change_token(self) -> tuple[int, int, int]:
        """A value that changes whenever the workspace changed.

        Own commits count up the first part, and every row this connection writes (through
        the session or not: a saved question, a snapshot) the third; any other
        connection's commit (another annotator, ``goldpan label``, a pooling worker) moves
        the second. Equal tokens mean
        nothing was committed in between, so whatever was computed from the workspace
        under the old token is still true. Call :meth:`reload_if_changed` before drawing
        from :attr:`live`.
        """
        return (self._writes, self.data_version(), self.ws.conn.total_changes)

    def reload(self) -> None:
        """Re-read everything (another annotator or process changed the workspace)."""
        self.reloads += 1
        self._seen = self.data_version()
        self._event = self.ws.last_event_id()  # after _seen: a commit now moves it again
        self._schema = self.ws.schema_version
        self._states.clear()
        self._judged = None
        self._judging = None
        self._records = None
        if self._live is not None:
            self._live = self._load_live()

    def reload_if_changed(self) -> bool:
        """Take in what another connection committed since the last read; True if any."""
        if self.data_version() != self._seen:
            self.catch_up()
            return True
        return False

    def catch_up(self) -> None:
        """Apply the events committed since the last one taken in (see the class doc).

        Reading the rows an event names gives them as they are now, so applying an event
        twice (this session's own, or one already seen through a re-read) is harmless.
        """
        self._seen = self.data_version()
        if self.ws.schema_version != self._schema:
            self.reload()
            return
        changes = self.ws.changes_after(self._event)
        if not changes:
            return  # a lease renewed, a snapshot saved: nothing this session shows
        judged: set[str] = set()
        ranked: set[str] = set()
        known = self._live.golds if self._live is not None else None
        for _, kind, qid in changes:
            if qid is not None and kind in JUDGMENT_EVENTS:
                judged.add(qid)
            elif qid is not None and kind == RANKED_EVENT:
                ranked.add(qid)
            else:
                self.reload()
                return
        if known is not None and not (judged | ranked) <= known.keys():
            self.reload()  # a question this session has not loaded
            return
        self._event = changes[-1][0]
        for qid in judged:
            self._states.pop(qid, None)
            state = self.state(qid)
            if self._live is not None:
                self._live.update(state.gold)
            self._rejudge(qid, state)
        if ranked:
            self._take_rankings(ranked)

    def ranked_with(self, cannot_rank: Collection[str], ranked: Collection[str]) -> None:
        """A pool of this session ended: who could not rank, who ranked.

        ``cannot_rank`` (not trusted here, failed) hold no question out of the scores from
        now on (:func:`engine.ranked.holding`), across reloads, until they are among
        ``ranked`` (they made rankings) in a later pool.
        """
        self._cannot_rank = (self._cannot_rank | set(cannot_rank)) - set(ranked)
        if self._live is not None:
            self._live.set_cannot_rank(self._cannot_rank)

    def take_rankings(self, question_id: str) -> None:
        """A question was (re)pooled here: its new rankings into the live scores."""
        self._take_rankings([question_id])

    def _take_rankings(self, question_ids: Collection[str]) -> None:
        """Read these questions' rankings into the live scores (when loaded).

        With whether each is made for the question's inputs now (:mod:`engine.ranked`).
        Whether this annotator has judged them is decided again against their new
        candidates.
        """
        live = self._live
        if live is None:
            return
        ws, qids = self.ws, sorted(question_ids)
        runs = {name: ws.runs(name, qids) for name in live.retrievers}
        questions = [q for q in map(ws.question, qids) if q is not None]
        stored = {name: {q: r.input_hash for q, r in found.items()} for name, found in runs.items()}
        unranked = not_ranked(ws.retrievers(), ws.corpus_hash(), questions, stored)
        for name in live.retrievers:
            for qid in qids:
                run = runs[name].get(qid)
                ranking = run.doc_ids if run is not None else None
                live.set_ranking(name, qid, ranking, qid not in unranked.get(name, ()))
        for qid in qids:  # new candidates: judged again against them
            self._rejudge(qid, self.state(qid))
        self._latency_again()

    # -- reading -------------------------------------------------------------------------

    def state(self, question_id: str) -> QuestionState:
        """Everything judged on one question (read once, then kept by this session)."""
        cached = self._states.get(question_id)
        if cached is not None:
            return cached
        ws = self.ws
        state = QuestionState.of(
            question_id,
            self.annotator,
            ws.labels_for(question_id),
            ws.verdicts_for(question_id),
            ws.adjudication(question_id),
            ws.recheck_counts(question_id).get(question_id, 0),
            ws.stops([question_id]),
            ws.proposals([question_id]),
        )
        self._states[question_id] = state
        return state

    def gold(self, question_id: str) -> Gold:
        """The resolved gold of one question."""
        return self.state(question_id).gold

    def my_grades(self, question_id: str) -> dict[str, int]:
        """This annotator's grades of one question."""
        return self.state(question_id).mine

    def my_verdict(self, question_id: str) -> Verdict | None:
        """This annotator's verdict on one question."""
        return self.state(question_id).verdict

    @property
    def judging(self) -> JudgingSettings:
        """The workspace's judging order and stopping rule (read once per reload)."""
        if self._judging is None:
            self._judging = workspace_judging(self.ws)
        return self._judging

    def _view(self, question_id: str, depth: int) -> PoolView:
        """What the judging order reads of a question: rankings, and the extra candidates."""
        rankings = {r: self.live.rankings[r].get(question_id, ()) for r in self.live.retrievers}
        state = self.state(question_id)
        return PoolView(question_id, rankings, depth, (*state.judged, *state.proposed))

    def candidates(self, question_id: str, depth: int = DEFAULT_POOL_DEPTH) -> list[Candidate]:
        """A question's candidates in judging order: the pool, what anyone graded, proposals.

        The order is the workspace's (:mod:`engine.judging.order`), walked with this
        annotator's grades; documents proposed beyond the pool and not judged yet come
        right after the judged start of the list (they are what was asked for last).
        """
        view = self._view(question_id, depth)
        state = self.state(question_id)
        mine = state.mine
        order = candidate_order(self.judging.order, view, mine, self.records(question_id))
        waiting = [d for d in state.proposed if d not in mine]
        if waiting:
            start = next((i for i, d in enumerate(order) if d not in mine), len(order))
            rest = [d for d in order[start:] if d not in set(waiting)]
            order = order[:start] + waiting + rest
        found = {c.doc_id: c for c in pool(question_id, view.rankings, depth, extra=view.extra)}
        proposed = set(state.proposed)
        return [
            Candidate(
                d, found[d].ranks, found[d].added_by_search and d not in proposed, d in proposed
            )
            for d in order
        ]

    def records(self, question_id: str) -> dict[str, Record]:
        """Each retriever's record from this annotator's grades on the *other* questions."""
        if self._records is None:
            mine: dict[str, dict[str, int]] = {}
            for lab in self.ws.labels():
                if lab.annotator == self.annotator:
                    mine.setdefault(lab.question_id, {})[lab.doc_id] = lab.grade
            self._records = {
                q: record_of(self._view(q, DEFAULT_POOL_DEPTH), grades.get)
                for q, grades in mine.items()
                if q in self.live.golds
            }
        total: dict[str, Record] = {}
        for q, per in self._records.items():
            if q != question_id:
                for name, rec in per.items():
                    total[name] = total.get(name, Record()) + rec
        return total

    def stopped(self) -> dict[str, int]:
        """Stopped question -> its candidates not judged (stopped) (read once per change)."""
        token = self.change_token()
        if self._stopped is None or self._stopped[0] != token:
            left = workspace_stopped(self.ws, self.live.question_ids, self.live.rankings)
            self._stopped = (token, left)
        return self._stopped[1]

    def stop_offer(
        self,
        question_id: str,
        order: Sequence[str] | None = None,
        depth: int = DEFAULT_POOL_DEPTH,
    ) -> Offer | None:
        """The stop the stopping rule offers on a question now, for this annotator (or None).

        None once they stopped it or gave a verdict. ``order``: the question's candidates
        as :meth:`candidates` just gave them (else they are ordered again).
        """
        state = self.state(question_id)
        if state.stop is not None or state.verdict is not None:
            return None
        view = self._view(question_id, depth)
        if order is None:
            order = [c.doc_id for c in self.candidates(question_id, depth)]
        found = offer(self.judging.rule, order, state.mine, view, self.records(question_id))
        if found is None:
            return None
        # what the stop would leave: the candidates nobody judged (another annotator's grade
        # judges a document for the question, :func:`engine.judging.stopping.stopped_left`)
        anyone = set(state.judged)
        return replace(found, left=sum(1 for d in order if d not in anyone))

    def judged_questions(self) -> set[str]:
        """The questions this annotator has judged: a verdict, or every candidate graded.

        (:func:`engine.counters.is_judged`.)
        Read once in bulk, then kept by this session's writes, :meth:`catch_up` and
        :meth:`take_rankings`: a question pooled again (by this app or another process) is
        judged again against its new candidates.
        """
        live = self.live
        if self._judged is None:
            ws = self.ws
            self._gold_imported = {q for q, _ in ws.gold_imported(self.annotator)}
            mine = judged_by(
                live.question_ids,
                live.rankings,
                ws.labels(),
                ws.verdicts(),
                gold_imported={(q, self.annotator) for q in self._gold_imported},
                stops=ws.stops(),
                proposals=ws.proposals(),
            )
            self._judged = {q: q in mine.get(self.annotator, set()) for q in live.question_ids}
        return {q for q, judged in self._judged.items() if judged}

    def _rejudge(self, question_id: str, state: QuestionState) -> None:
        """Keep :meth:`judged_questions` and :meth:`records` current after a change."""
        if self._records is not None:
            mine = state.mine
            if mine:
                view = self._view(question_id, DEFAULT_POOL_DEPTH)
                self._records[question_id] = record_of(view, mine.get)
            else:
                self._records.pop(question_id, None)
        if self._judged is None:
            return
        docs = candidate_ids(question_id, self.live.rankings, [*state.judged, *state.proposed])
        self._judged[question_id] = is_judged(
            state.mine,
            state.verdict is not None,
            docs,
            gold_imported=question_id in self._gold_imported,
            stopped=state.stop is not None,
        )

    # -- changing ------------------------------------------------------------------------

    def _commit(
        self,
        question_id: str,
        write: Callable[[], object],
        after: Callable[[QuestionState], QuestionState] | None,
    ) -> QuestionState:
        """Run one write; return the question's state after it.

        ``data_version`` is checked before the write (a commit from elsewhere since the
        last read) and after it (a commit that slipped in between): either way the session
        reloads instead of recording the new version as seen, so nothing is dropped.
        ``after`` derives the new state from the old one without reading it back.
        """
        before = self.data_version()
        old = self._states.get(question_id) if before == self._seen else None
        write()
        self._writes += 1
        if self.data_version() != before or before != self._seen:
            self.catch_up()
            old = None
        else:  # nobody else committed: every event since the last one taken in is ours
            self._event = self.ws.last_event_id()
        if old is not None and after is not None:
            state = after(old)
            self._states[question_id] = state
        else:
            self._states.pop(question_id, None)
            state = self.state(question_id)
        if self._live is not None and question_id in self._live.golds:
            self._live.update(state.gold)
        self._rejudge(question_id, state)
        return state

    def _known(self, question_id: str, doc_id: str | None = None) -> None:
        if question_id not in self._states and self.ws.question(question_id) is None:
            raise WorkspaceError(f"unknown question {question_id!r}")
        if doc_id is not None and self.ws.doc(doc_id) is None:
            raise WorkspaceError(f"unknown document {doc_id!r}")

    def set_grade(self, question_id: str, doc_id: str, grade: int) -> QuestionState:
        """Grade a document (0-3) for a question; committed when this returns.

        Returns the question's state after the change: its resolved gold and this
        annotator's grades (nothing is read back unless another process committed).
        """
        if grade not in GRADES:
            raise WorkspaceError(f"grade {grade} is out of range; expected {GRADE_RANGE}")
        self._known(question_id, doc_id)
        old = self.my_grades(question_id).get(doc_id)
        if old == grade:
            return self.state(question_id)
        state = self._commit(
            question_id,
            lambda: self.ws.write_labels([Label(question_id, doc_id, self.annotator, grade)]),
            lambda s: s.with_label(doc_id, grade),
        )
        self.undo_stack.append(Change("label", question_id, doc_id, old, grade))
        return state

    def clear_grades(self, question_id: str, min_grade: int = 0) -> QuestionState:
        """Take back this annotator's grades (from ``min_grade`` up) on a question.

        One :meth:`undo` restores them all.
        """
        with self.grouped():
            for doc_id, grade in sorted(self.my_grades(question_id).items()):
                if grade < min_grade:
                    continue
                self._revert(Change("label", question_id, doc_id, None))
                self.undo_stack.append(Change("label", question_id, doc_id, grade, None))
        return self.state(question_id)

    def set_verdict(self, question_id: str, verdict: str, note: str = "") -> QuestionState:
        """Give a verdict on a question (no answer, ambiguous, skip, answerable)."""
        if verdict not in VERDICTS:
            raise WorkspaceError(f"unknown verdict {verdict!r}; expected one of {VERDICTS}")
        self._known(question_id)
        old = self.my_verdict(question_id)
        new = Verdict(question_id, self.annotator, verdict, note)
        state = self._commit(
            question_id,
            lambda: self.ws.write_verdicts([new]),
            lambda s: s.with_verdict(new),
        )
        self.undo_stack.append(
            Change(
                "verdict",
                question_id,
                None,
                None if old is None else (old.verdict, old.note),
                (verdict, note),
            )
        )
        return state

    def clear_verdict(self, question_id: str) -> QuestionState:
        """Take back this annotator's verdict on a question."""
        old = self.my_verdict(question_id)
        if old is None:
            return self.state(question_id)
        state = self._commit(
            question_id,
            lambda: self.ws.delete_verdict(question_id, self.annotator),
            lambda s: s.with_verdict(None),
        )
        self.undo_stack.append(Change("verdict", question_id, None, (old.verdict, old.note), None))
        return state

    def adjudicate(
        self, question_id: str, gold: dict[str, int], *, no_answer: bool = False, note: str = ""
    ) -> QuestionState:
        """Settle a question: the final gold (grades >= 1 kept) or no answer; logged."""
        final = {d: g for d, g in gold.items() if is_relevant(g)}
        adj = Adjudication(question_id, no_answer, {} if no_answer else final, self.annotator, note)
        return self._commit(
            question_id,
            lambda: self.ws.write_adjudication(adj),
            lambda s: s.with_adjudication(adj),
        )

    def stop(self, question_id: str, rule: str) -> QuestionState:
        """Stop judging a question (the stopping rule offered it, ``rule`` says why).

        Its candidates nobody judged become *not judged (stopped)*; :meth:`undo` takes the
        stop back.
        """
        self._known(question_id)
        old = self.state(question_id).stop
        new = Stop(question_id, self.annotator, rule)
        state = self._commit(
            question_id, lambda: self.ws.write_stop(new), lambda s: s.with_stop(new)
        )
        self.undo_stack.append(
            Change("stop", question_id, None, None if old is None else old.rule, rule)
        )
        return state

    def unstop(self, question_id: str) -> QuestionState:
        """Take back this annotator's stop of a question (judging it on)."""
        old = self.state(question_id).stop
        if old is None:
            return self.state(question_id)
        state = self._commit(
            question_id,
            lambda: self.ws.delete_stop(question_id, self.annotator),
            lambda s: s.with_stop(None),
        )
        self.undo_stack.append(Change("stop", question_id, None, old.rule, None))
        return state

    def add_proposals(self, question_id: str, docs: Sequence[str], method: str) -> QuestionState:
        """Documents proposed beyond the pool join the question's candidates.

        No undo: a proposal is no judgment (judging it is what undo takes back).
        """
        self._known(question_id)
        rows = [Proposal(question_id, d, method, self.annotator) for d in docs]
        return self._commit(question_id, lambda: self.ws.write_proposals(rows), None)
