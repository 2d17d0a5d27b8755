"""The retrievers' work for the app, in threads: indexes warmed, questions pooled.

The retrievers' indexes are built once per process and shared by every worker
(:attr:`Pooling.prepared`). After the first paint a worker indexes the corpus for every
retriever (Kiwi's model included) off the UI thread; a question written or edited is
pooled in a worker of its own, once the trust question (asked once) is answered. Each
worker opens its own connection and reports with a message; a failure is a notice
(:mod:`tui.crash`), the other retrievers' rankings still count.

Kiwi tokenizes in a helper process while the app runs (:mod:`engine.kiwi_helper`): its
model's loading held Python's lock for two seconds, and the screen froze.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from engine.workspace import Workspace
from tui.controllers.ranking import ranked_with
from tui.crash import failure_notice
from tui.literal import visible
from tui.messages import IndexesReady, PoolFailed, QuestionPooled

if TYPE_CHECKING:
    from engine.retrieve.runner import PreparedRetrievers
    from tui.app import GoldpanApp


class Pooling:
    """Indexes and pooling for one app, each in a thread worker."""

    def __init__(self, app: GoldpanApp) -> None:
        """Nothing indexed yet (built on first use, from any thread)."""
        self.app = app
        self._prepared: PreparedRetrievers | None = None
        self._prepared_lock = threading.Lock()
        self._kiwi_before: object = None
        """How Kiwi tokenized before this app (see :meth:`start`)."""
        self.tried: set[str] = set()
        """Questions pooled since start: a retriever that cannot run is not retried on
        every redraw (editing a question pools it again)."""
        self.warned: set[str] = set()
        """Warnings of retrievers already shown this session (TLS not checked)."""
        self.in_flight = 0
        """Pool workers started whose end the app has not handled yet (:meth:`ended`)."""

    def start(self) -> None:
        """Kiwi in its helper process from now on (the app's mount)."""
        from engine.kiwi_helper import use_kiwi_helper
        from engine.tokenize import KiwiTokenizer

        self._kiwi_before = KiwiTokenizer.helper
        use_kiwi_helper()

    def stop(self) -> None:
        """Kiwi tokenizes as it did before the app (a test's process runs many apps).

        The helper process itself lives until this process ends, for the next app.
        """
        from engine.tokenize import KiwiTokenizer

        KiwiTokenizer.helper = self._kiwi_before

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

    def warm(self) -> None:
        """Index the corpus for every retriever (and load Kiwi), in a worker."""
        self.app.run_worker(
            self._warm, name="warm", group="warm", thread=True, exclusive=True, exit_on_error=False
        )

    def _warm(self) -> None:
        """In the worker: from the term counts the workspace keeps when they match its corpus.

        Only Kiwi's model loads, not the corpus tokenized again.
        """
        from engine.retrieve import STORED_KINDS, PrepareEnv

        app = self.app
        started = time.perf_counter()
        ws = Workspace.open(app.workspace_path, readonly=app.readonly_reason is not None)
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
            app.post_message(PoolFailed("", "; ".join(failed)))
        app.call_from_thread(setattr, app, "sub_title", app.base_sub_title)
        app.post_message(IndexesReady(time.perf_counter() - started))

    def say_progress(self, what: str, done: int, total: int) -> None:
        """Long work in a worker (embedding a corpus, ranking) shown in the header."""
        filled = round(20 * done / total) if total else 20
        bar = f" {'█' * filled}{'░' * (20 - filled)} {done}/{total}" if total > 1 else "…"
        self.app.sub_title = f"{self.app.base_sub_title} · {what}{bar}"

    def _say_progress(self, what: str, done: int, total: int) -> None:
        """:meth:`say_progress`, from a worker's thread."""
        self.app.call_from_thread(self.say_progress, what, done, total)

    def pool(self, question_id: str) -> None:
        """Pool one question, once the trust question (asked once) is answered."""

        def start() -> None:
            self.in_flight += 1  # until the worker's end is handled (ended below)
            self.app.run_worker(
                lambda: self._pool(question_id),
                name="pool",
                group="pool",
                thread=True,
                exit_on_error=False,
            )

        self.app.trust_flow.pool(start)

    def ended(self) -> None:
        """A pool worker ended; its message (QuestionPooled or PoolFailed) was handled first.

        The app hears a worker's end after the messages the worker posted, so while any
        pool runs :class:`~tui.controllers.ranking.BackgroundRanking` leaves the workspace
        alone: its reload would announce the worker's own commit, and the worker's message
        announce it again (each screen redrawn twice for one save).
        """
        self.in_flight = max(0, self.in_flight - 1)

    def _pool(self, question_id: str) -> None:
        """In the worker: rank one question with every retriever (its own connection)."""
        from engine.retrieve.runner import refresh_runs

        app = self.app
        self.tried.add(question_id)
        if app.readonly_reason is not None:  # rankings are cached in the workspace
            app.post_message(
                PoolFailed(question_id, f"the workspace is read-only ({app.readonly_reason})")
            )
            return
        try:
            ws = Workspace.open(app.workspace_path)
            try:
                report = refresh_runs(
                    ws,
                    question_ids=[question_id],
                    prepared=self.prepared,
                    keep_going=True,
                    trust=app.trust_flow.store,
                )
            finally:
                ws.close()
        except Exception as exc:  # reported on the UI thread, never lost (a bug: logged)
            app.post_message(PoolFailed(question_id, failure_notice(exc)))
            return
        if report.warnings:
            app.call_from_thread(self.say_warnings, report.warnings)
        errors = report.failed()
        if errors:  # the other retrievers' rankings still count
            failed = "; ".join(f"{n}: {e}" for n, e in errors.items())
            app.post_message(PoolFailed(question_id, failed))
        app.post_message(QuestionPooled(question_id, *ranked_with(report)))

    def say_warnings(self, warnings: dict[str, tuple[str, ...]]) -> None:
        """What a retriever says on every run (TLS not checked), once per session each."""
        for line in (w for lines in warnings.values() for w in lines):
            if line not in self.warned:
                self.warned.add(line)
                self.app.notify(visible(line), title="Warning", severity="warning", markup=False)

    def pooled(self, message: QuestionPooled) -> None:
        """Take the new rankings into the live scores and tell the screens (once each)."""
        question_id = message.question_id
        session = self.app.session
        session.ranked_with(message.cannot_rank, message.ranked)
        session.reload_if_changed()  # the worker committed the rankings on its connection
        session.take_rankings(question_id)
        self.app.announce(question_id, pooled=True)
