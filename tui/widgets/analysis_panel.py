"""The review screen's analysis panels' common part: the request, the messages, the base.

Each panel is shown for a :class:`PanelRequest` (the workspace file, its change token,
retrievers A and B, the tag). The whole-workspace analysis runs in a thread worker with
its own workspace connection (SQLite connections belong to their thread) and posts a
typed ``Ready`` message; the panel draws it on the UI thread. A panel already showing (or
computing) the same request does nothing, so returning to the review screen recomputes
nothing until the workspace changed. The panels themselves: :mod:`tui.widgets.review_panels`.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.containers import Vertical
from textual.message import Message

from tui.crash import failure_notice


@dataclass(frozen=True)
class PanelRequest:
    """What a panel is asked to show; plain data, safe to hand to a worker."""

    path: Path
    """The workspace file (a worker opens its own connection)."""
    token: Hashable
    """The workspace's change token: a new one means the analysis may differ."""
    a: str
    """Retriever A."""
    b: str
    """Retriever B."""
    tag: str | None
    """Only questions with this tag (None: all)."""


@dataclass
class PanelReady(Message):
    """A panel's analysis finished in a worker; ``key`` says for which request."""

    key: Hashable
    result: object


@dataclass
class PanelFailed(Message):
    """A panel's analysis raised ``error`` in its worker."""

    key: Hashable
    error: str


class AnalysisPanel(Vertical):
    """A panel whose content is a whole-workspace analysis, computed off the UI thread."""

    TITLE: ClassVar[str] = ""
    """The panel's title; ``{a}`` and ``{b}`` are the retrievers, ``{tags}`` the by-tag
    panel's two tags."""
    HINT: ClassVar[str] = "a/b retrievers"
    """The keys that change what the panel shows, after its title."""

    def __init__(self, *, id: str) -> None:  # noqa: A002 - Textual's own keyword
        """A panel with this DOM id."""
        super().__init__(id=id)
        self.shown: Hashable | None = None
        """The key of the request on screen (None: nothing yet)."""
        self.pending: Hashable | None = None
        """The key of the request being computed."""
        self.computed = 0
        """How many analyses this panel has drawn (tests count recomputations)."""

    def key(self, request: PanelRequest) -> Hashable:
        """What the panel's content depends on (the change token always)."""
        return (request.token, request.a, request.b, request.tag)

    def show(self, request: PanelRequest) -> None:
        """Show the analysis for ``request``, computing it only when it is new."""
        key = self.key(request)
        if key in (self.shown, self.pending):
            return
        self.pending = key
        self.waiting(request)
        self.start(key, request)

    def start(self, key: Hashable, request: PanelRequest) -> None:
        """Start the worker (a panel may first read cheap in-memory data here)."""
        self._analyse(key, request)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _analyse(self, key: Hashable, request: PanelRequest) -> None:
        try:
            result = self.analyse(request)
        except Exception as exc:  # shown on the UI thread, never lost (a bug: logged)
            self.post_message(PanelFailed(key, failure_notice(exc)))
            return
        self.post_message(self.ready(key, result))

    def ready(self, key: Hashable, result: object) -> PanelReady:
        """The typed message for a result (each panel has its own ``Ready``)."""
        return PanelReady(key, result)

    def analyse(self, request: PanelRequest) -> object:
        """The analysis, in a thread worker (no widget may be touched here)."""
        raise NotImplementedError

    def waiting(self, request: PanelRequest) -> None:
        """Say that the analysis is running (the old content stays until the new one)."""

    def draw(self, result: object) -> None:
        """Draw a finished analysis."""
        raise NotImplementedError

    @on(PanelReady)
    def _ready(self, message: PanelReady) -> None:
        message.stop()
        if message.key != self.pending:
            return  # an older request's result
        self.pending = None
        self.shown = message.key
        self.computed += 1
        self.draw(message.result)

    @on(PanelFailed)
    def _failed(self, message: PanelFailed) -> None:
        message.stop()
        if message.key != self.pending:
            return
        self.pending = None
        title = self.TITLE.split(" {")[0]
        self.notify(f"The {title} panel failed: {message.error}", severity="error", markup=False)
