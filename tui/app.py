"""The goldpan Textual app: wiring only.

It opens the workspace and the session, gives every screen the shared state
(:mod:`tui.state`), binds the global keys and the palette (:mod:`tui.app_commands`), and
hands work to its controllers (:mod:`tui.controllers`: pooling and indexes, background
ranking, leases, the trust question, the end of the start). Private Textual names are
:mod:`tui.textual_compat`'s; the crash policy is :mod:`tui.crash`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.worker import Worker

from engine.errors import GoldpanError
from engine.session.labeling import LabelingSession
from engine.workspace import INTERACTIVE_BUSY_TIMEOUT_S, Workspace
from tui import app_commands
from tui.actions import bindings, palette_commands
from tui.controllers.leases import LeaseKeeper
from tui.controllers.pooling import Pooling
from tui.controllers.ranking import BackgroundRanking
from tui.controllers.startup import StartUp
from tui.controllers.trust_flow import TrustFlow
from tui.crash import action_not_saved
from tui.literal import visible
from tui.messages import PoolFailed, QuestionPooled, QuestionsRanked, WorkspaceChanged
from tui.screens.base import GoldpanScreen
from tui.serve.served import Served
from tui.state import SharedState
from tui.textual_compat import QuietCrashApp

if TYPE_CHECKING:
    from collections.abc import Mapping

    from textual.actions import ActionParseResult
    from textual.dom import DOMNode


class GoldpanApp(QuietCrashApp[None]):
    """Label questions blind, judge pooled candidates, watch the scores move.

    An unhandled exception ends the app without a traceback on the terminal
    (:class:`~tui.textual_compat.QuietCrashApp`): ``goldpan open`` then reports it in one
    line and writes the traceback to a log (exit 3).
    """

    CSS_PATH = "app.tcss"
    TITLE = "goldpan"
    DEFAULT_MODE = "questions"
    ACTIONS = app_commands.ACTIONS
    BINDINGS = bindings(ACTIONS)
    SCREEN_KEYS = app_commands.SCREEN_KEYS

    def __init__(
        self,
        workspace: Path,
        *,
        annotator: str,
        theme: str = "textual-dark",
        animations: bool = True,
        blink: bool = True,
        warm_indexes: bool = True,
        readonly: bool = False,
        backup: Path | None = None,
        served: Served | None = None,
        freeze_heap: bool = False,
    ) -> None:
        """Open the workspace.

        Tests pin ``theme``, ``animations`` and ``blink`` here, not through env vars, and
        leave ``warm_indexes`` off. ``readonly`` opens the workspace for review only (it is
        also read-only when it cannot be written); ``backup`` names the copy written when
        the caller upgraded it just before. ``served`` is set when ``goldpan serve`` runs
        the app for one person in a browser: their role, and how work is handed out.
        ``freeze_heap``: once started, what is alive then is left out of Python's cycle
        collector (:mod:`tui.controllers.startup`); for an app that is the whole process,
        never for one of a test's many apps.
        """
        if served is not None:  # open straight on their screen: no questions table to build
            self.DEFAULT_MODE = "judge" if served.labels else "review"  # type: ignore[misc]
        super().__init__()
        self.workspace_path = workspace
        self.ws = Workspace.open(workspace, readonly=readonly)
        self.ws.set_busy_timeout(INTERACTIVE_BUSY_TIMEOUT_S)  # a grade never freezes for 30 s
        self.readonly_reason = self.ws.readonly_reason
        """Why the workspace is read-only (None when labels can be saved)."""
        self.backup_path = self.ws.backup_path or backup
        """The copy of the old version written when the workspace was upgraded."""
        self.session = LabelingSession(self.ws, annotator)
        ids = self.ws.question_ids()
        self.state = SharedState(ids[0] if ids else None, ids, previous_mode=self.DEFAULT_MODE)
        """What the screens share (each is given it)."""
        for mode, screen in app_commands.SCREENS.items():
            self.add_mode(mode, partial(screen, self.state))
        self.trust_flow = TrustFlow(self)
        """Asks, once, before the workspace's untrusted outside retrievers run."""
        self.pooling = Pooling(self)
        """The retrievers' indexes and the pooling of a question, in workers."""
        self.theme = theme
        self.animation_level = "full" if animations else "none"
        self.blink = blink
        """Cursor blink in inputs (off in tests, for stable snapshots)."""
        self.warm_on_start = warm_indexes
        self.start_up = StartUp(self, freeze_heap=freeze_heap)
        self.base_sub_title = visible(f"{workspace.name} · {annotator}")
        if self.readonly_reason is not None:
            self.base_sub_title += " · read-only"
        self.sub_title = self.base_sub_title
        self.live_screens: set[GoldpanScreen] = set()
        """The mounted goldpan screens (every mode's), told of each change once."""
        self.served = served
        """How `goldpan serve` runs this session (None: a terminal)."""
        self.leases = LeaseKeeper(self, annotator, served)
        """Served to an annotator: hands out questions under a lease and keeps it."""
        if self.leases.assigner is not None:
            self.state.current_question = self.leases.next_question()
        self.ranking = BackgroundRanking(self)
        """Takes in other processes' commits; ranks the questions not ranked yet (the
        demo opens before its Kiwi retriever has ranked, a colleague imports questions)."""

    def on_mount(self) -> None:
        """Paint first; build indexes (Kiwi included) in a worker afterwards."""
        self.pooling.start()
        if self.backup_path is not None:
            self.notify(
                f"Upgraded {self.workspace_path.name} to schema version "
                f"{self.ws.schema_version}; the old version was copied first to "
                f"{self.backup_path}",
                title="Workspace upgraded",
                timeout=20,
                markup=False,
            )
        if self.readonly_reason is None:
            # the soundness gate's checks on a connection of their own, in a thread, after
            # the first paint: the first grade waits for their verdict instead of reading
            # every page itself on the UI thread
            self.call_after_refresh(self.ws.check_soundness_behind)
        if self.warm_on_start:  # after the first paint: the retrievers' imports are slow
            self.call_after_refresh(self.pooling.warm)
        self.call_after_refresh(self.ranking.start)
        if self.served is not None:
            self.set_interval(self.served.lease_seconds / 3, self.leases.renew)
        self.start_up.after_first_paint()

    async def run_action(
        self,
        action: str | ActionParseResult,
        default_namespace: DOMNode | None = None,
        namespaces: Mapping[str, DOMNode] | None = None,
    ) -> bool:
        """Run an action (a key, a palette entry); a change it could not save is a notice.

        Where Textual would end the app (:func:`tui.crash.action_not_saved` says when).
        """
        try:
            return await super().run_action(action, default_namespace, namespaces)
        except GoldpanError as exc:
            self.notify(
                action_not_saved(action if isinstance(action, str) else action[1], exc),
                title="Not saved",
                severity="error",
                timeout=20,
                markup=False,
            )
            return True

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notice of every screen, its control characters shown as pictures.

        Notices name files, ids, retrievers and errors that quote data; Textual would pass
        an ESC in them to the terminal. This is the one place they all go through.
        """
        super().notify(
            visible(message),
            title=visible(title),
            severity=severity,
            timeout=timeout,
            markup=markup,
        )

    def on_unmount(self) -> None:
        """Give up the lease (a browser tab closed), close the workspace connection."""
        self.leases.release()
        self.ws.close()
        self.pooling.stop()

    # -- actions -------------------------------------------------------------------------

    def action_toggle_help(self) -> None:
        """Show help for the current screen (or close it when it is open)."""
        from tui.help import HelpScreen  # the Markdown widget loads on first use

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
        elif isinstance(self.screen, GoldpanScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_reload(self) -> None:
        """Re-read labels and rankings from the workspace."""
        self.session.reload()
        self.announce(None)
        self.ranking.check()  # what could not be ranked is tried again
        self.notify("Reloaded the workspace.")

    def announce(self, question_id: str | None, *, pooled: bool = False) -> None:
        """Tell every live screen, once, that the workspace changed.

        The one refresh path: :class:`WorkspaceChanged` does not bubble, so a screen's
        handler can never hand it back to the app. Screens not on top only note it; they
        compare the session's change token when they resume.
        """
        for screen in list(self.live_screens):
            screen.post_message(WorkspaceChanged(question_id, pooled))

    def switch_mode(self, mode: str) -> AwaitMount:
        """Switch screens, remembering the one left (escape on Write goes back to it).

        Served, adjudicating is only for the adjudicators.
        """
        if mode == "adjudicate" and self.served is not None and not self.served.adjudicates:
            self.notify(
                "Adjudicating is for the adjudicators of this labeling session.",
                title="Not yours",
                severity="warning",
            )
            return AwaitMount(self.screen, [])
        if mode != self.current_mode:
            self.state.previous_mode = self.current_mode
        return super().switch_mode(mode)

    def judge(self, question_id: str, order: list[str] | None = None) -> None:
        """Open the judge screen on a question."""
        self.state.open(question_id, order)
        self.switch_mode("judge")

    # -- what the workers report (tui.controllers) ------------------------------------

    def on_question_pooled(self, message: QuestionPooled) -> None:
        """Take the new rankings into the live scores and tell the screens (once each)."""
        self.pooling.pooled(message)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A pool worker's end, heard after what it posted (see Pooling.ended)."""
        if event.worker.group == "pool" and event.worker.is_finished:
            self.pooling.ended()

    def on_questions_ranked(self, message: QuestionsRanked) -> None:
        """The background ranking ended: take it in, rank what came meanwhile."""
        self.ranking.ranked(message)

    def on_pool_failed(self, message: PoolFailed) -> None:
        """Say so; the question stays, unpooled."""
        self.notify(visible(f"Pooling failed: {message.error}"), severity="error", markup=False)

    # -- palette -------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Palette entries: every command that works now runs the same action as its key."""
        for command in super().get_system_commands(screen):
            if command.title not in {"Keys", "Quit"}:  # goldpan's own help and quit below
                yield command
        if isinstance(screen, GoldpanScreen):  # not over a dialog (help, a prompt, search)
            yield from palette_commands(self, self.ACTIONS)
            yield from palette_commands(screen, screen.ACTIONS)
