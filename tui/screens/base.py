"""What every goldpan screen shares: the typed app, table cursors, the read-only banner."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.screen import Screen
from textual.widgets import DataTable, Header

from tui.actions import Command, available
from tui.widgets.banner import ReadOnlyBanner

if TYPE_CHECKING:
    from tui.app import GoldpanApp


class GoldpanScreen(Screen[None]):
    """A screen of the goldpan app."""

    AREA: ClassVar[str] = ""
    """The screen's name as people see it (``Label``): palette titles, help, README."""
    ACTIONS: ClassVar[tuple[Command, ...]] = ()
    """Every action of the screen, declared once (see :mod:`tui.actions`)."""
    LEAVE: ClassVar[str] = (
        "press another screen's key above; ctrl+q quits goldpan (every label is already saved)"
    )
    """How to leave this screen, the second line of its help."""

    @property
    def has_question(self) -> bool:
        """A question is on screen (the question actions need one)."""
        return getattr(self, "question_id", None) is not None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only offer what works now, as the command's ``when`` says (the footer follows)."""
        return available(self, self.ACTIONS, action)

    @property
    def gp(self) -> GoldpanApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

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
