"""The goldpan Textual app: wiring only (screens, global keys, palette, workers)."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import AwaitMount

from engine.errors import GoldpanError
from engine.session import LabelingSession
from engine.workspace import INTERACTIVE_BUSY_TIMEOUT_S, Workspace
from tui import app_commands
from tui.actions import bindings, palette_commands
from tui.controllers.leases import LeaseKeeper
from tui.controllers.ranking import BackgroundRanking
from tui.controllers.trust_flow import TrustFlow
from tui.crash import failure_notice
from tui.literal import visible
from tui.messages import (
    IndexesReady,
    PoolFailed,
    QuestionPooled,
    QuestionsRanked,
    WorkspaceChanged,
)
from tui.screens.base import GoldpanScreen
from tui.served import Served, tell_started
from tui.textual_compat import QuietCrashApp

if TYPE_CHECKING:
    from collections.abc import Mapping

    from textual.actions import ActionParseResult
    from textual.dom import DOMNode

    from engine.assign import Assigner
    from engine.retrieve.runner import PreparedRetrievers


class GoldpanApp(QuietCrashApp[None]):
    """Label questions blind, judge pooled candidates, watch the scores move.

    An unhandled exception ends the app without a traceback on the terminal
    (:class:`~tui.textual_compat.QuietCrashApp`): ``goldpan open`` then reports it in one
    line and writes the traceback to a log (exit 3).
    """

    CSS_PATH = "app.tcss"
    TITLE = "goldpan"
    MODES = dict(app_commands.SCREENS)
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
        collector (:meth:`_freeze_heap`); for an app that is the whole process, never for
        one of a test's many apps.
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
        self._prepared: PreparedRetrievers | None = None
        self._kiwi_before: object = None
        """How Kiwi tokenized before this app (see :meth:`on_mount`)."""
        self._prepared_lock = threading.Lock()
        self.trust_flow = TrustFlow(self)
        """Asks, once, before the workspace's untrusted outside retrievers run."""
        self.warned: set[str] = set()
        """Warnings of retrievers already shown this session (TLS not checked)."""
        self.pool_tried: set[str] = set()
        """Questions pooled since start: a retriever that cannot run is not retried on
        every redraw (editing a question pools it again)."""
        self.theme = theme
        self.animation_level = "full" if animations else "none"
        self.blink = blink
        """Cursor blink in inputs (off in tests, for stable snapshots)."""
        self.warm_on_start = warm_indexes
        self.freeze_on_start = freeze_heap
        self.base_sub_title = visible(f"{workspace.name} · {annotator}")
        if self.readonly_reason is not None:
            self.base_sub_title += " · read-only"
        self.sub_title = self.base_sub_title
        ids = self.session.ws.question_ids()
        self.question_order: list[str] = ids
        """The order `[` and `]` walk (the questions screen's filtered list)."""
        self.current_question: str | None = ids[0] if ids else None
        """The question every screen means by "current": the judge screen shows it, and
        the cursor of the questions, review and adjudicate lists rests on it."""
        self.auto_advance = True
        """After a judgment, move on: to the next candidate after a grade, to the next
        question after a verdict or when every candidate is judged."""
        self.previous_mode = self.DEFAULT_MODE
        """The screen shown before the current one."""
        self.live_screens: set[GoldpanScreen] = set()
        """The mounted goldpan screens (every mode's), told of each change once."""
        self.served = served
        """How `goldpan serve` runs this session (None: a terminal)."""
        self.leases = LeaseKeeper(self, annotator, served)
        """Served to an annotator: hands out questions under a lease and keeps it."""
        if self.leases.assigner is not None:
            self.current_question = self.leases.next_question()
        self.ranking = BackgroundRanking(self)
        """Takes in other processes' commits; ranks the questions not ranked yet (the
        demo opens before its Kiwi retriever has ranked, a colleague imports questions)."""

    def on_mount(self) -> None:
        """Paint first; build indexes (Kiwi included) in a worker afterwards.

        Kiwi tokenizes in a helper process while the app runs (:mod:`engine.kiwi_helper`):
        its model's loading held Python's lock for two seconds, and the screen froze.
        """
        from engine.kiwi_helper import use_kiwi_helper
        from engine.tokenize import KiwiTokenizer

        self._kiwi_before = KiwiTokenizer.helper
        use_kiwi_helper()
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
            self.call_after_refresh(self.warm_indexes)
        self.call_after_refresh(self.ranking.start)
        if self.served is not None:
            self.set_interval(self.served.lease_seconds / 3, self.keep_lease)
        if self.served is not None and self.is_web:  # textual-serve's channel (not a test's)
            self.call_after_refresh(self._say_started)  # the heap is frozen before it says so
        elif self.freeze_on_start:
            self.call_after_refresh(self._freeze_heap)

    def _freeze_heap(self) -> None:
        """Leave what is alive once started out of Python's cycle collector.

        The session's state, the screens and Textual's caches live as long as the app, yet
        every full collection walked them all again: 35-40 ms on the UI thread on a
        team-sized workspace, about once every 30 keys, so one key in thirty was drawn that
        much later. Frozen, they still die by reference counting; the collector walks only
        what was made since (6 ms). Collected first, so that no garbage is frozen with them.
        """
        if self.freeze_on_start:
            gc.collect()
            gc.freeze()

    def _say_started(self) -> None:
        """Served: tell the server this tab's start is over.

        Once the first screen is drawn and the soundness checks are done; the server holds
        the next tab's start until then (:class:`tui.team_server.StartGate`).
        """
        if self.ws.soundness_checking():
            self.set_timer(0.05, self._say_started)
            return
        self._freeze_heap()
        tell_started()

    async def run_action(
        self,
        action: str | ActionParseResult,
        default_namespace: DOMNode | None = None,
        namespaces: Mapping[str, DOMNode] | None = None,
    ) -> bool:
        """Run an action (a key, a palette entry); a change it could not save is a notice.

        A :class:`~engine.errors.GoldpanError` from an action (the workspace locked by
        another program for longer than goldpan waits, a full disk, a damaged row) comes
        from a write that was rolled back: the app says so and goes on, where Textual
        would end it. Any other exception still ends the app: a bug, reported by
        ``goldpan open`` (exit 3, the traceback in a crash log).
        """
        try:
            return await super().run_action(action, default_namespace, namespaces)
        except GoldpanError as exc:
            name = action if isinstance(action, str) else action[1]
            grading = name.split("(")[0].rsplit(".", 1)[-1] in {"grade", "toggle_relevant"}
            self.notify(
                f"{'The label' if grading else 'The change'} was not saved: {exc}",
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
        """Give up the lease (a browser tab closed), close the workspace connection.

        Kiwi tokenizes as it did before the app (a test's process runs many apps); the
        helper process itself lives until this process ends, for the next app.
        """
        from engine.tokenize import KiwiTokenizer

        self.leases.release()
        self.ws.close()
        KiwiTokenizer.helper = self._kiwi_before

    # -- served (`goldpan serve`): tui.controllers.leases keeps the leases --------------

    @property
    def assigner(self) -> Assigner | None:
        """Hands out questions under a lease when served to an annotator (else None)."""
        return self.leases.assigner

    def next_question(self) -> str | None:
        """Served: the next question handed to this session (None: none, or not served)."""
        return self.leases.next_question()

    def opened_question(self, question_id: str) -> None:
        """The judge screen shows a question: served, lease it, or say who has it."""
        self.leases.opened(question_id)

    def keep_lease(self) -> None:
        """The served timer: renew the open question's lease.

        Others' changes come in through :attr:`ranking`'s watch.
        """
        self.leases.renew()

    @property
    def prepared(self) -> PreparedRetrievers:
        """The retrievers' indexes, built once per process and shared by the workers.

        Created on first use (from any thread): importing the retriever modules loads
        numpy and the tokenizers, which the first screen does not need.
        """
        with self._prepared_lock:
            if self._prepared is None:
                from engine.retrieve.runner import PreparedRetrievers

                self._prepared = PreparedRetrievers()
            return self._prepared

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
            self.previous_mode = self.current_mode
        return super().switch_mode(mode)

    def judge(self, question_id: str, order: list[str] | None = None) -> None:
        """Open the judge screen on a question."""
        self.current_question = question_id
        if order:
            self.question_order = order
        self.switch_mode("judge")

    # -- workers -------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="warm", exit_on_error=False)
    def warm_indexes(self) -> None:
        """Index the corpus for every retriever (and load Kiwi) off the UI thread.

        From the term counts the workspace keeps when they match its corpus: only Kiwi's
        model loads, not the corpus tokenized again.
        """
        from engine.retrieve import STORED_KINDS, PrepareEnv

        started = time.perf_counter()
        ws = Workspace.open(self.workspace_path, readonly=self.readonly_reason is not None)
        failed: list[str] = []
        try:
            docs = ws.docs()
            corpus = ws.corpus_hash()
            # dense vectors and BM25's term counts come from (and go to) the workspace: a
            # reopen tokenizes nothing (without them every open counted the corpus again, on
            # top of Kiwi's load, while Python's lock kept the first keys waiting)
            env = PrepareEnv(
                store=ws, progress=self._say_progress, index_store=ws, corpus_hash=corpus
            )
            for spec in ws.retrievers():
                if spec.kind in STORED_KINDS:
                    continue
                try:
                    self.prepared.get(spec, corpus, docs, env)
                except Exception as exc:  # one retriever's failure leaves the others'
                    failed.append(f"{spec.name}: {failure_notice(exc)}")
        finally:
            ws.close()
        if failed:
            self.post_message(PoolFailed("", "; ".join(failed)))
        self.call_from_thread(setattr, self, "sub_title", self.base_sub_title)
        self.post_message(IndexesReady(time.perf_counter() - started))

    def say_progress(self, what: str, done: int, total: int) -> None:
        """Long work in a worker (embedding a corpus, ranking) shown in the header."""
        filled = round(20 * done / total) if total else 20
        bar = f" {'█' * filled}{'░' * (20 - filled)} {done}/{total}" if total > 1 else "…"
        self.sub_title = f"{self.base_sub_title} · {what}{bar}"

    def _say_progress(self, what: str, done: int, total: int) -> None:
        """:meth:`say_progress`, from a worker's thread."""
        self.call_from_thread(self.say_progress, what, done, total)

    def pool_question(self, question_id: str) -> None:
        """Pool one question, once the trust question (asked once) is answered."""
        self.trust_flow.pool(lambda: self._pool_worker(question_id))

    @work(thread=True, exclusive=False, group="pool", exit_on_error=False)
    def _pool_worker(self, question_id: str) -> None:
        """Rank one question with every retriever (its own connection) and report."""
        from engine.retrieve.runner import refresh_runs

        self.pool_tried.add(question_id)
        if self.readonly_reason is not None:  # rankings are cached in the workspace
            self.post_message(
                PoolFailed(question_id, f"the workspace is read-only ({self.readonly_reason})")
            )
            return
        try:
            ws = Workspace.open(self.workspace_path)
            try:
                report = refresh_runs(
                    ws,
                    question_ids=[question_id],
                    prepared=self.prepared,
                    keep_going=True,
                    trust=self.trust_flow.store,
                )
            finally:
                ws.close()
        except Exception as exc:  # reported on the UI thread, never lost (a bug: logged)
            self.post_message(PoolFailed(question_id, failure_notice(exc)))
            return
        if report.warnings:
            self.call_from_thread(self.say_warnings, report.warnings)
        errors = report.failed()
        if errors:  # the other retrievers' rankings still count
            failed = "; ".join(f"{n}: {e}" for n, e in errors.items())
            self.post_message(PoolFailed(question_id, failed))
        self.post_message(QuestionPooled(question_id))

    def say_warnings(self, warnings: dict[str, tuple[str, ...]]) -> None:
        """What a retriever says on every run (TLS not checked), once per session each."""
        for line in (w for lines in warnings.values() for w in lines):
            if line not in self.warned:
                self.warned.add(line)
                self.notify(visible(line), title="Warning", severity="warning", markup=False)

    def on_question_pooled(self, message: QuestionPooled) -> None:
        """Take the new rankings into the live scores and tell the screens (once each)."""
        session = self.session
        session.reload_if_changed()  # the worker committed the rankings on its connection
        session.take_rankings(message.question_id)
        self.announce(message.question_id, pooled=True)

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
