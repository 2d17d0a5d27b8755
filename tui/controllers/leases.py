"""Served to an annotator: the lease on the question they judge, kept and told when lost.

``goldpan serve`` hands each annotator questions nobody else is judging
(:class:`engine.team.assign.Assigner`), each under a lease that runs out unless renewed. The
app renews it on a timer (a third of the lease time); should it have run out meanwhile and
another annotator taken the question, the annotator is told at once and the judge screen
moves to a question this session holds, so the next key never judges someone else's.
In a terminal, and served to a viewer or read-only, there is no lease and nothing to keep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.team.assign import Assigner
from tui.literal import visible
from tui.screens.base import GoldpanScreen

if TYPE_CHECKING:
    from tui.app import GoldpanApp
    from tui.serve.served import Served


class LeaseKeeper:
    """The hand-out leases of one served annotator's session (inactive otherwise)."""

    def __init__(self, app: GoldpanApp, annotator: str, served: Served | None) -> None:
        """Hand out questions when served to an annotator on a writable workspace."""
        self.app = app
        self.assigner: Assigner | None = None
        """Hands out questions under a lease when served to an annotator."""
        if served is not None and served.labels and app.readonly_reason is None:
            self.assigner = Assigner(
                app.ws,
                annotator,
                per_question=served.per_question,
                lease_seconds=served.lease_seconds,
            )

    def next_question(self) -> str | None:
        """Served: the most needed question nobody else is judging, leased to this session.

        None when none is left for this annotator, or when not handing out (in a terminal
        the judge screen walks the app's ``question_order`` itself).
        """
        if self.assigner is None:
            return None
        session = self.app.session
        session.reload_if_changed()  # the others' labels since: the gold the queue ranks by
        live = session.live
        return self.assigner.next(
            live.rankings, golds=live.golds, pools=live.pools(self.assigner.k)
        )

    def opened(self, question_id: str) -> None:
        """The judge screen shows a question: lease it, or say who has it."""
        if self.assigner is None or self.assigner.current == question_id:
            return
        holder = self.assigner.hold(question_id)
        if holder != self.assigner.annotator:
            self.app.notify(
                visible(f"{holder} is judging {question_id} right now."),
                title="Taken",
                severity="warning",
                markup=False,
            )

    def renew(self) -> None:
        """Renew the open question's lease; a lease lost meanwhile is told at once."""
        if self.assigner is None:
            return
        held = self.assigner.current
        self.assigner.renew()
        if held is not None and self.assigner.current is None:
            self.lost(held)

    def lost(self, question_id: str) -> None:
        """Another annotator took ``question_id``: say so, on to one handed to this session."""
        app = self.app
        who = app.ws.leases().get(question_id, "another annotator")
        nxt = self.next_question()
        then = f"on to {nxt}" if nxt is not None else "no other question is left for you now"
        app.notify(
            visible(f"Your hold on {question_id} ran out and {who} is judging it now; {then}."),
            title="Question taken",
            severity="warning",
            markup=False,
        )
        if app.state.current_question == question_id:
            app.state.current_question = nxt
        if isinstance(app.screen, GoldpanScreen):
            app.screen.follow_current()

    def release(self) -> None:
        """Give up the lease (the browser tab closed)."""
        if self.assigner is not None:
            self.assigner.release()
