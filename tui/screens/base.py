"""What every goldpan screen shares: the typed app, table cursors, the read-only banner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header

from tui.actions import Command, available, with_keys
from tui.messages import WorkspaceChanged
from tui.widgets.banner import ReadOnlyBanner

if TYPE_CHECKING:
    from tui.app import GoldpanApp
    from tui.state import SharedState

COMPACT_FOOTER_BELOW = 100
"""Screens narrower than this many columns show the footer compact."""


class GoldpanScreen(Screen[None]):
    """A screen of the goldpan app.

    Redrawing follows one path: :meth:`redraw` draws everything that comes from the
    workspace and records the session's change token; :meth:`sync` calls it only when the
    token moved. The app's :class:`WorkspaceChanged` (sent once to each live screen, never
    bubbling) syncs the screen on top; any other screen syncs when it resumes.
    """

    def __init__(self, state: SharedState) -> None:
        """A screen that has drawn nothing yet; ``state``: what the screens share."""
        super().__init__()
        self.state = state
        """The current question, the question order, auto-advance (every screen's)."""
        self.drawn: object = None
        """The session's change token when :meth:`redraw` last ran."""

    AREA: ClassVar[str] = ""
    """The screen's name as people see it (``Label``): palette titles, help, docs/tui.md."""
    ACTIONS: ClassVar[tuple[Command, ...]] = ()
    """Every action of the screen, declared once (see :mod:`tui.actions`)."""
    LEAVE: ClassVar[str | None] = None
    """How to leave this screen, the second line of its help (None: by another screen's
    key, or quitting goldpan, as the help screen says from the app's commands)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A screen's ``HELP`` and ``LEAVE`` name its keys by command id, written out here.

        In them ``"`judge.undo`"`` stands for the key of the screen's command with that id
        (:func:`tui.actions.with_keys`): the key is written once, in its
        :class:`~tui.actions.Command`, and the text follows it.
        """
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("HELP"):
            cls.HELP = with_keys(cls.__dict__["HELP"], cls.ACTIONS)
        if cls.__dict__.get("LEAVE"):
            cls.LEAVE = with_keys(cls.__dict__["LEAVE"], cls.ACTIONS, code=False)

    @property
    def has_question(self) -> bool:
        """A question is on screen (the question actions need one)."""
        return getattr(self, "question_id", None) is not None

    @property
    def is_viewer(self) -> bool:
        """Served to a viewer (``goldpan serve``): they look, never label."""
        served = self.gp.served
        return served is not None and not served.labels

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only offer what works now, as the command's ``when`` says (the footer follows)."""
        return available(self, self.ACTIONS, action)

    @property
    def gp(self) -> GoldpanApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    @on(events.Resize)
    def _fit_footer(self) -> None:
        """A narrow screen's footer: compact, without ``^p palette`` (ctrl+p still works).

        Below :data:`COMPACT_FOOTER_BELOW` columns the spaced footer cut its last keys
        (``? H▏`` at 80); the help screen says that ctrl+p opens the palette.
        """
        compact = (self.size.width or self.app.size.width) < COMPACT_FOOTER_BELOW
        for footer in self.query_children(Footer):
            footer.compact = compact
            footer.show_command_palette = not compact

    @on(events.Mount)
    def _register(self) -> None:
        self.gp.live_screens.add(self)

    @on(events.Unmount)
    def _unregister(self) -> None:
        self.gp.live_screens.discard(self)

    @on(events.ScreenResume)
    def _resumed(self) -> None:
        """Another screen may have changed the workspace or the current question."""
        self.gp.session.reload_if_changed()
        self.follow_current()
        self.sync()

    def on_workspace_changed(self, message: WorkspaceChanged) -> None:
        """Redraw now when on top; otherwise the token is compared on resume."""
        if self.is_current:
            self.sync()

    def sync(self) -> None:
        """Redraw when the workspace changed since the last drawing."""
        if self.gp.session.change_token() != self.drawn:
            self.redraw()

    def redraw(self) -> None:
        """Draw everything that comes from the workspace (subclasses; call this first).

        Before the screen is mounted nothing is drawn, so nothing is recorded: the first
        resume draws.
        """
        if self.is_mounted:
            self.drawn = self.gp.session.change_token()

    def follow_current(self) -> None:
        """Show the app's current question (subclasses with a question list)."""

    def place_cursor(self, table: DataTable[object], *keys: str | None) -> None:
        """Put a table's cursor on the first of ``keys`` it has (else leave it)."""
        for key in keys:
            if key is not None and key in table.rows:
                table.move_cursor(row=table.get_row_index(key))
                return

    def cursor_moved(self, table: DataTable[object]) -> str | None:
        """The row under a question list's cursor: it becomes the current question.

        So `l` (and enter) opens what is selected, and every screen means the same
        question by "current".
        """
        key = cursor_key(table)
        if key is not None and self.is_current:
            self.state.current_question = key
        return key

    @on(events.Mount)
    def _show_read_only_banner(self) -> None:
        """Under the header of every screen while the workspace is read-only."""
        reason = self.gp.readonly_reason
        if reason is None:
            return
        headers = self.query_children(Header)
        if headers:
            self.mount(ReadOnlyBanner(reason), after=headers.first())
        else:
            self.mount(ReadOnlyBanner(reason), before=0)

    def refuse_read_only(self, what: str) -> bool:
        """True, with a notification, when the workspace is read-only: ``what`` is refused.

        Every action that would change the workspace asks this first.
        """
        reason = self.gp.readonly_reason
        if reason is None:
            return False
        self.notify(
            f"{what} is not possible: this workspace is open read-only ({reason}). "
            "You can look around; nothing is changed.",
            title="Read-only",
            severity="warning",
            markup=False,
        )
        return True

    def next_tag(self, current: str | None) -> str | None:
        """The tag after ``current`` in the cycle all -> each tag -> all."""
        tags: list[str | None] = [None, *self.gp.session.live.all_tags()]
        i = tags.index(current) if current in tags else 0
        return tags[(i + 1) % len(tags)]


def cursor_key(table: DataTable[object]) -> str | None:
    """The key of the row under a table's cursor (None when the table is empty)."""
    if not table.row_count:
        return None
    value = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    return None if value is None else str(value)
