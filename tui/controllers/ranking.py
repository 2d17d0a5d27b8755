"""Scores kept live across processes: others' commits taken in, their questions ranked.

Another process may change the workspace while the app is open: an annotator in another
terminal or browser tab, ``goldpan label``, ``goldpan import questions``, ``goldpan
pool``. Every :data:`WATCH_S` seconds the app asks SQLite whether another connection
committed (``PRAGMA data_version``: no read of the file, nothing to do when idle) and, if
one did, takes its changes in from the event log
(:meth:`~engine.session.labeling.LabelingSession.reload_if_changed`); every screen then follows.

A question another process added or changed (a new text, a new corpus, a new retriever)
has no ranking made for it as it is now: it is *not ranked yet* (:mod:`engine.ranked`),
left out of every score and counted as such, never a miss. The app ranks such questions
in a worker with every retriever it may run, as it pools a question written in it (the
trust question first, asked once), and the scores take each ranking in as it lands. A
question a retriever could not rank (it failed, or is not trusted) is not tried again
until the workspace is reloaded (an import, a new retriever, ``ctrl+r``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.workspace import Workspace
from tui.crash import failure_notice
from tui.messages import PoolFailed, QuestionsRanked

if TYPE_CHECKING:
    from engine.retrieve.runner import RunReport
    from tui.app import GoldpanApp

WATCH_S = 1.0
"""How often the app looks for other processes' commits (seconds)."""


def ranked_with(report: RunReport) -> tuple[frozenset[str], frozenset[str]]:
    """Who a pool could not rank with (not trusted here, failed), and who ranked.

    What :meth:`~engine.session.labeling.LabelingSession.ranked_with` takes.
    """
    return frozenset(report.cannot_rank()), frozenset(n for n, c in report.ran.items() if c)


class BackgroundRanking:
    """Takes in other processes' commits, and ranks the questions not ranked yet."""

    def __init__(self, app: GoldpanApp) -> None:
        """Nothing ranked or watched yet (:meth:`start` begins, after the first paint)."""
        self.app = app
        self.ranking: tuple[str, ...] = ()
        """The questions being ranked now (empty: none)."""
        self.tried: set[str] = set()
        """Questions ranked since the last reload that some retriever left not ranked."""
        self._reloads = app.session.reloads
        """The session's reload count when :attr:`tried` was last valid."""

    def start(self) -> None:
        """Look for others' commits from now on; rank what is not ranked yet."""
        self.app.set_interval(WATCH_S, self.watch, name="watch the workspace")
        self.check()

    def watch(self) -> None:
        """The timer: take in what other processes committed, rank what they added.

        Not while a pool of this app runs: its message takes its commit in and tells the
        screens (:meth:`tui.controllers.pooling.Pooling.ended`); the next tick looks.
        """
        if self.app.pooling.in_flight:
            return
        if self.app.session.reload_if_changed():
            self.app.announce(None)
        self.check()

    def check(self) -> None:
        """Rank, in a worker, every question not ranked yet and not tried since a reload.

        Nothing on a read-only workspace (rankings are kept in it), nor while a ranking
        runs (its end checks again).
        """
        app = self.app
        if app.readonly_reason is not None or self.ranking:
            return
        session = app.session
        if session.reloads != self._reloads:  # reloaded: inputs may have changed
            self._reloads = session.reloads
            self.tried.clear()
        todo = tuple(q for q in session.live.unranked() if q not in self.tried)
        if todo:
            self.ranking = todo
            app.trust_flow.pool(lambda: self._start(todo))

    def _start(self, todo: tuple[str, ...]) -> None:
        self.app.run_worker(
            lambda: self._rank(todo),
            name="rank in the background",
            group="rank",
            thread=True,
            exit_on_error=False,
        )

    def _rank(self, todo: tuple[str, ...]) -> None:
        """In the worker: rank ``todo`` with every retriever (a connection of its own)."""
        from engine.retrieve.runner import refresh_runs

        app = self.app
        what = f"ranking {len(todo)} question{'s' if len(todo) != 1 else ''}"

        def progress(name: str, done: int, total: int) -> None:
            # nothing ranked yet: indexing (Kiwi loading, a corpus embedded), no count
            say = app.pooling.say_progress
            app.call_from_thread(say, f"{what}: {name}", done, total if done else 0)

        who: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        try:
            with Workspace.open(app.workspace_path) as ws:
                report = refresh_runs(
                    ws,
                    question_ids=todo,
                    prepared=app.pooling.prepared,
                    keep_going=True,
                    trust=app.trust_flow.store,
                    progress=progress,
                )
            who = ranked_with(report)
            if report.warnings:  # TLS not checked, said once a session
                app.call_from_thread(app.pooling.say_warnings, report.warnings)
            failed = report.failed()
            if failed:  # the other retrievers' rankings still count
                app.post_message(PoolFailed("", "; ".join(f"{n}: {e}" for n, e in failed.items())))
        except Exception as exc:  # reported on the UI thread, never lost (a bug: logged)
            app.post_message(PoolFailed("", failure_notice(exc)))
        app.post_message(QuestionsRanked(todo, *who))

    def ranked(self, message: QuestionsRanked) -> None:
        """A ranking ended: take it in (the worker committed on its own connection)."""
        app, session = self.app, self.app.session
        app.sub_title = app.base_sub_title
        self.ranking = ()
        session.ranked_with(message.cannot_rank, message.ranked)
        if session.reloads != self._reloads:  # reloaded meanwhile: inputs may have changed
            self.tried.clear()
        if session.reload_if_changed():
            app.announce(None, pooled=True)
        self._reloads = session.reloads  # a reload for this ranking leaves tried as it is
        self.tried |= set(message.question_ids) & set(session.live.unranked())
        self.check()
