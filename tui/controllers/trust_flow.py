"""Asking the machine's owner, once a session, to trust a workspace's outside retrievers.

A ``command``, ``http``, ``opensearch``/``elasticsearch`` or ``postgres`` retriever runs a
program or sends questions somewhere the workspace names; :mod:`engine.trust` runs one only
once this user trusted exactly that. Before the first pool of a session the app asks about
the untrusted ones in a dialog (:class:`~tui.screens.modals.TrustScreen`), holding back the
pools (of a question, of the questions not ranked yet) until it is answered. A served
session (``goldpan serve``) never asks and never trusts: trust is the machine owner's, so
it pools without them and says who can.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.trust import TrustError, TrustStore, what_runs
from tui.literal import command_shown, visible
from tui.screens.modals import TrustScreen

if TYPE_CHECKING:
    from engine.types import RetrieverSpec
    from tui.app import GoldpanApp


class TrustFlow:
    """The trust question of one app session, and the pools waiting for its answer."""

    def __init__(self, app: GoldpanApp) -> None:
        """Nothing asked yet; the user's trust record is read when pooling asks it."""
        self.app = app
        self.store = TrustStore()
        """The user's record of trusted retrievers (outside the workspace)."""
        self.pending: list[Callable[[], object]] | None = None
        """Pools waiting for the answer to the trust question (None: not asking)."""
        self.asked = False
        """The trust question is asked once per session; unanswered commands are skipped."""

    def pool(self, run: Callable[[], object]) -> None:
        """Start a pool (``run``); first ask, once, about untrusted retrievers.

        Served (a browser tab of ``goldpan serve``), nothing is asked: trust is for the
        person who owns this machine, so the session pools without the commands they have
        not trusted and says, once, how they can.
        """
        app = self.app
        if self.pending is not None:  # the question is on screen: pool after it
            self.pending.append(run)
            return
        if not self.asked and app.readonly_reason is None:
            try:
                untrusted = self.store.untrusted(app.ws, app.ws.retrievers())
            except TrustError as exc:  # the trust record is damaged: nothing is trusted
                app.notify(visible(str(exc)), severity="error", markup=False)
                untrusted = []
            if untrusted:
                self.asked = True
                if app.served is not None:
                    self.say_untrusted([s.name for s in untrusted])
                    run()
                    return
                self.pending = [run]
                self._ask(untrusted)
                return
        run()

    def _ask(self, untrusted: list[RetrieverSpec]) -> None:
        """Show the dialog; its answer trusts (or skips) them and pools what waited."""
        app = self.app
        shown = [(s.name, command_shown(what_runs(s))) for s in untrusted]

        def answered(trust: bool | None) -> None:
            if trust and app.served is None:
                try:
                    self.store.trust(app.ws, untrusted)
                except TrustError as exc:
                    app.notify(visible(str(exc)), severity="error", markup=False)
            else:
                self.say_untrusted([n for n, _ in shown])
            pending, self.pending = self.pending or [], None
            for run in pending:
                run()

        app.push_screen(TrustScreen(app.workspace_path.name, shown), answered)

    def say_untrusted(self, names: list[str]) -> None:
        """Name the command retrievers pooling skips, and who can trust them, how."""
        app = self.app
        skipped = ", ".join(names)
        how = f"`goldpan trust {app.workspace_path}`"
        if app.served is None:
            app.notify(
                visible(f"Pooling without {skipped}: not trusted. {how} trusts them."),
                markup=False,
            )
            return
        app.notify(
            visible(
                f"Pooling without {skipped}: their commands are not trusted on this server. "
                f"The person running `goldpan serve` can trust them there with {how}."
            ),
            title="Commands not run",
            severity="warning",
            timeout=20,
            markup=False,
        )
