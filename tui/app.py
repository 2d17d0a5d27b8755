"""The goldpan Textual app: wiring only (screens, global keys, palette, workers)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from engine.retrieve import STORED_KINDS, PrepareEnv, RetrieverError
from engine.retrieve.runner import PreparedRetrievers, refresh_runs
from engine.session import LabelingSession
from engine.trust import TrustStore, command_of
from engine.workspace import Workspace
from tui.literal import command_shown, visible
from tui.messages import IndexesReady, LabelSaved, PoolFailed, QuestionPooled
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.judge import JudgeScreen
from tui.screens.modals import TrustScreen
from tui.screens.questions import QuestionsScreen
from tui.screens.review import ReviewScreen
from tui.screens.write import WriteScreen


class GoldpanApp(App[None]):
    """Label questions blind, judge pooled candidates, watch the scores move."""

    CSS_PATH = "app.tcss"
    TITLE = "goldpan"
    MODES = {
        "questions": QuestionsScreen,
        "write": WriteScreen,
        "judge": JudgeScreen,
        "review": ReviewScreen,
        "adjudicate": AdjudicateScreen,
    }
    DEFAULT_MODE = "questions"
    BINDINGS = [
        Binding(
            "q",
            "switch_mode('questions')",
            "Questions",
            show=False,
            id="questions",
            tooltip="Every question with its status, tags and labels",
        ),
        Binding(
            "w",
            "switch_mode('write')",
            "Write",
            show=False,
            id="write",
            tooltip="Write a new question without seeing any document",
        ),
        Binding(
            "l",
            "switch_mode('judge')",
            "Label",
            show=False,
            id="judge",
            tooltip="Judge the pooled candidates of the current question",
        ),
        Binding(
            "r",
            "switch_mode('review')",
            "Review",
            show=False,
            id="review",
            tooltip="Scores per retriever and per question, live",
        ),
        Binding(
            "d",
            "switch_mode('adjudicate')",
            "Adjudicate",
            show=False,
            id="adjudicate",
            tooltip="Settle disputed and ambiguous questions",
        ),
        Binding(
            "question_mark,f1",
            "toggle_help",
            "Help",
            id="help",
            tooltip="Show or hide the keys and what this screen is for",
        ),
        Binding(
            "ctrl+r",
            "reload",
            "Reload",
            show=False,
            id="reload",
            tooltip="Re-read the workspace (see other annotators' labels)",
        ),
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            show=False,
            priority=True,
            id="quit",
            tooltip="Quit goldpan; every label is already saved",
        ),
    ]

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
    ) -> None:
        """Open the workspace.

        Tests pin ``theme``, ``animations`` and ``blink`` here, not through env vars, and
        leave ``warm_indexes`` off. ``readonly`` opens the workspace for review only (it is
        also read-only when it cannot be written); ``backup`` names the copy written when
        the caller upgraded it just before.
        """
        super().__init__()
        self.workspace_path = workspace
        self.ws = Workspace.open(workspace, readonly=readonly)
        self.readonly_reason = self.ws.readonly_reason
        """Why the workspace is read-only (None when labels can be saved)."""
        self.backup_path = self.ws.backup_path or backup
        """The copy of the old version written when the workspace was upgraded."""
        self.session = LabelingSession(self.ws, annotator)
        self.prepared = PreparedRetrievers()
        self.trust = TrustStore()
        """The user's record of trusted command retrievers (outside the workspace)."""
        self.trust_pending: list[str] | None = None
        """Questions waiting for the answer to the trust question (None: not asking)."""
        self.trust_asked = False
        """The trust question is asked once per session; unanswered commands are skipped."""
        self.pool_tried: set[str] = set()
        """Questions pooled since start: a retriever that cannot run is not retried on
        every redraw (editing a question pools it again)."""
        self.theme = theme
        self.animation_level = "full" if animations else "none"
        self.blink = blink
        """Cursor blink in inputs (off in tests, for stable snapshots)."""
        self.warm_on_start = warm_indexes
        self.base_sub_title = visible(f"{workspace.name} · {annotator}")
        if self.readonly_reason is not None:
            self.base_sub_title += " · read-only"
        self.sub_title = self.base_sub_title
        ids = self.session.ws.question_ids()
        self.question_order: list[str] = ids
        """The order `[` and `]` walk (the questions screen's filtered list)."""
        self.current_question: str | None = ids[0] if ids else None
        """The question the judge screen shows."""

    def on_mount(self) -> None:
        """Paint first; build indexes (Kiwi included) in a worker afterwards."""
        if self.backup_path is not None:
            self.notify(
                f"Upgraded {self.workspace_path.name} to schema version "
                f"{self.ws.schema_version}; the old version was copied first to "
                f"{self.backup_path}",
                title="Workspace upgraded",
                timeout=20,
                markup=False,
            )
        if self.warm_on_start:
            self.warm_indexes()

    def _fatal_error(self) -> None:
        """An unhandled exception ends the app without a traceback on the terminal.

        ``goldpan open`` then reports it in one line and writes the traceback to a log
        (exit 3); Textual's own handler would print a full traceback.
        """
        self.bell()
        self._close_messages_no_wait()

    @property
    def crash(self) -> BaseException | None:
        """The unhandled exception that ended the app, if one did."""
        return self._exception

    def on_unmount(self) -> None:
        """Close the workspace connection."""
        self.ws.close()

    # -- actions -------------------------------------------------------------------------

    def action_toggle_help(self) -> None:
        """Show or hide the help panel (live keys plus the screen's HELP)."""
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_reload(self) -> None:
        """Re-read labels and rankings from the workspace."""
        self.session.reload()
        self.screen.post_message(LabelSaved(""))
        self.notify("Reloaded the workspace.")

    def judge(self, question_id: str, order: list[str] | None = None) -> None:
        """Open the judge screen on a question."""
        self.current_question = question_id
        if order:
            self.question_order = order
        self.switch_mode("judge")

    # -- workers -------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="warm", exit_on_error=False)
    def warm_indexes(self) -> None:
        """Index the corpus for every retriever (and load Kiwi) off the UI thread."""
        started = time.perf_counter()
        ws = Workspace.open(self.workspace_path, readonly=self.readonly_reason is not None)
        failed: list[str] = []
        try:
            docs = ws.docs()
            corpus = ws.corpus_hash()
            # dense vectors come from (and go to) the workspace; the header shows progress
            env = PrepareEnv(store=ws, progress=self._warm_progress)
            for spec in ws.retrievers():
                if spec.kind in STORED_KINDS:
                    continue
                try:
                    self.prepared.get(spec, corpus, docs, env)
                except (RetrieverError, ValueError) as exc:
                    failed.append(f"{spec.name}: {exc}")
        finally:
            ws.close()
        if failed:
            self.post_message(PoolFailed("", "; ".join(failed)))
        self.call_from_thread(setattr, self, "sub_title", self.base_sub_title)
        self.post_message(IndexesReady(time.perf_counter() - started))

    def _warm_progress(self, what: str, done: int, total: int) -> None:
        """Long indexing work (embedding a corpus) shown in the header, from the worker."""
        filled = round(20 * done / total) if total else 20
        bar = f" {'█' * filled}{'░' * (20 - filled)} {done}/{total}" if total > 1 else "…"
        self.call_from_thread(setattr, self, "sub_title", f"{self.base_sub_title} · {what}{bar}")

    def pool_question(self, question_id: str) -> None:
        """Pool one question; first ask, once, about command retrievers not yet trusted."""
        if self.trust_pending is not None:  # the question is on screen: pool after it
            self.trust_pending.append(question_id)
            return
        if not self.trust_asked and self.readonly_reason is None:
            try:
                untrusted = self.trust.untrusted(self.ws, self.ws.retrievers())
            except ValueError as exc:  # the trust record is damaged: nothing is trusted
                self.notify(visible(str(exc)), severity="error", markup=False)
                untrusted = []
            if untrusted:
                self.trust_asked = True
                self.trust_pending = [question_id]
                shown = [(s.name, command_shown(command_of(s))) for s in untrusted]

                def answered(trust: bool | None) -> None:
                    if trust:
                        try:
                            self.trust.trust(self.ws, untrusted)
                        except ValueError as exc:
                            self.notify(visible(str(exc)), severity="error", markup=False)
                    else:
                        self.notify(
                            visible(
                                f"Pooling without {', '.join(n for n, _ in shown)}: not "
                                f"trusted. `goldpan trust {self.workspace_path}` trusts them."
                            ),
                            markup=False,
                        )
                    pending, self.trust_pending = self.trust_pending or [], None
                    for qid in dict.fromkeys(pending):
                        self._pool_worker(qid)

                self.push_screen(TrustScreen(self.workspace_path.name, shown), answered)
                return
        self._pool_worker(question_id)

    @work(thread=True, exclusive=False, group="pool", exit_on_error=False)
    def _pool_worker(self, question_id: str) -> None:
        """Rank one question with every retriever (its own connection) and report."""
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
                    trust=self.trust,
                )
                runs = {
                    s.name: ws.runs(s.name, [question_id]).get(question_id) for s in ws.retrievers()
                }
            finally:
                ws.close()
        except Exception as exc:  # reported on the UI thread, never lost
            self.post_message(PoolFailed(question_id, str(exc)))
            return
        errors = {n: e for n, e in report.errors.items() if "not trusted" not in e}
        if errors:  # the other retrievers' rankings still count
            failed = "; ".join(f"{n}: {e}" for n, e in errors.items())
            self.post_message(PoolFailed(question_id, failed))
        rankings = {name: r.doc_ids for name, r in runs.items() if r is not None}
        self.post_message(QuestionPooled(question_id, rankings))

    def on_question_pooled(self, message: QuestionPooled) -> None:
        """Take the new rankings into the live scores and tell the screens."""
        live = self.session.live
        for name, ranking in message.rankings.items():
            if name in live.rankings:
                live.set_ranking(name, message.question_id, ranking)
        if self.screen_stack:  # not while the app is shutting down
            self.screen.post_message(QuestionPooled(message.question_id, message.rankings))

    def on_pool_failed(self, message: PoolFailed) -> None:
        """Say so; the question stays, unpooled."""
        self.notify(visible(f"Pooling failed: {message.error}"), severity="error", markup=False)

    # -- palette -------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Palette commands run the same actions as the keys."""
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Go: questions",
            "Every question, its status and labels",
            lambda: self.switch_mode("questions"),
        )
        yield SystemCommand(
            "Go: write", "Write a new question blind", lambda: self.switch_mode("write")
        )
        yield SystemCommand(
            "Go: label", "Judge the current question", lambda: self.switch_mode("judge")
        )
        yield SystemCommand(
            "Go: review",
            "Live scores per retriever and question",
            lambda: self.switch_mode("review"),
        )
        yield SystemCommand(
            "Go: adjudicate",
            "Settle disputed and ambiguous questions",
            lambda: self.switch_mode("adjudicate"),
        )
        yield SystemCommand("Workspace: reload", "See other annotators' labels", self.action_reload)
        for action, title, help_text in getattr(screen, "PALETTE", ()):
            if screen.check_action(action, ()) is not False:
                yield SystemCommand(title, help_text, _runner(screen, action))


def _runner(screen: Screen[object], action: str) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        await screen.run_action(action)

    return run
